#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Settings and life cycle of the interposer, one run per mode (test/pmpi/pmpi_modes.c).
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
run="${top_srcdir:-.}/test/pmpi/run-pmpi.sh"
prog="${top_builddir:-.}/test/pmpi/pmpi_modes"
passed=0
for mode in disabled badpolicy unavailable threads threads-ok; do
	case $mode in
	disabled) env="-x OPTIREDUCE_PMPI_ENABLE=0" ;;
	badpolicy) env="-x OPTIREDUCE_PMPI_BOUNDED=float,int:>=64k" ;;
	unavailable) env="-x OPTIREDUCE_PROVIDER=bogus -x OPTIREDUCE_LOG_LEVEL=0" ;;
	threads) env="" ;;
	threads-ok) env="-x OPTIREDUCE_PMPI_THREAD_MULTIPLE=1" ;;
	esac
	# shellcheck disable=SC2086 # $env is a list of words
	"$run" 2 $env "$prog" "$mode"
	rc=$?
	case $rc in
	0) passed=$((passed + 1)) ;;
	77) ;;
	*) echo "mode $mode failed ($rc)"; exit "$rc" ;;
	esac
done
[ "$passed" -gt 0 ] || exit 77
