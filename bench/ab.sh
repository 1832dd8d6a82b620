#!/bin/bash
# bench/ab.sh OLD NEW [RUNS]: the hook's not-asked path, one binary against
# another, interleaved in one run (hookbench), plus each one's instruction
# count (callgrind, when valgrind is installed). For "this change must not
# make the not-asked path slower": OLD is a build of the commit before.
#
# The container: a config.json that does not ask (a few env entries, no
# annotations), the shipped inventories in the config directory, a state
# naming a live process. No root needed: the hook decides "not asked" and
# exits before it would touch anything.
#
# MENTION_MB=N: the config.json also names OCI_ONLOAD in process.args and is
# padded to about N MB (an env value of N MB), so the flag scan finds a
# mention and the decision is made past it: what a mention outside the env
# costs (issue 19: 31 MB cost 200 ms when a mention meant a strict parse).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
OLD=${1:?usage: $0 OLD-BINARY NEW-BINARY [RUNS]}
NEW=${2:?usage: $0 OLD-BINARY NEW-BINARY [RUNS]}
RUNS=${3:-1000}
HOOKBENCH=${HOOKBENCH:-$REPO/build/bench/hookbench}
[[ -x $HOOKBENCH ]] || { echo "ab.sh: no hookbench at $HOOKBENCH (build the bench targets)" >&2; exit 1; }

W=$(mktemp -d /tmp/ocid-ab-XXXXXX)
sleep 1000 & SLEEP_PID=$!
trap 'kill $SLEEP_PID 2>/dev/null; rm -rf "$W"' EXIT
mkdir -p "$W/bundle/rootfs" "$W/config.d" "$W/state"
cp "$REPO"/config/*.json "$W/config.d/"
cat >"$W/bundle/config.json" <<JSON
{"ociVersion": "1.0.2", "root": {"path": "rootfs"},
 "process": {"args": ["sleep", "1000"], "cwd": "/", "user": {"uid": 0, "gid": 0},
             "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                     "HOSTNAME=bench", "TERM=xterm"]},
 "linux": {"namespaces": [{"type": "mount"}, {"type": "pid"}]}}
JSON
if [[ -n ${MENTION_MB:-} ]]; then
  head -c $((MENTION_MB * 1000000)) /dev/zero | tr '\0' p >"$W/pad"
  jq --rawfile pad "$W/pad" '.process.args += ["OCI_ONLOAD=all"] | .process.env += ["PAD=" + $pad]' \
    "$W/bundle/config.json" >"$W/c.new" && mv "$W/c.new" "$W/bundle/config.json"
  rm -f "$W/pad"
fi
printf '{"ociVersion":"1.0.2","id":"ab-%d","status":"creating","pid":%d,"bundle":"%s"}\n' \
  $$ "$SLEEP_PID" "$W/bundle" >"$W/state.json"
args=(--config-dir "$W/config.d" --state-dir "$W/state" hook prestart)
for b in "$OLD" "$NEW"; do
  "$b" "${args[@]}" <"$W/state.json" || { echo "ab.sh: $b failed on a container that did not ask" >&2; exit 1; }
done
"$HOOKBENCH" --runs "$RUNS" --warmup 20 \
  --name old --stdin "$W/state.json" "$OLD" "${args[@]}" :: \
  --name new --stdin "$W/state.json" "$NEW" "${args[@]}"
if command -v valgrind >/dev/null; then
  for b in old new; do
    bin=$OLD; [[ $b == new ]] && bin=$NEW
    n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "${args[@]}" <"$W/state.json" 2>&1 \
        | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p')
    echo "instructions, $b: $n"
  done
fi
