#!/bin/bash
# A container that joins another container's mount namespace (config.json
# linux.namespaces {"type": "mount", "path": "/proc/<pid>/ns/mnt"}) hands the
# hook that other container's tree: after setns, "/proc" and the rootfs path
# are whatever the other container put there. Container A (real runc, does
# not ask, CAP_SYS_ADMIN) covers its /proc with a bind mount of a directory
# of planted files: a fake thread-self/mountinfo, and FIFOs at every
# thread-self/fd/N and thread-self/fdinfo/N. Container B asks for Onload and
# its state names A's pid.
#
# runc 1.1 itself reads /proc/self/mountinfo in the joined namespace and
# fails before any hook when A's /proc is fake (recorded below), so the hook
# is driven directly, as runc would run it, with B's bundle and A's pid.
# Asserted for each case: no planted object is ever opened (inotify), no
# mount appears in A's namespace unless the rootfs is B's very directory,
# the host mount table and the state dir are as before.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

ADV_TOOL=${OCID_ADV_TOOL:-}
if [[ -z $ADV_TOOL ]]; then
  ADV_TOOL=$T/adv_tool
  cc -O2 -o "$ADV_TOOL" "$IT_LIB_DIR/adv_tool.c" || die "cannot build adv_tool.c"
fi
[[ -x $ADV_TOOL ]] || die "OCID_ADV_TOOL=$ADV_TOOL is not executable"

# plant_fake_proc DIR: the tree A binds over its /proc.
plant_fake_proc() {
  local d=$1 n
  mkdir -p "$d/thread-self/fd" "$d/thread-self/fdinfo"
  ln -s thread-self "$d/self"
  printf '1 0 0:1 / / rw shared:1 - fake fake rw\nFAKE-MOUNTINFO\n' >"$d/thread-self/mountinfo"
  for n in $(seq 0 63); do
    mkfifo "$d/thread-self/fd/$n" "$d/thread-self/fdinfo/$n"
  done
}
planted() {  # DIR: the paths to watch
  find "$1/thread-self" -type p
  echo "$1/thread-self/mountinfo"
}

# start_a NAME [make_bundle options]: starts container A detached; sets
# PIDA, CA (its id), AROOTFS, FAKE (its planted tree, host path).
start_a() {
  local name=$1; shift
  make_bundle "$name" --no-hook --cap CAP_SYS_ADMIN "$@" -- \
    'mount --bind /fakeproc /proc && echo READY && exec sleep 600'
  CA=$CID AROOTFS=$ROOTFS FAKE=$ROOTFS/fakeproc
  plant_fake_proc "$FAKE"
  IT_IDS+=("$CA")
  runc --root "$RUNC_ROOT" run -d --bundle "$B" "$CA" </dev/null >"$B/out" 2>"$B/err" \
    || die "container A did not start: $(cat "$B/err")"
  local i
  for i in $(seq 1 50); do grep -q READY "$B/out" && break; sleep 0.1; done
  grep -q READY "$B/out" || die "container A did not cover its /proc: $(cat "$B/out" "$B/err")"
  PIDA=$(runc --root "$RUNC_ROOT" state "$CA" | jq .pid)
}

# make_b: container B's bundle, joining A's mount namespace. Sets HOOK_CMD,
# HOOK_ENV (as make_bundle's prestart entry has them) and BROOTFS.
make_b() {
  make_bundle joiner --env OCI_ONLOAD=all \
    --jq ".linux.namespaces |= map(if .type == \"mount\" then .path = \"/proc/$PIDA/ns/mnt\" else . end)" \
    -- 'cat /etc/ld.so.preload; echo DONE'
  BROOTFS=$ROOTFS
  local path
  path=$(jq -r '.hooks.prestart[0].path' "$B/config.json")
  mapfile -t HOOK_ARGS < <(jq -r '.hooks.prestart[0].args[1:][]' "$B/config.json")
  mapfile -t HOOK_ENV < <(jq -r '.hooks.prestart[0].env // [] | .[]' "$B/config.json")
  HOOK_CMD=("$path" "${HOOK_ARGS[@]}")
}

# run_hook STAGE: the hook with B's bundle and A's pid; sets HRC, HERR.
run_hook() {
  local state
  state=$(jq -cn --arg id "$CID" --arg b "$B" --argjson pid "$PIDA" \
    '{ociVersion: "1.0.2", id: $id, status: "creating", pid: $pid, bundle: $b, annotations: {}}')
  local hook=("${HOOK_CMD[@]}")
  hook[${#hook[@]}-1]=$1
  (cd "$B" && env -i "${HOOK_ENV[@]}" timeout 20 "${hook[@]}" <<<"$state" >"$B/hook.out" 2>"$B/hook.err")
  HRC=$?
  HERR=$(cat "$B/hook.err")
  info "hook $1 exit $HRC: $HERR"
}

# joined CASE: runs B's prestart hook against A with an open() watch on
# every planted file, and the checks every case shares. Sets HRC, HERR.
joined() {
  local case=$1 wlog=$T/logs/watch.$RANDOM a_mi0 mi0
  mapfile -t WATCH < <(planted "$FAKE")
  "$ADV_TOOL" watch "${WATCH[@]}" >"$wlog" 2>&1 </dev/null &
  local wpid=$!
  for _ in $(seq 1 50); do grep -q READY "$wlog" && break; sleep 0.05; done
  grep -q READY "$wlog" || nok "[$case] open watch did not start: $(cat "$wlog")"
  a_mi0=$(cut -d' ' -f5 "/proc/$PIDA/mountinfo" | sort)
  mi0=$(host_mountinfo)
  run_hook prestart
  A_MOUNTS_ADDED=$(comm -13 <(echo "$a_mi0") <(cut -d' ' -f5 "/proc/$PIDA/mountinfo" | sort))
  sleep 0.1
  kill "$wpid" 2>/dev/null
  wait "$wpid" 2>/dev/null
  assert_eq "[$case] the hook never open()ed a planted file under A's /proc" \
    "" "$(grep '^OPEN' "$wlog" | sed "s|$FAKE||")"
  assert_not_contains "[$case] the fake mountinfo is in no message" "$HERR" "FAKE-MOUNTINFO"
  check "[$case] the hook returned within 20 s" test "$HRC" -ne 124
  assert_eq "[$case] host mountinfo identical" "$mi0" "$(host_mountinfo)"
}

echo "# === what runc does with B joining A's mount namespace (recorded, not asserted)"
start_a fakeproc
make_b
IT_IDS+=("$CID")
timeout 90 runc --root "$RUNC_ROOT" run --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
info "RECORDED: runc run of B exit $?: $(grep -o 'msg=.*' "$B/err" | head -c 300)"
runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1

echo "# === case 1: B's rootfs path made up inside A's tree"
# A creates the path of B's rootfs in its own tree: the hook, in A's
# namespace, would find a directory there and mount into A.
mkdir -p "$AROOTFS$BROOTFS"
joined "made-up rootfs"
check_not "[made-up rootfs] REFUSED (hook exit non-zero)" test "$HRC" -eq 0
assert_eq "[made-up rootfs] one line naming the reason" \
  "oci-decorator: error: container $CID: refused: refusing: the rootfs in the container's mount namespace is not the bundle's rootfs (joined mount namespace?): $BROOTFS" \
  "$HERR"
assert_eq "[made-up rootfs] no mount added to A's namespace" "" "$A_MOUNTS_ADDED"
check_not "[made-up rootfs] nothing created in A's copy of the path" test -e "$AROOTFS$BROOTFS/usr/lib64"
check_not "[made-up rootfs] nothing created in A's copy of the image's library directory" \
  test -e "$AROOTFS$BROOTFS$IMAGE_LIBDIR"
assert_state_dir_empty "[made-up rootfs]"
runc --root "$RUNC_ROOT" delete -f "$CA" >/dev/null 2>&1

echo "# === case 2: B's very rootfs directory bound into A's tree"
# A shows B's rootfs, the host root and the hook's state directory at their
# host paths (config.json mounts), so the rootfs check passes and the hook
# works in A's namespace: every /proc access must go to the host's procfs.
# B's image has its own /etc/ld.so.preload, which the hook reads.
mkdir -p "$T/bshared"
cp -a "$BASE_ROOTFS" "$T/bshared/rootfs"
echo /lib/image-own-entry.so >"$T/bshared/rootfs/etc/ld.so.preload"
binds=$(jq -cn --arg r "$T/bshared/rootfs" --arg h "$HOST_ROOT" --arg s "$STATE_DIR" \
  '[$r, $h, $s] | map({destination: ., source: ., type: "bind", options: ["rbind", "rw"]})')
start_a shared --jq ".mounts += $binds"
make_b
jq --arg r "$T/bshared/rootfs" '.root.path = $r' "$B/config.json" >"$B/c.new" && mv "$B/c.new" "$B/config.json"
BROOTFS=$T/bshared/rootfs
joined "B's rootfs in A"
assert_eq "[B's rootfs in A] applied (hook exit 0)" 0 "$HRC"
assert_eq "[B's rootfs in A] the generated preload keeps the image's entry, then libonload" \
  "$(printf '/lib/image-own-entry.so\n%s' "$IMAGE_LIBDIR/libonload.so")" "$(cat "$STATE_DIR/$CID/ld.so.preload" 2>&1)"
assert_contains "[B's rootfs in A] libonload mounted in A's namespace, at B's rootfs" \
  "$A_MOUNTS_ADDED" "$BROOTFS$IMAGE_LIBDIR/libonload.so"
run_hook poststop
assert_state_dir_empty "[B's rootfs in A] after poststop"
runc --root "$RUNC_ROOT" delete -f "$CA" >/dev/null 2>&1

it_finish
