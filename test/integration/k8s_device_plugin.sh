#!/bin/bash
# oci-decorator-device-plugin, Kubernetes mode, against a kubelet stand-in
# (test/standins/kubelet_standin.py, built from the plugin's own .proto) and a
# SIMULATED Onload install:
#   1. the protocol: registration (also when kubelet.sock comes late, and
#      again after a kubelet restart that deletes every socket), options,
#      ListAndWatch, Allocate (valid, unknown, empty, malformed), health
#      following the host (a device node removed and back, a broken
#      inventory), resources that come and go, SIGTERM;
#   2. end to end, as a kubelet and a CRI runtime apply Allocate:
#      a. --allocate mounts: the mounts, devices and envs put into a runc
#         config.json (no hook): Onload works in the container;
#      b. --allocate cdi with --cdi-dir /etc/cdi: the cdi_devices names given
#         to podman --device: Onload works in the container;
#   3. --cdi-dir kept while it runs (a spec removed comes back, Allocate
#      names only specs that are there); without --cdi-dir the default
#      names no CDI device;
#   4. --cdi-dir under the writer's directory rule: a link another user
#      planted is refused at start and nothing behind it is removed; a
#      path re-pointed while the plugin runs never makes Allocate name a
#      preload file in a directory the keeper has not checked.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
plugin_suite kubelet_standin.py
KDIR=$T/kubelet
mkdir -m 0750 "$KDIR" "$T/cdi"

# A second inventory, so that a broken onload.json has a neighbour that
# must stay healthy. Its device is /dev/null's numbers under a new name.
mknod -m 0666 "$HOST_ROOT/dev/ocid_testdev" c 1 3
cat >"$CONF_DIR/testdev.json" <<'JSON'
{"version": "1", "activation_flag": "OCI_TESTDEV", "cdi_kind": "oci-decorator.test/testdev",
 "driver_feature": ["testdev"], "inventory": {"testdev": {"devices": ["ocid_testdev"]}}}
JSON

# Feeds the stand-in's TAP-like lines into this script's counters.
tally() {
  local line
  while IFS= read -r line; do
    case $line in
      "ok   - "*) ok "${line#ok   - }" ;;
      "FAIL - "*) nok "${line#FAIL - }" ;;
      *) echo "#      $line" ;;
    esac
  done
}

PLUGIN_PIDS=()
stop_plugins() {
  local p
  for p in "${PLUGIN_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  return 0
}
it_add_cleanup stop_plugins

echo "# --- --slots is bounded at 1024 (issue 20: memory and messages grow with it)"
out=$("$OCID_PLUGIN" kubernetes --kubelet-dir "$KDIR" --slots 1025 2>&1)
rc=$?
check "--slots 1025: refused at start (exit $rc)" test "$rc" -ne 0
assert_contains "--slots 1025: one line naming the option, the value and the limit" "$out" \
  "--slots: 1025 slots is above the limit of 1024 per resource"

echo "# --- the protocol, against the kubelet stand-in"
start=$SECONDS
tally < <(timeout 120 "$PY" "$STANDIN" scenario --plugin "$OCID_PLUGIN" --kubelet-dir "$KDIR" \
            --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" --cdi-dir "$T/cdi" --slots 16 \
            --plugin-log "$T/logs/scenario.log" 2>&1; echo "# stand-in exit $?")
info "scenario took $((SECONDS - start)) s"
log=$(cat "$T/logs/scenario.log")
assert_contains "plugin log: it watched the kubelet dir" "$log" "watching $KDIR for kubelet.sock"
assert_eq "plugin log: 'waiting for kubelet.sock' once before the kubelet came" 1 \
  "$(awk '/registered /{exit} /waiting for .*kubelet.sock/{n++} END{print n+0}' <<<"$log")"
assert_contains "plugin log: SIGHUP re-checks" "$log" "SIGHUP: re-checking"
assert_match "plugin log: a rejected Register is one line with a retry" "$log" \
  "register [a-z./-]+ with $KDIR/kubelet.sock failed: stand-in: rejected on purpose .*retrying in 1 s"
assert_match "plugin log: the unknown ID is logged on one line" "$log" 'unknown device ID "gpu-7"'
assert_no_match "plugin log: no crash, no internal error" "$log" "internal error|terminate called|Segmentation|Sanitizer"
assert_contains "--cdi-dir: the spec of a removed inventory is removed" "$log" \
  "removed $T/cdi/oci-decorator-testdev.json"
assert_not_contains "--cdi-dir: a broken inventory keeps its spec" "$log" "removed $T/cdi/oci-decorator-onload.json"
assert_eq "--cdi-dir: both specs there at the end, and onload's preload files, 0644" \
  "oci-decorator-onload.all.preload 644 oci-decorator-onload.json 644 oci-decorator-onload.onload-latency.preload 644 oci-decorator-onload.onload-throughput.preload 644 oci-decorator-onload.onload-x4-shared.preload 644 oci-decorator-onload.onload.preload 644 oci-decorator-testdev.json 644" \
  "$(cd "$T/cdi" && stat -c '%n %a' * | tr '\n' ' ' | sed 's/ $//')"
assert_eq "--cdi-dir: the onload device mounts its preload file at /etc/ld.so.preload, no env" \
  "$T/cdi/oci-decorator-onload.onload.preload null" \
  "$(jq -r '.devices[] | select(.name == "onload") | .containerEdits | "\(.mounts[] | select(.containerPath == "/etc/ld.so.preload") | .hostPath) \(.env)"' "$T/cdi/oci-decorator-onload.json")"
assert_eq "--cdi-dir: the preload file lists libonload" "$CDI_LIBONLOAD" "$(cat "$T/cdi/oci-decorator-onload.onload.preload")"
if [[ $IT_FAIL -gt 0 ]]; then sed 's/^/#      plugin: /' "$T/logs/scenario.log" | tail -40; fi

# start_plugin LOG [kubernetes options...]: runs the plugin (no kubelet),
# without any environment.
start_plugin() {
  local logf=$1; shift
  env -i "$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" kubernetes \
    "$@" >>"$logf" 2>&1 &
  PLUGIN_PIDS+=($!)
  PLUGIN_PID=$!
}
stop_plugin() {
  kill -TERM "$PLUGIN_PID" 2>/dev/null
  wait "$PLUGIN_PID"
  assert_eq "the plugin exits 0 on SIGTERM" 0 "$?"
}

echo "# --- a kubelet dir that appears late, one whose socket paths are too long"
LATE=$T/late/device-plugins
start_plugin "$T/logs/late.log" --kubelet-dir "$LATE"
sleep 0.5
check "no kubelet dir: the plugin keeps running" kill -0 "$PLUGIN_PID"
assert_contains "no kubelet dir: logged once" "$(cat "$T/logs/late.log")" "kubelet directory $LATE: No such file or directory; waiting for it"
mkdir -p "$LATE"
check "the dir appears: the onload socket is served there" wait_socket "$LATE/oci-decorator-amd.com_onload.sock"
stop_plugin
assert_eq "SIGTERM without a kubelet: no socket left, the lock directory stays" \
  "oci-decorator-device-plugin" "$(ls -A "$LATE")"
LONG=$T/$(printf 'd%.0s' {1..90})
mkdir -p "$LONG"
start_plugin "$T/logs/long.log" --kubelet-dir "$LONG"
sleep 0.5
check "socket paths too long: the plugin keeps running" kill -0 "$PLUGIN_PID"
stop_plugin
assert_contains "socket paths too long: one line that says so" "$(cat "$T/logs/long.log")" \
  "socket path longer than 107 bytes (use a shorter --kubelet-dir)"

echo "# --- --host-path-root names host paths; the environment changes nothing"
KDIR2=$T/kubelet2
mkdir -m 0750 "$KDIR2"
GRPC_TRACE=all GRPC_VERBOSITY=DEBUG "$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" \
  --host-path-root /hostfs kubernetes --kubelet-dir "$KDIR2" --cdi-dir "$T/cdi2" >"$T/logs/hpr.log" 2>&1 &
PLUGIN_PID=$!
PLUGIN_PIDS+=($!)
check "the onload socket is served" wait_socket "$KDIR2/oci-decorator-amd.com_onload.sock"
resp=$("$PY" "$STANDIN" allocate --socket "$KDIR2/oci-decorator-amd.com_onload.sock" --ids onload-0 2>&1)
stop_plugin
assert_eq "Allocate: every host path under --host-path-root, but the preload file under --cdi-dir" \
  "[\"$T/cdi2/oci-decorator-onload.onload.preload\"]" \
  "$(jq -c '[.container_responses[0] | (.mounts[], .devices[]) | .host_path | select(startswith("/hostfs/") | not)]' <<<"$resp")"
assert_contains "Allocate: libonload.so from /hostfs" "$resp" '"/hostfs/usr/lib64/libonload.so"'
assert_eq "--cdi-dir: every hostPath in the spec under --host-path-root, but the preload files under --cdi-dir" \
  "[\"$T/cdi2/oci-decorator-onload.onload.preload\",\"$T/cdi2/oci-decorator-onload.all.preload\",\"$T/cdi2/oci-decorator-onload.onload-latency.preload\",\"$T/cdi2/oci-decorator-onload.onload-throughput.preload\",\"$T/cdi2/oci-decorator-onload.onload-x4-shared.preload\"]" \
  "$(jq -c '[.. | objects | .hostPath? // empty | select(startswith("/hostfs/") | not)]' "$T/cdi2/oci-decorator-onload.json")"
assert_no_match "GRPC_TRACE/GRPC_VERBOSITY in the environment: no gRPC debug output" \
  "$(cat "$T/logs/hpr.log")" '^[DI][0-9]{4} |grpc_trace|tracer'

echo "# --- --cdi-dir: root's files, mode 0644; what inventories removed meanwhile left goes at start"
KDIR3=$T/kubelet3
mkdir -m 0750 "$KDIR3"
start_plugin "$T/logs/cdi3.log" --kubelet-dir "$KDIR3" --cdi-dir "$T/cdi3"
check "the onload socket is served" wait_socket "$KDIR3/oci-decorator-amd.com_onload.sock"
stop_plugin
spec_sum=$(sha256sum <"$T/cdi3/oci-decorator-onload.json")
# While the plugin is down: an inventory "gone" was removed (its spec and
# preload file as the plugin wrote them, root's), the spec made writable by
# others, a preload file given to another user; the operator's own files.
cp -p "$T/cdi3/oci-decorator-onload.json" "$T/cdi3/oci-decorator-gone.json"
cp -p "$T/cdi3/oci-decorator-onload.onload.preload" "$T/cdi3/oci-decorator-gone.onload.preload"
chmod 0666 "$T/cdi3/oci-decorator-onload.json"
chown 65534:65534 "$T/cdi3/oci-decorator-onload.onload.preload"
echo '{"cdiVersion": "0.3.0", "kind": "example.com/mine", "devices": []}' >"$T/cdi3/oci-decorator-mine.json"
echo '/usr/lib64/mine.so' >"$T/cdi3/oci-decorator-mine.x.preload"
echo 'notes' >"$T/cdi3/README"
start_plugin "$T/logs/cdi3.log" --kubelet-dir "$KDIR3" --cdi-dir "$T/cdi3"
check "the onload socket is served again" wait_socket "$KDIR3/oci-decorator-amd.com_onload.sock"
stop_plugin
assert_eq "--cdi-dir: the 0666 spec and the foreign-owned preload file are root's, 0644, on the next Sync" \
  "oci-decorator-onload.json 644 0:0 oci-decorator-onload.onload.preload 644 0:0" \
  "$(cd "$T/cdi3" && stat -c '%n %a %u:%g' oci-decorator-onload.json oci-decorator-onload.onload.preload | tr '\n' ' ' | sed 's/ $//')"
assert_eq "--cdi-dir: the spec's bytes unchanged" "$spec_sum" "$(sha256sum <"$T/cdi3/oci-decorator-onload.json")"
check_not "--cdi-dir: at start, the spec of an inventory removed meanwhile is removed" \
  test -e "$T/cdi3/oci-decorator-gone.json"
check_not "--cdi-dir: and its preload file" test -e "$T/cdi3/oci-decorator-gone.onload.preload"
assert_contains "--cdi-dir: the removal is logged with why" "$(cat "$T/logs/cdi3.log")" \
  "removed $T/cdi3/oci-decorator-gone.json: no inventory gone.json in $CONF_DIR"
check "--cdi-dir: an operator's spec named like ours (not as the plugin renders it) stays" \
  test -e "$T/cdi3/oci-decorator-mine.json"
check "--cdi-dir: and the preload file next to it" test -e "$T/cdi3/oci-decorator-mine.x.preload"
check "--cdi-dir: an unrelated file stays" test -e "$T/cdi3/README"

echo "# --- --cdi-dir kept while the plugin runs: a deleted spec comes back; Allocate never names a missing one"
# wait_file PATH: up to 5 s for a regular file.
wait_file() {
  local i
  for i in $(seq 1 100); do [[ -f $1 && ! -L $1 ]] && return 0; sleep 0.05; done
  return 1
}
KDIR4=$T/kubelet4
mkdir -m 0750 "$KDIR4"
start_plugin "$T/logs/keep.log" --kubelet-dir "$KDIR4" --cdi-dir "$T/cdi4"
SOCK4=$KDIR4/oci-decorator-amd.com_onload.sock
SPEC4=$T/cdi4/oci-decorator-onload.json
check "the onload socket is served" wait_socket "$SOCK4"
spec_sum=$(sha256sum <"$SPEC4")
rm "$SPEC4"
resp=$("$PY" "$STANDIN" allocate --socket "$SOCK4" --ids onload-0 2>&1)
named=$(jq -r '.container_responses[0].cdi_devices // [] | length' <<<"$resp")
spec_there=$([[ -f $SPEC4 ]] && echo yes || echo no)
check "Allocate right after rm: the CDI device named only if its spec is back ($named named, spec $spec_there)" \
  test "$named" = 0 -o "$spec_there" = yes
check "Allocate right after rm: the mounts answer all the same" \
  test "$(jq '.container_responses[0].mounts | length' <<<"$resp")" -gt 0
check "rm'd spec: back within 5 s" wait_file "$SPEC4"
assert_eq "rm'd spec: the same bytes" "$spec_sum" "$(sha256sum <"$SPEC4")"
# Something in the way (a directory under the spec's name): the keeper
# cannot write, and Allocate must not name the device until it can.
for _ in 1 2 3 4 5; do rm -f "$SPEC4" && mkdir "$SPEC4" 2>/dev/null && break; done
check "a directory stands where the spec was" test -d "$SPEC4"
sleep 0.3
resp=$("$PY" "$STANDIN" allocate --socket "$SOCK4" --ids onload-1 2>&1)
assert_eq "spec not there: Allocate (both) answers the mounts alone" "0 yes" \
  "$(jq -r '.container_responses[0] | "\(.cdi_devices // [] | length) \(if (.mounts | length) > 0 then "yes" else "no" end)"' <<<"$resp")"
assert_eq "spec not there: one log line says so" 1 \
  "$(grep -c "Allocate amd.com/onload: answered without CDI device amd.com/onload=onload (mounts only): $SPEC4" "$T/logs/keep.log")"
rmdir "$SPEC4"
check "the directory gone: the spec is back within 5 s" wait_file "$SPEC4"
assert_eq "and with the same bytes" "$spec_sum" "$(sha256sum <"$SPEC4")"
resp=$("$PY" "$STANDIN" allocate --socket "$SOCK4" --ids onload-2 2>&1)
assert_eq "spec back: Allocate names the CDI device again" "amd.com/onload=onload" \
  "$(jq -r '.container_responses[0].cdi_devices // [] | map(.name) | join(",")' <<<"$resp")"
# SIGHUP re-syncs the directory too (a spec made writable by others).
chmod 0666 "$SPEC4"
kill -HUP "$PLUGIN_PID"
sleep 1
assert_eq "SIGHUP (or the inotify event before it): the spec is 0644 again" 644 "$(stat -c %a "$SPEC4")"
stop_plugin
writes=$(grep -c "wrote $SPEC4" "$T/logs/keep.log")
check "the keeper's own writes did not make it loop: $writes writes of the spec: the first and 3 repairs (at most 6)" \
  test "$writes" -le 6

echo "# --- --cdi-dir under the writer's one directory rule (issue 27, finding 2)"
# listing DIR: every entry below DIR with its inode, owner, mode and sha256.
listing() {
  (cd "$1" && find . -mindepth 1 | sort | while read -r f; do
    printf '%s %s ' "$f" "$(stat -c '%i %u %a' "$f")"
    if [[ -f $f && ! -L $f ]]; then sha256sum <"$f" | cut -c1-16; else echo; fi
  done)
}
# preload_of RESP: "<host path of the /etc/ld.so.preload mount, or none> <LD_PRELOAD env, or null>".
preload_of() {
  jq -r '.container_responses[0] | "\([.mounts[]? | select(.container_path == "/etc/ld.so.preload") | .host_path] | first // "none") \(.envs.LD_PRELOAD)"' <<<"$1"
}
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# (a) A local user plants --cdi-dir as a link in a sticky world-writable
# directory, to root's directory of specs (standing in for /etc/cdi). The
# config has an inventory that yields no spec here: before, the keeper
# removed its files by name through the link.
SCONF=$T/conf-sticky
mkdir -p "$SCONF"
cp "$SRC/config/onload.json" "$SCONF/"
cat >"$SCONF/nospec.json" <<'JSON'
{"version": "1", "activation_flag": "OCI_NOSPEC", "cdi_kind": "oci-decorator.test/nospec",
 "driver_feature": ["nospec"], "inventory": {"nospec": {"devices": ["ocid_nospec_missing"]}}}
JSON
VICTIM=$T/victim-cdi
mkdir -m 0755 "$VICTIM" "$T/sticky"
chmod 1777 "$T/sticky"
cp "$T/cdi4/oci-decorator-onload.json" "$T/cdi4/oci-decorator-onload.onload.preload" "$VICTIM/"
echo '{}' >"$VICTIM/oci-decorator-nospec.json"
echo /usr/lib64/libonload.so >"$VICTIM/oci-decorator-nospec.nospec.preload"
chmod 0644 "$VICTIM"/*
"${NOBODY[@]}" ln -s "$VICTIM" "$T/sticky/cdi" || die "uid 65534 cannot plant the link"
before=$(listing "$VICTIM")
KDIRS=$T/kubelet-sticky
mkdir -m 0750 "$KDIRS"
timeout 5 env -i "$OCID_PLUGIN" --config-dir "$SCONF" --host-root "$HOST_ROOT" --log-target stderr \
  kubernetes --kubelet-dir "$KDIRS" --cdi-dir "$T/sticky/cdi" >"$T/logs/sticky.log" 2>&1
rc=$?
assert_eq "[planted link] refused at start: exit 1" 1 "$rc"
assert_eq "[planted link] with one line" 1 "$(wc -l <"$T/logs/sticky.log")"
assert_contains "[planted link] naming --cdi-dir, the link and its owner" "$(cat "$T/logs/sticky.log")" \
  "error: kubernetes: refusing --cdi-dir $T/sticky/cdi: not following symbolic link $T/sticky/cdi: it belongs to another user (owner 65534)"
assert_eq "[planted link] nothing removed or written in the link's target (root's files listed before and after)" \
  "$before" "$(listing "$VICTIM")"
check_not "[planted link] nothing served" test -e "$KDIRS/oci-decorator-amd.com_onload.sock"

# (b) A healthy start through a link root made ($T/cdilink -> cdireal),
# then root re-points it: Allocate names a preload file only in a directory
# the keeper has checked, never one reached through another user's link.
mkdir -p "$T/cdireal/cdi"
ln -s cdireal "$T/cdilink"
KDIRR=$T/kubelet-repoint
mkdir -m 0750 "$KDIRR"
# No periodic pass (--recheck-interval): what runs a pass here is known.
env -i "$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" --recheck-interval 3600 \
  kubernetes --kubelet-dir "$KDIRR" --allocate mounts --cdi-dir "$T/cdilink/cdi" \
  >>"$T/logs/repoint.log" 2>&1 &
PLUGIN_PIDS+=($!)
PLUGIN_PID=$!
SOCKR=$KDIRR/oci-decorator-amd.com_onload.sock
PRELOADR=$T/cdilink/cdi/oci-decorator-onload.onload.preload
check "[re-pointed] the onload socket is served" wait_socket "$SOCKR"
allocate_r() { "$PY" "$STANDIN" allocate --socket "$SOCKR" --ids onload-0 2>&1; }
assert_eq "[re-pointed] healthy: Allocate mounts the preload file under --cdi-dir, no env" \
  "$PRELOADR null" "$(preload_of "$(allocate_r)")"
# Root points the link at another root directory holding the same files.
mkdir -p "$T/cdireal2"
cp -a "$T/cdireal/cdi" "$T/cdireal2/"
ln -sfn cdireal2 "$T/cdilink.new" && mv -T "$T/cdilink.new" "$T/cdilink"
assert_eq "[re-pointed by root] the first Allocate after: not the preload file (its directory not checked yet), env LD_PRELOAD" \
  "none $CDI_LIBONLOAD" "$(preload_of "$(allocate_r)")"
named=no
for _ in $(seq 1 50); do
  [[ $(preload_of "$(allocate_r)") == "$PRELOADR null" ]] && { named=yes; break; }
  sleep 0.1
done
assert_eq "[re-pointed by root] named again once a pass has checked the new directory" yes "$named"
# Root points it at a link another user made in a sticky directory, to a
# root directory with the same files, current: the user could re-point
# that link at any file before the kubelet mounts what Allocate named.
mkdir -m 1777 "$T/sticky2"
mkdir -p "$T/victim2"
cp -a "$T/cdireal/cdi" "$T/victim2/"
"${NOBODY[@]}" ln -s "$T/victim2" "$T/sticky2/u" || die "uid 65534 cannot plant the link"
before=$(listing "$T/victim2")
ln -sfn sticky2/u "$T/cdilink.new" && mv -T "$T/cdilink.new" "$T/cdilink"
seen=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
  seen+="$(preload_of "$(allocate_r)")|"
  sleep 0.1
done
assert_eq "[re-pointed through a user's link] 10 Allocates: never the preload file, env LD_PRELOAD" \
  "$(printf "none $CDI_LIBONLOAD|%.0s" {1..10})" "$seen"
check "[re-pointed through a user's link] the keeper says so" \
  grep -q "error: CDI directory $T/cdilink/cdi refused: not following symbolic link $T/sticky2/u: it belongs to another user (owner 65534); nothing is written or removed there" "$T/logs/repoint.log"
assert_eq "[re-pointed through a user's link] once while it lasts" 1 \
  "$(grep -c "CDI directory $T/cdilink/cdi refused" "$T/logs/repoint.log")"
assert_eq "[re-pointed through a user's link] nothing removed or written behind it" \
  "$before" "$(listing "$T/victim2")"
# Root's own directory again; then an ancestor made writable by others
# after a pass: refused as Allocate asks.
ln -sfn cdireal "$T/cdilink.new" && mv -T "$T/cdilink.new" "$T/cdilink"
named=no
for _ in $(seq 1 50); do
  [[ $(preload_of "$(allocate_r)") == "$PRELOADR null" ]] && { named=yes; break; }
  sleep 0.1
done
assert_eq "[back to root's directory] named again after a pass" yes "$named"
check "[back to root's directory] the keeper says the directory passes again" \
  grep -q "info: CDI directory $T/cdilink/cdi passes the writer's rule again" "$T/logs/repoint.log"
chmod 0777 "$T/cdireal"
assert_eq "[ancestor made 0777] Allocate: not the preload file, env LD_PRELOAD" \
  "none $CDI_LIBONLOAD" "$(preload_of "$(allocate_r)")"
chmod 0755 "$T/cdireal"
stop_plugin

echo "# --- without --cdi-dir: the default answer names no CDI device; an explicit --allocate both warns once"
KDIR5=$T/kubelet5
mkdir -m 0750 "$KDIR5"
SOCK5=$KDIR5/oci-decorator-amd.com_onload.sock
start_plugin "$T/logs/nocdi.log" --kubelet-dir "$KDIR5"
check "the onload socket is served" wait_socket "$SOCK5"
resp=$("$PY" "$STANDIN" allocate --socket "$SOCK5" --ids onload-0 2>&1)
stop_plugin
assert_eq "default without --cdi-dir: no cdi_devices, the mounts answer" "0 yes" \
  "$(jq -r '.container_responses[0] | "\(.cdi_devices // [] | length) \(if (.mounts | length) > 0 then "yes" else "no" end)"' <<<"$resp")"
assert_not_contains "default without --cdi-dir: no warning" "$(cat "$T/logs/nocdi.log")" "without --cdi-dir"
start_plugin "$T/logs/nocdi-both.log" --kubelet-dir "$KDIR5" --allocate both
check "the onload socket is served" wait_socket "$SOCK5"
resp=$("$PY" "$STANDIN" allocate --socket "$SOCK5" --ids onload-0 2>&1)
stop_plugin
assert_eq "--allocate both without --cdi-dir: the CDI name, as asked" "amd.com/onload=onload" \
  "$(jq -r '.container_responses[0].cdi_devices // [] | map(.name) | join(",")' <<<"$resp")"
assert_eq "--allocate both without --cdi-dir: one warning line naming cdi generate" 1 \
  "$(grep -c "warning: kubernetes: --allocate both without --cdi-dir: .*(oci-decorator cdi generate)" "$T/logs/nocdi-both.log")"

echo "# --- the NIC: NUMA topology in ListAndWatch; no NIC, unhealthy with check's line"
# The simulated NIC (sim-onload.sh) on NUMA node 1, as the stand-in decodes
# ListAndWatch: every onload device carries TopologyInfo {nodes: [{ID: 1}]}
# (api.proto:75-100, Device.topology = 3); testdev needs no NIC: none.
NIC_NUMA=$(readlink -f "$HOST_ROOT/sys/bus/pci/devices/0000:04:00.0")/numa_node
echo 1 >"$NIC_NUMA"
KDIR4=$T/kubelet4
mkdir -m 0750 "$KDIR4"
start_plugin "$T/logs/nic.log" --kubelet-dir "$KDIR4" --slots 4
check "the onload socket is served" wait_socket "$KDIR4/oci-decorator-amd.com_onload.sock"
check "the testdev socket is served" wait_socket "$KDIR4/oci-decorator-oci-decorator.test_testdev.sock"
devs=$("$PY" "$STANDIN" devices --socket "$KDIR4/oci-decorator-amd.com_onload.sock" 2>&1)
assert_eq "ListAndWatch onload: every device Healthy on NUMA node 1" \
  "onload-0 Healthy [\"1\"]|onload-1 Healthy [\"1\"]|onload-2 Healthy [\"1\"]|onload-3 Healthy [\"1\"]" \
  "$(jq -r '[.devices[] | "\(.ID) \(.health) \([.topology.nodes[]?.ID] | tojson)"] | join("|")' <<<"$devs" 2>&1)"
devs=$("$PY" "$STANDIN" devices --socket "$KDIR4/oci-decorator-oci-decorator.test_testdev.sock" 2>&1)
assert_eq "ListAndWatch testdev: no topology" "4 0" \
  "$(jq -r '"\(.devices | length) \([.devices[] | select(.topology)] | length)"' <<<"$devs" 2>&1)"
stop_plugin
echo 0 >"$NIC_NUMA"
# No NIC: `check --json` and `resources --json` say the same line.
mv "$HOST_ROOT/sys/bus/pci/devices/0000:04:00.0" "$T/sim-nic"
CHECK_WHY=$("$OCID_BIN" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" check --json 2>/dev/null |
            jq -r '.inventories[] | select(.file | endswith("/onload.json")) | .features[] | select(.name == "onload") | .reasons[-1]')
assert_eq "no NIC: check fails onload saying why" \
  "no NIC of PCI vendor 0x1924 or 0x10ee in /sys/bus/pci/devices (the inventory's \"needs_nic\")" "$CHECK_WHY"
assert_eq "no NIC: resources --json: amd.com/onload unhealthy with check's line, testdev healthy" \
  "amd.com/onload false $CHECK_WHY|oci-decorator.test/testdev true null" \
  "$("$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" resources --json 2>/dev/null |
     jq -r '[.[] | select(.kubernetes == "amd.com/onload" or .kubernetes == "oci-decorator.test/testdev") | "\(.kubernetes) \(.healthy) \(.why)"] | join("|")')"
mv "$T/sim-nic" "$HOST_ROOT/sys/bus/pci/devices/0000:04:00.0"

echo "# --- end to end (a): --allocate mounts, applied to a runc config.json as a CRI runtime does"
rm -f "$KDIR"/*
start_plugin "$T/logs/mounts.log" --kubelet-dir "$KDIR" --allocate mounts
SOCK=$KDIR/oci-decorator-amd.com_onload.sock
check "the onload socket is served" wait_socket "$SOCK"
resp=$("$PY" "$STANDIN" allocate --socket "$SOCK" --ids onload-3 2>&1)
assert_eq "Allocate onload-3 answers" 0 "$?"
stop_plugin
assert_eq "mounts mode: no cdi_devices" 0 "$(jq '.container_responses[0].cdi_devices // [] | length' <<<"$resp")"
assert_eq "mounts mode: the same mounts as the CDI spec's onload device (one plan; its preload file is the answer's LD_PRELOAD)" \
  "$(jq -c '[.devices[] | select(.name == "onload") | .containerEdits.mounts[] | select(.containerPath != "/etc/ld.so.preload") | [.hostPath, .containerPath]] | sort' "$T/cdi/oci-decorator-onload.json")" \
  "$(jq -c '[.container_responses[0].mounts[] | [.host_path, .container_path]] | sort' <<<"$resp")"
# What containerd's CRI plugin makes of a ContainerAllocateResponse: each
# Mount a bind mount (ro when read_only), each DeviceSpec a linux.devices
# entry with the host node's type and numbers plus an allow rule with its
# permissions, each env appended to process.env. allocate_into_bundle RESP
# applies the first container's answer to $B/config.json.
allocate_into_bundle() {
  local resp=$1 devs='[]' cpath hpath perms maj min
  while IFS=$'\t' read -r cpath hpath perms; do
    [[ -c $hpath ]] || { nok "Allocate device $hpath is a character device on the host"; continue; }
    maj=$((16#$(stat -c %t "$hpath"))); min=$((16#$(stat -c %T "$hpath")))
    devs=$(jq --arg c "$cpath" --argjson ma "$maj" --argjson mi "$min" --arg p "$perms" \
             '. + [{path: $c, type: "c", major: $ma, minor: $mi, fileMode: 438, uid: 0, gid: 0, access: $p}]' <<<"$devs")
  done < <(jq -r '.container_responses[0].devices[] | [.container_path, .host_path, .permissions] | @tsv' <<<"$resp")
  assert_eq "Allocate gives the three Onload device nodes" "/dev/onload /dev/onload_epoll /dev/sfc_char" \
    "$(jq -r '[.[].path] | sort | join(" ")' <<<"$devs")"
  jq --argjson resp "$resp" --argjson devs "$devs" "$(cat <<'JQ'
    .mounts += [$resp.container_responses[0].mounts[] |
        {destination: .container_path, source: .host_path, type: "bind",
         options: (["rbind", "rprivate"] + (if .read_only then ["ro"] else [] end))}]
    | .linux.devices = ((.linux.devices // []) + [$devs[] | del(.access)])
    | .linux.resources.devices += [$devs[] | {allow: true, type, major, minor, access}]
    | .process.env += [$resp.container_responses[0].envs // {} | to_entries[] | "\(.key)=\(.value)"]
JQ
)" "$B/config.json" >"$B/config.json.k8s" && mv "$B/config.json.k8s" "$B/config.json"
}
make_bundle k8s-mounts --no-hook -- "$(onload_probe "$CDI_LIBDIRS")"
allocate_into_bundle "$resp"
run_container
assert_eq "[mounts] runc run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload onload mounts "$HOST_ROOT" "$CDI_LIBDIRS" bind
assert_host_mounts_unchanged "[mounts] after the container"

echo "# --- end to end (a2): --allocate mounts --cdi-dir: an image's own LD_PRELOAD survives"
# Issue 20, finding 11: with --cdi-dir the answer mounts the CDI writer's
# preload file at /etc/ld.so.preload instead of setting env LD_PRELOAD,
# which would replace the container's own. glibc loads both.
command -v cc >/dev/null 2>&1 || die "cc is missing (see test/integration/PACKAGES)"
printf '#include <stdio.h>\n__attribute__((constructor)) static void mine(void) { fprintf(stdout, "MINE preloaded\\n"); fflush(stdout); }\n' >"$T/mine.c"
cc -shared -fPIC -o "$T/libmine.so" "$T/mine.c" || die "cannot build libmine.so"
mkdir -p "$BASE_ROOTFS/opt/mine"
cp "$T/libmine.so" "$BASE_ROOTFS/opt/mine/libmine.so"
mkdir -m 0750 "$T/cdi5"
rm -f "$KDIR"/*
start_plugin "$T/logs/mounts-cdi.log" --kubelet-dir "$KDIR" --allocate mounts --cdi-dir "$T/cdi5"
check "the onload socket is served" wait_socket "$SOCK"
resp=$("$PY" "$STANDIN" allocate --socket "$SOCK" --ids onload-4 2>&1)
assert_eq "Allocate onload-4 answers" 0 "$?"
stop_plugin
assert_eq "mounts mode with --cdi-dir: /etc/ld.so.preload from the CDI preload file, no LD_PRELOAD env" \
  "$T/cdi5/oci-decorator-onload.onload.preload true null" \
  "$(jq -r '.container_responses[0] | "\(.mounts[] | select(.container_path == "/etc/ld.so.preload") | "\(.host_path) \(.read_only)") \(.envs.LD_PRELOAD)"' <<<"$resp")"
make_bundle k8s-mounts-own --no-hook --env LD_PRELOAD=/opt/mine/libmine.so -- "$(onload_probe "$CDI_LIBDIRS")"
allocate_into_bundle "$resp"
run_container
assert_eq "[mounts, own LD_PRELOAD] runc run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[mounts, own LD_PRELOAD] /etc/ld.so.preload lists libonload" "$CDI_LIBONLOAD" "$(field PRELOAD)"
assert_eq "[mounts, own LD_PRELOAD] the image's LD_PRELOAD is kept" /opt/mine/libmine.so "$(field LDP)"
assert_contains "[mounts, own LD_PRELOAD] dyn-hello loads the image's library" "$(field DYN)" "MINE preloaded"
assert_contains "[mounts, own LD_PRELOAD] and the SIMULATED libonload" "$(field DYN)" \
  "SIMULATED libonload: preloaded into /usr/bin/dyn-hello"
assert_host_mounts_unchanged "[mounts, own LD_PRELOAD] after the container"

echo "# --- end to end (b): --allocate cdi --cdi-dir /etc/cdi, the names given to podman --device"
if ! command -v podman >/dev/null 2>&1; then
  info "podman is not installed: the CDI end to end is not run"
else
  podman_setup
  RUN_TAG=$(basename "$T" | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z')
  KCONF=$T/conf-cdi
  mkdir -p "$KCONF"
  # A kind and spec file unique to this run: /etc/cdi is the host's.
  jq --arg k "oci-decorator.test/k8s$RUN_TAG" '.cdi_kind = $k' "$SRC/config/onload.json" \
    >"$KCONF/k8s$RUN_TAG.json"
  SPEC=/etc/cdi/oci-decorator-k8s$RUN_TAG.json
  it_track_new_dirs /etc/cdi
  cdi_cleanup() { rm -f "$SPEC" /etc/cdi/oci-decorator-k8s"$RUN_TAG".*.preload; }
  it_add_cleanup cdi_cleanup
  rm -f "$KDIR"/*
  env -i "$OCID_PLUGIN" --config-dir "$KCONF" --host-root "$HOST_ROOT" kubernetes \
    --kubelet-dir "$KDIR" --allocate cdi --cdi-dir /etc/cdi >>"$T/logs/cdi.log" 2>&1 &
  PLUGIN_PID=$!
  PLUGIN_PIDS+=($!)
  SOCK=$KDIR/oci-decorator-oci-decorator.test_onload.sock
  check "the onload socket is served" wait_socket "$SOCK"
  check "the plugin wrote $SPEC" test -f "$SPEC"
  resp=$("$PY" "$STANDIN" allocate --socket "$SOCK" --ids onload-0 2>&1)
  assert_eq "Allocate onload-0 answers" 0 "$?"
  stop_plugin
  assert_eq "cdi mode: no mounts or devices, one CDI device" "0 0 oci-decorator.test/k8s$RUN_TAG=onload" \
    "$(jq -r '.container_responses[0] | "\(.mounts // [] | length) \(.devices // [] | length) \(.cdi_devices | map(.name) | join(","))"' <<<"$resp")"
  check "SIGTERM leaves the CDI spec in place (pods still resolve it)" test -f "$SPEC"
  devopts=()
  for n in $(jq -r '.container_responses[0].cdi_devices[].name' <<<"$resp"); do devopts+=(--device "$n"); done
  mkdir -p "$T/empty-hooks.d"
  run_podman runc --hooks-dir "$T/empty-hooks.d" -- "${devopts[@]}" -- "$(onload_probe "$CDI_LIBDIRS")"
  assert_eq "[cdi] podman run ${devopts[*]} exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_onload onload cdi "$HOST_ROOT" "$CDI_LIBDIRS" cdi
  assert_host_mounts_unchanged "[cdi] after the container"

  echo "# --- end to end (c): --allocate both (the default): mounts, devices, envs and the CDI device together"
  rm -f "$KDIR"/*
  env -i "$OCID_PLUGIN" --config-dir "$KCONF" --host-root "$HOST_ROOT" kubernetes \
    --kubelet-dir "$KDIR" --cdi-dir /etc/cdi >>"$T/logs/both.log" 2>&1 &
  PLUGIN_PID=$!
  PLUGIN_PIDS+=($!)
  check "the onload socket is served" wait_socket "$SOCK"
  resp=$("$PY" "$STANDIN" allocate --socket "$SOCK" --ids onload-5 2>&1)
  assert_eq "Allocate onload-5 answers" 0 "$?"
  stop_plugin
  # The runtime gets both: podman's own options for what the kubelet passes
  # in the CRI request, and the CDI device, whose edits replace entries with
  # the same container path.
  both=("${devopts[@]}")
  while IFS=$'\t' read -r c h ro; do both+=(-v "$h:$c:$([[ $ro == true ]] && echo ro || echo rw)"); done \
    < <(jq -r '.container_responses[0].mounts[] | [.container_path, .host_path, (.read_only // false | tostring)] | @tsv' <<<"$resp")
  while IFS=$'\t' read -r c h p; do both+=(--device "$h:$c:$p"); done \
    < <(jq -r '.container_responses[0].devices[] | [.container_path, .host_path, .permissions] | @tsv' <<<"$resp")
  while IFS= read -r e; do both+=(-e "$e"); done \
    < <(jq -r '.container_responses[0].envs // {} | to_entries[] | "\(.key)=\(.value)"' <<<"$resp")
  # One plan, two renderings: the answer's mounts and devices are the CDI
  # device's, one for one, its /etc/ld.so.preload the same preload file;
  # no LD_PRELOAD in envs (it would replace the container's own).
  assert_eq "both mode: as many mounts and devices as the CDI device, one CDI name" \
    "$(jq -r '.devices[] | select(.name == "onload") | .containerEdits | "\(.mounts | length) \(.deviceNodes | length) \(.env // [] | length) 1"' "$SPEC")" \
    "$(jq -r '.container_responses[0] | "\(.mounts | length) \(.devices | length) \(.envs // {} | length) \(.cdi_devices | length)"' <<<"$resp")"
  assert_eq "both mode: the answer's /etc/ld.so.preload is the CDI device's preload file" \
    "$(jq -r '.devices[] | select(.name == "onload") | .containerEdits.mounts[] | select(.containerPath == "/etc/ld.so.preload") | .hostPath' "$SPEC")" \
    "$(jq -r '.container_responses[0].mounts[] | select(.container_path == "/etc/ld.so.preload") | .host_path' <<<"$resp")"
  run_podman runc --hooks-dir "$T/empty-hooks.d" -- "${both[@]}" -- "$(onload_probe "$CDI_LIBDIRS")"
  assert_eq "[both] podman run with both exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_onload onload both "$HOST_ROOT" "$CDI_LIBDIRS" cdi
  assert_host_mounts_unchanged "[both] after the container"
fi

# The sanitizer build: any report in any of the plugin's logs fails the test.
for f in "$T"/logs/*.log; do sanitizer_check "$(cat "$f")"; done

it_finish
