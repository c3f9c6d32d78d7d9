/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Monte Carlo check of the loss estimator built on the Hadamard codec (docs/design.md,
 * "The estimate").  Exit 0 pass, 1 fail.
 *
 * Setup.  NR = 4 ranks each hold a vector of NB = 8 blocks of n = 2^12 floats and encode it
 * with the same (seed, op_seq).  Each rank's encoded vector travels in packets of PKT = 256
 * floats (1 KiB payload), SLOTS = n / PKT = 16 per block, NPKT = 128 per rank.
 *
 * Striping.  Packet k carries block k % NB, slot k / NB, i.e. entries
 * [b*n + s*PKT, b*n + (s+1)*PKT): consecutive packets cycle through the blocks, so losing the
 * last t packets (a deadline cutting the tail) costs at most ceil(t / NB) slots of any block
 * instead of whole blocks.  Which entries of a block a packet carries does not matter for the
 * statistics: after the random rotation every entry holds 1/n of every input entry's energy,
 * so contiguous slices (simple on the wire) are as good as strided ones.
 *
 * Estimators.  The receiver sums, per entry, what arrived; every estimator below is
 * Yhat = sum_r W_r y_r with W_r diagonal and constant over a packet (y_r = encoded x_r):
 *   Z  zero-fill:  W_r = m_r (m_r = 1 if rank r's packet arrived).  No rescaling.
 *   C  count, the rule of docs/design.md, "The estimate": per entry, sum * NR / count, where
 *      count is the number of contributions that arrived for that entry (per packet, all its
 *      entries share it); entries with count 0 are zero and the block is scaled by
 *      n / (entries with count > 0).
 *   R  per-sender rescale: each sender's arrived part of block b scaled by n / k_rb, k_rb the
 *      entries of block b that arrived from rank r (needs per-sender arrival counts).
 * Then Xhat = decode(Yhat).
 *
 * Exact theory, for any data and any drop pattern independent of the signs.  Write w_r = tr(W_r)
 * / n per block.  With random signs D, E_D[(D A D)_ij] = A_ii delta_ij and for A = H W H / n the
 * diagonal is constant, tr(W) / n.  Hence, per block,
 *   E_D[Xhat]          = sum_r w_r x_r
 *   E_D||Xhat - X||^2  = sum_{r,s} a_rs <x_r, x_s>,  a_rs = tr(W_r W_s)/n - w_r - w_s + 1.
 * Special cases:
 *   - one stream (all ranks lose the same packets, e.g. the final phase): C and R both reduce to
 *     W = (n/k) m and give E = X and MSE = (n/k - 1) ||X||^2 = f/(1-f) ||X||^2 with f the lost
 *     fraction of the block: exactly unbiased for ANY pattern, the p/(1-p) of docs/design.md.  With
 *     Bernoulli(p) packet loss f is random and the mean is J(p) = E[S/K] - 1, K ~ Bin(S, 1-p),
 *     S = SLOTS, a little above p/(1-p) (Jensen); zero-fill gives exactly p ||X||^2.
 *   - R: w_r = 1 for every pattern, so it is unbiased even when one sender loses more than the
 *     others; a_rr = n/k_r - 1, and for independent Bernoulli loss E[a_rs] = 0 for r != s, so
 *     E||Xhat - X||^2 = J(p) * sum_r ||x_r||^2 whatever the data.
 *   - C: unbiased over random loss that treats ranks alike (exchangeable), but for a FIXED
 *     pattern that hits one sender more, w_r != 1 and E_D[Xhat] = sum_r w_r x_r != X unless
 *     the ranks' data are equal.  For Bernoulli loss its MSE is
 *     K(N,p) * N/(N-1) * sum_r ||x_r - mean||^2 (+ cover term), K = sum_c P(c) (N-c)/c: above
 *     p/(1-p) for independent data (about N/(N-1) p), far below for correlated data.
 * The test compares the Monte Carlo against these formulas evaluated on each trial's pattern
 * (so the comparison is exact, not asymptotic) and prints the headline p and p/(1-p).
 * "Normalized MSE" is E||Xhat - X||^2 / ||X||^2, X = sum_r x_r the true sum.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/kernels/hadamard.h"

#define NR    4
#define LG    12
#define BLK   (1u << LG)
#define NB    8
#define PKT   256
#define SLOTS (BLK / PKT)
#define DIM   (NB * BLK)
#define NPKT  (DIM / PKT)
#define SEED  0x0b5e55edULL

_Static_assert(NR == 4, "trial() spells out the sum over ranks");

enum est { EST_Z, EST_C, EST_R, EST_COFF, NEST };
static const char *est_name[NEST] = {"zero-fill", "count", "per-sender", "count,no-enc"};

static int failures;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	failures++;
	printf("  FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static uint64_t rng_state = 12345;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unif(void)
{
	return ((double)(rng() >> 11) + 0.5) * 0x1p-53;
}

static double gauss(void)
{
	return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif());
}

/* data, fixed over trials: the expectations below are over drops and signs only */
static float x[NR][DIM];
static double xsum[DIM], gram[NB][NR][NR], xsum_energy, rank_energy;

static void make_data(int correlated)
{
	static double g[DIM];

	for (size_t i = 0; i < DIM; i++)
		g[i] = gauss() * (1 + 0.25 * (double)(i / BLK));
	for (int r = 0; r < NR; r++)
		for (size_t i = 0; i < DIM; i++)
			x[r][i] = (float)(correlated ? g[i] + 0.3 * gauss() * (1 + 0.25 * (i / BLK))
			                             : gauss() * (1 + 0.25 * (double)(i / BLK)));
	memset(gram, 0, sizeof(gram));
	xsum_energy = rank_energy = 0;
	for (size_t i = 0; i < DIM; i++) {
		xsum[i] = 0;
		for (int r = 0; r < NR; r++) {
			xsum[i] += x[r][i];
			for (int s = 0; s < NR; s++)
				gram[i / BLK][r][s] += (double)x[r][i] * x[s][i];
		}
		xsum_energy += xsum[i] * xsum[i];
	}
	for (int r = 0; r < NR; r++)
		for (int b = 0; b < NB; b++)
			rank_energy += gram[b][r][r];
}

static size_t pkt_of(size_t b, size_t s)
{
	return s * NB + b;
}

/* weights w[r][b][s] of estimator e for the loss pattern lost[r][k] */
static void weights(enum est e, unsigned char lost[NR][NPKT], double w[NR][NB][SLOTS])
{
	for (size_t b = 0; b < NB; b++) {
		int cnt[SLOTS], cover = 0, kr[NR] = {0};

		for (size_t s = 0; s < SLOTS; s++) {
			cnt[s] = 0;
			for (int r = 0; r < NR; r++) {
				int m = !lost[r][pkt_of(b, s)];

				cnt[s] += m;
				kr[r] += m;
			}
			cover += cnt[s] > 0;
		}
		for (int r = 0; r < NR; r++)
			for (size_t s = 0; s < SLOTS; s++) {
				int m = !lost[r][pkt_of(b, s)];
				double v = 0;

				switch (e) {
				case EST_Z:
					v = m;
					break;
				case EST_C:
					if (m)
						v = (double)NR / cnt[s] * SLOTS / cover;
					break;
				case EST_R:
					if (m)
						v = (double)SLOTS / kr[r];
					break;
				default:
					if (m)
						v = (double)NR / cnt[s];
					break;
				}
				w[r][b][s] = v;
			}
	}
}

/* E_D[Xhat] per block factors w_r, and E_D||Xhat - X||^2 (see the top comment) */
static double theory(double w[NR][NB][SLOTS], double wbar[NR][NB])
{
	double mse = 0;

	for (size_t b = 0; b < NB; b++) {
		for (int r = 0; r < NR; r++) {
			wbar[r][b] = 0;
			for (size_t s = 0; s < SLOTS; s++)
				wbar[r][b] += w[r][b][s] / SLOTS;
		}
		for (int r = 0; r < NR; r++)
			for (int q = 0; q < NR; q++) {
				double t = 0;

				for (size_t s = 0; s < SLOTS; s++)
					t += w[r][b][s] * w[q][b][s] / SLOTS;
				mse += (t - wbar[r][b] - wbar[q][b] + 1) * gram[b][r][q];
			}
	}
	return mse;
}

/* Monte Carlo accumulators for one estimator in one scenario */
struct acc {
	double s1[DIM], s2[DIM]; /* sum of (Xhat - X), of its square, per element */
	double d1[DIM], d2[DIM]; /* the same for Xhat - E_D[Xhat] */
	double mse, mse2, mse_th, dif, dif2, proj, proj2, bias2;
	int trials;
};

static struct acc accs[NEST];

static void acc_reset(void)
{
	memset(accs, 0, sizeof(accs));
}

static float y[NR][DIM], yhat[DIM];

/* one operation: encode (or not), apply the loss pattern, estimate, decode, accumulate */
static void trial(unsigned char lost[NR][NPKT], uint64_t op, const enum est *ests, int nests,
                  int encode)
{
	static double w[NR][NB][SLOTS], wbar[NR][NB];

	for (int r = 0; r < NR; r++) {
		memcpy(y[r], x[r], sizeof(y[r]));
		if (encode)
			or_had_encode(y[r], NB, LG, SEED, op, 0);
	}
	for (int ei = 0; ei < nests; ei++) {
		struct acc *a = &accs[ests[ei]];
		double mse = 0, proj = 0, th;

		weights(ests[ei], lost, w);
		th = theory(w, wbar);
		memset(yhat, 0, sizeof(yhat));
		for (int r = 0; r < NR; r++)
			for (size_t b = 0; b < NB; b++)
				for (size_t s = 0; s < SLOTS; s++) {
					float ws = (float)w[r][b][s],
					      *dst = yhat + b * BLK + s * PKT;
					const float *src = y[r] + b * BLK + s * PKT;

					for (size_t j = 0; j < PKT; j++)
						dst[j] += ws * src[j];
				}
		if (encode)
			or_had_decode(yhat, NB, LG, SEED, op, 0);
		double bias2 = 0;

		for (size_t i = 0; i < DIM; i++) {
			size_t b = i / BLK;
			double e = yhat[i] - xsum[i];
			double ex = wbar[0][b] * x[0][i] + wbar[1][b] * x[1][i] +
			            wbar[2][b] * x[2][i] + wbar[3][b] * x[3][i];
			double d = yhat[i] - ex;

			a->s1[i] += e;
			a->s2[i] += e * e;
			a->d1[i] += d;
			a->d2[i] += d * d;
			mse += e * e;
			proj += e * xsum[i];
			bias2 += (ex - xsum[i]) * (ex - xsum[i]);
		}
		proj /= xsum_energy;
		a->mse += mse;
		a->mse2 += mse * mse;
		a->mse_th += th;
		a->dif += mse - th;
		a->dif2 += (mse - th) * (mse - th);
		a->proj += proj;
		a->proj2 += proj * proj;
		a->bias2 += bias2;
		a->trials++;
	}
}

/* mean over elements of z^2, z = mean / standard error; about 1 when the mean is 0 */
static double mean_z2(const double *s1, const double *s2, int t)
{
	/* entries a fixed pattern never touches vary only by float rounding: leave them out */
	double z2 = 0, floor = 1e-8 * xsum_energy / DIM;
	size_t used = 0;

	for (size_t i = 0; i < DIM; i++) {
		double m = s1[i] / t, v = (s2[i] - t * m * m) / (t - 1);

		if (v <= floor)
			continue;
		z2 += m * m / (v / t);
		used++;
	}
	return used ? z2 / used : 0;
}

/*
 * Unbiased: per-element z-scores average about 1, and the mean error projected on X is within
 * 4 standard errors of 0.  Matches theory: the per-trial (MC - theory) differences average to
 * within 10% of the theory, or 4 standard errors if that is wider.
 */
static void verdict(enum est e, const char *scen, double p, int want_unbiased, double headline,
                    const char *hname)
{
	struct acc *a = &accs[e];
	int t = a->trials;
	double nmse = a->mse / t / xsum_energy, nth = a->mse_th / t / xsum_energy;
	double dm = a->dif / t, dse = sqrt((a->dif2 / t - dm * dm) / (t - 1));
	double pm = a->proj / t, pse = sqrt((a->proj2 / t - pm * pm) / (t - 1));
	double z2 = mean_z2(a->s1, a->s2, t), z2th = mean_z2(a->d1, a->d2, t);

	printf("  %-10s p=%.2f %-10s nMSE %.5f theory %.5f (%+5.1f%%)  %s %.5f  "
	       "bias.x %+.4f+-%.4f z2 %.2f\n",
	       scen, p, est_name[e], nmse, nth, 100 * (nmse / nth - 1), hname, headline, pm, pse,
	       want_unbiased ? z2 : z2th);
	check(fabs(dm) <= fmax(0.1 * a->mse_th / t, 4 * dse), "%s %s: MSE %g vs theory %g", scen,
	      est_name[e], nmse, nth);
	check(fabs(z2th - 1) < 0.15, "%s %s: mean differs from E_D[Xhat] (z2 %.3f)", scen,
	      est_name[e], z2th);
	if (want_unbiased) {
		check(fabs(z2 - 1) < 0.15, "%s %s: biased (z2 %.3f)", scen, est_name[e], z2);
		check(fabs(pm) < 4 * pse + 1e-6, "%s %s: biased along X (%g +- %g)", scen,
		      est_name[e], pm, pse);
	}
}

/* Monte Carlo nMSE within rel of h, allowing 4 standard errors of the sample on top */
static int near(const struct acc *a, double h, double rel)
{
	int t = a->trials;
	double m = a->mse / t, se = sqrt((a->mse2 / t - m * m) / (t - 1));

	return fabs(m / xsum_energy - h) <= rel * h + 4 * se / xsum_energy;
}

/* J(p) = E[S/K] - 1 for K ~ Binomial(S, 1-p) conditioned on K > 0 */
static double jensen(double p)
{
	double q = 1 - p, e = 0, c = 1;

	for (int k = 0; k <= (int)SLOTS; k++) {
		if (k)
			e += c * pow(q, k) * pow(p, SLOTS - k) * SLOTS / k;
		c = c * (SLOTS - k) / (k + 1);
	}
	return e / (1 - pow(p, SLOTS)) - 1;
}

static unsigned char lost[NR][NPKT];

static void drop_iid(double p, int common)
{
	for (int r = 0; r < NR; r++)
		for (size_t k = 0; k < NPKT; k++)
			lost[r][k] = common && r ? lost[0][k] : unif() < p;
}

static void drop_tail(double p)
{
	size_t t = (size_t)ceil(p * NPKT);

	for (int r = 0; r < NR; r++)
		for (size_t k = 0; k < NPKT; k++)
			lost[r][k] = k >= NPKT - t;
}

static uint64_t op_seq;

static void random_loss(void)
{
	static const double ps[] = {0.01, 0.05, 0.2};
	const enum est all[] = {EST_Z, EST_C, EST_R};
	const int T = 200;

	printf("\n1. one stream: every rank loses the same Bernoulli(p) packets, %d ops each\n", T);
	printf("   (rescaled: theory J(p) ~ p/(1-p); zero-fill: exactly p)\n");
	make_data(0);
	for (int pi = 0; pi < 3; pi++) {
		double p = ps[pi];

		acc_reset();
		for (int t = 0; t < T; t++) {
			drop_iid(p, 1);
			trial(lost, op_seq++, all, 2, 1);
		}
		verdict(EST_Z, "stream", p, 0, p, "p");
		verdict(EST_C, "stream", p, 1, p / (1 - p), "p/(1-p)");
		/* J(p) is the exact expectation; p/(1-p) is the limit of many slots per block */
		check(fabs(jensen(p) / (p / (1 - p)) - 1) < 0.1, "J(p) not within 10%% of p/(1-p)");
		check(near(&accs[EST_Z], p, 0.1), "zero-fill nMSE not within 10%% of p");
		check(near(&accs[EST_C], p / (1 - p), 0.1),
		      "rescaled nMSE not within 10%% of p/(1-p)");
		printf("  %-10s        J(p) = %.5f = %.3f x p/(1-p)\n", "", jensen(p),
		       jensen(p) / (p / (1 - p)));
	}

	for (int corr = 0; corr < 2; corr++) {
		printf(
		    "\n2%c. each sender loses its own Bernoulli(p) packets, %s data, %d ops each\n",
		    corr ? 'b' : 'a', corr ? "correlated (x_r = g + 0.3 noise)" : "independent", T);
		make_data(corr);
		printf("   E = sum_r ||x_r||^2 / ||X||^2 = %.3f\n", rank_energy / xsum_energy);
		for (int pi = 0; pi < 3; pi++) {
			double p = ps[pi], ratio = rank_energy / xsum_energy;

			acc_reset();
			for (int t = 0; t < T; t++) {
				drop_iid(p, 0);
				trial(lost, op_seq++, all, 3, 1);
			}
			/* zero-fill: E||e||^2 = p(1-p) sum_r ||x_r||^2 + p^2 ||X||^2 */
			verdict(EST_Z, "per-sender", p, 0, p * (1 - p) * ratio + p * p,
			        "p(1-p)E+p^2");
			verdict(EST_C, "per-sender", p, 1, p / (1 - p), "p/(1-p)");
			verdict(EST_R, "per-sender", p, 1, jensen(p) * ratio, "J(p)*E");
		}
	}
}

static void tail_loss(void)
{
	static const double ps[] = {0.01, 0.05, 0.2};
	const enum est all[] = {EST_Z, EST_C};
	const int T = 100;

	printf(
	    "\n3. tail drop: the last ceil(p * %d) packets of every rank, fixed; fresh signs, %d "
	    "ops\n"
	    "   (theory = sum_b f_b/(1-f_b) ||X_b||^2 with f_b the block's lost fraction; blocks "
	    "differ in energy)\n",
	    NPKT, T);
	make_data(0);
	for (int pi = 0; pi < 3; pi++) {
		double p = ps[pi];
		size_t t = (size_t)ceil(p * NPKT), touched = t < NB ? t : NB;

		printf("   p=%.2f: %zu packets lost, %zu of %d blocks touched, at most %zu of %d "
		       "slots each\n",
		       p, t, touched, NB, (t + NB - 1) / NB, SLOTS);
		acc_reset();
		drop_tail(p);
		for (int i = 0; i < T; i++)
			trial(lost, op_seq++, all, 2, 1);
		double f = (double)t / NPKT;

		verdict(EST_Z, "tail", p, 0, f, "f");
		verdict(EST_C, "tail", p, 1, f / (1 - f), "f/(1-f)");
	}
}

/* relative error of the running average of Xhat over the first m ops */
static double avg_rel_err(const struct acc *a, int m)
{
	double e = 0;

	for (size_t i = 0; i < DIM; i++)
		e += (a->s1[i] / m) * (a->s1[i] / m);
	return sqrt(e / xsum_energy);
}

static void fixed_pattern(void)
{
	const int M = 256;
	const enum est on[] = {EST_C}, off[] = {EST_COFF};
	double err_on[3], err_off, lost_energy = 0, max_elem = 0, rms;
	size_t nlost = 0, spread = 0;
	int marks[3] = {1, 16, M}, mi = 0;

	printf("\n4. fixed loss pattern, same every op: 2 random slots of every block (12.5%%), "
	       "same on every rank, %d ops\n",
	       M);
	make_data(0);
	rms = sqrt(xsum_energy / DIM);
	memset(lost, 0, sizeof(lost));
	for (size_t b = 0; b < NB; b++) {
		size_t s1 = rng() % SLOTS, s2 = (s1 + 1 + rng() % (SLOTS - 1)) % SLOTS;

		for (int r = 0; r < NR; r++)
			lost[r][pkt_of(b, s1)] = lost[r][pkt_of(b, s2)] = 1;
	}

	acc_reset();
	for (int t = 1; t <= M; t++) {
		trial(lost, op_seq++, on, 1, 1);
		if (t == 1)
			for (size_t i = 0; i < DIM; i++) {
				double e = fabs(accs[EST_C].s1[i]);

				spread += e > 1e-4 * rms;
				max_elem = fmax(max_elem, e);
			}
		if (t == marks[mi])
			err_on[mi++] = avg_rel_err(&accs[EST_C], t);
	}
	double th = accs[EST_C].mse_th / M / xsum_energy;

	printf("  encoding on : one op perturbs %zu of %d entries (largest error %.2f rms(X));\n"
	       "               average over 1/16/%d ops: rel. error %.4f %.4f %.4f "
	       "(theory sqrt(%.4f/m) = %.4f %.4f %.4f)\n",
	       spread, DIM, max_elem / rms, M, err_on[0], err_on[1], err_on[2], th, sqrt(th),
	       sqrt(th / 16), sqrt(th / M));
	check(spread > 0.99 * DIM, "encoding on: error not spread (%zu of %d)", spread, DIM);
	check(err_on[2] * err_on[2] / (th / M) > 0.7 && err_on[2] * err_on[2] / (th / M) < 1.4,
	      "encoding on: average over %d ops does not converge as 1/m", M);

	acc_reset();
	for (int t = 1; t <= M; t++)
		trial(lost, op_seq++, off, 1, 0);
	err_off = avg_rel_err(&accs[EST_COFF], M);
	int whole = 1;

	for (size_t i = 0; i < DIM; i++) {
		double m = accs[EST_COFF].s1[i] / M;

		if (lost[0][pkt_of(i / BLK, (i % BLK) / PKT)]) {
			nlost++;
			lost_energy += xsum[i] * xsum[i];
			whole &= fabs(m + xsum[i]) <= 1e-5 * (1 + fabs(xsum[i]));
		} else {
			whole &= fabs(m) <= 1e-5 * (1 + fabs(xsum[i]));
		}
	}
	printf("  encoding off: the same %zu entries lose 100%% of their value every op, the rest "
	       "are exact;\n"
	       "               average over %d ops: rel. error %.4f = sqrt(lost energy %.4f), no "
	       "convergence\n",
	       nlost, M, err_off, lost_energy / xsum_energy);
	check(whole, "encoding off: lost entries should be exactly missing, others exact");
	check(fabs(err_off - sqrt(lost_energy / xsum_energy)) < 1e-4, "encoding off: error");

	/*
	 * One sender loses more than the others (rank 3 loses its last 25% every op).  The count
	 * rule then weights rank 3 by w < 1 and the others by w > 1 in every op: a bias the average
	 * does not remove unless the ranks' data agree.  Per-sender rescaling stays unbiased.
	 */
	printf("\n5. fixed pattern on one sender: rank 3 loses its last 25%% every op, %d ops\n",
	       M);
	const enum est both[] = {EST_C, EST_R};

	memset(lost, 0, sizeof(lost));
	for (size_t k = NPKT - NPKT / 4; k < NPKT; k++)
		lost[NR - 1][k] = 1;
	acc_reset();
	for (int t = 0; t < M; t++)
		trial(lost, op_seq++, both, 2, 1);
	for (int ei = 0; ei < 2; ei++) {
		struct acc *a = &accs[both[ei]];
		double bias2 = a->bias2 / M, var = a->mse_th / M - bias2;
		double want = bias2 + var / M, got = avg_rel_err(a, M);

		got *= got * xsum_energy;
		printf("  %-10s bias ||E[Xhat]-X||/||X|| = %.4f; average over %d ops: rel. error "
		       "%.4f (theory %.4f)\n",
		       est_name[both[ei]], sqrt(bias2 / xsum_energy), M, sqrt(got / xsum_energy),
		       sqrt(want / xsum_energy));
		check(got / want > 0.7 && got / want < 1.4, "%s: average over ops vs theory",
		      est_name[both[ei]]);
		check(fabs(mean_z2(a->d1, a->d2, M) - 1) < 0.15, "%s: mean differs from E_D[Xhat]",
		      est_name[both[ei]]);
	}
	check(accs[EST_R].bias2 < 1e-12 * xsum_energy * M, "per-sender rescale should be unbiased");
	check(accs[EST_C].bias2 / M > 1e-4 * xsum_energy, "count rule bias not visible?");
}

int main(void)
{
	or_had_select(OR_HAD_KERNEL_AUTO);
	printf("estimator Monte Carlo: %d ranks, %d blocks of 2^%d floats, packets of %d floats "
	       "(%d per block), kernel %s\n",
	       NR, NB, LG, PKT, SLOTS, or_had_kernel_name());
	printf("columns: normalized MSE E||Xhat-X||^2/||X||^2, its exact theory, the headline, "
	       "mean error along X (+- s.e.), mean z^2 of per-entry mean error (1 = unbiased)\n");
	random_loss();
	tail_loss();
	fixed_pattern();
	printf("\n%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
