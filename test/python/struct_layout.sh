#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The ctypes structures of the Python package against include/optireduce.h
# (test/python/struct_layout.py).  It needs Python with ctypes and a C compiler,
# not torch nor the built library: exit 77 when either is missing.  The compiler
# is configure's ($OPTIREDUCE_TEST_CC), else cc, so the layout is the build's ABI.
py=
for c in "${PYTHON:-}" /usr/bin/python3; do
	[ -n "$c" ] && [ "$c" != : ] && "$c" -c 'import ctypes' >/dev/null 2>&1 && { py=$c; break; }
done
[ -n "$py" ] || { echo "no Python with ctypes: skip"; exit 77; }
cc=${OPTIREDUCE_TEST_CC:-cc}
command -v ${cc%% *} >/dev/null 2>&1 || { echo "no C compiler ($cc): skip"; exit 77; }
exec "$py" "${top_srcdir:-.}/test/python/struct_layout.py" "${top_srcdir:-.}" "$cc"
