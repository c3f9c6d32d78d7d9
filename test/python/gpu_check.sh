#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU check in one go, for a machine with CUDA and torch 2.x but no libfabric and no
# network (README.md, "GPUs").  Two steps:
#
#   test/python/gpu_check.sh prepare [BUILD]   on a machine that built the library (BUILD,
#       default build/): BUILD/gpu-bundle/ (ignored by git, as all of BUILD) gets the
#       built library, optireduce_info and test_wake, and every shared object they and
#       libfabric need except glibc's own (ldd's closure of this machine's Debian 12
#       packages: libfabric1, libpsm2-2, libpsm-infinipath1, libibverbs1, librdmacm1,
#       ibverbs-providers (libefa), libnl-3-200, libnl-route-3-200, libnuma1, libhwloc15,
#       libatomic1, libuuid1, libudev1), and MANIFEST saying what and from where.  The same
#       from packages instead of this machine's files:
#           apt-get download libfabric1 libpsm2-2 libpsm-infinipath1 libibverbs1 \
#               librdmacm1 ibverbs-providers libnl-3-200 libnl-route-3-200 libnuma1 \
#               libhwloc15 libatomic1 libuuid1 libudev1
#           for d in *.deb; do dpkg -x "$d" root; done
#           cp -L root/usr/lib/x86_64-linux-gnu/*.so.* root/lib/x86_64-linux-gnu/*.so.* \
#               BUILD/gpu-bundle/lib/
#   test/python/gpu_check.sh [run] [BUNDLE]    on the GPU machine, from the repository's
#       root, with BUNDLE (default build/gpu-bundle) carried along: loads the library from
#       BUNDLE/lib (LD_LIBRARY_PATH, OPTIREDUCE_LIBRARY) and the package from python/, then
#       runs and prints, each step under a timeout (570 s in all at most, so that one
#       command of 10 minutes holds it; a few minutes when it passes):
#         1. optireduce_info: the library loads, providers on loopback;
#         2. test_wake: submission latency with optireduce_comm_wake (P99 < 200 us on
#            tcp;ofi_rxm; the default provider and shared memory printed);
#         3. test/python/torch_ddp.py and torch_backend.py, 2 ranks: the CPU tests on
#            this torch (2.x);
#         4. test/python/gpu_ddp.py, 2 ranks, then 4 with --quick: CUDA buckets, hook and
#            backend, exact and bounded;
#         5. bench/gpu_staging.py, 2 ranks, 1-100 MB buckets: copy times against the
#            allreduce, overlap (JSON also to $OUT if set); then 25 MB with the ranks
#            in shared memory (hierarchy 1, the default on one host).
#       The last line is "gpu_check: N passed, M failed, K skipped".  Exit 0 when nothing
#       failed and something ran, 77 when every step skipped (no CUDA or no torch 2.x:
#       what this script does on the development machines), 1 otherwise.
#
# Where a device tool runs it: prepare here, then with carry ["build/gpu-bundle"] and a
# limit of 590 s:
#     test/python/gpu_check.sh run build/gpu-bundle
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
mode=${1:-run}
case $mode in
prepare)
	build=${2:-build}
	lib=$build/.libs/liboptireduce.so.0
	[ -e "$lib" ] || { echo "gpu_check: no $lib: build first (README.md)"; exit 1; }
	dir=$build/gpu-bundle
	rm -rf "$dir" && mkdir -p "$dir/lib" "$dir/bin" || exit 1
	cp -L "$lib" "$dir/lib/" || exit 1
	for b in tools/.libs/optireduce_info test/unit/.libs/test_wake; do
		[ -e "$build/$b" ] || [ "$b" != test/unit/.libs/test_wake ] ||
			make -C "$build" test/unit/test_wake >/dev/null || exit 1
		cp "$build/$b" "$dir/bin/" || exit 1
	done
	fabric=$(ldconfig -p | awk '/libfabric\.so\.1 / { print $NF; exit }')
	[ -n "$fabric" ] || { echo "gpu_check: no libfabric.so.1 here (apt-get install libfabric1)"; exit 1; }
	{
		echo "gpu-bundle made $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n) from $(cd "$here" &&
			git rev-parse --short HEAD 2>/dev/null)"
		echo "glibc needed: $(objdump -T "$lib" "$fabric" 2>/dev/null |
			grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
	} >"$dir/MANIFEST"
	# ldd's closure of the library, libfabric and the programs, less glibc's own objects.
	ldd "$lib" "$fabric" "$dir"/bin/* 2>/dev/null |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
		grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' |
		while read -r so; do
			cp -L "$so" "$dir/lib/" || exit 1
			pkg=$(dpkg -S "$(basename "$(readlink -f "$so")")" 2>/dev/null | cut -d: -f1 | head -n 1)
			echo "$(basename "$so") ${pkg:-?}" >>"$dir/MANIFEST"
		done
	cp -L "$fabric" "$dir/lib/" || exit 1
	grep -q '^libfabric' "$dir/MANIFEST" || echo "libfabric.so.1 libfabric1" >>"$dir/MANIFEST"
	cat "$dir/MANIFEST"
	echo "gpu_check: $dir, $(du -sh "$dir" | cut -f1); carry it to the GPU machine"
	exit 0
	;;
run) dir=${2:-build/gpu-bundle} ;;
*)
	echo "usage: gpu_check.sh prepare [BUILD] | gpu_check.sh [run] [BUNDLE]"
	exit 2
	;;
esac

cd "$here" || exit 1
[ -d "$dir/lib" ] || { echo "gpu_check: no $dir/lib: run 'gpu_check.sh prepare' first"; exit 1; }
dir=$(cd "$dir" && pwd)
LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OPTIREDUCE_LIBRARY=$dir/lib/liboptireduce.so.0
PYTHONPATH=$here/python${PYTHONPATH:+:$PYTHONPATH}
# As test/python/run.sh: loopback, ranks on hosts of their own, no repair.
GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 OPTIREDUCE_HIERARCHY=0 OPTIREDUCE_REPAIR=0
export LD_LIBRARY_PATH OPTIREDUCE_LIBRARY PYTHONPATH GLOO_SOCKET_IFNAME OMP_NUM_THREADS \
	OPTIREDUCE_HIERARCHY OPTIREDUCE_REPAIR
passed=0 failed=0 skipped=0
step() { # step NAME TIMEOUT COMMAND...: run it, count its exit status
	name=$1 limit=$2
	shift 2
	echo "== $name"
	start=$(date +%s)
	timeout "$limit" "$@"
	rc=$?
	took=$(($(date +%s) - start))
	case $rc in
	0) passed=$((passed + 1)) ; echo "== $name: passed (${took} s)" ;;
	77) skipped=$((skipped + 1)) ; echo "== $name: skipped (${took} s)" ;;
	*) failed=$((failed + 1)) ; echo "== $name: FAILED, exit $rc (${took} s)" ;;
	esac
}
cat "$dir/MANIFEST" 2>/dev/null | head -n 2
echo "this machine: $(uname -n), $(nproc) CPUs, $(ldd --version 2>/dev/null | head -n 1)"
py=
for c in "${PYTHON:-}" python3 /usr/bin/python3; do
	[ -n "$c" ] && "$c" -c 'import torch' >/dev/null 2>&1 && { py=$c; break; }
done
step "optireduce_info" 20 "$dir/bin/optireduce_info"
step "test_wake: hand-over latency, default provider, printed" 30 "$dir/bin/test_wake" -m exact
step "test_wake: tcp;ofi_rxm, P99 < 200 us" 30 "$dir/bin/test_wake" -m exact \
	-p 'tcp;ofi_rxm' -b 200
step "test_wake: ranks in shared memory, printed" 20 "$dir/bin/test_wake" -m exact -H -r 2
if [ -z "$py" ]; then
	echo "gpu_check: no Python with torch: the Python steps skip"
	skipped=$((skipped + 6))
else
	"$py" -c 'import torch, sys; print("torch", torch.__version__, "CUDA",
		torch.version.cuda, "devices", torch.cuda.device_count(), "python", sys.version.split()[0])'
	step "torch_ddp.py (CPU tensors), 2 ranks" 90 "$py" test/python/torch_ddp.py --np 2
	step "torch_backend.py (CPU tensors), 2 ranks" 60 "$py" test/python/torch_backend.py --np 2
	step "gpu_ddp.py, 2 ranks" 120 "$py" test/python/gpu_ddp.py --np 2
	step "gpu_ddp.py --quick, 4 ranks" 70 "$py" test/python/gpu_ddp.py --np 4 --quick
	step "bench/gpu_staging.py, 2 ranks" 100 "$py" bench/gpu_staging.py --np 2 \
		${OUT:+--json "$OUT/gpu_staging.json"}
	# The same 25 MB buckets between ranks that meet in shared memory (the default on
	# one host): the allreduce the copies are weighed against is a memory copy's speed.
	step "bench/gpu_staging.py, 2 ranks in shared memory, 25 MB" 40 \
		env OPTIREDUCE_HIERARCHY=1 "$py" bench/gpu_staging.py --np 2 --sizes 25 --rounds 2 \
		${OUT:+--json "$OUT/gpu_staging_shm.json"}
fi
echo "gpu_check: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -gt 0 ] && exit 1
[ "$passed" -eq 0 ] && exit 77
# On a machine without CUDA or torch 2.x the GPU steps skip: say so by the exit status.
[ -n "$py" ] && ! "$py" -c 'import torch, sys
sys.exit(0 if torch.cuda.is_available() and int(torch.__version__.split(".")[0]) >= 2 else 1)' &&
	exit 77
exit 0
