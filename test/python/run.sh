#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run.sh [--torchrun] NP SCRIPT [ARGS...]: run a PyTorch test of the Python package with NP
# ranks on loopback, which the script spawns (or torchrun starts, the script then given
# --launched), against the build tree's package and library.  Exit 77
# when no Python with torch is found: $PYTHON (from configure), else Debian's
# /usr/bin/python3, which is the interpreter python3-torch serves.
launcher=spawn
[ "$1" = --torchrun ] && { launcher=torchrun; shift; }
np=$1
script=$2
shift 2
py=
for c in "${PYTHON:-}" /usr/bin/python3; do
	[ -n "$c" ] && [ "$c" != : ] && "$c" -c 'import torch' >/dev/null 2>&1 && { py=$c; break; }
done
[ -n "$py" ] || { echo "no Python with torch (python3-torch): skip"; exit 77; }
PYTHONPATH=${top_builddir:-.}/python${PYTHONPATH:+:$PYTHONPATH}
# Gloo and the library stay on loopback; ranks may outnumber cores.  The ranks stand for
# hosts of their own (OPTIREDUCE_HIERARCHY=0), so the bounded path and bucket overlap run
# over the network channels rather than through shared memory.  Repair is off
# (OPTIREDUCE_REPAIR=0): on loopback it recovers nearly every injected loss, and these
# tests check the estimate of what is lost; repair is judged by mpi_bounded.
GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 OPTIREDUCE_HIERARCHY=${OPTIREDUCE_HIERARCHY:-0}
OPTIREDUCE_REPAIR=${OPTIREDUCE_REPAIR:-0}
export PYTHONPATH GLOO_SOCKET_IFNAME OMP_NUM_THREADS OPTIREDUCE_HIERARCHY OPTIREDUCE_REPAIR
# Built with AddressSanitizer (configure --enable-asan): the interpreter is not, so the
# sanitizer's runtime is preloaded ahead of the library that ctypes loads; Python's own
# allocations at exit are not the library's leaks.
asan=$(ldd "${top_builddir:-.}/.libs/liboptireduce.so" 2>/dev/null |
	awk '/libasan/ { print $3; exit }')
if [ -n "$asan" ]; then
	# With libstdc++ loaded from the start too: torch's threads throw C++ exceptions (its
	# store does, as torchrun's ranks leave), and the sanitizer's __cxa_throw interceptor
	# must find the real one when it starts, or the process aborts.
	cxx=$(ldconfig -p 2>/dev/null | awk '/libstdc\+\+\.so\.6 / { print $NF; exit }')
	LD_PRELOAD=$asan${cxx:+:$cxx}${LD_PRELOAD:+:$LD_PRELOAD}
	ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	export LD_PRELOAD ASAN_OPTIONS
fi
[ $launcher = spawn ] && exec timeout 300 "$py" "$script" --np "$np" "$@"
# Debian 12's torchrun (torch 1.13 on Python 3.11) cannot parse its default --redirects and
# --tee ("0"); a map that names no rank it starts means the same.
exec timeout 300 "$py" -m torch.distributed.run --standalone --nproc_per_node "$np" \
	--redirects 9:1 --tee 9:1 "$script" --launched "$@"
