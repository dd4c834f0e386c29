#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The installed tree, as a user gets it (ctest: install_consumer, label install): `cmake --install`
# of this build tree into a fresh prefix, the files where cmake/install.cmake puts them, then
# tests/install/consumer.c built and run against that prefix twice: as a CMake project with
# find_package(proofpipe CONFIG), and with `cc $(pkg-config --cflags --libs proofpipe)`. Each
# consumer must load libproofpipe.so from the prefix (by its SONAME), not from the build tree.
#
# Usage: tests/install/run.sh BUILD_DIR WORK_DIR, with the environment (tests/CMakeLists.txt sets
# it): PP_CMAKE, PP_GENERATOR, PP_CC, PP_PKG_CONFIG, PP_READELF, PP_VERSION, PP_SOVERSION,
# PP_BINDIR, PP_LIBDIR, PP_INCLUDEDIR, PP_LIBEXECDIR (the CMAKE_INSTALL_* folders, relative),
# PP_SERVICE (ON/OFF: whether the daemon's module is built).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
work=$2
for v in PP_CMAKE PP_GENERATOR PP_CC PP_PKG_CONFIG PP_READELF PP_VERSION PP_SOVERSION PP_BINDIR PP_LIBDIR \
         PP_INCLUDEDIR PP_LIBEXECDIR PP_SERVICE; do
  [[ -n "${!v:-}" ]] || { echo "install test: $v is not set" >&2; exit 2; }
done
fail() { echo "install test: FAIL: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

echo "--- cmake --install $build --prefix $prefix"
"$PP_CMAKE" --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }

echo "--- the installed files"
lib="$prefix/$PP_LIBDIR"
expect=(
  "$PP_BINDIR/proofpipe" "$PP_LIBEXECDIR/proofpipe/proofpipe"
  "$PP_LIBDIR/libproofpipe.so.$PP_VERSION" "$PP_LIBDIR/libproofpipe.so.$PP_SOVERSION" "$PP_LIBDIR/libproofpipe.so"
  "$PP_LIBDIR/libproofpipe_supraseal.so" "$PP_LIBDIR/libproofpipe_cuzk.so"
  "$PP_INCLUDEDIR/proofpipe/proofpipe.h"
  "$PP_LIBDIR/cmake/proofpipe/proofpipeConfig.cmake" "$PP_LIBDIR/cmake/proofpipe/proofpipeConfigVersion.cmake"
  "$PP_LIBDIR/cmake/proofpipe/proofpipeTargets.cmake" "$PP_LIBDIR/pkgconfig/proofpipe.pc"
)
[[ "$PP_SERVICE" == ON ]] && expect+=("$PP_LIBEXECDIR/proofpipe/libproofpipe_service_cli.so")
for f in "${expect[@]}"; do
  [[ -e "$prefix/$f" ]] || fail "$f is not installed"
done
# The C API's header only: the C++ headers under include/proofpipe/ are internal.
extra=$(cd "$prefix/$PP_INCLUDEDIR" && find . -type f ! -path ./proofpipe/proofpipe.h)
[[ -z "$extra" ]] || fail "headers other than proofpipe/proofpipe.h are installed: $extra"
soname=$("$PP_READELF" -d "$lib/libproofpipe.so.$PP_VERSION" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[[ "$soname" == "libproofpipe.so.$PP_SOVERSION" ]] || fail "libproofpipe.so's SONAME is '$soname', not libproofpipe.so.$PP_SOVERSION"
echo "SONAME $soname"
# Nothing installed may search the build tree at run time (CMake drops the build RPATH on install).
for f in "$prefix/$PP_LIBEXECDIR/proofpipe/"* "$lib/"libproofpipe*.so; do
  ! "$PP_READELF" -d "$f" | grep -E "R(UN)?PATH" | grep -F "$build" || fail "$f searches the build tree at run time"
done

echo "--- the installed CLI"
cli="$prefix/$PP_BINDIR/proofpipe"
version=$("$cli" --version) || fail "$cli --version"
[[ "$version" == "proofpipe $PP_VERSION" ]] || fail "$cli --version printed '$version', not 'proofpipe $PP_VERSION'"
echo "$version"
if [[ "$PP_SERVICE" == ON ]]; then
  # A client command loads the daemon's module from beside the real executable (through the
  # bin/ link); port 1 refuses the connection, after the module is loaded.
  out=$("$cli" status --server 127.0.0.1:1 2>&1 || true)
  [[ "$out" != *"cannot load the service module"* ]] || fail "the installed CLI cannot load its module: $out"
  [[ "$out" == *GetStatus* ]] || fail "proofpipe status printed: $out"
  echo "service module: loaded"
fi

# The consumer must take libproofpipe.so from the prefix: check what the loader resolves.
loads_from_prefix() {
  local exe=$1 resolved
  resolved=$(ldd "$exe" | awk '$1 == "libproofpipe.so.'"$PP_SOVERSION"'" {print $3}')
  [[ -n "$resolved" ]] || fail "$exe does not load libproofpipe.so.$PP_SOVERSION: $(ldd "$exe")"
  [[ "$(realpath "$resolved")" == "$(realpath "$lib")"/* ]] || fail "$exe loads $resolved, not the prefix's"
}

echo "--- find_package(proofpipe CONFIG) consumer"
"$PP_CMAKE" -S "$here" -B "$work/cmake-consumer" -G "$PP_GENERATOR" -DCMAKE_C_COMPILER="$PP_CC" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
  -DPROOFPIPE_EXPECTED_VERSION="$PP_VERSION" >"$work/cmake-consumer.log" 2>&1 ||
  { cat "$work/cmake-consumer.log"; fail "configuring the consumer"; }
grep -F "proofpipe $PP_VERSION from $prefix/" "$work/cmake-consumer.log" ||
  { cat "$work/cmake-consumer.log"; fail "find_package(proofpipe) did not take the prefix's package"; }
"$PP_CMAKE" --build "$work/cmake-consumer" >"$work/cmake-consumer-build.log" 2>&1 ||
  { cat "$work/cmake-consumer-build.log"; fail "building the consumer"; }
loads_from_prefix "$work/cmake-consumer/consumer"
"$work/cmake-consumer/consumer" || fail "the find_package consumer"

echo "--- pkg-config consumer"
# Only the prefix's .pc files are visible (PKG_CONFIG_LIBDIR replaces the system's folders).
export PKG_CONFIG_LIBDIR="$lib/pkgconfig"
unset PKG_CONFIG_PATH
pcversion=$("$PP_PKG_CONFIG" --modversion proofpipe) || fail "pkg-config --modversion proofpipe"
[[ "$pcversion" == "$PP_VERSION" ]] || fail "pkg-config says proofpipe $pcversion, expected $PP_VERSION"
flags=$("$PP_PKG_CONFIG" --cflags --libs proofpipe) || fail "pkg-config --cflags --libs proofpipe"
libdir=$("$PP_PKG_CONFIG" --variable=libdir proofpipe)
echo "pkg-config: $flags"
# shellcheck disable=SC2086 # the flags are words
"$PP_CC" -std=c11 -Wall -Wextra -Wpedantic -Werror -DPROOFPIPE_EXPECTED_VERSION="\"$pcversion\"" \
  "$here/consumer.c" $flags -Wl,-rpath,"$libdir" -o "$work/pc-consumer" || fail "cc \$(pkg-config --cflags --libs proofpipe)"
loads_from_prefix "$work/pc-consumer"
"$work/pc-consumer" || fail "the pkg-config consumer"

echo "install test: ok"
