#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Maintainer tool: regenerate the parameter tables of man/optireduce.7.md and
README.md from the one parameter table, lib/core/params.h (then run man/md2man.sh)."""
import re, sys, os

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
src = open(os.path.join(root, 'lib/core/params.h')).read()
body = src[src.index('#define OR_PARAM_TABLE(X)'):src.index('enum or_param_id')]
body = re.sub(r'\\\n', '\n', body)
body = re.sub(r'/\*.*?\*/', '', body, flags=re.S)
types = {'OR_PT_INT': 'int', 'OR_PT_SIZE': 'size', 'OR_PT_BOOL': 'bool',
         'OR_PT_DOUBLE': 'double', 'OR_PT_STRING': 'string', 'OR_PT_ENUM': 'enum'}
rows = []
for m in re.finditer(r'X\(\s*(\w+)\s*,\s*"([^"]*)"\s*,\s*(\w+)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,'
                     r'\s*"([^"]*)"\s*,((?:\s*"(?:[^"\\]|\\.)*")+)\s*\)', body):
    ident, name, typ, dflt, lo, hi, desc = m.groups()
    desc = ''.join(re.findall(r'"((?:[^"\\]|\\.)*)"', desc)).replace('\\"', '"')
    rows.append((ident, name, types[typ], dflt, lo, hi, desc))

def rng(t, lo, hi):
    if t == 'enum':
        return ', '.join(lo.split('|'))
    return f'{lo}..{hi}' if lo or hi else ''

man = ['| Parameter | Type | Default | Description |',
       '|:---------------------|:---------|:----------|:------------------------------|']
readme = ['| name | environment | type | default | range | description |', '|---|---|---|---|---|---|']
for ident, name, t, d, lo, hi, desc in rows:
    # In GitHub's tables a cell ends at an unescaped '|', in code spans too (pandoc, which
    # makes the man page, keeps code spans whole): README's lists of names escape theirs.
    gd, gdesc = d.replace('|', '\\|'), desc.replace('|', '\\|')
    r = rng(t, lo, hi)
    extra = (f' Values: {r}.' if t == 'enum' else f' Range {r}.') if r else ''
    man.append(f'| `{name}` | {t} | `{d if d else chr(34)*2}` | {desc}.{extra} |'.replace('..', '.', 0))
    readme.append(f'| `{name}` | `OPTIREDUCE_{ident}` | {t} | `{gd if gd else chr(34)*2}` | {r} | {gdesc} |')

def replace_table(path, header_start, new):
    text = open(path).read().split('\n')
    i = next(k for k, l in enumerate(text) if l.startswith(header_start))
    j = i
    while j < len(text) and text[j].startswith('|'):
        j += 1
    text[i:j] = new
    open(path, 'w').write('\n'.join(text))
    print(f'{path}: {len(new) - 2} parameters')

replace_table(os.path.join(root, 'man/optireduce.7.md'), '| Parameter | Type |', man)
replace_table(os.path.join(root, 'README.md'), '| name | environment |', readme)
