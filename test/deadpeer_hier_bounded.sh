#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A rank killed with SIGKILL, 4 ranks forked by test_deadpeer (no launcher): bounded mode,
# two hosts of two ranks (host_id), the second host's leader killed inside an operation.
exec timeout 120 "${top_builddir:-.}/test/test_deadpeer" -m bounded -w mid -HH
