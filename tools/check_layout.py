#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The library's layout rules, checked (docs/design.md, "Layout"; run by make check).

  1. no circle in the file-level include graph of the library's sources;
  2. no circle in the file-level call graph of liboptireduce's objects: an edge from
     a.o to b.o when a.o leaves undefined a symbol that b.o defines (nm);
  3. no source file over MAX_FILE_LINES lines, no function over MAX_FUNC_LINES.

Each violation is printed on a line of its own.  A violation of a file named by a
prefix in the allow-list (tools/layout_allow.txt) is printed as "allowed" and does not
fail the check; a circle is allowed only when it has no circle left once the allowed
files are taken out of the graph.

Usage: check_layout.py SRCDIR [OBJECT.lo|OBJECT.o ...]
Without objects, rule 2 is not checked.
"""
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 500
MAX_FUNC_LINES = 80
SOURCE_DIRS = ("lib", "ofi", "udp", "dgram", "algorithms")
INCLUDE_DIRS = ("", "include")  # -I$(top_srcdir) -I$(top_srcdir)/include


def read_allow(srcdir):
    path = os.path.join(srcdir, "tools", "layout_allow.txt")
    prefixes = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    prefixes.append(line)
    return prefixes


def allowed(path, prefixes):
    return any(path.startswith(p) for p in prefixes)


def sources(srcdir):
    out = []
    for top in SOURCE_DIRS:
        for root, _, files in os.walk(os.path.join(srcdir, top)):
            for name in files:
                if name.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(root, name), srcdir))
    return sorted(out)


def include_graph(srcdir, files):
    graph = {}
    pattern = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
    for path in files:
        edges = set()
        with open(os.path.join(srcdir, path), errors="replace") as f:
            for line in f:
                m = pattern.match(line)
                if not m:
                    continue
                name = m.group(1)
                for base in [os.path.dirname(path)] + list(INCLUDE_DIRS):
                    cand = os.path.normpath(os.path.join(base, name))
                    if os.path.exists(os.path.join(srcdir, cand)):
                        edges.add(cand)
                        break
        graph[path] = edges
    return graph


def object_source(obj):
    """lib/core/liboptireduce_la-comm.lo -> lib/core/comm.c"""
    d, base = os.path.split(obj)
    if d.endswith(".libs"):
        d = os.path.dirname(d)
    stem = os.path.splitext(base)[0]
    if "_la-" in stem:
        stem = stem.split("_la-", 1)[1]
    return os.path.normpath(os.path.join(d, stem + ".c"))


def object_file(obj):
    if obj.endswith(".lo"):
        d, base = os.path.split(obj)
        pic = os.path.join(d, ".libs", base[:-3] + ".o")
        return pic if os.path.exists(pic) else obj[:-3] + ".o"
    return obj


def call_graph(objects):
    defined, undefined = {}, {}
    for obj in objects:
        src = object_source(obj)
        out = subprocess.run(["nm", object_file(obj)], check=True, capture_output=True,
                             text=True).stdout
        defs, undefs = set(), set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] in ("U", "w"):
                undefs.add(parts[1])
            elif len(parts) == 3 and parts[1].isupper() and parts[1] != "U":
                defs.add(parts[2])
        defined[src] = defs
        undefined[src] = undefs
    owner = {}
    for src, defs in defined.items():
        for sym in defs:
            owner[sym] = src
    graph = {}
    for src, undefs in undefined.items():
        graph[src] = {owner[s] for s in undefs if s in owner and owner[s] != src}
    return graph


def circles(graph):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    v = stack.pop()
                    on_stack.discard(v)
                    comp.append(v)
                    if v == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def one_cycle(graph, comp):
    """A shortest path around the component from its first file back to it, to print."""
    members = set(comp)
    start = comp[0]
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return [start] + path[::-1][1:] + [start] if len(path) > 1 else [start, v, start]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def describe(kind, comp, cycle):
    text = "%s circle: %s" % (kind, " -> ".join(cycle))
    if len(comp) > len(cycle) - 1:
        text += " (one of the circles among %s)" % ", ".join(comp)
    return text


def check_circles(kind, graph, prefixes, report):
    kept = {v: {w for w in e if not allowed(w, prefixes)}
            for v, e in graph.items() if not allowed(v, prefixes)}
    failing = circles(kept)
    for comp in failing:
        report(True, describe(kind, comp, one_cycle(kept, comp)))
    failed_files = {f for comp in failing for f in comp}
    for comp in circles(graph):
        if not failed_files & set(comp):
            report(False, describe(kind, comp, one_cycle(graph, comp)))


def strip_c(text):
    """Comments, strings and preprocessor lines blanked, newlines kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    lines, cont = [], False
    for line in text.split("\n"):
        pre = cont or line.lstrip().startswith("#")
        cont = pre and line.rstrip().endswith("\\")
        lines.append("" if pre else line)
    return lines


def long_functions(srcdir, path):
    with open(os.path.join(srcdir, path), errors="replace") as f:
        lines = strip_c(f.read())
    out, depth, head, head_line, start = [], 0, "", None, None
    for n, line in enumerate(lines, 1):
        for ch in line:
            if depth == 0 and ch not in "{}":
                if ch == ";":
                    head, head_line = "", None
                else:
                    if head_line is None and not ch.isspace():
                        head_line = n
                    head += ch
            if ch == "{":
                if depth == 0:
                    is_func = ("(" in head and "=" not in head and
                               not re.match(r"\s*(typedef|struct|union|enum)\b", head))
                    start = head_line if is_func else None
                    name = re.findall(r"(\w+)\s*\(", head)
                    fname = name[0] if name else "?"
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    if start is not None and n - start + 1 > MAX_FUNC_LINES:
                        out.append((fname, start, n - start + 1))
                    head, head_line, start = "", None, None
    return out


def main():
    srcdir = sys.argv[1]
    objects = sys.argv[2:]
    prefixes = read_allow(srcdir)
    counts = {True: 0, False: 0}

    def report(fails, msg):
        counts[fails] += 1
        print(("FAIL: " if fails else "allowed: ") + msg)

    def per_file(path, msg):
        report(not allowed(path, prefixes), "%s: %s" % (path, msg))

    files = sources(srcdir)
    check_circles("include", include_graph(srcdir, files), prefixes, report)
    if objects:
        check_circles("call", call_graph(objects), prefixes, report)
    for path in files:
        with open(os.path.join(srcdir, path), errors="replace") as f:
            n = sum(1 for _ in f)
        if n > MAX_FILE_LINES:
            per_file(path, "%d lines (at most %d)" % (n, MAX_FILE_LINES))
        if path.endswith(".c"):
            for name, line, length in long_functions(srcdir, path):
                per_file(path, "%d: %s() is %d lines (at most %d)" % (line, name, length, MAX_FUNC_LINES))
    print("layout: %d files, %d objects: %d violations, %d allowed (%s)" %
          (len(files), len(objects), counts[True], counts[False], ", ".join(prefixes) or "none"))
    return 1 if counts[True] else 0


if __name__ == "__main__":
    sys.exit(main())
