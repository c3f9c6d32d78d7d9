#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Multicast under bounded Transpose on 4 ranks of this host (hierarchy=0, multicast=on: the
# group over the host's loopback): every rank on, results within the transform's rounding,
# phase 2 sent to the group only, two communicators without cross-talk.  Skipped (77) where
# this host cannot join a group (no route for 239.192.0.0/14).
export OPTIREDUCE_HIERARCHY=0 OPTIREDUCE_MULTICAST=on
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 "${top_builddir:-.}/test/mpi_multicast" on
