#!/bin/bash
# The runtime shim with real containerd 1.6 (from docker.io) and ctr: a
# private containerd (its own config.toml; root, state and sockets under $T;
# the CRI plugin disabled) runs a busybox image (an OCI image layout built
# here from make-rootfs.sh's tree, `ctr image import`ed) with
# `ctr run --runc-binary <oci-decorator-runtime>` against the SIMULATED
# Onload install:
#   1. OCI_ONLOAD=all: files read-only, devices openable (ENXIO, not EPERM),
#      LD_PRELOAD set, dyn-hello gets the SIMULATED libonload; the shim's
#      line in its log file;
#   2. OCI_ONLOAD=zf: only TCPDirect; no variable: untouched;
#   3. a required file missing on the host: `ctr run` fails with the shim's
#      line (containerd reads it from runc's --log);
#   4. durability: a memory update of a running activated container (sent
#      as containerd's shim sends it: ctr 1.6 has no `task update`) keeps the
#      devices openable (`ctr task exec`).
#
# --runc-binary carries no arguments, so the shim's settings come from its
# default settings file /etc/oci-decorator/runtime.json: written for the
# test, and at exit removed or, when there was one, restored.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
engine_preflight
it_setup lib64

mkdir -p "$T/bin" "$T/fifo"
ln -s "$OCID_BIN" "$T/bin/oci-decorator-runtime"
SHIM=$T/bin/oci-decorator-runtime
RUNC=$(command -v runc)
HOST_MISSING=$T/host-missing
make_sim "$HOST_MISSING"
rm -f "$HOST_MISSING/usr/bin/onload"
CTD=$T/containerd
SOCK=$T/containerd.sock
NS=ocid-it
IMAGE=docker.io/local/ocid-bb:1

ctr_() { timeout 120 ctr -a "$SOCK" -n "$NS" "$@"; }

# --- cleanup: containerd, its shims, the shim config file ---------------------------------
it_track_new_dirs /run/containerd
shim_settings_setup

CONTAINERD_PID=
# containerd_stop: kills and deletes the tasks and containers, stops
# containerd (TERM, then KILL after 30 s) by its pid, then any of its shims
# (containerd-shim-runc-v2 processes serving this test's socket).
containerd_stop() {
  local rc=0 id left
  [[ -n $CONTAINERD_PID ]] || return 0
  for id in $(ctr_ task ls -q 2>/dev/null); do
    ctr_ task kill -s SIGKILL "$id" >/dev/null 2>&1
    ctr_ task delete -f "$id" >/dev/null 2>&1
  done
  for id in $(ctr_ container ls -q 2>/dev/null); do ctr_ container delete "$id" >/dev/null 2>&1; done
  stop_daemon "$CONTAINERD_PID" containerd 30 || rc=1
  CONTAINERD_PID=
  kill_shims_of "$SOCK" || rc=1
  left=$(unmount_under "$CTD")
  [[ -n $left ]] && echo "# warning: containerd left mounts (unmounted): $(tr '\n' ' ' <<<"$left")" >&2
  return "$rc"
}
it_add_cleanup containerd_stop

# --- the image: an OCI image layout of the base rootfs --------------------------------------
echo "# --- image"
make_oci_image "$T/bb-oci.tar" "$BASE_ROOTFS" "$IMAGE=[\"sh\"]"

# --- containerd -------------------------------------------------------------------------------
echo "# --- containerd"
mkdir -p "$CTD"
cat >"$T/config.toml" <<EOF
version = 2
root = "$CTD/root"
state = "$CTD/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]

[grpc]
  address = "$SOCK"

[ttrpc]
  address = "$SOCK.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$CTD/opt"
EOF
containerd --config "$T/config.toml" </dev/null >"$T/logs/containerd.log" 2>&1 &
CONTAINERD_PID=$!
wait_daemon_ready "$CONTAINERD_PID" containerd "$T/logs/containerd.log" 30 ctr -a "$SOCK" version
info "$(containerd --version); $(ctr --version)"
ctr_ image import "$T/bb-oci.tar" >/dev/null 2>"$T/logs/import.err" || die "ctr image import failed: $(cat "$T/logs/import.err")"
assert_eq "the image is imported" "$IMAGE" "$(ctr_ image ls -q)"
write_shim_settings "$HOST_ROOT"

PROBE=$(onload_probe "$IMAGE_LIBDIR")
# run_ctr NAME [ctr run options...]: runs the probe with --rm through the
# shim; sets RC, OUT, ERR, CID (the container id).
run_ctr() {
  local name=$1; shift
  CID=ocid-it-$name-$$-$RANDOM
  ctr_ run --rm --runc-binary "$SHIM" --runc-root "$T/runc-root" --fifo-dir "$T/fifo" \
    --cgroup "/$CG_PARENT/$CID" "$@" "$IMAGE" "$CID" sh -c "$PROBE" \
    </dev/null >"$T/out-$name" 2>"$T/err-$name"
  RC=$?
  OUT=$(cat "$T/out-$name")
  ERR=$(cat "$T/err-$name")
}

# --- 1. OCI_ONLOAD=all ---------------------------------------------------------------------
echo "# --- 1. ctr run --runc-binary oci-decorator-runtime --env OCI_ONLOAD=all"
run_ctr all --env OCI_ONLOAD=all
assert_eq "[all] ctr run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all all "$HOST_ROOT" "$IMAGE_LIBDIR" spec
assert_contains "[all] the shim's log (runtime.json log_file) has its line" "$(cat "$SHIM_LOG" 2>/dev/null)" \
  "container $CID: edited $CTD/state/io.containerd.runtime.v2.task/$NS/$CID/config.json"
assert_not_contains "[all] no shim line in the container's stderr" "$ERR" "oci-decorator"

# --- 2. zf only; not asked ---------------------------------------------------------------------
echo "# --- 2. OCI_ONLOAD=zf; no variable"
run_ctr zf --env OCI_ONLOAD=zf
assert_eq "[zf] ctr run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload zf zf "$HOST_ROOT" "$IMAGE_LIBDIR" spec

run_ctr plain
assert_eq "[not asked] ctr run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload none "not asked" "$HOST_ROOT" "$IMAGE_LIBDIR" spec
assert_not_contains "[not asked] no shim line for the container" "$(cat "$SHIM_LOG" 2>/dev/null)" "container $CID"

# --- 3. a required file missing on the host ------------------------------------------------
echo "# --- 3. runtime.json host_root without /usr/bin/onload"
write_shim_settings "$HOST_MISSING"
run_ctr missing --env OCI_ONLOAD=all
assert_eq "[missing file] ctr run exits 1" 1 "$RC"
assert_match "[missing file] ctr's error carries the shim's line" "$ERR" \
  "OCI runtime create failed: oci-decorator: container $CID: refused: required binaries entry of feature \"onload\" not found on the host .*: $HOST_MISSING/usr/bin/onload"
info "ctr's error: $ERR"
assert_eq "[missing file] no container left" "" "$(ctr_ container ls -q)"
run_ctr missing-plain
assert_eq "[missing file, not asked] the container runs" 0 "$RC"
expect_onload none "missing file, not asked" "$HOST_MISSING" "$IMAGE_LIBDIR" spec
write_shim_settings "$HOST_ROOT"

# --- 4. durability: a memory update of a running activated container -----------------------
echo "# --- 4. update --resources - (memory) of a running container, then ctr task exec"
open_onload() {  # ID: what opening /dev/onload in the running container gives
  local out
  out=$(ctr_ task exec --exec-id "probe$RANDOM" "$1" cat /dev/onload 2>&1 </dev/null)
  case $out in
    *"No such device"*) echo openable ;;
    *"Operation not permitted"*) echo EPERM ;;
    *) echo "other: $out" ;;
  esac
}
CID=ocid-it-durable-$$-$RANDOM
ctr_ run -d --runc-binary "$SHIM" --runc-root "$T/runc-root" --fifo-dir "$T/fifo" \
  --cgroup "/$CG_PARENT/$CID" --env OCI_ONLOAD=all "$IMAGE" "$CID" sleep 60 </dev/null >/dev/null 2>"$T/err-durable"
assert_eq "[durable] ctr run -d exits 0" 0 "$?"
for i in $(seq 1 100); do
  [[ $(ctr_ task ls 2>/dev/null | awk -v c="$CID" '$1 == c {print $3}') == RUNNING ]] && break
  sleep 0.1
done
cfg=$CTD/state/io.containerd.runtime.v2.task/$NS/$CID/config.json
IFS=: read -r MAJ MIN <<<"$(devnum "$HOST_ROOT/dev/onload")"
assert_eq "[durable] the bundle's config.json has the /dev/onload device and its allow rule" \
  "c $MAJ $MIN rw" \
  "$(jq -r --argjson M "$MAJ" '[(.linux.devices[] | select(.path == "/dev/onload") | .type, .major, .minor),
                              (.linux.resources.devices[] | select(.allow and .major == $M) | .access)] | join(" ")' "$cfg" 2>/dev/null)"
before=$(open_onload "$CID")
# ctr 1.6 has no `task update`: the update goes to the runtime as
# containerd-shim-runc-v2 sends it for the Update call (`update --resources -`
# with the LinuxResources JSON on stdin), through the shim, at its runc root.
echo '{"memory": {"limit": 67108864}}' |
  timeout 60 "$SHIM" --root "$T/runc-root/$NS" update --resources - "$CID" >/dev/null 2>"$T/err-update"
assert_eq "[durable] update --resources - through the shim exits 0" 0 "$?"
assert_eq "[durable] the memory limit applied" 67108864 \
  "$(cat "/sys/fs/cgroup/memory/$CG_PARENT/$CID/memory.limit_in_bytes" 2>/dev/null)"
after=$(open_onload "$CID")
info "RECORDED: runtime update (memory), /dev/onload before -> after: $before -> $after"
assert_eq "[durable] /dev/onload openable (ENXIO, not EPERM) before and after the update" \
  "openable -> openable" "$before -> $after"
ctr_ task kill -s SIGKILL "$CID" >/dev/null 2>&1
for i in $(seq 1 50); do
  ctr_ task delete "$CID" >/dev/null 2>&1 && break
  sleep 0.1
done
ctr_ container delete "$CID" >/dev/null 2>&1

# --- stop containerd ------------------------------------------------------------------------
echo "# --- stop containerd"
pid=$CONTAINERD_PID
check "containerd and its shims stop" containerd_stop
check_not "containerd ($pid) is gone" quiet kill -0 "$pid"
assert_eq "no mount left under $T" "" "$(awk -v t="$T/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo)"
it_finish
