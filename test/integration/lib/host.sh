# shellcheck shell=bash
# What the host looks like, to check a test left it as it found it: the
# mount table, the hook's state dir, tree snapshots and hashes, device
# numbers, and the cgroups and mounts engines leave behind.
# (Sourced by ../lib.sh, which sets SRC and the tally.)

# Host mount table without the columns that change by themselves.
host_mountinfo() { sort /proc/self/mountinfo; }

# assert_state_dir_empty DESC [DIR]: the hook's --state-dir holds nothing.
assert_state_dir_empty() {
  assert_eq "$1: hook state dir ${2:-$STATE_DIR} is empty" "" "$(ls -A "${2:-$STATE_DIR}" 2>&1)"
}
# assert_host_mounts_unchanged DESC: host mountinfo equals the one at it_setup.
# A second argument is the table to compare instead of the host's now (a
# suite that leaves some mounts on purpose filters them out first).
assert_host_mounts_unchanged() {  # DESC [MOUNTINFO]
  local now=${2-$(host_mountinfo)}
  if [[ $now == "$IT_MOUNTINFO_START" ]]; then
    ok "$1: host mount table unchanged"
  else
    nok "$1: host mount table changed: $(diff <(echo "$IT_MOUNTINFO_START") <(echo "$now") | grep '^[<>]' | head -6 | tr '\n' '|')"
  fi
}

# Snapshot of a tree: path, type, mode, size (files), link target, sha256.
# Directories carry no size (it changes with entries); mtimes are left out.
tree_snapshot() {  # DIR
  local dir=$1
  (cd "$dir" && find . -printf '%p\t%y\t%m\t%U:%G\t%l\n' | sort | while IFS=$'\t' read -r p y m o l; do
     case $y in
       f) printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$p" f "$m" "$o" "$(stat -c %s "$p")" "$(sha256sum <"$p" | cut -c1-64)" ;;
       l) printf '%s\t%s\t%s\t%s\t->%s\n' "$p" l "$m" "$o" "$l" ;;
       *) printf '%s\t%s\t%s\t%s\n' "$p" "$y" "$m" "$o" ;;
     esac
   done)
}

# Snapshot of a host marker directory in the brief's format plus ctime and hashes.
marker_snapshot() {  # DIR...
  find "$@" -printf '%p %y %s %m %T@ %C@\n' | sort
  find "$@" -type f -exec sha256sum {} + | sort
}

# Device major:minor (decimal) of a host node.
devnum() { printf '%d:%d' "0x$(stat -c %t "$1")" "0x$(stat -c %T "$1")"; }

host_sha() { sha256sum <"$1" | cut -c1-64; }

# v2_restore V2_ROOT SUBTREE_START: removes $CG_PARENT from the cgroup2
# hierarchy and turns off the controllers runc enabled in its root (runc turns
# hugetlb on and leaves its parent cgroup).
v2_restore() {
  local root=$1 start=$2 c
  if [[ -d $root/$CG_PARENT ]]; then
    find "$root/$CG_PARENT" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
    rmdir "$root/$CG_PARENT" 2>/dev/null || echo "# warning: could not remove $root/$CG_PARENT" >&2
  fi
  for c in $(cat "$root/cgroup.subtree_control"); do
    [[ " $start " == *" $c "* ]] && continue
    echo "-$c" >"$root/cgroup.subtree_control" 2>/dev/null \
      || echo "# warning: could not turn $c off in $root/cgroup.subtree_control" >&2
  done
  return 0
}

# cgroups_snapshot NAME: the hierarchies under /sys/fs/cgroup where NAME exists.
cgroups_snapshot() { local d; for d in /sys/fs/cgroup/*/"$1"; do [[ -d $d ]] && echo "$d"; done; }
# remove_new_cgroups NAME BEFORE: removes /sys/fs/cgroup/*/NAME trees (empty
# cgroups only) that are not in BEFORE (a cgroups_snapshot); warns on failure.
remove_new_cgroups() {
  local d
  for d in /sys/fs/cgroup/*/"$1"; do
    [[ -d $d ]] || continue
    grep -qxF "$d" <<<"$2" && continue
    find "$d" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
    rmdir "$d" 2>/dev/null || echo "# warning: could not remove cgroup $d (created during the test)" >&2
  done
  return 0
}

# unmount_under DIR: unmounts (lazily) every mount below DIR, deepest first;
# prints them.
unmount_under() {
  local d
  awk -v t="$1/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r d; do
    echo "$d"
    umount -l "$d" 2>/dev/null
  done
}
