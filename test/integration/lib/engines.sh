# shellcheck shell=bash
# docker and containerd: private daemons started and stopped by pid.
# (Sourced by ../lib.sh, which sets SRC and the tally.)

# engine_preflight: skips unless docker.io (dockerd, docker, containerd, ctr) is installed.
engine_preflight() {
  local b
  for b in dockerd containerd ctr; do
    command -v "$b" >/dev/null 2>&1 || skip_all "$b is not installed (apt-get install docker.io)"
  done
}

# stop_daemon PID NAME SECONDS: TERM, then KILL after SECONDS, and reaps
# it; returns 1 (with a warning) if it had to kill.
stop_daemon() {
  local pid=$1 name=$2 secs=$3 i rc=0
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 1 $((secs * 5))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "# warning: $name $pid did not stop within $secs s: killed" >&2
    kill -KILL "$pid" 2>/dev/null
    rc=1
  fi
  wait "$pid" 2>/dev/null
  return "$rc"
}
# wait_daemon_ready PID NAME LOG SECONDS CMD...: waits until CMD succeeds
# (the daemon answers) for up to SECONDS; if the daemon exits or never
# answers, dies with the last lines of its LOG.
wait_daemon_ready() {
  local pid=$1 name=$2 log=$3 secs=$4 i
  shift 4
  for i in $(seq 1 $((secs * 5))); do
    kill -0 "$pid" 2>/dev/null || break
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  sed "s/^/# $name: /" "$log" | tail -20
  die "$name did not become ready (log above)"
}
# kill_shims_of SOCKET: kills the containerd shims still serving the
# containerd at SOCKET (started with -address SOCKET); returns 1 if any were.
kill_shims_of() {
  local pid rc=0
  for pid in $(pgrep -f -- "-address $1" 2>/dev/null); do
    echo "# warning: containerd shim $pid still running: killed" >&2
    kill -KILL "$pid" 2>/dev/null
    rc=1
  done
  return "$rc"
}

# docker_setup: a private dockerd for this test (socket, pidfile, data and
# exec roots under $T; no iptables, no bridge), stopped by its recorded pid at
# exit, with its cgroups, mounts and the directories it creates on the host
# (/run/docker, /run/containerd, /opt/containerd) removed. Sets DOCKER (the
# docker.io client: another docker CLI may come first in PATH).
docker_setup() {
  DOCKER=/usr/bin/docker
  [[ -x $DOCKER ]] || DOCKER=$(command -v docker) || skip_all "no docker client (apt-get install docker.io)"
  export DOCKER_CONFIG=$T/docker-cli
  mkdir -p "$DOCKER_CONFIG"
  DOCKERD_PID=
  CGROUPS_DOCKER_BEFORE=$(cgroups_snapshot docker)
  KEY_JSON_BEFORE=$([[ -e /etc/docker/key.json ]] && echo yes)
  it_track_new_dirs /run/docker /run/containerd /opt/containerd
  it_add_cleanup docker_stop
}
# dk ARGS...: the docker client on the private dockerd.
dk() { timeout 120 "$DOCKER" -H "unix://$T/docker.sock" "$@"; }
# docker_stop: removes the containers, stops dockerd (TERM, then KILL after
# 60 s) by its pid and the containerd it started; returns 1 if it had to kill.
docker_stop() {
  local rc=0 ids ctd_pid
  [[ -n $DOCKERD_PID ]] || return 0
  ids=$(dk ps -aq 2>/dev/null)
  [[ -n $ids ]] && dk rm -f $ids >/dev/null 2>&1
  ctd_pid=$(cat "$T/exec/containerd/containerd.pid" 2>/dev/null)
  stop_daemon "$DOCKERD_PID" dockerd 60 || rc=1
  if [[ -n $ctd_pid ]] && kill -0 "$ctd_pid" 2>/dev/null &&
     [[ $(readlink "/proc/$ctd_pid/exe") == */containerd ]]; then
    echo "# warning: dockerd's containerd $ctd_pid outlived it: killed" >&2
    kill -KILL "$ctd_pid" 2>/dev/null
    rc=1
  fi
  DOCKERD_PID=
  local left
  left=$(unmount_under "$T/data"; unmount_under "$T/exec")
  [[ -n $left ]] && echo "# warning: dockerd left mounts (unmounted): $(tr '\n' ' ' <<<"$left")" >&2
  remove_new_cgroups docker "$CGROUPS_DOCKER_BEFORE"
  if [[ -z $KEY_JSON_BEFORE && -e /etc/docker/key.json ]]; then
    echo "# warning: dockerd wrote /etc/docker/key.json: removed" >&2
    rm -f /etc/docker/key.json
  fi
  return "$rc"
}
# docker_start DAEMON_JSON: starts the private dockerd with DAEMON_JSON and
# waits until it answers; dies with its log when it does not.
docker_start() {
  dockerd --config-file "$1" -H "unix://$T/docker.sock" --pidfile "$T/docker.pid" \
    --data-root "$T/data" --exec-root "$T/exec" --iptables=false --ip6tables=false --bridge=none \
    </dev/null >"$T/logs/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  wait_daemon_ready "$DOCKERD_PID" dockerd "$T/logs/dockerd.log" 60 \
    "$DOCKER" -H "unix://$T/docker.sock" version
}
