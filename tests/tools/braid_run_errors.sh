#!/usr/bin/env bash
# braid_run's error contract: a malformed net exits 1 with one stderr line naming file:line:column;
# a missing file exits 1; a bad flag (a CUDA device the machine lacks among them) exits 2. A net
# with an argument its op does not read runs, unless --strict-args makes that the error.
#
#   braid_run_errors.sh BRAID_RUN MALFORMED_NET HINTED_NET
set -uo pipefail

readonly braid_run=$1 malformed=$2 hinted=$3
failures=0

# expect_exit CODE STDERR_REGEX ARGS...
expect_exit() {
  local want=$1 pattern=$2 err code
  shift 2
  err=$("$braid_run" "$@" 2>&1 >/dev/null)
  code=$?
  if [[ $code -ne $want ]] || ! grep -Eq -- "$pattern" <<<"$err"; then
    echo "FAILED: braid_run $*: exit $code (want $want), stderr:" >&2
    echo "$err" >&2
    echo "  (want a line matching: $pattern)" >&2
    failures=$((failures + 1))
  else
    echo "ok: braid_run $* -> exit $code: $(head -n 1 <<<"$err")"
  fi
}

expect_exit 1 "^InvalidArgument: .*malformed_net\.pbtxt:[0-9]+:[0-9]+: " "$malformed"
expect_exit 1 "^NotFound: .*no_such_net\.pbtxt" /nonexistent/no_such_net.pbtxt
expect_exit 2 "unknown command line flag" "$malformed" --no_such_flag
expect_exit 2 "--executor must be" "$malformed" --executor threaded
expect_exit 2 "exactly one NET"
# A CUDA device the machine lacks is refused in one line naming it, with CUDA's error.
expect_exit 2 "^braid_run: --device cuda:99 does not exist: " "$malformed" --device cuda:99
expect_exit 2 "^braid_run: --device sim:0,sim:1: name one device" "$malformed" --device sim:0,sim:1 
expect_exit 0 "" "$hinted"
expect_exit 1 "^InvalidArgument: net 'hinted' op #1 \\(Relu 'relu'\\): unknown argument 'cudnn_exhaustive_search'" \
  "$hinted" --strict-args

if [[ $(wc -l <<<"$("$braid_run" "$malformed" 2>&1 >/dev/null)") -ne 1 ]]; then
  echo "FAILED: a malformed net must give exactly one stderr line" >&2
  failures=$((failures + 1))
fi
[[ $failures -eq 0 ]]
