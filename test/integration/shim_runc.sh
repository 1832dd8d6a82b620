#!/bin/bash
# The runtime shim with real runc, invoked exactly as docker and containerd
# invoke a runtime (oci-decorator-runtime as argv[0], leading --ocid-*
# options as docker's runtimeArgs, then runc's own global options):
#   1. OCI_ONLOAD=all: create edits config.json (mounts, linux.devices,
#      device rules, LD_PRELOAD), start runs it; files read-only, devices
#      pass the device cgroup, libonload preloaded; only the shim's keys changed;
#   2. a second create from the same bundle adds nothing (idempotent); a request
#      holding CR, VT and FF is escaped in runc's --log (text and json) and the
#      shim's own log; one of 1 MiB is applied, and no line of either log is
#      longer than the one bound (4096 bytes);
#   3. `oci-decorator runtime --runtime R -- ... run` (the subcommand form);
#   4. a container that did not ask: config.json byte-identical, even when
#      it is not JSON at all (nothing parsed); state and delete pass through;
#   5. a required file missing on the host, or a config.json runc would read
#      otherwise than its exact keys say: create fails with one line (on
#      stderr and in runc's --log, where containerd reads it), config.json
#      unchanged, no container; a broken shim config file and a runtime that
#      cannot be executed fail clearly too;
#   6. durability: `runc update --memory` of a running container keeps the
#      devices openable (shim mode, asserted); the same in hook mode,
#      recorded and asserted stable over 3 runs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

RUNC=$(command -v runc)
mkdir -p "$T/bin"
ln -s "$OCID_BIN" "$T/bin/oci-decorator-runtime"
SHIM=$T/bin/oci-decorator-runtime
# The shim's settings file (so a runtime.json installed on this host cannot
# change the test); the host root and config dir come as docker runtimeArgs.
echo "{\"runtime\": \"$RUNC\", \"log_level\": \"debug\", \"log_file\": \"$T/logs/shim.log\"}" >"$T/runtime.json"
SHIM_OPTS=(--ocid-config "$T/runtime.json" --ocid-host-root "$HOST_ROOT" --ocid-config-dir "$CONF_DIR")

# shim ARGS...: the shim as containerd calls runc: --root, --log, --log-format json.
shim() { "$SHIM" "${SHIM_OPTS[@]}" --root "$RUNC_ROOT" --log "$T/logs/runc-$CID.json" --log-format json "$@"; }

# A probe printing what the checks below need.
probe() {
  onload_probe "$IMAGE_LIBDIR"
  cat <<'EOS' | sed "s|@L@|$IMAGE_LIBDIR|g"
echo "DEVMODE /dev/onload $(stat -c '%A %u:%g' /dev/onload)"
for f in /usr/bin/onload @L@/libonload.so /usr/libexec/onload/profiles/latency.opf; do
  echo "WRITE $f $( (echo x >> $f) 2>&1 && echo WRITTEN)"
done
echo "WRITE newfile $( (touch /usr/libexec/onload/profiles/new.opf) 2>&1 && echo WRITTEN)"
echo "END"
EOS
}

# Everything but the keys the shim edits, sorted: must not change.
untouched() { jq -S 'del(.mounts, .linux.devices, .linux.resources.devices, .process.env)' "$1"; }

# --- 1. OCI_ONLOAD=all through the shim ------------------------------------------------
echo "# --- 1. activated container, created by the shim, started"
make_bundle all --no-hook --env OCI_ONLOAD=all -- "$(probe)"
cp "$B/config.json" "$T/orig-all.json"
shim_create_start
assert_eq "shim create exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "container ran to the end" "$OUT" "END"
for f in $(probe_files onload "$IMAGE_LIBDIR") $(probe_files zf "$IMAGE_LIBDIR"); do
  hf=$HOST_ROOT$f
  [[ ${f##*/} == lib*.so* ]] && hf=$HOST_ROOT$SIM_LIBDIR/${f##*/}   # from the host's library dir
  assert_eq "$f inside has the host file's content" "$(host_sha "$hf")" \
    "$(field SHA | awk -v f="$f" '$1 == f {print $2}')"
done
for m in /usr/bin/onload "$IMAGE_LIBDIR/libonload.so" "$IMAGE_LIBDIR/libonload_ext.so.1" /usr/libexec/onload/profiles; do
  opts=$(field MNT | awk -v m="$m" '$1 == m {print $2}')
  assert_match "$m is a ro,nosuid,nodev mount (${opts:-not a mount})" "$opts" \
    '(^|,)ro(,|$).*nosuid.*nodev|(^|,)ro(,|$).*nodev.*nosuid'
done
while read -r f msg; do
  [[ -n $f ]] || continue
  assert_contains "writing to $f fails with EROFS" "$msg" "Read-only file system"
done < <(field WRITE)
for d in /dev/onload /dev/onload_epoll /dev/sfc_char; do
  want=$(printf '%x:%x' "0x$(stat -c %t "$HOST_ROOT$d")" "0x$(stat -c %T "$HOST_ROOT$d")")
  assert_eq "$d is the host's char device" "character special file $want" \
    "$(field DEV | awk -v d="$d" '$1 == d {$1=""; sub(/^ /, ""); print}')"
  r=$(field OPENR | awk -v d="$d" '$1 == d')
  assert_contains "open($d) passes the device cgroup (ENXIO)" "$r" "No such device"
  assert_not_contains "open($d) is not EPERM" "$r" "Operation not permitted"
  assert_contains "open($d, O_WRONLY) passes the device cgroup" "$(field OPENW | awk -v d="$d" '$1 == d')" "No such device"
done
assert_eq "/dev/onload has the host node's mode, owned by root" \
  "$(stat -c '%A' "$HOST_ROOT/dev/onload") 0:0" "$(field DEVMODE | awk '{print $2, $3}')"
assert_eq "LD_PRELOAD is set to libonload" "$IMAGE_LIBDIR/libonload.so" "$(field LDP)"
assert_contains "dyn-hello gets the SIMULATED libonload preloaded" "$(field DYN)" \
  "SIMULATED libonload: preloaded into /usr/bin/dyn-hello"
assert_eq "no /etc/ld.so.preload (the shim uses LD_PRELOAD)" no "$(field PRELOAD_FILE)"
assert_not_contains "the container's stderr has no shim line" "$ERR" "oci-decorator"

echo "# --- config.json after the shim"
CFG=$B/config.json
check "config.json is still valid JSON" quiet jq -e . "$CFG"
assert_eq "everything but the edited keys is unchanged" "$(untouched "$T/orig-all.json")" "$(untouched "$CFG")"
assert_eq "the original mounts come first, in order" "$(jq -c '.mounts' "$T/orig-all.json")" \
  "$(jq -c --argjson n "$(jq '.mounts | length' "$T/orig-all.json")" '.mounts[:$n]' "$CFG")"
assert_eq "mount of /usr/bin/onload" \
  "{\"destination\":\"/usr/bin/onload\",\"type\":\"bind\",\"source\":\"$HOST_ROOT/usr/bin/onload\",\"options\":[\"bind\",\"ro\",\"nosuid\",\"nodev\"]}" \
  "$(jq -c '.mounts[] | select(.destination == "/usr/bin/onload")' "$CFG")"
assert_eq "a version link is mounted from the file it resolves to" \
  "$HOST_ROOT/usr/lib64/libonload_ext.so.1.2.0" \
  "$(jq -r --arg d "$IMAGE_LIBDIR/libonload_ext.so.1" '.mounts[] | select(.destination == $d) | .source' "$CFG")"
IFS=: read -r MAJ MIN <<<"$(devnum "$HOST_ROOT/dev/onload")"
assert_eq "linux.devices entry for /dev/onload" \
  "{\"path\":\"/dev/onload\",\"type\":\"c\",\"major\":$MAJ,\"minor\":$MIN,\"fileMode\":438,\"uid\":0,\"gid\":0}" \
  "$(jq -c '.linux.devices[] | select(.path == "/dev/onload")' "$CFG")"
assert_eq "device cgroup rule for /dev/onload" \
  "{\"allow\":true,\"type\":\"c\",\"major\":$MAJ,\"minor\":$MIN,\"access\":\"rw\"}" \
  "$(jq -c --argjson M "$MAJ" '.linux.resources.devices[] | select(.major == $M)' "$CFG")"
assert_eq "process.env: the original entries, then LD_PRELOAD" \
  "$(jq -c --arg p "LD_PRELOAD=$IMAGE_LIBDIR/libonload.so" '.process.env + [$p]' "$T/orig-all.json")" "$(jq -c .process.env "$CFG")"
assert_contains "runc's log has the shim's info line" "$(cat "$T/logs/runc-$CID.json")" '"level":"info","msg":"oci-decorator: container '"$CID"': edited'
assert_contains "the shim's own log file has it too" "$(cat "$T/logs/shim.log")" "container $CID: edited"
assert_eq "no temporary file left in the bundle" "" "$(cd "$B" && ls -A | grep -F .config.json.)"
check "shim delete passes through" shim delete "$CID"
check_not "the container is gone" quiet runc --root "$RUNC_ROOT" state "$CID"

# --- 2. a second create from the already edited bundle adds nothing ----------------------
echo "# --- 2. idempotent"
before=$(jq -S . "$CFG")
CID=$CID-again
shim_create_start
assert_eq "second create exits 0" 0 "$RC"
assert_eq "config.json unchanged by the second create" "$before" "$(jq -S . "$CFG")"
assert_eq "one mount at /usr/bin/onload" 1 "$(jq '[.mounts[] | select(.destination == "/usr/bin/onload")] | length' "$CFG")"
assert_eq "one LD_PRELOAD entry" "LD_PRELOAD=$IMAGE_LIBDIR/libonload.so" "$(jq -r '.process.env[] | select(startswith("LD_PRELOAD"))' "$CFG")"
assert_contains "container ran again" "$(field LDP)" "$IMAGE_LIBDIR/libonload.so"
shim delete "$CID" >/dev/null 2>&1

# --- 2b. a request holding CR, VT and FF -----------------------------------------------------
# Issue 19, finding 5: the "edited" line quotes the request (env OCI_ONLOAD=...), a value
# of the container's choosing; runc's text --log quoting escaped only '"', '\' and
# newline, and the shim's own log took it raw. The value still asks (runc's env is taken
# as is; the hook trims blanks around each feature).
echo "# --- 2b. control bytes in the request: escaped in runc's --log and the shim's log"
for fmt in text json; do
  make_bundle "ctl-$fmt" --no-hook --env $'OCI_ONLOAD=onload\r\v\f' -- 'true'
  IT_IDS+=("$CID")
  RLOG=$T/logs/runc-$CID.$fmt
  "$SHIM" "${SHIM_OPTS[@]}" --root "$RUNC_ROOT" --log "$RLOG" --log-format "$fmt" \
    create --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
  assert_eq "[$fmt] create exits 0" 0 "$?"
  # Both formats quote the escape's backslash: \\x0d in the file, \x0d once decoded.
  assert_contains "[$fmt] runc's log quotes the request with visible escapes" \
    "$(grep -a "container $CID: edited" "$RLOG")" 'env OCI_ONLOAD=onload\\x0d\\x0b\\x0c)'
  check_not "[$fmt] no raw CR, VT or FF in runc's log" quiet grep -qaP '[\x0b\x0c\x0d]' "$RLOG"
  assert_contains "[$fmt] the shim's own log quotes it the same way" \
    "$(grep -a "container $CID: edited" "$T/logs/shim.log")" 'env OCI_ONLOAD=onload\x0d\x0b\x0c)'
  runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1
done
check_not "no raw CR, VT or FF in the shim's own log" quiet grep -qaP '[\x0b\x0c\x0d]' "$T/logs/shim.log"

# --- 2c. a request of 1 MiB -----------------------------------------------------------------
# Issue 27, finding 3: the "edited" line quoted the whole request: OCI_ONLOAD=all and 1 MiB
# of TAB (a valid request: the hook trims blanks around each feature) made a 4 MB line in
# the shim's own log and 5 MB in runc's --log, on every create. Every line a container's
# bytes reach is now cut to one bound (error.h kMaxLineBytes). A variable of 1 MiB is more
# than execve takes (128 KiB a string): that container is edited, then cannot start, as a
# crash-looping pod's; one of 100 KiB (still 400 KB once escaped) runs with Onload.
echo "# --- 2c. a 1 MiB request: edited, every log line within the bound"
MAX_LINE=4096
longest_line() { LC_ALL=C awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$1"; }
for fmt in text json; do
  for size in 1048576 102400; do
    make_bundle "big-$fmt" --no-hook --env OCI_ONLOAD=all \
      --jq ".process.env |= map(if . == \"OCI_ONLOAD=all\" then . + (\"\\t\" * $size) else . end)" \
      -- 'echo "LDP $LD_PRELOAD"; echo END'
    IT_IDS+=("$CID")
    check "[$fmt, $size] config.json holds the request" test "$(stat -c %s "$B/config.json")" -gt "$size"
    RLOG=$T/logs/runc-$CID.$fmt
    "$SHIM" "${SHIM_OPTS[@]}" --root "$RUNC_ROOT" --log "$RLOG" --log-format "$fmt" \
      create --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
    RC=$?
    assert_eq "[$fmt, $size] create exits 0" 0 "$RC"
    assert_eq "[$fmt, $size] the shim edited config.json: LD_PRELOAD and the /dev/onload device" \
      "LD_PRELOAD=$IMAGE_LIBDIR/libonload.so /dev/onload" \
      "$(jq -r '[(.process.env[] | select(startswith("LD_PRELOAD="))), (.linux.devices[] | select(.path == "/dev/onload") | .path)] | join(" ")' "$B/config.json")"
    if ((size < 131072)); then
      runc --root "$RUNC_ROOT" start "$CID" >/dev/null 2>&1
      for _ in $(seq 1 100); do
        [[ $(runc --root "$RUNC_ROOT" state "$CID" 2>/dev/null | jq -r .status) == stopped ]] && break
        sleep 0.1
      done
      OUT=$(cat "$B/out")
      assert_eq "[$fmt, $size] the container ran with libonload preloaded" "$IMAGE_LIBDIR/libonload.so" "$(field LDP)"
    fi
    edited=$(grep -a "container $CID: edited" "$RLOG")
    assert_contains "[$fmt, $size] runc's log has the edited line" "$edited" "env OCI_ONLOAD=all"
    assert_contains "[$fmt, $size] ... saying it was cut" "$edited" " bytes ...]"
    assert_contains "[$fmt, $size] ... and how it ends" "$edited" "devices, LD_PRELOAD $IMAGE_LIBDIR/libonload.so"
    n=$(longest_line "$RLOG")
    check "[$fmt, $size] runc's --log: longest line $n bytes, at most $MAX_LINE" test "$n" -le "$MAX_LINE"
    edited=$(grep -a "container $CID: edited" "$T/logs/shim.log")
    assert_contains "[$fmt, $size] the shim's own log has the edited line, cut" "$edited" " bytes ...]"
    runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1
  done
done
n=$(longest_line "$T/logs/shim.log")
check "the shim's own log: longest line $n bytes, at most $MAX_LINE" test "$n" -le "$MAX_LINE"

# --- 3. the subcommand form, with `run` --------------------------------------------------
echo "# --- 3. oci-decorator runtime --runtime R -- ... run"
make_bundle sub --no-hook --env OCI_ONLOAD=onload -- 'echo "LDP $LD_PRELOAD"; cat /dev/onload 2>&1 | sed "s/^/OPENR /"'
IT_IDS+=("$CID")
(cd "$B" && "$OCID_BIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" runtime --runtime "$RUNC" -- \
   --root "$RUNC_ROOT" run "$CID" </dev/null >"$B/out" 2>"$B/err")
RC=$?
OUT=$(cat "$B/out")
ERR=$(cat "$B/err")
assert_eq "runtime -- run (bundle = cwd) exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "LD_PRELOAD set" "$IMAGE_LIBDIR/libonload.so" "$(field LDP)"
assert_contains "/dev/onload passes the device cgroup" "$(field OPENR)" "No such device"
runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1

# --- 4. containers that did not ask ------------------------------------------------------
echo "# --- 4. pass-through"
make_bundle plain --no-hook --env OCI_ONLOADX=all -- 'echo "LDP ${LD_PRELOAD:-unset}"; echo END'
sum=$(sha256sum <"$B/config.json")
shim_create_start
assert_eq "[not asked] create exits 0" 0 "$RC"
assert_contains "[not asked] container ran" "$OUT" "END"
assert_eq "[not asked] no LD_PRELOAD" unset "$(field LDP)"
assert_eq "[not asked] config.json byte-identical" "$sum" "$(sha256sum <"$B/config.json")"
state=$(shim state "$CID")
assert_eq "[not asked] shim state passes through" "$CID" "$(jq -r .id <<<"$state")"
check "[not asked] shim delete passes through" shim delete "$CID"
check_not "[not asked] the container is gone" quiet runc --root "$RUNC_ROOT" state "$CID"

make_bundle notjson --no-hook -- 'true'
printf '{"ociVersion": "1.0.2", this is not JSON' >"$B/config.json"
sum=$(sha256sum <"$B/config.json")
shim_create_start
assert_eq "[not JSON, not asked] config.json byte-identical" "$sum" "$(sha256sum <"$B/config.json")"
check "[not JSON, not asked] runc itself refused it (create failed)" test "$RC" -ne 0
assert_not_contains "[not JSON, not asked] the failure is runc's, not the shim's (nothing parsed)" \
  "$ERR$(cat "$T/logs/runc-$CID.json" 2>/dev/null)" "oci-decorator"

check "--version passes through" quiet "$SHIM" "${SHIM_OPTS[@]}" --version
assert_contains "--version is runc's" "$("$SHIM" "${SHIM_OPTS[@]}" --version)" "runc version"

# --- 5. failures before the exec -----------------------------------------------------------
echo "# --- 5. failures"
HOST_MISSING=$T/host-missing
make_sim "$HOST_MISSING"
rm -f "$HOST_MISSING/usr/bin/onload"
make_bundle missing --no-hook --env OCI_ONLOAD=all -- 'true'
sum=$(sha256sum <"$B/config.json")
SHIM_OPTS=(--ocid-config "$T/runtime.json" --ocid-host-root "$HOST_MISSING" --ocid-config-dir "$CONF_DIR")
shim_create_start
SHIM_OPTS=(--ocid-config "$T/runtime.json" --ocid-host-root "$HOST_ROOT" --ocid-config-dir "$CONF_DIR")
assert_eq "[missing file] create exits 1" 1 "$RC"
assert_eq "[missing file] one line on stderr" 1 "$(grep -c . <<<"$ERR")"
assert_match "[missing file] it names the entry and the path" "$ERR" \
  "^oci-decorator: error: container $CID: refused: required binaries entry of feature \"onload\" not found on the host .*: $HOST_MISSING/usr/bin/onload or $HOST_MISSING/opt/onload/usr/bin/onload$"
assert_eq "[missing file] the same line is runc's log's last error (what containerd reports)" \
  "oci-decorator: ${ERR#oci-decorator: error: }" \
  "$(jq -r 'select(.level == "error") | .msg' "$T/logs/runc-$CID.json" | tail -1)"
check "[missing file] runc's log lines have RFC 3339 times (containerd decodes them)" \
  quiet jq -e 'select(.level == "error") | .time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{9}Z$")' "$T/logs/runc-$CID.json"
assert_eq "[missing file] config.json unchanged" "$sum" "$(sha256sum <"$B/config.json")"
check_not "[missing file] no container was created" quiet runc --root "$RUNC_ROOT" state "$CID"

# A config.json runc would read otherwise than its exact keys say: the env
# under "Process" (runc merges it into process, so it asks), a "Mounts" that
# runc would read after the shim's mounts. Refused before anything is edited.
make_bundle variant --no-hook -- 'true'
jq '. + {"Process": {"env": ["OCI_ONLOAD=all"]}, "Mounts": []}' "$B/config.json" >"$B/c.new" &&
  mv "$B/c.new" "$B/config.json"
sum=$(sha256sum <"$B/config.json")
shim_create_start
assert_eq "[case variant] create exits 1" 1 "$RC"
assert_eq "[case variant] one line on stderr" 1 "$(grep -c . <<<"$ERR")"
assert_contains "[case variant] it names the ambiguous key" "$ERR" \
  'config.json is ambiguous: "Process" matches "process" only by case'
assert_eq "[case variant] config.json unchanged" "$sum" "$(sha256sum <"$B/config.json")"
check_not "[case variant] no container was created" quiet runc --root "$RUNC_ROOT" state "$CID"

echo '{"runtime": "runc"}' >"$T/bad-runtime.json"
make_bundle badconf --no-hook --env OCI_ONLOAD=all -- 'true'
IT_IDS+=("$CID")
err=$("$SHIM" --ocid-config "$T/bad-runtime.json" --root "$RUNC_ROOT" create --bundle "$B" "$CID" 2>&1 </dev/null)
assert_eq "[relative runtime in the shim config] one clear line" \
  "oci-decorator: error: container $CID: the runtime must be an absolute path: runc" "$err"
echo '{"runtime": ' >"$T/bad-runtime.json"
err=$("$SHIM" --ocid-config "$T/bad-runtime.json" --root "$RUNC_ROOT" state "$CID" 2>&1 </dev/null)
RC=$?
assert_eq "[broken shim config] fails every command (exit 1)" 1 "$RC"
assert_eq "[broken shim config] one line naming the file" \
  "oci-decorator: error: shim config is not valid JSON: $T/bad-runtime.json" "$err"
err=$("$SHIM" --ocid-config "$T/runtime.json" --ocid-runtime "$T/no-such-runc" --root "$RUNC_ROOT" state x 2>&1 </dev/null)
RC=$?
assert_eq "[runtime missing] exit 127" 127 "$RC"
assert_eq "[runtime missing] one line" \
  "oci-decorator: error: cannot execute the runtime $T/no-such-runc: No such file or directory" "$err"
check_not "[symlinked config.json] refused" quiet bash -c "
  cd '$B' && mv config.json real.json && ln -s real.json config.json &&
  '$SHIM' ${SHIM_OPTS[*]} --root '$RUNC_ROOT' create --bundle '$B' '$CID-link' </dev/null"
check "[symlinked config.json] still a symlink to the unchanged file" test -L "$B/config.json"
runc --root "$RUNC_ROOT" delete -f "$CID-link" >/dev/null 2>&1

# --- 6. durability under runc update ---------------------------------------------------------
echo "# --- 6. runc update --memory of a running container"
# open_onload ID: what opening /dev/onload inside the running container gives.
open_onload() {
  local out
  out=$(timeout 20 runc --root "$RUNC_ROOT" exec "$1" cat /dev/onload 2>&1 </dev/null)
  case $out in
    *"No such device"*) echo openable ;;
    *"Operation not permitted"*) echo EPERM ;;
    *) echo "other: $out" ;;
  esac
}
mem_limit() { cat "/sys/fs/cgroup/memory/$CG_PARENT/$1/memory.limit_in_bytes" 2>/dev/null; }
# update_cycle ID: sets OUTCOME ("before -> after"); checks the update applied.
update_cycle() {
  local id=$1 before after
  before=$(open_onload "$id")
  runc --root "$RUNC_ROOT" update --memory 100M "$id" || nok "runc update $id"
  assert_eq "runc update applied the memory limit ($id)" 104857600 "$(mem_limit "$id")"
  after=$(open_onload "$id")
  OUTCOME="$before -> $after"
}

make_bundle durable --no-hook --env OCI_ONLOAD=all -- 'sleep 600'
IT_IDS+=("$CID")
shim create --bundle "$B" "$CID" </dev/null >/dev/null 2>&1 || nok "shim create (durability)"
shim start "$CID" >/dev/null 2>&1
wait_running "$CID" || nok "shim-created container is running"
update_cycle "$CID"; outcome=$OUTCOME
info "shim mode: /dev/onload before -> after runc update: $outcome"
assert_eq "[shim] /dev/onload openable before and after runc update" "openable -> openable" "$outcome"
runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1

hook_outcomes=()
for i in 1 2 3; do
  make_bundle hookdurable --env OCI_ONLOAD=all -- 'sleep 600'
  IT_IDS+=("$CID")
  runc --root "$RUNC_ROOT" run -d --bundle "$B" "$CID" </dev/null >/dev/null 2>"$B/err" || nok "hook-mode run -d: $(cat "$B/err")"
  wait_running "$CID" || nok "hook-mode container is running"
  update_cycle "$CID"; outcome=$OUTCOME
  rules=$(grep -c "^c $(devnum "$HOST_ROOT/dev/onload") " "/sys/fs/cgroup/devices/$CG_PARENT/$CID/devices.list")
  info "hook mode run $i: /dev/onload before -> after runc update: $outcome (rule in devices.list: $rules)"
  hook_outcomes+=("$outcome")
  runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1
done
assert_eq "[hook] outcome stable over 3 runs" 1 "$(printf '%s\n' "${hook_outcomes[@]}" | sort -u | wc -l)"
assert_eq "[hook] openable before the update" openable "${hook_outcomes[0]%% ->*}"
info "RECORDED: hook mode under runc $(runc --version | head -1 | awk '{print $3}'): ${hook_outcomes[0]}"

it_finish
