#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# 4 ranks forked by test_deadpeer, exact mode: a rank stopped (SIGSTOP) inside an operation
# and continued once the others failed; what it sends on waking reaches operations given
# up (their receives cancelled), and it fails too, within the same bound.
exec timeout 120 "${top_builddir:-.}/test/test_deadpeer" -m exact -w stop
