#!/bin/sh
# new-bundle.sh N CONFIG BASE: the untimed setup of an end-to-end run,
# sections c, d, e: a fresh bundle BASE/N for `runc run` or `crun run`; and of
# a section-f run (`runc create`, directly or through the runtime shim).
# Environment: OCIDB_W.
set -eu
mkdir "$3/$1"
cp -a "$OCIDB_W/rootfs" "$3/$1/rootfs"
cp "$2" "$3/$1/config.json"
