#!/usr/bin/env bash
# netns_job.sh: runs one multi-host braid_train job on this machine, each host simulated by a Linux
# network namespace, and removes every namespace, link and process of the job when it ends.
#
#   netns_job.sh [--hosts H] [--ranks_per_host R] [--subnet A.B.C] [--port P] [--job_id ID]
#                [--grace_seconds S] -- BRAID_TRAIN [BRAID_TRAIN ARGS...]
#   netns_job.sh --cleanup ID      removes what a job killed with SIGKILL left behind
#
# The simulated network (nothing is created in, or routed to, this machine's own namespace):
#
#   ID_braid_br: bridge br0 -- veth hK -- eth0 in ID_braid_hK, address A.B.C.(K+1)/24, K < H
#
# Every namespace has its loopback up. Host 0 runs redis-server on A.B.C.1:P (no persistence),
# the job's rendezvous store. Host K runs R ranks, rank K*R+r being
#
#   ip netns exec ID_braid_hK BRAID_TRAIN ARGS... --rank K*R+r --world_size H*R
#       --rendezvous redis://A.B.C.1:P --hostname A.B.C.(K+1)
#
# so each rank binds its own host's address for Gloo; the ranks' traffic stays on the simulated
# network. Each line a rank prints is prefixed with "[host K rank N] ". When a rank fails, the
# others get SIGTERM, then SIGKILL after --grace_seconds (default 5); the first failure is named.
#
# Defaults: 2 hosts, 1 rank per host, subnet 10.213.57, port 6379, ID nj<pid>x<random>. The subnet
# is private to the job's namespaces, so parallel jobs may use the same one; the ID keeps their
# namespaces apart. The rendezvous timeout and job name are braid_train's own flags.
#
# Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN: ip netns add/exec), iproute2 and redis-server.
# Exit status: 0 when every rank succeeded; the first failed rank's status (128 + signal when it
# was killed); 1 when the network or redis could not be set up; 2 for bad usage; 77 when a
# prerequisite is missing (the reason on stdout).
set -uo pipefail

usage() {
  sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0" >&2
  exit 2
}
say() { echo "netns_job: $*"; }

hosts=2 ranks_per_host=1 subnet=10.213.57 port=6379 grace=5
job_id="nj$$x$RANDOM"
cleanup_only=""
while (($# > 0)); do
  case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --ranks_per_host) ranks_per_host=$2; shift 2 ;;
    --subnet) subnet=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --job_id) job_id=$2; shift 2 ;;
    --grace_seconds) grace=$2; shift 2 ;;
    --cleanup) cleanup_only=1; job_id=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "netns_job: unknown option '$1'" >&2; usage ;;
  esac
done
[[ $hosts =~ ^[1-9][0-9]?$ && $hosts -le 254 ]] || { echo "netns_job: --hosts 1..254" >&2; exit 2; }
[[ $ranks_per_host =~ ^[1-9][0-9]*$ ]] || { echo "netns_job: bad --ranks_per_host" >&2; exit 2; }
[[ $subnet =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] ||
  { echo "netns_job: --subnet takes three octets, e.g. 10.213.57" >&2; exit 2; }
[[ $port =~ ^[0-9]+$ && $grace =~ ^[0-9]+$ ]] || { echo "netns_job: bad --port or --grace_seconds" >&2; exit 2; }
[[ $job_id =~ ^[A-Za-z0-9_-]{1,40}$ ]] || { echo "netns_job: --job_id: 1-40 of [A-Za-z0-9_-]" >&2; exit 2; }

readonly bridge_ns="${job_id}_braid_br"
host_ns() { echo "${job_id}_braid_h$1"; }
host_addr() { echo "$subnet.$(($1 + 1))"; }

# Kills every process inside the job's namespaces and deletes them (their links go with them).
remove_network() {
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${job_id}_braid_(br|h[0-9]+)$"); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
}

if [[ -n $cleanup_only ]]; then
  remove_network
  exit 0
fi
(($# > 0)) || { echo "netns_job: no command after --" >&2; usage; }

# Prerequisites: a missing one exits 77, saying which.
for tool in ip redis-server; do
  command -v "$tool" >/dev/null ||
    { say "skipped: '$tool' not found (install iproute2 and redis-server)"; exit 77; }
done
[[ -x $1 ]] || command -v "$1" >/dev/null || { echo "netns_job: '$1' is not executable" >&2; exit 2; }

logs=$(mktemp -d "${TMPDIR:-/tmp}/netns_job.XXXXXX") || exit 1
# On every exit: kill every process in the job's namespaces (ranks, redis), let the rank
# subshells reap them (2 s at most, then SIGKILL), remove the network. Quietly: bash would report
# each killed job.
finish() {
  {
    local ns deadline=$((SECONDS + 2))
    for ns in "$bridge_ns" $(for ((h = 0; h < hosts; ++h)); do host_ns $h; done); do
      ip netns pids "$ns" | xargs -r kill -9
    done
    while [[ -n $(jobs -rp) ]] && ((SECONDS < deadline)); do sleep 0.05; done
    kill -9 $(jobs -rp)
    wait
    remove_network
    rm -rf "$logs"
  } 2>/dev/null
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Runs "$@" and, when it fails, exits 77 (environment) or 1 (anything else) with its error.
setup() {
  local status=$1; shift
  local err
  if ! err=$("$@" 2>&1); then
    if ((status == 77)); then say "skipped: cannot set up network namespaces: '$*': $err"
    else echo "netns_job: '$*' failed: $err" >&2; fi
    exit "$status"
  fi
}

# The network. The first namespace doubles as the permission check.
setup 77 ip netns add "$bridge_ns"
setup 77 ip netns exec "$bridge_ns" true
setup 77 ip -n "$bridge_ns" link add br0 type bridge
setup 1 ip -n "$bridge_ns" link set lo up
setup 1 ip -n "$bridge_ns" link set br0 up
for ((h = 0; h < hosts; ++h)); do
  ns=$(host_ns $h)
  setup 1 ip netns add "$ns"
  setup 77 ip -n "$bridge_ns" link add "h$h" type veth peer name eth0 netns "$ns"
  setup 1 ip -n "$bridge_ns" link set "h$h" master br0
  setup 1 ip -n "$bridge_ns" link set "h$h" up
  setup 1 ip -n "$ns" addr add "$(host_addr $h)/24" dev eth0
  setup 1 ip -n "$ns" link set eth0 up
  setup 1 ip -n "$ns" link set lo up
done

# The rendezvous store on host 0, ready when it accepts a connection (10 s at most). It listens
# only on host 0's address inside the job's network, hence no protected mode.
readonly store_addr=$(host_addr 0)
ip netns exec "$(host_ns 0)" redis-server --port "$port" --bind "$store_addr" --save '' \
  --appendonly no --daemonize no --protected-mode no --dir "$logs" >"$logs/redis.log" 2>&1 &
redis_pid=$!
for ((i = 0; ; ++i)); do
  ip netns exec "$(host_ns 0)" timeout 1 bash -c ": </dev/tcp/$store_addr/$port" 2>/dev/null && break
  if ((i >= 100)) || ! kill -0 "$redis_pid" 2>/dev/null; then
    echo "netns_job: redis-server did not start on $store_addr:$port:" >&2
    tail -5 "$logs/redis.log" >&2
    exit 1
  fi
  sleep 0.1
done
say "job $job_id: $hosts hosts x $ranks_per_host ranks, subnet $subnet.0/24," \
  "rendezvous redis://$store_addr:$port"

# The ranks. A rank's label and host by the pid of the subshell that runs it.
declare -A label
world_size=$((hosts * ranks_per_host))
for ((h = 0; h < hosts; ++h)); do
  for ((r = h * ranks_per_host; r < (h + 1) * ranks_per_host; ++r)); do
    say "host $h rank $r: namespace $(host_ns $h), address $(host_addr $h)"
    (
      ip netns exec "$(host_ns $h)" "$@" --rank "$r" --world_size "$world_size" \
        --rendezvous "redis://$store_addr:$port" --hostname "$(host_addr $h)" 2>&1 |
        sed -u "s/^/[host $h rank $r] /"
      exit "${PIPESTATUS[0]}"
    ) 2>/dev/null &
    label[$!]="host $h rank $r"
  done
done

# Stops every rank still running: SIGTERM, then SIGKILL after the grace period.
stop_ranks() {
  local h deadline=$((SECONDS + grace))
  for ((h = 0; h < hosts; ++h)); do ip netns pids "$(host_ns $h)" | xargs -r kill -TERM 2>/dev/null; done
  while ((SECONDS < deadline)) && kill -0 "${!label[@]}" 2>/dev/null; do sleep 0.1; done
  for ((h = 0; h < hosts; ++h)); do ip netns pids "$(host_ns $h)" | xargs -r kill -KILL 2>/dev/null; done
}

describe() {
  if (($1 > 128)); then echo "was killed by signal $(($1 - 128)) (SIG$(kill -l "$1"))"
  else echo "exited with status $1"; fi
}

first_status=0
while ((${#label[@]} > 0)); do
  done_pid=""
  wait -n -p done_pid "${!label[@]}"
  status=$?
  [[ -n $done_pid ]] || break
  who=${label[$done_pid]}
  unset "label[$done_pid]"
  if ((status != 0 && first_status == 0)); then
    first_status=$status
    who_failed="$who $(describe "$status")"
    say "$who_failed, the first rank to fail; stopping the others"
    stop_ranks
  fi
done
if ((first_status != 0)); then
  say "job failed: $who_failed"
  exit "$first_status"
fi
say "all $world_size ranks succeeded"
