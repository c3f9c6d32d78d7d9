#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The single-process tests under valgrind's memcheck: no invalid access, no use of an
# uninitialised value, no definite or indirect leak (test/unit/valgrind.supp lists the
# libraries' own).  One line per program, "PASS: name" or "FAIL: name", then the valgrind
# report of each failure.  test_reduce and test_hadamard_estimator are left out: they
# drive the arithmetic kernels over large synthetic arrays (72 s and 10 min under
# valgrind on two CPUs), and the AddressSanitizer build's "make check" runs them.
# Skipped (77) without valgrind, and in a build made with --enable-asan.
b=${top_builddir:-.}
s=${top_srcdir:-.}
command -v valgrind >/dev/null 2>&1 || { echo "valgrind not found: skipping"; exit 77; }
if [ "${OPTIREDUCE_ASAN_BUILD:-no}" = yes ]; then
	echo "built with AddressSanitizer, which valgrind cannot run: skipping"
	exit 77
fi
failed=0
for t in test/unit/test_wire test/unit/test_api test/unit/test_hadamard test/unit/test_timeout \
	test/unit/test_timeout_adapt test/unit/test_tree_shape test/unit/test_pacing \
	test/unit/test_liveness test/unit/test_topology test/unit/test_placement test/pmpi/test_policy \
	test/fuzz/replay_wire test/fuzz/replay_rx test/fuzz/replay_udp test/unit/test_udp; do
	log=$b/$t.valgrind.log
	"$b/libtool" --mode=execute valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
		--suppressions="$s/test/unit/valgrind.supp" "$b/$t" >"$log" 2>&1
	rc=$?
	if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then
		echo "PASS: $t"
	else
		echo "FAIL: $t (exit $rc; $log)"
		grep '^==[0-9]*==' "$log" | head -40
		failed=1
	fi
done
exit $failed
