#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Bounded tree on 4 ranks (tree B mirrored; np3 has it shifted, with a rank that is a leaf
# of both trees): the error of every rank follows the tree's theory (tree_theory in
# mpi_bounded.c).
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 "${top_builddir:-.}/test/mpi_bounded" -q tree
