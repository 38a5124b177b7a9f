#!/usr/bin/env bash
# The Debian packages (debian/): built from a copy of the tree with
# `dpkg-buildpackage -us -uc -b` (nocheck: the other stages run the tests), checked by
# lintian (any E: or W: fails), then tested by scripts/lib/package-test: installed with
# dpkg -i, a consumer built through pkg-config and one through find_package(faststamp),
# faststamp check --quick, systemd-analyze verify on the installed unit, removed and
# purged, and nothing of theirs left behind.
#
# Where: a fresh Debian root (this machine's release) made by mmdebstrap, so the
# packages' dependencies are all they get. The root's tarball is kept in
# $FTS_OUT/package-cache and made again after a week: the first run downloads about
# 150 MB and takes 0.5-2 minutes, later runs unpack it in seconds. There the whole
# root is compared before and after, and only logs and caches may differ. Without
# mmdebstrap, or when it fails (no Debian mirror, no mount namespace), the test runs on
# this machine instead, and says so. FTS_DEBIAN_MIRROR picks the mirror;
# FTS_PACKAGE_ROOT=host skips the root.
#
# Outputs in $FTS_OUT/package: the .deb files, build.log, lintian.txt.
set -euo pipefail
out=$FTS_OUT/package
cache=$FTS_OUT/package-cache
mirror=${FTS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# In the root: what the test needs that the packages do not bring (the consumers'
# compiler and build tools; systemd and man for systemd-analyze verify).
root_pkgs=adduser,gcc,libc6-dev,make,cmake,pkg-config,systemd,man-db

for t in dpkg-buildpackage dh lintian; do
  command -v $t >/dev/null || { echo "package: $t is not installed (scripts/deps.sh)"; exit 77; }
done
version=$(dpkg-parsechangelog -l "$FTS_TOP/debian/changelog" -S Version)
src=$out/faststamp-${version%-*}
rm -rf --one-file-system "$out"
mkdir -p "$src"

echo "=== dpkg-buildpackage -us -uc -b ($version)"
start=$(date +%s)
tar -C "$FTS_TOP" --exclude=./out --exclude=./.git --exclude='./build*' --exclude='./obj-*' \
  --exclude=./debian/build --exclude=./debian/tmp -cf - . | tar -C "$src" -xf -
if ! (cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" DEB_BUILD_PROFILES=nocheck \
        dpkg-buildpackage -us -uc -b) > "$out/build.log" 2>&1; then
  tail -n 60 "$out/build.log"
  echo "package: dpkg-buildpackage failed (whole log: $out/build.log)"
  exit 1
fi
grep -E 'dpkg-gensymbols|dpkg-shlibdeps: warning' "$out/build.log" || true
echo "built in $(( $(date +%s) - start ))s:"
ls -l "$out"/*.deb

echo "=== lintian"
lintian --display-info "$out"/*.changes > "$out/lintian.txt" 2>&1 || true
grep -v 'running with root privileges' "$out/lintian.txt" || true
if grep -qE '^[EW]: ' "$out/lintian.txt"; then
  echo "package: lintian reports errors or warnings (above)"
  exit 1
fi
echo "lintian: no error, no warning"

# The test's directory: the three packages and the consumer's sources.
t=$out/test
mkdir -p "$t/consumer"
cp "$out"/libfaststamp0_*.deb "$out"/libfaststamp-dev_*.deb "$out"/faststamp_*.deb "$t/"
cp "$FTS_TOP/tests/consumer/consumer.c" "$FTS_TOP/tests/consumer/CMakeLists.txt" "$t/consumer/"
cp "$FTS_TOP/scripts/lib/package-test" "$t/"

# A fresh root from the cache, remade after 7 days or when root_pkgs change.
make_root() {
  local suite tarball key
  suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$suite" ] || { echo "not a Debian release with a codename"; return 1; }
  command -v mmdebstrap >/dev/null || { echo "mmdebstrap is not installed"; return 1; }
  key=$(echo "$suite $mirror $root_pkgs" | md5sum | cut -c1-10)
  tarball=$cache/root-$suite-$key.tar
  mkdir -p "$cache" || return 1
  if [ -z "$(find "$tarball" -mtime -7 2>/dev/null)" ]; then
    echo "mmdebstrap: a $suite root with $root_pkgs, from $mirror"
    local s=$(date +%s)
    rm -f "$cache"/root-*.tar
    # (mmdebstrap writes a tarball for a name ending in .tar)
    if ! timeout 600 mmdebstrap --variant=minbase --include="$root_pkgs" "$suite" \
         "$cache/new.tar" "$mirror" > "$cache/mmdebstrap.log" 2>&1; then
      tail -n 15 "$cache/mmdebstrap.log"
      rm -rf "$cache/new.tar"
      echo "mmdebstrap failed"
      return 1
    fi
    mv "$cache/new.tar" "$tarball"
    echo "mmdebstrap: $(( $(date +%s) - s ))s, $(du -m "$tarball" | cut -f1) MB, cached as $tarball"
  fi
  # (set -e does not hold in here: the caller tests the result)
  mkdir -p "$root" && tar -C "$root" -xf "$tarball" || { echo "cannot unpack $tarball"; return 1; }
  unshare --mount --propagation private true 2>/dev/null || { echo "no mount namespace here"; return 1; }
}

# The root, as a list of (type, mode, owner, path), to compare before and after.
listing() {
  (cd "$root" && find . -xdev -path ./tmp -prune -o -printf '%y %m %u:%g %p\n' | sort)
}
etc_sums() {
  (cd "$root" && find ./etc -xdev -type f ! -name '*-' ! -name ld.so.cache -exec md5sum {} + | sort -k2)
}

root=$out/root
mode=host
if [ "${FTS_PACKAGE_ROOT:-}" != host ]; then
  echo "=== a fresh Debian root"
  s=$(date +%s)
  if why=$(make_root); then
    [ -z "$why" ] || echo "$why"
    mode=root
    echo "root ready in $(( $(date +%s) - s ))s: $root"
  else
    echo "$why"
    echo "package: NO FRESH ROOT ($(echo "$why" | tail -n 1)): the packages are tested on this machine"
    rm -rf --one-file-system "$root"
  fi
fi

if [ $mode = root ]; then
  mkdir -p "$root/tmp/fts-test"
  cp -r "$t"/. "$root/tmp/fts-test/"
  listing > "$out/root-before.txt"
  etc_sums > "$out/etc-before.txt"
  echo "=== package-test, in the fresh root (chroot)"
  # The mounts live in a private namespace: they go when it ends, whatever happens.
  unshare --mount --propagation private bash -c '
    set -e
    mount -t proc proc "$1/proc"
    mount --bind -o ro /sys "$1/sys"
    mount --bind /dev "$1/dev"
    exec chroot "$1" /tmp/fts-test/package-test /tmp/fts-test' _ "$root"
  rm -rf "$root/tmp/fts-test"
  listing > "$out/root-after.txt"
  etc_sums > "$out/etc-after.txt"
  # Allowed to differ: logs and caches (man's pages too), adduser's lock file, the
  # state systemd-analyze leaves in /run. In /etc only the backups adduser and deluser
  # write (passwd-, group-, ...) and ld.so.cache may differ.
  allowed='^[^ ]+ [0-9]+ [^ ]+ \./(var/log|var/cache|run/systemd|run/adduser)(/|$)'
  diffs=$(diff "$out/root-before.txt" "$out/root-after.txt" | grep -E '^[<>]' | sed 's/^[<>] //' |
          grep -vE "$allowed" || true)
  ediffs=$(diff "$out/etc-before.txt" "$out/etc-after.txt" | grep -E '^[<>]' || true)
  if [ -n "$diffs" ] || [ -n "$ediffs" ]; then
    echo "package: the root is not as it was before the install:"
    printf '%s\n' "$diffs" "$ediffs" | grep .
    echo "(the root is kept: $root)"
    exit 1
  fi
  echo "the root after the purge: as before (logs and caches aside)"
  rm -rf --one-file-system "$root"
else
  echo "=== package-test, on this machine"
  "$t/package-test" "$t"
fi
echo "package: built, lintian-clean, installed, used and purged ($mode)"
