# shellcheck shell=bash
# A private containerd 2.x driven through CRI, for root integration tests
# (sourced after test/integration/lib.sh and its it_setup: uses $T, $SRC,
# $CG_PARENT, $BASE_ROOTFS, die, info, it_add_cleanup, it_track_new_dirs).
#
# containerd 2.x is Debian unstable's package, unpacked privately by
# scripts/fetch-containerd2.sh (never installed). The daemon here has its own
# root, state, temp, gRPC/ttrpc sockets, CDI spec directory, NRI socket and
# NRI plugin directories, CNI directories and opt dir, all under $CTD2; a
# `version = 3` config (the schema of `containerd config default` of that
# binary: the tables set here are checked against it), importing
# $CTD2/conf.d/*.toml (where `oci-decorator setup containerd` can write its
# drop-in). Pod sandboxes are host-network (namespace mode NODE: no CNI) with
# the cgroup parent /$CG_PARENT, which it_cleanup removes; the sandbox
# ("pause") image and the test image are the same busybox tree (BASE_ROOTFS)
# built as an OCI image layout and imported with ctr (no registry).
#
#   ctd2_setup             fetch containerd 2.x (a failure FAILS the test), set
#                          the variables below, register the cleanup
#   ctd2_start             write the config, start containerd, import the images,
#                          wait until CRI is ready
#   ctd2_stop              remove pods, stop containerd and its shims by pid,
#                          unmount what they left; returns 1 if it had to kill
#   ctd2_runp NAME [HANDLER]  a host-network pod sandbox (run by the runtime
#                          HANDLER, as a RuntimeClass names it; default runc):
#                          sets POD_ID, POD_CONFIG
#   ctd2_container_json NAME SCRIPT [JQ]  a ContainerConfig (JSON file path on
#                          stdout) running `sh -c SCRIPT` in $CTD2_IMAGE, with
#                          the jq filter JQ applied (envs, mounts, devices,
#                          CDI_devices in CRI's JSON mapping)
#   ctd2_run NAME CONFIG [cri run options]  create, start, wait, read the log,
#                          remove: sets RC (exit code; 125: CreateContainer or
#                          StartContainer failed), OUT (stdout), ERR (stderr)
#   ctd2_assert_mounts DESC  the host mount table is the one at it_setup but for
#                          the rootfs mounts of the pod sandboxes still running
#   cri ARGS...            test/cri/cri_client.py on this containerd
#
# Variables: CTD2_BIN (dir of containerd, ctr, containerd-shim-runc-v2),
# CTD2 (its private tree), CTD2_SOCK, CTD2_CDI_DIR, CTD2_NRI_SOCK,
# CTD2_NRI_PLUGIN_DIR, CTD2_CONFIG, CTD2_DROPIN_DIR, CTD2_IMAGE,
# CTD2_PAUSE_IMAGE, CTD2_LOG (containerd's log), CTD2_VERSION.

CTD2_IMAGE=docker.io/local/ocid-bb:1
CTD2_PAUSE_IMAGE=docker.io/local/ocid-pause:1
CTD2_PID=

ctd2_setup() {
  local out
  out=$(bash "$SRC/scripts/fetch-containerd2.sh" 2>"$T/logs/fetch-containerd2.log")
  if [[ $? -ne 0 || -z $out ]]; then
    sed 's/^/#      /' "$T/logs/fetch-containerd2.log"
    echo "FAIL - could not get containerd 2.x (scripts/fetch-containerd2.sh failed: $(tail -1 "$T/logs/fetch-containerd2.log"))"
    exit 1
  fi
  CTD2_BIN=$(tail -1 <<<"$out")
  info "$(tail -1 "$T/logs/fetch-containerd2.log")"
  CTD2_VERSION=$("$CTD2_BIN/containerd" --version)
  CTD2=$T/ctd2
  CTD2_SOCK=$CTD2/containerd.sock
  CTD2_CONFIG=$CTD2/config.toml
  CTD2_DROPIN_DIR=$CTD2/conf.d
  CTD2_CDI_DIR=$CTD2/cdi
  CTD2_NRI_SOCK=$CTD2/nri/nri.sock
  CTD2_NRI_PLUGIN_DIR=$CTD2/nri/plugins
  CTD2_LOG=$T/logs/containerd2.log
  mkdir -p "$CTD2" "$CTD2_DROPIN_DIR" "$CTD2_CDI_DIR" "$CTD2_NRI_PLUGIN_DIR" "$CTD2/nri/conf.d" \
    "$CTD2/cni/bin" "$CTD2/cni/net.d" "$CTD2/opt" "$CTD2/image-verifier" "$CTD2/pod-logs" "$CTD2/tmp"
  command -v protoc >/dev/null 2>&1 || die "protoc is missing (protobuf-compiler, see PACKAGES)"
  /usr/bin/python3 -c 'import grpc, google.protobuf' 2>/dev/null ||
    die "python3-grpcio and python3-protobuf are missing (see PACKAGES)"
  # The runc shim's sockets go to /run/containerd/s, runc's state of
  # runtimes without a Root option to /run/containerd/runc.
  it_track_new_dirs /run/containerd
  it_add_cleanup ctd2_stop
}

cri() { timeout 150 /usr/bin/python3 "$SRC/test/cri/cri_client.py" --socket "$CTD2_SOCK" "$@"; }
ctr2() { timeout 120 "$CTD2_BIN/ctr" -a "$CTD2_SOCK" -n k8s.io "$@"; }

# The config: containerd 2.x's own defaults, with every host path moved
# under $CTD2. The tables used are those `containerd config default` prints.
ctd2_write_config() {
  local defaults t
  defaults=$("$CTD2_BIN/containerd" config default) || die "containerd config default failed"
  for t in "plugins.'io.containerd.cri.v1.images'.pinned_images" \
           "plugins.'io.containerd.cri.v1.runtime'" \
           "plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options" \
           "plugins.'io.containerd.cri.v1.runtime'.cni" \
           "plugins.'io.containerd.nri.v1.nri'" \
           "plugins.'io.containerd.internal.v1.opt'" \
           "plugins.'io.containerd.image-verifier.v1.bindir'"; do
    grep -qF "[$t]" <<<"$defaults" || die "containerd config default of $CTD2_VERSION has no [$t]"
  done
  grep -q '^version = 3$' <<<"$defaults" || die "containerd config default of $CTD2_VERSION is not version 3"
  # CRI gives sandboxes an oom_score_adj of -998; lowering it needs
  # CAP_SYS_RESOURCE, which some CI machines (containers themselves) lack:
  # then keep it at containerd's own, as on a node in a user namespace.
  local restrict_oom=false
  (( ($(sed -n 's/^CapEff:\t//p' /proc/self/status | sed 's/^/0x/') >> 24) & 1 )) || restrict_oom=true
  cat >"$CTD2_CONFIG" <<EOF
version = 3
root = '$CTD2/root'
state = '$CTD2/state'
temp = '$CTD2/tmp'
imports = ['$CTD2_DROPIN_DIR/*.toml']

[grpc]
  address = '$CTD2_SOCK'

[ttrpc]
  address = '$CTD2_SOCK.ttrpc'

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '$CTD2_PAUSE_IMAGE'

  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = $restrict_oom
    enable_cdi = true
    cdi_spec_dirs = ['$CTD2_CDI_DIR']
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      Root = '$CTD2/runc'
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['$CTD2/cni/bin']
      conf_dir = '$CTD2/cni/net.d'

  [plugins.'io.containerd.nri.v1.nri']
    disable = false
    socket_path = '$CTD2_NRI_SOCK'
    plugin_path = '$CTD2_NRI_PLUGIN_DIR'
    plugin_config_path = '$CTD2/nri/conf.d'

  [plugins.'io.containerd.internal.v1.opt']
    path = '$CTD2/opt'

  [plugins.'io.containerd.image-verifier.v1.bindir']
    bin_dir = '$CTD2/image-verifier'
EOF
}

ctd2_start() {
  ctd2_write_config
  # containerd starts the runc shim it finds first in PATH: its own.
  PATH=$CTD2_BIN:$PATH "$CTD2_BIN/containerd" --config "$CTD2_CONFIG" </dev/null >"$CTD2_LOG" 2>&1 &
  CTD2_PID=$!
  wait_daemon_ready "$CTD2_PID" "containerd 2.x" "$CTD2_LOG" 30 "$CTD2_BIN/ctr" -a "$CTD2_SOCK" version
  if [[ ! -f $CTD2/images.tar ]]; then
    make_oci_image "$CTD2/images.tar" "$BASE_ROOTFS" "$CTD2_IMAGE=[\"sh\"]" \
      "$CTD2_PAUSE_IMAGE=[\"sleep\",\"2147483647\"]"
  fi
  ctr2 images import "$CTD2/images.tar" >/dev/null 2>"$T/logs/ctd2-import.err" ||
    die "ctr images import failed: $(cat "$T/logs/ctd2-import.err")"
  cri wait-ready >/dev/null 2>"$T/logs/ctd2-ready.err" || {
    sed 's/^/# containerd: /' "$CTD2_LOG" | tail -20
    die "containerd's CRI is not ready: $(cat "$T/logs/ctd2-ready.err")"
  }
}

ctd2_stop() {
  local rc=0 id left
  [[ -n $CTD2_PID ]] || return 0
  for id in $(cri pods 2>/dev/null | awk '{print $1}'); do
    cri stopp "$id" >/dev/null 2>&1
    cri rmp "$id" >/dev/null 2>&1 || { echo "# warning: RemovePodSandbox $id failed" >&2; rc=1; }
  done
  stop_daemon "$CTD2_PID" "containerd 2.x" 30 || rc=1
  CTD2_PID=
  kill_shims_of "$CTD2_SOCK" || rc=1
  left=$(unmount_under "$CTD2")
  if [[ -n $left ]]; then
    echo "# warning: containerd 2.x left mounts (unmounted): $(tr '\n' ' ' <<<"$left")" >&2
    rc=1
  fi
  return "$rc"
}

ctd2_runp() {  # NAME [HANDLER]
  local handler=()
  [[ -n ${2:-} ]] && handler=(--runtime-handler "$2")
  POD_CONFIG=$CTD2/pod-$1.json
  jq -n --arg n "$1" --arg uid "$1-$$" --arg logs "$CTD2/pod-logs/$1" --arg cg "/$CG_PARENT" '{
      metadata: {name: $n, uid: $uid, namespace: "ocid-it", attempt: 0},
      log_directory: $logs,
      linux: {cgroup_parent: $cg,
              security_context: {namespace_options: {network: "NODE", pid: "NODE", ipc: "NODE"}}}}' \
    >"$POD_CONFIG"
  POD_ID=$(cri runp "${handler[@]}" "$POD_CONFIG" 2>"$T/logs/runp-$1.err") ||
    die "RunPodSandbox $1 failed: $(cat "$T/logs/runp-$1.err")"
}

ctd2_container_json() {  # NAME SCRIPT [JQ]
  local f=$CTD2/ctr-$1.json
  jq -n --arg n "$1" --arg img "$CTD2_IMAGE" --arg s "$2" '{
      metadata: {name: $n}, image: {image: $img}, command: ["sh", "-c", $s],
      envs: [{key: "PATH", value: "/usr/sbin:/usr/bin:/sbin:/bin"}],
      log_path: ($n + ".log"), linux: {}}' | jq "${3:-.}" >"$f" ||
    die "ctd2_container_json $1: jq failed"
  echo "$f"
}

ctd2_run() {  # NAME CONFIG [cri run options]
  local name=$1 cfg=$2; shift 2
  cri --timeout 90 run "$POD_ID" "$cfg" --pod-config "$POD_CONFIG" "$@" \
    >"$CTD2/out-$name" 2>"$CTD2/err-$name"
  RC=$?
  OUT=$(cat "$CTD2/out-$name")
  ERR=$(cat "$CTD2/err-$name")
}

ctd2_assert_mounts() {  # DESC
  local now pods id
  pods=$(cri pods | awk '{print $1}')
  now=$(host_mountinfo | while IFS= read -r line; do
          for id in $pods; do
            [[ $line == *" $CTD2/state/io.containerd.runtime.v2.task/k8s.io/$id/rootfs "* ]] && continue 2
          done
          echo "$line"
        done)
  assert_host_mounts_unchanged "$1 (but for the running pod sandboxes' rootfs)" "$now"
}
