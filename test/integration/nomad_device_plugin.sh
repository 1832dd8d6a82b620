#!/bin/bash
# oci-decorator-device-plugin as a Nomad external device plugin, against the
# SIMULATED Onload install (plus a second inventory, example.com/tool):
#   1. test/standins/nomad_standin.py, a go-plugin client stand-in, runs the
#      protocol end to end: no cookie -> exit 1 with the message; handshake
#      line; private socket dir; health; PluginInfo; ConfigSchema; SetConfig
#      (good, garbage, wrong type naming the key); Fingerprint groups
#      amd/onload, amd/zf, amd/onloadzf, example/tool kept open; Reserve
#      (valid, union, unknown ID, unhealthy); Stats; a broken inventory makes
#      only its group unhealthy; a removed device node makes its groups
#      unhealthy, then healthy again; Shutdown and SIGTERM remove the socket;
#   2. end to end: the ContainerReservation of amd-onloadzf-0 (then amd-zf-0)
#      applied as Nomad's docker driver does (--mount type=bind,...,readonly,
#      --device H:T:PERMS, -e K=V) on a private dockerd WITHOUT oci-decorator's
#      runtime or hook: inside the container Onload works (host files,
#      devices pass the device cgroup, LD_PRELOAD loads the SIMULATED libonload).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
plugin_suite nomad_standin.py
PLUGIN_LOG=$T/logs/plugin.log

# A second inventory beside Onload's: its group must not follow Onload's health.
printf '#!/bin/sh\necho SIMULATED example tool\n' >"$HOST_ROOT/usr/bin/example-tool"
chmod 0755 "$HOST_ROOT/usr/bin/example-tool"
cat >"$CONF_DIR/example.json" <<'JSON'
{"version": "1", "activation_flag": "OCI_EXAMPLE", "cdi_kind": "example.com/tool",
 "driver_feature": ["tool"], "inventory": {"tool": {"binaries": ["/usr/bin/example-tool"]}}}
JSON

# --- 1. the protocol, through the stand-in ---------------------------------------------------
echo "# --- 1. go-plugin client stand-in"
out=$(timeout 120 "$PY" "$STANDIN" scenario --plugin "$OCID_PLUGIN" --config-dir "$CONF_DIR" \
        --host-root "$HOST_ROOT" --log "$PLUGIN_LOG" 2>&1)
rc=$?
while IFS= read -r line; do
  case $line in
    "ok   - "*) ok "[standin] ${line#ok   - }" ;;
    "FAIL - "*) nok "[standin] ${line#FAIL - }" ;;
    *) info "$line" ;;
  esac
done <<<"$out"
assert_eq "the stand-in exits 0" 0 "$rc"
assert_contains "the stand-in ran to the end" "$out" "# standin: "
if [[ $rc -ne 0 ]]; then tail -30 "$PLUGIN_LOG" | sed 's/^/# plugin: /'; fi
assert_eq "no plugin process left" "" "$(pgrep -f "^$OCID_PLUGIN" || true)"

# --- 2. end to end: the reservation applied as Nomad's docker driver would ------------------------
echo "# --- 2. the reservation applied with docker run, no oci-decorator runtime or hook"
if ! command -v dockerd >/dev/null 2>&1 || ! command -v containerd >/dev/null 2>&1; then
  info "SKIP part 2: dockerd/containerd are not installed (apt-get install docker.io)"
  sanitizer_check "$(cat "$PLUGIN_LOG" 2>/dev/null)"
  it_finish
fi
docker_setup

# Plain docker: only runc, cgroups under the test's parent.
jq -n --arg cg "/$CG_PARENT" --arg key "$T/key.json" \
  '{"log-level": "warn", "cgroup-parent": $cg, "deprecated-key-path": $key}' >"$T/daemon.json"
docker_start "$T/daemon.json"
assert_eq "dockerd has no oci-decorator runtime" "" "$(dk info --format '{{json .Runtimes}}' | grep -o oci-decorator)"
tar -C "$BASE_ROOTFS" -cf "$T/bb.tar" . || die "tar of the rootfs failed"
dk import "$T/bb.tar" local/ocid-bb:1 >/dev/null || die "docker import failed"
PROBE=$(onload_probe "$CDI_LIBDIRS")

# reserve_args ID...: the docker run options for the plugin's reservation of
# ID... (as Nomad's docker driver maps a ContainerReservation); sets RES.
reserve_args() {
  RES=$(timeout 60 "$PY" "$STANDIN" reserve --plugin "$OCID_PLUGIN" --config-dir "$CONF_DIR" \
          --host-root "$HOST_ROOT" --log "$PLUGIN_LOG" "$@")
  ARGS=()
  local k v h t ro p
  while IFS=$'\t' read -r h t ro; do
    ARGS+=(--mount "type=bind,source=$h,target=$t$([[ $ro == true ]] && echo ,readonly)")
  done < <(jq -r '.mounts[] | [.host_path, .task_path, (.read_only | tostring)] | @tsv' <<<"$RES")
  while IFS=$'\t' read -r h t p; do
    ARGS+=(--device "$h:$t:$p")
  done < <(jq -r '.devices[] | [.host_path, .task_path, .permissions] | @tsv' <<<"$RES")
  while IFS=$'\t' read -r k v; do
    ARGS+=(-e "$k=$v")
  done < <(jq -r '.envs | to_entries[] | [.key, .value] | @tsv' <<<"$RES")
}
run_docker() {  # NAME [docker run options...]
  local name=$1; shift
  dk run --rm --network=none "$@" local/ocid-bb:1 sh -c "$PROBE" </dev/null >"$T/out-$name" 2>"$T/err-$name"
  RC=$?
  OUT=$(cat "$T/out-$name")
  ERR=$(cat "$T/err-$name")
}

reserve_args amd-onloadzf-0
assert_eq "[onloadzf] reserve amd-onloadzf-0 gives mounts, devices and LD_PRELOAD" "yes" \
  "$(jq -r 'if (.mounts | length) > 0 and (.devices | length) == 3 and .envs.LD_PRELOAD then "yes" else tostring end' <<<"$RES")"
info "docker run ${ARGS[*]}"
run_docker onloadzf "${ARGS[@]}"
assert_eq "[onloadzf] docker run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all onloadzf "$HOST_ROOT" "$CDI_LIBDIRS" bind

reserve_args amd-zf-0
run_docker zf "${ARGS[@]}"
assert_eq "[zf] docker run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload zf zf "$HOST_ROOT" "$CDI_LIBDIRS" bind

# The same image without a reservation: nothing of Onload (the check above
# is not passing because of the image).
run_docker none
assert_eq "[no device] docker run exits 0" 0 "$RC"
expect_onload none "no device" "$HOST_ROOT" "$CDI_LIBDIRS" bind
# A device missing from the reservation is really denied: the cgroup check bites.
assert_contains "[no reservation] the host's /dev/onload (bind-mounted) is denied by the device cgroup" \
  "$(dk run --rm --network=none --mount "type=bind,source=$HOST_ROOT/dev,target=/hostdev,readonly" local/ocid-bb:1 \
       sh -c 'cat /hostdev/onload 2>&1' </dev/null 2>&1)" "Operation not permitted"

echo "# --- stop dockerd"
check "dockerd stops on SIGTERM" docker_stop
sanitizer_check "$(cat "$PLUGIN_LOG" 2>/dev/null)"
it_finish
