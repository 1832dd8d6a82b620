#!/bin/bash
# standins.shrub: the shrub controller stand-in (shrub_standin.c) against
# itself and against Onload's bytes, without root.
#   - `request --dump` encodes each request exactly as Onload's own
#     shrub_adapter.c does (fixtures/shrub_request_v8.hex);
#   - `serve` lays out the controller's directory and sockets as Onload's
#     controller does (modes, setgid with a client group, a second
#     controller of one id steps aside) and answers `request` and
#     `request --data` with the lines the integration tests read;
#   - SIGTERM removes its sockets and exits 0.
# Environment: OCID_SHRUB_STANDIN (the binary), OCID_SOURCE_DIR.
set -uo pipefail
IT_NAME=standins.shrub IT_PASS=0 IT_FAIL=0
SRC=${OCID_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=../integration/lib/report.sh
source "$SRC/test/integration/lib/report.sh"
S=${OCID_SHRUB_STANDIN:-}
[[ -x $S ]] || die "OCID_SHRUB_STANDIN is not an executable: '$S'"

# --- the bytes ---------------------------------------------------------------
declare -A args=([hwport]="" [ifindex]="--command ifindex --value 7 --buffers 64"
                 [destroy]="--command destroy --value 2")
n=0
while read -r name hex; do
  [[ -z $name || $name == \#* ]] && continue
  n=$((n + 1))
  # shellcheck disable=SC2086  # the arguments are words
  assert_eq "$name: request --dump ${args[$name]-?} gives Onload's bytes" "$hex" \
    "$("$S" request --dump ${args[$name]-?})"
done <"$SRC/test/standins/fixtures/shrub_request_v8.hex"
assert_eq "the fixture has the three requests" 3 "$n"

# --- serve and request ---------------------------------------------------------
T=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
# Longer than sun_path (108): the stand-ins bind and connect from the directory.
D=$T/$(printf 'd%.0s' {1..60})/$(printf 'e%.0s' {1..60})
mkdir -p "$D/run"
RUN=$D/run/onload

start() {  # LOG ARGS...: serve in the background (pid: $pid), wait for its first line
  local log=$1
  shift
  "$S" serve "$@" >"$log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do
    [[ -s $log ]] && break
    sleep 0.05
  done
}

start "$T/s0.log" "$RUN" 0
pid0=$pid
assert_eq "serve prints READY" READY "$(head -1 "$T/s0.log")"
C=$RUN/controller-0
assert_eq "RUNDIR is 0755" 755 "$(stat -c %a "$RUN")"
assert_eq "controller-0 is 0755, ours (default client mode 0666)" "755 $(id -u):$(id -g)" \
  "$(stat -c '%a %u:%g' "$C")"
assert_eq "shrub_config is a socket, mode 0666" "socket 666" \
  "$(stat -c '%F %a' "$C/shrub_config")"

out=$("$S" request --data "$C/shrub_config"); rc=$?
assert_eq "request --data: the token and the data path" $'REPLY 1\nDATA token=1' "$out"
assert_eq "request --data exits 0" 0 "$rc"
assert_eq "shrub-1 has the client mode" 666 "$(stat -c %a "$C/shrub-1")"
assert_eq "a second request for the same port shares shrub-1" "REPLY 1" \
  "$("$S" request "$C/shrub_config")"
assert_eq "CREATE_IFINDEX gets shrub-2" "REPLY 2" \
  "$("$S" request --command ifindex --value 7 "$C/shrub_config")"
out=$("$S" request --version 7 "$C/shrub_config"); rc=$?
assert_eq "another protocol version: -1000 (SHRUB_ERR_INCOMPATIBLE_VERSION)" "REPLY -1000 1" "$out $rc"
assert_eq "an unknown command: -EOPNOTSUPP" "REPLY -95" "$("$S" request --command 99 "$C/shrub_config")"
assert_eq "buffer count 0: -EINVAL" "REPLY -22" "$("$S" request --value 5 --buffers 0 "$C/shrub_config")"
assert_eq "DESTROY replies 0" "REPLY 0" "$("$S" request --command destroy --value 2 "$C/shrub_config")"
check "the last reference gone, shrub-2 is removed" test ! -e "$C/shrub-2"
out=$("$S" request "$RUN/controller-1/shrub_config"); rc=$?
assert_eq "no controller: one connect, ENOENT" "ERROR connect: ENOENT 1" "$out $rc"
assert_eq "a second controller of id 0 steps aside" "BUSY controller-0" \
  "$("$S" serve "$RUN" 0 2>&1)"

# The client group's layout (as shrub_controller_client_gid / _mode give it).
start "$T/s1.log" "$RUN" 1 --client-gid "$(id -g)" --client-mode 660
pid1=$pid
assert_eq "serve with a client group prints READY" READY "$(head -1 "$T/s1.log")"
assert_eq "controller-1: 02750 (setgid, group r-x, others nothing)" "2750 $(id -u):$(id -g)" \
  "$(stat -c '%a %u:%g' "$RUN/controller-1")"
assert_eq "its shrub_config: exactly the client mode 0660" 660 \
  "$(stat -c %a "$RUN/controller-1/shrub_config")"
assert_eq "request --data on controller-1" $'REPLY 1\nDATA token=1' \
  "$("$S" request --data "$RUN/controller-1/shrub_config")"

# --- SIGTERM -------------------------------------------------------------------
kill -TERM "$pid0" "$pid1"
wait "$pid0"; rc0=$?
wait "$pid1"; rc1=$?
assert_eq "SIGTERM: both exit 0" "0 0" "$rc0 $rc1"
assert_eq "SIGTERM: no socket left" "" "$(find "$C" "$RUN/controller-1" -mindepth 1)"
log=$(cat "$T/s0.log")
assert_contains "the stand-in's line for libonload's request" "$log" \
  "REQUEST socket=shrub_config version=8 command=1 buffers=32 peer_uid=$(id -u) peer_gid=$(id -g) reply=1"
assert_contains "the stand-in's line for the data path" "$log" \
  "REQUEST socket=shrub-1 version=8 type=0 peer_uid=$(id -u) peer_gid=$(id -g) reply=1"
assert_contains "the stand-in's line for the wrong version" "$log" \
  "REQUEST socket=shrub_config version=7 command=1 buffers=32"
assert_contains "the stand-in's line for DESTROY" "$log" "command=0 token=2"

echo "# $IT_NAME: $IT_PASS passed, $IT_FAIL failed"
((IT_FAIL == 0))
