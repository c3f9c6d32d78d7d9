/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bounded-mode policy parser of the MPI interposer (lib/pmpi/policy.c):
 * the grammar, size suffixes and conditions, matching, and every kind of
 * bad string rejected whole with a reason and an empty policy.
 */
#undef NDEBUG
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/pmpi/policy.h"

#define F32  OPTIREDUCE_FLOAT32
#define F64  OPTIREDUCE_FLOAT64
#define F16  OPTIREDUCE_FLOAT16
#define BF16 OPTIREDUCE_BFLOAT16

static struct orp_policy parse_ok(const char *s)
{
	struct orp_policy p;
	char err[256];

	if (orp_policy_parse(s, &p, err, sizeof(err)) != 0) {
		fprintf(stderr, "'%s' rejected: %s\n", s, err);
		assert(0);
	}
	assert(err[0] == '\0');
	return p;
}

static void parse_bad(const char *s, const char *why)
{
	struct orp_policy p;
	char err[256];

	memset(&p, 0x5a, sizeof(p));
	assert(orp_policy_parse(s, &p, err, sizeof(err)) == -1);
	/* Rejected whole: nothing of a partly parsed string survives. */
	assert(p.nrules == 0);
	assert(!orp_policy_match(&p, F32, 1 << 20));
	if (!strstr(err, why)) {
		fprintf(stderr, "'%s': reason '%s' lacks '%s'\n", s, err, why);
		assert(0);
	}
}

static void test_empty(void)
{
	const char *off[] = {"", "  ", "none", "NONE", "off", " 0 ", "\t"};
	struct orp_policy p;

	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		p = parse_ok(off[i]);
		assert(p.nrules == 0);
		assert(!orp_policy_match(&p, F32, 100));
	}
	assert(orp_policy_parse(NULL, &p, NULL, 0) == 0 && p.nrules == 0);
}

static void test_names(void)
{
	struct orp_policy p = parse_ok("float");

	assert(p.nrules == 1);
	assert(orp_policy_match(&p, F32, 0) && orp_policy_match(&p, F32, UINT64_MAX));
	assert(!orp_policy_match(&p, F64, 1000));
	p = parse_ok(" Double , FP32 ");
	assert(orp_policy_match(&p, F32, 8) && orp_policy_match(&p, F64, 8));
	assert(!orp_policy_match(&p, F16, 8));
	p = parse_ok("float64,float32");
	assert(orp_policy_match(&p, F32, 8) && orp_policy_match(&p, F64, 8));
	p = parse_ok("half,bf16");
	assert(orp_policy_match(&p, F16, 8) && orp_policy_match(&p, BF16, 8));
	assert(!orp_policy_match(&p, F32, 8));
	p = parse_ok("float16,bfloat16,fp16");
	assert(orp_policy_match(&p, F16, 8) && orp_policy_match(&p, BF16, 8));
	p = parse_ok("all");
	assert(orp_policy_match(&p, F16, 1) && orp_policy_match(&p, BF16, 1) &&
	       orp_policy_match(&p, F32, 1) && orp_policy_match(&p, F64, 1));
	/* Integers never match, whatever the policy. */
	assert(!orp_policy_match(&p, OPTIREDUCE_INT32, 1) &&
	       !orp_policy_match(&p, OPTIREDUCE_UINT64, 1) &&
	       !orp_policy_match(&p, OPTIREDUCE_INT8, 1));
	p = parse_ok("*:>=1k");
	assert(orp_policy_match(&p, F64, 1024) && !orp_policy_match(&p, F64, 1023));
	assert(!orp_policy_match(&p, (enum optireduce_dtype)99, 1 << 20));
}

static void test_conditions(void)
{
	struct orp_policy p = parse_ok("float,double:>=64k");

	assert(p.nrules == 1 && p.rule[0].min_bytes == 65536 && p.rule[0].max_bytes == UINT64_MAX);
	assert(!orp_policy_match(&p, F32, 65535) && orp_policy_match(&p, F32, 65536));
	assert(orp_policy_match(&p, F64, 1ull << 40));
	p = parse_ok("float:>64K");
	assert(!orp_policy_match(&p, F32, 65536) && orp_policy_match(&p, F32, 65537));
	p = parse_ok("float:<1m");
	assert(orp_policy_match(&p, F32, 0) && orp_policy_match(&p, F32, (1 << 20) - 1));
	assert(!orp_policy_match(&p, F32, 1 << 20));
	p = parse_ok("float: <= 1M");
	assert(orp_policy_match(&p, F32, 1 << 20) && !orp_policy_match(&p, F32, (1 << 20) + 1));
	p = parse_ok("double:4k-16m");
	assert(p.rule[0].min_bytes == 4096 && p.rule[0].max_bytes == 16u << 20);
	assert(!orp_policy_match(&p, F64, 4095) && orp_policy_match(&p, F64, 4096));
	assert(orp_policy_match(&p, F64, 16u << 20) && !orp_policy_match(&p, F64, (16u << 20) + 1));
	p = parse_ok("double: 10 - 10");
	assert(orp_policy_match(&p, F64, 10) && !orp_policy_match(&p, F64, 9) &&
	       !orp_policy_match(&p, F64, 11));
	p = parse_ok("float:>=2g");
	assert(p.rule[0].min_bytes == 2ull << 30);
	p = parse_ok("float:>=0");
	assert(orp_policy_match(&p, F32, 0));
	p = parse_ok("float:<=17179869183G"); /* 2^64 - 2^30: fits */
	assert(p.rule[0].max_bytes == (17179869183ull << 30));
	p = parse_ok("float:>=18446744073709551615");
	assert(orp_policy_match(&p, F32, UINT64_MAX) && !orp_policy_match(&p, F32, UINT64_MAX - 1));
}

static void test_rules(void)
{
	struct orp_policy p = parse_ok("float:<1m;double:4k-16m");

	assert(p.nrules == 2);
	assert(orp_policy_match(&p, F32, 100) && !orp_policy_match(&p, F32, 2 << 20));
	assert(!orp_policy_match(&p, F64, 100) && orp_policy_match(&p, F64, 2 << 20));
	p = parse_ok("float:<1k ; float:>=1m");
	assert(orp_policy_match(&p, F32, 100) && !orp_policy_match(&p, F32, 4096) &&
	       orp_policy_match(&p, F32, 1 << 20));
	p = parse_ok("float;float;float;float;float;float;float;float;"
	             "float;float;float;float;float;float;float;float");
	assert(p.nrules == ORP_POLICY_MAX_RULES);
}

static void test_bad(void)
{
	parse_bad("int", "not a floating type");
	parse_bad("float,int32", "not a floating type");
	parse_bad("quad", "unknown dtype 'quad'");
	parse_bad("float,", "expected a dtype name");
	parse_bad(",float", "expected a dtype name");
	parse_bad("float,,double", "expected a dtype name");
	parse_bad("float double", "unexpected 'd'");
	parse_bad("float:", "expected a size condition");
	parse_bad("float:64k", "expected '-'");
	parse_bad("float:=64k", "expected a size condition");
	parse_bad("float:>=", "expected a size");
	parse_bad("float:>=k", "expected a size");
	parse_bad("float:>=64x", "bad size suffix 'x'");
	parse_bad("float:>=64kb", "bad size suffix 'b'");
	parse_bad("float:>=-1", "expected a size");
	parse_bad("float:<0", "matches no size");
	parse_bad("float:>18446744073709551615", "matches no size");
	parse_bad("float:>=18446744073709551616", "too large");
	parse_bad("float:>=17179869184g", "too large");
	parse_bad("float:16m-4k", "empty range");
	parse_bad("float:4k-", "expected a size");
	parse_bad("float:>=1k:<=2k", "unexpected ':'");
	parse_bad("float:>=1k,double", "unexpected ','");
	parse_bad("float;", "expected a dtype name");
	parse_bad(";float", "expected a dtype name");
	parse_bad("float;;double", "expected a dtype name");
	parse_bad("float:>=64k;bogus", "unknown dtype 'bogus'");
	parse_bad("averyveryveryverylongdtypenamethatgoesonandon", "too long");
	parse_bad("float;float;float;float;float;float;float;float;"
	          "float;float;float;float;float;float;float;float;float",
	          "more than 16 rules");
	/* The position points at the offending token. */
	{
		struct orp_policy p;
		char err[128];
		assert(orp_policy_parse("float,quad", &p, err, sizeof(err)) == -1);
		assert(strncmp(err, "at character 7:", 15) == 0);
		/* A short error buffer is truncated, never overrun. */
		char tiny[8];
		memset(tiny, 'x', sizeof(tiny));
		assert(orp_policy_parse("quad", &p, tiny, 4) == -1);
		assert(tiny[3] == '\0' && tiny[4] == 'x');
		assert(orp_policy_parse("quad", &p, NULL, 0) == -1);
	}
}

static void test_comms(void)
{
	char err[64];
	int all = -1;

	assert(orp_policy_parse_comms(NULL, &all, err, sizeof(err)) == 0 && all == 0);
	assert(orp_policy_parse_comms("", &all, err, sizeof(err)) == 0 && all == 0);
	assert(orp_policy_parse_comms("world", &all, err, sizeof(err)) == 0 && all == 0);
	assert(orp_policy_parse_comms(" ALL ", &all, err, sizeof(err)) == 0 && all == 1);
	assert(orp_policy_parse_comms("every", &all, err, sizeof(err)) == -1 && all == 0);
	assert(strstr(err, "'world' or 'all'"));
	assert(orp_policy_parse_comms("all world", &all, err, sizeof(err)) == -1);
}

static void test_digest(void)
{
	struct orp_policy a = parse_ok("float:>=64k"), b = parse_ok(" float : >= 65536 "),
	                  c = parse_ok("float:>=64k;double");

	assert(orp_policy_digest(&a, 0) == orp_policy_digest(&b, 0));
	assert(orp_policy_digest(&a, 0) != orp_policy_digest(&a, 1));
	assert(orp_policy_digest(&a, 0) != orp_policy_digest(&c, 0));
}

int main(void)
{
	test_empty();
	test_names();
	test_conditions();
	test_rules();
	test_bad();
	test_comms();
	test_digest();
	printf("test_policy: PASS\n");
	return 0;
}
