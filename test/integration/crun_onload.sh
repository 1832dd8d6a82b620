#!/bin/bash
# Real crun 1.8 (pure cgroup v1 in a private mount namespace, see runtimes.md)
# with the hook registered in config.json, against the SIMULATED Onload install:
#   1. OCI_ONLOAD=all, absolute root.path: files, read-only mounts, devices
#      openable (ENXIO, not EPERM), libonload preloaded into dyn-hello;
#   2. OCI_ONLOAD=zf: only TCPDirect; 3. not asked: nothing, still runs;
#   4. relative root.path (crun passes it as written in the state's "root"),
#      crun started from / so only the bundle can anchor it;
#   5. detached: per-container state dir and device rules while it runs,
#      poststop (crun delete) removes the state dir entry;
#   6. a missing required host file fails the container with one clear line.
# crun discards hooks' stderr unless run.oci.hooks.stderr is set: the helpers
# set it, so the hook's own line can be checked.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
crun_setup

# --- 1. OCI_ONLOAD=all, absolute root.path
make_bundle all --env OCI_ONLOAD=all -- "$(onload_probe)"
before=$(tree_snapshot "$ROOTFS")
ROOTFS_ALL=$ROOTFS
CID_ALL=$CID
run_crun_container
echo "# --- all, absolute root.path"
assert_eq "[all] crun run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[all] the container ran under crun on v1 (devices cgroup in /proc/self/cgroup)" \
  "$(cat "$B/out")" "DONE"
expect_onload all "all"
after=$(tree_snapshot "$ROOTFS_ALL")
assert_eq "[all] image dir: no file removed or changed" "" "$(comm -23 <(echo "$before") <(echo "$after"))"
assert_eq "[all] image dir: only empty mountpoints added" "" \
  "$(comm -13 <(echo "$before") <(echo "$after") | awk -F'\t' '!($2 == "d" || ($2 == "f" && $5 == 0))' | sed '/^$/d')"
check_not "[all] poststop (crun run ends with delete) removed $STATE_DIR/$CID_ALL" test -e "$STATE_DIR/$CID_ALL"
assert_not_contains "[all] the hook reported no error at any stage" "$HOOKERR" "oci-decorator: error"
assert_host_mounts_unchanged "[all]"

# --- 2. OCI_ONLOAD=zf
make_bundle zf --env OCI_ONLOAD=zf -- "$(onload_probe)"
run_crun_container
echo "# --- zf"
assert_eq "[zf] crun run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload zf "zf"

# --- 3. not asked (and a look-alike variable)
make_bundle none --env DISABLE_OCI_ONLOAD=1 -- "$(onload_probe)"
run_crun_container
echo "# --- not asked"
assert_eq "[none] crun run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload none "none"
check_not "[none] no state dir entry for a container that did not ask" test -e "$STATE_DIR/$CID"
assert_eq "[none] the hook printed nothing" "" "$HOOKERR"

# --- 4. relative root.path; an extra first prestart hook records crun's state.
make_bundle rel --rootfs rootfs --env OCI_ONLOAD=all \
  --jq '.hooks.prestart = [{path: "/bin/sh", args: ["sh", "-c", "cat > \"$0\"", "'"$T"'/rel-state.json"]}] + .hooks.prestart' \
  -- "$(onload_probe)"
cp -a "$BASE_ROOTFS" "$B/rootfs"
run_crun_container
echo "# --- relative root.path"
assert_eq "[relative root] crun's state carries root as written" "rootfs" "$(jq -r .root "$T/rel-state.json" 2>&1)"
assert_eq "[relative root] crun's state status" "created" "$(jq -r .status "$T/rel-state.json" 2>&1)"
assert_eq "[relative root] crun run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all "relative root"

# --- 5. detached: state dir and device rules while running; crun delete runs poststop.
make_bundle det --env OCI_ONLOAD=onload -- 'sleep 60'
IT_CRUN_IDS+=("$CID")
crun_capture_hook_stderr
(cd / && in_crun crun --root "$CRUN_ROOT" run -d --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err")
RC=$?
echo "# --- detached"
assert_eq "[detached] crun run -d exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || { OUT=$(cat "$B/out"); ERR=$(cat "$B/err" "$B/hook.err" 2>/dev/null); dump_run; }
check "[detached] state dir entry $STATE_DIR/$CID exists while it runs" test -d "$STATE_DIR/$CID"
pid=$(in_crun crun --root "$CRUN_ROOT" state "$CID" 2>/dev/null | jq -r .pid)
cgpath=$(awk -F: '$2 == "devices" {print $3}' "/proc/$pid/cgroup" 2>/dev/null)
devlist=$(cat "/sys/fs/cgroup/devices$cgpath/devices.list" 2>&1)
for n in onload onload_epoll sfc_char; do
  assert_contains "[detached] devices.list allows c $(devnum "$HOST_ROOT/dev/$n") rw ($n)" \
    $'\n'"$devlist"$'\n' $'\n'"c $(devnum "$HOST_ROOT/dev/$n") rw"$'\n'
done
in_crun crun --root "$CRUN_ROOT" kill "$CID" KILL >/dev/null 2>&1
for _ in $(seq 1 50); do
  [[ $(in_crun crun --root "$CRUN_ROOT" state "$CID" 2>/dev/null | jq -r .status) == stopped ]] && break
  sleep 0.1
done
in_crun crun --root "$CRUN_ROOT" delete "$CID" >"$B/delout" 2>&1
assert_eq "[detached] crun delete exits 0" 0 "$?"
check_not "[detached] poststop removed $STATE_DIR/$CID" test -e "$STATE_DIR/$CID"
assert_not_contains "[detached] poststop reported no error" "$(cat "$B/hook.err" 2>/dev/null)" "oci-decorator: error"
check_not "[detached] the container's devices cgroup is gone" test -d "/sys/fs/cgroup/devices$cgpath"

# --- 6. a required host file is missing: the container fails with one clear line.
HOST_MISS=$T/host-miss
make_sim "$HOST_MISS" lib64
rm -f "$HOST_MISS/usr/bin/onload"
make_bundle miss --host-root "$HOST_MISS" --env OCI_ONLOAD=all -- 'echo SHOULD-NOT-RUN'
run_crun_container
echo "# --- missing required file"
check_not "[missing] crun run fails" test "$RC" -eq 0
assert_not_contains "[missing] the container process never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[missing] crun names the failing hook" "$(cat "$B/err")" "error executing hook"
assert_contains "[missing] the hook's line names the entry and the inventory" "$HOOKERR" \
  "oci-decorator: error: container $CID: refused: required binaries entry of feature \"onload\" not found on the host (inventory $CONF_DIR/onload.json): "
assert_match "[missing] the hook's line ends with the missing host paths" "$HOOKERR" \
  "\): ($HOST_MISS)?/usr/bin/onload or ($HOST_MISS)?/opt/onload/usr/bin/onload\$"
assert_eq "[missing] exactly one line from the hook" 1 "$(grep -c . <<<"$HOOKERR")"
check_not "[missing] no state dir entry left" test -e "$STATE_DIR/$CID"
assert_host_mounts_unchanged "[missing]"

assert_state_dir_empty "at the end"
it_finish
