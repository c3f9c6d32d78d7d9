#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test/python/gpu_ddp.py --cpu --quick on 2 ranks: the GPU test's own checks on host
# tensors, so that they keep working where the GPU run (gpu_ddp_np2.sh) skips.
exec "${top_srcdir:-.}/test/python/run.sh" 2 "${top_srcdir:-.}/test/python/gpu_ddp.py" \
	--cpu --quick
