/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/bounded/ctl/liveness.c on synthetic timelines: a peer silent inside operations that
 * expect it is judged dead only past the timeout; time between operations and operations
 * that do not expect it never count; one datagram resets its silence; operations in flight
 * at once count a peer once; and a straggler that comes late, but within the timeout, is
 * never judged dead however long the application computes between operations.
 */
#include <stdint.h>

#include "check.h"
#include "optireduce.h"
#include "lib/bounded/ctl/liveness.h"

#define TIMEOUT_US 10000.0

static void test_silence_inside_operations(void)
{
	struct or_liveness l;

	CHECK(or_liveness_init(&l, 4) == 0, "init, 4 peers");
	CHECK(or_liveness_dead(&l, 1e9, TIMEOUT_US) == -1, "nobody is dead before any operation");
	/* Operation 1 expects peer 2 from t=1000 to t=7000: 6 ms of silence. */
	or_liveness_expect(&l, 2, 1000);
	CHECK(or_liveness_dead(&l, 7000, TIMEOUT_US) == -1, "6 ms silent: alive");
	or_liveness_release(&l, 2, 7000);
	/* A minute of computing between operations counts nothing. */
	CHECK(or_liveness_dead(&l, 67000, TIMEOUT_US) == -1, "between operations: not judged");
	CHECK(or_liveness_silence(&l, 2, 67000) == 6000, "silence kept at 6 ms (%.0f us)",
	      or_liveness_silence(&l, 2, 67000));
	/* Operation 2 from t=70000: the peer is dead once 4 more ms pass. */
	or_liveness_expect(&l, 2, 70000);
	CHECK(or_liveness_dead(&l, 73900, TIMEOUT_US) == -1, "9.9 ms silent in operations: alive");
	CHECK(or_liveness_dead(&l, 74100, TIMEOUT_US) == 2, "10.1 ms silent in operations: dead");
	/* One datagram, even of another operation, resets it. */
	or_liveness_heard(&l, 2, 74200);
	CHECK(or_liveness_dead(&l, 80000, TIMEOUT_US) == -1, "heard at 74.2 ms: alive at 80 ms");
	CHECK(or_liveness_dead(&l, 84300, TIMEOUT_US) == 2, "silent again for 10.1 ms: dead");
	or_liveness_release(&l, 2, 84300);
	or_liveness_fini(&l);
}

static void test_only_expected_peers(void)
{
	struct or_liveness l;

	CHECK(or_liveness_init(&l, 4) == 0, "init");
	/* The ring: this rank hears only from peer 1; peers 2 and 3 never send to it. */
	or_liveness_expect(&l, 1, 0);
	for (double t = 0; t < 1e6; t += 1000)
		or_liveness_heard(&l, 1, t);
	CHECK(or_liveness_dead(&l, 1e6, TIMEOUT_US) == -1,
	      "peers no operation expects are never judged");
	or_liveness_release(&l, 1, 1e6);
	CHECK(or_liveness_silence(&l, 3, 1e6) == 0, "peer 3's silence is 0");
	or_liveness_fini(&l);
}

static void test_overlapping_operations(void)
{
	struct or_liveness l;

	CHECK(or_liveness_init(&l, 3) == 0, "init");
	/* Two operations in flight expect peer 0: its silence runs once, not twice. */
	or_liveness_expect(&l, 0, 0);
	or_liveness_expect(&l, 0, 2000);
	or_liveness_release(&l, 0, 5000);
	CHECK(or_liveness_silence(&l, 0, 6000) == 6000, "still expected by one: 6 ms (%.0f)",
	      or_liveness_silence(&l, 0, 6000));
	or_liveness_release(&l, 0, 6000);
	CHECK(or_liveness_silence(&l, 0, 50000) == 6000, "none left: stays 6 ms");
	or_liveness_release(&l, 0, 60000); /* one release too many: ignored */
	CHECK(or_liveness_silence(&l, 0, 70000) == 6000, "an extra release changes nothing");
	/* Marks: an operation counts each peer once, another operation again. */
	CHECK(or_liveness_mark(&l, 1, 7) == 1, "op 7 names peer 1 first");
	CHECK(or_liveness_mark(&l, 1, 7) == 0, "op 7 names peer 1 again: not counted");
	CHECK(or_liveness_mark(&l, 1, 8) == 1, "op 8 names peer 1");
	CHECK(or_liveness_mark(&l, 3, 8) == 0, "a peer out of range is never counted");
	or_liveness_fini(&l);
}

/*
 * A straggler: every operation it enters 40 % of the timeout late, and the application
 * computes 10x the timeout between operations.  Never judged dead over 1,000 operations.
 */
static void test_straggler(void)
{
	struct or_liveness l;
	double t = 0;
	int judged = 0;

	CHECK(or_liveness_init(&l, 2) == 0, "init");
	for (int op = 0; op < 1000; op++) {
		or_liveness_expect(&l, 1, t);
		judged |= or_liveness_dead(&l, t + 0.4 * TIMEOUT_US, TIMEOUT_US) >= 0;
		or_liveness_heard(&l, 1, t + 0.4 * TIMEOUT_US);
		or_liveness_release(&l, 1, t + 0.5 * TIMEOUT_US);
		t += 10 * TIMEOUT_US;
	}
	CHECK(!judged, "a straggler 0.4 timeouts late is never judged dead");
	or_liveness_fini(&l);
}

/* A peer with no memory (init failed, or 0 peers): every call is harmless. */
static void test_empty(void)
{
	struct or_liveness l = {0};

	or_liveness_expect(&l, 0, 1);
	or_liveness_heard(&l, 0, 2);
	or_liveness_release(&l, 0, 3);
	CHECK(or_liveness_dead(&l, 1e9, TIMEOUT_US) == -1, "no peers: nobody dead");
	CHECK(or_liveness_mark(&l, 0, 1) == 0, "no peers: nothing marked");
	or_liveness_fini(&l);
}

int main(void)
{
	test_silence_inside_operations();
	test_only_expected_peers();
	test_overlapping_operations();
	test_straggler();
	test_empty();
	printf("%s\n", check_failures ? "FAILED" : "passed");
	return check_failures ? 1 : 0;
}
