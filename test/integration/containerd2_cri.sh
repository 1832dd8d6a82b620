#!/bin/bash
# containerd 2.x (Debian unstable's package, unpacked privately by
# scripts/fetch-containerd2.sh) driven through CRI as the kubelet drives it,
# with the harness of test/cri/ (a private containerd with a version 3
# config, host-network pod sandboxes, a busybox image imported from an OCI
# layout, a CRI client from the verbatim cri-api api.proto), against the
# SIMULATED Onload install. Every case is checked inside the container with
# lib.sh's onload_probe / expect_onload (files read-only, device nodes
# usable through the device cgroup, libonload preloaded):
#   1. the device plugin's Allocate answer, fetched from the real plugin
#      through the kubelet stand-in and applied as the kubelet applies it
#      (cdi_devices into ContainerConfig.CDI_devices, mounts, devices and
#      envs into the container config), for --allocate mounts, cdi and both;
#      the plugin's --cdi-dir is containerd's cdi_spec_dirs;
#   2. `oci-decorator setup containerd` on the version 3 config registers the
#      runtime shim (a version 3 drop-in that containerd 2.x reads); a pod
#      run with that handler: a container with OCI_ONLOAD=all gets Onload,
#      one without is untouched;
#   3. a host whose libonload and module versions differ: the container that
#      asked is refused (StartContainer fails naming both versions), one that
#      did not ask runs;
#   4. Onload's shrub controller (X3/X4) with client group 4242, mode 0660,
#      the stand-in controller (OCID_SHRUB_STANDIN) serving on the host, the
#      containers running as uid 1000 its client (`request --data`) on
#      /run/onload/controller-0/shrub_config: the plugin's cdi answer
#      (cdiVersion 0.7.0, additionalGids) gives the group and it connects;
#      the mounts answer mounts /run/onload but cannot carry a group (the
#      device plugin API has no field for one): EACCES, and the pod's
#      supplemental_groups [4242] (what the plugin's log asks for) connects;
#      the shim's container has the group and connects.
# If containerd 2.x cannot be fetched, the test FAILS (it is reachable in CI).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$SRC/test/cri/containerd2.sh"
it_setup lib64
ctd2_setup
shim_settings_setup
STANDIN=$SRC/test/standins/kubelet_standin.py
KDIR=$T/kubelet
mkdir -m 0750 "$KDIR"
mkdir -p "$T/bin"
ln -s "$OCID_BIN" "$T/bin/oci-decorator-runtime"
SHIM=$T/bin/oci-decorator-runtime
PROBE=$(onload_probe "$CDI_LIBDIRS $IMAGE_LIBDIR")  # the plugin's answers, and the shim's
SHRUB=${OCID_SHRUB_STANDIN:-}
[[ -n $SHRUB && -x $SHRUB ]] || die "OCID_SHRUB_STANDIN=$SHRUB is not executable (built by test/integration)"
# Static: the shrub client runs in the containers of part 4 (the image is
# built from BASE_ROOTFS by ctd2_start).
install -m 0755 "$SHRUB" "$BASE_ROOTFS/usr/bin/shrub_standin"

PLUGIN_PID=
stop_plugin() {
  [[ -n $PLUGIN_PID ]] || return 0
  kill -TERM "$PLUGIN_PID" 2>/dev/null
  wait "$PLUGIN_PID" 2>/dev/null
  PLUGIN_PID=
  return 0
}
it_add_cleanup stop_plugin

# --- 2a. setup containerd on the version 3 config, before containerd starts ---------------
echo "# --- setup containerd on a version 3 config"
ctd2_write_config
DROPIN=$CTD2_DROPIN_DIR/oci-decorator.toml
setup_out=$("$OCID_BIN" setup containerd --containerd-config "$CTD2_CONFIG" --config "$DROPIN" \
              --runtime-path "$SHIM" 2>&1)
assert_eq "setup containerd exits 0" 0 "$?"
assert_contains "setup says the main config is version 3" "$setup_out" \
  "containerd: $CTD2_CONFIG is a version 3 config: so is the drop-in"
assert_contains "setup finds the import" "$setup_out" "containerd: $CTD2_CONFIG imports $DROPIN: ok"
assert_eq "the drop-in is a version 3 config" "version = 3" "$(grep '^version' "$DROPIN")"
# What containerd 2.x makes of it: its merged config names the shim.
dump=$("$CTD2_BIN/containerd" --config "$CTD2_CONFIG" config dump 2>/dev/null)
assert_contains "containerd 2.x's merged config has the shim as runtime oci-decorator" \
  "$(grep -A12 "runtimes.oci-decorator.options\]" <<<"$dump")" "BinaryName = '$SHIM'"
assert_contains "... passing the oci-decorator/* pod annotations" \
  "$(grep -A4 "runtimes.oci-decorator\]" <<<"$dump")" "pod_annotations = ['oci-decorator/*']"
assert_contains "... and keeping the main config's CRI settings (cdi_spec_dirs)" "$dump" \
  "cdi_spec_dirs = ['$CTD2_CDI_DIR']"

start=$SECONDS
ctd2_start
info "$CTD2_VERSION ($("$CTD2_BIN/ctr" --version)), runc $(runc --version | head -1 | awk '{print $3}'): ready in $((SECONDS - start)) s"
assert_eq "the CRI names containerd 2.x" "containerd 2" \
  "$(cri version | jq -r '"\(.runtime_name) \(.runtime_version | split(".")[0])"')"
check "NRI is served on the private socket (for NRI plugins)" test -S "$CTD2_NRI_SOCK"
assert_eq "both images are there (ctr -n k8s.io images import)" "$CTD2_IMAGE $CTD2_PAUSE_IMAGE" \
  "$(cri image-status "$CTD2_IMAGE" | jq -r '.repo_tags[0]') $(cri image-status "$CTD2_PAUSE_IMAGE" | jq -r '.repo_tags[0]')"

# --- 1. Allocate answers applied as the kubelet applies them -------------------------------
# allocate MODE [HOSTROOT]: the plugin's answer for onload-0 in --allocate
# MODE, its CDI specs written into containerd's cdi_spec_dirs; sets RESP.
allocate() {
  rm -f "$KDIR"/*
  env -i "$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "${2:-$HOST_ROOT}" kubernetes \
    --kubelet-dir "$KDIR" --allocate "$1" --cdi-dir "$CTD2_CDI_DIR" >>"$T/logs/plugin-$1.log" 2>&1 &
  PLUGIN_PID=$!
  local sock=$KDIR/oci-decorator-amd.com_onload.sock
  wait_socket "$sock" || nok "[$1] the plugin serves $sock"
  RESP=$(/usr/bin/python3 "$STANDIN" allocate --socket "$sock" --ids onload-0 2>&1)
  assert_eq "[$1] Allocate onload-0 answers" 0 "$?"
  stop_plugin
  echo "$RESP" >"$T/allocate-$1.json"
}
if [[ -z ${OCID_PLUGIN:-} || ! -x ${OCID_PLUGIN:-} ]]; then
  info "OCID_PLUGIN is not set: the build has no oci-decorator-device-plugin (OCID_DEVICE_PLUGIN=OFF): the Allocate cases are not run"
else
ctd2_runp alloc
for mode in mounts cdi both; do
  echo "# --- 1. --allocate $mode, applied to the CRI ContainerConfig"
  allocate "$mode"
  case $mode in
    mounts) assert_eq "[mounts] the answer: mounts and devices, no cdi_devices" "true true 0" \
              "$(jq -r '.container_responses[0] | "\(.mounts | length > 0) \(.devices | length > 0) \(.cdi_devices // [] | length)"' <<<"$RESP")" ;;
    cdi)    assert_eq "[cdi] the answer: one CDI device, no mounts or devices" "amd.com/onload=onload 0 0" \
              "$(jq -r '.container_responses[0] | "\(.cdi_devices | map(.name) | join(",")) \(.mounts // [] | length) \(.devices // [] | length)"' <<<"$RESP")" ;;
    both)   assert_eq "[both] the answer: mounts, devices and a CDI device" "true true amd.com/onload=onload" \
              "$(jq -r '.container_responses[0] | "\(.mounts | length > 0) \(.devices | length > 0) \(.cdi_devices | map(.name) | join(","))"' <<<"$RESP")" ;;
  esac
  cfg=$(ctd2_container_json "alloc-$mode" "$PROBE")
  ctd2_run "alloc-$mode" "$cfg" --allocate "$T/allocate-$mode.json" --keep
  assert_eq "[$mode] the container ran (exit 0)" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  # What containerd made of the request: the OCI spec it gave runc.
  cid=$(cri ps | awk -v n="alloc-$mode" '$2 == n {print $1}')
  spec=$(cri status "$cid" | jq '.info.info | fromjson | .runtimeSpec' 2>/dev/null)
  case $mode in
    mounts) expect_onload onload "alloc $mode" "$HOST_ROOT" "$CDI_LIBDIRS" bindpre
            assert_eq "[mounts] no LD_PRELOAD in the spec: the answer preloads through the file" "" \
              "$(jq -r '.process.env[] | select(startswith("LD_PRELOAD="))' <<<"$spec")"
            assert_eq "[mounts] /etc/ld.so.preload from the answer's mounts: the plugin's preload file" \
              "$CTD2_CDI_DIR/oci-decorator-onload.onload.preload" \
              "$(jq -r '.mounts[] | select(.destination == "/etc/ld.so.preload") | .source' <<<"$spec")" ;;
    *)      expect_onload onload "alloc $mode" "$HOST_ROOT" "$CDI_LIBDIRS" "$mode"
            assert_eq "[$mode] containerd applied the CDI device: /etc/ld.so.preload from the spec in cdi_spec_dirs" \
              "$CTD2_CDI_DIR/oci-decorator-onload.onload.preload" \
              "$(jq -r '.mounts[] | select(.destination == "/etc/ld.so.preload") | .source' <<<"$spec")" ;;
  esac
  for d in /dev/onload /dev/onload_epoll /dev/sfc_char; do
    IFS=: read -r maj min <<<"$(devnum "$HOST_ROOT$d")"
    # Every rule that allows the node grants rw, never m (mknod): in cdi and
    # both modes containerd adds the CDI spec's rule, whose absent
    # "permissions" would mean rwm.
    assert_eq "[$mode] the spec's device cgroup allows $d ($maj:$min) rw, no more" "c $maj $min rw" \
      "$(jq -r --argjson M "$maj" --argjson m "$min" '[.linux.resources.devices[] | select(.allow and .major == $M and .minor == $m) | "\(.type) \(.major) \(.minor) \(.access)"] | unique | join(" | ")' <<<"$spec")"
  done
  cri rm "$cid" >/dev/null || nok "[$mode] RemoveContainer $cid"
  ctd2_assert_mounts "[$mode] after the container"
done
cri stopp "$POD_ID" >/dev/null && cri rmp "$POD_ID" >/dev/null
assert_eq "the pod is removed" "" "$(cri pods)"
fi

# --- 2b. the runtime shim registered by setup: OCI_ONLOAD=all, and not asked ---------------
echo "# --- 2. a pod with the handler oci-decorator (the shim setup registered)"
write_shim_settings "$HOST_ROOT"
ctd2_runp shim oci-decorator
cfg=$(ctd2_container_json shim-all "$PROBE" '.envs += [{key: "OCI_ONLOAD", value: "all"}]')
ctd2_run shim-all "$cfg" --keep
assert_eq "[shim, OCI_ONLOAD=all] the container ran (exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all "shim, OCI_ONLOAD=all" "$HOST_ROOT" "$IMAGE_LIBDIR" spec
cid=$(cri ps | awk '$2 == "shim-all" {print $1}')
assert_contains "[shim, OCI_ONLOAD=all] the shim's log has its line for the container" \
  "$(cat "$SHIM_LOG" 2>/dev/null)" "container $cid: edited"
cri rm "$cid" >/dev/null || nok "RemoveContainer $cid"
cfg=$(ctd2_container_json shim-plain "$PROBE")
ctd2_run shim-plain "$cfg" --keep
assert_eq "[shim, not asked] the container ran (exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload none "shim, not asked" "$HOST_ROOT" "$IMAGE_LIBDIR" spec
cid=$(cri ps | awk '$2 == "shim-plain" {print $1}')
assert_not_contains "[shim, not asked] no shim line for the container" "$(cat "$SHIM_LOG" 2>/dev/null)" "container $cid"
cri rm "$cid" >/dev/null || nok "RemoveContainer $cid"
ctd2_assert_mounts "[shim] after the containers"

# --- 3. mismatched Onload versions: refused, naming both -----------------------------------
echo "# --- 3. libonload 8.1.2.26, module 8.1.0.15"
HV=$T/host-v
SIM_ONLOAD_VERSION=8.1.2.26 make_sim "$HV"
echo 8.1.0.15 >"$HV/sys/module/onload/version"
write_shim_settings "$HV"
cfg=$(ctd2_container_json shim-mismatch "$PROBE" '.envs += [{key: "OCI_ONLOAD", value: "all"}]')
ctd2_run shim-mismatch "$cfg"
assert_eq "[mismatch] refused: CreateContainer or StartContainer fails" 125 "$RC"
assert_match "[mismatch] the CRI error is the shim's refusal" "$ERR" \
  "^(Create|Start)Container: .*oci-decorator: .*refused: "
assert_contains "[mismatch] ... naming the library's version" "$ERR" "8.1.2.26"
assert_contains "[mismatch] ... and the module's" "$ERR" "8.1.0.15"
info "the CRI error: $ERR"
assert_not_contains "[mismatch] the container did not run" "$OUT" "DONE"
assert_eq "[mismatch] no container left" "" "$(cri ps)"
cfg=$(ctd2_container_json shim-mismatch-plain "$PROBE")
ctd2_run shim-mismatch-plain "$cfg"
assert_eq "[mismatch, not asked] the container ran (exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload none "mismatch, not asked" "$HV" "$IMAGE_LIBDIR" spec
ctd2_assert_mounts "[mismatch] after the containers"
cri stopp "$POD_ID" >/dev/null && cri rmp "$POD_ID" >/dev/null
assert_eq "the pod is removed" "" "$(cri pods)"
assert_host_mounts_unchanged "all pods removed"

# --- 4. the shrub controller's client group (X3/X4) ---------------------------------------
# A fresh simulated host with the shrub controller's parameters: client gid
# 4242, client mode 0660 (sysfs shows it in decimal: 432); the stand-in
# controller 0 serves <host-root>/run/onload/controller-0/shrub_config,
# group 4242, mode 0660, as the real one does with these parameters.
echo "# --- 4. shrub controller, client group 4242, mode 0660"
shrub_start=$SECONDS
SH=$T/host-shrub
cp -a "$HOST_ROOT" "$SH" || die "cannot copy $HOST_ROOT"
sim_shrub "$SH" "" 4242 432
mkdir -m 0755 "$SH/run"  # a host's /run: the controller makes /run/onload in it
SHRUB_PID=
SHRUB_OUT=$T/logs/shrub-standin.out
shrub_stop() {
  [[ -n $SHRUB_PID ]] || return 0
  kill -TERM "$SHRUB_PID" 2>/dev/null
  wait "$SHRUB_PID" 2>/dev/null  # it unlinks its sockets
  SHRUB_PID=
  return 0
}
it_add_cleanup shrub_stop
"$SHRUB" serve "$SH/run/onload" 0 --uid 65534 --gid 65534 --client-gid 4242 --client-mode 660 \
  >"$SHRUB_OUT" 2>&1 &
SHRUB_PID=$!
for _ in $(seq 1 100); do grep -q '^READY' "$SHRUB_OUT" && break; sleep 0.05; done
grep -q '^READY' "$SHRUB_OUT" || die "the stand-in controller did not get ready: $(cat "$SHRUB_OUT")"
REQ="shrub_standin request --data /run/onload/controller-0/shrub_config"
SHRUB_SCRIPT="echo GROUPS \$(id -G); awk '\$5 == \"/run/onload\" {print \"MOUNT \" \$6}' /proc/self/mountinfo; $REQ; echo DONE"
# as_uid1000 [GIDS_JSON]: the CRI security context of a container run as
# uid/gid 1000 (the pod's supplementalGroups land in the container's).
as_uid1000() {
  printf '.linux.security_context = {run_as_user: {value: 1000}, run_as_group: {value: 1000}, supplemental_groups: %s}' \
    "${1:-[]}"
}
has_group() { [[ " $(sed -n 's/^GROUPS //p' <<<"$1") " == *" 4242 "* ]]; }
if [[ -z ${OCID_PLUGIN:-} || ! -x ${OCID_PLUGIN:-} ]]; then
  info "OCID_PLUGIN is not set: the shrub Allocate cases are not run"
else
  ctd2_runp shrub
  allocate cdi "$SH"
  spec=$(cat "$CTD2_CDI_DIR"/oci-decorator-onload*.json 2>/dev/null | jq -c 'select(.devices)' | head -1)
  assert_eq "[shrub cdi] the plugin's spec: cdiVersion 0.7.0, the onload device with additionalGids [4242]" \
    "0.7.0 [4242]" \
    "$(jq -r '"\(.cdiVersion) \(.devices[] | select(.name == "onload") | .containerEdits.additionalGids | tojson)"' <<<"$spec")"
  cfg=$(ctd2_container_json shrub-cdi "$SHRUB_SCRIPT" "$(as_uid1000)")
  ctd2_run shrub-cdi "$cfg" --allocate "$T/allocate-cdi.json"
  assert_eq "[shrub cdi] the container ran (exit 0)" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  check "[shrub cdi] uid 1000 has group 4242 from the CDI spec ($(grep '^GROUPS' <<<"$OUT"))" has_group "$OUT"
  assert_match "[shrub cdi] /run/onload is a read-only mount inside" "$(grep '^MOUNT' <<<"$OUT")" '^MOUNT ro(,|$)'
  assert_contains "[shrub cdi] it connects to the controller: REPLY 1" "$OUT" "REPLY 1"
  assert_contains "[shrub cdi] ... DATA token=1" "$OUT" "DATA token=1"
  assert_contains "[shrub cdi] the stand-in saw uid 1000" "$(cat "$SHRUB_OUT")" "peer_uid=1000"

  allocate mounts "$SH"
  assert_eq "[shrub mounts] the answer mounts $SH/run/onload read-only" "$SH/run/onload true" \
    "$(jq -r '.container_responses[0].mounts[] | select(.container_path == "/run/onload") | "\(.host_path) \(.read_only)"' <<<"$RESP")"
  assert_contains "[shrub mounts] the plugin's log asks for the pods' supplementalGroups" \
    "$(cat "$T/logs/plugin-mounts.log")" "pods need securityContext.supplementalGroups: [4242]"
  cfg=$(ctd2_container_json shrub-mounts "$SHRUB_SCRIPT" "$(as_uid1000)")
  ctd2_run shrub-mounts "$cfg" --allocate "$T/allocate-mounts.json"
  assert_eq "[shrub mounts] the container ran (exit 0)" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  assert_match "[shrub mounts] /run/onload is a read-only mount inside" "$(grep '^MOUNT' <<<"$OUT")" '^MOUNT ro(,|$)'
  check_not "[shrub mounts] the answer cannot add group 4242 ($(grep '^GROUPS' <<<"$OUT"))" has_group "$OUT"
  assert_contains "[shrub mounts] uid 1000 without the group is refused: EACCES" "$OUT" "ERROR connect: EACCES"
  cfg=$(ctd2_container_json shrub-mounts-sg "$SHRUB_SCRIPT" "$(as_uid1000 '[4242]')")
  ctd2_run shrub-mounts-sg "$cfg" --allocate "$T/allocate-mounts.json"
  assert_eq "[shrub mounts + supplemental_groups] the container ran (exit 0)" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  check "[shrub mounts + supplemental_groups] uid 1000 has group 4242" has_group "$OUT"
  assert_contains "[shrub mounts + supplemental_groups] it connects: REPLY 1" "$OUT" "REPLY 1"
  cri stopp "$POD_ID" >/dev/null && cri rmp "$POD_ID" >/dev/null
fi

# The runtime shim (the handler setup registered), OCI_ONLOAD=all.
write_shim_settings "$SH"
ctd2_runp shrub-shim oci-decorator
cfg=$(ctd2_container_json shrub-shim "$SHRUB_SCRIPT" "$(as_uid1000) | .envs += [{key: \"OCI_ONLOAD\", value: \"all\"}]")
ctd2_run shrub-shim "$cfg"
assert_eq "[shrub shim] the container ran (exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
check "[shrub shim] uid 1000 has group 4242 from the shim ($(grep '^GROUPS' <<<"$OUT"))" has_group "$OUT"
assert_match "[shrub shim] /run/onload is a read-only mount inside" "$(grep '^MOUNT' <<<"$OUT")" '^MOUNT ro(,|$)'
assert_contains "[shrub shim] it connects to the controller: REPLY 1" "$OUT" "REPLY 1"
assert_contains "[shrub shim] ... DATA token=1" "$OUT" "DATA token=1"
cri stopp "$POD_ID" >/dev/null && cri rmp "$POD_ID" >/dev/null
shrub_stop
check_not "[shrub] the stand-in removed its socket" test -e "$SH/run/onload/controller-0/shrub_config"
assert_eq "the pods are removed" "" "$(cri pods)"
assert_host_mounts_unchanged "[shrub] all pods removed"
info "part 4 (shrub controller) took $((SECONDS - shrub_start)) s"

# --- stop ---------------------------------------------------------------------------------
echo "# --- stop containerd 2.x"
pid=$CTD2_PID
check "pods removed, containerd and its shims stopped, nothing left mounted" ctd2_stop
check_not "containerd ($pid) is gone" quiet kill -0 "$pid"
for f in "$T"/logs/plugin-*.log; do [[ -f $f ]] && sanitizer_check "$(cat "$f")"; done
it_finish
