# shellcheck shell=bash
# podman with its storage and state under $T, its hooks.d from the build.
# (Sourced by ../lib.sh, which sets SRC and the tally.)

# podman_setup: after it_setup. Sets POD (podman with storage, run and runtime
# state under $T, cgroupfs, file events) and POD_RUN (options for `run`).
# Podman creates /run/containers, /run/runc and /run/crun: removed at exit if
# they did not exist before and are empty.
podman_setup() {
  command -v podman >/dev/null 2>&1 || skip_all "podman is not installed (apt-get install podman)"
  it_track_new_dirs /run/containers /run/runc /run/crun /run/libpod
  mkdir -p "$T/podman"
  POD=(podman --root "$T/podman/storage" --runroot "$T/podman/run" --tmpdir "$T/podman/tmp"
       --network-config-dir "$T/podman/net" --storage-driver vfs
       --cgroup-manager cgroupfs --events-backend file)
  POD_RUN=(--rm --network=none --cgroup-parent "/$CG_PARENT"
           --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
}
# podman_hooks_dir DIR: the build's generated hooks.d entries in DIR, with
# hook.path replaced by $OCID_BIN and --host-root/--config-dir/--state-dir of
# the simulated install added ($OCID_BUILD_DIR, else the binary's directory).
podman_hooks_dir() {
  local dir=$1 build=${OCID_BUILD_DIR:-$(dirname "$OCID_BIN")} stage src extra
  mkdir -p "$dir"
  for stage in prestart poststop; do
    src=$build/hooks.d/oci-decorator-$stage.json
    [[ -f $src ]] || die "missing generated hooks.d entry $src (OCID_BUILD_DIR=$build)"
    extra=(--host-root "$HOST_ROOT" --config-dir "$CONF_DIR" --state-dir "$STATE_DIR")
    [[ ${IT_DEBUG:-0} == 1 ]] && extra+=(--log-level debug --log-file "$T/logs/podman-hook.log")
    jq --arg bin "$OCID_BIN" --argjson extra "$(printf '%s\n' "${extra[@]}" | jq -R . | jq -s .)" '
        .hook.path = $bin | .hook.args = (.hook.args[0:1] + $extra + .hook.args[1:])' \
      "$src" >"$dir/oci-decorator-$stage.json" || die "jq edit of $src failed"
  done
}

# pod_runtime_args RUNTIME: global podman options selecting RUNTIME with its state under $T.
pod_runtime_args() { echo "--runtime $1 --runtime-flag root=$T/podman/rt-$1"; }
# run_podman RUNTIME [global podman options...] -- [run options...] -- SCRIPT
# runs SCRIPT in a --rootfs copy of $BASE_ROOTFS. crun is wrapped in in_crun.
# Sets RC, OUT, ERR, ROOTFS.
run_podman() {
  local rt=$1; shift
  local globals=() runopts=()
  while [[ $# -gt 0 && $1 != -- ]]; do globals+=("$1"); shift; done
  shift
  while [[ $# -gt 0 && $1 != -- ]]; do runopts+=("$1"); shift; done
  shift
  local script=$1 wrap=()
  [[ $rt == crun ]] && wrap=(in_crun)
  ROOTFS=$T/podman/rootfs-$RANDOM$RANDOM
  cp -a "$BASE_ROOTFS" "$ROOTFS"
  # shellcheck disable=SC2046
  "${wrap[@]}" timeout 120 "${POD[@]}" $(pod_runtime_args "$rt") "${globals[@]}" run "${POD_RUN[@]}" "${runopts[@]}" \
    --rootfs "$ROOTFS" sh -c "$script" </dev/null >"$T/podman/out" 2>"$T/podman/err"
  RC=$?
  OUT=$(cat "$T/podman/out")
  ERR=$(cat "$T/podman/err")
  sanitizer_check "$ERR"
  return 0
}
