#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The PyTorch hook and all_reduce on 3 ranks (test/python/torch_ddp.py).
exec "${top_srcdir:-.}/test/python/run.sh" 3 "${top_srcdir:-.}/test/python/torch_ddp.py"
