#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make check's run of tools/check_layout.py: no include or call circle among the library's
# files, no file over 500 lines, no function over 80.  OPTIREDUCE_LAYOUT_OBJECTS (set by
# make) lists liboptireduce's objects for the call graph.  77 (skip) without python3 or nm.
command -v python3 >/dev/null 2>&1 || { echo "check_layout: no python3"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "check_layout: no nm"; exit 77; }
exec python3 "${top_srcdir:-.}/tools/check_layout.py" "${top_srcdir:-.}" $OPTIREDUCE_LAYOUT_OBJECTS
