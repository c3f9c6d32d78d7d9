/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bounded mode on N ranks, checked against the mathematics of the estimator.
 * Ranks synchronize with MPI_Barrier before each operation: a rank that is
 * outside the library drains nothing, and the kernel holds only ~200 KB of
 * datagrams for it, so skew would add real loss to the injected loss.
 *
 *  clean:  no injected loss: equals the exact sum within the Hadamard
 *          transform's rounding, and reports nothing lost.
 *  loss p: OPTIREDUCE_INJECT_LOSS-style loss set through the API.  The
 *          reported loss matches p; over T trials the mean error of every
 *          element is statistically zero (|mean| < 5 standard errors, where
 *          the standard error comes from the sample itself), and the
 *          normalized mean squared error follows the loss seen (test_loss
 *          states the bound).  A run in which a loaded host dropped far more
 *          than was injected is repeated, at most 3 runs, the last judged.
 *  fallback: int32 SUM and float MAX run exact on a bounded communicator.
 *
 * With "ring" or "tree" the same cases run that bounded algorithm and the
 * error is checked against its theory (ring_theory, tree_theory).
 *
 *   mpi_bounded [-q] [--estimates] [ring|tree] [--net-loss P [--loss-at egress|ingress]]
 *
 * --estimates: the estimate's statistics with and without repair only, not a late rank
 * nor short deadlines, whose outcome turns on how ranks are scheduled (the emulated
 * cloud's transport comparison, test/cluster/cluster_transports.sh, uses it).
 * --net-loss P: on the emulated cloud, the network drops P; with --loss-at egress the senders'
 * sends fail and are counted in packets_send_failed (0.3 P to 3 P of the datagrams), with
 * ingress none is.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "optireduce_mpi.h"

#include "mpi_check.h"

static const char *alg = "transpose"; /* the algorithm under test */
static int ring, tree;
/* --loss-at egress|ingress: where the emulated cloud drops (see test_loss). */
static int loss_at_egress = -1;

static double exact_sum(size_t i, int trial)
{
	double s = 0;
	for (int r = 0; r < nranks; r++)
		s += input(r, i, trial);
	return s;
}

static void set(optireduce_comm_t *comm, const char *name, const char *value)
{
	if (optireduce_comm_set_param(comm, name, value))
		FAIL("set_param %s=%s failed\n", name, value);
}

static void test_clean(optireduce_comm_t *comm, size_t count, int strict)
{
	int lost_any;
	float *s = malloc(count * 4), *r = malloc(count * 4);
	struct optireduce_status st;
	double maxerr = 0, norm = 0;
	int ret;

	for (size_t i = 0; i < count; i++)
		s[i] = input(rank, i, 0);
	set(comm, "inject_loss", "0");
	MPI_Barrier(MPI_COMM_WORLD);
	ret = optireduce_allreduce(comm, s, r, count, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &st);
	if (ret) {
		FAIL("clean: %s\n", optireduce_strerror(ret));
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		double e = fabs(r[i] - exact_sum(i, 0));
		norm += exact_sum(i, 0) * exact_sum(i, 0);
		maxerr = e > maxerr ? e : maxerr;
	}
	/* Encode, N-term sum and decode: a few dozen float roundings of values of size ~N/2.
	 * Small messages must arrive whole; a large one may still meet real socket loss on
	 * this host (see the note at the call), but then it must say so. */
	lost_any = st.elements_received[0] < st.elements_expected[0] ||
	           st.elements_received[1] < st.elements_expected[1];
	/* A peer's loss shows in this rank's result through the shard that peer reduced. */
	MPI_Allreduce(MPI_IN_PLACE, &lost_any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (maxerr > 1e-4 * nranks && !(strict == 0 && lost_any))
		FAIL("clean count %zu: max error %g\n", count, maxerr);
	if (strict && lost_any)
		FAIL("clean count %zu: lost data on a clean network\n", count);
	if (!(st.flags & OPTIREDUCE_STATUS_BOUNDED))
		FAIL("clean: did not run bounded\n");
	if (strcmp(optireduce_algorithm_name(st.algorithm), alg) != 0)
		FAIL("clean: ran %s\n", optireduce_algorithm_name(st.algorithm));
	if (rank == 0)
		printf("clean count %zu: max error %.3g, lost %llu of %llu contributions, "
		       "received %llu/%llu elements, end %d/%d; packets sent %llu received %llu "
		       "invalid %llu stale %llu duplicate %llu parked %llu\n",
		       count, maxerr, (unsigned long long)st.contributions_missing,
		       (unsigned long long)st.contributions_expected,
		       (unsigned long long)st.elements_received[0],
		       (unsigned long long)st.elements_expected[0], st.phase_end[0],
		       st.phase_end[1], (unsigned long long)st.packets_sent,
		       (unsigned long long)st.packets_received,
		       (unsigned long long)st.packets_invalid, (unsigned long long)st.packets_stale,
		       (unsigned long long)st.packets_duplicate,
		       (unsigned long long)st.packets_parked);
out:
	free(s);
	free(r);
}

/*
 * Loss p on every data packet, T trials with fresh data.  The estimator is
 * unbiased: the mean over trials of (estimate - truth) / sigma_e must be
 * within 5 standard errors for all but a handful of elements.  Its error
 * energy relative to the truth's must be near the theory: a packet lost in
 * phase 1 removes one of N-1 remote contributions to a block, rescaled by
 * n/k; a packet lost in phase 2 removes part of the final block, rescaled.
 * Both have normalized MSE about p/(1-p) of what was exposed, so the total
 * is bounded by 2 p/(1-p) (with headroom for few packets per block).
 */
/*
 * Error energy a block gains when it is rescaled after losing each of its m packets with
 * probability p: losing a fraction q of its rotated coordinates and scaling the rest by
 * 1/(1-q) leaves error energy q/(1-q) of its own (random rotation), so g = E[X/(m-X)] for
 * X ~ Binomial(m, p), X < m; it is p/(1-p) for large m and larger for small m (Jensen).
 */
static double block_gain(double p, int m)
{
	double g = 0, binom = 1;

	for (int x = 0; x < m; x++) {
		g += binom * pow(p, x) * pow(1 - p, m - x) * x / (m - x);
		binom = binom * (m - x) / (x + 1);
	}
	return g;
}

/*
 * Packets per Hadamard block in test_loss: blocks of 4096 float32 (the default, halved
 * while half still covers a rank's share) over the udp provider's 1424-byte payloads.
 */
static int block_packets(size_t count)
{
	size_t block = 4096, per_rank = (count + nranks - 1) / nranks;

	while (block > 256 && block / 2 >= per_rank)
		block /= 2;
	return (int)((block * 4 + 1423) / 1424);
}

/*
 * Normalized MSE of the bounded ring when every packet is lost with probability p
 * independently, contributions independent with equal variance, and g = block_gain the
 * error energy a rescaled block gains per hop.
 * Reduce-scatter hop s (0..N-2) forwards an estimate of s+1 contributions (energy s+1, in
 * units of one contribution) carrying error A_s: the hop adds g (s+1 + A_s), so
 * A_{s+1} = (1+g) A_s + g (s+1), and the full sum (energy N) leaves with e = A_{N-1} / N.
 * Allgather: the rank d hops from the chunk's owner got it through d rescales, so its
 * error is (1+e)(1+g)^d - 1; a rank sees its N chunks at d = 0..N-1.  So
 *   nmse = (1+e) * mean_{d<N} (1+g)^d - 1,  about g (N-1) for small g.
 * (Transpose: about 2g.)  N = 4, p = 0.05: 0.17; p = 0.2: 1.08.
 */
static double ring_theory(double p, int n, size_t count)
{
	double g = block_gain(p, block_packets(count)), a = 0, e, m = 0;

	for (int s = 0; s < n - 1; s++)
		a = (1 + g) * a + g * (s + 1);
	e = a / n;
	for (int d = 0; d < n; d++)
		m += pow(1 + g, d) / n;
	return (1 + e) * m - 1;
}

/*
 * Error energy of one in-order binary tree over positions [lo, hi] (the tree algorithm's
 * shape, algorithms/tree.c, rebuilt here from its definition: the root of a range is the
 * position with the most trailing zeros).  A node adds each child's estimate of s
 * contributions carrying error A, and the hop adds g (s + A); *size gets the range's size
 * and depth[] each position's depth.
 */
static double tree_error(int lo, int hi, int d, double g, int *size, int *depth)
{
	int m = lo, best = -1, sl, sr;
	double al, ar;

	if (lo > hi) {
		*size = 0;
		return 0;
	}
	for (int p = lo; p <= hi; p++) {
		int tz = 0;
		while (!((p >> tz) & 1))
			tz++;
		if (tz > best) {
			best = tz;
			m = p;
		}
	}
	depth[m] = d;
	al = tree_error(lo, m - 1, d + 1, g, &sl, depth);
	ar = tree_error(m + 1, hi, d + 1, g, &sr, depth);
	*size = sl + sr + 1;
	return (sl ? (1 + g) * al + g * sl : 0) + (sr ? (1 + g) * ar + g * sr : 0);
}

/*
 * Normalized MSE of this rank's result from the bounded tree: two trees, each half the
 * data; tree B's positions make the even ranks interior (N - rank when N is even, else
 * (rank + 1) % N + 1).  The root's sum leaves with error e = A / N, and a rank d hops down
 * gets (1 + e)(1 + g)^d - 1, as in ring_theory.
 */
static double tree_theory(double p, int n, size_t count)
{
	double g = block_gain(p, block_packets(count)), m = 0;
	int *depth = calloc((size_t)n + 1, sizeof(int)), size;

	for (int t = 0; t < 2; t++) {
		double e = tree_error(1, n, 0, g, &size, depth) / n;
		int pos = t == 0 ? rank + 1 : n % 2 == 0 ? n - rank : (rank + 1) % n + 1;
		m += ((1 + e) * pow(1 + g, depth[pos]) - 1) / 2;
	}
	free(depth);
	return m;
}

static double theory_of(double p, size_t count)
{
	if (ring)
		return ring_theory(p, nranks, count);
	if (tree)
		return tree_theory(p, nranks, count);
	return 2 * p / (1 - p);
}

/*
 * repair_late_case: the inject_delay of a late operation, NULL when none is.  Trial t of
 * every run is late or not alike, so that the runs with and without repair meet the same
 * straggler: drawn per operation number instead, the two runs of a comparison had 7 and 11
 * late operations, each costing about 0.0075 of the elements, which decided the comparison.
 */
static const char *late_delay;

static int late_trial(int t)
{
	return input(0, (size_t)t, -1) + 0.5 < 0.3;
}

/*
 * p_net: loss the network itself adds (the emulated cloud's iptables rule), 0 on a host.
 * Returns 1 when a run on a host saw much more loss than was injected, and final is 0:
 * the extra is a receiver descheduled under a parallel make check until its socket
 * overflowed, in bursts (whole runs of packets, some blocks falling back), which the
 * independent-loss theory does not describe.  Such a run is not judged but repeated.
 */
/* What the last test_loss saw lost (all ranks), and the repair it reported (this rank). */
static double last_seen, last_nmse;
static uint64_t rep_requested, rep_resent, rep_recovered;

static int test_loss(optireduce_comm_t *comm, size_t count, double p_inject, double p_net,
                     int trials, int final, int repair, double baseline, double baseline_nmse)
{
	double p = p_inject + p_net - p_inject * p_net;
	int hard = 0;
	double t0;
	float *s = malloc(count * 4), *r = malloc(count * 4);
	double *mean = calloc(count, sizeof(double)), *m2 = calloc(count, sizeof(double));
	double fallbacks = 0, err2 = 0, norm2 = 0, lost = 0, expected = 0, lost2 = 0, expected2 = 0;
	double not_sent = 0, sent = 0;
	char buf[32];
	size_t biased = 0;
	int disturbed = 0;

	snprintf(buf, sizeof(buf), "%g", p_inject);
	set(comm, "inject_loss", buf);
	set(comm, "repair", repair ? "1" : "0");
	rep_requested = rep_resent = rep_recovered = 0;
	t0 = MPI_Wtime();
	for (int t = 0; t < trials; t++) {
		struct optireduce_status st;
		int ret;
		for (size_t i = 0; i < count; i++)
			s[i] = input(rank, i, t + 1);
		if (late_delay)
			set(comm, "inject_delay", late_trial(t) ? late_delay : "");
		/* A rank outside the library drains nothing: keep skew below a socket buffer. */
		MPI_Barrier(MPI_COMM_WORLD);
		ret = optireduce_allreduce(comm, s, r, count, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
		                           &st);
		if (ret) {
			FAIL("loss %g: %s\n", p, optireduce_strerror(ret));
			break;
		}
		rep_requested += st.repair_requested;
		rep_resent += st.repair_resent;
		rep_recovered += st.repair_recovered;
		/* Resends for the operation before a switch may still be reported after it. */
		if (st.repair_recovered > st.repair_requested ||
		    (!repair && (st.repair_requested || st.repair_recovered)))
			FAIL("loss %g, repair %d: requested %llu, resent %llu, recovered %llu\n", p,
			     repair, (unsigned long long)st.repair_requested,
			     (unsigned long long)st.repair_resent,
			     (unsigned long long)st.repair_recovered);
		fallbacks += (double)st.blocks_fallback;
		hard += st.phase_end[0] == OPTIREDUCE_PHASE_HARD_BOUND ||
		        st.phase_end[1] == OPTIREDUCE_PHASE_HARD_BOUND;
		not_sent += (double)st.packets_send_failed;
		sent += (double)st.packets_sent;
		lost += (double)(st.elements_expected[0] - st.elements_received[0]) +
		        (double)(st.elements_expected[1] - st.elements_received[1]);
		expected += (double)(st.elements_expected[0] + st.elements_expected[1]);
		lost2 += (double)(st.elements_expected[1] - st.elements_received[1]);
		expected2 += (double)st.elements_expected[1];
		for (size_t i = 0; i < count; i++) {
			double truth = exact_sum(i, t + 1), e = r[i] - truth;
			mean[i] += e;
			m2[i] += e * e;
			err2 += e * e;
			norm2 += truth * truth;
		}
	}
	for (size_t i = 0; i < count; i++) {
		double mu = mean[i] / trials, var = m2[i] / trials - mu * mu;
		double se = sqrt(var / trials) + 1e-6;
		if (fabs(mu) > 5 * se)
			biased++;
	}
	{
		double nmse = err2 / norm2, seen = lost / expected;
		double theory = theory_of(p, count);
		double all_lost = 0, all_exp = 0, own = expected > 0 ? lost / expected : 0, worst;
		int out_of_bound, any_out = 0;
		MPI_Allreduce(&lost, &all_lost, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Allreduce(&expected, &all_exp, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Allreduce(&own, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		MPI_Allreduce(MPI_IN_PLACE, &fallbacks, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		/* Per status slot (Transpose: reduce-scatter, all-gather): all ranks, the worst. */
		{
			double v[4] = {lost - lost2, expected - expected2, lost2, expected2};
			double all[4], own2 = expected2 > 0 ? lost2 / expected2 : 0, worst2;
			MPI_Allreduce(v, all, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			MPI_Allreduce(&own2, &worst2, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
			if (rank == 0)
				printf("loss %.2f%s: lost %.4f in phase 1, %.4f in phase 2 (worst "
				       "rank %.4f), %.0f blocks fell back\n",
				       p, repair ? " repaired" : "", all[0] / all[1],
				       all[3] > 0 ? all[2] / all[3] : 0, worst2, fallbacks);
		}
		seen = all_lost / all_exp;
		last_seen = seen;
		last_nmse = nmse;
		/*
		 * Loss in the senders' OUTPUT chains makes their sends fail: each is counted in
		 * packets_send_failed (about p_net of the datagrams), none of it when the loss sits
		 * at the receivers.
		 */
		if (loss_at_egress >= 0) {
			double v[2] = {not_sent, sent}, all[2];
			MPI_Allreduce(v, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			if (rank == 0)
				printf("loss %.2f: %.0f of %.0f datagrams not sent\n", p, all[0],
				       all[1] + all[0]);
			if (loss_at_egress && (all[0] < 0.3 * p_net * (all[0] + all[1]) ||
			                       all[0] > 3 * p_net * (all[0] + all[1]) + 5))
				FAIL("loss at the senders: %.0f of %.0f datagrams not sent\n",
				     all[0], all[0] + all[1]);
			if (!loss_at_egress && all[0] > 0)
				FAIL("loss at the receivers: %.0f datagrams not sent\n", all[0]);
		}
		if (rank == 0)
			printf("loss %.2f%s: observed %.4f, nmse %.4f (theory %.4f, p/(1-p) %.4f), "
			       "%zu of %zu elements outside 5 s.e., %d hard bounds, %.1f ms/op; "
			       "rank 0 asked %llu, resent %llu, recovered %llu\n",
			       p, repair ? " repaired" : "", seen, nmse, theory, p / (1 - p),
			       biased, count, hard, (MPI_Wtime() - t0) * 1e3 / trials,
			       (unsigned long long)rep_requested, (unsigned long long)rep_resent,
			       (unsigned long long)rep_recovered);
		/* Undisturbed runs see 0.7-1.0 p (LAST packets are never dropped).  The host's
		 * own drops come in bursts the independent-loss theory does not describe: 1.67%
		 * seen at 1% injected under make check -j2 gave 3.4x its nmse.  One rank's burst
		 * is enough: on a tree or a ring it reaches every rank downstream of it.  So is a
		 * block that lost all of its packets (a sender descheduled past the deadline):
		 * independent loss of p <= 0.2 takes all of a block's 12 packets once in 10^8. */
		disturbed = p_net == 0 && (seen > 1.25 * (repair ? baseline : p) + 0.001 ||
		                           worst > 1.5 * p + 0.002 || fallbacks > 0);
		/* Repair against a run before it: the weather changes between them too. */
		disturbed |= repair && baseline > 0.002 && seen >= baseline;
		if (disturbed && !final) {
			if (rank == 0)
				printf(
				    "loss %.2f: %.4f lost, beyond what was injected: run again\n",
				    p, seen);
			goto out;
		}
		/* Injected loss is a floor (LAST packets are never dropped; a loaded host adds
		 * socket loss on top), and the error must follow the loss actually seen.  Network
		 * loss is random, and on the emulated cloud a packet meets the rule on the way out
		 * and on the way in (about 2p): within [0.5 p, 3 p]. */
		theory = theory_of(seen, count);
		/* Transpose: every rank's result carries the phase-1 loss of all owners, but only
		 * its own phase-2 loss, which real networks do not spread evenly over ranks. */
		if (!ring && !tree && expected2 > 0 && all_exp > 0) {
			double q2 = lost2 / expected2, q1 = seen;
			if (q2 > q1)
				theory = q1 / (1 - q1) + q2 / (1 - q2);
		}
		/* What repair leaves is not independent loss: the host's own drops come in
		 * bursts (3.4x the nmse, above), and some blocks lose much and others nothing,
		 * which the uniform theory underestimates.  The error must stay within what the
		 * same loss costs without repair, with the bursts' allowance. */
		if (repair)
			theory = 3.4 * (baseline_nmse > 2 * p / (1 - p) ? baseline_nmse
			                                                : 2 * p / (1 - p));
		/* Repair: less lost than without (the run just before), and whatever pattern of
		 * loss remains, the estimate stays unbiased and follows it. */
		if (repair && baseline > 0.002 && seen >= baseline)
			FAIL("loss %g: repaired %g, not below %g without repair\n", p, seen,
			     baseline);
		if (!repair && (seen < 0.7 * p - 0.002 || (p_net > 0 && seen > 3 * p + 0.005)))
			FAIL("loss %g: observed %g\n", p, seen);
		if ((ring || tree) && (nmse > theory * 1.3 + 0.01 || nmse < 0.1 * p))
			fprintf(stderr, "rank %d: loss %g: nmse %g, theory %g\n", rank, p, nmse,
			        theory);
		/* A repaired rank may have lost nothing at all: no lower bound then.  An error past
		 * the bound at no more loss than injected is loss that came in a burst (the host's
		 * own drops, above; the network's come in bursts too), which the loss rate does
		 * not show: run again, the last run judged, so an estimate that is really off
		 * still fails. */
		out_of_bound = nmse > theory * 1.3 + 0.01 || nmse < (repair ? 0 : 0.1 * p);
		MPI_Allreduce(&out_of_bound, &any_out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		if (any_out && !final) {
			if (rank == 0)
				printf(
				    "loss %.2f: nmse %.4f past its bound at %.4f lost: run again\n",
				    p, nmse, seen);
			disturbed = 1;
			goto out;
		}
		if (out_of_bound)
			FAIL("loss %g: nmse %g outside [%g, %g]\n", p, nmse, repair ? 0 : 0.1 * p,
			     theory * 1.3 + 0.01);
		/* 5 s.e. is exceeded by chance for ~1e-6 of elements; allow a few. */
		if (biased > count / 1000 + 2)
			FAIL("loss %g: %zu elements look biased\n", p, biased);
	}
out:
	set(comm, "inject_loss", "0");
	free(s);
	free(r);
	free(mean);
	free(m2);
	return disturbed;
}

/* test_loss, repeated (at most 3 runs) while a loaded host adds loss of its own. */
static void loss_case(optireduce_comm_t *comm, size_t count, double p_inject, double p_net,
                      int trials)
{
	for (int attempt = 1; attempt <= 3; attempt++)
		if (!test_loss(comm, count, p_inject, p_net, trials, attempt == 3, 0, 0, 0))
			return;
}

/*
 * The same loss without repair, then with it: less lost, still unbiased.  Injected loss
 * also takes repair requests and resends.
 */
static void repair_case(optireduce_comm_t *comm, size_t count, double p_inject, int trials,
                        int late)
{
	uint64_t all_recovered = 0;
	/* With a late rank, whether its blocks are cut whole turns on scheduling (8 to 12
	 * blocks fell back per run under make check; one more unrepaired loss of 9.3 % against
	 * 10.1 % repaired; 5.9 % against 7.7 % when the late rank barely missed): more runs,
	 * and repair judged on their pooled loss rather than on one pair. */
	int attempts = late ? 5 : 3, pairs = 0;
	double pooled_base = 0, pooled_repaired = 0;

	for (int attempt = 1; attempt <= attempts; attempt++) {
		int final = attempt == attempts;
		double base, base_nmse;
		/* The baseline is judged by loss_case already: a disturbed one is only retried.  A
		 * late rank loses more than was injected by design: its baseline is used as is. */
		if (test_loss(comm, count, p_inject, 0, trials, 0, 0, 0, 0) && !late && !final)
			continue;
		base = last_seen;
		base_nmse = last_nmse;
		/* A baseline of 0 leaves the late case's comparison to the pooled one below. */
		int disturbed = test_loss(comm, count, p_inject, 0, trials, final, 1,
		                          late ? 0 : base, base_nmse);
		pooled_base += base;
		pooled_repaired += last_seen;
		pairs++;
		if (!disturbed)
			break;
	}
	if (late) {
		if (rank == 0)
			printf("loss %.2f, a late rank: %.4f lost repaired, %.4f without, over %d "
			       "runs\n", p_inject, pooled_repaired / pairs, pooled_base / pairs, pairs);
		if (pooled_repaired >= pooled_base)
			FAIL("loss %g, a late rank: repaired %g, not below %g without repair over "
			     "%d runs\n", p_inject, pooled_repaired / pairs, pooled_base / pairs,
			     pairs);
	}
	MPI_Allreduce(&rep_recovered, &all_recovered, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (all_recovered == 0)
		FAIL("loss %g: repair recovered nothing\n", p_inject);
	set(comm, "repair", "0");
}

/*
 * One run of repair_deadline_case: how many of this rank's operations ended past both
 * phases' deadlines plus slack_us, or -1 when one failed.
 */
static int repair_deadline_run(optireduce_comm_t *comm, float *s, float *r, size_t count,
                               int trials, double bound_us)
{
	int late = 0;

	for (int t = 0; t < trials; t++) {
		struct optireduce_status st;
		for (size_t i = 0; i < count; i++)
			s[i] = input(rank, i, t + 1);
		MPI_Barrier(MPI_COMM_WORLD);
		if (optireduce_allreduce(comm, s, r, count, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
		                         &st))
			return -1;
		late += st.elapsed_us > bound_us;
	}
	return late;
}

/*
 * A short deadline under heavy loss of data, requests and resends alike: repair stops a round
 * trip before the deadline, so every operation still ends within its phases' deadlines.
 * A rank descheduled for tens of milliseconds (four ranks' threads on 2 shared CPUs)
 * makes a few operations late whatever repair does; repair that overruns its deadline makes
 * most of them late in every run.  So up to three runs, the worst rank's count judging each,
 * and the test fails only when all three have more than a tenth late.
 */
static void repair_deadline_case(optireduce_comm_t *comm, size_t count, int trials)
{
	const double deadline_us = 20000, slack_us = 30000;
	float *s = malloc(count * 4), *r = malloc(count * 4);
	int late = 0, worst = 0;

	set(comm, "timeout_us", "20000");
	set(comm, "inject_loss", "0.3");
	set(comm, "repair", "1");
	for (int attempt = 1; attempt <= 3; attempt++) {
		late = repair_deadline_run(comm, s, r, count, trials, 2 * deadline_us + slack_us);
		if (late < 0) {
			FAIL("repair under 30%% loss failed\n");
			late = trials;
		}
		/* Every rank decides on the same worst count, so all run the same attempts. */
		MPI_Allreduce(&late, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		if (rank == 0)
			printf("repair, 30%% loss, 20 ms deadlines, run %d: at most %d of %d "
			       "operations late on a rank\n", attempt, worst, trials);
		if (worst <= trials / 10)
			break;
	}
	if (late > trials / 10)
		FAIL("repair: %d of %d operations past their deadlines\n", late, trials);
	set(comm, "inject_loss", "0");
	set(comm, "repair", "0");
	set(comm, "timeout_us", "2000000");
	free(s);
	free(r);
}

/*
 * A late rank (it enters about 30% of operations 5 ms after the others, the same trials with
 * and without repair) under 5% loss: with repair, fewer elements lost than without, and
 * unbiased.
 */
static void repair_late_case(optireduce_comm_t *comm, size_t count, int trials)
{
	late_delay = "1:5000";
	repair_case(comm, count, 0.05, trials, 1);
	late_delay = NULL;
	set(comm, "inject_delay", "");
}

static void test_fallback(optireduce_comm_t *comm)
{
	int32_t s[5], r[5];
	float fs[3], fr[3];
	struct optireduce_status st;

	for (int i = 0; i < 5; i++)
		s[i] = rank * 10 + i;
	if (optireduce_allreduce(comm, s, r, 5, OPTIREDUCE_INT32, OPTIREDUCE_SUM, &st) ||
	    !(st.flags & OPTIREDUCE_STATUS_FELL_BACK) || (st.flags & OPTIREDUCE_STATUS_BOUNDED))
		FAIL("int32 sum on a bounded comm did not fall back to exact\n");
	for (int i = 0; i < 5; i++)
		if (r[i] != 10 * nranks * (nranks - 1) / 2 + nranks * i)
			FAIL("int32 fallback result wrong at %d\n", i);
	for (int i = 0; i < 3; i++)
		fs[i] = (float)(rank + i);
	if (optireduce_allreduce(comm, fs, fr, 3, OPTIREDUCE_FLOAT32, OPTIREDUCE_MAX, &st) ||
	    fr[0] != (float)(nranks - 1) || !(st.flags & OPTIREDUCE_STATUS_FELL_BACK))
		FAIL("float max on a bounded comm did not run exact\n");
}

/*
 * The communicator the estimator's statistics run on.  They judge it under independent loss,
 * and the absent rule (a sender silent for absent_factor x t_C is cut from the phase) turns a
 * rank descheduled under a parallel make check into whole blocks lost at once: bursts the
 * theory does not describe, in 2 of 16 runs of the tree on 3 ranks beside CPU hogs.  The rule
 * is off here, as a creation parameter must be; mpi_straggler tests it, and repair meets a
 * late rank with it on.
 */
static optireduce_comm_t *statistics_comm(optireduce_ctx_t *ctx, optireduce_comm_t *comm)
{
	optireduce_comm_t *c = NULL;
	char saved[32];

	if (optireduce_comm_get_param(comm, "absent_factor", saved, sizeof(saved), NULL) ||
	    optireduce_ctx_set_param(ctx, "absent_factor", "0") ||
	    optireduce_comm_from_mpi_mode(ctx, MPI_COMM_WORLD, OPTIREDUCE_MODE_BOUNDED, &c) ||
	    optireduce_ctx_set_param(ctx, "absent_factor", saved)) {
		fprintf(stderr, "rank %d: statistics communicator failed\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (ring || tree)
		set(c, "algorithm", alg);
	set(c, "timeout_us", "2000000");
	set(c, "repair", "0");
	return c;
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm, *stats;
	int quick = 0, estimates_only = 0, total;
	/* --net-loss P: the network drops P of the packets (run on the emulated cloud). */
	double net_loss = 0;

	for (int i = 1; i < argc; i++) {
		quick |= strcmp(argv[i], "-q") == 0;
		estimates_only |= strcmp(argv[i], "--estimates") == 0;
		if (strcmp(argv[i], "ring") == 0 || strcmp(argv[i], "tree") == 0)
			alg = argv[i];
		if (strcmp(argv[i], "--net-loss") == 0 && i + 1 < argc)
			net_loss = atof(argv[++i]);
		if (strcmp(argv[i], "--loss-at") == 0 && i + 1 < argc)
			loss_at_egress = strcmp(argv[++i], "egress") == 0;
	}

	mpi_world(&argc, &argv, 1);
	comm = bounded_world(&ctx, NULL);
	ring = strcmp(alg, "ring") == 0;
	tree = strcmp(alg, "tree") == 0;
	if (ring || tree)
		set(comm, "algorithm", alg);
	if (net_loss > 0) {
		/* Real loss also takes LAST packets, so some phases end at the deadline: keep it
		 * short next to the ~10 ms an operation takes on the emulated cloud. */
		set(comm, "timeout_us", "100000");
		test_fallback(comm);
		loss_case(comm, 16384, 0, net_loss, 100);
		loss_case(comm, 16384, 0.05, net_loss, 40);
		goto done;
	}
	/* Deterministic phases for the statistics: a fixed generous deadline, and no sender cut
	 * for being late (statistics_comm). */
	stats = statistics_comm(ctx, comm);
	test_clean(stats, 1000, 1);
	test_clean(stats, 16384, 1);
	/* 400 KB is twice a default datagram socket buffer: the progress thread must drain it
	 * while a rank is descheduled or has not entered the operation yet. */
	test_clean(stats, 100003, 1);
	test_fallback(stats);
	loss_case(stats, 16384, 0.01, 0, quick ? 50 : 200);
	loss_case(stats, 16384, 0.05, 0, quick ? 30 : 100);
	loss_case(stats, 16384, 0.20, 0, quick ? 30 : 100);
	/* Repair is judged on Transpose, whose phases keep their sends until the last one
	 * closes; the ring and the tree resend only while a phase is open (docs/design.md,
	 * "Repair inside the deadline").  Against the same loss without it, on the same
	 * communicator; then a late rank and short deadlines, which meet the absent rule, on
	 * the default one. */
	/* Ranks standing for hosts of a hierarchy (test/host_id.sh) time the shared-memory
	 * step too, which the per-phase deadlines do not cover: repair is judged flat. */
	if (!ring && !tree && !getenv("OPTIREDUCE_HOST_ID")) {
		repair_case(stats, 16384, 0.01, quick ? 50 : 200, 0);
		repair_case(stats, 16384, 0.05, quick ? 30 : 100, 0);
		repair_case(stats, 16384, 0.20, quick ? 30 : 100, 0);
	}
	if (!ring && !tree && !getenv("OPTIREDUCE_HOST_ID") && !estimates_only) {
		set(comm, "timeout_us", "2000000");
		set(comm, "repair", "0");
		repair_late_case(comm, 16384, quick ? 30 : 100);
		repair_deadline_case(comm, 16384, quick ? 20 : 50);
	}
	optireduce_comm_destroy(stats);
done:
	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	optireduce_comm_destroy(comm);
	optireduce_finalize(ctx);
	if (rank == 0)
		printf("%s: %d failures\n", total ? "FAIL" : "PASS", total);
	MPI_Finalize();
	return total ? 1 : 0;
}
