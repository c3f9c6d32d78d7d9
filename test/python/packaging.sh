#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# python/pyproject.toml: a wheel built from python/ alone (pip, offline, no build
# isolation) holds every module of the package and py.typed, no _config.py (the installed
# package finds the library through the loader), and the version of ../VERSION; installed
# into a scratch prefix, it imports and loads the library named by OPTIREDUCE_LIBRARY.
# Exit 77 without Python, pip or setuptools.
src=${top_srcdir:-.}
py=
for c in "${PYTHON:-}" /usr/bin/python3; do
	[ -n "$c" ] && [ "$c" != : ] && "$c" -c 'import setuptools' >/dev/null 2>&1 &&
		"$c" -m pip --version >/dev/null 2>&1 &&
		{ py=$c; break; }
done
[ -n "$py" ] || { echo "no Python with pip and setuptools: skip"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# A copy: building writes build/ and *.egg-info next to the sources.
cp -r "$src/python" "$tmp/src" && rm -f "$tmp/src/optireduce/_config.py" || exit 1
"$py" -m pip wheel --no-deps --no-build-isolation --no-index -q -w "$tmp/wheel" \
	"$tmp/src" >"$tmp/log" 2>&1 || { cat "$tmp/log"; echo "FAIL: pip wheel"; exit 1; }
whl=$(ls "$tmp"/wheel/optireduce-*.whl) || { echo "FAIL: no wheel"; exit 1; }
version=$(cat "$src/VERSION")
case $whl in
*/optireduce-$version-*) ;;
*) echo "FAIL: $whl is not version $version"; exit 1 ;;
esac
"$py" - "$whl" "$src/python/optireduce" <<'PY' || exit 1
import os, sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
want = {"optireduce/" + f for f in os.listdir(sys.argv[2])
        if f.endswith(".py") and f != "_config.py"} | {"optireduce/py.typed"}
missing, extra = want - names, {n for n in names if n.endswith("_config.py")}
if missing or extra:
    print("FAIL: wheel lacks %s, has %s" % (sorted(missing), sorted(extra)))
    sys.exit(1)
print("wheel: %d modules and py.typed" % (len(want) - 1))
PY
"$py" -m pip install --no-deps --no-index -q --target "$tmp/site" "$whl" >"$tmp/log" 2>&1 ||
	{ cat "$tmp/log"; echo "FAIL: pip install"; exit 1; }
lib=${top_builddir:-.}/.libs/liboptireduce.so.0
[ -e "$lib" ] || { echo "no built library: skip the import"; echo passed; exit 0; }
# Built with AddressSanitizer: its runtime goes ahead of the library, as test/python/run.sh
# does (pip above ran without it: it loads no library of ours).
asan=$(ldd "$lib" 2>/dev/null | awk '/libasan/ { print $3; exit }')
[ -z "$asan" ] || export LD_PRELOAD="$asan${LD_PRELOAD:+:$LD_PRELOAD}" \
	ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
PYTHONPATH=$tmp/site OPTIREDUCE_LIBRARY=$lib "$py" -c '
import optireduce
assert not hasattr(optireduce, "_config")
print("installed wheel: liboptireduce", optireduce.version_string())' || exit 1
echo passed
