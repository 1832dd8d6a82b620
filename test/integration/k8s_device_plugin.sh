#!/bin/bash
# oci-decorator-device-plugin, Kubernetes mode, against a kubelet stand-in
# (test/plugin/kubelet_standin.py, built from the plugin's own .proto) and a
# SIMULATED Onload install:
#   1. the protocol: registration (also when kubelet.sock comes late, and
#      again after a kubelet restart that deletes every socket), options,
#      ListAndWatch, Allocate (valid, unknown, empty, malformed), health
#      following the host (a device node removed and back, a broken
#      inventory), resources that come and go, SIGTERM;
#   2. end to end, as a kubelet and a CRI runtime apply Allocate:
#      a. --allocate mounts: the mounts, devices and envs put into a runc
#         config.json (no hook): Onload works in the container;
#      b. --allocate cdi with --cdi-dir /etc/cdi: the cdi_devices names given
#         to podman --device: Onload works in the container.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
[[ -n ${OCID_PLUGIN:-} && -x ${OCID_PLUGIN:-} ]] || \
  skip_all "OCID_PLUGIN is not set: the build has no oci-decorator-device-plugin (OCID_DEVICE_PLUGIN=OFF)"
PY=/usr/bin/python3
$PY -c 'import grpc, google.protobuf' 2>/dev/null || die "python3-grpcio and python3-protobuf are missing (see PACKAGES)"
command -v protoc >/dev/null 2>&1 || die "protoc is missing (protobuf-compiler, see PACKAGES)"
STANDIN=$SRC/test/plugin/kubelet_standin.py
KDIR=$T/kubelet
mkdir -m 0750 "$KDIR" "$T/cdi"

# A second inventory, so that a broken onload.json has a neighbour that
# must stay healthy. Its device is /dev/null's numbers under a new name.
mknod -m 0666 "$HOST_ROOT/dev/ocid_testdev" c 1 3
cat >"$CONF_DIR/testdev.json" <<'JSON'
{"version": "1", "activation_flag": "OCI_TESTDEV", "cdi_kind": "oci-decorator.test/testdev",
 "driver_feature": ["testdev"], "inventory": {"testdev": {"devices": ["ocid_testdev"]}}}
JSON

# Feeds the stand-in's TAP-like lines into this script's counters.
tally() {
  local line
  while IFS= read -r line; do
    case $line in
      "ok   - "*) ok "${line#ok   - }" ;;
      "FAIL - "*) nok "${line#FAIL - }" ;;
      *) echo "#      $line" ;;
    esac
  done
}

PLUGIN_PIDS=()
stop_plugins() {
  local p
  for p in "${PLUGIN_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  return 0
}
it_add_cleanup stop_plugins

echo "# --- the protocol, against the kubelet stand-in"
start=$SECONDS
tally < <(timeout 120 "$PY" "$STANDIN" scenario --plugin "$OCID_PLUGIN" --kubelet-dir "$KDIR" \
            --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" --cdi-dir "$T/cdi" --slots 16 \
            --plugin-log "$T/logs/scenario.log" 2>&1; echo "# stand-in exit $?")
info "scenario took $((SECONDS - start)) s"
log=$(cat "$T/logs/scenario.log")
assert_contains "plugin log: it watched the kubelet dir" "$log" "watching $KDIR for kubelet.sock"
assert_eq "plugin log: 'waiting for kubelet.sock' once before the kubelet came" 1 \
  "$(awk '/registered /{exit} /waiting for .*kubelet.sock/{n++} END{print n+0}' <<<"$log")"
assert_contains "plugin log: SIGHUP re-checks" "$log" "SIGHUP: re-checking"
assert_match "plugin log: a rejected Register is one line with a retry" "$log" \
  "register [a-z./-]+ with $KDIR/kubelet.sock failed: stand-in: rejected on purpose .*retrying in 1 s"
assert_match "plugin log: the unknown ID is logged on one line" "$log" 'unknown device ID "gpu-7"'
assert_no_match "plugin log: no crash, no internal error" "$log" "internal error|terminate called|Segmentation|Sanitizer"
assert_contains "--cdi-dir: the spec of a removed inventory is removed" "$log" \
  "removed $T/cdi/oci-decorator-testdev.json"
assert_not_contains "--cdi-dir: a broken inventory keeps its spec" "$log" "removed $T/cdi/oci-decorator-onload.json"
assert_eq "--cdi-dir: both specs there at the end, and onload's preload files, 0644" \
  "oci-decorator-onload.all.preload 644 oci-decorator-onload.json 644 oci-decorator-onload.onload-latency.preload 644 oci-decorator-onload.onload-throughput.preload 644 oci-decorator-onload.onload.preload 644 oci-decorator-testdev.json 644" \
  "$(cd "$T/cdi" && stat -c '%n %a' * | tr '\n' ' ' | sed 's/ $//')"
assert_eq "--cdi-dir: the onload device mounts its preload file at /etc/ld.so.preload, no env" \
  "$T/cdi/oci-decorator-onload.onload.preload null" \
  "$(jq -r '.devices[] | select(.name == "onload") | .containerEdits | "\(.mounts[] | select(.containerPath == "/etc/ld.so.preload") | .hostPath) \(.env)"' "$T/cdi/oci-decorator-onload.json")"
assert_eq "--cdi-dir: the preload file lists libonload" "/usr/lib64/libonload.so" "$(cat "$T/cdi/oci-decorator-onload.onload.preload")"
if [[ $IT_FAIL -gt 0 ]]; then sed 's/^/#      plugin: /' "$T/logs/scenario.log" | tail -40; fi

# start_plugin LOG [kubernetes options...]: runs the plugin (no kubelet),
# without any environment.
start_plugin() {
  local logf=$1; shift
  env -i "$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" kubernetes \
    "$@" >>"$logf" 2>&1 &
  PLUGIN_PIDS+=($!)
  PLUGIN_PID=$!
}
stop_plugin() {
  kill -TERM "$PLUGIN_PID" 2>/dev/null
  wait "$PLUGIN_PID"
  assert_eq "the plugin exits 0 on SIGTERM" 0 "$?"
}

echo "# --- a kubelet dir that appears late, one whose socket paths are too long"
LATE=$T/late/device-plugins
start_plugin "$T/logs/late.log" --kubelet-dir "$LATE"
sleep 0.5
check "no kubelet dir: the plugin keeps running" kill -0 "$PLUGIN_PID"
assert_contains "no kubelet dir: logged once" "$(cat "$T/logs/late.log")" "kubelet directory $LATE: No such file or directory; waiting for it"
mkdir -p "$LATE"
check "the dir appears: the onload socket is served there" wait_socket "$LATE/oci-decorator-amd.com_onload.sock"
stop_plugin
assert_eq "SIGTERM without a kubelet: no socket left, the lock directory stays" \
  "oci-decorator-device-plugin" "$(ls -A "$LATE")"
LONG=$T/$(printf 'd%.0s' {1..90})
mkdir -p "$LONG"
start_plugin "$T/logs/long.log" --kubelet-dir "$LONG"
sleep 0.5
check "socket paths too long: the plugin keeps running" kill -0 "$PLUGIN_PID"
stop_plugin
assert_contains "socket paths too long: one line that says so" "$(cat "$T/logs/long.log")" \
  "socket path longer than 107 bytes (use a shorter --kubelet-dir)"

echo "# --- --host-path-root names host paths; the environment changes nothing"
KDIR2=$T/kubelet2
mkdir -m 0750 "$KDIR2"
GRPC_TRACE=all GRPC_VERBOSITY=DEBUG "$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" \
  --host-path-root /hostfs kubernetes --kubelet-dir "$KDIR2" --cdi-dir "$T/cdi2" >"$T/logs/hpr.log" 2>&1 &
PLUGIN_PID=$!
PLUGIN_PIDS+=($!)
check "the onload socket is served" wait_socket "$KDIR2/oci-decorator-amd.com_onload.sock"
resp=$("$PY" "$STANDIN" allocate --socket "$KDIR2/oci-decorator-amd.com_onload.sock" --ids onload-0 2>&1)
stop_plugin
assert_eq "Allocate: every host path under --host-path-root" "[]" \
  "$(jq -c '[.container_responses[0] | (.mounts[], .devices[]) | .host_path | select(startswith("/hostfs/") | not)]' <<<"$resp")"
assert_contains "Allocate: libonload.so from /hostfs" "$resp" '"/hostfs/usr/lib64/libonload.so"'
assert_eq "--cdi-dir: every hostPath in the spec under --host-path-root, but the preload files under --cdi-dir" \
  "[\"$T/cdi2/oci-decorator-onload.onload.preload\",\"$T/cdi2/oci-decorator-onload.all.preload\",\"$T/cdi2/oci-decorator-onload.onload-latency.preload\",\"$T/cdi2/oci-decorator-onload.onload-throughput.preload\"]" \
  "$(jq -c '[.. | objects | .hostPath? // empty | select(startswith("/hostfs/") | not)]' "$T/cdi2/oci-decorator-onload.json")"
assert_no_match "GRPC_TRACE/GRPC_VERBOSITY in the environment: no gRPC debug output" \
  "$(cat "$T/logs/hpr.log")" '^[DI][0-9]{4} |grpc_trace|tracer'

echo "# --- --cdi-dir: root's files, mode 0644; what inventories removed meanwhile left goes at start"
KDIR3=$T/kubelet3
mkdir -m 0750 "$KDIR3"
start_plugin "$T/logs/cdi3.log" --kubelet-dir "$KDIR3" --cdi-dir "$T/cdi3"
check "the onload socket is served" wait_socket "$KDIR3/oci-decorator-amd.com_onload.sock"
stop_plugin
spec_sum=$(sha256sum <"$T/cdi3/oci-decorator-onload.json")
# While the plugin is down: an inventory "gone" was removed (its spec and
# preload file as the plugin wrote them, root's), the spec made writable by
# others, a preload file given to another user; the operator's own files.
cp -p "$T/cdi3/oci-decorator-onload.json" "$T/cdi3/oci-decorator-gone.json"
cp -p "$T/cdi3/oci-decorator-onload.onload.preload" "$T/cdi3/oci-decorator-gone.onload.preload"
chmod 0666 "$T/cdi3/oci-decorator-onload.json"
chown 65534:65534 "$T/cdi3/oci-decorator-onload.onload.preload"
echo '{"cdiVersion": "0.3.0", "kind": "example.com/mine", "devices": []}' >"$T/cdi3/oci-decorator-mine.json"
echo '/usr/lib64/mine.so' >"$T/cdi3/oci-decorator-mine.x.preload"
echo 'notes' >"$T/cdi3/README"
start_plugin "$T/logs/cdi3.log" --kubelet-dir "$KDIR3" --cdi-dir "$T/cdi3"
check "the onload socket is served again" wait_socket "$KDIR3/oci-decorator-amd.com_onload.sock"
stop_plugin
assert_eq "--cdi-dir: the 0666 spec and the foreign-owned preload file are root's, 0644, on the next Sync" \
  "oci-decorator-onload.json 644 0:0 oci-decorator-onload.onload.preload 644 0:0" \
  "$(cd "$T/cdi3" && stat -c '%n %a %u:%g' oci-decorator-onload.json oci-decorator-onload.onload.preload | tr '\n' ' ' | sed 's/ $//')"
assert_eq "--cdi-dir: the spec's bytes unchanged" "$spec_sum" "$(sha256sum <"$T/cdi3/oci-decorator-onload.json")"
check_not "--cdi-dir: at start, the spec of an inventory removed meanwhile is removed" \
  test -e "$T/cdi3/oci-decorator-gone.json"
check_not "--cdi-dir: and its preload file" test -e "$T/cdi3/oci-decorator-gone.onload.preload"
assert_contains "--cdi-dir: the removal is logged with why" "$(cat "$T/logs/cdi3.log")" \
  "removed $T/cdi3/oci-decorator-gone.json: no inventory gone.json in $CONF_DIR"
check "--cdi-dir: an operator's spec named like ours (not as the plugin renders it) stays" \
  test -e "$T/cdi3/oci-decorator-mine.json"
check "--cdi-dir: and the preload file next to it" test -e "$T/cdi3/oci-decorator-mine.x.preload"
check "--cdi-dir: an unrelated file stays" test -e "$T/cdi3/README"

echo "# --- end to end (a): --allocate mounts, applied to a runc config.json as a CRI runtime does"
rm -f "$KDIR"/*
start_plugin "$T/logs/mounts.log" --kubelet-dir "$KDIR" --allocate mounts
SOCK=$KDIR/oci-decorator-amd.com_onload.sock
check "the onload socket is served" wait_socket "$SOCK"
resp=$("$PY" "$STANDIN" allocate --socket "$SOCK" --ids onload-3 2>&1)
assert_eq "Allocate onload-3 answers" 0 "$?"
stop_plugin
assert_eq "mounts mode: no cdi_devices" 0 "$(jq '.container_responses[0].cdi_devices // [] | length' <<<"$resp")"
assert_eq "mounts mode: the same mounts as the CDI spec's onload device (one plan; its preload file is the answer's LD_PRELOAD)" \
  "$(jq -c '[.devices[] | select(.name == "onload") | .containerEdits.mounts[] | select(.containerPath != "/etc/ld.so.preload") | [.hostPath, .containerPath]] | sort' "$T/cdi/oci-decorator-onload.json")" \
  "$(jq -c '[.container_responses[0].mounts[] | [.host_path, .container_path]] | sort' <<<"$resp")"
# What containerd's CRI plugin makes of a ContainerAllocateResponse: each
# Mount a bind mount (ro when read_only), each DeviceSpec a linux.devices
# entry with the host node's type and numbers plus an allow rule with its
# permissions, each env appended to process.env.
devs='[]'
while IFS=$'\t' read -r cpath hpath perms; do
  [[ -c $hpath ]] || { nok "Allocate device $hpath is a character device on the host"; continue; }
  maj=$((16#$(stat -c %t "$hpath"))); min=$((16#$(stat -c %T "$hpath")))
  devs=$(jq --arg c "$cpath" --argjson ma "$maj" --argjson mi "$min" --arg p "$perms" \
           '. + [{path: $c, type: "c", major: $ma, minor: $mi, fileMode: 438, uid: 0, gid: 0, access: $p}]' <<<"$devs")
done < <(jq -r '.container_responses[0].devices[] | [.container_path, .host_path, .permissions] | @tsv' <<<"$resp")
assert_eq "Allocate gives the three Onload device nodes" "/dev/onload /dev/onload_epoll /dev/sfc_char" \
  "$(jq -r '[.[].path] | sort | join(" ")' <<<"$devs")"
make_bundle k8s-mounts --no-hook -- "$(onload_probe /usr/lib64)"
jq --argjson resp "$resp" --argjson devs "$devs" "$(cat <<'JQ'
  .mounts += [$resp.container_responses[0].mounts[] |
      {destination: .container_path, source: .host_path, type: "bind",
       options: (["rbind", "rprivate"] + (if .read_only then ["ro"] else [] end))}]
  | .linux.devices = ((.linux.devices // []) + [$devs[] | del(.access)])
  | .linux.resources.devices += [$devs[] | {allow: true, type, major, minor, access}]
  | .process.env += [$resp.container_responses[0].envs // {} | to_entries[] | "\(.key)=\(.value)"]
JQ
)" "$B/config.json" >"$B/config.json.k8s" && mv "$B/config.json.k8s" "$B/config.json"
run_container
assert_eq "[mounts] runc run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload onload mounts "$HOST_ROOT" /usr/lib64 bind
assert_host_mounts_unchanged "[mounts] after the container"

echo "# --- end to end (b): --allocate cdi --cdi-dir /etc/cdi, the names given to podman --device"
if ! command -v podman >/dev/null 2>&1; then
  info "podman is not installed: the CDI end to end is not run"
else
  podman_setup
  RUN_TAG=$(basename "$T" | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z')
  KCONF=$T/conf-cdi
  mkdir -p "$KCONF"
  # A kind and spec file unique to this run: /etc/cdi is the host's.
  jq --arg k "oci-decorator.test/k8s$RUN_TAG" '.cdi_kind = $k' "$SRC/config/onload.json" \
    >"$KCONF/k8s$RUN_TAG.json"
  SPEC=/etc/cdi/oci-decorator-k8s$RUN_TAG.json
  it_track_new_dirs /etc/cdi
  cdi_cleanup() { rm -f "$SPEC" /etc/cdi/oci-decorator-k8s"$RUN_TAG".*.preload; }
  it_add_cleanup cdi_cleanup
  rm -f "$KDIR"/*
  env -i "$OCID_PLUGIN" --config-dir "$KCONF" --host-root "$HOST_ROOT" kubernetes \
    --kubelet-dir "$KDIR" --allocate cdi --cdi-dir /etc/cdi >>"$T/logs/cdi.log" 2>&1 &
  PLUGIN_PID=$!
  PLUGIN_PIDS+=($!)
  SOCK=$KDIR/oci-decorator-oci-decorator.test_onload.sock
  check "the onload socket is served" wait_socket "$SOCK"
  check "the plugin wrote $SPEC" test -f "$SPEC"
  resp=$("$PY" "$STANDIN" allocate --socket "$SOCK" --ids onload-0 2>&1)
  assert_eq "Allocate onload-0 answers" 0 "$?"
  stop_plugin
  assert_eq "cdi mode: no mounts or devices, one CDI device" "0 0 oci-decorator.test/k8s$RUN_TAG=onload" \
    "$(jq -r '.container_responses[0] | "\(.mounts // [] | length) \(.devices // [] | length) \(.cdi_devices | map(.name) | join(","))"' <<<"$resp")"
  check "SIGTERM leaves the CDI spec in place (pods still resolve it)" test -f "$SPEC"
  devopts=()
  for n in $(jq -r '.container_responses[0].cdi_devices[].name' <<<"$resp"); do devopts+=(--device "$n"); done
  mkdir -p "$T/empty-hooks.d"
  run_podman runc --hooks-dir "$T/empty-hooks.d" -- "${devopts[@]}" -- "$(onload_probe /usr/lib64)"
  assert_eq "[cdi] podman run ${devopts[*]} exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_onload onload cdi "$HOST_ROOT" /usr/lib64 cdi
  assert_host_mounts_unchanged "[cdi] after the container"

  echo "# --- end to end (c): --allocate both (the default): mounts, devices, envs and the CDI device together"
  rm -f "$KDIR"/*
  env -i "$OCID_PLUGIN" --config-dir "$KCONF" --host-root "$HOST_ROOT" kubernetes \
    --kubelet-dir "$KDIR" --cdi-dir /etc/cdi >>"$T/logs/both.log" 2>&1 &
  PLUGIN_PID=$!
  PLUGIN_PIDS+=($!)
  check "the onload socket is served" wait_socket "$SOCK"
  resp=$("$PY" "$STANDIN" allocate --socket "$SOCK" --ids onload-5 2>&1)
  assert_eq "Allocate onload-5 answers" 0 "$?"
  stop_plugin
  # The runtime gets both: podman's own options for what the kubelet passes
  # in the CRI request, and the CDI device, whose edits replace entries with
  # the same container path.
  both=("${devopts[@]}")
  while IFS=$'\t' read -r c h ro; do both+=(-v "$h:$c:$([[ $ro == true ]] && echo ro || echo rw)"); done \
    < <(jq -r '.container_responses[0].mounts[] | [.container_path, .host_path, (.read_only // false | tostring)] | @tsv' <<<"$resp")
  while IFS=$'\t' read -r c h p; do both+=(--device "$h:$c:$p"); done \
    < <(jq -r '.container_responses[0].devices[] | [.container_path, .host_path, .permissions] | @tsv' <<<"$resp")
  while IFS= read -r e; do both+=(-e "$e"); done \
    < <(jq -r '.container_responses[0].envs | to_entries[] | "\(.key)=\(.value)"' <<<"$resp")
  # One plan, two renderings: the answer's mounts and devices are the CDI
  # device's, one for one; the answer's LD_PRELOAD is the CDI device's
  # /etc/ld.so.preload (a kubelet's envs cannot carry a file).
  assert_eq "both mode: as many mounts and devices as the CDI device, one CDI name" \
    "$(jq -r '.devices[] | select(.name == "onload") | .containerEdits | "\(.mounts | map(select(.containerPath != "/etc/ld.so.preload")) | length) \(.deviceNodes | length) \(.env // [] | length) 1"' "$SPEC")" \
    "$(jq -r '.container_responses[0] | "\(.mounts | length) \(.devices | length) \(.envs | del(.LD_PRELOAD) | length) \(.cdi_devices | length)"' <<<"$resp")"
  assert_eq "both mode: the answer's LD_PRELOAD is the CDI preload file's content" \
    "$(cat /etc/cdi/oci-decorator-k8s$RUN_TAG.onload.preload)" "$(jq -r '.container_responses[0].envs.LD_PRELOAD' <<<"$resp")"
  run_podman runc --hooks-dir "$T/empty-hooks.d" -- "${both[@]}" -- "$(onload_probe /usr/lib64)"
  assert_eq "[both] podman run with both exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_onload onload both "$HOST_ROOT" /usr/lib64 both
  assert_host_mounts_unchanged "[both] after the container"
fi

# The sanitizer build: any report in any of the plugin's logs fails the test.
for f in "$T"/logs/*.log; do sanitizer_check "$(cat "$f")"; done

it_finish
