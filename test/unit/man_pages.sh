#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every public function, each one declared in an installed header (include/*.h and the
# interposer's lib/pmpi/optireduce_pmpi.h), has a man page: its own man/NAME.3, or an alias
# man/NAME.3 (".so manS/PAGE.S", written by man/aliases.sh) to a page whose NAME section
# lists it; and make install installs it (OPTIREDUCE_MAN_PAGES: Makefile.am's
# dist_man_MANS).  One line per missing page, then FAIL.
s=${top_srcdir:-.}
command -v perl >/dev/null 2>&1 || { echo "no perl: skip"; exit 77; }
[ -n "${OPTIREDUCE_MAN_PAGES:-}" ] || { echo "OPTIREDUCE_MAN_PAGES not set (make check sets it)"; exit 99; }
# The declarations with comments taken out; a name ending in _ is the headers' own.
fns=$(cat "$s"/include/*.h "$s/lib/pmpi/optireduce_pmpi.h" |
	perl -0777 -pe 's{/\*.*?\*/}{}gs; s{//[^\n]*}{}g' |
	grep -o -E '\boptireduce_[a-z0-9_]+[[:space:]]*\(' | sed 's/[[:space:]]*($//' |
	grep -v '_$' | sort -u)
[ -n "$fns" ] || { echo "no functions found in $s/include"; exit 99; }
n=0 bad=0
for f in $fns; do
	n=$((n + 1))
	page=$s/man/$f.3
	if [ ! -f "$page" ]; then
		echo "$f: no man/$f.3"
		bad=$((bad + 1))
		continue
	fi
	case " $OPTIREDUCE_MAN_PAGES " in
	*" man/$f.3 "*) ;;
	*) echo "$f: man/$f.3 is not installed (not in dist_man_MANS)"; bad=$((bad + 1)) ;;
	esac
	target=$(sed -n 's|^\.so man[0-9]/||p' "$page")
	[ -n "$target" ] || continue # a page of its own
	if [ ! -f "$s/man/$target" ]; then
		echo "$f: man/$f.3 points to $target, which does not exist"
		bad=$((bad + 1))
	elif ! sed -n '/^\.SH NAME/,/^\.SH/p' "$s/man/$target" | grep -q "\\b$f\\b"; then
		echo "$f: $target does not list $f in its NAME section"
		bad=$((bad + 1))
	fi
done
echo "$n public functions, $bad without an installed page"
[ $bad -eq 0 ] || { echo FAIL; exit 1; }
