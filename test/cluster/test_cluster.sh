#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test_cluster.sh - checks the emulated cloud (cluster.sh): 3 hosts, 100mbit,
# 20% loss at the receivers and at the senders (--loss-at), then cross traffic (--cross-flows, --cross-sync).  Exit 0 pass, 1 fail,
# 77 skip (not root, or ip/tc/iptables-legacy/mpirun/cc missing).  Takes about 15-20 s.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CL=$HERE/cluster.sh
STATE=${ORC_STATE_DIR:-/run/optireduce-cluster}
RATE_MBIT=100
LOSS=0.2

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }

[ "$(id -u)" -eq 0 ] || skip "needs root"
for c in ip tc iptables-legacy mpirun unshare setsid "${CC:-cc}"; do
	command -v "$c" >/dev/null 2>&1 || skip "'$c' not found"
done
if [ -e "$STATE/config" ] || ip netns list | grep -qE '^orc-'; then
	skip "a cluster is already up (cluster.sh down first); not touching it"
fi

trap '"$CL" down >/dev/null 2>&1 || true' EXIT

"$CL" up -n 3 --rate "${RATE_MBIT}mbit" --loss "$LOSS" || fail "cluster.sh up"
CG=$("$CL" tool)

# 0. The switch does not run iptables on bridged frames (br_netfilter's per-namespace switch).
if ip netns exec orc-sw sysctl -n net.bridge.bridge-nf-call-iptables >/dev/null 2>&1; then
	v=$(ip netns exec orc-sw sysctl -n net.bridge.bridge-nf-call-iptables)
	[ "$v" = 0 ] || fail "bridge-nf-call-iptables is $v in orc-sw; bridged frames go through iptables"
	ok "switch: bridge-nf-call-iptables 0"
fi

# 1. Every host reaches every other one (UDP echo; some loss tolerated).
for pair in 0:1 1:2 2:0; do
	a=${pair%:*} b=${pair#*:}
	out=$("$CL" exec "h$a" "$CG" probe "198.18.0.$((b + 1))" 5999 100 1000 300)
	rcv=$(sed -n 's/.*received=\([0-9]*\).*/\1/p' <<<"$out")
	[ "${rcv:-0}" -gt 20 ] || fail "h$a -> h$b: $out"
done
ok "all hosts reach each other"

if command -v ping >/dev/null 2>&1; then
	out=$("$CL" exec h0 ping -q -c 200 -i 0.002 -W 1 198.18.0.2 || true)
	pct=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' <<<"$out")
	# ping loses a round trip if either direction drops: 1-(1-p)^2 = 36%.
	awk -v x="${pct:-100}" 'BEGIN { exit !(x > 18 && x < 54) }' ||
		fail "ping round-trip loss ${pct:-?}% not near 36%: $out"
	ok "ping works, round-trip loss ${pct}% (expect 36%)"
else
	echo "note: ping (iputils-ping) not installed; using the UDP probe only"
fi

# 2. Measured loss: 2000 UDP round trips; one-way estimate 1-sqrt(recv/sent)
# has sd ~0.007 at p=0.2, so +-0.04 is about 6 sd.
out=$("$CL" exec h0 "$CG" probe 198.18.0.2 5999 2000 500 500)
ow=$(sed -n 's/.*oneway_loss=\([0-9.]*\).*/\1/p' <<<"$out")
awk -v x="${ow:-1}" -v p="$LOSS" 'BEGIN { exit !(x > p - 0.04 && x < p + 0.04) }' ||
	fail "one-way loss ${ow:-?} not within 0.04 of $LOSS ($out)"
ok "loss: $out"
pk=$(ip netns exec orc-h1 iptables-legacy -w -L ORC-LOSS -n -v -x | awk '$3 == "DROP" { print $1 }')
[ "${pk:-0}" -gt 0 ] || fail "iptables loss rule on h1 counted no drops"
ok "iptables ORC-LOSS on h1 dropped $pk packets"

# 2b. The same loss in each sender's OUTPUT chain (--loss-at egress): the probe's and the echo
# server's sends fail (EPERM, ignored by crossgen), the one-way loss is the same, and the
# jump has moved from INPUT to OUTPUT.
"$CL" set --loss "$LOSS" --loss-at egress >/dev/null || fail "cluster.sh set --loss-at egress"
ip netns exec orc-h0 iptables-legacy -w -S OUTPUT | grep -q -- '-o eth0 -j ORC-LOSS' ||
	fail "--loss-at egress: no OUTPUT jump to ORC-LOSS in h0"
! ip netns exec orc-h0 iptables-legacy -w -S INPUT | grep -q ORC-LOSS ||
	fail "--loss-at egress: INPUT still jumps to ORC-LOSS in h0"
ip netns exec orc-h0 iptables-legacy -w -Z ORC-LOSS
out=$("$CL" exec h0 "$CG" probe 198.18.0.2 5999 2000 500 500)
ow=$(sed -n 's/.*oneway_loss=\([0-9.]*\).*/\1/p' <<<"$out")
awk -v x="${ow:-1}" -v p="$LOSS" 'BEGIN { exit !(x > p - 0.04 && x < p + 0.04) }' ||
	fail "egress: one-way loss ${ow:-?} not within 0.04 of $LOSS ($out)"
pk=$(ip netns exec orc-h0 iptables-legacy -w -L ORC-LOSS -n -v -x | awk '$3 == "DROP" { print $1 }')
[ "${pk:-0}" -gt 0 ] || fail "egress: iptables loss rule on h0 counted no drops"
ok "egress loss: $out; ORC-LOSS in h0's OUTPUT dropped $pk packets"
"$CL" set --loss-at ingress >/dev/null || fail "cluster.sh set --loss-at ingress"
ip netns exec orc-h0 iptables-legacy -w -S INPUT | grep -q -- '-i eth0 -j ORC-LOSS' ||
	fail "--loss-at ingress: no INPUT jump to ORC-LOSS in h0"
! ip netns exec orc-h0 iptables-legacy -w -S OUTPUT | grep -q ORC-LOSS ||
	fail "--loss-at ingress: OUTPUT still jumps to ORC-LOSS in h0"
ok "set --loss-at moves the jump back to INPUT"

# 3. Rate limit (without loss, so TCP can fill the link): 5 MB h0 -> h1.
"$CL" set --loss 0 >/dev/null
before=$(tc -n orc-sw -s qdisc show dev h1 | awk '/Sent/ { print $2; exit }')
out=$("$CL" exec h0 "$CG" send 198.18.0.2 5999 5000000)
mbit=$(sed -n 's/.*mbit=\([0-9.]*\).*/\1/p' <<<"$out")
awk -v x="${mbit:-0}" -v r="$RATE_MBIT" 'BEGIN { exit !(x < 1.3 * r && x > 0.5 * r) }' ||
	fail "throughput ${mbit:-?} mbit/s not in (0.5, 1.3) x ${RATE_MBIT}mbit: $out"
after=$(tc -n orc-sw -s qdisc show dev h1 | awk '/Sent/ { print $2; exit }')
[ $((after - before)) -ge 5000000 ] || fail "switch-side tbf toward h1 saw only $((after - before)) bytes"
ok "rate: $out (limit ${RATE_MBIT}mbit; ingress tbf passed $((after - before)) bytes)"
"$CL" set --loss "$LOSS" >/dev/null

# 3b. The host's own queue holds at least 256 KiB + burst (a UDP send buffer's worth and
# more): at 50 Mbit/s tbf reports that as about 42 ms; the switch port keeps 20 ms.
"$CL" set --rate 50mbit >/dev/null || fail "cluster.sh set --rate 50mbit"
lat_of() { tc -n "$1" qdisc show dev "$2" | sed -n 's/.* lat \([0-9.]*\)ms.*/\1/p'; }
egress=$(lat_of orc-h0 eth0) ingress=$(lat_of orc-sw h0)
awk -v e="${egress:-0}" -v i="${ingress:-0}" 'BEGIN { exit !(e >= 41 && i < 25) }' ||
	fail "50mbit: egress queue ${egress:-?} ms (want >= 41: 256 KiB), ingress ${ingress:-?} ms (want 20)"
ok "50mbit: the host's egress queue is ${egress} ms (256 KiB + burst), the switch port's ${ingress} ms"
"$CL" set --rate "${RATE_MBIT}mbit" >/dev/null

# 4. mpirun: one rank per host, each in its own namespace (with 20% loss on).
# shellcheck disable=SC2016
out=$(timeout 45 "$CL" run -n 3 -- /bin/sh -c \
	'echo RANK $OMPI_COMM_WORLD_RANK $(hostname) $(ip -o -4 addr show dev eth0 | grep -o "198\.18\.[0-9.]*")' \
	</dev/null) || fail "cluster.sh run failed: $out"
got=$(grep '^RANK ' <<<"$out" | sort)
want=$(printf 'RANK 0 orc-h0 198.18.0.1\nRANK 1 orc-h1 198.18.0.2\nRANK 2 orc-h2 198.18.0.3')
[ "$got" = "$want" ] || fail "mpirun ranks/namespaces wrong; got:
$out"
ok "mpirun placed rank i in orc-hI: $(tr '\n' ';' <<<"$got")"

# 5. Cross traffic: 2 flows per host, each to its own peer, on one shared ON/OFF
# schedule (--cross-sync: one seed, one epoch), and it moves bytes; with --offload
# (refused together with loss) the veths keep their offloads.
"$CL" down >/dev/null || fail "cluster.sh down before the cross-traffic check"
if "$CL" up -n 2 --offload --loss 0.1 >/dev/null 2>&1; then fail "--offload with --loss was accepted"; fi
[ -z "$(ip netns list | grep -E '^orc-' || true)" ] || fail "a refused up left namespaces"
# --tcp-cc: every host gets the congestion control asked for; one the kernel lacks is refused.
if "$CL" up -n 1 --tcp-cc no-such-cc >/dev/null 2>&1; then fail "--tcp-cc no-such-cc was accepted"; fi
[ -z "$(ip netns list | grep -E '^orc-' || true)" ] || fail "a refused --tcp-cc left namespaces"
cc=$(awk '{print $NF}' /proc/sys/net/ipv4/tcp_available_congestion_control)
"$CL" up -n 2 --tcp-cc "$cc" >/dev/null || fail "cluster.sh up --tcp-cc $cc"
for h in 0 1; do
	got=$(ip netns exec "orc-h$h" cat /proc/sys/net/ipv4/tcp_congestion_control)
	[ "$got" = "$cc" ] || fail "--tcp-cc $cc: orc-h$h has $got"
done
# status is read whole first: grep -q would close the pipe under pipefail.
st=$("$CL" status)
grep -q "tcp-cc=$cc" <<<"$st" || fail "status does not say tcp-cc=$cc"
"$CL" down >/dev/null || fail "cluster.sh down after --tcp-cc"
ok "--tcp-cc $cc on every host, an unknown one refused"
"$CL" up -n 3 --rate "${RATE_MBIT}mbit" --cross-traffic max --cross-onoff 300:300 \
	--cross-flows 2 --cross-sync --offload >/dev/null || fail "cluster.sh up with cross traffic"
if command -v ethtool >/dev/null 2>&1; then
	ip netns exec orc-h1 ethtool -k eth0 | grep -q '^generic-segmentation-offload: on' ||
		fail "--offload: GSO is off on orc-h1 eth0"
fi
# GSO packets must fit the tbf bucket, or tbf segments them in software (see cluster.sh);
# the set size leaves one frame for the segments' headers, tc shows the bucket rounded.
burst=$(tc -n orc-h1 qdisc show dev eth0 | sed -n 's/.* burst \([0-9]*\)b.*/\1/p')
for where in "orc-h1 eth0" "orc-sw h1"; do
	set -- $where
	gso=$(ip -d -n "$1" link show dev "$2" | sed -n 's/.* gso_max_size \([0-9]*\).*/\1/p')
	[ -n "$burst" ] && [ -n "$gso" ] && [ "$gso" -le $((burst - 1024)) ] ||
		fail "--offload: gso_max_size ${gso:-?} on $where does not fit the tbf burst ${burst:-?}"
done
# A loss-free cluster makes no filter table in its hosts: every packet would walk it.
tables=$(ip netns exec orc-h0 cat /proc/net/ip_tables_names 2>/dev/null || true)
[ -z "$tables" ] || fail "loss-free cluster: h0 has iptables tables: $tables"
flows=()
for p in $(pgrep -f "crossgen bulk" || true); do
	flows+=("$(ip netns identify "$p") $(tr '\0' ' ' <"/proc/$p/cmdline" | sed 's/.*crossgen bulk //')")
done
[ "${#flows[@]}" -eq 6 ] || fail "want 6 crossgen bulk flows (3 hosts x 2), got ${#flows[@]}: ${flows[*]:-}"
# Each line: NS DEST PORT RATE ON OFF SEED EPOCH.
pairs=$(printf '%s\n' "${flows[@]}" | awk '{ print $1, $2 }' | sort -u | wc -l)
[ "$pairs" -eq 6 ] || fail "flows of a host share a destination: ${flows[*]}"
self=$(printf '%s\n' "${flows[@]}" | awk '{ sub("orc-h", "", $1); if ($2 == "198.18.0." ($1 + 1)) print }')
[ -z "$self" ] || fail "a flow goes to its own host: $self"
sched=$(printf '%s\n' "${flows[@]}" | awk '{ print $7, $8 }' | sort -u | wc -l)
[ "$sched" -eq 1 ] || fail "--cross-sync flows do not share one seed and epoch: ${flows[*]}"
b0=$(tc -n orc-sw -s qdisc show dev h1 | awk '/Sent/ { print $2; exit }')
sleep 2
b1=$(tc -n orc-sw -s qdisc show dev h1 | awk '/Sent/ { print $2; exit }')
# 2 s at 100 Mbit/s, ON half the time: ~12 MB; at least a tenth of it.
[ $((b1 - b0)) -gt 1200000 ] || fail "cross traffic toward h1: only $((b1 - b0)) bytes in 2 s"
ok "cross traffic (--offload): no iptables table on a loss-free host; GSO packets ($gso B) fit the bucket ($burst B), 6 flows, distinct destinations per host, one schedule, $((b1 - b0)) bytes to h1 in 2 s; --offload with --loss refused"

# 6. down removes everything.
"$CL" down >/dev/null || fail "cluster.sh down"
left=$(ip netns list | grep -E '^orc-' || true)
[ -z "$left" ] || fail "namespaces left after down: $left"
[ ! -e "$STATE" ] || fail "state dir $STATE left after down"
"$CL" down >/dev/null || fail "second cluster.sh down (idempotence)"
ok "down removed namespaces and state"
echo "PASS"
