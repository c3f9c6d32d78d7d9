#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# aliases.sh: write man/NAME.3 for every function a page lists in its NAME section but
# that has no page of its own: one line, ".so manS/PAGE.S", as libfabric does, so that
# "man optireduce_iallreduce" shows optireduce_allreduce(3).  Run from anywhere after a
# NAME section changes; commit the pages and put the list it prints into MAN_ALIASES in
# Makefile.am.  test/unit/man_pages.sh checks that every public function has a page that
# make install installs.
set -e
cd "$(dirname "$0")"
made=
# Longer page names first: a function listed on two pages goes to the page named after
# it (optireduce_comm_from_mpi_mode to optireduce_comm_from_mpi(3)).
for md in $(for f in optireduce*.[37].md; do echo "${#f} $f"; done | sort -k1,1nr -k2 |
	cut -d' ' -f2); do
	page=${md%.md}
	sec=${page##*.}
	# The NAME section's names, up to the " - " that starts the description.
	names=$(awk '/^# NAME/ { f = 1; next } /^# / { f = 0 } f' "$md" | tr '\n' ' ' |
		sed 's/ - .*//; s/,/ /g')
	for n in $names; do
		case $n in optireduce_*) ;; *) continue ;; esac
		[ "$n.$sec" = "$page" ] && continue
		[ -f "$n.3.md" ] && continue # a page of its own
		case " $made " in *" $n "*) continue ;; esac
		printf '.so man%s/%s\n' "$sec" "$page" >"$n.3"
		made="$made $n"
	done
done
echo "MAN_ALIASES =$(for n in $made; do echo "$n"; done | sort | sed 's|.*| man/&.3|' | tr -d '\n')"
