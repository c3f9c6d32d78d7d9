#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A rank killed with SIGKILL, 4 ranks forked by test_deadpeer (no launcher): bounded mode,
# the ring, killed inside an operation: only its right neighbour expects data from it, the
# FAILED notice tells the others.
exec timeout 120 "${top_builddir:-.}/test/test_deadpeer" -m bounded -w mid -a ring
