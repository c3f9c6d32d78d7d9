#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The staging of CUDA tensors through pinned memory, with torch.cuda replaced by stand-ins
# (test/python/staging_fake.py): order, streams, buffer reuse, errors, without a GPU.
exec "${top_srcdir:-.}/test/python/run.sh" 1 "${top_srcdir:-.}/test/python/staging_fake.py"
