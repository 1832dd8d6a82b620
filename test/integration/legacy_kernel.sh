#!/bin/bash
# Real runc, the hook run as on an old kernel (RHEL 8's 4.18): enosys_exec
# answers ENOSYS for openat2, the new mount API and statx. Proves that the
# fallbacks are really what runs (strace of the hook, its debug log), that
# they deliver the same container, and that a failure half-way through
# takes back every legacy mount: the container's mount table after the
# failed hook equals the one before it, and the host's never changes.
# (integration.legacy_kernel.runc_onload / .runc_hostile run the full suites
# under the same wrapper.)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

[[ -n ${OCID_ENOSYS_EXEC:-} && -x $OCID_ENOSYS_EXEC ]] ||
  die "OCID_ENOSYS_EXEC is not set (path to the enosys_exec test helper)"
ENOSYS=$(readlink -f "$OCID_ENOSYS_EXEC")
HAVE_STRACE=0
command -v strace >/dev/null 2>&1 && HAVE_STRACE=1
IT_DEBUG=1   # the hook's debug log names the strategy it took

# --- check: the kernel row names the paths this kernel gives -----------------
# The kernel's interfaces are only informative: the verdict (exit 0 ready,
# 1 not ready: this host has no Solarflare NIC) is the same with and without
# the fallbacks.
out=$("$OCID_BIN" --config-dir "$CONF_DIR" check 2>&1)
rc=$?
echo "# --- oci-decorator check"
check "[check] exit 0 or 1 on this kernel (was $rc)" test "$rc" -le 1
assert_match "[check] this kernel has every interface" "$out" \
  "^OK +kernel +interfaces +openat2 yes, mount API yes, statx mnt_id yes$"
out=$("$ENOSYS" "$OCID_BIN" oci-decorator --config-dir "$CONF_DIR" check 2>&1)
rc2=$?
assert_eq "[check] under enosys_exec the same exit code (only informative)" "$rc" "$rc2"
assert_contains "[check] under enosys_exec every fallback is named" "$out" \
  "openat2 no (userspace resolver), mount API no (legacy mount(2)), statx mnt_id no (fdinfo)"
json=$("$ENOSYS" "$OCID_BIN" oci-decorator --config-dir "$CONF_DIR" check --json 2>/dev/null)
assert_eq "[check --json] under enosys_exec the kernel fields are false" '{"mount_api":false,"openat2":false,"statx_mnt_id":false}' \
  "$(jq -cS .kernel <<<"$json" 2>&1)"

# --- the hook wrapper: enosys_exec, plus what the test looks at -------------
# Called as WRAPPER <oci-decorator> <argv...> with the OCI state on stdin. For
# prestart it saves the container's mountinfo before and after the hook
# (read through /proc/<pid>, the container's namespace) and straces the
# mount-related syscalls.
WRAP=$T/hook-wrapper
INSPECT=$T/inspect
mkdir -p "$INSPECT"
cat >"$WRAP" <<EOF
#!/bin/bash
state=\$(cat)
if [[ " \$* " != *" prestart "* ]]; then
  exec "$ENOSYS" "\$@" <<<"\$state"
fi
pid=\$(jq -r .pid <<<"\$state")
id=\$(jq -r .id <<<"\$state")
cat "/proc/\$pid/mountinfo" >"$INSPECT/\$id.before"
if [[ $HAVE_STRACE == 1 ]]; then
  strace -f -qq -o "$INSPECT/\$id.strace" \\
    -e trace=openat2,open_tree,move_mount,mount_setattr,mount,umount2,statx,fchdir,openat \\
    "$ENOSYS" "\$@" <<<"\$state"
else
  "$ENOSYS" "\$@" <<<"\$state"
fi
rc=\$?
cat "/proc/\$pid/mountinfo" >"$INSPECT/\$id.after"
exit \$rc
EOF
chmod 0755 "$WRAP"
export OCID_HOOK_WRAPPER=$WRAP

# Mounts below the rootfs in a saved mountinfo: "mountpoint options optional...".
rootfs_mounts() {  # FILE ROOTFS
  awk -v r="$2/" 'index($5, r) == 1 {o = ""; for (i = 7; $i != "-"; i++) o = o " " $i; print $5, $6 o}' "$1" | sort
}

# --- 1. success: every mount made the legacy way ------------------------------
make_bundle legacy --env OCI_ONLOAD=all -- "$(onload_probe)"
run_container
echo "# --- OCI_ONLOAD=all with the fallbacks"
assert_eq "[legacy] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all "legacy"
LOG=$(cat "$T/logs/$CID.log" 2>/dev/null)
assert_contains "[legacy] hook log: the legacy mount API was used" "$LOG" "using the legacy mount API"
assert_contains "[legacy] hook log: paths resolved by the userspace walk" "$LOG" "userspace walk"
AFTER=$(rootfs_mounts "$INSPECT/$CID.after" "$ROOTFS")
assert_contains "[legacy] the container's mount table has the library mount" "$AFTER" \
  "$ROOTFS$IMAGE_LIBDIR/libonload.so ro,nosuid,nodev"
assert_no_match "[legacy] no mount of ours is shared or a slave" "$AFTER" '(shared|master):'
NEW=$(comm -13 <(rootfs_mounts "$INSPECT/$CID.before" "$ROOTFS") - <<<"$AFTER")
info "$(wc -l <<<"$NEW") mounts added by the hook"
check "[legacy] the hook added mounts to the container" test -n "$NEW"
assert_eq "[legacy] every mount the hook added is read-only" "" "$(awk '$2 !~ /(^|,)ro(,|$)/' <<<"$NEW")"
if [[ $HAVE_STRACE == 1 ]]; then
  ST=$(cat "$INSPECT/$CID.strace")
  assert_match "[legacy] strace: openat2 answered ENOSYS" "$ST" 'openat2\(.*= -1 ENOSYS'
  assert_match "[legacy] strace: open_tree answered ENOSYS" "$ST" 'open_tree\(.*= -1 ENOSYS'
  assert_no_match "[legacy] strace: no move_mount succeeded" "$ST" 'move_mount\(.*= 0$'
  # mount(2) names fds by their magic links relative to the host's procfs,
  # the working directory (fchdir), never "/proc/..." in the container.
  procfd=$(grep -oE 'openat\([0-9]+, "thread-self/fdinfo/' <<<"$ST" | head -1 | tr -dc 0-9)
  assert_match "[legacy] strace: working directory set to the host's procfs fd (${procfd:-?})" "$ST" \
    "fchdir\\(${procfd:-none}\\) += 0"
  assert_no_match "[legacy] strace: no mount(2) through the container's /proc" "$ST" \
    'mount\([^)]*"/proc/'
  assert_match "[legacy] strace: mount ids from the host procfs's fdinfo, opened non-blocking" "$ST" \
    'openat\([0-9]+, "thread-self/fdinfo/[0-9]+", O_RDONLY\|O_NONBLOCK\|O_NOFOLLOW\|O_CLOEXEC\) = [0-9]+'
  assert_no_match "[legacy] strace: no /proc/thread-self path opened (the container's /proc)" "$ST" \
    'openat\(AT_FDCWD, "/proc/thread-self/'
  assert_match "[legacy] strace: bind mounts by fd, from thread-self/fd" "$ST" \
    'mount\("thread-self/fd/[0-9]+", "thread-self/fd/[0-9]+", NULL, MS_BIND, NULL\) = 0'
  assert_match "[legacy] strace: made private by fd" "$ST" \
    'mount\(NULL, "thread-self/fd/[0-9]+", NULL, MS_PRIVATE, NULL\) = 0'
  assert_match "[legacy] strace: remounted read-only by fd" "$ST" \
    'mount\(NULL, "thread-self/fd/[0-9]+", NULL, MS_RDONLY\|MS_NOSUID\|MS_NODEV\|MS_REMOUNT\|MS_BIND, NULL\) = 0'
  binds=$(grep -cE '", NULL, MS_BIND, NULL\) = 0' <<<"$ST")
  info "$binds bind mounts"
else
  info "strace is not installed: the strategy is proven by the debug log only"
fi
assert_state_dir_empty "[legacy] after the container"
assert_host_mounts_unchanged "[legacy]"

# --- 2. failure half-way: rollback detaches every legacy mount ----------------
# The plan's last mount gets a wrong-type mountpoint in the image, so the
# hook fails after attaching all the others.
make_bundle rollback --env OCI_ONLOAD=all -- 'echo SHOULD-NOT-RUN'
plan=$("$OCID_BIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" --state-dir "$STATE_DIR" \
         plan --bundle "$B" 2>/dev/null)
last_target=$(jq -r '.mounts[-1].target' <<<"$plan")
last_type=$(jq -r '.mounts[-1].type' <<<"$plan")
nmounts=$(jq '.mounts | length' <<<"$plan")
info "plan: $nmounts mounts, last $last_type $last_target"
[[ -n $last_target && $last_target != null ]] || die "no mounts in the plan"
rm -rf "${ROOTFS:?}$last_target"
if [[ $last_type == directory ]]; then
  mkdir -p "$(dirname "$ROOTFS$last_target")" && echo x >"$ROOTFS$last_target"
else
  mkdir -p "$ROOTFS$last_target"
fi
mi_before=$(host_mountinfo)
run_container
echo "# --- a failure after $((nmounts - 1)) legacy mounts"
check "[rollback] container refused" test "$RC" -ne 0
assert_contains "[rollback] the hook names the wrong mountpoint" "$ERR" "$last_target"
assert_not_contains "[rollback] the container did not run" "$OUT" "SHOULD-NOT-RUN"
assert_eq "[rollback] the container's mount table after the hook equals the one before" \
  "$(rootfs_mounts "$INSPECT/$CID.before" "$ROOTFS")" "$(rootfs_mounts "$INSPECT/$CID.after" "$ROOTFS")"
assert_eq "[rollback] the container's whole mount table is as before" \
  "$(sort "$INSPECT/$CID.before")" "$(sort "$INSPECT/$CID.after")"
if [[ $HAVE_STRACE == 1 ]]; then
  ST=$(cat "$INSPECT/$CID.strace")
  binds=$(grep -cE '", NULL, MS_BIND, NULL\) = 0' <<<"$ST")
  detached=$(grep -cE 'umount2\("thread-self/fd/[0-9]+", MNT_DETACH\) = 0' <<<"$ST")
  check "[rollback] mounts were attached before the failure ($binds)" test "$binds" -gt 0
  assert_eq "[rollback] each attached mount was detached by fd" "$binds" "$detached"
fi
assert_eq "[rollback] host mountinfo identical" "$mi_before" "$(host_mountinfo)"
assert_state_dir_empty "[rollback]"

it_finish
