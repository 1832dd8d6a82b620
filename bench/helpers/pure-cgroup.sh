#!/bin/sh
# pure-cgroup.sh v1|v2 CMD [ARG]...: runs CMD in a new private mount namespace
# that looks like a pure cgroup host (shared notes, runtimes.md):
#   v1  the cgroup2 mount at /sys/fs/cgroup/unified is gone (crun refuses
#       hybrid hosts);
#   v2  cgroup2 is mounted over /sys/fs/cgroup (runc on pure v2; a container's
#       cgroup /sys/fs/cgroup/<path> in there is /sys/fs/cgroup/unified/<path>
#       on the host).
# bench/run.sh starts `pure-cgroup.sh MODE sleep N` as the holder of the
# namespace of sections d and e and runs the section in it with nsenter, so the
# runtime, the hooks it runs (blocker.sh) and the hook under test all see the
# same mount table, as in production. The same pid execs all the way to CMD.
set -eu
mode=$1
shift
case $mode in
  v1) prep='if mountpoint -q /sys/fs/cgroup/unified; then umount /sys/fs/cgroup/unified; fi' ;;
  v2) prep='mount -t cgroup2 none /sys/fs/cgroup' ;;
  *) echo "pure-cgroup.sh: MODE is v1 or v2, not $mode" >&2; exit 2 ;;
esac
exec unshare -m --propagation private sh -c "$prep && exec \"\$@\"" sh "$@"
