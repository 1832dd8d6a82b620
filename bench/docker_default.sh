#!/bin/bash
# bench/docker_default.sh: what making the runtime shim docker's default
# runtime (`setup docker --default-runtime`) costs a container that does not
# ask, end to end: `docker run --rm IMAGE true` through the shim (docker's
# default) against the same with `--runtime=runc`, interleaved, as a ratio.
# And, for scale, an activated run (OCI_ONLOAD=all) on the simulated Onload
# install. Run as root; see bench/README.md. Nothing is asserted.
#
# A private dockerd (socket, pidfile, data and exec roots in one temp dir; no
# iptables, no bridge; containers under the cgroup parent ocidb-<pid>), a
# busybox image imported from scripts/make-rootfs.sh's tree, the simulated
# install from scripts/sim-onload.sh. Everything is removed on exit.
#
# Environment: RUNS [30] per candidate, WARMUP [3], OCID_BIN [build/oci-decorator]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
OCID_BIN=${OCID_BIN:-$REPO/build/oci-decorator}
TAG=ocidb-$$

die() { echo "docker_default.sh: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "must run as root (dockerd)"
for tool in dockerd docker jq runc; do
  command -v "$tool" >/dev/null || die "needs $tool (apt-get install docker.io jq)"
done
[[ -x $OCID_BIN ]] || die "no $OCID_BIN (build first, or set OCID_BIN)"

W=$(mktemp -d "/tmp/$TAG.XXXXXX")
DOCKERD_PID=
NEW_DIRS=()
for d in /run/docker /run/containerd /opt/containerd; do [[ -e $d ]] || NEW_DIRS+=("$d"); done
cleanup() {
  if [[ -n $DOCKERD_PID ]]; then
    dk rm -f $(dk ps -aq 2>/dev/null) >/dev/null 2>&1 || true
    kill -TERM "$DOCKERD_PID" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$DOCKERD_PID" 2>/dev/null || true
  fi
  awk -v w="$W/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
  find /sys/fs/cgroup -depth -type d -name "$TAG" -exec rmdir {} + 2>/dev/null || true
  for d in "${NEW_DIRS[@]}"; do rm -rf "$d"; done
  rm -rf "$W"
}
trap cleanup EXIT
dk() { docker -H "unix://$W/docker.sock" "$@"; }

echo "== setting up in $W" >&2
bash "$REPO/scripts/sim-onload.sh" "$W/host" >/dev/null
bash "$REPO/scripts/make-rootfs.sh" "$W/rootfs" >/dev/null
mkdir -p "$W/bin"
ln -s "$OCID_BIN" "$W/bin/oci-decorator-runtime"
SHIM=$W/bin/oci-decorator-runtime
# The shim's settings as runtimeArgs (no spaces: docker 20.10 writes them
# into a shell script), docker's default made the shim by setup itself.
jq -n --arg cg "/$TAG" --arg key "$W/key.json" --arg h "$W/host" --arg c "$REPO/config" '{
    "cgroup-parent": $cg, "deprecated-key-path": $key, "log-level": "warn",
    "runtimes": {"oci-decorator": {"path": "unset", "runtimeArgs": ["--ocid-host-root", $h, "--ocid-config-dir", $c]}}}' \
  >"$W/daemon.json"
"$OCID_BIN" setup docker --config "$W/daemon.json" --runtime-path "$SHIM" --default-runtime >/dev/null
dockerd --config-file "$W/daemon.json" -H "unix://$W/docker.sock" --pidfile "$W/docker.pid" \
  --data-root "$W/data" --exec-root "$W/exec" --iptables=false --ip6tables=false --bridge=none \
  </dev/null >"$W/dockerd.log" 2>&1 &
DOCKERD_PID=$!
for _ in $(seq 1 300); do dk version >/dev/null 2>&1 && break; sleep 0.2; done
dk version >/dev/null 2>&1 || { tail -20 "$W/dockerd.log" >&2; die "dockerd did not start"; }
[[ $(dk info --format '{{.DefaultRuntime}}') == oci-decorator ]] || die "the shim is not docker's default"
tar -C "$W/rootfs" -cf - . | dk import - "local/$TAG:1" >/dev/null

# time_run LABEL ARGS...: one `docker run --rm`, its wall time in ms appended to $W/LABEL.
time_run() {
  local label=$1 t0
  shift
  t0=$EPOCHREALTIME
  dk run --rm --network=none "$@" "local/$TAG:1" true >/dev/null 2>&1 </dev/null ||
    die "docker run $* failed"
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.3f\n", (b - a) * 1000}' >>"$W/$label"
}
candidates=(runc shim activated)
run_one() {
  case $1 in
    runc) time_run "$@" --runtime=runc ;;
    shim) time_run "$@" ;;
    activated) time_run "$@" -e OCI_ONLOAD=all ;;
  esac
}
echo "== warm-up ($WARMUP each)" >&2
for _ in $(seq 1 "$WARMUP"); do for c in "${candidates[@]}"; do run_one "$c"; done; done
rm -f "$W/runc" "$W/shim" "$W/activated"
echo "== $RUNS runs each, interleaved" >&2
for _ in $(seq 1 "$RUNS"); do for c in "${candidates[@]}"; do run_one "$c"; done; done

stat_of() { sort -n "$W/$1" | awk '{v[NR] = $1} END {printf "%.1f %.1f %.1f", v[1], v[int((NR + 1) / 2)], v[NR]}'; }
read -r rmin rmed rmax <<<"$(stat_of runc)"
printf '\n%s, docker %s, runc %s, %s runs each, interleaved (ms: min median max)\n' \
  "$(date -u +%F)" "$(dk version --format '{{.Server.Version}}')" "$(runc --version | awk 'NR==1 {print $3}')" "$RUNS"
printf '| %-58s | %8s | %8s | %8s | %6s |\n' "docker run --rm IMAGE true" min median max ratio
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..60})" ---------- ---------- ---------- --------
for c in "${candidates[@]}"; do
  read -r mn md mx <<<"$(stat_of "$c")"
  case $c in
    runc) what="--runtime=runc (baseline)" ;;
    shim) what="the shim as docker's default, not asked" ;;
    activated) what="the shim as docker's default, -e OCI_ONLOAD=all" ;;
  esac
  printf '| %-58s | %8s | %8s | %8s | %5.3fx |\n' "$what" "$mn" "$md" "$mx" \
    "$(awk -v a="$md" -v b="$rmed" 'BEGIN {print a / b}')"
done
