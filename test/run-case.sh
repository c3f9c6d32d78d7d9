#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run-case.sh test/KIND/NAME.case: run the multi-rank test case KIND/NAME of test/cases.list
# (the file make writes as test/KIND/NAME.case only names the case; make check runs this
# script on it).  A case of several lines runs them in turn and stops at the first that
# does not pass; its status is the test's: 0 pass, 77 skip, anything else fail.
#   make check TESTS=test/mpi/mpi_bounded_np2.case      # one case
#   top_srcdir=.. top_builddir=. ../test/run-case.sh test/mpi/mpi_bounded_np2.case
s=${top_srcdir:-.}
b=${top_builddir:-.}
list=$s/test/cases.list
[ $# -eq 1 ] || { echo "usage: run-case.sh test/KIND/NAME.case" >&2; exit 99; }
name=$(basename "$(dirname "$1")")/$(basename "$1" .case)
[ -r "$list" ] || { echo "$list: not found" >&2; exit 99; }

# One line of the case: RANKS LAUNCH [param=value...] PROGRAM [ARGS...], in a subshell so
# that its settings do not reach the next line.
run_line() {
	ranks=$1 launch=$2
	shift 2
	# Leading lower-case NAME=VALUE words are library parameters, OPTIREDUCE_NAME=VALUE
	# in the environment of every rank (exported, and named to mpirun with -x).
	xs='' params=''
	while [ $# -gt 0 ]; do
		case $1 in
		[a-z]*=*) ;;
		*) break ;;
		esac
		var=OPTIREDUCE_$(printf '%s' "${1%%=*}" | tr '[:lower:]' '[:upper:]')
		export "$var=${1#*=}"
		xs="$xs -x $var"
		params="$params $1"
		shift
	done
	# Paths in the tree: the build's file (a program), else the source's (a script).
	for w do
		shift
		case $w in
		test/* | examples/* | bench/* | tools/*)
			if [ -e "$b/$w" ]; then
				w=$b/$w
			elif [ -e "$s/$w" ]; then
				w=$s/$w
			else
				echo "$w: not built here: skipping"
				exit 77
			fi
			;;
		esac
		set -- "$@" "$w"
	done
	case $launch in
	*+mcast)
		"$b/tools/optireduce_info" -t 2>/dev/null | grep -q '^Multicast: on; .* joined' ||
			{ echo "this host cannot join a multicast group: skip"; exit 77; }
		;;
	*+asan)
		# Built with AddressSanitizer and UBSan; leak checking is off (Open MPI's own
		# allocations at exit would drown the report); liboptireduce from the build.
		ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
		UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
		export ASAN_OPTIONS UBSAN_OPTIONS
		libs=$(cd "$b" && pwd)/.libs
		xs="$xs -x ASAN_OPTIONS -x UBSAN_OPTIONS -x LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		;;
	esac
	echo "case $name: $launch, $ranks ranks,${params:- no parameters}: $*"
	# shellcheck disable=SC2086 # $xs: words without blanks
	case ${launch%+*} in
	mpirun) exec "$s/test/run-mpi.sh" "$ranks" $xs "$@" ;;
	pmpi) exec "$s/test/pmpi/run-pmpi.sh" "$ranks" $xs "$@" ;;
	fork) exec timeout 120 "$@" ;;
	fortran) exec "$s/test/pmpi/run-fortran.sh" "$@" ;;
	torch) exec "$s/test/python/run.sh" "$ranks" "$@" ;;
	torchrun) exec "$s/test/python/run.sh" --torchrun "$ranks" "$@" ;;
	*) echo "case $name: unknown launcher '$launch'" >&2; exit 99 ;;
	esac
}

# The case's lines (a line ending in a backslash goes on on the next), comments left out.
lines=$(sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta' "$list" |
	awk -v n="$name" '$1 == n { $1 = ""; print }')
[ -n "$lines" ] || { echo "no case '$name' in test/cases.list" >&2; exit 99; }
set -f
rc=0
while IFS= read -r line <&3; do
	# shellcheck disable=SC2086 # the line's words
	(run_line $line)
	rc=$?
	[ $rc -eq 0 ] || break
done 3<<EOF
$lines
EOF
exit $rc
