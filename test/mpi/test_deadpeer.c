/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rank killed with SIGKILL, in the middle of an operation or between two: every other
 * rank's call returns -OPTIREDUCE_EPEER or -OPTIREDUCE_ETIMEDOUT within peer_timeout_ms
 * plus a margin, nothing hangs, and the communicator is destroyed cleanly afterwards.
 * From the killed operation on, operations go in batches of three started at once with
 * max_inflight 1: those queued behind the failed one fail too, without starting.
 *
 * No launcher: mpirun aborts a job when one of its processes dies by a signal, so this
 * program forks the ranks itself and gives them an out-of-band allgather through shared
 * memory (a process-shared barrier), the bootstrap any launcher-free program can use.  The
 * parent kills the victim with kill(2), as `kill -9` would, and judges the survivors by
 * what they wrote to shared memory and by their exit status.  The whole run is under an
 * alarm: a survivor that hangs fails the test instead of hanging it.
 *
 *   test_deadpeer [-n ranks] [-m exact|bounded] [-w mid|between|stop] [-t peer_timeout_ms]
 *                 [-c count] [-a algorithm] [-H]
 *
 * -w mid: the victim starts operation K (optireduce_iallreduce moves its first data) and
 * never progresses it; it is killed once every survivor is inside operation K.  -w
 * between: the victim completes operation K-1 and is killed before anyone starts K.  -w
 * stop: the victim is stopped (SIGSTOP) inside operation K instead, and continued once
 * every other rank failed; the others keep their communicator a while longer, so that
 * what the victim sends on waking reaches endpoints whose operations were given up (their
 * posted receives must have been cancelled, not left pointing at freed memory), and the
 * victim must fail too, within the same bound after it woke.  -H
 * keeps the hierarchy on, so that ranks on this host meet in shared memory instead of on
 * the network; -HH makes them two hosts (host_id), the victim the second one's leader.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "optireduce.h"

#define MAX_RANKS 8
#define SLOT_MAX  4096
#define WARMUP    3 /* operations every rank completes first: K = WARMUP */
#define BATCH     3

enum when { MID, BETWEEN, STOP };

struct rank_result {
	int code;          /* the first failed call's code; 0 if none failed */
	int op;            /* the operation it failed in */
	double failed_ms;  /* when that call returned, on the shared clock */
	int second;        /* an operation started after the failure */
	int destroy;       /* optireduce_comm_destroy's return */
	double destroy_ms; /* how long it took */
	int finalize;
	int warmup_bad; /* wrong results during the warm-up */
	int batch_bad;  /* an operation from K on that succeeded with a wrong result */
	int done;
	/* From operation K on, operations go in batches of BATCH started at once, with
	 * max_inflight 1: those behind the failed one are still queued when it fails. */
	int batch_index;     /* the failed one's index in its batch */
	int after_ok;        /* operations behind it that succeeded: must be none */
	int after_unstarted; /* operations behind it that failed without starting */
};

struct shared {
	pthread_barrier_t bar;
	unsigned char slot[MAX_RANKS][SLOT_MAX];
	volatile int entered[MAX_RANKS]; /* rank entered operation K */
	volatile int victim_ready;       /* the victim is where it is killed */
	volatile int killed;
	volatile double kill_ms;
	volatile int resumed; /* -w stop: the victim was continued */
	volatile double resume_ms;
	struct rank_result res[MAX_RANKS];
};

static struct shared *sh;
static int nranks = 4, victim, peer_timeout_ms = 1500;
static size_t count = 1 << 16;
static enum when when = MID;
static const char *mode = "exact", *algorithm;
static int hierarchy;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int shm_allgather(const void *sbuf, void *rbuf, size_t len, void *info)
{
	int r = *(const int *)info;

	if (len > SLOT_MAX)
		return -1;
	memcpy(sh->slot[r], sbuf, len);
	pthread_barrier_wait(&sh->bar);
	for (int i = 0; i < nranks; i++)
		memcpy((char *)rbuf + (size_t)i * len, sh->slot[i], len);
	pthread_barrier_wait(&sh->bar);
	return 0;
}

static float input(int r, size_t i, int op)
{
	return (float)((r + 1) * ((i + (size_t)op) % 17)) * 0.25f;
}

/*
 * Exact: the sum over every rank of input() (small integers times 1/4: exact in float32).
 * Bounded, on loopback shared by the ranks, datagrams may be lost and estimated: every
 * value finite is what is asserted here (the estimate's bounds are mpi_bounded's).
 */
static int warmup_ok(const float *out, int op)
{
	int bad = 0;

	for (size_t i = 0; i < count; i++) {
		double want = 0;
		for (int r = 0; r < nranks; r++)
			want += input(r, i, op);
		if (strcmp(mode, "exact") ? !isfinite(out[i]) : out[i] != want)
			bad++;
	}
	return bad == 0;
}

static void set(optireduce_ctx_t *ctx, const char *name, const char *value)
{
	int ret = optireduce_ctx_set_param(ctx, name, value);
	if (ret) {
		fprintf(stderr, "set %s=%s: %s\n", name, value, optireduce_strerror(ret));
		exit(2);
	}
}

static int one_op(optireduce_comm_t *comm, float *in, float *out, int op)
{
	for (size_t i = 0; i < count; i++)
		in[i] = input(optireduce_comm_rank(comm), i, op);
	return optireduce_allreduce(comm, in, out, count, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, NULL);
}

static void note_failure(struct rank_result *res, int ret, int op, int index)
{
	res->code = ret;
	res->op = op;
	res->failed_ms = now_ms();
	res->batch_index = index;
}

/*
 * BATCH operations from op on, started at once and waited for in order.  max_inflight is 1,
 * so when one fails those behind it have not started: they must fail too, without starting
 * (status.ops_in_flight 0), none may succeed.
 */
static void run_batch(int rank, optireduce_comm_t *comm, float *in, float *out, int op)
{
	struct rank_result *res = &sh->res[rank];
	optireduce_req_t *req[BATCH];
	int started = 0, ret, refused = 0;

	for (int k = 0; k < BATCH; k++) {
		for (size_t i = 0; i < count; i++)
			in[(size_t)k * count + i] = input(rank, i, op + k);
		ret = optireduce_iallreduce(comm, in + (size_t)k * count, out + (size_t)k * count,
		                            count, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &req[k]);
		if (ret) {
			refused = ret; /* the communicator failed before: judged after the waits */
			break;
		}
		started++;
	}
	for (int k = 0; k < started; k++) {
		struct optireduce_status st;
		int failed_before = res->code != 0;
		ret = optireduce_wait(req[k], &st);
		if (!ret && !warmup_ok(out + (size_t)k * count, op + k))
			res->batch_bad++;
		if (ret && !failed_before)
			note_failure(res, ret, op + k, k);
		else if (failed_before && !ret)
			res->after_ok++;
		else if (failed_before && st.ops_in_flight == 0)
			res->after_unstarted++;
	}
	/* A start refused because an earlier operation of the batch had just failed: it and
	 * those never started behind it failed without starting. */
	if (refused && !res->code)
		note_failure(res, refused, op + started, started);
	else if (refused)
		res->after_unstarted++;
	if (refused)
		res->after_unstarted += BATCH - 1 - started;
}

/*
 * Operations from op on until one fails or the time runs out: the first failure goes to
 * res.  Bounded mode estimates a missing peer until it is judged dead, so operations go on
 * succeeding for a while.  Then one more operation, on the failed communicator.
 */
static void run_until_failure(int rank, optireduce_comm_t *comm, float *in, float *out, int op)
{
	struct rank_result *res = &sh->res[rank];
	double limit = now_ms() + peer_timeout_ms + 20000.0;

	for (; !res->code && now_ms() < limit; op += BATCH)
		run_batch(rank, comm, in, out, op);
	res->second = one_op(comm, in, out, 0);
}

/*
 * The victim: after the warm-up it either sits inside operation K (killed or stopped
 * there) or waits after K-1 to be killed.  Stopped, it wakes inside K and goes on as the
 * others did.
 */
static void victim_main(optireduce_comm_t *comm, float *in, float *out)
{
	struct rank_result *res = &sh->res[victim];
	optireduce_req_t *req;
	int ret;

	if (when == BETWEEN) {
		sh->victim_ready = 1;
		for (;;)
			pause();
	}
	for (size_t i = 0; i < count; i++)
		in[i] = input(victim, i, WARMUP);
	if (optireduce_iallreduce(comm, in, out, count, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &req))
		_exit(3);
	/* Until the others are inside K too, progressing K meanwhile so that they get some of
	 * its data; then no more progress until the signal. */
	for (;;) {
		int in_all = 1;
		for (int r = 0; r < nranks; r++)
			in_all &= r == victim || sh->entered[r];
		if (in_all || optireduce_test(req) != OPTIREDUCE_INPROGRESS)
			break; /* done or failed alone: signalled all the same */
		usleep(100);
	}
	sh->victim_ready = 1;
	if (when == MID)
		for (;;)
			pause();
	while (!sh->resumed)
		usleep(100); /* stopped in here */
	ret = optireduce_wait(req, NULL);
	if (ret)
		note_failure(res, ret, WARMUP, BATCH - 1); /* alone: nothing queued behind it */
	run_until_failure(victim, comm, in, out, WARMUP + 1);
}

static void survivor_main(int rank, optireduce_comm_t *comm, float *in, float *out)
{
	if (when == BETWEEN)
		while (!sh->killed)
			usleep(1000);
	sh->entered[rank] = 1;
	run_until_failure(rank, comm, in, out, WARMUP);
	if (when == STOP) {
		/* The woken victim's data arrives at this rank's endpoints meanwhile. */
		while (!sh->resumed)
			usleep(1000);
		usleep(300000);
	}
}

static int child(int rank)
{
	struct optireduce_comm_attr attr = {0};
	struct rank_result *res = &sh->res[rank];
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	float *in = malloc(BATCH * count * sizeof(float)),
	      *out = malloc(BATCH * count * sizeof(float));
	char v[32];
	double t0;
	int ret;

	if (!in || !out || optireduce_init(OPTIREDUCE_API_VERSION, &ctx))
		return 2;
	snprintf(v, sizeof(v), "%d", peer_timeout_ms);
	set(ctx, "peer_timeout_ms", v);
	set(ctx, "mode", mode);
	set(ctx, "hierarchy", hierarchy ? "1" : "0");
	set(ctx, "max_inflight", "1");
	if (hierarchy == 2) { /* two hosts of nranks / 2 ranks: the victim leads the second */
		snprintf(v, sizeof(v), "host%d", rank < nranks / 2 ? 0 : 1);
		set(ctx, "host_id", v);
	}
	if (algorithm)
		set(ctx, "algorithm", algorithm);
	/* Deadlines learnt by the kill: operations end at short deadlines, the dead rank
	 * estimated, until it is judged dead (docs/design.md, "Peers that die"). */
	if (!strcmp(mode, "bounded"))
		set(ctx, "calib_ops", "2");
	attr.oob.allgather = shm_allgather;
	attr.oob.coll_info = &rank;
	attr.oob.rank = (uint32_t)rank;
	attr.oob.size = (uint32_t)nranks;
	ret = optireduce_comm_create(ctx, &attr, &comm);
	if (ret) {
		fprintf(stderr, "rank %d: comm_create: %s\n", rank, optireduce_strerror(ret));
		return ret == -OPTIREDUCE_ENOPROVIDER ? 77 : 2;
	}
	for (int op = 0; op < WARMUP; op++) {
		ret = one_op(comm, in, out, op);
		if (ret || !warmup_ok(out, op))
			res->warmup_bad++;
	}
	if (rank == victim)
		victim_main(comm, in, out); /* returns only when stopped, not killed */
	else
		survivor_main(rank, comm, in, out);
	t0 = now_ms();
	res->destroy = optireduce_comm_destroy(comm);
	res->destroy_ms = now_ms() - t0;
	res->finalize = optireduce_finalize(ctx);
	res->done = 1;
	free(in);
	free(out);
	return 0;
}

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL: ");                                                          \
			failures++;                                                                \
		} else {                                                                           \
			printf("ok    ");                                                          \
		}                                                                                  \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
	} while (0)

static void kill_all(pid_t *pids)
{
	for (int r = 0; r < nranks; r++)
		if (pids[r] > 0)
			kill(pids[r], SIGKILL);
}

/* Waits for every child until deadline_ms; returns how many exited with status 0 (77 if one
 * of them skipped). */
static int reap(pid_t *pids, double deadline_ms, int *skipped)
{
	int ok = 0, left = nranks;

	while (left > 0 && now_ms() < deadline_ms) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);
		if (p <= 0) {
			usleep(10000);
			continue;
		}
		for (int r = 0; r < nranks; r++) {
			if (pids[r] != p)
				continue;
			pids[r] = 0;
			left--;
			if (r == victim && when != STOP)
				break;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
				*skipped = 1;
			else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
				ok++;
			else
				printf("rank %d ended with status 0x%x\n", r, st);
		}
	}
	return ok;
}

/* -w stop: once every other rank failed (or the time ran out), the victim continues. */
static void resume_victim(pid_t victim_pid)
{
	double limit = now_ms() + peer_timeout_ms + 20000.0;
	int all = 0;

	while (!all && now_ms() < limit) {
		all = 1;
		for (int r = 0; r < nranks; r++)
			all &= r == victim || sh->res[r].code != 0;
		usleep(1000);
	}
	sh->resume_ms = now_ms();
	sh->resumed = 1;
	if (victim_pid > 0)
		kill(victim_pid, SIGCONT);
}

/*
 * Where an exact survivor fails: in K.  With two hosts, a rank of the first one may also
 * fail in K + 1: the victim leads the second host and progresses K until every survivor is
 * inside it, so the leaders' exchange of K can end on the first host's side before the
 * victim is killed (the victim's own host still waits for the result it never publishes).
 */
static int failed_where_expected(int r, int op)
{
	if (when == BETWEEN || strcmp(mode, "exact") || r == victim || op == WARMUP)
		return 1;
	return hierarchy == 2 && r < nranks / 2 && op == WARMUP + 1;
}

/* peer_timeout_ms, plus what a loaded 2-CPU machine adds: the failed operation's end, the
 * ranks' turns at the CPUs, the cancellation of its transfers. */
static void judge(void)
{
	double bound = peer_timeout_ms + 3000.0;

	for (int r = 0; r < nranks; r++) {
		struct rank_result *res = &sh->res[r];
		/* The stopped victim's bound runs from when it was continued. */
		double after = res->failed_ms - (r == victim ? sh->resume_ms : sh->kill_ms);
		if (r == victim && when != STOP)
			continue;
		CHECK(!res->warmup_bad, "rank %d: warm-up operations exact", r);
		CHECK(!res->batch_bad,
		      "rank %d: operations from %d on that succeeded passed the warm-up check", r,
		      WARMUP);
		CHECK(res->code == -OPTIREDUCE_EPEER || res->code == -OPTIREDUCE_ETIMEDOUT,
		      "rank %d: operation %d returned %d (%s)", r, res->op, res->code,
		      optireduce_strerror(res->code));
		CHECK(res->code && after <= bound,
		      "rank %d: failed %.0f ms after it was %s (bound %.0f ms)", r, after,
		      r == victim    ? "continued"
		      : when == STOP ? "stopped"
		                     : "killed",
		      bound);
		CHECK(failed_where_expected(r, res->op),
		      "rank %d: failed in operation %d (killed in %d)", r, res->op, WARMUP);
		CHECK(res->after_ok == 0 && res->after_unstarted == BATCH - 1 - res->batch_index,
		      "rank %d: the %d operations queued behind the failed one failed unstarted "
		      "(%d did, %d succeeded)",
		      r, BATCH - 1 - res->batch_index, res->after_unstarted, res->after_ok);
		CHECK(res->second == -OPTIREDUCE_EPEER,
		      "rank %d: an operation after the failure returns %d (%s)", r, res->second,
		      optireduce_strerror(res->second));
		CHECK(res->destroy == 0 && res->destroy_ms < 1000,
		      "rank %d: destroy returned %d in %.0f ms", r, res->destroy, res->destroy_ms);
		CHECK(res->finalize == 0, "rank %d: finalize returned %d", r, res->finalize);
		CHECK(res->done, "rank %d: ran to the end", r);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: test_deadpeer [-n ranks] [-m exact|bounded] [-w mid|between] "
	                "[-t peer_timeout_ms] [-c count] [-a algorithm] [-H]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	int o;

	while ((o = getopt(argc, argv, "n:m:w:t:c:a:H")) != -1) {
		switch (o) {
		case 'n':
			nranks = atoi(optarg);
			break;
		case 'm':
			mode = optarg;
			break;
		case 'w':
			when = !strcmp(optarg, "between") ? BETWEEN
			       : !strcmp(optarg, "stop")  ? STOP
			                                  : MID;
			break;
		case 't':
			peer_timeout_ms = atoi(optarg);
			break;
		case 'c':
			count = (size_t)atol(optarg);
			break;
		case 'a':
			algorithm = optarg;
			break;
		case 'H':
			hierarchy++;
			break;
		default:
			usage();
		}
	}
	if (nranks < 2 || nranks > MAX_RANKS || peer_timeout_ms < 1 || count == 0)
		usage();
	victim = nranks / 2; /* not rank 0: rank 0 proposes the id and leads hosts */
}

int main(int argc, char **argv)
{
	pthread_barrierattr_t ba;
	pid_t pids[MAX_RANKS] = {0};
	double deadline;
	int ok, skipped = 0;

	parse(argc, argv);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	memset(sh, 0, sizeof(*sh));
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&sh->bar, &ba, (unsigned)nranks);
	printf("%d ranks, %s mode, rank %d %s, peer_timeout_ms %d\n", nranks, mode, victim,
	       when == MID       ? "killed inside an operation"
	       : when == BETWEEN ? "killed between operations"
	                         : "stopped inside an operation, continued after the others failed",
	       peer_timeout_ms);
	fflush(stdout);
	for (int r = 0; r < nranks; r++) {
		pids[r] = fork();
		if (pids[r] == 0)
			_exit(child(r));
		if (pids[r] < 0) {
			kill_all(pids);
			return 2;
		}
	}
	/* Creation loads libfabric in every process: give it time on a loaded machine. */
	deadline = now_ms() + 60000.0;
	while (!sh->victim_ready && now_ms() < deadline)
		usleep(1000);
	if (sh->victim_ready && when != BETWEEN)
		usleep(200000); /* the survivors wait inside operation K */
	sh->kill_ms = now_ms();
	if (pids[victim] > 0)
		kill(pids[victim], when == STOP ? SIGSTOP : SIGKILL);
	sh->killed = 1;
	if (when == STOP)
		resume_victim(pids[victim]);
	ok = reap(pids, now_ms() + peer_timeout_ms + 25000.0, &skipped);
	if (skipped) {
		kill_all(pids);
		printf("no provider: skipping\n");
		return 77;
	}
	CHECK(sh->victim_ready, "the victim reached the point where it is %s",
	      when == STOP ? "stopped" : "killed");
	CHECK(ok == nranks - (when != STOP),
	      "%d of %d ranks that were not killed exited cleanly, none hung", ok,
	      nranks - (when != STOP));
	kill_all(pids);
	judge();
	printf("%s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
