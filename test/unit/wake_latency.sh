#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Submission latency (test_wake): an operation handed to a progress call asleep on
# tcp;ofi_rxm's descriptor starts with P50 under 200 us when optireduce_comm_wake is
# called; the P99 is printed (skipped without that provider).  Printed only: the default
# provider, whose wait the wake-up ends after at most 1 ms; the same without the wake-up
# (the 2 ms poll it replaces); a bounded communicator.
t=${top_builddir:-.}/test/unit/test_wake
timeout 120 "$t" -m exact -p 'tcp;ofi_rxm' -b 200 || exit $?
timeout 120 "$t" -m exact -r 2 || exit 1
timeout 120 "$t" -m exact -W -r 2 || exit 1
timeout 120 "$t" -m bounded -r 2 || exit 1
# Ranks meeting in shared memory (hierarchy): printed, and the progress call must wait.
timeout 120 "$t" -m exact -H -r 2 || exit 1
