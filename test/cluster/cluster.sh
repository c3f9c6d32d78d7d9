#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cluster.sh - an emulated cloud of N hosts on one machine (docs/design.md, "Emulated cloud").
#
# Hosts are network namespaces orc-h0..orc-h{N-1}, each with one veth "eth0"
# (198.18.0.(1+i)/24, MTU 1500) whose peer "hI" is a port of bridge orc-br0 in
# namespace orc-sw.  Nothing is attached to the root namespace: no default
# route, no NAT, no address outside 198.18.0.0/24.  Multicast to 239.192.0.0/14 is routed
# to eth0 on every host and flooded by the bridge.  See README.md for usage.
set -euo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
HERE=$(dirname "$SELF")
STATE=${ORC_STATE_DIR:-/run/optireduce-cluster}
SW=orc-sw              # switch namespace
BR=orc-br0             # bridge inside $SW
NET=198.18.0           # hosts are $NET.(1+i)/24
PORT=5999              # crossgen serve port (TCP discard + UDP echo) on every host
IPT=iptables-legacy
MAXN=200
MCAST=239.192.0.0/14   # the library's default multicast_range, routed to eth0 on every host

usage() {
	cat <<'EOF'
usage: cluster.sh up [-n N] [--rate RATE] [--rate-at both|egress] [--loss P]
                     [--loss-at ingress|egress] [--burst BYTES] [--latency MS]
                     [--cross-traffic RATE] [--cross-onoff ON_MS:OFF_MS] [--cross-flows K]
                     [--cross-sync] [--offload | --fast] [--mtu BYTES] [--tcp-cc ALG]
                     [--straggler H:hog | H:stop:PERIOD_MS:DUTY]...
       cluster.sh down
       cluster.sh set [--rate RATE] [--rate-at both|egress] [--loss P]
                      [--loss-at ingress|egress] [--burst BYTES] [--latency MS]
       cluster.sh run [-n N] [--per-host K] [mpirun options...] -- PROGRAM [ARGS...]
       cluster.sh exec H CMD [ARGS...]
       cluster.sh status
       cluster.sh straggle H PERIOD_MS DUTY     (foreground; used by up)
       cluster.sh tool                          (print path of crossgen binary)
H is a host index (0), name (h0, orc-h0) or address (198.18.0.1).
RATE is like 200mbit, 1gbit, 500kbit or bits/s; "0"/"none" = unlimited.
--rate-at: both (default; what each host sends and what it receives are limited) or
egress (only what it sends, as clouds cap a VM's egress).
--loss-at: where each host drops P of its packets: ingress (default; INPUT, the
packets it receives) or egress (OUTPUT, the packets it sends: the sender's
sendto fails with EPERM, as with a local firewall rule).
--tcp-cc: every host's TCP congestion control (net.ipv4.tcp_congestion_control), one
of tcp_available_congestion_control; default: this machine's own.
See test/cluster/README.md.
EOF
}

die() { echo "cluster.sh: error: $*" >&2; exit 1; }
warn() { echo "cluster.sh: warning: $*" >&2; }

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "cluster.sh: needs root (network namespaces, tc, iptables); skipping (exit 77)" >&2
		exit 77
	fi
	local c
	for c in ip tc "$IPT" unshare setsid; do
		command -v "$c" >/dev/null 2>&1 || { echo "cluster.sh: '$c' not found; skipping (exit 77)" >&2; exit 77; }
	done
}

# rate_bps RATE -> integer bits/s (0 = unlimited)
rate_bps() {
	local r=$1
	case $r in none | 0) echo 0; return ;; esac
	awk -v r="$r" 'BEGIN {
		if (match(r, /^[0-9]+(\.[0-9]+)?/) == 0) exit 1
		n = substr(r, 1, RLENGTH); u = tolower(substr(r, RLENGTH + 1))
		if (u == "" || u == "bit") m = 1
		else if (u == "kbit") m = 1e3
		else if (u == "mbit") m = 1e6
		else if (u == "gbit") m = 1e9
		else exit 1
		printf "%d\n", n * m }' || die "bad rate '$r' (use e.g. 200mbit, 1gbit, 500kbit)"
}

check_prob() {
	awk -v p="$1" 'BEGIN { exit !(p ~ /^[0-9]*\.?[0-9]+$/ && p >= 0 && p < 1) }' ||
		die "bad loss probability '$1' (want 0 <= P < 1)"
}

check_loss_at() {
	case $1 in ingress | egress) ;; *) die "bad --loss-at '$1' (want ingress or egress)" ;; esac
}

check_rate_at() { [ "$1" = both ] || [ "$1" = egress ] || die "--rate-at wants both or egress, got '$1'"; }
check_uint() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 wants a non-negative integer, got '$2'"; }

# host_index ARG -> i  (accepts 3, h3, orc-h3, 198.18.0.4)
host_index() {
	local a=$1 i
	case $a in
	orc-h*) i=${a#orc-h} ;;
	h*) i=${a#h} ;;
	"$NET".*) i=${a#"$NET".}; [[ $i =~ ^[0-9]+$ ]] && i=$((i - 1)) ;;
	*) i=$a ;;
	esac
	[[ $i =~ ^[0-9]+$ ]] || die "unknown host '$a'"
	if [ -n "${N:-}" ] && [ "$i" -ge "$N" ]; then die "host '$a' out of range (cluster has $N hosts)"; fi
	echo "$i"
}

# --tcp-cc: a congestion control this kernel has.  A new namespace starts with the
# machine's, which differs between kernels (bbr on some of these VMs, cubic on Debian's).
# A namespace other than the machine's may only take one of tcp_allowed_congestion_control
# (the kernel answers EPERM otherwise), so one that is available but not allowed is added
# to that list: it only widens what may be chosen, and changes no socket's behaviour.
check_tcp_cc() {
	local allowed=/proc/sys/net/ipv4/tcp_allowed_congestion_control
	[ "$1" = unknown ] && return 0
	grep -qw -- "$1" /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null ||
		die "--tcp-cc '$1': not one of $(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null)"
	grep -qw -- "$1" "$allowed" 2>/dev/null ||
		sysctl -qw net.ipv4.tcp_allowed_congestion_control="$(cat "$allowed") $1" ||
		die "--tcp-cc '$1': cannot add it to $allowed"
}

set_tcp_cc() {
	[ "$TCP_CC" = unknown ] && return 0
	ip netns exec "$1" sysctl -qw net.ipv4.tcp_congestion_control="$TCP_CC" ||
		die "cannot set TCP congestion control $TCP_CC in $1"
}

save_config() {
	mkdir -p "$STATE"
	{
		printf 'N=%q\n' "$N"
		printf 'RATE=%q\n' "$RATE"
		printf 'RATE_BPS=%q\n' "$RATE_BPS"
		printf 'RATE_AT=%q\n' "$RATE_AT"
		printf 'LOSS=%q\n' "$LOSS"
		printf 'LOSS_AT=%q\n' "$LOSS_AT"
		printf 'BURST=%q\n' "$BURST"
		printf 'LATENCY=%q\n' "$LATENCY"
		printf 'CROSS=%q\n' "$CROSS"
		printf 'CROSS_ONOFF=%q\n' "$CROSS_ONOFF"
		printf 'CROSS_FLOWS=%q\n' "$CROSS_FLOWS"
		printf 'CROSS_SYNC=%q\n' "$CROSS_SYNC"
		printf 'OFFLOAD=%q\n' "$OFFLOAD"
		printf 'FAST=%q\n' "$FAST"
		printf 'MTU=%q\n' "$MTU"
		printf 'STRAGGLERS=%q\n' "$STRAGGLERS"
		printf 'TCP_CC=%q\n' "$TCP_CC"
	} >"$STATE/config.tmp"
	mv "$STATE/config.tmp" "$STATE/config"
}

load_config() {
	[ -f "$STATE/config" ] || die "no cluster is up (no $STATE/config); run 'cluster.sh up' first"
	# shellcheck disable=SC1091
	. "$STATE/config"
}

# Effective tbf burst in bytes: --burst, or max(10 full frames, 1 ms at RATE).
eff_burst() {
	if [ "$BURST" != auto ]; then echo "$BURST"; return; fi
	local b=$((RATE_BPS / 8 / 1000)) frames=$((10 * (${MTU:-1500} + 14)))
	[ "$b" -lt "$frames" ] && b=$frames
	echo "$b"
}

# With offloads on, a GSO packet larger than the tbf's bucket is cut into wire
# packets by tbf itself, in software: on a 6.18 kernel that made 4 hosts' cross
# traffic at 200 Mbit/s take 90 % of both CPUs (7 % with GSO packets kept below the
# bucket), so the cross-traffic runs measured starved ranks, not a busy network.
gso_below_burst() {
	local i=$1 size=$2
	ip -n "orc-h$i" link set dev eth0 gso_max_size "$size" 2>/dev/null ||
		warn "cannot set gso_max_size $size on orc-h$i eth0"
	ip -n "$SW" link set dev "h$i" gso_max_size "$size" 2>/dev/null ||
		warn "cannot set gso_max_size $size on $SW h$i"
}

# Bytes the host's own queue holds: --latency at RATE, and never fewer than
# EGRESS_MIN_BYTES.  A host's NIC queue (1000 frames) holds more than a socket's send
# buffer, so a UDP sender is refused (EAGAIN) before its own queue drops anything; at
# 50 Mbit/s, 20 ms is 125 KB, less than the 92 datagrams (139 KB) a default UDP send
# buffer lets out, and the host's qdisc dropped its sender's excess silently.
EGRESS_MIN_BYTES=262144
egress_limit() {
	local burst=$1 q=$((RATE_BPS / 8 * LATENCY / 1000))
	[ "$q" -lt "$EGRESS_MIN_BYTES" ] && q=$EGRESS_MIN_BYTES
	echo $((q + burst))
}

# Apply rate limits and loss to host i (idempotent; used by up and set).
shape_host() {
	local i=$1 ns=orc-h$1 burst
	if [ "$RATE_BPS" -gt 0 ]; then
		burst=$(eff_burst)
		tc -n "$ns" qdisc replace dev eth0 root tbf rate "${RATE_BPS}bit" burst "$burst" limit "$(egress_limit "$burst")"
		# The switch's port toward the host limits what the host receives.
		if [ "${RATE_AT:-both}" = egress ]; then
			tc -n "$SW" qdisc del dev "h$i" root 2>/dev/null || true
		else
			tc -n "$SW" qdisc replace dev "h$i" root handle 1: tbf rate "${RATE_BPS}bit" burst "$burst" latency "${LATENCY}ms"
		fi
		if [ "${OFFLOAD:-0}" = 1 ] || [ "${FAST:-0}" = 1 ]; then
			gso_below_burst "$i" $((burst - ${MTU:-1500} - 14))
		fi
	else
		if [ "${OFFLOAD:-0}" = 1 ] || [ "${FAST:-0}" = 1 ]; then gso_below_burst "$i" 65536; fi
		tc -n "$ns" qdisc del dev eth0 root 2>/dev/null || true
		tc -n "$SW" qdisc del dev "h$i" root 2>/dev/null || true
	fi
	# The chain is made on first use, and a marker in the state dir says so (and holds the
	# built-in chain that jumps to it), because any iptables command, a listing too, makes
	# the host's filter table, which every packet it sends and receives then walks (2 % of
	# both CPUs in a loss-free 4 MiB run, perf).
	if [ "${FAST:-0}" = 1 ]; then
		fast_loss "$i"
	elif awk -v p="$LOSS" 'BEGIN { exit !(p > 0) }'; then
		loss_hook "$i"
		ip netns exec "$ns" "$IPT" -w -F ORC-LOSS
		ip netns exec "$ns" "$IPT" -w -A ORC-LOSS -m statistic --mode random --probability "$LOSS" -j DROP
	elif [ -e "$STATE/loss.h$i" ]; then
		ip netns exec "$ns" "$IPT" -w -F ORC-LOSS
	fi
}

# loss_hook i: chain ORC-LOSS of host i exists and is jumped to from INPUT (-i eth0) for
# ingress loss or from OUTPUT (-o eth0) for egress loss, never both.
loss_hook() {
	local i=$1 ns=orc-h$1 want have=""
	if [ "${LOSS_AT:-ingress}" = egress ]; then want=OUTPUT; else want=INPUT; fi
	if [ -e "$STATE/loss.h$i" ]; then
		have=$(cat "$STATE/loss.h$i")
		[ -n "$have" ] || have=INPUT # a marker from before --loss-at
	else
		ip netns exec "$ns" "$IPT" -w -N ORC-LOSS
	fi
	[ "$have" = "$want" ] && return 0
	case $have in
	INPUT) ip netns exec "$ns" "$IPT" -w -D INPUT -i eth0 -j ORC-LOSS ;;
	OUTPUT) ip netns exec "$ns" "$IPT" -w -D OUTPUT -o eth0 -j ORC-LOSS ;;
	esac
	if [ "$want" = OUTPUT ]; then
		ip netns exec "$ns" "$IPT" -w -A OUTPUT -o eth0 -j ORC-LOSS
	else
		ip netns exec "$ns" "$IPT" -w -A INPUT -i eth0 -j ORC-LOSS
	fi
	echo "$want" >"$STATE/loss.h$i"
}

# With offloads on, iptables sees a TCP super-segment (up to 64 KiB) as one
# packet and drops it whole: random loss would then hit TCP far harder than the
# wire.  So --offload (cheap TCP for the cross traffic) is for loss-free runs.
check_offload_loss() {
	if [ "${OFFLOAD:-0}" = 1 ] && awk -v p="$LOSS" 'BEGIN { exit !(p > 0) }'; then
		die "--offload with --loss $LOSS: loss would drop whole TCP super-segments; use one or the other"
	fi
}

# The fast profile (--fast): the offloads a real NIC has, where rate limits and loss
# still act on wire-size packets.  A host segments its own sends (GSO in software after
# its qdisc: one pass through its stack per 64 KB, as with TSO) and coalesces what it
# receives (GRO, NAPI on the veth); the switch's ports carry and shape wire-size frames,
# and loss is netem's on the port toward each host, per frame.  MTU 9000 unless --mtu
# says otherwise, as clouds' jumbo frames (9001 on AWS, 8896 on GCP).
check_fast() {
	if [ "${FAST:-0}" = 1 ]; then
		[ "${OFFLOAD:-0}" = 0 ] || die "--fast and --offload are two profiles; choose one"
		[ "${LOSS_AT:-ingress}" = ingress ] || die "--fast drops on the wire (--loss-at ingress) only"
		[ -n "$MTU" ] || MTU=9000
	fi
	[ -n "$MTU" ] || MTU=1500
	check_uint --mtu "$MTU"
	if [ "$MTU" -lt 576 ] || [ "$MTU" -gt 9216 ]; then die "--mtu wants 576..9216"; fi
}

fast_offload() {
	local ns=$1
	if command -v ethtool >/dev/null 2>&1; then
		ip netns exec "$ns" ethtool -K eth0 gso on gro on tso off tx-udp-segmentation off \
			>/dev/null 2>&1 || warn "ethtool -K eth0 (fast profile) failed in $ns"
	else
		warn "ethtool not found: the fast profile needs it"
	fi
}

# Loss of the fast profile: netem on the switch's port toward host i, per wire frame,
# under the port's tbf when the rate is limited.
fast_loss() {
	local i=$1 pct
	pct=$(awk -v p="$LOSS" 'BEGIN { printf "%.6f", p * 100 }')
	if ! awk -v p="$LOSS" 'BEGIN { exit !(p > 0) }'; then
		tc -n "$SW" qdisc del dev "h$i" parent 1:1 2>/dev/null || true
		return 0
	fi
	if [ "$RATE_BPS" -gt 0 ] && [ "${RATE_AT:-both}" != egress ]; then
		tc -n "$SW" qdisc replace dev "h$i" parent 1:1 handle 10: netem loss "$pct%"
	else
		tc -n "$SW" qdisc replace dev "h$i" root netem loss "$pct%"
	fi
}

# Turn off segmentation/receive offloads so tbf and iptables see wire-size packets.
no_offload() {
	local ns=$1 dev=$2
	if command -v ethtool >/dev/null 2>&1; then
		ip netns exec "$ns" ethtool -K "$dev" gso off tso off gro off >/dev/null 2>&1 ||
			warn "ethtool -K $dev failed in $ns"
	fi
	# Belt and braces (and the only measure without ethtool): at most one
	# segment per GSO packet.
	ip -n "$ns" link set dev "$dev" gso_max_segs 1 2>/dev/null || true
}

# start_bg NAME NS CMD... : background helper inside namespace NS, own session.
start_bg() {
	local name=$1 ns=$2
	shift 2
	mkdir -p "$STATE/pids" "$STATE/log"
	ip netns exec "$ns" setsid "$@" </dev/null >>"$STATE/log/$name.log" 2>&1 &
	echo $! >"$STATE/pids/$name"
}

build_crossgen() {
	local cc=${CC:-cc}
	if ! command -v "$cc" >/dev/null 2>&1; then
		warn "no C compiler ($cc); crossgen (servers, cross traffic, probes) unavailable"
		return 1
	fi
	"$cc" -O2 -o "$STATE/crossgen.tmp" "$HERE/crossgen.c" -lm || { warn "building crossgen failed"; return 1; }
	mv "$STATE/crossgen.tmp" "$STATE/crossgen"
}

cpu_list() {
	local n
	n=$(nproc 2>/dev/null || echo 1)
	seq 0 $((n - 1))
}

up_failed() {
	if [ "$1" -ne 0 ]; then
		warn "up failed; cleaning up"
		do_down
	fi
}

cmd_up() {
	N=2 RATE=200mbit RATE_AT=both LOSS=0 LOSS_AT=ingress BURST=auto LATENCY=20 CROSS=0 CROSS_ONOFF=50:50 CROSS_FLOWS=1 CROSS_SYNC=0 OFFLOAD=0 FAST=0 MTU="" STRAGGLERS=""
	TCP_CC=$(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null || echo unknown)
	while [ $# -gt 0 ]; do
		case $1 in
		-n) N=${2:?}; shift 2 ;;
		--rate) RATE=${2:?}; shift 2 ;;
		--rate-at) RATE_AT=${2:?}; shift 2 ;;
		--loss) LOSS=${2:?}; shift 2 ;;
		--loss-at) LOSS_AT=${2:?}; shift 2 ;;
		--burst) BURST=${2:?}; shift 2 ;;
		--latency) LATENCY=${2:?}; shift 2 ;;
		--cross-traffic) CROSS=${2:?}; shift 2 ;;
		--cross-onoff) CROSS_ONOFF=${2:?}; shift 2 ;;
		--cross-flows) CROSS_FLOWS=${2:?}; shift 2 ;;
		--cross-sync) CROSS_SYNC=1; shift ;;
		--offload) OFFLOAD=1; shift ;;
		--fast) FAST=1; shift ;;
		--mtu) MTU=${2:?}; shift 2 ;;
		--tcp-cc) TCP_CC=${2:?}; shift 2 ;;
		--straggler) STRAGGLERS="$STRAGGLERS ${2:?}"; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) die "up: unknown option '$1'" ;;
		esac
	done
	check_uint -n "$N"
	if [ "$N" -lt 1 ] || [ "$N" -gt "$MAXN" ]; then die "-n wants 1..$MAXN"; fi
	RATE_BPS=$(rate_bps "$RATE")
	check_rate_at "$RATE_AT"
	check_prob "$LOSS"
	check_loss_at "$LOSS_AT"
	check_offload_loss
	check_fast
	[ "$BURST" = auto ] || check_uint --burst "$BURST"
	check_uint --latency "$LATENCY"
	check_tcp_cc "$TCP_CC"
	local cross_bps on_ms off_ms s h mode rest
	if [ "$CROSS" = max ]; then cross_bps=0; else cross_bps=$(rate_bps "$CROSS"); fi
	[[ $CROSS_ONOFF =~ ^([0-9]+):([0-9]+)$ ]] || die "--cross-onoff wants ON_MS:OFF_MS"
	on_ms=${BASH_REMATCH[1]} off_ms=${BASH_REMATCH[2]}
	check_uint --cross-flows "$CROSS_FLOWS"
	if [ "$CROSS_FLOWS" -lt 1 ] || [ "$CROSS_FLOWS" -gt 64 ]; then die "--cross-flows wants 1..64"; fi
	for s in $STRAGGLERS; do
		h=${s%%:*} mode=${s#*:}
		host_index "$h" >/dev/null
		case $mode in
		hog) ;;
		stop:*) rest=${mode#stop:}
			[[ $rest =~ ^[0-9]+:(0?\.[0-9]+|1|0)$ ]] || die "straggler '$s': want H:stop:PERIOD_MS:DUTY (0<=DUTY<=1)" ;;
		*) die "straggler '$s': MODE is hog or stop:PERIOD_MS:DUTY" ;;
		esac
	done

	if [ -e "$STATE/config" ] || list_orc_ns | grep -q .; then
		die "a cluster (or its leftovers) exists; run 'cluster.sh down' first"
	fi
	mkdir -p "$STATE"
	save_config
	# From here on, any failure tears down what was made.
	trap 'up_failed $?' EXIT

	command -v ethtool >/dev/null 2>&1 ||
		warn "ethtool not found: offloads limited with gso_max_segs only (install ethtool)"

	ip netns add "$SW"
	ip -n "$SW" link set lo up
	ip -n "$SW" link add "$BR" type bridge forward_delay 0 stp_state 0
	# Multicast is flooded to every port, as a switch without IGMP snooping does: with
	# snooping and no querier, memberships learnt from the joins would expire mid-run.
	ip -n "$SW" link set "$BR" type bridge mcast_snooping 0
	ip -n "$SW" link set "$BR" mtu "$MTU" up
	ip netns exec "$SW" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
	# A cloud's switch does not run the hosts' firewall: with br_netfilter loaded, every
	# bridged frame would go through iptables and a route lookup here (8 % of both CPUs
	# in a 4 MiB bounded run, perf), and the emulated links would cost more CPU per packet.
	local f
	for f in iptables ip6tables arptables; do
		ip netns exec "$SW" sysctl -qw "net.bridge.bridge-nf-call-$f=0" 2>/dev/null || true
	done

	local i ns
	for ((i = 0; i < N; i++)); do
		ns=orc-h$i
		ip netns add "$ns"
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true
		set_tcp_cc "$ns"
		ip -n "$ns" link set lo up
		ip -n "$SW" link add "h$i" mtu "$MTU" type veth peer name eth0 mtu "$MTU" netns "$ns"
		ip -n "$SW" link set "h$i" master "$BR"
		if [ "$FAST" = 1 ]; then
			no_offload "$SW" "h$i"
			fast_offload "$ns"
		elif [ "$OFFLOAD" != 1 ]; then
			no_offload "$SW" "h$i"
			no_offload "$ns" eth0
		fi
		ip -n "$ns" addr add "$NET.$((i + 1))/24" dev eth0
		ip -n "$SW" link set "h$i" up
		ip -n "$ns" link set eth0 up
		ip -n "$ns" route add "$MCAST" dev eth0
		shape_host "$i"
		rm -rf "/tmp/orc-h$i"
		mkdir -p "/tmp/orc-h$i"
	done

	# crossgen runs at nice 19: on a cloud, other tenants' traffic is sent and received
	# by other hosts' CPUs, not by the CPUs the ranks need (24 flows' processes on 2
	# CPUs kept a rank's runnable thread off both for up to 194 ms; perf sched).
	local have_cg=0
	build_crossgen && have_cg=1
	if [ "$have_cg" = 1 ]; then
		for ((i = 0; i < N; i++)); do
			start_bg "serve.h$i" "orc-h$i" nice -n 19 "$STATE/crossgen" serve "$PORT"
		done
	fi

	if [ "$CROSS" != 0 ] && [ "$CROSS" != none ]; then
		[ "$have_cg" = 1 ] || die "--cross-traffic needs crossgen (a C compiler)"
		if [ "$N" -lt 2 ]; then
			warn "--cross-traffic needs at least 2 hosts; ignored"
		else
			sleep 0.2 # let the servers bind
			# Flow f of host i goes to host i+1+(f mod (N-1)): with K <= N-1
			# every flow has its own destination, so each host's uplink and
			# downlink both carry K flows; each flow has its own ON/OFF draws.
			# --cross-sync: one seed and one wall-clock epoch for all flows,
			# so they share one ON/OFF schedule (another tenant's shuffle).
			local f seed epoch
			epoch=$(($(date +%s) + 1))
			for ((i = 0; i < N; i++)); do
				for ((f = 0; f < CROSS_FLOWS; f++)); do
					seed=$((i + 1 + 1000 * f))
					[ "$CROSS_SYNC" = 1 ] && seed=1
					start_bg "cross.h$i.$f" "orc-h$i" nice -n 19 "$STATE/crossgen" bulk \
						"$NET.$(((i + 1 + f % (N - 1)) % N + 1))" "$PORT" "$cross_bps" \
						"$on_ms" "$off_ms" "$seed" "$epoch"
				done
			done
		fi
	fi

	# Stragglers.  A hog host gets a CPU of its own shared with the hog; all
	# other hosts are pinned to the remaining CPUs (if any), so the hog slows
	# only the rank(s) of that host.  Pinning is applied by exec/run/rsh-agent.
	local cpus=() hogs=() k c others
	mapfile -t cpus < <(cpu_list)
	for s in $STRAGGLERS; do
		h=$(host_index "${s%%:*}") mode=${s#*:}
		[ "$mode" = hog ] && hogs+=("$h")
	done
	if [ ${#hogs[@]} -gt 0 ]; then
		declare -A hogcpu=()
		for ((k = 0; k < ${#hogs[@]}; k++)); do
			c=${cpus[$((k % ${#cpus[@]}))]}
			hogcpu[${hogs[$k]}]=$c
		done
		others=""
		for c in "${cpus[@]}"; do
			case " ${hogcpu[*]} " in *" $c "*) ;; *) others="${others:+$others,}$c" ;; esac
		done
		[ -n "$others" ] || others=$(IFS=,; echo "${cpus[*]}")
		for ((i = 0; i < N; i++)); do
			if [ -n "${hogcpu[$i]:-}" ]; then
				echo "${hogcpu[$i]}" >"$STATE/pin.h$i"
				start_bg "hog.h$i" "orc-h$i" taskset -c "${hogcpu[$i]}" sh -c 'while :; do :; done'
			else
				echo "$others" >"$STATE/pin.h$i"
			fi
		done
	fi
	for s in $STRAGGLERS; do
		h=$(host_index "${s%%:*}") mode=${s#*:}
		case $mode in
		stop:*) rest=${mode#stop:}
			start_bg "stop.h$h" "$SW" "$SELF" straggle "$h" "${rest%%:*}" "${rest#*:}" ;;
		esac
	done
	trap - EXIT
	echo "cluster up: $N hosts ($NET.1-$NET.$N), rate=$RATE rate-at=$RATE_AT loss=$LOSS loss-at=$LOSS_AT cross=$CROSS stragglers=${STRAGGLERS:-none}"
}

list_orc_ns() {
	ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^orc-(sw|h[0-9]+)$' || true
}

# kill_ns NS: every process in namespace NS (continue stopped ones first).
kill_ns() {
	local ns=$1 pids p tries
	for tries in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		pids=$(ip netns pids "$ns" 2>/dev/null | grep -vx -e "$$" -e "${BASHPID:-$$}" || true)
		[ -n "$pids" ] || return 0
		for p in $pids; do
			kill -CONT "$p" 2>/dev/null || true
			if [ "$tries" -lt 10 ]; then kill -TERM "$p" 2>/dev/null || true; else kill -KILL "$p" 2>/dev/null || true; fi
		done
		sleep 0.1
	done
	warn "processes left in $ns: $(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
}

do_down() {
	local ns
	# Helpers normally live inside the namespaces; anything recorded that is
	# still one of ours (checked by command line) is killed too.
	if [ -d "$STATE/pids" ]; then
		local f p
		for f in "$STATE"/pids/*; do
			[ -f "$f" ] || continue
			p=$(cat "$f")
			if [[ $p =~ ^[0-9]+$ ]] && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qE 'crossgen|cluster\.sh|while :'; then
				kill -CONT "$p" 2>/dev/null || true
				kill -TERM "$p" 2>/dev/null || true
			fi
		done
	fi
	# The switch first (straggle loops live there), then the hosts.
	for ns in $(list_orc_ns | sort -r); do kill_ns "$ns"; done
	for ns in $(list_orc_ns); do ip netns del "$ns" 2>/dev/null || warn "could not delete namespace $ns"; done
	rm -rf "$STATE"
	rm -rf /tmp/orc-h[0-9]*
}

cmd_down() {
	[ $# -eq 0 ] || die "down takes no arguments"
	do_down
	if [ -n "$(list_orc_ns)" ]; then die "namespaces left: $(list_orc_ns | tr '\n' ' ')"; fi
	echo "cluster down"
}

cmd_set() {
	load_config
	LOSS_AT=${LOSS_AT:-ingress}
	RATE_AT=${RATE_AT:-both}
	while [ $# -gt 0 ]; do
		case $1 in
		--rate) RATE=${2:?}; shift 2 ;;
		--rate-at) RATE_AT=${2:?}; shift 2 ;;
		--loss) LOSS=${2:?}; shift 2 ;;
		--loss-at) LOSS_AT=${2:?}; shift 2 ;;
		--burst) BURST=${2:?}; shift 2 ;;
		--latency) LATENCY=${2:?}; shift 2 ;;
		*) die "set: unknown option '$1'" ;;
		esac
	done
	RATE_BPS=$(rate_bps "$RATE")
	check_rate_at "$RATE_AT"
	check_prob "$LOSS"
	check_loss_at "$LOSS_AT"
	check_offload_loss
	[ "$BURST" = auto ] || check_uint --burst "$BURST"
	check_uint --latency "$LATENCY"
	local i
	for ((i = 0; i < N; i++)); do shape_host "$i"; done
	save_config
	echo "cluster set: rate=$RATE rate-at=$RATE_AT loss=$LOSS loss-at=$LOSS_AT burst=$(eff_burst) latency=${LATENCY}ms"
}

# host_cmd i -> prints nothing; builds array HOSTCMD that runs "$@" in host i
# with its TMPDIR, its own UTS namespace (hostname orc-hI) and CPU pinning.
host_prefix() {
	local i=$1
	HOSTCMD=(ip netns exec "orc-h$i" env "TMPDIR=/tmp/orc-h$i" "ORC_HOST=h$i" "ORC_STATE_DIR=$STATE")
	if [ -s "$STATE/pin.h$i" ]; then HOSTCMD+=(taskset -c "$(cat "$STATE/pin.h$i")"); fi
	# shellcheck disable=SC2016
	HOSTCMD+=(unshare --uts /bin/sh -c 'printf %s "$0" >/proc/sys/kernel/hostname && exec "$@"' "orc-h$i")
}

cmd_exec() {
	load_config
	[ $# -ge 2 ] || die "usage: cluster.sh exec H CMD [ARGS...]"
	local i
	i=$(host_index "$1")
	shift
	mkdir -p "/tmp/orc-h$i"
	host_prefix "$i"
	exec "${HOSTCMD[@]}" "$@"
}

cmd_run() {
	load_config
	local np=$N per=1 opts=() prog=() sawsep=0
	while [ $# -gt 0 ]; do
		case $1 in
		--) sawsep=1; shift; prog=("$@"); break ;;
		-n | -np) np=${2:?}; shift 2 ;;
		--per-host) per=${2:?}; shift 2 ;;
		*) opts+=("$1"); shift ;;
		esac
	done
	[ "$sawsep" = 1 ] || die "usage: cluster.sh run [-n N] [--per-host K] [mpirun options...] -- PROGRAM [ARGS...]"
	check_uint -n "$np"
	check_uint --per-host "$per"
	if [ "$per" -lt 1 ]; then die "--per-host $per: at least 1"; fi
	if [ "$np" -lt 1 ] || [ "$np" -gt $((N * per)) ]; then
		die "-n $np: cluster has $N hosts of $per ranks"
	fi
	# K ranks per host share its namespace (and find each other as one host); mpirun
	# fills each host's slots in turn unless told otherwise (--map-by node interleaves).
	local hf=$STATE/hostfile.$np.$per i
	: >"$hf.tmp"
	for ((i = 0; i < (np + per - 1) / per; i++)); do echo "$NET.$((i + 1)) slots=$per" >>"$hf.tmp"; done
	mv "$hf.tmp" "$hf"

	# Defaults, each dropped if the user passes the same MCA name / option.
	local defs=() d name user=" ${opts[*]:-} "
	for d in "plm rsh" "plm_rsh_agent $HERE/rsh-agent.sh" "plm_rsh_no_tree_spawn 1" \
		"pml ob1" "btl tcp,self" "oob_tcp_if_include $NET.0/24" "btl_tcp_if_include $NET.0/24" \
		"mpi_yield_when_idle 1"; do
		name=${d%% *}
		case $user in *" $name "*) continue ;; esac
		defs+=(--mca "$name" "${d#* }")
	done
	case $user in *" --bind-to "* | *" -bind-to "*) ;; *) defs+=(--bind-to none) ;; esac

	host_prefix 0
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		exec "${HOSTCMD[@]}" mpirun --allow-run-as-root --oversubscribe -np "$np" --hostfile "$hf" \
		"${defs[@]}" "${opts[@]}" "${prog[@]}"
}

cmd_status() {
	load_config
	local i ns
	echo "cluster: N=$N rate=$RATE rate-at=${RATE_AT:-both} loss=$LOSS loss-at=${LOSS_AT:-ingress} burst=$(eff_burst) latency=${LATENCY}ms cross=$CROSS onoff=$CROSS_ONOFF flows=${CROSS_FLOWS:-1} sync=${CROSS_SYNC:-0} offload=${OFFLOAD:-0} fast=${FAST:-0} mtu=${MTU:-1500} stragglers=${STRAGGLERS:-none} tcp-cc=$(ip netns exec orc-h0 cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null || echo unknown)"
	echo "state: $STATE"
	for ((i = 0; i < N; i++)); do
		ns=orc-h$i
		echo "== h$i ($ns) $(ip -n "$ns" -o -4 addr show dev eth0 2>/dev/null | awk '{print $4}')" \
			"pin=$(cat "$STATE/pin.h$i" 2>/dev/null || echo none) procs=$(ip netns pids "$ns" 2>/dev/null | wc -l)"
		echo "   egress (host eth0):"
		tc -n "$ns" -s qdisc show dev eth0 2>/dev/null | sed 's/^/     /'
		echo "   ingress (switch h$i):"
		tc -n "$SW" -s qdisc show dev "h$i" 2>/dev/null | sed 's/^/     /'
		if [ -e "$STATE/loss.h$i" ]; then
			echo "   loss (iptables $(cat "$STATE/loss.h$i") -> ORC-LOSS):"
			ip netns exec "$ns" "$IPT" -w -L ORC-LOSS -n -v -x | sed 's/^/     /'
		else
			echo "   loss: none (no loss has been set)"
		fi
	done
	if [ -d "$STATE/pids" ]; then
		echo "== helpers"
		local f
		for f in "$STATE"/pids/*; do
			[ -f "$f" ] || continue
			if kill -0 "$(cat "$f")" 2>/dev/null; then echo "   $(basename "$f") pid $(cat "$f") running"; else echo "   $(basename "$f") pid $(cat "$f") gone"; fi
		done
	fi
}

# straggle H PERIOD_MS DUTY: forever, SIGSTOP the processes of host H for
# DUTY*PERIOD_MS of every PERIOD_MS, then SIGCONT them.  Helpers (crossgen),
# orted and mpirun are left alone, so only the application ranks stall.
cmd_straggle() {
	[ $# -eq 3 ] || die "usage: cluster.sh straggle H PERIOD_MS DUTY"
	[ -f "$STATE/config" ] && load_config
	local i period duty t_on t_off stopped="" p comm pids
	i=$(host_index "$1")
	period=$2 duty=$3
	check_uint PERIOD_MS "$period"
	t_on=$(awk -v p="$period" -v d="$duty" 'BEGIN { printf "%.4f", p * d / 1000 }')
	t_off=$(awk -v p="$period" -v d="$duty" 'BEGIN { printf "%.4f", p * (1 - d) / 1000 }')
	# shellcheck disable=SC2317,SC2086
	trap '[ -n "$stopped" ] && kill -CONT $stopped 2>/dev/null; exit 0' TERM INT HUP
	while :; do
		pids=$(ip netns pids "orc-h$i" 2>/dev/null) || true
		stopped=""
		for p in $pids; do
			comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue
			case $comm in orted | mpirun | orterun | prterun | crossgen) continue ;; esac
			stopped="$stopped $p"
		done
		# shellcheck disable=SC2086
		[ -n "$stopped" ] && kill -STOP $stopped 2>/dev/null
		sleep "$t_on"
		# shellcheck disable=SC2086
		[ -n "$stopped" ] && kill -CONT $stopped 2>/dev/null
		stopped=""
		sleep "$t_off"
	done
}

main() {
	local cmd=${1:-}
	[ $# -gt 0 ] && shift
	case $cmd in
	"" | -h | --help | help) usage; [ -n "$cmd" ]; exit $? ;;
	esac
	need_root
	case $cmd in
	up) cmd_up "$@" ;;
	down) cmd_down "$@" ;;
	set) cmd_set "$@" ;;
	run) cmd_run "$@" ;;
	exec) cmd_exec "$@" ;;
	status) cmd_status "$@" ;;
	straggle) cmd_straggle "$@" ;;
	tool) load_config; [ -x "$STATE/crossgen" ] || die "crossgen not built"; echo "$STATE/crossgen" ;;
	*) usage >&2; exit 2 ;;
	esac
}

main "$@"
