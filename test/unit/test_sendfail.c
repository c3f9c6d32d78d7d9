/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/bounded/ctl/sendfail.c on synthetic sends: which errors are losses, that each loss is counted and
 * the operation goes on, that a peer is reported (-OPTIREDUCE_EPEER) only after every send to
 * it failed for longer than the timeout, that one send that goes resets that, that peers are
 * judged apart, and that 1 % of sends refused at random never reports a peer.
 */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "optireduce.h"
#include "lib/bounded/ctl/sendfail.h"

#define TIMEOUT_US 10000.0

static void test_is_loss(void)
{
	static const int loss[] = {-OPTIREDUCE_EFABRIC, -OPTIREDUCE_EPEER, -OPTIREDUCE_EAGAIN,
	                           -OPTIREDUCE_ENOMEM, -OPTIREDUCE_ETIMEDOUT};
	for (size_t i = 0; i < sizeof(loss) / sizeof(loss[0]); i++)
		CHECK(or_sendfail_is_loss(loss[i]), "%s is a loss", optireduce_strerror(loss[i]));
	CHECK(!or_sendfail_is_loss(-OPTIREDUCE_EINVAL), "a bad argument is not a loss");
	CHECK(!or_sendfail_is_loss(-OPTIREDUCE_EMSGSIZE), "an oversized datagram is not a loss");
	CHECK(!or_sendfail_is_loss(0), "success is not a loss");
}

static void test_timeout(void)
{
	struct or_sendfail s;
	int ret;

	CHECK(or_sendfail_init(&s, 4) == 0, "init, 4 peers");
	CHECK(or_sendfail_note(&s, 1, -OPTIREDUCE_EFABRIC, "Operation not permitted", 1000,
	                       TIMEOUT_US) == 0 &&
	          s.total == 1,
	      "a refused send is counted as lost (total %llu)", (unsigned long long)s.total);
	ret = 0;
	for (double t = 1000; t <= 1000 + TIMEOUT_US && !ret; t += 100)
		ret = or_sendfail_note(&s, 1, -OPTIREDUCE_EFABRIC, NULL, t, TIMEOUT_US);
	CHECK(ret == 0, "failures for exactly the timeout: still losses (%d)", ret);
	CHECK(or_sendfail_note(&s, 2, -OPTIREDUCE_EPEER, NULL, 1000 + TIMEOUT_US + 1, TIMEOUT_US) ==
	          0,
	      "another peer's first failure is a loss");
	CHECK(or_sendfail_note(&s, 1, -OPTIREDUCE_EFABRIC, NULL, 1000 + TIMEOUT_US + 1,
	                       TIMEOUT_US) == -OPTIREDUCE_EPEER,
	      "failures for longer than the timeout: the peer is reported");
	or_sendfail_ok(&s, 1);
	CHECK(or_sendfail_note(&s, 1, -OPTIREDUCE_EFABRIC, NULL, 1e9, TIMEOUT_US) == 0,
	      "one send that went: the next failure starts over");
	CHECK(or_sendfail_note(&s, 3, -OPTIREDUCE_EFABRIC, NULL, 0, TIMEOUT_US) == 0 &&
	          or_sendfail_note(&s, 3, -OPTIREDUCE_EFABRIC, NULL, TIMEOUT_US + 1, TIMEOUT_US) ==
	              -OPTIREDUCE_EPEER,
	      "a first failure at time 0 starts the clock too");
	{
		uint64_t before = s.total;
		CHECK(or_sendfail_note(&s, 0, -OPTIREDUCE_EMSGSIZE, NULL, 5, TIMEOUT_US) ==
		              -OPTIREDUCE_EMSGSIZE &&
		          s.total == before,
		      "an oversized datagram is returned as the error, not counted");
		CHECK(or_sendfail_note(&s, 4, -OPTIREDUCE_EFABRIC, NULL, 5, TIMEOUT_US) ==
		              -OPTIREDUCE_EINVAL &&
		          s.total == before,
		      "a peer out of range: -EINVAL, not counted");
	}
	or_sendfail_ok(&s, 99); /* out of range: ignored */
	or_sendfail_fini(&s);
	CHECK(s.since_us == NULL, "fini frees");
}

/* One send per us to 3 peers, each refused with probability 1 %, for 10 s. */
static void test_random_loss(void)
{
	struct or_sendfail s;
	uint64_t x = 12345, refused = 0, sends = 10000000;
	int worst = 0;

	or_sendfail_init(&s, 3);
	for (uint64_t i = 0; i < sends; i++) {
		uint32_t peer = (uint32_t)(i % 3);
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if ((x >> 33) % 100 == 0) {
			int r = or_sendfail_note(&s, peer, -OPTIREDUCE_EFABRIC, NULL, (double)i,
			                         TIMEOUT_US);
			refused++;
			if (r)
				worst = r;
		} else {
			or_sendfail_ok(&s, peer);
		}
	}
	CHECK(worst == 0, "1 %% random refusals over 10 s: no peer reported (%d)", worst);
	CHECK(s.total == refused && refused > sends / 200 && refused < sends / 50,
	      "every refusal counted: %llu of %llu sends", (unsigned long long)s.total,
	      (unsigned long long)sends);
	or_sendfail_fini(&s);
}

int main(void)
{
	test_is_loss();
	test_timeout();
	test_random_loss();
	return check_failures ? 1 : 0;
}
