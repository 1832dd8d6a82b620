#!/bin/bash
# Real runc, detached container: the per-container state dir exists while the
# container lives and poststop removes it; the container's v1 devices cgroup
# holds the hook's rules; stages other than prestart/createRuntime/poststop are
# no-ops; createRuntime works as a stage too.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

STATE2=$T/state2
mkdir -m 0700 "$STATE2"

# --- detached container with OCI_ONLOAD=all
make_bundle life --state-dir "$STATE2" --env OCI_ONLOAD=all -- 'sleep 60'
IT_IDS+=("$CID")
runc --root "$RUNC_ROOT" run -d --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
RC=$?
echo "# --- detached container, OCI_ONLOAD=all"
assert_eq "runc run -d succeeds" 0 "$RC"
[[ $RC -eq 0 ]] || sed 's/^/#      err: /' "$B/err"
check "container is running" wait_running "$CID"
check "state dir $STATE2/$CID exists while the container runs" test -d "$STATE2/$CID"
info "state dir content: $(ls -la "$STATE2/$CID" 2>&1 | tail -n +2 | awk '{print $1, $3, $NF}' | tr '\n' ',')"
if [[ -d $STATE2/$CID ]]; then
  assert_eq "state dir is root-owned mode 700" "0:0 700" "$(stat -c '%u:%g %a' "$STATE2/$CID")"
fi

pid=$(runc --root "$RUNC_ROOT" state "$CID" | jq -r .pid)
cgpath=$(awk -F: '$2 == "devices" {print $3}' "/proc/$pid/cgroup")
devlist=$(cat "/sys/fs/cgroup/devices$cgpath/devices.list" 2>&1)
for n in onload onload_epoll sfc_char; do
  assert_contains "devices.list of the container has c $(devnum "$HOST_ROOT/dev/$n") rw ($n)" \
    $'\n'"$devlist"$'\n' $'\n'"c $(devnum "$HOST_ROOT/dev/$n") rw"$'\n'
done
assert_not_contains "devices.list does not allow everything" "$devlist" "a *:* rwm"
# The host's own copy of the sim devices is not what the container has: check
# from inside that the mount is the node (exec into the running container).
inside=$(runc --root "$RUNC_ROOT" exec "$CID" sh -c 'cat /dev/onload 2>&1; grep -c " /dev/onload " /proc/mounts' 2>&1)
assert_contains "runc exec: /dev/onload is allowed (ENXIO/ENODEV)" "$inside" "No such device"

runc --root "$RUNC_ROOT" kill "$CID" KILL >/dev/null 2>&1
for i in $(seq 1 50); do
  [[ $(runc --root "$RUNC_ROOT" state "$CID" 2>/dev/null | jq -r .status) == stopped ]] && break
  sleep 0.1
done
runc --root "$RUNC_ROOT" delete "$CID" 2>"$B/delerr"
assert_eq "runc delete succeeds (poststop hook ok)" 0 "$?"
check_not "poststop removed $STATE2/$CID" test -e "$STATE2/$CID"
check_not "container's devices cgroup is gone" test -d "/sys/fs/cgroup/devices$cgpath"

# --- poststop directly: removes the dir, missing is fine, no stdin pid needed
mkdir -m 0700 "$STATE2/manual-id"
echo "SIMULATED generated preload" >"$STATE2/manual-id/ld.so.preload"
state='{"ociVersion":"1.0.2","id":"manual-id","status":"stopped","bundle":"'"$T"'/nowhere"}'
out=$("$OCID_BIN" --state-dir "$STATE2" hook poststop <<<"$state" 2>&1)
assert_eq "hook poststop exits 0" 0 "$?"
check_not "hook poststop removed <state-dir>/manual-id" test -e "$STATE2/manual-id"
out=$("$OCID_BIN" --state-dir "$STATE2" hook poststop <<<"$state" 2>&1)
assert_eq "hook poststop on a missing dir exits 0" 0 "$?"
assert_eq "hook poststop on a missing dir prints nothing" "" "$out"
# An id that tries to escape the state dir must not remove anything outside it.
mkdir -p "$T/victim"; echo keep >"$T/victim/keep"
state='{"ociVersion":"1.0.2","id":"../victim","status":"stopped","bundle":"'"$T"'/nowhere"}'
"$OCID_BIN" --state-dir "$STATE2" hook poststop <<<"$state" >/dev/null 2>&1
check "hook poststop with id ../victim removes nothing outside the state dir" test -f "$T/victim/keep"

# --- other stages are no-ops
for stage in createContainer startContainer poststart; do
  state='{"ociVersion":"1.0.2","id":"x","status":"created","pid":1,"bundle":"'"$T"'/nowhere"}'
  "$OCID_BIN" --state-dir "$STATE2" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" hook "$stage" <<<"$state" >/dev/null 2>&1
  assert_eq "hook $stage exits 0 (no-op)" 0 "$?"
done

# --- createRuntime as the registered stage
make_bundle cr --env OCI_ONLOAD=onload \
  --jq '.hooks = {createRuntime: [.hooks.prestart[0] | .args[-1] = "createRuntime"], poststop: .hooks.poststop}' \
  -- '/usr/bin/dyn-hello 2>&1; onload --version'
run_container
echo "# --- createRuntime stage"
assert_eq "[createRuntime] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[createRuntime] preload works" "$OUT" "SIMULATED libonload: preloaded"
assert_contains "[createRuntime] onload present" "$OUT" "SIMULATED Onload"
assert_eq "[createRuntime] state dir cleaned" "" "$(ls -A "$STATE_DIR")"

# --- a state dir writable by others is refused for a container that needs it
STATE_BAD=$T/state-bad
mkdir -m 0777 "$STATE_BAD"
make_bundle badstate --state-dir "$STATE_BAD" --env OCI_ONLOAD=onload -- 'echo SHOULD-NOT-RUN'
run_container
echo "# --- world-writable state dir"
check_not "[state dir 0777] activated container refused" test "$RC" -eq 0
assert_not_contains "[state dir 0777] process never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[state dir 0777] error names the state dir" "$ERR" "$STATE_BAD"
assert_eq "[state dir 0777] nothing created in it" "" "$(ls -A "$STATE_BAD")"
make_bundle badstate2 --state-dir "$STATE_BAD" -- 'echo RAN'
run_container
assert_eq "[state dir 0777] a container that did not ask still runs" 0 "$RC"

# --- --log-file is opened without following a symlink
echo "victim content" >"$T/victim-log"
ln -s "$T/victim-log" "$T/log.lnk"
state='{"ociVersion":"1.0.2","id":"logtest","status":"stopped","bundle":"'"$T"'/nowhere"}'
"$OCID_BIN" --state-dir "$STATE2" --log-level debug --log-file "$T/log.lnk" hook poststop <<<"$state" >/dev/null 2>&1
assert_eq "--log-file through a symlink does not write the symlink's target" "victim content" "$(cat "$T/victim-log")"
"$OCID_BIN" --state-dir "$STATE2" --log-level debug --log-file "$T/real.log" hook poststop <<<"$state" >/dev/null 2>&1
check "--log-file to a fresh path is created" test -f "$T/real.log"
[[ -f $T/real.log ]] && assert_eq "--log-file is mode 600" 600 "$(stat -c %a "$T/real.log")"

# --- a failure in the middle of mounting takes everything back
# A FIFO where /usr/sbin/onload_tool goes: the targets sort so that the
# devices, library-directory and /usr/bin mounts (and their new mountpoints) are
# done before the hook reaches it. Afterwards nothing is mounted, no state is
# left, and the image is unchanged but for empty mountpoints (never removed:
# another container sharing the rootfs may have mounted onto them).
echo "# --- failure mid-attach: rollback"
make_bundle midfail --env OCI_ONLOAD=all -- 'echo STARTED'
mkdir -p "$ROOTFS/usr/sbin"
mkfifo "$ROOTFS/usr/sbin/onload_tool"
before=$(tree_snapshot "$ROOTFS")
mi_before=$(host_mountinfo)
run_container
check "container refused" test "$RC" -ne 0
assert_contains "the error names the FIFO" "$ERR" "FIFO"
assert_contains "the error names the path" "$ERR" "/usr/sbin/onload_tool"
assert_not_contains "the container never ran" "$OUT" "STARTED"
after=$(tree_snapshot "$ROOTFS")
added=$(comm -13 <(echo "$before") <(echo "$after"))
assert_eq "image: nothing removed or changed" "" "$(comm -23 <(echo "$before") <(echo "$after"))"
assert_eq "image: only empty mountpoints added" "" \
  "$(awk -F'\t' '!($2 == "d" || ($2 == "f" && $5 == 0))' <<<"$added" | sed '/^$/d')"
check "the mounts made before the failure were there to take back" test -n "$added"
assert_eq "host mountinfo unchanged" "$mi_before" "$(host_mountinfo)"
assert_eq "no state left" "" "$(ls -A "$STATE_DIR")"

# --- the hook confines itself (seccomp) before it reads any input
state='{"ociVersion":"1.0.2","id":"confine","status":"stopped","bundle":"'"$T"'/nowhere"}'
strace -o "$T/confine.trace" -e trace=prctl,seccomp,read "$OCID_BIN" --state-dir "$STATE2" hook poststop <<<"$state" >/dev/null 2>&1
order=$(grep -oE '^(prctl\(PR_SET_NO_NEW_PRIVS|seccomp\(SECCOMP_SET_MODE_FILTER|read\(0,)' "$T/confine.trace" | head -3 | tr '\n' ' ')
assert_eq "no_new_privs, then the seccomp filter, then the first read of stdin" \
  "prctl(PR_SET_NO_NEW_PRIVS seccomp(SECCOMP_SET_MODE_FILTER read(0, " "$order"

# --- --version
v=$("$OCID_BIN" --version 2>&1)
assert_eq "--version exits 0" 0 "$?"
assert_match "--version prints a version" "$v" '[0-9]+\.[0-9]+\.[0-9]+'

it_finish
