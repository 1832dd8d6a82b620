#!/bin/sh
# Prestart hook of the section-b benchmark containers (bench/run.sh), and of
# sections d (crun) and e (runc on cgroup v2).
# $1: the run dir. Hands runc's prestart state over in $1/state.json, then
# keeps the runtime in the prestart phase until someone writes to the
# $1/release FIFO.
# While it waits, the container is exactly as oci-decorator finds it in
# production: namespaces and mounts made, pivot_root not yet done.
cat >"$1/state.json.tmp" && mv "$1/state.json.tmp" "$1/state.json"
read -r _ <"$1/release"
