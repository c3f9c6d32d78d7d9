# SPDX-License-Identifier: BSD-3-Clause
"""The ctypes structures of python/optireduce/_library.py against the C header.

_library.py mirrors the structs of include/optireduce.h by hand, and a field
added to C only makes Python read the wrong bytes without any error.  Here the
fields of each mirrored struct are read from the header itself, a small C
program compiled against the header prints their offsets and sizes, and every
ctypes.Structure whose docstring names "struct optireduce_X" must match it:
the same field names in the same order, offsets, sizes, kind of value, and
total size.

usage: struct_layout.py SRCDIR CC   (CC may be several words, e.g. "gcc -m32")
"""
import ctypes
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tempfile

srcdir, cc = sys.argv[1], sys.argv[2]
header = os.path.join(srcdir, "include", "optireduce.h")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def c_fields(text, struct):
    """[(name, C type text, array dims)] of a struct body, in declaration order.

    Declarations are "type name;", "type name[N];" or a function pointer
    "ret (*name)(args);"; anything else (several names, bit-fields, nested
    struct or union bodies, preprocessor lines) stops the test, so that the
    parser is extended rather than a field skipped.
    """
    m = re.search(r"\bstruct\s+%s\s*\{(.*?)\}\s*;" % re.escape(struct), text, re.S)
    if not m:
        sys.exit("ERROR: struct %s not found in %s" % (struct, header))
    body = re.sub(r"/\*.*?\*/", " ", m.group(1), flags=re.S)
    body = re.sub(r"//[^\n]*", " ", body)
    if re.search(r"[{}]|^\s*#", body, re.M):
        sys.exit("ERROR: struct %s: nested body or preprocessor line; extend %s"
                 % (struct, sys.argv[0]))
    fields = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        fp = re.fullmatch(r"(.+?)\(\s*\*\s*(\w+)\s*\)\s*\(.*\)", decl)
        if fp:
            fields.append((fp.group(2), fp.group(1).strip() + " (*)()", ""))
            continue
        plain = re.fullmatch(r"([\w\s\*]+?)\s*\b(\w+)\s*((?:\[[^\]]+\]\s*)*)", decl)
        if not plain or "," in decl or ":" in decl:
            sys.exit("ERROR: struct %s: cannot parse declaration %r; extend %s"
                     % (struct, decl, sys.argv[0]))
        fields.append((plain.group(2), plain.group(1).strip(), plain.group(3).replace(" ", "")))
    return fields


def c_layout(structs):
    """{struct: (sizeof, {field: (offset, size)})} from a program compiled with CC."""
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "optireduce.h"',
             "int main(void)", "{"]
    for struct, fields in structs.items():
        lines.append('\tprintf("%s - 0 %%zu\\n", sizeof(struct %s));' % (struct, struct))
        for name, _, _ in fields:
            lines.append('\tprintf("%s %s %%zu %%zu\\n", offsetof(struct %s, %s), '
                         'sizeof(((struct %s *)0)->%s));'
                         % (struct, name, struct, name, struct, name))
    lines += ["\treturn 0;", "}", ""]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "layout.c"), os.path.join(tmp, "layout")
        with open(src, "w") as f:
            f.write("\n".join(lines))
        cmd = shlex.split(cc) + ["-I" + os.path.join(srcdir, "include"), "-o", exe, src]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if r.returncode != 0:
            sys.exit("ERROR: %s failed:\n%s" % (" ".join(cmd), r.stdout))
        out = subprocess.run([exe], stdout=subprocess.PIPE, check=True,
                             universal_newlines=True).stdout
    layout = {}
    for line in out.splitlines():
        struct, name, off, size = line.split()
        if name == "-":
            layout[struct] = (int(size), {})
        else:
            layout[struct][1][name] = (int(off), int(size))
    return layout


def c_kind(ctype):
    """'pointer', 'struct X', 'float', 'signed', 'unsigned' or 'enum' for a C type text."""
    if "*" in ctype:
        return "pointer"
    words = ctype.replace("const", " ").split()
    if words[0] == "struct":
        return "struct " + words[1]
    if words[0] == "enum":
        return "enum"
    if words[-1] in ("float", "double"):
        return "float"
    if words[0] == "unsigned" or words[-1] == "size_t" or re.fullmatch(r"uint\d+_t", words[-1]):
        return "unsigned"
    return "signed"


UNSIGNED = {ctypes.c_ubyte, ctypes.c_ushort, ctypes.c_uint, ctypes.c_ulong, ctypes.c_ulonglong,
            ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t,
            ctypes.c_bool}


def py_kind(t, names):
    """The c_kind of a ctypes type (its element type for an array)."""
    while issubclass(t, ctypes.Array):
        t = t._type_
    if issubclass(t, ctypes.Structure):
        return "struct " + names.get(t, "?")
    if issubclass(t, (ctypes._Pointer, ctypes._CFuncPtr)) or \
            getattr(t, "_type_", "") in ("P", "z", "Z"):
        return "pointer"
    if t in (ctypes.c_float, ctypes.c_double, ctypes.c_longdouble):
        return "float"
    return "unsigned" if t in UNSIGNED else "signed"


spec = importlib.util.spec_from_file_location(
    "optireduce_library", os.path.join(srcdir, "python", "optireduce", "_library.py"))
lib = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lib)  # defines the classes; the library itself loads on first call

mirrors = {}
for cls in vars(lib).values():
    if isinstance(cls, type) and issubclass(cls, ctypes.Structure) and \
            cls.__module__ == lib.__name__:
        m = re.search(r"\bstruct (optireduce_\w+)", cls.__doc__ or "")
        if not m:
            fail("class %s: its docstring names no struct optireduce_*, so it cannot be "
                 "checked" % cls.__name__)
            continue
        mirrors[m.group(1)] = cls
names = {cls: struct for struct, cls in mirrors.items()}

with open(header) as f:
    text = f.read()
structs = {struct: c_fields(text, struct) for struct in sorted(mirrors)}
layout = c_layout(structs)

for struct, fields in structs.items():
    before = len(failures)
    cls = mirrors[struct]
    size, c_off = layout[struct]
    py = [f[0] for f in cls._fields_]
    c = [f[0] for f in fields]
    for name in c:
        if name not in py:
            fail("struct %s: field %s is in include/optireduce.h but not in %s._fields_ "
                 "(python/optireduce/_library.py)" % (struct, name, cls.__name__))
    for name in py:
        if name not in c:
            fail("struct %s: %s._fields_ has %s, which include/optireduce.h does not"
                 % (struct, cls.__name__, name))
    if py != c and set(py) == set(c):
        fail("struct %s: fields in another order: C %s, Python %s" % (struct, c, py))
    for (name, ctype, dims), (pname, ptype) in zip(fields, [f[:2] for f in cls._fields_]):
        if name != pname:
            continue
        off, fsize = c_off[name]
        desc = getattr(cls, name)
        if (desc.offset, desc.size) != (off, fsize):
            fail("struct %s: field %s at offset %d size %d in C, %d and %d in Python"
                 % (struct, name, off, fsize, desc.offset, desc.size))
        ck, pk = c_kind(ctype), py_kind(ptype, names)
        if ck != pk and not (ck == "enum" and pk in ("signed", "unsigned")):
            fail("struct %s: field %s is %s (%s%s) in C, %s in Python"
                 % (struct, name, ck, ctype, dims, pk))
    if ctypes.sizeof(cls) != size:
        fail("struct %s: sizeof %d in C, %d in Python" % (struct, size, ctypes.sizeof(cls)))
    print("%s %s: %d fields, %d bytes"
          % ("ok  " if len(failures) == before else "FAIL", struct, len(c), size))

# The status flags are read by name in Python; one missing there is a flag nobody sees.
for name, value in re.findall(r"#define\s+OPTIREDUCE_(STATUS_[A-Z_]+)\s+(0x[0-9a-fA-F]+)u?\b",
                              text):
    if getattr(lib, name, None) != int(value, 16):
        fail("#define OPTIREDUCE_%s %s: _library.py has %s = %r"
             % (name, value, name, getattr(lib, name, None)))

if failures:
    print("%d mismatch(es) between include/optireduce.h and python/optireduce/_library.py"
          % len(failures))
    sys.exit(1)
