#!/bin/bash
# The Onload version lock with real runc (hook and runtime shim), `plan`,
# `cdi generate` and the device plugin's view, on a SIMULATED install whose
# libonload.so carries a banner in Onload's own format and whose host root
# has a sys/module/onload/version as the kernel shows Onload's (`check` is
# node_check.sh's). Versions are a git build's, as Onload's
# scripts/onload_version_gen writes them: ONLOAD_VERSION "<hash> <date>
# <branch> " in the banner ("Onload ef17681d 2026-07-22 master \nCopyright",
# src/lib/transport/unix/startup.c:719) and in the module file
# ("ef17681d 2026-07-22 master \n", src/driver/linux_onload/driver.c:44):
#   1. versions match: the container starts with Onload, the plan warns nothing;
#   2. the module is another commit of the same branch (a15d5c77 2026-07-20
#      master: Onload's own short-version check would pass): runc fails with
#      the one line naming both versions and both paths; nothing mounted, the
#      image untouched, no state left; the same through the runtime shim
#      (config.json unchanged); a module differing by its build profile only
#      is refused by `plan` too;
#   3. a container that did not ask starts normally, the hook silent;
#   4. cdi generate leaves the guarded devices out with the line as a warning
#      (every device for the shipped lock: no spec, exit 1; zf and "all" kept
#      apart for a lock on "onload" only);
#      the device plugin's resources are unhealthy with the line as why, and
#      a module upgraded under a running plugin removes its spec from
#      --cdi-dir (found by the periodic re-check)
#      (healthy on a match), and so are its devices as the kubelet
#      (ListAndWatch) and Nomad (Fingerprint, the line as health
#      description) receive them;
#   5. "enforce": false: the container starts with Onload and a warning logged
#      (hook: its log; shim: the runtime's log);
#   6. no module version (sim-onload.sh's install): starts, plan warns.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

HV=$T/host-v
LIB_V="ef17681d 2026-07-22 master"      # ONLOAD_VERSION "$LIB_V " (no build profile)
MOD_V="a15d5c77 2026-07-20 master"
SIM_ONLOAD_VERSION=$LIB_V make_sim "$HV"   # with sys/module/onload/version "$LIB_V \n"
assert_eq "the simulated module file is the real format" "$LIB_V " "$(cat "$HV/sys/module/onload/version")"
assert_eq "the simulated library's banner is the real format" 1 \
  "$(grep -c -a -F "Onload $LIB_V " "$HV/usr/lib64/libonload.so")"
check "the simulated library's banner is followed by its Copyright line" \
  grep -q -a -z -P "Onload \Q$LIB_V\E \nCopyright " "$HV/usr/lib64/libonload.so"
LINE_MISMATCH="inventory $CONF_DIR/onload.json: version lock: libonload.so is \"$LIB_V\" ($HV/usr/lib64/libonload.so) but the loaded onload module is \"$MOD_V\" ($HV/sys/module/onload/version); refusing (set \"enforce\": false to allow)"

ocid() { "$OCID_BIN" --host-root "$HV" --config-dir "$CONF_DIR" --state-dir "$STATE_DIR" "$@"; }

# Both serving modes of the device plugin, as their clients see them, on
# host root $1: KUBE_DEVICES, the first ListAndWatch answer for
# amd.com/onload (the kubelet stand-in); NOMAD_GROUPS, the first Fingerprint
# message (the Nomad stand-in), both as JSON; a summary of each is printed.
plugin_modes() {
  local kdir=$T/kubelet-$RANDOM pid sock
  mkdir -m 0750 "$kdir"
  env -i "$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "$1" kubernetes --kubelet-dir "$kdir" \
    >>"$T/logs/plugin-kubernetes.log" 2>&1 &
  pid=$!
  sock=$kdir/oci-decorator-amd.com_onload.sock
  wait_socket "$sock" || nok "the plugin serves $sock"
  KUBE_DEVICES=$(/usr/bin/python3 "$SRC/test/standins/kubelet_standin.py" devices --socket "$sock" 2>&1)
  kill -TERM "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -rf "$kdir"
  NOMAD_GROUPS=$(/usr/bin/python3 "$SRC/test/standins/nomad_standin.py" fingerprint --plugin "$OCID_PLUGIN" \
                   --config-dir "$CONF_DIR" --host-root "$1" --log "$T/logs/plugin-nomad.log" 2>&1)
  info "ListAndWatch: $(jq -c '[.devices[].health] | group_by(.) | map({(.[0]): length}) | add' <<<"$KUBE_DEVICES" 2>/dev/null || echo "$KUBE_DEVICES")"
  info "Fingerprint: $(jq -c 'map_values([.[].healthy] | group_by(.) | map({(.[0] | tostring): length}) | add)' <<<"$NOMAD_GROUPS" 2>/dev/null || echo "$NOMAD_GROUPS")"
}

# --- 1. match
echo "# --- 1. versions match"
make_bundle match --host-root "$HV" --env OCI_ONLOAD=all -- "$(onload_probe "$IMAGE_LIBDIR")"
plan=$(ocid plan --bundle "$B" 2>"$T/plan.err")
assert_eq "[match] plan has no warnings" "null" "$(jq -c .warnings <<<"$plan")"
assert_eq "[match] plan printed nothing on stderr" "" "$(cat "$T/plan.err")"
run_container
assert_eq "[match] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all "match" "$HV" "$IMAGE_LIBDIR" hook

if [[ -n ${OCID_PLUGIN:-} ]]; then
  rc=0
  res=$("$OCID_PLUGIN" --host-root "$HV" --config-dir "$CONF_DIR" resources 2>&1) || rc=$?
  assert_eq "[match, plugin] exit 0: every resource healthy" 0 "$rc"
  check "[match, plugin] amd.com/onload healthy" grep -q '^healthy *amd.com/onload ' <<<"$res"
  check_not "[match, plugin] nothing unhealthy" grep -q '^UNHEALTHY' <<<"$res"
  plugin_modes "$HV"
  assert_eq "[match, kubernetes mode] ListAndWatch: every amd.com/onload device Healthy" "Healthy" \
    "$(jq -r '[.devices[].health] | unique | join(",")' <<<"$KUBE_DEVICES")"
  assert_eq "[match, nomad mode] Fingerprint: every device of every group healthy" "true" \
    "$(jq -r '[.[][] .healthy] | unique | map(tostring) | join(",")' <<<"$NOMAD_GROUPS")"

  # The module upgraded under a running plugin (sysfs changes, inotify does
  # not see it: the periodic re-check does): the spec that offered the
  # now-refused library leaves --cdi-dir, its preload files after it.
  kdir=$T/kubelet-upgrade
  mkdir -m 0750 "$kdir"
  env -i "$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "$HV" --recheck-interval 1 kubernetes \
    --kubelet-dir "$kdir" --cdi-dir "$T/cdi-upgrade" >"$T/logs/plugin-upgrade.log" 2>&1 &
  pid=$!
  wait_socket "$kdir/oci-decorator-amd.com_onload.sock" || nok "the plugin serves $kdir"
  check "[match, plugin --cdi-dir] the spec is written" test -f "$T/cdi-upgrade/oci-decorator-onload.json"
  check "[match, plugin --cdi-dir] with its preload file" test -f "$T/cdi-upgrade/oci-decorator-onload.onload.preload"
  sim_module_version "$HV" "$MOD_V"
  for _ in $(seq 50); do
    [[ -e $T/cdi-upgrade/oci-decorator-onload.json ]] || break
    sleep 0.2
  done
  check_not "[plugin] module upgraded under a running plugin: its spec is removed from --cdi-dir" \
    test -e "$T/cdi-upgrade/oci-decorator-onload.json"
  assert_eq "[plugin] module upgraded: its preload files are removed too" "" "$(ls -A "$T/cdi-upgrade")"
  assert_contains "[plugin] module upgraded: one line says why" "$(cat "$T/logs/plugin-upgrade.log")" \
    "removed $T/cdi-upgrade/oci-decorator-onload.json: $CONF_DIR/onload.json yields no CDI spec now"
  kill -TERM "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -rf "$kdir"
  sim_module_version "$HV" "$LIB_V"
fi

# --- 2. mismatch: refused in hook and shim mode
echo "# --- 2. mismatch"
sim_module_version "$HV" "$MOD_V"
make_bundle mismatch --host-root "$HV" --env OCI_ONLOAD=onload -- "$(onload_probe "$IMAGE_LIBDIR")"
before=$(tree_snapshot "$ROOTFS")
run_container
check "[mismatch] runc run fails" test "$RC" -ne 0
# runc's log quotes the hook's stderr: \" for ".
assert_contains "[mismatch] runc's error carries the one line" "${ERR//\\\"/\"}" \
  "stderr: oci-decorator: error: container $CID: refused: $LINE_MISMATCH"
assert_eq "[mismatch] the hook wrote one line" 1 "$(grep -c 'oci-decorator: ' <<<"$ERR")"
assert_not_contains "[mismatch] the container did not run" "$OUT" "DONE"
assert_eq "[mismatch] image dir unchanged (no mountpoint created)" "$before" "$(tree_snapshot "$ROOTFS")"
assert_state_dir_empty "[mismatch]"
assert_host_mounts_unchanged "[mismatch]"
assert_eq "[mismatch] plan refuses with the same line" \
  "oci-decorator: error: $LINE_MISMATCH" "$(ocid plan --bundle "$B" 2>&1 >/dev/null)"
# The same release of the module built with another profile: another version.
sim_module_version "$HV" "$LIB_V" cloud
assert_eq "[mismatch by build profile] plan refuses, naming both" \
  "oci-decorator: error: ${LINE_MISMATCH/\"$MOD_V\"/\"$LIB_V cloud\"}" "$(ocid plan --bundle "$B" 2>&1 >/dev/null)"
sim_module_version "$HV" "$MOD_V"

RUNC=$(command -v runc)
mkdir -p "$T/bin"
ln -s "$OCID_BIN" "$T/bin/oci-decorator-runtime"
echo "{\"runtime\": \"$RUNC\"}" >"$T/runtime.json"
make_bundle shim --no-hook --env OCI_ONLOAD=all -- 'true'
sum=$(sha256sum <"$B/config.json")
IT_IDS+=("$CID")
"$T/bin/oci-decorator-runtime" --ocid-config "$T/runtime.json" --ocid-host-root "$HV" \
  --ocid-config-dir "$CONF_DIR" --root "$RUNC_ROOT" create --bundle "$B" "$CID" \
  </dev/null >"$B/out" 2>"$B/err"
RC=$?
ERR=$(cat "$B/err")
assert_eq "[shim mismatch] create exits 1" 1 "$RC"
assert_eq "[shim mismatch] one line on stderr" "oci-decorator: error: container $CID: refused: $LINE_MISMATCH" "$ERR"
assert_eq "[shim mismatch] config.json unchanged" "$sum" "$(sha256sum <"$B/config.json")"
check_not "[shim mismatch] no container was created" quiet runc --root "$RUNC_ROOT" state "$CID"

# --- 3. a container that did not ask
echo "# --- 3. not asked, with the mismatch"
make_bundle na --host-root "$HV" -- "$(onload_probe "$IMAGE_LIBDIR")"
before=$(tree_snapshot "$ROOTFS")
run_container
assert_eq "[not asked] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[not asked] the hook printed nothing" "" "$ERR"
expect_onload none "not asked" "$HV" "$IMAGE_LIBDIR" hook
assert_eq "[not asked] image dir unchanged" "$before" "$(tree_snapshot "$ROOTFS")"

# --- 4. cdi generate
echo "# --- 4. cdi generate"
rc=0
out=$(ocid cdi generate -o - 2>"$T/cdi.err") || rc=$?
assert_eq "[cdi, shipped lock] no device can be generated: exit 1" 1 "$rc"
assert_eq "[cdi, shipped lock] no spec on stdout" "" "$out"
for d in onload zf; do
  assert_contains "[cdi, shipped lock] $d left out with the line" "$(cat "$T/cdi.err")" \
    "no CDI device \"$d\": $LINE_MISMATCH"
done
CONF_ONLOAD=$T/conf-onload-only
mkdir -m 0755 "$CONF_ONLOAD"
jq '.version_lock.features = ["onload"]' "$CONF_DIR/onload.json" >"$CONF_ONLOAD/onload.json"
rc=0
out=$("$OCID_BIN" --host-root "$HV" --config-dir "$CONF_ONLOAD" cdi generate -o - 2>"$T/cdi.err") || rc=$?
assert_eq "[cdi, lock on onload] exit 0" 0 "$rc"
assert_eq "[cdi, lock on onload] only zf is in the spec" "zf" "$(jq -r '[.devices[].name] | join(",")' <<<"$out")"
assert_contains "[cdi, lock on onload] onload left out with the line" "$(cat "$T/cdi.err")" \
  "no CDI device \"onload\": ${LINE_MISMATCH/$CONF_DIR/$CONF_ONLOAD}"
assert_contains "[cdi, lock on onload] \"all\" left out" "$(cat "$T/cdi.err")" \
  'no CDI device "all": not every feature is available'

# --- 4b. device plugin: the guarded resources are unhealthy, the line as why
if [[ -n ${OCID_PLUGIN:-} ]]; then
  echo "# --- 4b. device plugin resources"
  res=$("$OCID_PLUGIN" --host-root "$HV" --config-dir "$CONF_DIR" resources 2>&1)
  for r in "amd.com/onload " "amd.com/zf " "nomad amd/onloadzf "; do
    assert_contains "[plugin] $r unhealthy" "$(grep '^UNHEALTHY' <<<"$res")" "$r"
  done
  assert_eq "[plugin] each says why, with the line" 3 "$(grep -cF "$LINE_MISMATCH" <<<"$res")"
  check_not "[plugin] nothing healthy" grep -q '^healthy' <<<"$res"
  plugin_modes "$HV"
  assert_eq "[kubernetes mode] ListAndWatch: every amd.com/onload device Unhealthy" "Unhealthy" \
    "$(jq -r '[.devices[].health] | unique | join(",")' <<<"$KUBE_DEVICES")"
  assert_eq "[nomad mode] Fingerprint: no device of any group healthy" "false" \
    "$(jq -r '[.[][] .healthy] | unique | map(tostring) | join(",")' <<<"$NOMAD_GROUPS")"
  assert_eq "[nomad mode] ... each device's health_description is the line" "true" \
    "$(jq -r --arg l "$LINE_MISMATCH" '[.[][] .health_description | contains($l)] | all' <<<"$NOMAD_GROUPS")"
else
  info "device plugin not built (OCID_PLUGIN unset): resources not checked here; plugin_unit_tests and the unit test cover the view"
fi

# --- 5. enforce false
echo "# --- 5. enforce false"
CONF_ALLOW=$T/conf-allow
mkdir -m 0755 "$CONF_ALLOW"
jq '.version_lock.enforce = false' "$CONF_DIR/onload.json" >"$CONF_ALLOW/onload.json"
make_bundle allow --host-root "$HV" --config-dir "$CONF_ALLOW" --env OCI_ONLOAD=all \
  --jq ".hooks.prestart[0].args |= (.[0:-2] + [\"--log-file\", \"$T/logs/allow.log\"] + .[-2:])" \
  -- "$(onload_probe "$IMAGE_LIBDIR")"
run_container
assert_eq "[enforce false] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all "enforce false" "$HV" "$IMAGE_LIBDIR" hook
assert_contains "[enforce false] the hook logged the mismatch as a warning" \
  "$(grep warn "$T/logs/allow.log")" \
  "libonload.so is \"$LIB_V\" ($HV/usr/lib64/libonload.so) but the loaded onload module is \"$MOD_V\" ($HV/sys/module/onload/version); allowed (\"enforce\" is false)"

# The shim: the warning goes to the runtime's log, not to stderr (under
# containerd that is the container's), and the container is created.
make_bundle shimallow --no-hook --env OCI_ONLOAD=all -- 'true'
IT_IDS+=("$CID")
"$T/bin/oci-decorator-runtime" --ocid-config "$T/runtime.json" --ocid-host-root "$HV" \
  --ocid-config-dir "$CONF_ALLOW" --root "$RUNC_ROOT" --log "$T/logs/runc-$CID.json" \
  --log-format json create --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
RC=$?
assert_eq "[shim, enforce false] create exits 0" 0 "$RC"
assert_eq "[shim, enforce false] nothing on stderr" "" "$(cat "$B/err")"
assert_contains "[shim, enforce false] the runtime's log has the warning" \
  "$(jq -r 'select(.level == "warning") | .msg' "$T/logs/runc-$CID.json")" \
  "oci-decorator: container $CID: inventory $CONF_ALLOW/onload.json: version lock: libonload.so is \"$LIB_V\""
check "[shim, enforce false] config.json now mounts libonload.so" \
  jq -e --arg d "$IMAGE_LIBDIR/libonload.so" '.mounts | map(.destination) | index($d)' "$B/config.json"
runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1

# --- 6. unknown: sim-onload.sh alone makes no sys/module/onload (lib.sh adds it)
echo "# --- 6. no module version"
rm -r "$HOST_ROOT/sys/module/onload"
make_bundle unknown --env OCI_ONLOAD=all -- "$(onload_probe "$IMAGE_LIBDIR")"
plan=$("$OCID_BIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" plan --bundle "$B" 2>/dev/null)
assert_contains "[unknown] plan warns" "$(jq -r '.warnings[]' <<<"$plan")" \
  "the onload module's version is unknown ($HOST_ROOT/sys/module/onload/version does not exist: module not loaded?); not checked"
run_container
assert_eq "[unknown] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all "unknown" "$HOST_ROOT" "$IMAGE_LIBDIR" hook

it_finish
