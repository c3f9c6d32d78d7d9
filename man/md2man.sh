#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# md2man.sh PAGE.md... : regenerate the nroff man pages from their markdown
# source (the source of truth; the nroff output is committed, so building and
# installing never need pandoc).  Maintainer tool: needs pandoc
# (Debian: apt-get install pandoc).
#
# pandoc sizes tables to 70 ens of text; scaling the column widths by 0.8
# keeps them, column gaps and the man page indent within 80 columns.
set -e
command -v pandoc >/dev/null 2>&1 || { echo "md2man.sh: pandoc not found (apt-get install pandoc)" >&2; exit 1; }
for md in "$@"; do
	out=${md%.md}
	pandoc --standalone --from markdown --to man "$md" |
		awk '/^\.TS/ { tbl = 1 }
		     tbl && /lw\(/ {
			line = ""
			while (match($0, /lw\([0-9.]+n\)/)) {
				w = substr($0, RSTART + 3, RLENGTH - 5) * 0.8
				line = line substr($0, 1, RSTART - 1) sprintf("lw(%.1fn)", w)
				$0 = substr($0, RSTART + RLENGTH)
			}
			$0 = line $0; tbl = 0
		     }
		     { print }' >"$out.tmp"
	mv "$out.tmp" "$out"
	echo "md2man.sh: $md -> $out"
done
