#!/usr/bin/env bash
# braid_launch with small bash commands as ranks: every line prefixed with its rank, the rank flags
# and environment, the default rendezvous directory created and removed, partial lines kept whole,
# rank 0's progress line only on a terminal; a failing rank (exit 3, SIGKILL) stops the others
# quickly and is named with its status and last lines; SIGTERM, SIGKILL and --timeout to the
# launcher leave no rank behind; bad flags exit 2 in one line.
#
#   braid_launch_test.sh BRAID_LAUNCH
set -uo pipefail

readonly launch=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export TMPDIR=$dir/tmp  # the launcher's default rendezvous directories land here
mkdir -p "$TMPDIR"
failures=0

fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

# expect_line FILE REGEX
expect_line() {
  grep -Eq -- "$2" "$1" || fail "no line matching '$2' in $1:$(printf '\n'; cat "$1")"
}

now() { date +%s.%N; }
# within START SECONDS: true when less than SECONDS passed since START
within() { awk -v s="$1" -v e="$(now)" -v limit="$2" 'BEGIN { exit !(e - s < limit) }'; }

# gone PIDFILE...: every pid listed is no longer running (a zombie awaiting its reaper counts as
# gone); waits up to 2 s.
gone() {
  local pid
  for _ in $(seq 20); do
    local alive=0
    for pid in $(cat "$@"); do
      local state
      state=$(ps -o stat= -p "$pid" 2>/dev/null) && [[ $state != Z* ]] && alive=1
    done
    [[ $alive -eq 0 ]] && return 0
    sleep 0.1
  done
  return 1
}

# --- N = 1 and 3: every line prefixed; flags and environment; the rendezvous directory.
readonly rank_script='echo "args $*"; echo "env $BRAID_RANK $BRAID_WORLD_SIZE $BRAID_RENDEZVOUS";
  [[ -d ${BRAID_RENDEZVOUS#file://} ]] && echo "rendezvous dir exists"; echo "to stderr" >&2'
for n in 1 3; do
  "$launch" -n $n -- bash -c "$rank_script" rank >"$dir/ok$n.out" 2>"$dir/ok$n.err" ||
    fail "-n $n exited $?: $(cat "$dir/ok$n.err")"
  [[ $(wc -l <"$dir/ok$n.out") -eq $((3 * n)) ]] || fail "-n $n: expected $((3 * n)) stdout lines"
  [[ $(wc -l <"$dir/ok$n.err") -eq $n ]] || fail "-n $n: expected $n stderr lines"
  grep -Ev '^\[rank [0-9]+\] ' "$dir/ok$n.out" "$dir/ok$n.err" && fail "-n $n: unprefixed lines"
  url=$(sed -n 's/^\[rank 0\] env 0 [0-9]* //p' "$dir/ok$n.out")
  [[ $url =~ ^file://$TMPDIR/braid_launch\.[A-Za-z0-9]{6}$ ]] || fail "-n $n: default URL '$url'"
  [[ -e ${url#file://} ]] && fail "-n $n: rendezvous directory ${url#file://} not removed"
  for ((r = 0; r < n; r++)); do
    expect_line "$dir/ok$n.out" "^\[rank $r\] args --rank $r --world_size $n --rendezvous $url\$"
    expect_line "$dir/ok$n.out" "^\[rank $r\] env $r $n $url\$"
    expect_line "$dir/ok$n.out" "^\[rank $r\] rendezvous dir exists\$"
    expect_line "$dir/ok$n.err" "^\[rank $r\] to stderr\$"
  done
done
"$launch" -n 2 --rendezvous redis://127.0.0.1:1 -- bash -c 'echo "$BRAID_RENDEZVOUS $*"' rank \
  >"$dir/url.out" 2>&1 || fail "--rendezvous run exited $?"
readonly redis=redis://127.0.0.1:1
expect_line "$dir/url.out" "^\[rank 1\] $redis --rank 1 --world_size 2 --rendezvous $redis\$"
[[ -z $(ls "$TMPDIR") ]] || fail "--rendezvous given, yet a directory was made: $(ls "$TMPDIR")"

# --- Partial lines stay whole while other ranks print.
"$launch" -n 2 -- bash -c 'if [[ $BRAID_RANK == 0 ]]; then printf "first half "; sleep 0.3;
  echo "second half"; printf "no newline at the end"; else for i in 1 2 3; do echo "line $i";
  sleep 0.1; done; fi' >"$dir/partial.out" 2>&1 || fail "partial-line run exited $?"
expect_line "$dir/partial.out" '^\[rank 0\] first half second half$'
expect_line "$dir/partial.out" '^\[rank 0\] no newline at the end$'
[[ $(grep -c '^\[rank 1\] line [123]$' "$dir/partial.out") -eq 3 ]] || fail "rank 1's lines split"

# --- Progress lines ('\r'): not printed off a terminal; on one, rank 0's only, in place.
readonly progress='printf "\rstep 1 of 2"; sleep 0.2; printf "\rstep 2 of 2"; printf "\n";
  echo "rank $BRAID_RANK done"'
"$launch" -n 2 -- bash -c "$progress" >"$dir/progress.out" 2>&1 || fail "progress run exited $?"
grep -q "step" "$dir/progress.out" && fail "progress lines printed off a terminal"
expect_line "$dir/progress.out" '^\[rank 1\] rank 1 done$'
if command -v script >/dev/null; then
  # script(1) runs its command with $SHELL, which may be dash: no bash quoting in the command.
  printf '%s\n' "$progress" >"$dir/progress.sh"
  script -qec "'$launch' -n 2 -- bash '$dir/progress.sh'" /dev/null \
    >"$dir/tty.out" 2>&1 || fail "progress run on a terminal exited $?"
  tr '\r' '\n' <"$dir/tty.out" | sed 's/\x1b\[K//g' >"$dir/tty_lines.out"
  expect_line "$dir/tty_lines.out" '^\[rank 0\] step 2 of 2'
  grep -q '^\[rank 1\] step' "$dir/tty_lines.out" && fail "rank 1's progress shown on a terminal"
  expect_line "$dir/tty_lines.out" '^\[rank 1\] rank 1 done'
fi

# --- A rank that exits 3 stops the others (their children too) and is named with its last lines.
start=$(now)
"$launch" -n 3 -- bash -c 'if [[ $BRAID_RANK == 1 ]]; then sleep 0.5; for i in $(seq 25); do
  echo "output line $i"; done; exit 3; fi; sleep 1000 & echo $! >'"$dir"'/sleep$BRAID_RANK.pid;
  echo $$ >'"$dir"'/rank$BRAID_RANK.pid; wait' >"$dir/exit3.out" 2>"$dir/exit3.err"
code=$?
[[ $code -eq 3 ]] || fail "a rank exiting 3 should make the launcher exit 3, got $code"
within "$start" 5 || fail "stopping the ranks took 5 s or more"
expect_line "$dir/exit3.err" '^braid_launch: rank 1 exited with status 3; stopping 2 ranks$'
expect_line "$dir/exit3.err" \
  '^braid_launch: rank 1 failed first: it exited with status 3; its last lines:$'
expect_line "$dir/exit3.err" '^  \[rank 1\] output line 6$'
expect_line "$dir/exit3.err" '^  \[rank 1\] output line 25$'
grep -q '^  \[rank 1\] output line 5$' "$dir/exit3.err" && fail "more than the last 20 lines shown"
gone "$dir"/sleep0.pid "$dir"/sleep2.pid "$dir"/rank0.pid "$dir"/rank2.pid ||
  fail "ranks or their children still running after the launcher exited"
[[ -z $(ls "$TMPDIR") ]] || fail "rendezvous directory left after a failure: $(ls "$TMPDIR")"

# --- A rank killed with SIGKILL; a rank ignoring SIGTERM is killed after --grace-seconds.
start=$(now)
"$launch" -n 2 --grace-seconds 0.5 -- bash -c 'trap "" TERM; if [[ $BRAID_RANK == 1 ]]; then
  sleep 0.3; kill -9 $$; fi; while true; do sleep 0.05; done' >"$dir/kill9.out" 2>"$dir/kill9.err"
code=$?
[[ $code -eq 137 ]] || fail "a rank killed by SIGKILL should make the launcher exit 137, got $code"
within "$start" 5 || fail "a rank ignoring SIGTERM was not killed after the grace period"
expect_line "$dir/kill9.err" \
  '^braid_launch: rank 1 was killed by signal 9 \(SIGKILL\); stopping 1 rank$'
expect_line "$dir/kill9.err" '^braid_launch: ranks still running after SIGTERM; sending SIGKILL$'
expect_line "$dir/kill9.err" \
  'rank 1 failed first: it was killed by signal 9 \(SIGKILL\) without printing anything$'

# --- A command that cannot run.
"$launch" -n 2 -- "$dir/no_such_command" >"$dir/noexec.out" 2>"$dir/noexec.err"
code=$?
[[ $code -eq 127 ]] || fail "a missing command should exit 127, got $code"
expect_line "$dir/noexec.err" "cannot run '$dir/no_such_command': No such file or directory"

# --- SIGTERM to the launcher stops every rank and exits 143; --timeout exits 124.
"$launch" -n 2 -- bash -c 'echo $$ >'"$dir"'/term$BRAID_RANK.pid; sleep 1000 & wait' \
  >"$dir/term.out" 2>"$dir/term.err" &
launcher=$!
for _ in $(seq 50); do [[ -s $dir/term0.pid && -s $dir/term1.pid ]] && break; sleep 0.1; done
kill -TERM $launcher
wait $launcher
code=$?
[[ $code -eq 143 ]] || fail "SIGTERM to the launcher should make it exit 143, got $code"
expect_line "$dir/term.err" '^braid_launch: received SIGTERM; stopping 2 ranks$'
gone "$dir"/term0.pid "$dir"/term1.pid || fail "ranks still running after SIGTERM to the launcher"

start=$(now)
"$launch" -n 2 --timeout 0.5 -- bash -c "sleep 1000" rank >"$dir/timeout.out" 2>&1
code=$?
[[ $code -eq 124 ]] || fail "--timeout should exit 124, got $code"
within "$start" 3 || fail "--timeout 0.5 took too long"
expect_line "$dir/timeout.out" '^braid_launch: timed out after 0.5 s; stopping 2 ranks$'

# --- SIGKILL to the launcher: its ranks die with it.
"$launch" -n 2 -- bash -c 'echo $$ >'"$dir"'/orphan$BRAID_RANK.pid; exec sleep 1000' \
  >/dev/null 2>&1 &
launcher=$!
for _ in $(seq 50); do [[ -s $dir/orphan0.pid && -s $dir/orphan1.pid ]] && break; sleep 0.1; done
kill -KILL $launcher
wait $launcher 2>/dev/null
gone "$dir"/orphan0.pid "$dir"/orphan1.pid || fail "ranks outlived a launcher killed with SIGKILL"

# --- Bad flags: exit 2 with one line.
bad_flags=("-n 2 true" "-n 0 -- true" "-- true" "-n 2 --" "-n 2 --no_such_flag -- true"
           "-n 2 extra -- true" "-n 2 --grace-seconds -1 -- true")
for flags in "${bad_flags[@]}"; do
  # shellcheck disable=SC2086
  "$launch" $flags >"$dir/bad.out" 2>&1
  code=$?
  [[ $code -eq 2 ]] || fail "'braid_launch $flags' should exit 2, got $code"
  [[ $(wc -l <"$dir/bad.out") -eq 1 ]] ||
    fail "'braid_launch $flags' should print one line: $(cat "$dir/bad.out")"
done

[[ $failures -eq 0 ]] && echo "braid_launch test ok"
[[ $failures -eq 0 ]]
