#!/bin/bash
# CDI mode with real podman 4.3: `oci-decorator cdi generate` writes a spec
# for the SIMULATED Onload install (--host-root), and podman alone (no hook:
# an empty --hooks-dir) gives `--device <kind>=onload|zf|all` containers the
# files (read-only), the device nodes (allowed: ENXIO, not EPERM) and
# libonload preloaded through /etc/ld.so.preload (a preload file written
# next to the spec, mounted read-only), with no env LD_PRELOAD. The device and its cgroup rule are in the container's
# config.json (what makes CDI durable) and survive `podman update`. Also: an unknown device name fails with
# podman's error, cdiVersion 0.3.0 is accepted, a host without TCPDirect
# gets only the onload device, and `setup docker` merges daemon.json.
#
# podman 4.3 has no option for the CDI spec directories: the spec goes to
# /etc/cdi under a name and kind unique to this run, removed at exit
# (/etc/cdi too when this test created it).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
podman_setup

RUN_TAG=$(basename "$T" | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z')
KIND="oci-decorator.test/it-$RUN_TAG"
SPEC=/etc/cdi/oci-decorator-it-$RUN_TAG.json
SPEC_030=/etc/cdi/oci-decorator-it-$RUN_TAG-v030.json
SPEC_STALE=/etc/cdi/oci-decorator-it-$RUN_TAG-stale.json
it_track_new_dirs /etc/cdi
cdi_cleanup() { rm -f "$SPEC" "$SPEC_030" "$SPEC_STALE" /etc/cdi/oci-decorator-it-"$RUN_TAG"*.preload; }
it_add_cleanup cdi_cleanup
EMPTY_HOOKS=$T/empty-hooks.d
mkdir -p "$EMPTY_HOOKS"

jq --arg k "$KIND" '.cdi_kind = $k | del(.profiles, .profile_dir)' "$SRC/config/onload.json" >"$CONF_DIR/onload.json" \
  || die "jq edit of the inventory failed"
ocid() { "$OCID_BIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" "$@"; }

# --- generate ----------------------------------------------------------------------------
echo "# --- cdi generate"
out=$(ocid cdi generate --output "$SPEC" 2>&1)
assert_eq "cdi generate --output exits 0" 0 "$?"
assert_contains "it says what it wrote" "$out" "wrote $SPEC: kind $KIND, devices onload, zf, all"
assert_eq "spec: cdiVersion 0.5.0 (hostPath under --host-root), kind, devices" \
  "0.5.0 $KIND onload,zf,all" "$(jq -r '[.cdiVersion, .kind, (.devices | map(.name) | join(","))] | join(" ")' "$SPEC")"
assert_eq "spec file mode 0644" 644 "$(stat -c %a "$SPEC")"
assert_eq "no temporary file left in /etc/cdi" "" "$(ls -A /etc/cdi | grep -F ".tmp." | grep -F "$RUN_TAG")"
assert_eq "no env LD_PRELOAD in the spec (it would replace a container's own)" \
  '{"onload":null,"zf":null,"all":null}' \
  "$(jq -c '[.devices[] | {(.name): .containerEdits.env}] | add' "$SPEC")"
P=/etc/cdi/oci-decorator-it-$RUN_TAG
assert_eq "onload and all mount their preload file, next to the spec, at /etc/ld.so.preload ro,nosuid,nodev" \
  "{\"onload\":[\"$P.onload.preload ro,nosuid,nodev,bind\"],\"zf\":[],\"all\":[\"$P.all.preload ro,nosuid,nodev,bind\"]}" \
  "$(jq -c '[.devices[] | {(.name): [.containerEdits.mounts[] | select(.containerPath == "/etc/ld.so.preload") | "\(.hostPath) \(.options | join(","))"]}] | add' "$SPEC")"
assert_eq "the preload files list libonload, mode 0644" \
  "644 $CDI_LIBONLOAD|644 $CDI_LIBONLOAD|" \
  "$(for d in onload all; do echo "$(stat -c %a "$P.$d.preload") $(cat "$P.$d.preload")"; done | tr '\n' '|')"
check_not "no preload file for zf" test -e "$P.zf.preload"
out=$(ocid cdi generate -o - 2>&1 >"$T/stdout.json")
assert_eq "stdout (-o -): env LD_PRELOAD instead, no preload mount" \
  "{\"onload\":[\"LD_PRELOAD=$CDI_LIBONLOAD\"],\"zf\":null,\"all\":[\"LD_PRELOAD=$CDI_LIBONLOAD\"]} 0" \
  "$(jq -c '[.devices[] | {(.name): .containerEdits.env}] | add' "$T/stdout.json") $(grep -c ld.so.preload "$T/stdout.json")"
assert_contains "stdout (-o -): warns that a container's own LD_PRELOAD is replaced" "$out" \
  "replaces a container's own LD_PRELOAD; write it with --output-dir"
assert_eq "device nodes: hostPath under the host root, no type or numbers (the engine stats them)" \
  "$HOST_ROOT/dev/onload $HOST_ROOT/dev/onload_epoll $HOST_ROOT/dev/sfc_char" \
  "$(jq -r '.devices[] | select(.name == "onload") | .containerEdits.deviceNodes | map(select(has("major") or has("type") | not) | .hostPath) | join(" ")' "$SPEC")"

mkdir -p "$T/cdi-out"
ocid cdi generate --output-dir "$T/cdi-out" 2>/dev/null
assert_eq "--output-dir writes oci-decorator-<inventory>.json and its preload files" \
  "oci-decorator-onload.all.preload oci-decorator-onload.json oci-decorator-onload.onload.preload" \
  "$(ls "$T/cdi-out" | tr '\n' ' ' | sed 's/ $//')"
assert_eq "--output-dir: the spec names its preload file there" "$T/cdi-out/oci-decorator-onload.onload.preload" \
  "$(jq -r '.devices[] | select(.name == "onload") | .containerEdits.mounts[] | select(.containerPath == "/etc/ld.so.preload") | .hostPath' "$T/cdi-out/oci-decorator-onload.json")"

# A host without TCPDirect: the onload device only, with warnings.
cp -a "$HOST_ROOT" "$T/host-nozf"
rm -f "$T/host-nozf/usr/bin/zf_stackdump"
out=$("$OCID_BIN" --host-root "$T/host-nozf" --config-dir "$CONF_DIR" cdi generate -o "$T/nozf.json" 2>&1)
assert_eq "no TCPDirect: generate still exits 0" 0 "$?"
assert_eq "no TCPDirect: only the onload device" onload "$(jq -r '[.devices[].name] | join(",")' "$T/nozf.json")"
assert_contains "no TCPDirect: warns why zf is missing" "$out" 'no CDI device "zf"'
assert_contains "no TCPDirect: names the missing file" "$out" "$T/host-nozf/usr/bin/zf_stackdump"

# Two inventories of one CDI kind: both specs would name "all", and a CDI
# runtime would then resolve neither. The second (in file-name order) gets none.
mkdir -p "$T/conf-twice" "$T/cdi-twice"
cp "$CONF_DIR/onload.json" "$T/conf-twice/onload.json"
jq '.activation_flag = "OCI_ONLOAD_TWICE"' "$CONF_DIR/onload.json" >"$T/conf-twice/onload2.json"
out=$("$OCID_BIN" --host-root "$HOST_ROOT" --config-dir "$T/conf-twice" cdi generate --output-dir "$T/cdi-twice" 2>&1)
assert_eq "[one kind twice] cdi generate exits 1" 1 "$?"
assert_contains "[one kind twice] one line names both inventories" "$out" \
  "inventory $T/conf-twice/onload2.json: CDI kind $KIND is already inventory $T/conf-twice/onload.json's"
assert_eq "[one kind twice] the first keeps its spec, the second gets none" \
  "oci-decorator-onload.all.preload oci-decorator-onload.json oci-decorator-onload.onload.preload" \
  "$(ls "$T/cdi-twice" | tr '\n' ' ' | sed 's/ $//')"

# --- podman ------------------------------------------------------------------------------

for what in onload zf all; do
  run_podman runc --hooks-dir "$EMPTY_HOOKS" -- --device "$KIND=$what" -- "$(onload_probe "$CDI_LIBDIRS")"
  echo "# --- podman --device $KIND=$what"
  assert_eq "[$what] podman run exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_onload "$what" "$what" "$HOST_ROOT" "$CDI_LIBDIRS" cdi
  assert_host_mounts_unchanged "[$what] after the container"
done

echo "# --- unknown device name"
run_podman runc --hooks-dir "$EMPTY_HOOKS" -- --device "$KIND=bogus" -- 'echo SHOULD-NOT-RUN'
check_not "[bogus] podman run fails" test "$RC" -eq 0
assert_not_contains "[bogus] the container never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[bogus] podman names the unresolvable device" "$ERR" "unresolvable CDI devices $KIND=bogus"

echo "# --- cdiVersion 0.3.0 (what a spec for the real host root, without hostPath, declares)"
jq --arg k "$KIND-v030" '.cdiVersion = "0.3.0" | .kind = $k | del(.devices[].containerEdits.deviceNodes)' \
  "$SPEC" >"$SPEC_030"
run_podman runc --hooks-dir "$EMPTY_HOOKS" -- --device "$KIND-v030=zf" -- 'ls /usr/bin/zf_stackdump; echo DONE'
assert_eq "[0.3.0] podman run exits 0" 0 "$RC"
assert_contains "[0.3.0] the zf files are there" "$OUT" "/usr/bin/zf_stackdump"
rm -f "$SPEC_030"

echo "# --- a stale spec (the host changed after generation) fails the container"
cp -a "$HOST_ROOT" "$T/host-stale"
jq --arg k "$KIND-stale" '.cdi_kind = $k' "$CONF_DIR/onload.json" >"$T/stale-conf.json"
mkdir -p "$T/stale-conf" && mv "$T/stale-conf.json" "$T/stale-conf/onload.json"
"$OCID_BIN" --host-root "$T/host-stale" --config-dir "$T/stale-conf" cdi generate -o "$SPEC_STALE" 2>/dev/null
rm -f "$T/host-stale/usr/lib64/libonload_ext.so.1.2.0"
run_podman runc --hooks-dir "$EMPTY_HOOKS" -- --device "$KIND-stale=onload" -- 'echo SHOULD-NOT-RUN'
check_not "[stale] podman run fails" test "$RC" -eq 0
assert_not_contains "[stale] the container never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[stale] the error names the missing host file" "$ERR" "libonload_ext.so.1.2.0"
rm -f "$SPEC_STALE"

# --- durability: the devices are in config.json, so an update keeps them -----------------
echo "# --- podman update keeps the CDI devices"
ROOTFS=$T/podman/rootfs-update
cp -a "$BASE_ROOTFS" "$ROOTFS"
cid=$(timeout 60 "${POD[@]}" $(pod_runtime_args runc) --hooks-dir "$EMPTY_HOOKS" run -d "${POD_RUN[@]}" \
        --device "$KIND=onload" --rootfs "$ROOTFS" sh -c 'sleep 120' 2>"$T/podman/err-d")
assert_eq "detached container started" 0 "$?"
if [[ -n $cid ]]; then
  pod_exec() { timeout 30 "${POD[@]}" $(pod_runtime_args runc) exec "$cid" sh -c "$1" 2>&1; }
  assert_contains "before update: /dev/onload opens (ENXIO)" "$(pod_exec 'cat /dev/onload')" "No such device"
  # What makes CDI durable: the engine put the node and its cgroup rule into
  # the container's config.json, so whatever re-applies the runtime's
  # configuration re-applies them too.
  cfg=$(timeout 30 "${POD[@]}" inspect --format '{{.OCIConfigPath}}' "$cid" 2>/dev/null)
  read -r maj min < <(devnum "$HOST_ROOT/dev/onload" | tr ':' ' ')
  assert_eq "config.json ($cfg) has /dev/onload in linux.devices and allows c $maj:$min rw" "1 1" \
    "$(jq --argjson ma "$maj" --argjson mi "$min" -r '[
         ([.linux.devices[] | select(.path == "/dev/onload" and .type == "c" and .major == $ma and .minor == $mi)] | length),
         ([.linux.resources.devices[] | select(.allow and .type == "c" and .major == $ma and .minor == $mi and .access == "rw")] | length)
       ] | join(" ")' "$cfg" 2>&1)"
  pid=$(timeout 30 "${POD[@]}" inspect --format '{{.State.Pid}}' "$cid" 2>/dev/null)
  devcg=/sys/fs/cgroup/devices$(awk -F: '$2 == "devices" {print $3}' "/proc/$pid/cgroup" 2>/dev/null)
  onload_rule="c $maj:$min rw"
  # A rule added behind the runtime's back, as hook mode does: runc 1.1's
  # update skips device rules (SkipDevices), so here it survives too and the
  # update alone cannot tell the modes apart (systemd's daemon-reload, which
  # can, is absent on these machines). Reported, not asserted.
  echo 'c 1:11 rwm' >"$devcg/devices.allow" 2>/dev/null
  upd=$(timeout 30 "${POD[@]}" $(pod_runtime_args runc) update --memory 200m "$cid" 2>&1)
  assert_eq "podman update --memory 200m exits 0 ($upd)" 0 "$?"
  assert_eq "the update reached the cgroup (memory limit 200m)" $((200 * 1024 * 1024)) \
    "$(pod_exec 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes')"
  list=$(cat "$devcg/devices.list" 2>&1)
  if grep -qF 'c 1:11 rwm' <<<"$list"; then
    info "this runtime's update left an out-of-band device rule alone (expected with runc 1.1)"
  else
    info "this runtime's update reset out-of-band device rules: hook-mode rules would be lost here"
  fi
  assert_contains "after update: the CDI rule $onload_rule is still there" "$list" "$onload_rule"
  r=$(pod_exec 'cat /dev/onload; cat /dev/sfc_char')
  assert_contains "after update: /dev/onload still opens (ENXIO)" "$r" "/dev/onload': No such device"
  assert_contains "after update: /dev/sfc_char still opens (ENXIO)" "$r" "/dev/sfc_char': No such device"
  assert_not_contains "after update: no EPERM" "$r" "Operation not permitted"
  timeout 30 "${POD[@]}" $(pod_runtime_args runc) rm -f -t 0 "$cid" >/dev/null 2>&1
else
  info "podman run -d: $(cat "$T/podman/err-d")"
fi
leftover=$("${POD[@]}" ps -a --format '{{.ID}}' 2>&1)
assert_eq "podman has no container left" "" "$leftover"

# --- setup docker, on a daemon.json with other keys (no dockerd needed) -------------------
echo "# --- setup docker"
DJ=$T/docker/daemon.json
mkdir -p "$T/docker"
printf '{\n  "log-level": "warn",\n  "runtimes": {"other": {"path": "/usr/bin/other-runtime"}},\n  "data-root": "/srv/docker"\n}\n' >"$DJ"
before=$(cat "$DJ")
out=$("$OCID_BIN" setup docker --config "$DJ" --runtime-path /usr/bin/oci-decorator-runtime 2>&1)
assert_eq "setup docker exits 0" 0 "$?"
assert_eq "daemon.json: other keys and runtimes kept, ours added" \
  '{"log-level":"warn","runtimes":{"other":{"path":"/usr/bin/other-runtime"},"oci-decorator":{"path":"/usr/bin/oci-decorator-runtime"}},"data-root":"/srv/docker"}' \
  "$(jq -c . "$DJ")"
backups=("$DJ".bak.*)
assert_eq "one backup, with the old content" "1 $before" "${#backups[@]} $(cat "${backups[0]}")"
assert_contains "it tells how to use it" "$out" "docker run --runtime=oci-decorator -e OCI_ONLOAD=all"
out=$("$OCID_BIN" setup docker --config "$DJ" --runtime-path /usr/bin/oci-decorator-runtime 2>&1)
assert_contains "again: nothing to do" "$out" "nothing to do"
backups=("$DJ".bak.*)
assert_eq "again: no second backup" 1 "${#backups[@]}"
"$OCID_BIN" setup docker --config "$T/docker/new.json" --dry-run >/dev/null 2>&1
check_not "--dry-run writes nothing" test -e "$T/docker/new.json"
ln -s "$DJ" "$T/docker/link.json"
out=$("$OCID_BIN" setup docker --config "$T/docker/link.json" --runtime-name other2 2>&1)
check_not "a symlinked daemon.json is refused" test "$?" -eq 0
assert_contains "…with a clear error" "$out" "symbolic link"

# --- setup containerd: the drop-in as containerd itself reads it (no daemon) -----------------
echo "# --- setup containerd"
CTD=$T/containerd
mkdir -p "$CTD"
printf 'version = 2\nimports = ["%s/conf.d/*.toml"]\n' "$CTD" >"$CTD/config.toml"
out=$("$OCID_BIN" setup containerd --config "$CTD/conf.d/oci-decorator.toml" \
        --containerd-config "$CTD/config.toml" --runtime-path /usr/bin/oci-decorator-runtime 2>&1)
assert_eq "setup containerd exits 0" 0 "$?"
assert_contains "it sees the import" "$out" "imports $CTD/conf.d/oci-decorator.toml: ok"
if command -v containerd >/dev/null 2>&1; then
  dump=$(containerd --config "$CTD/config.toml" config dump 2>&1)
  assert_contains "containerd config dump: our runtime's BinaryName" "$dump" \
    'BinaryName = "/usr/bin/oci-decorator-runtime"'
  assert_contains "containerd config dump: runc is still a CRI runtime" "$dump" \
    'containerd.runtimes.runc]'
  assert_contains "containerd config dump: our annotations are passed on" "$dump" \
    'pod_annotations = ["oci-decorator/*"]'
else
  info "containerd is not installed: the drop-in is not checked with containerd config dump"
fi
printf 'version = 2\nimports = ["%s/conf.d/*.toml"]\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "x/pause:1"\n' \
  "$CTD" >"$CTD/config2.toml"
rm -rf "$CTD/conf.d"
out=$("$OCID_BIN" setup containerd --config "$CTD/conf.d/oci-decorator.toml" \
        --containerd-config "$CTD/config2.toml" --runtime-path /usr/bin/oci-decorator-runtime 2>&1)
check_not "a main config with a CRI section: setup containerd fails" test "$?" -eq 0
check_not "…and writes no drop-in (it would replace that section)" test -e "$CTD/conf.d"
assert_contains "…and prints the lines to add" "$out" 'BinaryName = "/usr/bin/oci-decorator-runtime"'

it_finish
