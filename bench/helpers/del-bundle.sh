#!/bin/sh
# del-bundle.sh N BASE: the untimed teardown of an end-to-end run, sections
# c, d, e (`runc run` / `crun run` already deleted the container; this catches
# a failed run), and of a section-f run (deletes the created container).
# Environment: OCIDB_W, OCIDB_TAG; OCIDB_RUNTIME [runc] and OCIDB_RT_ROOT
# [$OCIDB_W/runc]: the runtime of the section (d: crun, e: runc on cgroup v2).
"${OCIDB_RUNTIME:-runc}" --root "${OCIDB_RT_ROOT:-$OCIDB_W/runc}" delete -f "$OCIDB_TAG-e$1" >/dev/null 2>&1
rm -rf --one-file-system "$2/$1"
exit 0
