#!/bin/sh
# del-bundle.sh N BASE: the untimed teardown of a section-c run (`runc run`
# already deleted the container; this catches a failed run).
# Environment: OCIDB_W, OCIDB_TAG.
runc --root "$OCIDB_W/runc" delete -f "$OCIDB_TAG-e$1" >/dev/null 2>&1
rm -rf --one-file-system "$2/$1"
exit 0
