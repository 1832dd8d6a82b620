#!/bin/sh
# del-container.sh N BASE: the untimed teardown of a section-b run (and of
# the hook-alone runs of d and e). Releases the runtime from the blocker hook,
# waits for `runc create` to end, deletes the container, runs oci-decorator's
# poststop (its undo) and removes the bundle.
# Environment (from run.sh): OCIDB_W, OCIDB_TAG, OCIDB_BIN, OCIDB_STATE;
# OCIDB_RUNTIME [runc], OCIDB_RT_ROOT [$OCIDB_W/runc] as for new-container.sh.
b=$2/$1
id=$OCIDB_TAG-a$1
rt=${OCIDB_RUNTIME:-runc}
rt_root=${OCIDB_RT_ROOT:-$OCIDB_W/runc}
# (Not when the create has ended: after run.sh's verify step released it, no
# blocker reads the FIFO any more.)
[ -p "$b/release" ] && [ ! -e "$b/create.rc" ] && timeout 10 sh -c 'echo go >"$1"' _ "$b/release"
i=0
while [ ! -e "$b/create.rc" ] && [ $i -lt 2000 ]; do sleep 0.005; i=$((i + 1)); done
"$rt" --root "$rt_root" delete -f "$id" >/dev/null 2>&1
printf '{"ociVersion":"1.0.2","id":"%s","status":"stopped","bundle":"%s"}\n' "$id" "$b" |
  "$OCIDB_BIN" --config-dir "$OCIDB_W/config.d" --host-root "$OCIDB_W/host" \
    --state-dir "$OCIDB_STATE" hook poststop >/dev/null 2>&1
rm -rf --one-file-system "$b"
exit 0
