#!/usr/bin/env bash
# Install into a fresh prefix, check what lands there and what the library exports,
# then build a consumer through pkg-config and through find_package(faststamp).
# The build is configured for one prefix and installed to another, given at install
# time: faststamp.pc and the CMake files must find the tree where it is.
set -euo pipefail
b=$FTS_OUT/build-install
p=$FTS_OUT/prefix
rm -rf "$p" "$FTS_OUT/consumer" "$FTS_OUT/prefix-configured"
cmake -S "$FTS_TOP" -B "$b" -DCMAKE_BUILD_TYPE=Release -DFASTSTAMP_WERROR=ON -DBUILD_TESTING=OFF \
  -DCMAKE_INSTALL_PREFIX="$FTS_OUT/prefix-configured"
cmake --build "$b" -j"$(nproc)"
cmake --install "$b" --prefix "$p"
[ ! -e "$FTS_OUT/prefix-configured" ] || { echo "cmake --install --prefix wrote to the configured prefix"; exit 1; }
grep -q "^ExecStart=$p/bin/faststamp " "$p/lib/systemd/system/faststamp.service" ||
  { echo "faststamp.service does not run $p/bin/faststamp: $(grep ExecStart= "$p/lib/systemd/system/faststamp.service")"; exit 1; }
lib=$(dirname "$(find "$p" -name libfaststamp.so -print -quit)")
for f in include/faststamp.h include/faststamp/arch.h include/faststamp/config.h \
         include/faststamp/x86_64.h bin/faststamp share/man/man1/faststamp.1 share/man/man3/faststamp.3 \
         share/man/man5/faststamp-history.5; do
  [ -e "$p/$f" ] || { echo "missing from the install: $f"; exit 1; }
done
for f in libfaststamp.so libfaststamp.a pkgconfig/faststamp.pc cmake/faststamp/faststampConfig.cmake; do
  [ -e "$lib/$f" ] || { echo "missing from the install: lib/$f"; exit 1; }
done
soname=$(objdump -p "$lib/libfaststamp.so" | awk '/SONAME/ {print $2}')
[ "$soname" = libfaststamp.so.0 ] || { echo "unexpected SONAME $soname"; exit 1; }
# Only the documented names are exported.
bad=$(nm -D --defined-only "$lib/libfaststamp.so" | awk '{print $3}' | grep -v -E '^(fast_timestamp_|fts_|fts__store_counter$|fts__clock_stamp$|FASTSTAMP_)' || true)
[ -z "$bad" ] || { echo "unexpected exported symbols: $bad"; exit 1; }
[ -s "$p/share/man/man3/faststamp.3" ] && man -l "$p/share/man/man3/faststamp.3" >/dev/null 2>&1 || true

export PKG_CONFIG_PATH=$lib/pkgconfig LD_LIBRARY_PATH=$lib
pcp=$(pkg-config --variable=prefix faststamp)
[ "$(cd "$pcp" && pwd -P)" = "$(cd "$p" && pwd -P)" ] || { echo "faststamp.pc: prefix $pcp, not $p"; exit 1; }
mkdir -p "$FTS_OUT/consumer"
cc -std=c11 -Wall -Wextra -Werror -o "$FTS_OUT/consumer/pc_shared" "$FTS_TOP/tests/consumer/consumer.c" \
  $(pkg-config --cflags --libs faststamp)
"$FTS_OUT/consumer/pc_shared"
cc -std=c11 -Wall -Wextra -Werror -o "$FTS_OUT/consumer/pc_static" "$FTS_TOP/tests/consumer/consumer.c" \
  $(pkg-config --cflags faststamp) "$lib/libfaststamp.a" $(pkg-config --libs-only-l --static faststamp | sed 's/-lfaststamp//')
"$FTS_OUT/consumer/pc_static"
cmake -S "$FTS_TOP/tests/consumer" -B "$FTS_OUT/consumer/cm" -DCMAKE_PREFIX_PATH="$p"
cmake --build "$FTS_OUT/consumer/cm"
"$FTS_OUT/consumer/cm/consumer_shared"
"$FTS_OUT/consumer/cm/consumer_static"
echo "install and consumers ok"
