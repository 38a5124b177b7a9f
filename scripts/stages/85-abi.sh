#!/usr/bin/env bash
# The ABI policy, checked: the library built now against the baseline in
# abi/libfaststamp.abi (abidw/abidiff from abigail-tools; the dump is
# scripts/lib/abi-dump, for both), and its export list against the version script,
# the header and the Debian symbols file.
#
# Passes: no change; symbols added (the stage says the baseline is behind, and how to
# record them); fields appended to the size-first structs struct fts_info and struct
# fts_calib_opts (abi/suppressions, and the prefix check below: every field the
# baseline has keeps its name, type and offset).
# Fails: anything else abidiff reports, incompatible (a symbol removed or re-versioned,
# a function's type changed) or not classed as such by abidiff but breaking callers
# all the same (a field inserted, moved or retyped).
#
# An incompatible change on purpose moves the SONAME and the baseline together, in the
# same commit:
#   1. raise the SONAME (SOVERSION of the faststamp target in CMakeLists.txt: now the
#      project's major version);
#   2. start src/faststamp.map over with a node for the new release, rename the Debian
#      library package to the new SONAME (debian/control, debian/libfaststampN.*,
#      a symbols file listing the new versions);
#   3. freeze the new headers for the old-header test (tests/consumer/old/include and
#      the version check in tests/consumer/old_header.c);
#   4. run scripts/abi-baseline and commit abi/.
# The stage checks that the baseline's SONAME is the library's, so a SONAME moved
# without its baseline (or a baseline regenerated over a break without a new SONAME:
# git diff abi/ shows it in review) does not pass unnoticed.
set -euo pipefail
base=$FTS_TOP/abi/libfaststamp.abi
supp=$FTS_TOP/abi/suppressions
work=$FTS_OUT/abi
for t in abidw abidiff; do
  command -v $t >/dev/null || { echo "abi: $t is not installed (scripts/deps.sh: abigail-tools)"; exit 77; }
done
arch=$(sed -n "1s/.*architecture='\([^']*\)'.*/\1/p" "$base")
if [ "$arch" = elf-amd-x86_64 ] && [ "$(uname -m)" != x86_64 ]; then
  echo "abi: the baseline is x86_64's; this machine is $(uname -m)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
cur=$work/libfaststamp.abi
lib=$("$FTS_TOP/scripts/lib/abi-dump" "$cur")
echo "abi: $lib against abi/libfaststamp.abi"

fail=0
# ---- the export list: the library, the version script, the header, the symbols file
nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@+/, "@", $3); print $3 }' | sort > "$work/exported"
# name@NODE for every name in a node's global: list (comments dropped first)
perl -0777 -ne 's{/\*.*?\*/}{}gs; s/#[^\n]*//g;
  while (/([A-Za-z0-9_.]+)\s*\{\s*global:\s*(.*?)(?:local:[^}]*)?\}/gs) {
    my $n = $1; print "$_\@$n\n" for grep { length } split /[\s;]+/, $2 }' \
  "$FTS_TOP/src/faststamp.map" | sort > "$work/map"
grep -E '^(extern )?FTS__API' "$FTS_TOP/include/faststamp.h" | sed -E 's/\(.*//; s/;.*//' |
  grep -oE '[A-Za-z_][A-Za-z0-9_]*$' | sort > "$work/header"
awk '/^ / && $1 !~ /^FASTSTAMP_/ { print $1 }' "$FTS_TOP/debian/libfaststamp0.symbols" | sort > "$work/symbols"
check_list() {   # what file: the same as the library's exports
  local d=$work/$(basename "$1").diff
  if ! diff -u "$work/exported" "$2" > "$d"; then
    echo "abi: the library's exports (-) and $1 (+) differ:"
    sed -n '3,$p' "$d" | grep '^[-+]'
    fail=1
  fi
}
check_list "src/faststamp.map" "$work/map"
check_list "debian/libfaststamp0.symbols" "$work/symbols"
sed 's/@.*//' "$work/exported" > "$work/exported.names"
if ! diff -u "$work/exported.names" "$work/header" > "$work/header.diff"; then
  echo "abi: the library's exports (-) and the FTS__API declarations of include/faststamp.h (+) differ:"
  sed -n '3,$p' "$work/header.diff" | grep '^[-+]'
  fail=1
fi
[ $fail -eq 0 ] && echo "abi: $(wc -l < "$work/exported") exports; the map, the header and the symbols file agree"

# ---- the SONAME moves with the baseline
bsoname=$(sed -n "1s/.*soname='\([^']*\)'.*/\1/p" "$base")
soname=$(objdump -p "$lib" | awk '/SONAME/ { print $2 }')
if [ "$bsoname" != "$soname" ]; then
  echo "abi: the library's SONAME is $soname, the baseline's $bsoname: move the baseline with" \
       "it (scripts/abi-baseline; see the steps at the top of $0)"
  exit 1
fi

# ---- size-first structs: the baseline's fields are a prefix of today's
python3 - "$base" "$cur" <<'PY' || fail=1
import sys, xml.etree.ElementTree as ET
def structs(path):
    root = ET.parse(path).getroot()
    names = {e.get('id'): e.get('name') or e.tag for e in root.iter() if e.get('id')}
    out = {}
    for c in root.iter('class-decl'):
        if c.get('name') in ('fts_info', 'fts_calib_opts') and c.get('is-declaration-only') != 'yes':
            out[c.get('name')] = [(m.find('var-decl').get('name'), m.get('layout-offset-in-bits'),
                                   names.get(m.find('var-decl').get('type-id'), '?'),
                                   m.find('var-decl').get('type-id'))
                                  for m in c.findall('data-member')]
    return out
old, new = structs(sys.argv[1]), structs(sys.argv[2])
bad = 0
for name, fields in old.items():
    now = new.get(name)
    if now is None:
        print(f"abi: struct {name} is gone"); bad = 1; continue
    for i, f in enumerate(fields):
        if i >= len(now) or now[i] != f:
            got = now[i] if i < len(now) else None
            print(f"abi: struct {name}: field {i} was {f[2]} {f[0]} at bit {f[1]}, now "
                  + (f"{got[2]} {got[0]} at bit {got[1]}" if got else "missing")
                  + ": size-first structs only grow at their end")
            bad = 1
            break
    else:
        if len(now) > len(fields):
            print(f"abi: struct {name}: {len(now) - len(fields)} field(s) appended (compatible)")
sys.exit(bad)
PY

# ---- abidiff
rc=0
abidiff --suppressions "$supp" "$base" "$cur" > "$work/abidiff.txt" 2>&1 || rc=$?
cat "$work/abidiff.txt"
if (( rc & 3 )); then
  echo "abi: abidiff could not compare (exit $rc)"
  exit 1
elif (( rc & 8 )); then
  echo "abi: INCOMPATIBLE change (abidiff exit $rc): restore the ABI, or move the SONAME and" \
       "the baseline together (the steps at the top of $0)"
  exit 1
elif (( rc & 4 )); then
  rc2=0
  abidiff --no-added-syms --suppressions "$supp" "$base" "$cur" > /dev/null 2>&1 || rc2=$?
  if [ $rc2 -ne 0 ]; then
    echo "abi: the ABI changed in a way that breaks callers built against the baseline" \
         "(abidiff exit $rc: not only additions)"
    exit 1
  fi
  echo "abi: symbols added (compatible); the baseline is behind: record them with" \
       "scripts/abi-baseline (and give them a new node in src/faststamp.map and their" \
       "version in debian/libfaststamp0.symbols)"
fi
[ $fail -eq 0 ] || { echo "abi: FAILED (see above)"; exit 1; }
echo "abi: compatible with the baseline (abidiff exit $rc)"
