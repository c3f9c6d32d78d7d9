/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gloo_bench: Gloo's allreduce algorithms (ring, ring-chunked, halving-doubling,
 * bcube) timed the way optireduce_bench times liboptireduce, so bench/compare.sh
 * can put them side by side.  Built only when configure finds Debian's libgloo-dev.
 * Gloo's "ring" passes the whole buffer around the ring; "ring-chunked" is its
 * bandwidth-optimal ring (reduce-scatter + allgather in chunks), like ours.
 *
 * Launched by mpirun.  MPI is used for rank and size, the barrier before each
 * iteration, gathering the timings, and the rendezvous (MpiContext below exchanges
 * the pairs' addresses with MPI_Alltoall, so no shared file system or Redis is
 * needed).  The data path is Gloo's own tcp device, bound to --iface (or
 * GLOO_SOCKET_IFNAME, as PyTorch names it).
 *
 * Same flags as optireduce_bench where they make sense (-m, -i, -x, --iter-large,
 * --warmup-large, -f, --csv) and the same output: the "# Size  Avg Latency(us) ..."
 * table and a CSV "impl,size,iter,latency_us" with one row per timed iteration,
 * latency = MAX over ranks (completion time).  float32 SUM only: that is what the
 * comparison measures.
 */
#define OMPI_SKIP_MPICXX  1 /* the C API is enough; the C++ bindings are deprecated */
#define MPICH_SKIP_MPICXX 1

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <getopt.h>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/common/error.h>
#include <gloo/config.h>
#include <gloo/context.h>
#include <gloo/transport/address.h>
#include <gloo/transport/context.h>
#include <gloo/transport/tcp/device.h>

#include "bench_util.h"

namespace
{

enum algo { ALG_RING, ALG_RING_CHUNKED, ALG_HD, ALG_BCUBE, ALG_COUNT };
/* CSV and table names; "gloo_" keeps them apart from optireduce_bench's in one file. */
const char *const algo_name[ALG_COUNT] = {"gloo_ring", "gloo_ring_chunked", "gloo_halving_doubling",
                                          "gloo_bcube"};
const char *const algo_flag[ALG_COUNT] = {"ring", "ring-chunked", "halving-doubling", "bcube"};

struct options {
	bench_counts n; /* sizes, counts, -f */
	bool algos[ALG_COUNT] = {true, true, true, true};
	std::string iface, hostname, csv;
	int bcube_base = 0; /* 0: smallest factor of the rank count */
	long timeout_s = 300;
};

int rank, nranks;
bench_progress prog;

[[noreturn]] void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gloo_bench: rank %d: ", rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

[[noreturn]] void usage_error(const char *fmt, ...)
{
	va_list ap;

	if (rank == 0) {
		fprintf(stderr, "gloo_bench: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fprintf(stderr, " (-h for help)\n");
	}
	MPI_Finalize();
	exit(1);
}

void usage(void)
{
	if (rank != 0)
		return;
	printf("usage: gloo_bench [options]   (launch with mpirun)\n");
	bench_counts_usage(stdout);
	printf(
	    "  -d, --type float           the only datatype (accepted for compatibility)\n"
	    "  -o, --op sum               the only operation (accepted for compatibility)\n"
	    "      --algorithm LIST       comma-separated: ring, ring-chunked, halving-doubling, "
	    "bcube, all "
	    "(default all)\n"
	    "      --iface NAME           interface for Gloo's tcp device (default: "
	    "GLOO_SOCKET_IFNAME,\n"
	    "                             else the address --hostname or the host name "
	    "resolves to)\n"
	    "      --hostname NAME        bind to the address NAME resolves to\n"
	    "      --bcube-base B         bcube group size; must divide the rank count "
	    "(default: its\n"
	    "                             smallest factor > 1)\n"
	    "      --timeout S            Gloo's operation timeout in seconds (default 300)\n"
	    "      --csv FILE             every iteration's latency: impl,size,iter,latency_us\n"
	    "  -h, --help                 this text\n");
}

long parse_count(const char *s, const char *what, long min)
{
	long v;

	if (bench_parse_count(s, min, &v))
		usage_error("bad %s '%s'", what, s);
	return v;
}

void parse_algorithms(const char *list, options *o)
{
	std::string s(list);
	size_t pos = 0;

	std::fill(o->algos, o->algos + ALG_COUNT, false);
	while (pos <= s.size()) {
		size_t comma = s.find(',', pos);
		std::string name =
		    s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
		int k;
		if (name == "all") {
			std::fill(o->algos, o->algos + ALG_COUNT, true);
		} else {
			for (k = 0; k < ALG_COUNT; k++)
				if (name == algo_flag[k] || name == algo_name[k] ||
				    (k == ALG_HD && name == "hd"))
					break;
			if (k == ALG_COUNT)
				usage_error("unknown algorithm '%s' (ring, ring-chunked, "
				            "halving-doubling, bcube, "
				            "all)",
				            name.c_str());
			o->algos[k] = true;
		}
		if (comma == std::string::npos)
			break;
		pos = comma + 1;
	}
}

void parse_args(int argc, char **argv, options *o)
{
	enum { O_ALG = 256, O_IFACE, O_HOSTNAME, O_BASE, O_TIMEOUT, O_CSV };
	static const struct option longs[] = {
	    BENCH_COUNT_LONG_OPTIONS,
	    {"type", required_argument, NULL, 'd'},
	    {"op", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {"algorithm", required_argument, NULL, O_ALG},
	    {"iface", required_argument, NULL, O_IFACE},
	    {"hostname", required_argument, NULL, O_HOSTNAME},
	    {"bcube-base", required_argument, NULL, O_BASE},
	    {"timeout", required_argument, NULL, O_TIMEOUT},
	    {"csv", required_argument, NULL, O_CSV},
	    {NULL, 0, NULL, 0},
	};
	char err[160];
	int c;

	bench_counts_init(&o->n);
	opterr = 0;
	while ((c = getopt_long(argc, argv, BENCH_COUNT_SHORT_OPTIONS "d:o:h", longs, NULL)) !=
	       -1) {
		int taken = bench_counts_option(&o->n, c, optarg, err, sizeof(err));

		if (taken < 0)
			usage_error("%s", err);
		if (taken)
			continue;
		switch (c) {
		case 'd':
			if (strcasecmp(optarg, "float") && strcasecmp(optarg, "float32"))
				usage_error("only float32 is measured, not '%s'", optarg);
			break;
		case 'o':
			if (strcasecmp(optarg, "sum"))
				usage_error("only sum is measured, not '%s'", optarg);
			break;
		case O_ALG:
			parse_algorithms(optarg, o);
			break;
		case O_IFACE:
			o->iface = optarg;
			break;
		case O_HOSTNAME:
			o->hostname = optarg;
			break;
		case O_BASE:
			o->bcube_base = (int)parse_count(optarg, "bcube base", 2);
			break;
		case O_TIMEOUT:
			o->timeout_s = parse_count(optarg, "timeout", 1);
			break;
		case O_CSV:
			o->csv = optarg;
			break;
		case 'h':
			usage();
			MPI_Finalize();
			exit(0);
		default:
			if (optopt)
				usage_error("bad or incomplete option '-%c'", optopt);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (bench_counts_finish(&o->n, err, sizeof(err)))
		usage_error("%s", err);
	if (o->iface.empty() && o->hostname.empty() && getenv("GLOO_SOCKET_IFNAME"))
		o->iface = getenv("GLOO_SOCKET_IFNAME");
}

/*
 * A Gloo context whose rendezvous is an MPI_Alltoall of pair addresses.  Gloo's own
 * connectFullMesh() goes through a rendezvous::Store, whose access pattern (which
 * rank reads which key when) is not part of its interface; exchanging the addresses
 * directly needs neither a shared file system nor Redis, and cannot get out of step.
 */
class MpiContext : public gloo::Context
{
      public:
	MpiContext(int r, int n, int b) : gloo::Context(r, n, b)
	{
	}

	void connect(const std::shared_ptr<gloo::transport::Device> &dev)
	{
		/* Per peer one fixed-size block: a length, then the address bytes. */
		const size_t block = sizeof(uint32_t) + gloo::transport::Address::kMaxByteSize;
		std::vector<char> out(block * (size_t)size), in(block * (size_t)size);
		auto tc = dev->createContext(rank, size);

		tc->setTimeout(getTimeout());
		for (int i = 0; i < size; i++) {
			if (i == rank)
				continue;
			std::vector<char> addr = tc->createPair(i)->address().bytes();
			if (addr.size() > gloo::transport::Address::kMaxByteSize)
				die("Gloo address of %zu bytes is too long", addr.size());
			uint32_t len = (uint32_t)addr.size();
			memcpy(&out[block * (size_t)i], &len, sizeof(len));
			memcpy(&out[block * (size_t)i + sizeof(len)], addr.data(), addr.size());
		}
		if (MPI_Alltoall(out.data(), (int)block, MPI_CHAR, in.data(), (int)block, MPI_CHAR,
		                 MPI_COMM_WORLD) != MPI_SUCCESS)
			die("MPI_Alltoall of Gloo addresses failed");
		/* Same order on every rank, as connectFullMesh(). */
		for (int i = 0; i < size; i++) {
			if (i == rank)
				continue;
			uint32_t len;
			memcpy(&len, &in[block * (size_t)i], sizeof(len));
			if (len == 0 || len > gloo::transport::Address::kMaxByteSize)
				die("rank %d sent a Gloo address of %u bytes", i, len);
			const char *p = &in[block * (size_t)i + sizeof(len)];
			tc->getPair(i)->connect(std::vector<char>(p, p + len));
		}
		device_ = dev;
		transportContext_ = std::move(tc);
	}
};

/* Known inputs as in optireduce_bench: sums are small integers, exact in float32. */
float input(int r, size_t i)
{
	return (float)((i + (size_t)r * 3) % 4);
}

float expected(size_t i)
{
	float acc = 0;
	for (int r = 0; r < nranks; r++)
		acc += input(r, i);
	return acc;
}

void progress(int alg, size_t size, long it, long total)
{
	if (rank == 0)
		bench_progress_note(&prog, algo_name[alg], size, it, total);
}

std::unique_ptr<gloo::Algorithm> make_algorithm(int alg, const std::shared_ptr<gloo::Context> &ctx,
                                                float *buf, int count)
{
	std::vector<float *> ptrs{buf};

	switch (alg) {
	case ALG_RING:
		return std::unique_ptr<gloo::Algorithm>(
		    new gloo::AllreduceRing<float>(ctx, ptrs, count));
	case ALG_RING_CHUNKED:
		return std::unique_ptr<gloo::Algorithm>(
		    new gloo::AllreduceRingChunked<float>(ctx, ptrs, count));
	case ALG_HD:
		return std::unique_ptr<gloo::Algorithm>(
		    new gloo::AllreduceHalvingDoubling<float>(ctx, ptrs, count));
	default:
		return std::unique_ptr<gloo::Algorithm>(
		    new gloo::AllreduceBcube<float>(ctx, ptrs, count));
	}
}

/*
 * Times one algorithm at one size; rank 0 gets the statistics.  Gloo reduces in
 * place, so the inputs are restored before every iteration (not timed), and the
 * algorithm object is built once per size, as an application would.
 */
void run_size(const options &o, const std::shared_ptr<gloo::Context> &ctx, int alg, size_t size,
              const std::vector<float> &in, std::vector<float> &buf, FILE *csv, bench_stats *res)
{
	size_t count = size / sizeof(float);
	long iters = bench_iters_at(&o.n, size);
	long warmup = bench_warmup_at(&o.n, size);
	std::vector<double> lat((size_t)iters), maxlat((size_t)iters);
	std::unique_ptr<gloo::Algorithm> a;
	int bad = 0, anybad = 0;

	try {
		a = make_algorithm(alg, ctx, buf.data(), (int)count);
		for (long it = 0; it < warmup + iters; it++) {
			std::copy(in.begin(), in.begin() + (long)count, buf.begin());
			if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
				die("MPI_Barrier failed");
			double t0 = bench_now_s();
			a->run();
			double t1 = bench_now_s();
			if (it >= warmup)
				lat[(size_t)(it - warmup)] = (t1 - t0) * 1e6;
			progress(alg, size, it + 1, warmup + iters);
		}
	} catch (const std::exception &e) {
		die("%s at %zu bytes: %s", algo_name[alg], size, e.what());
	}
	a.reset();

	for (size_t i = 0; i < count; i++)
		if (buf[i] != expected(i)) {
			fprintf(stderr,
			        "gloo_bench: rank %d: %s: wrong result at element %zu of %zu: "
			        "%g, expected %g\n",
			        rank, algo_name[alg], i, count, (double)buf[i],
			        (double)expected(i));
			bad = 1;
			break;
		}
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (anybad) {
		if (rank == 0)
			fprintf(stderr,
			        "gloo_bench: %s: result at %zu bytes is wrong; not reporting\n",
			        algo_name[alg], size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	MPI_Reduce(lat.data(), maxlat.data(), (int)iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank != 0)
		return;
	if (csv) {
		for (long it = 0; it < iters; it++)
			bench_csv_row(csv, algo_name[alg], size, it, maxlat[(size_t)it], NULL);
		fflush(csv);
	}
	bench_stats_of(maxlat.data(), iters, res);
}

int smallest_factor(int n)
{
	for (int f = 2; f * f <= n; f++)
		if (n % f == 0)
			return f;
	return n;
}

} // namespace

/* Gloo's TCP device and a full mesh of pairs, bootstrapped through MPI. */
static std::shared_ptr<MpiContext> connect_context(const options &o, int base)
{
	std::shared_ptr<MpiContext> ctx;

	try {
		gloo::transport::tcp::attr attr;
		if (!o.hostname.empty())
			attr.hostname = o.hostname;
		if (!o.iface.empty())
			attr.iface = o.iface;
		auto dev = gloo::transport::tcp::CreateDevice(attr);
		ctx = std::make_shared<MpiContext>(rank, nranks, base);
		ctx->setTimeout(std::chrono::seconds(o.timeout_s));
		ctx->connect(dev);
	} catch (const std::exception &e) {
		die("Gloo setup (iface '%s', hostname '%s'): %s", o.iface.c_str(),
		    o.hostname.c_str(), e.what());
	}
	return ctx;
}

static void print_header(const options &o, int alg, int base)
{
	printf("# Gloo %d.%d.%d %s allreduce (tcp device%s%s), bcube base %d\n", GLOO_VERSION_MAJOR,
	       GLOO_VERSION_MINOR, GLOO_VERSION_PATCH, algo_name[alg],
	       o.iface.empty() ? "" : ", iface ", o.iface.c_str(), base);
	printf("# Ranks: %d, dtype float32, op sum\n", nranks);
	printf("# Latency of an iteration = time until the slowest rank returned "
	       "(MAX over ranks);\n"
	       "# MPI_Barrier before each iteration, not timed. Avg = mean over "
	       "iterations; P50/P99 = nearest-rank percentiles.\n");
	bench_print_loadavg("at start");
	bench_print_table_head(o.n.full);
	printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	options o;
	FILE *csv = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	bench_progress_init(&prog);
	parse_args(argc, argv, &o);

	/* Bcube needs the rank count to be a multiple of its base. */
	int base = o.bcube_base ? o.bcube_base : (nranks > 1 ? smallest_factor(nranks) : 2);
	if (o.algos[ALG_BCUBE] && nranks > 1 && nranks % base != 0)
		usage_error("--bcube-base %d does not divide %d ranks", base, nranks);

	size_t min = o.n.min_size < sizeof(float) ? sizeof(float) : o.n.min_size;
	size_t maxcount = o.n.max_size / sizeof(float);
	if (maxcount == 0)
		usage_error("-m: MAX %zu is smaller than one float", o.n.max_size);
	if (maxcount > (size_t)INT32_MAX)
		usage_error("-m: MAX %zu: too many elements for Gloo's int count", o.n.max_size);

	std::shared_ptr<MpiContext> ctx = connect_context(o, base);

	std::vector<float> in(maxcount), buf(maxcount);
	for (size_t i = 0; i < maxcount; i++)
		in[i] = input(rank, i);

	if (rank == 0 && !o.csv.empty()) {
		csv = fopen(o.csv.c_str(), "w");
		if (!csv)
			die("cannot write %s: %s", o.csv.c_str(), strerror(errno));
		fprintf(csv, "impl,size,iter,latency_us\n");
	}
	for (int alg = 0; alg < ALG_COUNT; alg++) {
		if (!o.algos[alg])
			continue;
		if (rank == 0)
			print_header(o, alg, base);
		for (size_t size = min; size <= o.n.max_size; size *= 2) {
			bench_stats r{};
			run_size(o, ctx, alg, size, in, buf, csv, &r);
			if (rank == 0) {
				bench_print_row(NULL, size, &r, o.n.full);
				printf("\n");
				fflush(stdout);
			}
			if (size > SIZE_MAX / 2)
				break;
		}
	}
	if (rank == 0) {
		bench_print_loadavg("at end");
		fflush(stdout);
	}
	if (csv)
		fclose(csv);
	/* Pairs close when the context goes; everyone does it after the last collective. */
	MPI_Barrier(MPI_COMM_WORLD);
	ctx.reset();
	MPI_Finalize();
	return 0;
}
