#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# CUDA buckets through the hook and the backend on 2 ranks (test/python/gpu_ddp.py); skips
# (77) without CUDA or torch 2.x, as on the development machines.  test/python/gpu_check.sh
# runs it on a GPU machine with everything else the GPU check needs.
exec "${top_srcdir:-.}/test/python/run.sh" 2 "${top_srcdir:-.}/test/python/gpu_ddp.py"
