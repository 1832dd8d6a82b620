#!/bin/bash
# Real runc with a user namespace (linux.namespaces "user", uid and gid
# mappings 0 -> 100000, size 65536) against the SIMULATED Onload install:
#   1. OCI_ONLOAD=all: the in-container Onload checks (files, ro,nosuid,nodev
#      mounts, devices open through the device cgroup, preload); writes fail
#      with EROFS; the directories the hook created are owned by the
#      container's root (0:0 inside, 100000:100000 on the host) and nothing
#      else in the image changed; the host install is untouched;
#   2. a user-namespace container that does not ask: image byte-identical,
#      nothing mounted;
#   3. CAP_SYS_ADMIN in the user namespace (what refuse_privileged refuses):
#      the mountpoints under the mounts are the container root's, a
#      read-only mount CAN be remounted read-write (its flags are not
#      locked), yet writing the host's files through it is refused by their
#      ownership (EACCES); recorded, see SECURITY.md 3;
#   4. pure cgroup v2 (as runc_cgroup_v2.sh): the same container works;
#   5. crun (runc refuses such a mapping itself): a user namespace without a
#      mapping for uid 0 that asks is refused with one line; one that does
#      not ask runs.
# After each: host mount table unchanged, state dir empty.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

MAP='[{"containerID":0,"hostID":100000,"size":65536}]'
USERNS_JQ=".linux.namespaces += [{\"type\":\"user\"}] | .linux.uidMappings = $MAP | .linux.gidMappings = $MAP"
HOST_BEFORE=$(tree_snapshot "$HOST_ROOT")

# Directories the hook may have to create in the base image, parents first.
# (Not /usr/libexec/onload/profiles: inside, a mount of the host's covers it.)
CANDIDATE_DIRS="/usr/lib64 /usr/sbin /usr/libexec /usr/libexec/onload"
# Case 1 uses its own install whose probed files are world-writable: only the
# read-only mount can then refuse a write (otherwise their owner, host root,
# unmapped in the container, already does: see case 3).
HOST_RW=$T/host-rw
make_sim "$HOST_RW" lib64
chmod o+w "$HOST_RW/usr/bin/onload" "$HOST_RW/usr/lib64/libonload.so" \
  "$HOST_RW/usr/libexec/onload/profiles" "$HOST_RW/usr/libexec/onload/profiles/latency.opf"
HOST_RW_BEFORE=$(tree_snapshot "$HOST_RW")

# The lib's probe, plus write attempts and the owners of candidate dirs.
probe_script() {
  onload_probe | sed '/^echo "DONE"$/d'
  cat <<EOF
for f in /usr/bin/onload $IMAGE_LIBDIR/libonload.so /usr/libexec/onload/profiles/latency.opf; do
  echo "WRITE \$f \$( (echo x >> \$f) 2>&1 && echo WRITTEN)"
done
echo "WRITE newfile \$( (touch /usr/libexec/onload/profiles/new.opf) 2>&1 && echo WRITTEN)"
for d in $CANDIDATE_DIRS; do [ -d \$d ] && echo "OWN \$d \$(stat -c %u:%g \$d)"; done
echo "UIDMAP \$(cat /proc/self/uid_map)"
echo "DONE"
EOF
}

# --- 1. asks, user namespace
make_bundle asks --host-root "$HOST_RW" --env OCI_ONLOAD=all --jq "$USERNS_JQ" -- "$(probe_script)"
before=$(tree_snapshot "$ROOTFS")
run_container
echo "# --- user namespace, OCI_ONLOAD=all"
assert_eq "[userns all] container ran (runc exit 0)" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_match "[userns all] the container has the user namespace" "$(field UIDMAP)" '^ *0 +100000 +65536$'
expect_onload all "userns all" "$HOST_RW"
while read -r f msg; do
  [[ -n $f ]] || continue
  assert_contains "[userns all] writing $f (world-writable on the host) fails with EROFS" "$msg" \
    "Read-only file system"
done < <(field WRITE)
after=$(tree_snapshot "$ROOTFS")
assert_eq "[userns all] image: no file removed or changed" "" "$(comm -23 <(echo "$before") <(echo "$after"))"
added=$(comm -13 <(echo "$before") <(echo "$after"))
assert_eq "[userns all] image: only empty files/dirs were added" "" \
  "$(awk -F'\t' '!($2 == "d" || ($2 == "f" && $5 == 0))' <<<"$added" | sed '/^$/d')"
assert_eq "[userns all] image: everything added is owned by host 100000:100000 (the container's root)" "" \
  "$(awk -F'\t' '$4 != "100000:100000"' <<<"$added" | sed '/^$/d')"
created_dirs=0
for d in $CANDIDATE_DIRS; do
  grep -qP "^\.\Q$d\E\td\t" <<<"$added" || continue
  created_dirs=$((created_dirs + 1))
  assert_eq "[userns all] created $d: host owner 100000:100000" "100000:100000" "$(stat -c %u:%g "$ROOTFS$d")"
  assert_eq "[userns all] created $d: owned by root inside" "0:0" "$(field OWN | awk -v d="$d" '$1 == d {print $2}')"
done
check "[userns all] the hook created directories in the image (the ownership checks ran)" test "$created_dirs" -gt 0
assert_eq "[userns all] host install unchanged (contents, modes, owners)" "$HOST_RW_BEFORE" "$(tree_snapshot "$HOST_RW")"
assert_state_dir_empty "[userns all]"
assert_host_mounts_unchanged "[userns all]"

# --- 2. does not ask, user namespace
make_bundle quiet --jq "$USERNS_JQ" -- "$(onload_probe)"
before=$(tree_snapshot "$ROOTFS")
run_container
echo "# --- user namespace, not asking"
assert_eq "[userns not asked] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload none "userns not asked"
assert_eq "[userns not asked] image byte-identical (not even mountpoints)" "$before" "$(tree_snapshot "$ROOTFS")"
assert_eq "[userns not asked] hook printed nothing" "" "$ERR"

# --- 3. CAP_SYS_ADMIN in the user namespace: what a remount can and cannot do.
make_bundle sysadmin --cap CAP_SYS_ADMIN --env OCI_ONLOAD=all --jq "$USERNS_JQ" -- '
umount /dev/onload && echo "UNDER /dev/onload $(stat -c "%u:%g %F" /dev/onload)"
umount /usr/bin/onload && echo "UNDER /usr/bin/onload $(stat -c "%u:%g %F" /usr/bin/onload)"
mount -o remount,bind,rw '"$IMAGE_LIBDIR"'/libonload.so && echo "REMOUNT_RW done"
echo "MNT_AFTER $(awk "\$2 == \"'"$IMAGE_LIBDIR"'/libonload.so\" {print \$4}" /proc/mounts)"
echo "WRITE_LIB $( (echo x >> '"$IMAGE_LIBDIR"'/libonload.so) 2>&1 && echo WRITTEN)"
mount -o remount,bind,rw /etc/ld.so.preload && echo "REMOUNT_PRELOAD done"
echo "WRITE_PRELOAD $( (echo /evil.so >> /etc/ld.so.preload) 2>&1 && echo WRITTEN)"
mount -o remount,bind,ro,suid /usr/bin/zf_debug && echo "REMOUNT_SUID done"
echo "MNT_SUID $(awk "\$2 == \"/usr/bin/zf_debug\" {print \$4}" /proc/mounts)"
echo DONE'
lib_sha=$(host_sha "$HOST_ROOT/usr/lib64/libonload.so")
run_container
echo "# --- user namespace with CAP_SYS_ADMIN"
assert_eq "[userns sysadmin] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[userns sysadmin] the /dev/onload mountpoint (on runc's /dev tmpfs) is the container root's" \
  "0:0 regular empty file" "$(field UNDER | awk '$1 == "/dev/onload" {$1=""; sub(/^ /, ""); print}')"
assert_eq "[userns sysadmin] the /usr/bin/onload mountpoint is the container root's" \
  "0:0 regular empty file" "$(field UNDER | awk '$1 == "/usr/bin/onload" {$1=""; sub(/^ /, ""); print}')"
info "RECORDED: remount,bind,rw in the container's user namespace: $(field REMOUNT_RW) -> $(field MNT_AFTER)"
info "RECORDED: remount,bind,ro,suid of /usr/bin/zf_debug: $(field REMOUNT_SUID) -> $(field MNT_SUID)"
assert_contains "[userns sysadmin] writing a host library through a rw remount is refused (not mapped)" \
  "$(field WRITE_LIB)" "Permission denied"
assert_contains "[userns sysadmin] writing the generated preload file through a rw remount is refused" \
  "$(field WRITE_PRELOAD)" "Permission denied"
assert_eq "[userns sysadmin] host library unchanged" "$lib_sha" "$(host_sha "$HOST_ROOT/usr/lib64/libonload.so")"
assert_eq "[userns sysadmin] host install unchanged" "$HOST_BEFORE" "$(tree_snapshot "$HOST_ROOT")"
assert_host_mounts_unchanged "[userns sysadmin]"

# --- 4. pure cgroup v2 (runtimes.md), one activated user-namespace container.
V2_ROOT=/sys/fs/cgroup/unified
in_v2() {
  unshare -m --propagation private sh -c 'mount -t cgroup2 none /sys/fs/cgroup && exec "$@"' sh "$@"
}
if [[ $(stat -f -c %T "$V2_ROOT" 2>/dev/null) != cgroup2fs ]] || ! in_v2 true; then
  info "SKIPPED the cgroup v2 case: no cgroup2 hierarchy at $V2_ROOT usable for runc"
else
  SUBTREE_START=$(cat "$V2_ROOT/cgroup.subtree_control")
  v2_cleanup() { v2_restore "$V2_ROOT" "$SUBTREE_START"; }
  it_add_cleanup v2_cleanup
  make_bundle v2 --env OCI_ONLOAD=all --jq "$USERNS_JQ" -- \
    "echo CGROUP \$(grep '^0::' /proc/self/cgroup); echo V1DEVICES \$(grep -c ':devices:/.' /proc/self/cgroup); $(onload_probe)"
  IT_IDS+=("$CID")
  in_v2 timeout 90 runc --root "$RUNC_ROOT" run --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
  RC=$?
  OUT=$(cat "$B/out"); ERR=$(cat "$B/err")
  in_v2 runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1
  echo "# --- user namespace, pure cgroup v2"
  assert_eq "[userns v2] container ran" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  assert_match "[userns v2] the container ran on cgroup v2" "$(field CGROUP)" "^0::/$CG_PARENT/$CID\$"
  assert_eq "[userns v2] the container is in no v1 devices cgroup" 0 "$(field V1DEVICES)"
  expect_onload all "userns v2"
  assert_state_dir_empty "[userns v2]"
  assert_host_mounts_unchanged "[userns v2]"
fi

# --- 5. no mapping for uid 0 (crun; runc refuses such a config before any hook).
if ! command -v crun >/dev/null 2>&1; then
  nok "crun is not installed (apt-get install crun; see test/integration/PACKAGES)"
else
  crun_setup
  # No devpts: its gid=5 option names a group this mapping does not have.
  UNMAPPED_JQ='.mounts |= map(select(.destination != "/dev/pts"))
    | .linux.namespaces += [{"type":"user"}]
    | .linux.uidMappings = [{"containerID":1000,"hostID":101000,"size":1}]
    | .linux.gidMappings = [{"containerID":1000,"hostID":101000,"size":1}]
    | .process.user = {uid: 1000, gid: 1000}'
  make_bundle unmapped --env OCI_ONLOAD=all --jq "$UNMAPPED_JQ" -- 'echo SHOULD-NOT-RUN'
  before=$(tree_snapshot "$ROOTFS")
  run_crun_container
  echo "# --- user namespace without a mapping for uid 0, asking (crun)"
  check_not "[unmapped root] container refused" test "$RC" -eq 0
  assert_not_contains "[unmapped root] the container process never ran" "$OUT" "SHOULD-NOT-RUN"
  assert_eq "[unmapped root] the hook printed one line" 1 "$(grep -c . <<<"$HOOKERR")"
  assert_contains "[unmapped root] the line says why" "$HOOKERR" \
    "refusing: the container's user namespace maps no host uid to its root (uid 0)"
  assert_match "[unmapped root] the line names the map" "$HOOKERR" \
    "could have no owner: /proc/[0-9]+/uid_map\$"
  info "[unmapped root] $HOOKERR"
  assert_eq "[unmapped root] image byte-identical" "$before" "$(tree_snapshot "$ROOTFS")"
  assert_state_dir_empty "[unmapped root]"
  assert_host_mounts_unchanged "[unmapped root]"

  make_bundle unmapped-quiet --jq "$UNMAPPED_JQ" -- 'echo "ID $(id -u):$(id -g)"'
  run_crun_container
  echo "# --- user namespace without a mapping for uid 0, not asking (crun)"
  assert_eq "[unmapped root, not asked] container ran" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  assert_eq "[unmapped root, not asked] as uid 1000" "1000:1000" "$(field ID)"
fi

assert_eq "host install unchanged at the end" "$HOST_BEFORE" "$(tree_snapshot "$HOST_ROOT")"
it_finish
