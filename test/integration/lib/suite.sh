# shellcheck shell=bash
# A script's life: it_setup (the root/skip preamble and $T with the
# simulated install), the cleanup chain run at exit, it_finish.
# (Sourced by ../lib.sh, which sets SRC and the tally.)

# it_setup [LAYOUT]: checks preconditions, creates $T with a SIMULATED Onload host
# root ($HOST_ROOT), config dir ($CONF_DIR), state dir ($STATE_DIR), base rootfs
# ($BASE_ROOTFS) and a private runc root.
it_setup() {
  local layout=${1:-lib64}
  [[ $(id -u) -eq 0 ]] || skip_all "needs root (runc, mknod, mounts)"
  command -v runc >/dev/null 2>&1 || skip_all "runc is not installed (apt-get install runc)"
  [[ -n ${OCID_BIN:-} ]] || die "OCID_BIN is not set (path to the oci-decorator binary)"
  [[ -x $OCID_BIN ]] || die "OCID_BIN=$OCID_BIN is not executable"
  OCID_BIN=$(readlink -f "$OCID_BIN")
  command -v jq >/dev/null 2>&1 || die "jq is missing (see test/integration/PACKAGES)"
  [[ -d /sys/fs/cgroup/devices ]] || die "no cgroup v1 devices controller at /sys/fs/cgroup/devices"

  T=$(mktemp -d /tmp/ocid-it.XXXXXX)
  chmod 0755 "$T"   # plan_cli runs as nobody below it
  trap it_cleanup EXIT
  trap 'exit 1' INT TERM
  RUNC_ROOT=$T/runc-root
  CG_PARENT=ocid-it-$(basename "$T" | tr -dc 'A-Za-z0-9')
  STATE_DIR=$T/state
  mkdir -m 0700 "$STATE_DIR"
  CONF_DIR=$T/conf
  mkdir -p "$CONF_DIR" "$T/bundles" "$T/logs"
  cp "$SRC/config/onload.json" "$CONF_DIR/"
  HOST_ROOT=$T/host
  make_sim "$HOST_ROOT" "$layout"
  BASE_ROOTFS=$T/base-rootfs
  bash "$SRC/scripts/make-rootfs.sh" "$BASE_ROOTFS" || die "make-rootfs.sh failed"
  IMAGE_LIBDIR=$(image_libdir "$BASE_ROOTFS")
  [[ -n $IMAGE_LIBDIR ]] || die "the test rootfs has no libc.so.6 in a standard directory"
  IT_MOUNTINFO_START=$(host_mountinfo)
  info "binary $OCID_BIN; temp dir $T"
}

it_cleanup() {
  local rc=$? id d
  for id in "${IT_IDS[@]}"; do
    runc --root "$RUNC_ROOT" delete -f "$id" >/dev/null 2>&1
  done
  # runc leaves the empty parent of cgroupsPath in every hierarchy.
  for d in /sys/fs/cgroup/*/"$CG_PARENT"; do
    [[ -d $d ]] || continue
    find "$d" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
    rmdir "$d" 2>/dev/null || echo "# warning: could not remove cgroup $d" >&2
  done
  # Safety: a mount leaked into the host namespace below $T must never make
  # rm -rf walk into host directories.
  local leaked
  leaked=$(awk -v t="$T/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | sort -r)
  if [[ -n $leaked ]]; then
    echo "FAIL - mounts leaked into the host mount namespace under $T:" >&2
    echo "$leaked" >&2
    while read -r d; do umount -l "$d" 2>/dev/null; done <<<"$leaked"
    rc=1
  fi
  if [[ ${IT_KEEP:-0} == 1 ]]; then
    echo "# kept $T" >&2
  else
    rm -rf --one-file-system "$T"
  fi
  exit "$rc"
}

it_finish() {
  assert_host_mounts_unchanged "over the whole script"
  echo "$IT_PASS passed, $IT_FAIL failed"
  [[ $IT_FAIL -eq 0 ]] && exit 0 || exit 1
}

# it_add_cleanup FN: FN runs at exit, before it_cleanup (last added runs first).
# A step that returns non-zero makes the script fail.
IT_EXTRA_CLEANUPS=()
it_add_cleanup() {
  IT_EXTRA_CLEANUPS=("$1" "${IT_EXTRA_CLEANUPS[@]}")
  trap it_cleanup_chain EXIT
}
it_cleanup_chain() {
  local rc=$? f
  for f in "${IT_EXTRA_CLEANUPS[@]}"; do
    "$f" || rc=1
  done
  (exit "$rc")
  it_cleanup
}

# it_track_new_dirs DIR...: those of DIR... that do not exist now are removed at
# exit if they are then empty directory trees (engines create e.g. /run/runc).
IT_NEW_DIRS=()
it_track_new_dirs() {
  local d
  for d in "$@"; do [[ -e $d ]] || IT_NEW_DIRS+=("$d"); done
  it_add_cleanup it_remove_new_dirs
}
it_remove_new_dirs() {
  local d
  for d in "${IT_NEW_DIRS[@]}"; do
    [[ -d $d && ! -L $d ]] || continue
    find "$d" -depth -type d -empty -delete 2>/dev/null
    [[ -e $d ]] && echo "# warning: $d was created during the test and is not empty: left in place" >&2
  done
  return 0
}
