#!/usr/bin/env bash
# Fails when a glog CHECK (or LOG(FATAL)) in braid's own code (runtime/, ops/, planner/, tools/, include/) is not
# marked as an internal invariant: a comment with "Invariant:" on its line or just above it (one
# comment may head a run of CHECK lines), saying why no net, file, flag or API call can make it
# fail. Caller mistakes are braid::Error / Status (include/braid/status.h), never CHECK. Prints every
# CHECK with its reason, for review.
# Usage: tests/check_invariants.sh <repository root>
set -euo pipefail
cd "${1:?usage: check_invariants.sh <repository root>}"
folders=$(for d in runtime ops planner tools include; do if [ -d "$d" ]; then echo "$d"; fi; done)
# shellcheck disable=SC2086
files=$(find $folders -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) | sort)
if [ -z "$files" ]; then
  echo "check_invariants.sh: no sources under $(pwd)" >&2
  exit 1
fi
# shellcheck disable=SC2086
awk '
  FNR == 1 { reason = ""; after_check = 0 }
  {
    is_check = ($0 ~ /(^|[^A-Za-z0-9_])(D?P?CHECK(_[A-Z]+)*[ \t]*\(|[DP]?LOG(_IF|_EVERY_N|_FIRST_N|_IF_EVERY_N)?\([ \t]*D?FATAL)/) &&
               ($0 !~ /^[ \t]*(\/\/|\*)/)
    if ($0 ~ /Invariant:/) { reason = $0; sub(/.*Invariant:[ \t]*/, "", reason); after_check = 0 }
    if (is_check) after_check = 1
    if (is_check) {
      if (reason != "") { kept = kept sprintf("  %s:%d: %s\n", FILENAME, FNR, reason) }
      else { bad = bad sprintf("  %s:%d: %s\n", FILENAME, FNR, $0) }
    } else if ($0 !~ /Invariant:/ && ($0 !~ /^[ \t]*(<<|\/\/)/ || ($0 ~ /^[ \t]*\/\// && after_check))) {
      # A reason covers the CHECK lines (and their continuations) right below it; a comment line
      # after them, or any code, ends it.
      reason = ""
      after_check = 0
    }
  }
  END {
    printf "CHECKs kept as internal invariants:\n%s", kept
    if (bad != "") {
      printf "CHECKs not marked as internal invariants (make a caller mistake a braid::Error, " \
             "or say why none can reach it with // Invariant: ...):\n%s", bad > "/dev/stderr"
      exit 1
    }
  }' $files
