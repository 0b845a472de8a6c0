#!/usr/bin/env bash
# Builds oneTBB with ThreadSanitizer from Debian's own source package (the version libtbb-dev has)
# and installs it into a cache folder outside the source tree, keyed by version. Skips the build
# when that folder is already complete. Prints the install prefix on its last line, for
# -DBRAID_TBB_ROOT (the `tsan` preset expects $HOME/.cache/braid/onetbb-tsan-<version>).
#
# Why: Debian's libtbb.so is not instrumented, so TSan reports false races inside every flow graph
# (see the shared note "ThreadSanitizer with oneTBB on Debian 12").
#
#   bash tools/build_tsan_tbb.sh            # -> /root/.cache/braid/onetbb-tsan-2021.8.0
#   BRAID_CACHE=/tmp/cache bash tools/build_tsan_tbb.sh
set -euo pipefail

readonly SOURCES=/etc/apt/sources.list.d/debian.sources

log() { echo "build_tsan_tbb.sh: $*" >&2; }

# Upstream version of the installed libtbb-dev (2021.8.0-2+deb12u1 -> 2021.8.0), else 2021.8.0.
tbb_version() {
  local version
  version=$(dpkg-query -W -f='${Version}' libtbb-dev 2>/dev/null || true)
  version=${version#*:}
  version=${version%%-*}
  echo "${version:-2021.8.0}"
}

# Adds deb-src to the 'Types: deb' stanzas of Debian's deb822 sources, then refreshes the lists.
enable_source_packages() {
  if apt-get source --download-only --print-uris onetbb >/dev/null 2>&1; then return 0; fi
  if [[ $(id -u) -ne 0 ]]; then
    log "source packages are not enabled; as root, add 'deb-src' to the 'Types: deb' lines of"
    log "$SOURCES and run 'apt-get update', or run this script with sudo"
    exit 1
  fi
  if ! grep -q '^Types:.*deb-src' "$SOURCES"; then
    log "enabling deb-src in $SOURCES"
    sed -i 's/^Types: deb$/Types: deb deb-src/' "$SOURCES"
  fi
  apt-get update -qq
}

# Downloads the source package into $1 and unpacks the upstream tarball there; prints the tree.
fetch_source() {
  local work=$1 version=$2
  (cd "$work" && apt-get source --download-only -qq onetbb >/dev/null 2>&1)
  tar -C "$work" -xf "$work"/onetbb_"$version".orig.tar.*
  find "$work" -mindepth 1 -maxdepth 1 -type d -iname "onetbb-*" | head -n 1
}

# TBB_STRICT=OFF: GCC 12 warns that atomic_thread_fence is unsupported under TSan (-Wtsan), and
# TBB_STRICT would turn that into an error. The build's output goes to a log shown on failure.
build_and_install() {
  local source_dir=$1 build_dir=$2 prefix=$3 log_file=$2.log
  if ! {
    cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DTBB_SANITIZE=thread -DTBB_STRICT=OFF -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF -DTBBMALLOC_BUILD=OFF \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib &&
      cmake --build "$build_dir" -j"$(nproc)" &&
      cmake --install "$build_dir"
  } >"$log_file" 2>&1; then
    tail -n 40 "$log_file" >&2
    log "oneTBB build failed (log above)"
    exit 1
  fi
}

main() {
  local version prefix source_dir
  version=$(tbb_version)
  prefix=${1:-${BRAID_CACHE:-$HOME/.cache/braid}/onetbb-tsan-$version}
  if [[ -f $prefix/.braid-complete ]]; then
    echo "$prefix"
    return 0
  fi
  rm -rf "$prefix"
  enable_source_packages
  work=$(mktemp -d)
  trap 'rm -rf "${work:-}"' EXIT
  log "building oneTBB $version with -fsanitize=thread into $prefix (about a minute on 2 cores)"
  source_dir=$(fetch_source "$work" "$version")
  build_and_install "$source_dir" "$work/build" "$prefix"
  echo "oneTBB $version, TBB_SANITIZE=thread, from Debian's source package" >"$prefix/.braid-complete"
  echo "$prefix"
}

main "$@"
