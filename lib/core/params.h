/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parameters: one table, X(ID, name, type, default, min, max, description).
 * Value precedence: API beats environment (OPTIREDUCE_<NAME>) beats default.
 */
#ifndef OR_PARAMS_H
#define OR_PARAMS_H

#include <stdint.h>

#include "optireduce.h"

enum or_param_type { OR_PT_INT, OR_PT_SIZE, OR_PT_BOOL, OR_PT_DOUBLE, OR_PT_STRING, OR_PT_ENUM };

/* For OR_PT_ENUM the allowed values are the '|'-separated words of min. */
#define OR_PARAM_TABLE(X)                                                                          \
	X(MODE, "mode", OR_PT_ENUM, "exact", "exact|bounded", "",                                  \
	  "Default mode of new communicators: exact (reliable transport, result as "               \
	  "MPI_Allreduce) or bounded (deadline-bounded over datagrams, lost data estimated)")      \
	X(ALGORITHM, "algorithm", OR_PT_STRING, "auto", "", "",                                    \
	  "Algorithm name, or a tune string of byte ranges like "                                  \
	  "\"0-16k:recursive_doubling,16k-inf:ring\" (both modes, before tune_exact and "          \
	  "tune_bounded); auto chooses by mode and size")                                          \
	X(TUNE_EXACT, "tune_exact", OR_PT_STRING, "auto", "", "",                                  \
	  "Exact mode: byte ranges and their algorithms, like \"0-64k:tree,64k-inf:ring\" "        \
	  "([lo, hi), first match wins); sizes no range holds, and auto, take the built-in "       \
	  "rule (optireduce_info prints the rule in force)")                                       \
	X(TUNE_BOUNDED, "tune_bounded", OR_PT_STRING, "auto", "", "",                              \
	  "Bounded mode: the same, naming algorithms that run bounded (ring, transpose, tree)")    \
	X(MEASURE_EXACT, "measure_exact", OR_PT_STRING, "none", "", "",                            \
	  "Exact mode, after algorithm and tune_exact: byte ranges whose sizes are served by "     \
	  "the fastest of the listed algorithms, measured, e.g. "                                  \
	  "\"4097-16385:recursive_doubling|rabenseifner\": per power-of-two size class the "       \
	  "first measure_calls calls per algorithm try each in turn, then the ranks agree on the " \
	  "least median time; none = the built-in rule alone")                                     \
	X(MEASURE_CALLS, "measure_calls", OR_PT_INT, "16", "1", "64",                               \
	  "Exact mode, measure_exact: calls per algorithm and size class tried before choosing")   \
	X(SMALL_MSG_THRESHOLD, "small_msg_threshold", OR_PT_SIZE, "4k", "0", "1g",                 \
	  "Exact mode, algorithm auto: messages of at most this many bytes use recursive "         \
	  "doubling; 0 = never")                                                                   \
	X(MEDIUM_MSG_THRESHOLD, "medium_msg_threshold", OR_PT_SIZE, "32k", "0", "1g",              \
	  "Exact mode, algorithm auto: larger messages up to this many bytes use Rabenseifner's "  \
	  "algorithm, larger ones ring; at most small_msg_threshold = never")                      \
	X(PROVIDER, "provider", OR_PT_STRING, "", "", "",                                          \
	  "libfabric provider of the exact (RDM) channel; empty = automatic "                      \
	  "(net, else tcp;ofi_rxm; shm only when named)")                                          \
	X(BOUNDED_TRANSPORT, "bounded_transport", OR_PT_ENUM, "auto", "auto|kernel|libfabric", "",  \
	  "Datagram transport of the bounded channel: kernel (UDP sockets with segmentation "      \
	  "offload, batched calls and coalesced receives), libfabric (a DGRAM provider), or "      \
	  "auto: libfabric when bounded_provider names one, emulate_dgram_modes is on or a "       \
	  "device has a datagram provider of its own (EFA, verbs), else kernel")                   \
	X(BOUNDED_PROVIDER, "bounded_provider", OR_PT_STRING, "", "", "",                          \
	  "libfabric provider of the bounded (DGRAM) channel, e.g. udp; empty = automatic. "       \
	  "Providers that need a message prefix (FI_MSG_PREFIX) or registered buffers "            \
	  "(FI_MR_LOCAL), as EFA and verbs do, are served")                                        \
	X(UDP_FLOWS, "udp_flows", OR_PT_INT, "1", "1", "16",                                        \
	  "Kernel transport: sockets (source and destination ports) per rank; a peer's runs of "   \
	  "datagrams take them in turn, for clouds that cap the rate of one flow")                  \
	X(UDP_GSO, "udp_gso", OR_PT_BOOL, "1", "", "",                                              \
	  "Kernel transport: hand the kernel each peer's run of datagrams as one segmented send "  \
	  "(UDP_SEGMENT); 0 = one datagram per message, still batched with sendmmsg. Turned off "  \
	  "by itself where the kernel or device refuses it")                                       \
	X(UDP_GRO, "udp_gro", OR_PT_BOOL, "1", "", "",                                              \
	  "Kernel transport: let the kernel coalesce datagrams of one sender into one receive "    \
	  "(UDP_GRO), split again by the segment size it reports")                                 \
	X(UDP_MTU, "udp_mtu", OR_PT_SIZE, "0", "0", "65535",                                        \
	  "Kernel transport: the largest IP packet a datagram makes; 0 = the interface's MTU "     \
	  "(9001 on AWS, 8896 on GCP); never above it")                                             \
	X(IFACE, "iface", OR_PT_STRING, "", "", "",                                                \
	  "Network devices of both channels, as libfabric domain names, comma-separated, in "      \
	  "order: interfaces for tcp and udp (eth1), devices for RDMA providers (mlx5_0); "        \
	  "only these are used.  Empty = among the provider's domains, the one nearest this "      \
	  "rank's CPUs (hwloc), else libfabric's order")                                           \
	X(EMULATE_DGRAM_MODES, "emulate_dgram_modes", OR_PT_BOOL, "0", "", "",                     \
	  "Bounded mode, for testing: give every datagram a 40-byte message prefix and register "  \
	  "the buffers, as providers with FI_MSG_PREFIX and FI_MR_LOCAL need, even when the "      \
	  "provider needs neither (on udp the prefix travels in every datagram)")                  \
	X(HIERARCHY, "hierarchy", OR_PT_BOOL, "1", "", "",                                         \
	  "Ranks that share a host reduce through shared memory and one leader per host "          \
	  "runs the network step; 0 = every rank on the network, as if each had its own host")     \
	X(HOST_ID, "host_id", OR_PT_STRING, "", "", "",                                            \
	  "Which ranks share a host: ranks with the same non-empty value do, whatever the "        \
	  "machine; empty = hostname and network namespace")                                       \
	X(SHM_CHUNK, "shm_chunk", OR_PT_SIZE, "4m", "4k", "1g",                                    \
	  "Shared-memory step: bytes per chunk and per slot; the host's segment holds "            \
	  "(local ranks + 1) chunks, and larger operations go chunk by chunk")                     \
	X(SEGMENT_SIZE, "segment_size", OR_PT_SIZE, "512k", "4k", "1g",                            \
	  "Pipeline segment of the exact channel, bytes (capped by the provider's "                \
	  "max_msg_size)")                                                                         \
	X(PEER_TIMEOUT_MS, "peer_timeout_ms", OR_PT_INT, "60000", "1", "86400000",                 \
	  "Exact mode: fail with ETIMEDOUT when no peer makes progress for this long. Bounded "    \
	  "mode: fail with EPEER when a peer sent nothing for this long of the time spent in "     \
	  "operations that expect data from it (a dead peer; the others are told at once), or "    \
	  "every datagram to a peer failed to be sent for this long (until then a send the host "  \
	  "refuses is a loss, counted in packets_send_failed)")                                    \
	X(MAX_INFLIGHT, "max_inflight", OR_PT_INT, "4", "1", "32",                                 \
	  "Operations of one communicator that progress at once, in either mode; later ones "      \
	  "start, in order, as earlier ones finish (in any order).  1 = one at a time: each "      \
	  "waits for the previous one's last phase.  Every rank must use the same value: over "    \
	  "net, ranks that differ stall until peer_timeout_ms and fail")                           \
	X(CHECK_SOURCE, "check_source", OR_PT_BOOL, "1", "", "",                                   \
	  "Bounded mode: drop datagrams from an address that is not a member of the "              \
	  "communicator, whatever their header says (counted in packets_stranger), where the "     \
	  "provider reports sources (FI_SOURCE; udp does); 0 = judge them by the header alone")    \
	X(SPIN_US, "spin_us", OR_PT_INT, "100", "0", "1000000",                                    \
	  "Busy-poll this long, yielding the CPU on each idle pass, before sleeping in the "       \
	  "kernel while waiting")                                                                  \
	X(SPIN_SMALL_US, "spin_small_us", OR_PT_INT, "1000", "0", "1000000",                       \
	  "Exact mode: spin_us for operations of at most spin_small_bytes, whose peers answer "    \
	  "within a round trip; a longer spin on larger ones takes the CPU from ranks that "       \
	  "have data to move when ranks outnumber cores")                                          \
	X(SPIN_SMALL_BYTES, "spin_small_bytes", OR_PT_SIZE, "64k", "0", "1g",                      \
	  "Exact mode: largest operation that waits spin_small_us instead of spin_us; 0 = none")   \
	X(BOUNDED_SPIN_US, "bounded_spin_us", OR_PT_INT, "0", "0", "1000000",                      \
	  "Bounded mode: spin_us for bounded operations; each poll of a datagram socket is a "     \
	  "system call, and datagrams arriving every few tens of us kept a spinning rank "         \
	  "from ever sleeping")                                                                    \
	X(BOUNDED_PIECE_SIZE, "bounded_piece_size", OR_PT_SIZE, "0", "0", "1g",                    \
	  "Bounded mode: an allreduce larger than this runs as pieces of this size, two at a "    \
	  "time, each encoded, sent, reduced and decoded while it is still in the CPU's cache "   \
	  "(1m where the CPUs bind, links of 10 Gbit/s and more); each piece has its own "        \
	  "deadlines.  0 = never.  Every rank must use the same value")                           \
	X(LOG_LEVEL, "log_level", OR_PT_INT, "1", "0", "5",                                        \
	  "0 none, 1 errors and warnings, 2 info, 3 debug, 4 trace, 5 packet trace")               \
	X(TIMEOUT_US, "timeout_us", OR_PT_INT, "0", "0", "600000000",                              \
	  "Bounded mode: fixed deadline of each phase (each step of ring) in microseconds; "       \
	  "0 = adaptive")                                                                          \
	X(TIMEOUT_MIN_US, "timeout_min_us", OR_PT_INT, "200", "1", "600000000",                    \
	  "Bounded mode: lower bound of adaptive deadlines")                                       \
	X(TIMEOUT_MAX_US, "timeout_max_us", OR_PT_INT, "2000000", "1", "600000000",                \
	  "Bounded mode: upper bound of adaptive deadlines (and the deadline of a size class's "   \
	  "first 4 operations, before a provisional bound)")                                       \
	X(CALIB_OPS, "calib_ops", OR_PT_INT, "16", "1", "64",                                      \
	  "Bounded mode: operations per size class that calibrate the hard bound t_B")             \
	X(CALIB_PERCENTILE, "calib_percentile", OR_PT_DOUBLE, "50", "1", "100",                    \
	  "Bounded mode: percentile of the calibration phase times that sets t_B")                 \
	X(CALIB_MARGIN, "calib_margin", OR_PT_DOUBLE, "1.1", "1", "100",                           \
	  "Bounded mode: t_B = percentile * margin; the default deadline is 1.1x a normal phase")  \
	X(CALIB_SLACK_US, "calib_slack_us", OR_PT_INT, "2500", "0", "600000000",                   \
	  "Bounded mode: t_B is at least the percentile plus this much, so that a phase of a "     \
	  "few ms is not cut for a scheduler's time slice")                                        \
	X(BACKOFF_AFTER_US, "backoff_after_us", OR_PT_INT, "5000000", "0", "600000000",            \
	  "Bounded mode: the deadline backs off (x1.5 per cut) only once heavy-loss cuts in a "    \
	  "row (at least 3) have cut phases for this long, or 8 cuts in a row: a slowdown "        \
	  "that lasts, not a burst")                                                               \
	X(LOSS_BUDGET, "loss_budget", OR_PT_DOUBLE, "0.05", "0", "0.99",                           \
	  "Bounded mode: mean fraction of an operation's elements the hard bound may cut; "        \
	  "above it each cut stretches the deadline x1.1, 0 = no limit")                           \
	X(EARLY_TIMEOUT, "early_timeout", OR_PT_BOOL, "1", "", "",                                 \
	  "Bounded mode: close a phase once every sender's last packet is in and nothing "         \
	  "arrived for early_fraction * t_C; 0 = wait for all data or the hard bound")             \
	X(EARLY_FRACTION, "early_fraction", OR_PT_DOUBLE, "0.02", "0", "10",                       \
	  "Bounded mode: quiet time that closes a phase early, as a fraction of t_C")              \
	X(ABSENT_FACTOR, "absent_factor", OR_PT_DOUBLE, "2.0", "0", "1000",                        \
	  "Bounded mode: a sender that sent nothing for absent_factor * t_C (at least t_C + "      \
	  "calib_slack_us) while every other sender's last packet is in is a straggler, and "      \
	  "early timeout stops waiting for it; "                                                   \
	  "0 = wait for it to the hard bound; values in (0, 1) act as 1")                          \
	X(CATCH_UP, "catch_up", OR_PT_BOOL, "0", "", "",                                           \
	  "Bounded mode: a sender whose whole contribution to an operation's first phase was "     \
	  "cut is waited for, up to the deadline, in the next operation's first phase (once), so " \
	  "a rank that fell behind catches up instead of being cut again; for training, where "    \
	  "ranks meet only in the allreduce")                                                      \
	X(DEADLINE_ANCHOR, "deadline_anchor", OR_PT_BOOL, "0", "", "",                             \
	  "Bounded mode: phase 0's deadline counts from when the last sender began the "           \
	  "operation, as its packets say, up to one deadline after this rank began; for ranks "    \
	  "that enter operations at different times (DDP's buckets)")                              \
	X(HADAMARD, "hadamard", OR_PT_BOOL, "1", "", "",                                           \
	  "Bounded mode: randomized Hadamard encoding of each block")                              \
	X(HADAMARD_BLOCK, "hadamard_block", OR_PT_SIZE, "4096", "256", "65536",                    \
	  "Bounded mode: Hadamard block, elements (a power of two)")                               \
	X(RESCALE, "rescale", OR_PT_BOOL, "1", "", "",                                             \
	  "Bounded mode: rescale sums by contributions received (unbiased); 0 = zero-fill")        \
	X(INCAST, "incast", OR_PT_INT, "0", "0", "65535",                                          \
	  "Transpose: senders targeting one receiver at once; 0 = adaptive (bounded: "             \
	  "starts at N-1, halved after 4 lossy operations in a row, +1 after clean runs; exact: "  \
	  "N-1)")                                                                                  \
	X(PACING_RATE, "pacing_rate", OR_PT_DOUBLE, "0", "0", "1e6",                               \
	  "Bounded mode: sender pacing, Mbit/s per rank; 0 = adaptive")                            \
	X(PACKET_PAYLOAD, "packet_payload", OR_PT_SIZE, "0", "0", "65536",                         \
	  "Bounded mode: payload bytes per datagram; 0 = largest the endpoint allows")             \
	X(SOCKET_RCVBUF, "socket_rcvbuf", OR_PT_SIZE, "4m", "0", "1g",                             \
	  "Bounded mode: kernel receive buffer of a socket-backed datagram endpoint (udp), "       \
	  "capped by net.core.rmem_max unless the process has CAP_NET_ADMIN; 0 = leave it")        \
	X(SOCKET_SNDBUF, "socket_sndbuf", OR_PT_SIZE, "0", "0", "1g",                              \
	  "Bounded mode: kernel send buffer of a socket-backed datagram endpoint (udp), fixed "    \
	  "(send_queue_us then sizes nothing); 0 = as the system makes it, then send_queue_us")   \
	X(SEND_QUEUE_US, "send_queue_us", OR_PT_INT, "0", "0", "1000000",                   \
	  "Bounded mode, socket_sndbuf 0: the send buffer is cut to hold this long of the rate " \
	  "the host's queue drains at, measured, where that is less than the system's; 0 = off " \
	  "(2000 suits links nothing else shares)")                                         \
	X(QUEUE_HOLD_US, "queue_hold_us", OR_PT_INT, "1000", "0", "1000000",                      \
	  "Bounded mode: first-pass data waits in the library while the host's send queue holds " \
	  "more than this long of the rate it drains at, measured, so repair's resends overtake " \
	  "it; off while that rate is under 0.7 of the fastest seen (other traffic shares the "  \
	  "queue); 0 = off")                                                                       \
	X(PROGRESS_THREAD, "progress_thread", OR_PT_BOOL, "1", "", "",                             \
	  "Bounded mode: a thread drains the datagram socket while the application is "            \
	  "outside the library, so packets of an operation it has not entered yet are "            \
	  "parked instead of overflowing the socket buffer")                                       \
	X(PROGRESS_WAIT, "progress_wait", OR_PT_BOOL, "0", "", "",                                 \
	  "Bounded mode: 1 = the idle progress thread sleeps in poll() on the completion queue's " \
	  "wait descriptor until a datagram arrives (an idle communicator costs no CPU), and "     \
	  "parks early datagrams only once half the receive buffers wait; 0 = it polls every "     \
	  "progress_idle_us and parks at once (the 64 KiB tail was better so)")                    \
	X(PROGRESS_IDLE_US, "progress_idle_us", OR_PT_INT, "2000", "10", "100000",                 \
	  "Bounded mode, when the progress thread polls (see progress_wait): longest sleep "       \
	  "between polls while the application is outside the library; also at most half the "     \
	  "time the socket's receive buffer takes to fill at 10 Gbit/s (200 us if its size is "    \
	  "unknown)")                                                                              \
	X(PROGRESS_BIND, "progress_bind", OR_PT_BOOL, "1", "", "",                                 \
	  "Bounded mode: when the rank is bound to more than one PU, bind the progress thread "    \
	  "to one of them, the last PU of the binding's last core (hwloc); 0 = it runs "           \
	  "wherever the rank may")                                                                 \
	X(REPAIR, "repair", OR_PT_BOOL, "1", "", "",                                               \
	  "Bounded mode: receivers ask senders again for the datagrams a phase misses, and "       \
	  "senders resend them, while the phase's deadline leaves a round trip and peers still "   \
	  "wait for the receiver's next phase; 0 = what did not arrive is only estimated")         \
	X(MULTICAST, "multicast", OR_PT_ENUM, "auto", "auto|on|off", "",                           \
	  "Bounded mode: a phase that sends one region to every peer (Transpose's second) goes "   \
	  "once to a multicast group of the communicator; auto = where every rank hears every "    \
	  "other on the group in a probe at creation (else unicast, and the log says why), on = "  \
	  "creation fails when multicast does not work, off = unicast")                            \
	X(MULTICAST_RANGE, "multicast_range", OR_PT_STRING, "239.192.0.0/14", "", "",              \
	  "Bounded mode, multicast: the IPv4 range (address/prefix, inside 224.0.0.0/4) each "     \
	  "communicator's group is chosen from, by its id; TTL 1")                                 \
	X(MULTICAST_PROBE_MS, "multicast_probe_ms", OR_PT_INT, "10", "1", "10000",                 \
	  "Bounded mode, multicast: at creation, how long a rank waits to hear another on the "    \
	  "group once that rank's unicast copy of its probe came")                                 \
	X(CONSISTENT, "consistent", OR_PT_BOOL, "0", "", "",                                       \
	  "Bounded mode: every rank ends every operation with bit-identical output: ranks "        \
	  "exchange loss bitmaps of the final phase and estimate the union of what any rank "      \
	  "lost the same way, fetching blocks lost whole from their owners; runs Transpose; "      \
	  "waits for every peer's bitmap (asking again), at most peer_timeout_ms")                 \
	X(INJECT_LOSS, "inject_loss", OR_PT_DOUBLE, "0", "0", "1",                                 \
	  "Testing: drop this fraction of outgoing bounded datagrams (seeded): data packets "      \
	  "but a phase's last ones, repair requests and resends, consistent's datagrams")          \
	X(INJECT_SEED, "inject_seed", OR_PT_INT, "1", "0", "9223372036854775807",                  \
	  "Testing: seed of injected loss and delay")                                              \
	X(INJECT_DELAY, "inject_delay", OR_PT_STRING, "", "", "",                                  \
	  "Testing: delay before entering an operation, \"RANKS:US[:PROB]\", e.g. "                \
	  "\"1,3:5000:0.1\"")

enum or_param_id {
#define OR_PARAM_ENUM(id, name, type, def, min, max, desc) OR_P_##id,
	OR_PARAM_TABLE(OR_PARAM_ENUM)
#undef OR_PARAM_ENUM
	    OR_P_COUNT
};

/* The max_inflight parameter's maximum, above: the channels size their tables by it. */
#define OR_INFLIGHT_MAX 32

#define OR_PARAM_STRLEN 256

struct or_param_val {
	int64_t i; /* int, size, bool, enum index */
	double d;
	char s[OR_PARAM_STRLEN]; /* the value as written */
	enum optireduce_param_source source;
};

struct or_params {
	struct or_param_val v[OR_P_COUNT];
};

/*
 * What a value must also satisfy beyond its type, known to the layer above (the
 * algorithm parameter names algorithms, lib/select/select.c): 0 or -OPTIREDUCE_EINVAL.
 */
typedef int (*or_param_check)(enum or_param_id id, const char *value);

/* Defaults, then the environment; a bad environment value is logged and ignored. */
void or_params_init(struct or_params *p, or_param_check check);
/* Returns 0, -ENOPARAM for an unknown name, -EINVAL for a bad value (nothing changed). */
int or_params_set(struct or_params *p, const char *name, const char *value,
                  enum optireduce_param_source source, or_param_check check);
int or_params_find(const char *name);
/* Parse "64k", "1m", "2g", "inf"; returns 0 or -EINVAL. */
int or_parse_size(const char *s, uint64_t *out);

static inline int64_t or_param_int(const struct or_params *p, enum or_param_id id)
{
	return p->v[id].i;
}
static inline double or_param_double(const struct or_params *p, enum or_param_id id)
{
	return p->v[id].d;
}
static inline const char *or_param_str(const struct or_params *p, enum or_param_id id)
{
	return p->v[id].s;
}

#endif /* OR_PARAMS_H */
