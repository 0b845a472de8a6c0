#!/usr/bin/env bash
# The example at the top of each public header (include/braid/trainer.h, predictor.h, session.h,
# custom_op.h, data_source.h, process_group.h, model_io.h, tensor_view.h, run_options.h,
# device_memory.h) is real code: its first block of lines
# indented "//   " is put in a main(), compiled with -Wall -Werror against the in-tree public
# headers alone (include/braid/ and the build's include/braid/braid.pb.h), linked with libbraid and
# run (an example whose files are absent prints their Status and exits 0). Registered with ctest by
# tests/tools.
#
#   check_header_examples.sh SOURCE_DIR BINARY_DIR CXX LIBBRAID LIBPROTOBUF [SANITIZER]
set -euo pipefail

readonly source_dir=$1 binary_dir=$2 cxx=$3 libbraid=$4 libprotobuf=$5 sanitizer=${6:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

flags=(-std=c++20 -Wall -Werror -I"$source_dir/include" -I"$binary_dir/include")
[[ -n $sanitizer ]] && flags+=(-fsanitize="$sanitizer")

for header in trainer predictor session custom_op data_source process_group model_io tensor_view run_options device_memory; do
  path="$source_dir/include/braid/$header.h"
  example=$(awk '/^\/\/   / { inside = 1; print substr($0, 6); next } inside { exit }' "$path")
  if [[ -z $example ]]; then
    echo "check_header_examples.sh: include/braid/$header.h has no example (lines indented '//   ')" >&2
    exit 1
  fi
  cat >"$work/$header.cc" <<PROGRAM
#include "braid/$header.h"

#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "braid/braid.pb.h"

int main() {
$example
  return 0;
}
PROGRAM
  if ! "$cxx" "${flags[@]}" "$work/$header.cc" -o "$work/$header" "$libbraid" "$libprotobuf" \
      -Wl,-rpath,"$(dirname "$libbraid")" >"$work/$header.log" 2>&1; then
    cat "$work/$header.log" >&2
    echo "check_header_examples.sh: the example in include/braid/$header.h does not compile (above)" >&2
    exit 1
  fi
  if ! (cd "$work" && "./$header") >"$work/$header.out" 2>&1; then
    cat "$work/$header.out" >&2
    echo "check_header_examples.sh: the example in include/braid/$header.h failed when run" >&2
    exit 1
  fi
  echo "include/braid/$header.h's example compiles and runs: $(tail -n 1 "$work/$header.out")"
done
