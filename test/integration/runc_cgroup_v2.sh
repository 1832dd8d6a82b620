#!/bin/bash
# Real runc on a PURE cgroup v2 hierarchy (shared notes, runtimes.md: cgroup2
# mounted over /sys/fs/cgroup in a private mount namespace; the container's
# cgroup is /sys/fs/cgroup/unified/<path> from the host). The hook replaces
# runc's device program with its own (BPF_F_REPLACE):
#   1. activated: one program attached, ours; the devices open (ENXIO, the
#      cgroup let them through); an unlisted node and a neighbour minor are
#      still EPERM; runc's defaults (/dev/null) still work;
#   2. config.json's own linux.resources.devices rules are kept, an allow-all
#      config stays allow-all;
#   3. not activated: runc's program untouched, the nodes denied;
#   4. two programs attached (a helper adds one): the hook refuses with one
#      line and changes nothing;
#   5. a later step fails: the hook puts runc's program back (same id).
# The container's /proc/self/cgroup is checked to prove the container ran on v2.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

command -v bpftool >/dev/null 2>&1 || die "bpftool is missing (see test/integration/PACKAGES)"
[[ -x ${OCID_BPF_ATTACH_EXTRA:-} ]] || die "OCID_BPF_ATTACH_EXTRA is not set (the bpf_attach_extra helper)"
V2_ROOT=/sys/fs/cgroup/unified
[[ $(stat -f -c %T "$V2_ROOT" 2>/dev/null) == cgroup2fs ]] \
  || skip_all "no cgroup2 hierarchy at $V2_ROOT to run runc on pure v2"

# in_v2 CMD...: runs CMD in a private mount namespace with cgroup2 on
# /sys/fs/cgroup, where runc (and the hook it runs) see a pure v2 host.
in_v2() {
  unshare -m --propagation private sh -c 'mount -t cgroup2 none /sys/fs/cgroup && exec "$@"' sh "$@"
}
in_v2 true || skip_all "cannot mount cgroup2 over /sys/fs/cgroup in a private mount namespace"

# runc turns on controllers (hugetlb) in the v2 root: undo that at the end.
SUBTREE_START=$(cat "$V2_ROOT/cgroup.subtree_control")
v2_cleanup() {
  local rc=$? id
  for id in "${IT_IDS[@]}"; do
    in_v2 runc --root "$RUNC_ROOT" delete -f "$id" >/dev/null 2>&1
  done
  v2_restore "$V2_ROOT" "$SUBTREE_START"
  (exit "$rc")
  it_cleanup
}
trap v2_cleanup EXIT

OM=$(devnum "$HOST_ROOT/dev/onload"); OM=${OM%%:*}
EM=$(devnum "$HOST_ROOT/dev/onload_epoll"); EM=${EM%%:*}
SM=$(devnum "$HOST_ROOT/dev/sfc_char"); SM=${SM%%:*}
# Two more char majors no driver registered and the simulation does not use.
mapfile -t used < <(awk '/^Character devices:/{c=1;next} /^$/{c=0} c{print $1}' /proc/devices)
FREE=()
for m in $(seq 254 -1 200); do
  [[ " ${used[*]} $OM $EM $SM " == *" $m "* ]] || FREE+=("$m")
  [[ ${#FREE[@]} -eq 2 ]] && break
done
[[ ${#FREE[@]} -eq 2 ]] || die "no two free char majors in 200..254"
F1=${FREE[0]}; F2=${FREE[1]}
info "onload majors $OM $EM $SM; free majors $F1 $F2"

# v2_create: `runc create` of bundle $B as $CID on pure v2 (prestart hooks
# run now); the container's output will go to $B/out. Sets RC, CGDIR.
v2_create() {
  IT_IDS+=("$CID")
  in_v2 timeout 60 runc --root "$RUNC_ROOT" create --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
  RC=$?
  CGDIR=$V2_ROOT/$CG_PARENT/$CID
}
# v2_start: starts the created container, waits for it to exit, deletes it.
# Sets OUT, ERR.
v2_start() {
  local i
  in_v2 runc --root "$RUNC_ROOT" start "$CID" >>"$B/err" 2>&1
  for i in $(seq 1 100); do
    [[ $(in_v2 runc --root "$RUNC_ROOT" state "$CID" 2>/dev/null | jq -r .status) == stopped ]] && break
    sleep 0.1
  done
  in_v2 runc --root "$RUNC_ROOT" delete -f "$CID" >>"$B/err" 2>&1
  OUT=$(cat "$B/out")
  ERR=$(cat "$B/err")
}
# Programs attached to $CGDIR: "id name" lines (name "-" when none).
programs() { bpftool -j cgroup list "$CGDIR" | jq -r '.[] | "\(.id) \(.name // "-" | if . == "" then "-" else . end)"'; }
# hook_by_hand: runs the hook's prestart for the created container $CID the
# way runc would (state on stdin, inside the v2 namespace). Sets HRC, HOUT.
# (After `runc create` the container has pivoted into its rootfs, so a hook
# run now cannot get past entering its mount namespace; the steps before
# that, the device program among them, are what these cases look at.)
hook_by_hand() {  # [STATE_DIR]
  local state
  state=$(in_v2 runc --root "$RUNC_ROOT" state "$CID")
  HOUT=$(in_v2 "$OCID_BIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" \
           --state-dir "${1:-$STATE_DIR}" hook prestart <<<"$state" 2>&1)
  HRC=$?
}

probe_script() {
  cat <<EOF
echo "CGROUP \$(cat /proc/self/cgroup | grep '^0::')"
echo "V1DEVICES \$(grep -c ':devices:/.' /proc/self/cgroup)"
for d in /dev/onload /dev/onload_epoll /dev/sfc_char; do
  if [ -e \$d ]; then echo "OPEN \$d \$(cat \$d 2>&1 </dev/null)"; else echo "OPEN \$d ABSENT"; fi
done
echo "NULL \$( (echo x >/dev/null && cat /dev/null && echo ok) 2>&1)"
mknod /tmp/onload c $OM 0 && echo "MKNOD ok"
echo "OPEN onload-node \$(cat /tmp/onload 2>&1 </dev/null)"
mknod /tmp/onload1 c $OM 1 && echo "OPEN onload-minor1 \$(cat /tmp/onload1 2>&1 </dev/null)"
mknod /tmp/f1 c $F1 0 && echo "OPEN free1 \$(cat /tmp/f1 2>&1 </dev/null)"
mknod /tmp/f1m1 c $F1 1 && echo "OPEN free1-minor1 \$(cat /tmp/f1m1 2>&1 </dev/null)"
mknod /tmp/f2 c $F2 0 && echo "OPEN free2 \$(cat /tmp/f2 2>&1 </dev/null)"
mknod /tmp/blk b 7 0 && echo "OPEN block \$(cat /tmp/blk 2>&1 </dev/null)"
echo DONE
EOF
}
opened() { field OPEN | awk -v d="$1" '$1 == d {$1 = ""; sub(/^ /, ""); print}'; }
ENXIO='No such device'
EPERM='Operation not permitted'

# --- 1. activated: ours replaces runc's program
make_bundle act --cap CAP_MKNOD --env OCI_ONLOAD=all -- "$(probe_script)"
v2_create
echo "# --- 1. activated"
assert_eq "[activated] runc create (prestart hook) succeeds" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
progs=$(programs)
info "programs on $CGDIR: $(tr '\n' ',' <<<"$progs")"
assert_eq "[activated] exactly one device program on the container's cgroup" 1 "$(grep -c . <<<"$progs")"
assert_match "[activated] it is the hook's (ocid_devices)" "$progs" '^[0-9]+ ocid_devices$'
dump=$(bpftool prog dump xlated id "$(awk 'NR==1 {print $1}' <<<"$progs")" 2>&1)
for m in "$OM" "$EM" "$SM"; do
  assert_contains "[activated] the program checks major $m" "$dump" "$(printf 'if r4 != 0x%x goto' "$m")"
done
assert_contains "[activated] the program keeps runc's /dev/pts rule (major 136)" "$dump" "if r4 != 0x88 goto"
v2_start
assert_match "[activated] the container ran on cgroup v2 ($CG_PARENT)" "$(field CGROUP)" "^0::/$CG_PARENT/$CID\$"
assert_eq "[activated] the container is in no v1 devices cgroup" 0 "$(field V1DEVICES)"
for d in /dev/onload /dev/onload_epoll /dev/sfc_char; do
  assert_contains "[activated] open($d) passes the device program (ENXIO)" "$(opened "$d")" "$ENXIO"
done
assert_contains "[activated] the mknod'ed onload node opens (ENXIO)" "$(opened onload-node)" "$ENXIO"
assert_contains "[activated] onload's major, minor 1 is still denied" "$(opened onload-minor1)" "$EPERM"
assert_contains "[activated] an unlisted device is still denied" "$(opened free2)" "$EPERM"
assert_contains "[activated] a block device is still denied" "$(opened block)" "$EPERM"
assert_eq "[activated] /dev/null (runc default) still works" "ok" "$(field NULL)"
assert_contains "[activated] mknod is still allowed (runc default c *:* m)" "$OUT" "MKNOD ok"
assert_contains "[activated] script ran to the end" "$OUT" "DONE"
[[ $OUT == *DONE* ]] || dump_run

# --- 2. config.json's own rules are kept in the replacement
make_bundle cfg --cap CAP_MKNOD --env OCI_ONLOAD=onload \
  --jq ".linux.resources.devices += [{\"allow\": true, \"type\": \"c\", \"major\": $F1, \"minor\": 0, \"access\": \"rw\"}]" \
  -- "$(probe_script)"
v2_create
echo "# --- 2. config.json rules kept"
assert_eq "[config rules] runc create succeeds" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_match "[config rules] ours is attached" "$(programs)" '^[0-9]+ ocid_devices$'
v2_start
assert_contains "[config rules] config.json's c $F1:0 rw still opens (ENXIO)" "$(opened free1)" "$ENXIO"
assert_contains "[config rules] c $F1:1 is still denied" "$(opened free1-minor1)" "$EPERM"
assert_contains "[config rules] /dev/onload passes (ENXIO)" "$(opened /dev/onload)" "$ENXIO"
assert_contains "[config rules] an unlisted device is still denied" "$(opened free2)" "$EPERM"

# --- 2b. a config.json that allows every device (as for privileged
# containers) still does after the replacement: nothing is narrowed.
make_bundle all --cap CAP_MKNOD --env OCI_ONLOAD=onload \
  --jq '.linux.resources.devices = [{"allow": true, "access": "rwm"}]' -- "$(probe_script)"
v2_create
echo "# --- 2b. config allows every device"
assert_eq "[allow all] runc create succeeds" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
info "programs on the container's cgroup: $(programs | tr '\n' ',')"
v2_start
assert_contains "[allow all] /dev/onload passes (ENXIO)" "$(opened /dev/onload)" "$ENXIO"
assert_contains "[allow all] an unlisted char device is still allowed (ENXIO)" "$(opened free2)" "$ENXIO"
assert_not_contains "[allow all] a block device is still allowed" "$(opened block)" "$EPERM"

# --- 3. not activated: runc's own program stays
make_bundle plain --cap CAP_MKNOD -- "$(probe_script)"
v2_create
echo "# --- 3. not activated"
assert_eq "[not activated] runc create succeeds" 0 "$RC"
progs=$(programs)
assert_eq "[not activated] one device program" 1 "$(grep -c . <<<"$progs")"
assert_not_contains "[not activated] it is runc's, not the hook's" "$progs" "ocid_devices"
v2_start
assert_eq "[not activated] /dev/onload absent" "ABSENT" "$(opened /dev/onload)"
assert_contains "[not activated] the mknod'ed onload node is denied" "$(opened onload-node)" "$EPERM"
assert_eq "[not activated] /dev/null works" "ok" "$(field NULL)"

# --- 4. two device programs: refuse, change nothing
make_bundle two --no-hook --cap CAP_MKNOD --env OCI_ONLOAD=all -- "$(probe_script)"
v2_create
echo "# --- 4. two device programs attached"
assert_eq "[two programs] runc create succeeds" 0 "$RC"
extra=$("$OCID_BPF_ATTACH_EXTRA" "$CGDIR" 2>&1)
assert_match "[two programs] the helper attached a second program" "$extra" '^[0-9]+$'
before=$(programs)
assert_eq "[two programs] two programs before the hook" 2 "$(grep -c . <<<"$before")"
hook_by_hand
assert_eq "[two programs] the hook fails" 1 "$HRC"
assert_contains "[two programs] with one clear line" "$HOUT" \
  "2 device programs are attached to /sys/fs/cgroup/$CG_PARENT/$CID; refusing to replace"
assert_eq "[two programs] exactly one line of output" 1 "$(grep -c . <<<"$HOUT")"
assert_eq "[two programs] the attached programs are unchanged" "$before" "$(programs)"
v2_start
assert_eq "[two programs] /dev/onload was not mounted" "ABSENT" "$(opened /dev/onload)"
assert_contains "[two programs] the onload node is still denied" "$(opened onload-node)" "$EPERM"

# --- 5. a later step fails: runc's program is put back. The step after the
# device program is the preload file in the state dir: make that impossible.
make_bundle undo --no-hook --env OCI_ONLOAD=all -- 'echo DONE'
echo "not a directory" >"$T/state-file"
v2_create
echo "# --- 5. rollback"
assert_eq "[rollback] runc create succeeds" 0 "$RC"
before=$(programs)
hook_by_hand "$T/state-file/state"
assert_eq "[rollback] the hook fails" 1 "$HRC"
assert_contains "[rollback] at the state dir" "$HOUT" "$T/state-file"
info "hook said: $HOUT"
assert_eq "[rollback] runc's program is attached again, the same one" "$before" "$(programs)"
assert_not_contains "[rollback] the hook's program is gone" "$(programs)" "ocid_devices"
v2_start

it_finish
