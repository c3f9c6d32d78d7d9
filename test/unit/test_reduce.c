/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduction kernels against a naive model written independently here:
 * 16-bit floats are decoded and rounded with ldexp/frexp in double, integer
 * wrap-around comes from exact 128-bit arithmetic, and every element is
 * computed one at a time with obvious code.
 *
 * Prints each failure (the first few per check) and exits 1 if any.
 * OPTIREDUCE_TEST_FULL=1 also checks float -> 16-bit rounding on all 2^32
 * float patterns (about 8 minutes).
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optireduce.h"
#include "lib/kernels/half.h"
#include "lib/kernels/reduce.h"

static unsigned long failures;
static unsigned long checks;

#define MAX_REPORTS 20

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		checks++;                                                                          \
		if (!(cond)) {                                                                     \
			if (failures++ < MAX_REPORTS) {                                            \
				printf("FAIL %s:%d: ", __FILE__, __LINE__);                        \
				printf(__VA_ARGS__);                                               \
				printf("\n");                                                      \
			}                                                                          \
		}                                                                                  \
	} while (0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible, good enough to scatter bit patterns. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float bitsf(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint64_t dbits(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return u;
}

static double bitsd(uint64_t u)
{
	double d;

	memcpy(&d, &u, 8);
	return d;
}

/* ---- reference 16-bit float model, in double ---- */

struct fmt16 {
	const char *name;
	int mbits; /* stored mantissa bits */
	int emax;  /* largest biased exponent of finite values */
	int bias;
};

static const struct fmt16 F16 = {"float16", 10, 30, 15};
static const struct fmt16 BF16 = {"bfloat16", 7, 254, 127};

static int ref16_isnan(const struct fmt16 *f, uint16_t h)
{
	int e = (h & 0x7fff) >> f->mbits;

	return e == f->emax + 1 && (h & ((1u << f->mbits) - 1)) != 0;
}

static double ref16_decode(const struct fmt16 *f, uint16_t h)
{
	int e = (h & 0x7fff) >> f->mbits;
	int m = h & ((1 << f->mbits) - 1);
	double v;

	if (e == f->emax + 1)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, 1 - f->bias - f->mbits);
	else
		v = ldexp((1 << f->mbits) + m, e - f->bias - f->mbits);
	return (h & 0x8000) ? -v : v;
}

/* Nearest, ties to even, overflow to infinity; NaN input gives 0x7fff. */
static uint16_t ref16_encode(const struct fmt16 *f, double x)
{
	uint16_t sign = signbit(x) ? 0x8000 : 0;
	double ax = fabs(x), big, q, fl, r;
	int one = 1 << f->mbits;
	int e, ulpexp;

	if (isnan(x))
		return 0x7fff;
	/* Halfway between the largest finite value and the next power of 2. */
	big = ldexp(2.0 * one - 0.5, f->emax - f->bias - f->mbits);
	if (ax >= big)
		return sign | (uint16_t)((f->emax + 1) << f->mbits);
	if (ax == 0)
		return sign;
	frexp(ax, &e);
	ulpexp = e - 1;
	if (ulpexp < 1 - f->bias)
		ulpexp = 1 - f->bias;
	ulpexp -= f->mbits;
	q = ldexp(ax, -ulpexp);
	fl = floor(q);
	if (q - fl > 0.5)
		r = fl + 1;
	else if (q - fl < 0.5)
		r = fl;
	else
		r = fmod(fl, 2.0) == 0 ? fl : fl + 1;
	if (r < one)
		return sign | (uint16_t)r;
	if (r == 2.0 * one) {
		r = one;
		ulpexp++;
	}
	return sign | (uint16_t)(((ulpexp + f->mbits + f->bias) << f->mbits) | ((int)r - one));
}

static float tof16(const struct fmt16 *f, uint16_t h)
{
	return f == &F16 ? or_half_to_float(h) : or_bf16_to_float(h);
}

static uint16_t fromf16(const struct fmt16 *f, float x)
{
	return f == &F16 ? or_float_to_half(x) : or_float_to_bf16(x);
}

/* Expected result of narrowing x (float or double): exact bits, or NaN of x's sign. */
static void check_narrow(const struct fmt16 *f, double x, uint16_t got, const char *what)
{
	if (isnan(x)) {
		CHECK(ref16_isnan(f, got) && !!(got & 0x8000) == !!signbit(x),
		      "%s %s(%a): got 0x%04x, want NaN of the same sign", f->name, what, x, got);
		return;
	}
	uint16_t want = ref16_encode(f, x);
	CHECK(got == want, "%s %s(%a): got 0x%04x want 0x%04x", f->name, what, x, got, want);
}

static void test_exhaustive16(const struct fmt16 *f)
{
	for (uint32_t i = 0; i < 65536; i++) {
		uint16_t h = (uint16_t)i;
		float x = tof16(f, h);
		uint32_t got = fbits(x), want;

		if (ref16_isnan(f, h)) {
			/* Payload moves up into the float's top mantissa bits. */
			want = (uint32_t)(h & 0x8000) << 16 | 0x7f800000u |
			       (uint32_t)(h & ((1u << f->mbits) - 1)) << (23 - f->mbits);
		} else {
			want = fbits((float)ref16_decode(f, h));
		}
		CHECK(got == want, "%s to float 0x%04x: got 0x%08x want 0x%08x", f->name, h, got,
		      want);
		CHECK(fromf16(f, x) == h, "%s round trip 0x%04x -> 0x%08x -> 0x%04x", f->name, h,
		      got, fromf16(f, x));
	}
}

static void narrow_one(const struct fmt16 *f, float x)
{
	check_narrow(f, x, fromf16(f, x), "from_float");
}

static void test_narrowing(const struct fmt16 *f)
{
	static const float specials[] = {0.0f,    -0.0f,    INFINITY, -INFINITY, NAN,
	                                 -NAN,    FLT_MAX,  -FLT_MAX, FLT_MIN,   FLT_TRUE_MIN,
	                                 65504.f, 65519.f,  65520.f,  65536.f,   1e-8f,
	                                 3e-8f,   2.98e-8f, 5.96e-8f, 1.0f / 3,  0.1f};
	const char *full = getenv("OPTIREDUCE_TEST_FULL");

	for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++) {
		narrow_one(f, specials[i]);
		narrow_one(f, -specials[i]);
	}
	/* Around every finite value and every midpoint: where rounding decides. */
	for (uint32_t i = 0; i < 0x7fff; i++) {
		double lo = ref16_decode(f, (uint16_t)i);
		double hi = ref16_decode(f, (uint16_t)(i + 1));
		float pts[2], x;

		if (isnan(lo) || isinf(lo))
			continue;
		pts[0] = (float)lo;
		pts[1] = isinf(hi) ? (float)(lo + (lo - ref16_decode(f, (uint16_t)(i - 1))) / 2)
		                   : (float)((lo + hi) / 2);
		for (int p = 0; p < 2; p++) {
			x = pts[p];
			for (int k = 0; k < 3; k++)
				x = nextafterf(x, -INFINITY);
			for (int k = 0; k < 7; k++) {
				narrow_one(f, x);
				narrow_one(f, -x);
				x = nextafterf(x, INFINITY);
			}
		}
	}
	for (int i = 0; i < 1000000; i++)
		narrow_one(f, bitsf((uint32_t)rnd()));
	if (full && atoi(full)) {
		for (uint64_t u = 0; u <= 0xffffffffull; u++)
			narrow_one(f, bitsf((uint32_t)u));
	} else {
		for (uint64_t u = 0; u <= 0xffffffffull; u += 4093)
			narrow_one(f, bitsf((uint32_t)u));
	}
}

/* ---- buffers of any dtype ---- */

static size_t dsize(enum optireduce_dtype dt)
{
	switch (dt) {
	case OPTIREDUCE_INT8:
	case OPTIREDUCE_UINT8:
		return 1;
	case OPTIREDUCE_FLOAT16:
	case OPTIREDUCE_BFLOAT16:
		return 2;
	case OPTIREDUCE_INT32:
	case OPTIREDUCE_UINT32:
	case OPTIREDUCE_FLOAT32:
		return 4;
	default:
		return 8;
	}
}

static const char *dname(enum optireduce_dtype dt)
{
	static const char *names[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
	                              "uint64", "float16", "bfloat16", "float32", "float64"};
	return names[dt];
}

static const char *oname(enum optireduce_op op)
{
	static const char *names[] = {"SUM", "PROD", "MIN", "MAX", "AVG"};
	return names[op];
}

static int is_signed_int(enum optireduce_dtype dt)
{
	return dt == OPTIREDUCE_INT8 || dt == OPTIREDUCE_INT32 || dt == OPTIREDUCE_INT64;
}

static int is_float(enum optireduce_dtype dt)
{
	return dt >= OPTIREDUCE_FLOAT16;
}

static const struct fmt16 *fmt_of(enum optireduce_dtype dt)
{
	return dt == OPTIREDUCE_FLOAT16 ? &F16 : dt == OPTIREDUCE_BFLOAT16 ? &BF16 : NULL;
}

static int bits_of(enum optireduce_dtype dt)
{
	return (int)dsize(dt) * 8;
}

/* Elements as raw little integers, so one getter/setter serves every dtype. */
static uint64_t get_raw(const void *buf, size_t i, enum optireduce_dtype dt)
{
	const unsigned char *p = (const unsigned char *)buf + i * dsize(dt);
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (dsize(dt)) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return u16;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	default:
		memcpy(&u64, p, 8);
		return u64;
	}
}

static void set_raw(void *buf, size_t i, enum optireduce_dtype dt, uint64_t v)
{
	unsigned char *p = (unsigned char *)buf + i * dsize(dt);
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (dsize(dt)) {
	case 1:
		memcpy(p, &u8, 1);
		break;
	case 2:
		memcpy(p, &u16, 2);
		break;
	case 4:
		memcpy(p, &u32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

static int raw_isnan(enum optireduce_dtype dt, uint64_t r)
{
	switch (dt) {
	case OPTIREDUCE_FLOAT16:
	case OPTIREDUCE_BFLOAT16:
		return ref16_isnan(fmt_of(dt), (uint16_t)r);
	case OPTIREDUCE_FLOAT32:
		return isnan(bitsf((uint32_t)r));
	case OPTIREDUCE_FLOAT64:
		return isnan(bitsd(r));
	default:
		return 0;
	}
}

/* ---- value generators ---- */

static uint64_t gen_int(enum optireduce_dtype dt)
{
	int bits = bits_of(dt);
	uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
	uint64_t top = 1ull << (bits - 1);
	uint64_t r = rnd();

	switch (r % 8) {
	case 0: /* the extremes, signed and unsigned */
		switch ((r >> 8) % 6) {
		case 0:
			return top & mask; /* INT_MIN / 2^(n-1) */
		case 1:
			return (top - 1) & mask; /* INT_MAX */
		case 2:
			return mask; /* -1 / UINT_MAX */
		case 3:
			return 0;
		case 4:
			return 1;
		default:
			return (top + 1) & mask;
		}
	case 1: /* small, of either sign */
		return (uint64_t)((int64_t)(r >> 32) % 100) & mask;
	default:
		return rnd() & mask;
	}
}

static uint64_t gen_f32(void)
{
	static const float sp[] = {0.0f,   -0.0f,   INFINITY, -INFINITY, NAN,     -NAN,
	                           1.0f,   -1.0f,   FLT_MAX,  -FLT_MAX,  FLT_MIN, FLT_TRUE_MIN,
	                           1e-40f, -3e-42f, 3.0f,     0.1f};
	uint64_t r = rnd();

	switch (r % 8) {
	case 0:
		return fbits(sp[(r >> 8) % (sizeof(sp) / sizeof(sp[0]))]);
	case 1:
		return (uint32_t)rnd(); /* any pattern: NaN payloads, subnormals */
	default:
		return fbits((float)ldexp((double)(rnd() >> 40) * ((r >> 8) & 1 ? -1 : 1),
		                          (int)((r >> 16) % 60) - 54));
	}
}

static uint64_t gen_f64(void)
{
	static const double sp[] = {0.0,    -0.0,    INFINITY, -INFINITY, NAN,     -NAN,
	                            1.0,    -1.0,    DBL_MAX,  -DBL_MAX,  DBL_MIN, 4.9e-324,
	                            1e-310, -3e-320, 3.0,      0.1};
	uint64_t r = rnd();

	switch (r % 8) {
	case 0:
		return dbits(sp[(r >> 8) % (sizeof(sp) / sizeof(sp[0]))]);
	case 1:
		return rnd();
	default:
		return dbits(ldexp((double)(rnd() >> 11) * ((r >> 8) & 1 ? -1 : 1),
		                   (int)((r >> 16) % 120) - 113));
	}
}

static uint64_t gen_16(const struct fmt16 *f)
{
	static const uint16_t sp16[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff,
	                                0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00,
	                                0xfe00, 0x7c01, 0x3c00, 0xbc00, 0x3555, 0x0200};
	static const uint16_t spbf[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x807f,
	                                0x0080, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0,
	                                0xffc0, 0x7f81, 0x3f80, 0xbf80, 0x3eab, 0x0040};
	uint64_t r = rnd();
	int e;

	switch (r % 8) {
	case 0:
		return f == &F16 ? sp16[(r >> 8) % 18] : spbf[(r >> 8) % 18];
	case 1: /* subnormals */
		return (r >> 16) & (0x8000 | ((1u << f->mbits) - 1));
	case 2:
	case 3: /* any pattern */
		return (uint16_t)(r >> 16);
	default: /* close exponents, so that sums and products round */
		e = f->bias + (int)((r >> 8) % 5) - 2;
		return ((r >> 16) & 0x8000) | (uint64_t)e << f->mbits |
		       ((r >> 24) & ((1u << f->mbits) - 1));
	}
}

static uint64_t gen(enum optireduce_dtype dt)
{
	switch (dt) {
	case OPTIREDUCE_FLOAT16:
	case OPTIREDUCE_BFLOAT16:
		return gen_16(fmt_of(dt));
	case OPTIREDUCE_FLOAT32:
		return gen_f32();
	case OPTIREDUCE_FLOAT64:
		return gen_f64();
	default:
		return gen_int(dt);
	}
}

/* ---- the reference reduction, element by element ---- */

#ifdef __SIZEOF_INT128__
typedef __int128 wide_t;
typedef unsigned __int128 uwide_t;
#else
typedef int64_t wide_t; /* no exact products then: models wrap-around only */
typedef uint64_t uwide_t;
#endif

static uint64_t ref_int(enum optireduce_dtype dt, enum optireduce_op op, uint64_t ra, uint64_t rb)
{
	int bits = bits_of(dt);
	uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
	uwide_t m;

	if (is_signed_int(dt)) {
		/* Sign-extend by hand. */
		wide_t a = (wide_t)ra, b = (wide_t)rb, r;
		wide_t span = (wide_t)mask + 1;

		if (ra >> (bits - 1))
			a -= span;
		if (rb >> (bits - 1))
			b -= span;
		switch (op) {
		case OPTIREDUCE_SUM:
		case OPTIREDUCE_AVG:
			r = a + b;
			break;
		case OPTIREDUCE_PROD:
			r = a * b;
			break;
		case OPTIREDUCE_MIN:
			r = a < b ? a : b;
			break;
		default:
			r = a > b ? a : b;
			break;
		}
		m = (uwide_t)r;
	} else {
		uwide_t a = ra, b = rb;

		switch (op) {
		case OPTIREDUCE_SUM:
		case OPTIREDUCE_AVG:
			m = a + b;
			break;
		case OPTIREDUCE_PROD:
			m = a * b;
			break;
		case OPTIREDUCE_MIN:
			m = a < b ? a : b;
			break;
		default:
			m = a > b ? a : b;
			break;
		}
	}
	return (uint64_t)m & mask;
}

/* Floating ops, evaluated in the dtype the same way the library promises. */
static uint64_t ref_float(enum optireduce_dtype dt, enum optireduce_op op, uint64_t ra, uint64_t rb)
{
	const struct fmt16 *f = fmt_of(dt);
	double a, b, r;

	if (f) {
		a = ref16_decode(f, (uint16_t)ra);
		b = ref16_decode(f, (uint16_t)rb);
	} else if (dt == OPTIREDUCE_FLOAT32) {
		a = bitsf((uint32_t)ra);
		b = bitsf((uint32_t)rb);
	} else {
		a = bitsd(ra);
		b = bitsd(rb);
	}
	if (op == OPTIREDUCE_MIN || op == OPTIREDUCE_MAX) {
		if (isnan(a) || isnan(b))
			return dt == OPTIREDUCE_FLOAT64 ? dbits(NAN) : f ? 0x7fff : fbits(NAN);
		if (op == OPTIREDUCE_MIN)
			return b < a ? rb : ra; /* ties, -0 vs +0 too, keep a */
		return b > a ? rb : ra;
	}
	if (dt == OPTIREDUCE_FLOAT64)
		r = op == OPTIREDUCE_PROD ? a * b : a + b;
	else /* float16/bfloat16 go through float: exact widening, float op */
		r = op == OPTIREDUCE_PROD ? (float)a * (float)b : (float)a + (float)b;
	if (f)
		return ref16_encode(f, r);
	if (dt == OPTIREDUCE_FLOAT32)
		return fbits((float)r);
	return dbits(r);
}

static uint64_t ref_op(enum optireduce_dtype dt, enum optireduce_op op, uint64_t a, uint64_t b)
{
	return is_float(dt) ? ref_float(dt, op, a, b) : ref_int(dt, op, a, b);
}

/* NaN results need only be NaN: which operand's payload survives is not promised. */
static int same(enum optireduce_dtype dt, uint64_t got, uint64_t want)
{
	if (raw_isnan(dt, want))
		return raw_isnan(dt, got);
	return got == want;
}

#define GUARD      8
#define GUARD_BYTE 0xa5

struct buf {
	unsigned char *mem;
	void *p; /* first element, after the front guard and the offset */
	size_t bytes;
};

static void buf_make(struct buf *b, size_t count, size_t off, enum optireduce_dtype dt)
{
	b->bytes = (count + off + 2 * GUARD) * dsize(dt);
	b->mem = malloc(b->bytes);
	if (!b->mem) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memset(b->mem, GUARD_BYTE, b->bytes);
	b->p = b->mem + (GUARD + off) * dsize(dt);
}

static int guards_ok(const struct buf *b, size_t count, enum optireduce_dtype dt)
{
	const unsigned char *start = b->p;
	const unsigned char *end = start + count * dsize(dt);

	for (const unsigned char *q = b->mem; q < start; q++)
		if (*q != GUARD_BYTE)
			return 0;
	for (const unsigned char *q = end; q < b->mem + b->bytes; q++)
		if (*q != GUARD_BYTE)
			return 0;
	return 1;
}

static void buf_copy(struct buf *dst, const struct buf *src, size_t count, enum optireduce_dtype dt)
{
	memcpy(dst->p, src->p, count * dsize(dt));
}

/* Compares a result buffer with want and reports the first bad elements. */
static void check_result(const char *what, enum optireduce_dtype dt, enum optireduce_op op,
                         size_t count, size_t off, const struct buf *got, const uint64_t *want,
                         const struct buf *a, const struct buf *b)
{
	int bad = 0;

	for (size_t i = 0; i < count; i++) {
		uint64_t g = get_raw(got->p, i, dt);

		if (!same(dt, g, want[i])) {
			CHECK(0,
			      "%s %s %s count %zu off %zu [%zu]: a 0x%llx b 0x%llx got 0x%llx "
			      "want 0x%llx",
			      what, dname(dt), oname(op), count, off, i,
			      (unsigned long long)get_raw(a->p, i, dt),
			      (unsigned long long)get_raw(b->p, i, dt), (unsigned long long)g,
			      (unsigned long long)want[i]);
			if (++bad >= 3)
				break;
		}
	}
	CHECK(guards_ok(got, count, dt), "%s %s %s count %zu: wrote outside the buffer", what,
	      dname(dt), oname(op), count);
}

static void test_one(enum optireduce_dtype dt, enum optireduce_op op, size_t count, size_t off)
{
	struct buf a, b, a0, b0, out;
	uint64_t *want = malloc((count + 1) * sizeof(*want));
	uint64_t *want_aa = malloc((count + 1) * sizeof(*want));
	size_t sz = dsize(dt);
	int rc;

	buf_make(&a, count, off, dt);
	buf_make(&b, count, off, dt);
	buf_make(&a0, count, off, dt);
	buf_make(&b0, count, off, dt);
	buf_make(&out, count, off, dt);
	for (size_t i = 0; i < count; i++) {
		set_raw(a0.p, i, dt, gen(dt));
		set_raw(b0.p, i, dt, gen(dt));
		want[i] = ref_op(dt, op, get_raw(a0.p, i, dt), get_raw(b0.p, i, dt));
		want_aa[i] = ref_op(dt, op, get_raw(a0.p, i, dt), get_raw(a0.p, i, dt));
	}

	/* or_reduce: inout = inout OP in */
	buf_copy(&a, &a0, count, dt);
	buf_copy(&b, &b0, count, dt);
	rc = or_reduce(a.p, b.p, count, dt, op);
	CHECK(rc == 0, "or_reduce %s %s returned %d", dname(dt), oname(op), rc);
	check_result("or_reduce", dt, op, count, off, &a, want, &a0, &b0);
	CHECK(memcmp(b.p, b0.p, count * sz) == 0, "or_reduce %s %s modified in", dname(dt),
	      oname(op));

	/* or_reduce3, three distinct buffers */
	buf_copy(&a, &a0, count, dt);
	memset(out.p, 0x5a, count * sz);
	rc = or_reduce3(out.p, a.p, b.p, count, dt, op);
	CHECK(rc == 0, "or_reduce3 %s %s returned %d", dname(dt), oname(op), rc);
	check_result("or_reduce3", dt, op, count, off, &out, want, &a0, &b0);
	CHECK(memcmp(a.p, a0.p, count * sz) == 0 && memcmp(b.p, b0.p, count * sz) == 0,
	      "or_reduce3 %s %s modified an input", dname(dt), oname(op));

	/* out == a */
	rc = or_reduce3(a.p, a.p, b.p, count, dt, op);
	CHECK(rc == 0, "or_reduce3(out=a) %s %s returned %d", dname(dt), oname(op), rc);
	check_result("or_reduce3(out=a)", dt, op, count, off, &a, want, &a0, &b0);

	/* out == b: operand order must still be a OP b */
	buf_copy(&a, &a0, count, dt);
	rc = or_reduce3(b.p, a.p, b.p, count, dt, op);
	CHECK(rc == 0, "or_reduce3(out=b) %s %s returned %d", dname(dt), oname(op), rc);
	check_result("or_reduce3(out=b)", dt, op, count, off, &b, want, &a0, &b0);

	/* a == b, distinct out */
	rc = or_reduce3(out.p, a.p, a.p, count, dt, op);
	CHECK(rc == 0, "or_reduce3(a=b) %s %s returned %d", dname(dt), oname(op), rc);
	check_result("or_reduce3(a=b)", dt, op, count, off, &out, want_aa, &a0, &a0);

	free(a.mem);
	free(b.mem);
	free(a0.mem);
	free(b0.mem);
	free(out.mem);
	free(want);
	free(want_aa);
}

static void test_reductions(void)
{
	static const size_t counts[] = {0, 1, 7, 16, 1000, 100003};

	for (int dt = 0; dt < OPTIREDUCE_DTYPE_COUNT; dt++)
		for (int op = 0; op < OPTIREDUCE_OP_COUNT; op++)
			for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
				for (size_t off = 0; off < 2; off++)
					test_one((enum optireduce_dtype)dt, (enum optireduce_op)op,
					         counts[c], off);

	/* count 0 must not touch the pointers at all */
	for (int dt = 0; dt < OPTIREDUCE_DTYPE_COUNT; dt++) {
		CHECK(or_reduce(NULL, NULL, 0, (enum optireduce_dtype)dt, OPTIREDUCE_SUM) == 0,
		      "or_reduce count 0 NULL %s", dname((enum optireduce_dtype)dt));
		CHECK(or_reduce3(NULL, NULL, NULL, 0, (enum optireduce_dtype)dt, OPTIREDUCE_MAX) ==
		          0,
		      "or_reduce3 count 0 NULL %s", dname((enum optireduce_dtype)dt));
	}
}

/* A few hand-picked cases, so the documented corners are pinned by name. */
static void test_corners(void)
{
	int32_t i32[2] = {INT32_MAX, INT32_MIN}, j32[2] = {1, -1};
	int8_t i8[2] = {-128, 127}, j8[2] = {-1, 127};
	float f[4] = {NAN, 1.0f, -0.0f, 0.0f}, g[4] = {1.0f, NAN, 0.0f, -0.0f};

	or_reduce(i32, j32, 2, OPTIREDUCE_INT32, OPTIREDUCE_SUM);
	CHECK(i32[0] == INT32_MIN && i32[1] == INT32_MAX, "int32 SUM wrap: %d %d", i32[0], i32[1]);
	or_reduce(i8, j8, 2, OPTIREDUCE_INT8, OPTIREDUCE_PROD);
	CHECK(i8[0] == -128 && i8[1] == 1, "int8 PROD wrap: %d %d", i8[0], i8[1]);
	or_reduce(f, g, 4, OPTIREDUCE_FLOAT32, OPTIREDUCE_MIN);
	CHECK(isnan(f[0]) && isnan(f[1]), "float MIN must propagate NaN from either side");
	CHECK(signbit(f[2]) && !signbit(f[3]), "float MIN tie must keep inout");
}

/* ---- divide, scale, conversions ---- */

static uint64_t ref_div(enum optireduce_dtype dt, uint64_t r, uint32_t n)
{
	const struct fmt16 *f = fmt_of(dt);
	int bits = bits_of(dt);
	uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;

	if (f)
		return ref16_encode(f, (float)ref16_decode(f, (uint16_t)r) / (float)n);
	if (dt == OPTIREDUCE_FLOAT32)
		return fbits(bitsf((uint32_t)r) / (float)n);
	if (dt == OPTIREDUCE_FLOAT64)
		return dbits(bitsd(r) / (double)n);
	if (is_signed_int(dt) && (r >> (bits - 1))) {
		/* Negative: divide the magnitude, so truncation is toward zero by construction. */
		uint64_t mag = (~r + 1) & mask;
		return (~(mag / n) + 1) & mask;
	}
	return (r / n) & mask;
}

static uint64_t ref_scale(enum optireduce_dtype dt, uint64_t r, double k)
{
	const struct fmt16 *f = fmt_of(dt);

	if (f)
		return ref16_encode(f, (float)ref16_decode(f, (uint16_t)r) * (float)k);
	if (dt == OPTIREDUCE_FLOAT32)
		return fbits((float)((double)bitsf((uint32_t)r) * k));
	return dbits(bitsd(r) * k);
}

static void test_divide_scale(void)
{
	static const uint32_t ns[] = {1, 2, 3, 7, 255, 65537, UINT32_MAX};
	static const double ks[] = {0.5, 3.0, -1.25, 1e-3, 1e10, 0.0, 1.0 / 3, 65536.0};
	const size_t count = 1003;

	for (int d = 0; d < OPTIREDUCE_DTYPE_COUNT; d++) {
		enum optireduce_dtype dt = (enum optireduce_dtype)d;
		struct buf b, b0;
		int rc;

		buf_make(&b, count, 1, dt);
		buf_make(&b0, count, 1, dt);
		for (size_t i = 0; i < count; i++)
			set_raw(b0.p, i, dt, gen(dt));

		for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
			int bad = 0;

			buf_copy(&b, &b0, count, dt);
			rc = or_reduce_divide(b.p, count, dt, ns[j]);
			CHECK(rc == 0, "divide %s by %u returned %d", dname(dt), ns[j], rc);
			for (size_t i = 0; i < count && bad < 3; i++) {
				uint64_t x = get_raw(b0.p, i, dt), g = get_raw(b.p, i, dt);
				uint64_t w = ref_div(dt, x, ns[j]);

				if (!same(dt, g, w)) {
					bad++;
					CHECK(0, "divide %s 0x%llx by %u: got 0x%llx want 0x%llx",
					      dname(dt), (unsigned long long)x, ns[j],
					      (unsigned long long)g, (unsigned long long)w);
				}
			}
			CHECK(guards_ok(&b, count, dt), "divide %s wrote outside", dname(dt));
		}
		buf_copy(&b, &b0, count, dt);
		rc = or_reduce_divide(b.p, count, dt, 0);
		CHECK(rc == -OPTIREDUCE_EINVAL && memcmp(b.p, b0.p, count * dsize(dt)) == 0,
		      "divide %s by 0: rc %d, want -EINVAL and nothing touched", dname(dt), rc);

		for (size_t j = 0; j < sizeof(ks) / sizeof(ks[0]); j++) {
			int bad = 0;

			buf_copy(&b, &b0, count, dt);
			rc = or_reduce_scale(b.p, count, dt, ks[j]);
			if (!is_float(dt)) {
				CHECK(rc == -OPTIREDUCE_EDTYPE &&
				          memcmp(b.p, b0.p, count * dsize(dt)) == 0,
				      "scale %s: rc %d, want -EDTYPE and nothing touched",
				      dname(dt), rc);
				continue;
			}
			CHECK(rc == 0, "scale %s returned %d", dname(dt), rc);
			for (size_t i = 0; i < count && bad < 3; i++) {
				uint64_t x = get_raw(b0.p, i, dt), g = get_raw(b.p, i, dt);
				uint64_t w = ref_scale(dt, x, ks[j]);

				if (!same(dt, g, w)) {
					bad++;
					CHECK(0, "scale %s 0x%llx by %g: got 0x%llx want 0x%llx",
					      dname(dt), (unsigned long long)x, ks[j],
					      (unsigned long long)g, (unsigned long long)w);
				}
			}
			CHECK(guards_ok(&b, count, dt), "scale %s wrote outside", dname(dt));
		}
		free(b.mem);
		free(b0.mem);
	}
}

static void test_conversions(void)
{
	const size_t count = 4099;
	float *fl = malloc(count * sizeof(float)), *fl0 = malloc(count * sizeof(float));

	for (int d = 0; d < OPTIREDUCE_DTYPE_COUNT; d++) {
		enum optireduce_dtype dt = (enum optireduce_dtype)d;
		const struct fmt16 *f = fmt_of(dt);
		struct buf b, b0;
		int rc;

		buf_make(&b, count, 0, dt);
		buf_make(&b0, count, 0, dt);
		for (size_t i = 0; i < count; i++) {
			set_raw(b0.p, i, dt, gen(dt));
			fl0[i] = bitsf((uint32_t)gen_f32());
		}

		if (!is_float(dt)) {
			memcpy(fl, fl0, count * sizeof(float));
			memcpy(b.p, b0.p, count * dsize(dt));
			CHECK(or_to_float(fl, b.p, count, dt) == -OPTIREDUCE_EDTYPE &&
			          memcmp(fl, fl0, count * sizeof(float)) == 0,
			      "or_to_float %s must fail untouched", dname(dt));
			CHECK(or_from_float(b.p, fl, count, dt) == -OPTIREDUCE_EDTYPE &&
			          memcmp(b.p, b0.p, count * dsize(dt)) == 0,
			      "or_from_float %s must fail untouched", dname(dt));
			free(b.mem);
			free(b0.mem);
			continue;
		}

		rc = or_to_float(fl, b0.p, count, dt);
		CHECK(rc == 0, "or_to_float %s rc %d", dname(dt), rc);
		for (size_t i = 0; i < count; i++) {
			uint64_t x = get_raw(b0.p, i, dt);
			double want = f                          ? ref16_decode(f, (uint16_t)x)
			              : dt == OPTIREDUCE_FLOAT32 ? bitsf((uint32_t)x)
			                                         : (float)bitsd(x);

			CHECK(isnan(want) ? isnan(fl[i]) : fbits(fl[i]) == fbits((float)want),
			      "or_to_float %s [%zu] 0x%llx", dname(dt), i, (unsigned long long)x);
		}
		rc = or_from_float(b.p, fl0, count, dt);
		CHECK(rc == 0, "or_from_float %s rc %d", dname(dt), rc);
		for (size_t i = 0; i < count; i++) {
			uint64_t g = get_raw(b.p, i, dt);

			if (f)
				check_narrow(f, fl0[i], (uint16_t)g, "or_from_float");
			else if (dt == OPTIREDUCE_FLOAT32)
				CHECK(g == fbits(fl0[i]), "or_from_float float32 [%zu]", i);
			else
				CHECK(isnan(fl0[i]) ? isnan(bitsd(g)) : g == dbits((double)fl0[i]),
				      "or_from_float float64 [%zu]", i);
		}
		CHECK(guards_ok(&b, count, dt), "or_from_float %s wrote outside", dname(dt));

		free(b.mem);
		free(b0.mem);
	}
	free(fl);
	free(fl0);
}

/* ---- bad arguments: the right code, and nothing written ---- */

static void test_errors(void)
{
	static const int bad_dt[] = {OPTIREDUCE_DTYPE_COUNT, 100, -1};
	static const int bad_op[] = {OPTIREDUCE_OP_COUNT, 77, -1};
	_Alignas(16) unsigned char a[64], b[64], out[64];
	unsigned char a0[64], b0[64], out0[64];
	int rc;

	for (size_t i = 0; i < sizeof(a); i++) {
		a0[i] = (unsigned char)rnd();
		b0[i] = (unsigned char)rnd();
		out0[i] = (unsigned char)rnd();
	}
#define RESET()                                                                                    \
	do {                                                                                       \
		memcpy(a, a0, sizeof(a));                                                          \
		memcpy(b, b0, sizeof(b));                                                          \
		memcpy(out, out0, sizeof(out));                                                    \
	} while (0)
#define UNTOUCHED()                                                                                \
	(memcmp(a, a0, sizeof(a)) == 0 && memcmp(b, b0, sizeof(b)) == 0 &&                         \
	 memcmp(out, out0, sizeof(out)) == 0)

	for (size_t i = 0; i < 3; i++) {
		enum optireduce_dtype dt = (enum optireduce_dtype)bad_dt[i];
		enum optireduce_op op = (enum optireduce_op)bad_op[i];

		for (int v = 0; v < OPTIREDUCE_OP_COUNT; v++) {
			RESET();
			rc = or_reduce(a, b, 4, dt, (enum optireduce_op)v);
			CHECK(rc == -OPTIREDUCE_EDTYPE && UNTOUCHED(),
			      "or_reduce dtype %d: rc %d, want -EDTYPE untouched", bad_dt[i], rc);
			rc = or_reduce3(out, a, b, 4, dt, (enum optireduce_op)v);
			CHECK(rc == -OPTIREDUCE_EDTYPE && UNTOUCHED(),
			      "or_reduce3 dtype %d: rc %d, want -EDTYPE untouched", bad_dt[i], rc);
		}
		for (int v = 0; v < OPTIREDUCE_DTYPE_COUNT; v++) {
			RESET();
			rc = or_reduce(a, b, 4, (enum optireduce_dtype)v, op);
			CHECK(rc == -OPTIREDUCE_EOP && UNTOUCHED(),
			      "or_reduce op %d: rc %d, want -EOP untouched", bad_op[i], rc);
			rc = or_reduce3(out, a, b, 4, (enum optireduce_dtype)v, op);
			CHECK(rc == -OPTIREDUCE_EOP && UNTOUCHED(),
			      "or_reduce3 op %d: rc %d, want -EOP untouched", bad_op[i], rc);
			rc = or_reduce3(a, a, b, 4, (enum optireduce_dtype)v, op);
			CHECK(rc == -OPTIREDUCE_EOP && UNTOUCHED(),
			      "or_reduce3(out=a) op %d: rc %d, want -EOP untouched", bad_op[i], rc);
		}
		/* Both bad: the dtype is reported, as it is checked first. */
		RESET();
		rc = or_reduce(a, b, 4, dt, op);
		CHECK(rc == -OPTIREDUCE_EDTYPE && UNTOUCHED(), "or_reduce both bad: rc %d", rc);
		rc = or_reduce_divide(a, 4, dt, 3);
		CHECK(rc == -OPTIREDUCE_EDTYPE && UNTOUCHED(), "divide dtype %d: rc %d", bad_dt[i],
		      rc);
		rc = or_reduce_scale(a, 4, dt, 2.0);
		CHECK(rc == -OPTIREDUCE_EDTYPE && UNTOUCHED(), "scale dtype %d: rc %d", bad_dt[i],
		      rc);
		rc = or_to_float((float *)(void *)out, a, 4, dt);
		CHECK(rc == -OPTIREDUCE_EDTYPE && UNTOUCHED(), "to_float dtype %d: rc %d",
		      bad_dt[i], rc);
		rc = or_from_float(out, (const float *)(const void *)a, 4, dt);
		CHECK(rc == -OPTIREDUCE_EDTYPE && UNTOUCHED(), "from_float dtype %d: rc %d",
		      bad_dt[i], rc);
	}
#undef RESET
#undef UNTOUCHED
}

int main(void)
{
	test_exhaustive16(&F16);
	test_exhaustive16(&BF16);
	test_narrowing(&F16);
	test_narrowing(&BF16);
	test_corners();
	test_reductions();
	test_divide_scale();
	test_conversions();
	test_errors();

	if (failures) {
		printf("test_reduce: %lu of %lu checks failed\n", failures, checks);
		return 1;
	}
	printf("test_reduce: all %lu checks passed\n", checks);
	return 0;
}
