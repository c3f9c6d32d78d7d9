#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The "optireduce" torch.distributed backend on 2 ranks (test/python/torch_backend.py).
exec "${top_srcdir:-.}/test/python/run.sh" 2 "${top_srcdir:-.}/test/python/torch_backend.py"
