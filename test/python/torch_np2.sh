#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The PyTorch hook and all_reduce on 2 ranks (test/python/torch_ddp.py).
exec "${top_srcdir:-.}/test/python/run.sh" 2 "${top_srcdir:-.}/test/python/torch_ddp.py"
