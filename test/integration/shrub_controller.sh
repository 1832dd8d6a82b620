#!/bin/bash
# Onload's shrub controller (X3/X4 queue sharing) end to end, against the
# SIMULATED Onload install with a shrub controller (sim_shrub) and the
# stand-in controller (test/standins/shrub_standin.c, OCID_SHRUB_STANDIN)
# listening at <host-root>/run/onload/controller-0/shrub_config. Containers
# run the stand-in's client (`request --data`, what libonload does) on
# /run/onload/controller-0/shrub_config.
#   1. no controller (plain install): no /run/onload mount, nothing created
#      on the host, the container runs as before;
#   2. hook (runc): the controller appears after the container started: the
#      hook created <host-root>/run/onload (root 0755); inside it is a
#      read-only mount, writes fail; connect() through it reaches the
#      controller started later, and its data socket;
#   3. a container started after the controller connects at once;
#   4. shrub_controller_path naming an absent file: no mount, nothing created;
#   5. client group (0660): uid 1000 without the group is told by `plan` and
#      the hook's log (once) and refused (EACCES); with the group it
#      connects; the default mode needs no group;
#   6. runtime shim (as docker and containerd invoke it), 0660, a host
#      without the directory: create makes it (root 0755), config.json gains
#      the read-only mount and additionalGids [4242]; uid 1000 connects; a
#      second create changes nothing;
#   7. fail closed: <host-root>/run writable by all, not sticky: a container
#      that asks is refused with the writer's line, nothing created; one
#      that does not ask runs;
#   8. podman with the hook from hooks.d: the container connects;
#   9. podman with a CDI spec (no hook), a host without the directory:
#      default mode: cdi generate creates it (root 0755); the spec keeps the
#      plain install's cdiVersion and mounts it; the container connects;
#      mode 0660: cdiVersion 0.7.0 with additionalGids [4242], which Debian
#      12's podman 4.3 refuses (the documented limit); --cdi-version 0.5.0
#      leaves the group out, and podman --group-add 4242 connects.
# 8 and 9 are left out under the legacy-kernel wrapper (podman runs its
# hooks itself). The host mount table is checked after each part.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

STANDIN=${OCID_SHRUB_STANDIN:-}
[[ -n $STANDIN && -x $STANDIN ]] || die "OCID_SHRUB_STANDIN=$STANDIN is not executable (built by test/integration)"
# Static: the client runs in every container from the image.
install -m 0755 "$STANDIN" "$BASE_ROOTFS/usr/bin/shrub_standin"
SOCK=/run/onload/controller-0/shrub_config
REQ="shrub_standin request --data $SOCK"

# shrub_host NAME [PATH_VALUE] [CLIENT_GID] [MODE_DEC]: a copy of the plain
# simulated install with sim_shrub's module parameters and program. Sets SH.
shrub_host() {
  SH=$T/$1
  cp -a "$HOST_ROOT" "$SH" || die "cannot copy $HOST_ROOT"
  sim_shrub "$SH" "${@:2}"
}

# standin_start HOSTROOT [serve options...]: the stand-in controller 0 on the
# host, until READY. standin_stop: SIGTERM, wait (it unlinks its sockets).
# STANDIN_OUT: its output (standin_out prints it).
STANDIN_PID=
STANDIN_OUT=
standin_start() {
  local hr=$1; shift
  STANDIN_OUT=$T/logs/standin-$RANDOM.out
  "$STANDIN" serve "$hr/run/onload" 0 "$@" >"$STANDIN_OUT" 2>&1 &
  STANDIN_PID=$!
  for _ in $(seq 1 100); do grep -q '^READY' "$STANDIN_OUT" && return 0; sleep 0.05; done
  die "the stand-in controller did not get ready: $(cat "$STANDIN_OUT")"
}
standin_stop() {
  [[ -n $STANDIN_PID ]] || return 0
  kill -TERM "$STANDIN_PID" 2>/dev/null
  wait "$STANDIN_PID" 2>/dev/null
  STANDIN_PID=
  return 0
}
it_add_cleanup standin_stop
standin_out() { cat "$STANDIN_OUT"; }

# plan_of HOSTROOT: `oci-decorator plan` of the bundle $B against HOSTROOT.
plan_of() { "$OCID_BIN" --host-root "$1" --config-dir "$CONF_DIR" plan --bundle "$B" 2>/dev/null; }
# onload_mounts: the plan's mounts at /run/onload (JSON lines) from stdin.
onload_mounts() { jq -c '.mounts[] | select(.target == "/run/onload")'; }
# hook_log_jq FILE: a jq filter adding --log-file FILE to the bundle's hooks.
hook_log_jq() {
  printf '.hooks |= with_entries(.value |= map(.args |= (.[:-2] + ["--log-file", "%s"] + .[-2:])))' "$1"
}
# user_jq [GIDS_JSON]: the process runs as uid/gid 1000 (with additionalGids).
user_jq() { printf '.process.user = ({uid: 1000, gid: 1000} + (if %s == null then {} else {additionalGids: %s} end))' "${1:-null}" "${1:-null}"; }

# --- 1. no controller ------------------------------------------------------------------
echo "# --- 1. plain install (no shrub controller)"
make_bundle none --env OCI_ONLOAD=all -- "$REQ; echo DONE"
plan=$(plan_of "$HOST_ROOT")
assert_eq "[none] the plan has no /run/onload mount" "" "$(onload_mounts <<<"$plan")"
assert_contains "[none] the plan says why it was skipped" "$(jq -r '.skipped[]' <<<"$plan")" \
  "$HOST_ROOT/run/onload (condition shrub_controller not met)"
run_container
assert_eq "[none] the container runs (runc exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[none] there is no controller socket inside" "$OUT" "ERROR connect: ENOENT"
assert_contains "[none] the container ran to the end" "$OUT" "DONE"
check_not "[none] nothing created under <host-root>/run" test -e "$HOST_ROOT/run"

# --- 2. hook: the controller appears after the container started -----------------------
echo "# --- 2. hook, controller started after the container"
shrub_host host-shrub
H=$SH
check_not "[later] <host-root>/run/onload is absent before the container" test -e "$H/run/onload"
make_bundle later --host-root "$H" --env OCI_ONLOAD=all -- 'sleep 60'
plan=$(plan_of "$H")
assert_eq "[later] plan: /run/onload ro,nosuid,nodev, to be created" \
  '{"source":"/run/onload","flags":["bind","ro","nosuid","nodev","private"],"create":true}' \
  "$(onload_mounts <<<"$plan" | jq -c '{source, flags, create}' | sort -u)"
IT_IDS+=("$CID")
runc --root "$RUNC_ROOT" run -d --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
assert_eq "[later] runc run -d succeeds" 0 "$?"
check "[later] the container is running" wait_running "$CID"
LATER=$CID
assert_eq "[later] the hook created <host-root>/run/onload: a directory, root, 0755" "directory 0:0 755" \
  "$(stat -c '%F %u:%g %a' "$H/run/onload" 2>&1)"
inside() { runc --root "$RUNC_ROOT" exec "$LATER" sh -c "$1" 2>&1; }
opts=$(inside "awk '\$5 == \"/run/onload\" {print \$6}' /proc/self/mountinfo")
assert_match "[later] /run/onload is a read-only mount inside (${opts:-not a mount})" "$opts" '^ro(,|$)'
assert_eq "[later] /run/onload is empty inside" "" "$(inside 'ls -A /run/onload')"
assert_contains "[later] writing into /run/onload fails (EROFS)" "$(inside 'touch /run/onload/x')" \
  "Read-only file system"
check_not "[later] nothing was written on the host" test -e "$H/run/onload/x"
assert_contains "[later] before the controller: ENOENT" "$(inside "$REQ")" "ERROR connect: ENOENT"
standin_start "$H"
got=$(inside "$REQ")
assert_contains "[later] the controller started later answers from inside: REPLY 1" "$got" "REPLY 1"
assert_contains "[later] ... and its data socket shrub-1: DATA token=1" "$got" "DATA token=1"
assert_contains "[later] the stand-in got libonload's request (version 8, CREATE_HWPORT)" "$(standin_out)" \
  "REQUEST socket=shrub_config version=8 command=1 buffers=32 peer_uid=0"

# --- 3. a container started after the controller ---------------------------------------
echo "# --- 3. a container started after the controller"
make_bundle after --host-root "$H" --env OCI_ONLOAD=all -- "$REQ; echo DONE"
run_container
assert_eq "[after] the container runs (runc exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[after] it connects at once: REPLY 1" "$OUT" "REPLY 1"
assert_contains "[after] ... DATA token=1" "$OUT" "DATA token=1"
runc --root "$RUNC_ROOT" kill "$LATER" KILL >/dev/null 2>&1
for _ in $(seq 1 50); do
  [[ $(runc --root "$RUNC_ROOT" state "$LATER" 2>/dev/null | jq -r .status) == stopped ]] && break
  sleep 0.1
done
check "[later] runc delete succeeds (poststop)" runc --root "$RUNC_ROOT" delete "$LATER"
assert_state_dir_empty "[later] after both containers"
assert_host_mounts_unchanged "[later] after both containers"

# --- 4. a controller path pointing nowhere ---------------------------------------------
echo "# --- 4. shrub_controller_path names an absent file"
shrub_host host-nowhere /opt/onload/sbin/shrub_controller
make_bundle nowhere --host-root "$SH" --env OCI_ONLOAD=all -- "$REQ; echo DONE"
plan=$(plan_of "$SH")
assert_eq "[nowhere] the plan has no /run/onload mount" "" "$(onload_mounts <<<"$plan")"
run_container
assert_eq "[nowhere] the container runs (runc exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[nowhere] no controller socket inside" "$OUT" "ERROR connect: ENOENT"
check_not "[nowhere] nothing created under <host-root>/run" test -e "$SH/run"

# --- 5. the client group (hook) --------------------------------------------------------
echo "# --- 5. client group 4242, client mode 0660 (sysfs: 432)"
standin_stop
sim_shrub "$H" "" 4242 432
standin_start "$H" --uid 65534 --gid 65534 --client-gid 4242 --client-mode 660
make_bundle nogroup --host-root "$H" --env OCI_ONLOAD=all \
  --jq "$(user_jq) | $(hook_log_jq "$T/logs/nogroup.log")" -- "$REQ; echo DONE"
plan=$(plan_of "$H")
assert_contains "[0660, no group] plan warns: --group-add 4242" "$(jq -r '.warnings[]?' <<<"$plan")" \
  "start it with --group-add 4242"
assert_eq "[0660, no group] plan: group 4242 mode 0660, required, not present" '{"gid":4242,"mode":"0660","required":true,"present":false}' \
  "$(jq -c '.groups[] | {gid, mode, required, present}' <<<"$plan" | sort -u)"
run_container
assert_eq "[0660, no group] the container runs (runc exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[0660, no group] uid 1000 without the group: EACCES" "$OUT" "ERROR connect: EACCES"
assert_eq "[0660, no group] the hook's log has the --group-add line once" 1 \
  "$(grep -c -- 'start it with --group-add 4242' "$T/logs/nogroup.log" 2>/dev/null)"

make_bundle group --host-root "$H" --env OCI_ONLOAD=all \
  --jq "$(user_jq '[4242]') | $(hook_log_jq "$T/logs/group.log")" -- "$REQ; echo DONE"
plan=$(plan_of "$H")
assert_not_contains "[0660, group] plan: no --group-add warning" "$(jq -r '.warnings[]?' <<<"$plan")" "--group-add"
assert_eq "[0660, group] plan: the group is present" true "$(jq -c '[.groups[].present] | all' <<<"$plan")"
run_container
assert_eq "[0660, group] the container runs (runc exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[0660, group] uid 1000 with group 4242 connects: REPLY" "$OUT" "REPLY 1"
assert_contains "[0660, group] ... DATA token=1" "$OUT" "DATA token=1"
assert_eq "[0660, group] the hook's log has no --group-add line" 0 \
  "$(grep -c -- '--group-add' "$T/logs/group.log" 2>/dev/null)"
assert_contains "[0660, group] the stand-in saw uid 1000" "$(standin_out)" "peer_uid=1000"

echo "# --- 5. client group 4242, default client mode (sysfs: 0)"
standin_stop
sim_shrub "$H" "" 4242 0
standin_start "$H" --uid 65534 --gid 65534 --client-gid 4242
make_bundle defmode --host-root "$H" --env OCI_ONLOAD=all \
  --jq "$(user_jq) | $(hook_log_jq "$T/logs/defmode.log")" -- "$REQ; echo DONE"
plan=$(plan_of "$H")
assert_not_contains "[default mode] plan: no --group-add warning" "$(jq -r '.warnings[]?' <<<"$plan")" "--group-add"
assert_eq "[default mode] plan: group 4242 mode 0666, not required" '{"gid":4242,"mode":"0666","required":false}' \
  "$(jq -c '.groups[]? | {gid, mode, required}' <<<"$plan" | sort -u)"
run_container
assert_eq "[default mode] the container runs (runc exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[default mode] uid 1000 without the group connects: REPLY" "$OUT" "REPLY 1"
assert_eq "[default mode] the hook's log has no --group-add line" 0 \
  "$(grep -c -- '--group-add' "$T/logs/defmode.log" 2>/dev/null)"
standin_stop

# --- 6. the runtime shim ---------------------------------------------------------------
# Invoked as docker and containerd invoke a runtime (shim_runc.sh): the shim
# edits config.json on create; runc then mounts what it says.
echo "# --- 6. runtime shim, client group 4242 mode 0660, a fresh host"
shrub_host host-shim "" 4242 432
HS=$SH
mkdir -p "$T/bin"
ln -s "$OCID_BIN" "$T/bin/oci-decorator-runtime"
echo "{\"runtime\": \"$(command -v runc)\", \"log_file\": \"$T/logs/shim.log\"}" >"$T/runtime.json"
shim() {
  "$T/bin/oci-decorator-runtime" --ocid-config "$T/runtime.json" --ocid-host-root "$HS" \
    --ocid-config-dir "$CONF_DIR" --root "$RUNC_ROOT" --log "$T/logs/runc-$CID.json" --log-format json "$@"
}
make_bundle shim --no-hook --env OCI_ONLOAD=all --jq "$(user_jq)" -- "id -G; $REQ; echo DONE"
CFG=$B/config.json
IT_IDS+=("$CID")
shim create --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
assert_eq "[shim] create exits 0" 0 "$?"
assert_eq "[shim] the shim created <host-root>/run/onload: a directory, root, 0755" "directory 0:0 755" \
  "$(stat -c '%F %u:%g %a' "$HS/run/onload" 2>&1)"
assert_eq "[shim] config.json mounts it read-only" \
  "{\"destination\":\"/run/onload\",\"type\":\"bind\",\"source\":\"$HS/run/onload\",\"options\":[\"bind\",\"ro\",\"nosuid\",\"nodev\"]}" \
  "$(jq -c '.mounts[] | select(.destination == "/run/onload")' "$CFG")"
assert_eq "[shim] config.json: process.user.additionalGids [4242]" "[4242]" "$(jq -c .process.user.additionalGids "$CFG")"
standin_start "$HS" --uid 65534 --gid 65534 --client-gid 4242 --client-mode 660
shim start "$CID" || nok "[shim] shim start $CID"
for _ in $(seq 1 100); do
  [[ $(runc --root "$RUNC_ROOT" state "$CID" 2>/dev/null | jq -r .status) == stopped ]] && break
  sleep 0.1
done
OUT=$(cat "$B/out")
assert_match "[shim] the container's process has group 4242" "$(head -1 <<<"$OUT")" '(^| )4242( |$)'
assert_contains "[shim] uid 1000 connects: REPLY 1" "$OUT" "REPLY 1"
assert_contains "[shim] ... DATA token=1" "$OUT" "DATA token=1"
assert_contains "[shim] the stand-in saw uid 1000" "$(standin_out)" "peer_uid=1000"
check "[shim] shim delete" shim delete "$CID"
before=$(jq -S . "$CFG")
CID=$CID-again
IT_IDS+=("$CID")
shim create --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
assert_eq "[shim] a second create from the edited bundle exits 0" 0 "$?"
assert_eq "[shim] ... and changes nothing (one mount, one 4242)" "$before" "$(jq -S . "$CFG")"
check "[shim] delete the second" shim delete -f "$CID"
standin_stop
assert_host_mounts_unchanged "[shim] after the containers"

# --- 7. fail closed --------------------------------------------------------------------
echo "# --- 7. <host-root>/run writable by all, not sticky"
shrub_host host-open
mkdir "$SH/run" && chmod 0777 "$SH/run"
make_bundle open --host-root "$SH" --env OCI_ONLOAD=all -- 'echo SHOULD-NOT-RUN'
run_container
check_not "[open /run] the asking container is refused" test "$RC" -eq 0
assert_not_contains "[open /run] its process never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[open /run] runc shows the writer's line" "$ERR" \
  "refused: not creating directory /run/onload: directory /run is writable by others and not sticky (owner 0, mode 0777)"
check_not "[open /run] nothing created" test -e "$SH/run/onload"
make_bundle open-notasked --host-root "$SH" -- 'echo RAN'
run_container
assert_eq "[open /run] a container that did not ask runs" "0 RAN" "$RC $OUT"
assert_state_dir_empty "[open /run] after both"

# --- 8. podman hooks.d -----------------------------------------------------------------
# podman runs the hooks.d entries itself (no OCID_HOOK_WRAPPER): nothing of
# 8 and 9 differs under the legacy-kernel wrapper, so that run leaves them out.
PODMAN=0
if [[ -n ${OCID_HOOK_WRAPPER:-} ]]; then
  info "podman sections left out under OCID_HOOK_WRAPPER (podman runs its hooks unwrapped)"
elif ! command -v podman >/dev/null 2>&1; then
  nok "podman is not installed (apt-get install podman; see test/integration/PACKAGES)"
else
  PODMAN=1
fi
if ((PODMAN)); then
  echo "# --- 8. podman, hooks.d"
  podman_setup
  sim_shrub "$H"
  standin_start "$H"
  HOST_ROOT=$H podman_hooks_dir "$T/hooks.d"
  run_podman runc --hooks-dir "$T/hooks.d" -- -e OCI_ONLOAD=all -- "$REQ; echo DONE"
  assert_eq "[podman hooks.d] podman run exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  assert_contains "[podman hooks.d] the container connects: REPLY 1" "$OUT" "REPLY 1"
  assert_contains "[podman hooks.d] ... DATA token=1" "$OUT" "DATA token=1"
  assert_state_dir_empty "[podman hooks.d] after the container"
  assert_host_mounts_unchanged "[podman hooks.d] after the container"
fi

# --- 9. podman, CDI --------------------------------------------------------------------
if ((PODMAN)); then
  echo "# --- 9. podman, CDI (no hook), default client mode"
  RUN_TAG=$(basename "$T" | tr -dc '[:alnum:]' | tr '[:upper:]' '[:lower:]')
  KIND="oci-decorator.test/shrub-$RUN_TAG"
  SPEC=/etc/cdi/oci-decorator-shrub-$RUN_TAG.json
  it_track_new_dirs /etc/cdi
  cdi_cleanup() { rm -f /etc/cdi/oci-decorator-shrub-"$RUN_TAG"*; }
  it_add_cleanup cdi_cleanup
  mkdir -p "$T/empty-hooks.d" "$T/conf-cdi"
  jq --arg k "$KIND" '.cdi_kind = $k | del(.profiles, .profile_dir)' "$SRC/config/onload.json" \
    >"$T/conf-cdi/onload.json" || die "jq edit of the inventory failed"
  cdi_gen() { "$OCID_BIN" --host-root "$1" --config-dir "$T/conf-cdi" cdi generate "${@:2}"; }
  # cdi_edits: each device's /run/onload mount and additionalGids, from the spec $SPEC.
  cdi_edits() {
    jq -c '[.devices[] | .containerEdits | {m: [.mounts[]? | select(.containerPath == "/run/onload")
            | "\(.hostPath) \(.options | join(","))"], g: .additionalGids}] | unique' "$SPEC"
  }
  cdi_gen "$HOST_ROOT" -o "$T/plain-spec.json" 2>/dev/null || nok "cdi generate on the plain install failed"
  check_not "[cdi] the plain install: nothing created under <host-root>/run" test -e "$HOST_ROOT/run"
  # A host without the directory: the engine binds a CDI mount's source as
  # it finds it, so cdi generate makes it.
  standin_stop
  shrub_host host-cdi
  H=$SH
  cdi_gen "$H" -o "$SPEC" 2>"$T/logs/cdi-default.err"
  assert_eq "[cdi] cdi generate exits 0" 0 "$?"
  assert_contains "[cdi] it says it created /run/onload" "$(cat "$T/logs/cdi-default.err")" \
    "created /run/onload (root, 0755)"
  assert_eq "[cdi] <host-root>/run/onload: a directory, root, 0755" "directory 0:0 755" \
    "$(stat -c '%F %u:%g %a' "$H/run/onload" 2>&1)"
  assert_not_contains "[cdi] no cdiVersion warning" "$(cat "$T/logs/cdi-default.err")" "cdiVersion"
  standin_start "$H"
  assert_eq "[cdi] cdiVersion is the plain install's (the mount needs no newer one)" \
    "$(jq -r .cdiVersion "$T/plain-spec.json")" "$(jq -r .cdiVersion "$SPEC")"
  assert_eq "[cdi] every device mounts $H/run/onload ro,nosuid,nodev, no additionalGids" \
    "[{\"m\":[\"$H/run/onload ro,nosuid,nodev,bind\"],\"g\":null}]" "$(cdi_edits)"
  run_podman runc --hooks-dir "$T/empty-hooks.d" -- --device "$KIND=all" -- "$REQ; echo DONE"
  assert_eq "[cdi] podman --device $KIND=all exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  assert_contains "[cdi] the container connects: REPLY 1" "$OUT" "REPLY 1"
  assert_contains "[cdi] ... DATA token=1" "$OUT" "DATA token=1"

  echo "# --- 9. podman, CDI, client group 4242 mode 0660"
  standin_stop
  sim_shrub "$H" "" 4242 432
  standin_start "$H" --uid 65534 --gid 65534 --client-gid 4242 --client-mode 660
  cdi_gen "$H" -o "$SPEC" 2>"$T/logs/cdi-0660.err"
  assert_eq "[cdi 0660] cdi generate exits 0" 0 "$?"
  assert_contains "[cdi 0660] it warns that the spec needs 0.7.0, naming the way out" \
    "$(cat "$T/logs/cdi-0660.err")" "needs cdiVersion 0.7.0 (additionalGids)"
  assert_contains "[cdi 0660] ... --cdi-version 0.5.0" "$(cat "$T/logs/cdi-0660.err")" \
    "--cdi-version 0.5.0 leaves the group out"
  assert_eq "[cdi 0660] cdiVersion 0.7.0 (additionalGids)" 0.7.0 "$(jq -r .cdiVersion "$SPEC")"
  assert_eq "[cdi 0660] every device has the mount and additionalGids [4242]" \
    "[{\"m\":[\"$H/run/onload ro,nosuid,nodev,bind\"],\"g\":[4242]}]" "$(cdi_edits)"
  # Debian 12's podman 4.3 vendors CDI 0.5: it refuses a 0.7.0 spec whole.
  # This records the limit the docs describe (--cdi-version, --group-add).
  # Its error names only the device; the reason (its spec parser does not
  # know the field, before it looks at the version) is in its debug log.
  run_podman runc --log-level debug --hooks-dir "$T/empty-hooks.d" -- --user 1000:1000 --device "$KIND=all" -- "$REQ; echo DONE"
  if [[ $RC -eq 0 ]]; then
    info "this podman accepts cdiVersion 0.7.0 (CDI >= 0.7): the group comes from the spec"
    assert_contains "[cdi 0660] uid 1000 connects with the spec's group" "$OUT" "REPLY 1"
  else
    assert_contains "[cdi 0660] podman refuses the device of the 0.7.0 spec" "$ERR" \
      "Error: setting up CDI devices: unresolvable CDI devices $KIND=all"
    assert_contains "[cdi 0660] ... because its CDI library does not know additionalGids" "$ERR" \
      'unknown field \"additionalGids\"'
    assert_contains "[cdi 0660] ... in this spec" "$ERR" "$SPEC"
    assert_not_contains "[cdi 0660] the container never ran" "$OUT" "DONE"
  fi

  echo "# --- 9. podman, CDI, 0660, cdi generate --cdi-version 0.5.0"
  cdi_gen "$H" --cdi-version 0.5.0 -o "$SPEC" 2>"$T/logs/cdi-050.err"
  assert_eq "[cdi 0.5.0] cdi generate exits 0" 0 "$?"
  assert_eq "[cdi 0.5.0] cdiVersion 0.5.0, the mount, no additionalGids" \
    "0.5.0 [{\"m\":[\"$H/run/onload ro,nosuid,nodev,bind\"],\"g\":null}]" \
    "$(jq -r .cdiVersion "$SPEC") $(cdi_edits)"
  assert_contains "[cdi 0.5.0] it warns that group 4242 is left out" "$(cat "$T/logs/cdi-050.err")" \
    "group 4242 left out of the spec; start containers with --group-add 4242"
  run_podman runc --hooks-dir "$T/empty-hooks.d" -- --user 1000:1000 --device "$KIND=all" -- "$REQ; echo DONE"
  assert_eq "[cdi 0.5.0] podman accepts the spec" 0 "$RC"
  assert_contains "[cdi 0.5.0] uid 1000 without the group: EACCES" "$OUT" "ERROR connect: EACCES"
  run_podman runc --hooks-dir "$T/empty-hooks.d" -- --user 1000:1000 --group-add 4242 --device "$KIND=all" -- "$REQ; echo DONE"
  assert_eq "[cdi 0.5.0] podman --group-add 4242 exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  assert_contains "[cdi 0.5.0] uid 1000 with --group-add 4242 connects: REPLY 1" "$OUT" "REPLY 1"
  assert_contains "[cdi 0.5.0] ... DATA token=1" "$OUT" "DATA token=1"
  standin_stop
  rm -f "$SPEC"
  assert_host_mounts_unchanged "[cdi] after the containers"
fi

it_finish
