#!/bin/sh
# new-container.sh N CONFIG BASE: the untimed setup of a section-b run.
# A fresh bundle BASE/N (own rootfs copy, CONFIG with @RUN_DIR@ filled in) and
# `runc create` in the background; returns once runc sits in the blocker
# prestart hook, leaving BASE/N/state.json = the state runc gives prestart hooks.
# Also the setup of the hook-alone runs of sections d (crun) and e (runc on
# cgroup v2), run inside the section's mount namespace.
# Environment (from run.sh): OCIDB_W, OCIDB_TAG, OCIDB_SETTLE; OCIDB_RUNTIME
# [runc] and OCIDB_RT_ROOT [$OCIDB_W/runc]: the runtime and its state root.
set -eu
b=$3/$1
id=$OCIDB_TAG-a$1
rt=${OCIDB_RUNTIME:-runc}
rt_root=${OCIDB_RT_ROOT:-$OCIDB_W/runc}
mkdir "$b"
cp -a "$OCIDB_W/rootfs" "$b/rootfs"
sed "s|@RUN_DIR@|$b|g" "$2" >"$b/config.json"
mkfifo "$b/release"
("$rt" --root "$rt_root" create --bundle "$b" "$id" </dev/null >"$b/create.log" 2>&1
 echo $? >"$b/create.rc") &
i=0
until [ -e "$b/state.json" ]; do
  if [ -e "$b/create.rc" ]; then echo "$rt create failed:" >&2; cat "$b/create.log" >&2; exit 1; fi
  i=$((i + 1))
  [ $i -lt 2000 ] || { echo "$rt create did not reach prestart within 10 s" >&2; exit 1; }
  sleep 0.005
done
# Let the kernel finish tearing down the previous run's container (namespace
# cleanup runs asynchronously) before the timer starts.
sleep "$OCIDB_SETTLE"
