#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test/python/torch_ddp.py on 2 ranks that torchrun starts and rendezvouses (env://).
exec "${top_srcdir:-.}/test/python/run.sh" --torchrun 2 "${top_srcdir:-.}/test/python/torch_ddp.py"
