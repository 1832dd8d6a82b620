#!/bin/bash
# The runtime shim with real docker 20.10 (docker.io): a private dockerd
# (data root, exec root, socket, pidfile under $T; no iptables, no bridge)
# whose daemon.json gets the runtime from `oci-decorator setup docker`, with
# the shim's settings added as "runtimeArgs". A busybox image imported from
# make-rootfs.sh's tree runs against the SIMULATED Onload install:
#   1. setup docker keeps the other keys and runtimes and backs the file up;
#      a second run changes nothing and keeps runtimeArgs;
#   2. OCI_ONLOAD=all: files read-only, devices openable (ENXIO, not EPERM),
#      LD_PRELOAD set, dyn-hello gets the SIMULATED libonload;
#   3. OCI_ONLOAD=zf: only TCPDirect; no variable (or another one): untouched;
#   4. a required file missing on the host: `docker run` fails with the
#      shim's line in docker's error; containers that did not ask still run;
#   5. durability: `docker update --memory` of a running activated container
#      keeps the devices openable (`docker exec`);
#   6. `setup docker --default-runtime`, dockerd reloaded: a plain
#      `docker run -e OCI_ONLOAD=all` gets Onload, a plain `docker run` is
#      untouched; --no-default-runtime gives runc back; an operator's own
#      default is refused, or (--wrap-default) run by the shim for every
#      container and given back.
# dockerd is stopped by its recorded pid; its cgroups (under a test-only
# "cgroup-parent"), mounts and the directories it creates on the host
# (/run/docker, /run/containerd, /opt/containerd) are removed.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
engine_preflight
command -v dockerd >/dev/null 2>&1 || skip_all "dockerd is not installed (apt-get install docker.io)"
it_setup lib64

docker_setup
mkdir -p "$T/bin"
ln -s "$OCID_BIN" "$T/bin/oci-decorator-runtime"
SHIM=$T/bin/oci-decorator-runtime
RUNC=$(command -v runc)
SHIM_LOG=$T/logs/shim.log
HOST_MISSING=$T/host-missing
make_sim "$HOST_MISSING"
rm -f "$HOST_MISSING/usr/bin/onload"

# --- 1. daemon.json from `setup docker` --------------------------------------------------
echo "# --- 1. setup docker --config $T/daemon.json"
DAEMON_JSON=$T/daemon.json
# Pre-seeded: keys the test needs (cgroups under $CG_PARENT, docker's key
# file under $T) and another runtime, all to be kept.
jq -n --arg cg "/$CG_PARENT" --arg key "$T/key.json" --arg runc "$RUNC" '{
    "log-level": "warn", "cgroup-parent": $cg, "deprecated-key-path": $key,
    "runtimes": {"keep-me": {"path": $runc}}}' >"$DAEMON_JSON"
cp "$DAEMON_JSON" "$T/daemon.json.orig"
out=$("$OCID_BIN" setup docker --config "$DAEMON_JSON" --runtime-path "$SHIM" 2>&1)
assert_eq "setup docker exits 0" 0 "$?"
assert_eq "runtime oci-decorator registered with the shim's path" "$SHIM" \
  "$(jq -r '.runtimes["oci-decorator"].path' "$DAEMON_JSON")"
assert_eq "the other keys are kept" \
  "$(jq -S 'del(.runtimes["oci-decorator"])' "$T/daemon.json.orig")" "$(jq -S 'del(.runtimes["oci-decorator"])' "$DAEMON_JSON")"
assert_eq "log-level kept" warn "$(jq -r '.["log-level"]' "$DAEMON_JSON")"
backups=$(ls "$T"/daemon.json.bak.* 2>/dev/null)
assert_eq "one backup daemon.json.bak.<time>" 1 "$(grep -c . <<<"$backups")"
check "the backup is the original file" cmp -s "$T/daemon.json.orig" "$(head -1 <<<"$backups")"
assert_contains "setup says it backed the file up" "$out" "backed up to $(head -1 <<<"$backups")"
# A second runtime with a host root lacking a required file (case 4).
sleep 1   # backups are named by the second
"$OCID_BIN" setup docker --config "$DAEMON_JSON" --runtime-name ocid-missing --runtime-path "$SHIM" >/dev/null 2>&1
assert_eq "setup --runtime-name adds a second runtime" "$SHIM" "$(jq -r '.runtimes["ocid-missing"].path' "$DAEMON_JSON")"
# setup has no option for runtimeArgs: the shim's settings are added with jq.
jq --arg h "$HOST_ROOT" --arg m "$HOST_MISSING" --arg c "$CONF_DIR" --arg log "$SHIM_LOG" '
    .runtimes["oci-decorator"].runtimeArgs = ["--ocid-host-root", $h, "--ocid-config-dir", $c, "--ocid-log-file", $log]
  | .runtimes["ocid-missing"].runtimeArgs = ["--ocid-host-root", $m, "--ocid-config-dir", $c]' \
  "$DAEMON_JSON" >"$DAEMON_JSON.new" && mv "$DAEMON_JSON.new" "$DAEMON_JSON" || die "jq edit of daemon.json failed"
before=$(cat "$DAEMON_JSON")
nbak=$(ls "$T"/daemon.json.bak.* | wc -l)
out=$("$OCID_BIN" setup docker --config "$DAEMON_JSON" --runtime-path "$SHIM" 2>&1)
assert_eq "setup again exits 0" 0 "$?"
assert_contains "setup again: nothing to do" "$out" "nothing to do"
assert_eq "setup again leaves the file (runtimeArgs included) unchanged" "$before" "$(cat "$DAEMON_JSON")"
assert_eq "setup again makes no backup" "$nbak" "$(ls "$T"/daemon.json.bak.* | wc -l)"
info "daemon.json: $(jq -c . "$DAEMON_JSON")"

# --- dockerd ---------------------------------------------------------------------------
echo "# --- dockerd"
docker_start "$DAEMON_JSON"
assert_eq "dockerd's pidfile has the pid we started" "$DOCKERD_PID" "$(cat "$T/docker.pid")"
assert_contains "dockerd lists the runtime" "$(dk info --format '{{json .Runtimes}}')" '"oci-decorator"'
info "$("$DOCKER" --version); $(dk version --format 'server {{.Server.Version}}, containerd {{range .Server.Components}}{{if eq .Name "containerd"}}{{.Version}}{{end}}{{end}}')"

tar -C "$BASE_ROOTFS" -cf "$T/bb.tar" . || die "tar of the rootfs failed"
dk import "$T/bb.tar" local/ocid-bb:1 >/dev/null || die "docker import failed"

PROBE=$(onload_probe "$IMAGE_LIBDIR")
# run_docker NAME [docker run options...]: runs the probe with --rm; sets RC, OUT, ERR, DID (container id).
run_docker() {
  local name=$1; shift
  rm -f "$T/cid-$name"
  dk run --rm --network=none --cidfile "$T/cid-$name" "$@" local/ocid-bb:1 sh -c "$PROBE" \
    </dev/null >"$T/out-$name" 2>"$T/err-$name"
  RC=$?
  OUT=$(cat "$T/out-$name")
  ERR=$(cat "$T/err-$name")
  DID=$(cat "$T/cid-$name" 2>/dev/null)
}

# --- 2. OCI_ONLOAD=all ------------------------------------------------------------------
echo "# --- 2. docker run --runtime=oci-decorator -e OCI_ONLOAD=all"
run_docker all --runtime=oci-decorator -e OCI_ONLOAD=all
assert_eq "[all] docker run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all all "$HOST_ROOT" "$IMAGE_LIBDIR" spec
assert_contains "[all] the shim's log has its line for the container" "$(cat "$SHIM_LOG" 2>/dev/null)" \
  "container $DID: edited"

# --- 3. zf only; not asked -----------------------------------------------------------------
echo "# --- 3. OCI_ONLOAD=zf; no variable"
run_docker zf --runtime=oci-decorator -e OCI_ONLOAD=zf
assert_eq "[zf] docker run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload zf zf "$HOST_ROOT" "$IMAGE_LIBDIR" spec

run_docker plain --runtime=oci-decorator
assert_eq "[not asked] docker run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload none "not asked" "$HOST_ROOT" "$IMAGE_LIBDIR" spec
assert_not_contains "[not asked] no shim line for the container" "$(cat "$SHIM_LOG" 2>/dev/null)" "container $DID"

run_docker other --runtime=oci-decorator -e OCI_ONLOADX=all
assert_eq "[other variable] docker run exits 0" 0 "$RC"
expect_onload none "other variable" "$HOST_ROOT" "$IMAGE_LIBDIR" spec

# --- 4. a required file missing on the host ---------------------------------------------
echo "# --- 4. --runtime=ocid-missing (no /usr/bin/onload on its host root)"
run_docker missing --runtime=ocid-missing -e OCI_ONLOAD=all
assert_eq "[missing file] docker run exits 125 (daemon error)" 125 "$RC"
assert_match "[missing file] docker's error carries the shim's line" "$ERR" \
  "OCI runtime create failed: oci-decorator: container [0-9a-f]{64}: refused: required binaries entry of feature \"onload\" not found on the host .*: $HOST_MISSING/usr/bin/onload"
info "docker's error: $ERR"
assert_eq "[missing file] no container left" "" "$(dk ps -aq)"
run_docker missing-plain --runtime=ocid-missing
assert_eq "[missing file, not asked] the container runs" 0 "$RC"
expect_onload none "missing file, not asked" "$HOST_MISSING" "$IMAGE_LIBDIR" spec

# --- 5. durability: docker update of a running activated container -------------------------
echo "# --- 5. docker update --memory of a running container, then docker exec"
open_onload() {  # ID: what opening /dev/onload in the running container gives
  local out
  out=$(dk exec "$1" cat /dev/onload 2>&1 </dev/null)
  case $out in
    *"No such device"*) echo openable ;;
    *"Operation not permitted"*) echo EPERM ;;
    *) echo "other: $out" ;;
  esac
}
id=$(dk run -d --runtime=oci-decorator --network=none -e OCI_ONLOAD=all local/ocid-bb:1 sleep 60 2>"$T/err-durable")
assert_eq "[durable] docker run -d exits 0" 0 "$?"
[[ -n $id ]] || info "docker run -d: $(cat "$T/err-durable")"
for i in $(seq 1 100); do
  [[ $(dk inspect -f '{{.State.Running}}' "$id" 2>/dev/null) == true ]] && break
  sleep 0.1
done
cfg=$T/exec/containerd/daemon/io.containerd.runtime.v2.task/moby/$id/config.json
IFS=: read -r MAJ MIN <<<"$(devnum "$HOST_ROOT/dev/onload")"
assert_eq "[durable] the bundle's config.json has the /dev/onload device and its allow rule" \
  "c $MAJ $MIN rw" \
  "$(jq -r --argjson M "$MAJ" '[(.linux.devices[] | select(.path == "/dev/onload") | .type, .major, .minor),
                              (.linux.resources.devices[] | select(.allow and .major == $M) | .access)] | join(" ")' "$cfg" 2>/dev/null)"
before=$(open_onload "$id")
dk update --memory 64m --memory-swap 128m "$id" >/dev/null 2>"$T/err-update"
assert_eq "[durable] docker update exits 0" 0 "$?"
assert_eq "[durable] the memory limit applied" 67108864 \
  "$(cat "/sys/fs/cgroup/memory/$CG_PARENT/$id/memory.limit_in_bytes" 2>/dev/null)"
after=$(open_onload "$id")
info "RECORDED: docker update, /dev/onload before -> after: $before -> $after"
assert_eq "[durable] /dev/onload openable (ENXIO, not EPERM) before and after docker update" \
  "openable -> openable" "$before -> $after"
assert_eq "[durable] docker exec has no LD_PRELOAD (its env comes from docker, not config.json)" unset \
  "$(dk exec "$id" sh -c 'echo ${LD_PRELOAD:-unset}' 2>&1)"
dk rm -f "$id" >/dev/null 2>&1

# --- 6. the shim as docker's default runtime: `docker run -e OCI_ONLOAD=all` as written ------
echo "# --- 6. setup docker --default-runtime; plain docker run"
# reload_default NAME: SIGHUP dockerd (as `systemctl reload docker` does) and
# wait until it reports NAME as its default runtime; prints what it reports.
reload_default() {
  local now=
  kill -HUP "$DOCKERD_PID"
  for _ in $(seq 1 50); do
    now=$(dk info --format '{{.DefaultRuntime}}' 2>/dev/null)
    [[ $now == "$1" ]] && break
    sleep 0.1
  done
  echo "$now"
}
keys_but_default() { jq -S 'del(.["default-runtime"])' "$DAEMON_JSON"; }
before_keys=$(keys_but_default)
nbak=$(ls "$T"/daemon.json.bak.* | wc -l)
out=$("$OCID_BIN" setup docker --config "$DAEMON_JSON" --runtime-path "$SHIM" --default-runtime 2>&1)
assert_eq "[default] setup --default-runtime exits 0" 0 "$?"
assert_eq "[default] daemon.json's default-runtime is the shim's name" oci-decorator \
  "$(jq -r '.["default-runtime"]' "$DAEMON_JSON")"
assert_eq "[default] every other key and runtime (runtimeArgs included) kept" "$before_keys" "$(keys_but_default)"
assert_eq "[default] one more backup" "$((nbak + 1))" "$(ls "$T"/daemon.json.bak.* | wc -l)"
assert_contains "[default] setup shows the plain docker run" "$out" "docker run -e OCI_ONLOAD=all IMAGE"
assert_eq "[default] dockerd reloaded (SIGHUP) reports the shim as its default" oci-decorator \
  "$(reload_default oci-decorator)"
run_docker dflt-all -e OCI_ONLOAD=all
assert_eq "[default] docker run -e OCI_ONLOAD=all (no --runtime) exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all "default, all" "$HOST_ROOT" "$IMAGE_LIBDIR" spec
assert_contains "[default] the shim edited it" "$(cat "$SHIM_LOG" 2>/dev/null)" "container $DID: edited"
run_docker dflt-plain
assert_eq "[default] a plain docker run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload none "default, not asked" "$HOST_ROOT" "$IMAGE_LIBDIR" spec
assert_not_contains "[default, not asked] no shim line for the container" "$(cat "$SHIM_LOG" 2>/dev/null)" "container $DID"
run_docker dflt-runc --runtime=runc -e OCI_ONLOAD=all
assert_eq "[default] --runtime=runc still bypasses the shim" 0 "$RC"
expect_onload none "default, --runtime=runc" "$HOST_ROOT" "$IMAGE_LIBDIR" spec

out=$("$OCID_BIN" setup docker --config "$DAEMON_JSON" --runtime-path "$SHIM" --no-default-runtime 2>&1)
assert_eq "[undo] setup --no-default-runtime exits 0" 0 "$?"
# Written out, not removed: dockerd's reload keeps its default when the key is absent.
assert_eq "[undo] default-runtime is runc again, written out" runc "$(jq -r '.["default-runtime"]' "$DAEMON_JSON")"
assert_eq "[undo] the runtime stays registered" "$SHIM" "$(jq -r '.runtimes["oci-decorator"].path' "$DAEMON_JSON")"
assert_eq "[undo] dockerd reloaded reports runc" runc "$(reload_default runc)"
run_docker undo-all -e OCI_ONLOAD=all
assert_eq "[undo] docker run -e OCI_ONLOAD=all exits 0" 0 "$RC"
expect_onload none "undone, asked without --runtime" "$HOST_ROOT" "$IMAGE_LIBDIR" spec

echo "# --- 6b. an operator's own default runtime: refused, or run by the shim (--wrap-default)"
# The operator's runtime: runc behind a script that leaves a mark per command.
MARKS=$T/own-runtime.marks
cat >"$T/bin/own-runtime" <<SH
#!/bin/sh
echo "\$*" >>$MARKS
exec $RUNC "\$@"
SH
chmod 0755 "$T/bin/own-runtime"
jq --arg p "$T/bin/own-runtime" '.runtimes["own"] = {"path": $p} | .["default-runtime"] = "own"' \
  "$DAEMON_JSON" >"$DAEMON_JSON.new" && mv "$DAEMON_JSON.new" "$DAEMON_JSON" || die "jq edit of daemon.json failed"
assert_eq "[own] dockerd reloaded reports its own default" own "$(reload_default own)"
before=$(cat "$DAEMON_JSON")
out=$("$OCID_BIN" setup docker --config "$DAEMON_JSON" --runtime-path "$SHIM" --default-runtime 2>&1)
assert_eq "[own] setup --default-runtime over it exits 1" 1 "$?"
assert_contains "[own] the line names it and the way out" "$out" \
  "--default-runtime would replace docker's default runtime \"own\" (add --wrap-default"
assert_eq "[own] daemon.json untouched" "$before" "$(cat "$DAEMON_JSON")"
out=$("$OCID_BIN" setup docker --config "$DAEMON_JSON" --runtime-path "$SHIM" --default-runtime --wrap-default 2>&1)
assert_eq "[own] setup --default-runtime --wrap-default exits 0" 0 "$?"
assert_eq "[own] the shim is the default, running the operator's runtime first in its runtimeArgs" \
  "oci-decorator --ocid-runtime=$T/bin/own-runtime --ocid-host-root" \
  "$(jq -r '[.["default-runtime"], .runtimes["oci-decorator"].runtimeArgs[0,1]] | join(" ")' "$DAEMON_JSON")"
assert_eq "[own] dockerd reloaded reports the shim" oci-decorator "$(reload_default oci-decorator)"
: >"$MARKS"
run_docker own-all -e OCI_ONLOAD=all
assert_eq "[own] docker run -e OCI_ONLOAD=all exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all "wrapped own runtime, all" "$HOST_ROOT" "$IMAGE_LIBDIR" spec
assert_contains "[own] the operator's runtime created it" "$(cat "$MARKS")" "create"
: >"$MARKS"
run_docker own-plain
assert_eq "[own] a plain docker run exits 0" 0 "$RC"
expect_onload none "wrapped own runtime, not asked" "$HOST_ROOT" "$IMAGE_LIBDIR" spec
assert_contains "[own, not asked] the operator's runtime created it too" "$(cat "$MARKS")" "create"
out=$("$OCID_BIN" setup docker --config "$DAEMON_JSON" --runtime-path "$SHIM" --no-default-runtime 2>&1)
assert_eq "[own] --no-default-runtime exits 0" 0 "$?"
assert_eq "[own] the operator's runtime is the default again; the shim's other arguments as they were" \
  "own --ocid-host-root" \
  "$(jq -r '[.["default-runtime"], .runtimes["oci-decorator"].runtimeArgs[0]] | join(" ")' "$DAEMON_JSON")"
assert_eq "[own] dockerd reloaded reports it" own "$(reload_default own)"
after=$(cat "$DAEMON_JSON")
out=$("$OCID_BIN" setup docker --config "$DAEMON_JSON" --runtime-path "$SHIM" --no-default-runtime 2>&1)
assert_contains "[own] undone twice: nothing to do" "$out" "nothing to do"
assert_eq "[own] undone twice: file unchanged" "$after" "$(cat "$DAEMON_JSON")"

# --- stop dockerd -------------------------------------------------------------------------
echo "# --- stop dockerd"
pid=$DOCKERD_PID
check "dockerd stops on SIGTERM" docker_stop
check_not "dockerd ($pid) is gone" quiet kill -0 "$pid"
assert_eq "no mount left under $T" "" "$(awk -v t="$T/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo)"
it_finish
