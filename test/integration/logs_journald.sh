#!/bin/bash
# Logs where operators look: real runc containers through the hook, the
# hook's lines received on journald's and syslog's sockets.
#   - by default (no --log-target), with a journald socket present: an
#     activated container -> DECISION=applied with CONTAINER_ID, INVENTORY,
#     FEATURE, SYSLOG_IDENTIFIER=oci-decorator, PRIORITY=6; a refused one
#     (a policy requiring an annotation) -> DECISION=refused with REASON,
#     PRIORITY=3; an ignored request -> DECISION=ignored; a container that
#     did not ask -> no datagram at all at the default level, and at debug
#     level (hook and shim) DECISION=ignored with REASON="did not ask";
#   - the runtime shim: log_target journald in its runtime.json, applied
#     and refused with OCI_DECORATOR_STAGE=create;
#   - the global config file (/etc/oci-decorator/oci-decorator.conf) sends
#     the lines to syslog (/dev/log) with the hooks' entries unchanged;
#   - --log-format json: the hook's stderr is one JSON object per line.
# No journald runs here, and the host's sockets must not be touched: the
# whole script runs in a private mount namespace, where tmpfs mounts stand
# in for /run/systemd, /dev and /etc (every original entry bound back in),
# and a small python receiver binds the sockets.
if [[ -z ${OCID_LOGS_PRIVATE_NS:-} ]]; then
  [[ $(id -u) -eq 0 ]] || { echo "SKIP logs_journald: needs root (mount namespace, runc)"; exit 77; }
  command -v unshare >/dev/null 2>&1 || { echo "SKIP logs_journald: unshare is missing"; exit 77; }
  OCID_LOGS_PRIVATE_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 >/dev/null 2>&1 || die "python3 is missing (see test/integration/PACKAGES)"
it_setup lib64

# shadow_dir DIR: a tmpfs over DIR holding every entry of the original
# (directories rbind-mounted, other files bound onto empty files, symlinks
# copied), so entries can be added in this namespace only.
SHADOWED=()
shadow_dir() {
  local dir=$1 orig=$T/orig$(tr / _ <<<"$1") e name
  mkdir -p "$orig"
  mount --rbind "$dir" "$orig" || die "bind $dir"
  mount -t tmpfs -o mode=0755,size=4m "ocid-logs-test" "$dir" || die "tmpfs over $dir"
  for e in "$orig"/* "$orig"/.[!.]*; do
    [[ -e $e || -L $e ]] || continue
    name=${e##*/}
    if [[ -L $e ]]; then
      cp -a "$e" "$dir/$name"
    elif [[ -d $e ]]; then
      mkdir "$dir/$name" && mount --rbind "$e" "$dir/$name"
    else
      : >"$dir/$name" && mount --bind "$e" "$dir/$name"
    fi
  done
  SHADOWED+=("$dir" "$orig")
}
unshadow_all() {
  local i
  for ((i = ${#SHADOWED[@]} - 1; i >= 0; i--)); do
    umount -R "${SHADOWED[i]}" 2>/dev/null || umount -R -l "${SHADOWED[i]}"
  done
  SHADOWED=()
}

JOURNAL=$T/received.jsonl
# start_receiver SPEC...: the python receiver on the given sockets.
start_receiver() {
  local spec
  for spec in "$@"; do rm -f "${spec#*:}"; done
  rm -f "$T/receiver.ready"
  python3 "$SRC/test/integration/journal_receiver.py" "$JOURNAL" "$T/receiver.ready" "$@" &
  RECEIVER_PID=$!
  local i
  for i in $(seq 50); do [[ -e $T/receiver.ready ]] && return; sleep 0.1; done
  die "the receiver did not start"
}
RECEIVER_PID=
stop_receiver() {
  [[ -n $RECEIVER_PID ]] && kill "$RECEIVER_PID" 2>/dev/null && wait "$RECEIVER_PID" 2>/dev/null
  RECEIVER_PID=
  return 0
}
logs_cleanup() { stop_receiver; unshadow_all; }
it_add_cleanup logs_cleanup
# received FILTER: the received records (jq -c) for which FILTER holds, after
# the receiver had time to write what was sent.
received() { sleep 0.3; jq -c "select($1)" "$JOURNAL"; }

shadow_dir /run/systemd
mkdir -p /run/systemd/journal
start_receiver journald:/run/systemd/journal/socket

# --- journald by default: applied, refused, ignored, not asked
echo "# --- journald (the default target when its socket exists)"
make_bundle applied --env OCI_ONLOAD=all -- "$(onload_probe)"
run_container
assert_eq "[applied] container runs" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all "journald: applied"
REC=$(received ".CONTAINER_ID == \"$CID\"")
info "received: $REC"
assert_eq "[applied] one datagram for the container" 1 "$(grep -c . <<<"$REC")"
assert_eq "[applied] DECISION" applied "$(jq -r .DECISION <<<"$REC")"
assert_eq "[applied] INVENTORY" onload "$(jq -r .INVENTORY <<<"$REC")"
assert_eq "[applied] FEATURE" "onload,zf" "$(jq -r .FEATURE <<<"$REC")"
assert_eq "[applied] SYSLOG_IDENTIFIER" oci-decorator "$(jq -r .SYSLOG_IDENTIFIER <<<"$REC")"
assert_eq "[applied] PRIORITY (info)" 6 "$(jq -r .PRIORITY <<<"$REC")"
assert_eq "[applied] OCI_DECORATOR_STAGE" prestart "$(jq -r .OCI_DECORATOR_STAGE <<<"$REC")"
assert_contains "[applied] MESSAGE is the hook's line" "$(jq -r .MESSAGE <<<"$REC")" "container $CID: applied"

CONF_POLICY=$T/conf-policy
mkdir -p "$CONF_POLICY"
jq '.activation_policy = {sources: ["annotation"],
                          require_annotations: {"example.com/onload-allowed": "yes"}}' \
  "$SRC/config/onload.json" >"$CONF_POLICY/onload.json"
make_bundle refused --config-dir "$CONF_POLICY" --annotation oci-decorator/OCI_ONLOAD=all \
  -- 'echo SHOULD-NOT-RUN'
run_container
check "[refused] container refused" test "$RC" -ne 0
REC=$(received ".CONTAINER_ID == \"$CID\"")
info "received: $REC"
assert_eq "[refused] one datagram for the container" 1 "$(grep -c . <<<"$REC")"
assert_eq "[refused] DECISION" refused "$(jq -r .DECISION <<<"$REC")"
assert_contains "[refused] REASON names the rule" "$(jq -r .REASON <<<"$REC")" \
  "activation_policy.require_annotations"
assert_eq "[refused] PRIORITY (error)" 3 "$(jq -r .PRIORITY <<<"$REC")"
assert_eq "[refused] SYSLOG_IDENTIFIER" oci-decorator "$(jq -r .SYSLOG_IDENTIFIER <<<"$REC")"

make_bundle ignored --config-dir "$CONF_POLICY" --env OCI_ONLOAD=all -- 'echo RAN'
run_container
assert_eq "[ignored] container runs" 0 "$RC"
REC=$(received ".CONTAINER_ID == \"$CID\"")
info "received: $REC"
assert_eq "[ignored] DECISION" ignored "$(jq -r .DECISION <<<"$REC")"
assert_eq "[ignored] REASON" \
  "env OCI_ONLOAD=all ($CONF_POLICY/onload.json accepts only the annotation oci-decorator/OCI_ONLOAD)" \
  "$(jq -r .REASON <<<"$REC")"
assert_eq "[ignored] PRIORITY (warning)" 4 "$(jq -r .PRIORITY <<<"$REC")"

BEFORE=$(wc -l <"$JOURNAL")
make_bundle notasked -- 'echo RAN'
run_container
assert_eq "[not asked] container runs" 0 "$RC"
assert_eq "[not asked] nothing received at the default level" "" "$(received ".CONTAINER_ID == \"$CID\"")"
assert_eq "[not asked] no datagram at all" "$BEFORE" "$(wc -l <"$JOURNAL")"

# --- the runtime shim: log_target from its runtime.json
echo "# --- the runtime shim (oci-decorator-runtime), log_target journald"
mkdir -p "$T/bin"
ln -s "$OCID_BIN" "$T/bin/oci-decorator-runtime"
echo "{\"runtime\": \"$(command -v runc)\", \"log_target\": \"journald\"}" >"$T/runtime.json"
# shim_create CONFIG_DIR: `create` through the shim (the edit happens there), then delete.
shim_create() {
  IT_IDS+=("$CID")
  "$T/bin/oci-decorator-runtime" --ocid-config "$T/runtime.json" --ocid-host-root "$HOST_ROOT" \
    --ocid-config-dir "$1" --root "$RUNC_ROOT" create --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
  RC=$?
  ERR=$(cat "$B/err")
  runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1
}
make_bundle shimapplied --no-hook --env OCI_ONLOAD=all -- 'echo RAN'
shim_create "$CONF_DIR"
assert_eq "[shim applied] create succeeds" 0 "$RC"
[[ $RC -eq 0 ]] || info "stderr: $ERR"
REC=$(received ".CONTAINER_ID == \"$CID\"")
info "received: $REC"
assert_eq "[shim applied] DECISION" applied "$(jq -r .DECISION <<<"$REC")"
assert_eq "[shim applied] OCI_DECORATOR_STAGE" create "$(jq -r .OCI_DECORATOR_STAGE <<<"$REC")"
assert_eq "[shim applied] INVENTORY" onload "$(jq -r .INVENTORY <<<"$REC")"
assert_contains "[shim applied] MESSAGE" "$(jq -r .MESSAGE <<<"$REC")" "container $CID: edited $B/config.json"
make_bundle shimrefused --no-hook --annotation oci-decorator/OCI_ONLOAD=all -- 'echo NO'
shim_create "$CONF_POLICY"
check "[shim refused] create fails" test "$RC" -ne 0
REC=$(received ".CONTAINER_ID == \"$CID\"")
info "received: $REC"
assert_eq "[shim refused] DECISION" refused "$(jq -r .DECISION <<<"$REC")"
assert_contains "[shim refused] REASON" "$(jq -r .REASON <<<"$REC")" "activation_policy.require_annotations"
assert_eq "[shim refused] PRIORITY" 3 "$(jq -r .PRIORITY <<<"$REC")"
echo "{\"runtime\": \"$(command -v runc)\", \"log_target\": \"journald\", \"log_level\": \"debug\"}" \
  >"$T/runtime-debug.json"
make_bundle shimnotasked --no-hook -- 'echo RAN'
IT_IDS+=("$CID")
"$T/bin/oci-decorator-runtime" --ocid-config "$T/runtime-debug.json" --ocid-host-root "$HOST_ROOT" \
  --ocid-config-dir "$CONF_DIR" --root "$RUNC_ROOT" create --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
RC=$?
runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1
assert_eq "[shim not asked, debug] create succeeds" 0 "$RC"
REC=$(received ".CONTAINER_ID == \"$CID\"")
info "received: $REC"
assert_eq "[shim not asked, debug] DECISION" ignored "$(jq -r .DECISION <<<"$REC")"
assert_eq "[shim not asked, debug] REASON" "did not ask" "$(jq -r .REASON <<<"$REC")"
assert_eq "[shim not asked, debug] OCI_DECORATOR_STAGE" create "$(jq -r .OCI_DECORATOR_STAGE <<<"$REC")"

# --- the global config file picks syslog; the hooks' entries do not change
echo "# --- /etc/oci-decorator/oci-decorator.conf: syslog at /dev/log"
stop_receiver
shadow_dir /dev
shadow_dir /etc
mkdir -p /etc/oci-decorator
echo '{"log_target": "syslog", "log_level": "info"}' >/etc/oci-decorator/oci-decorator.conf
: >"$JOURNAL"
start_receiver journald:/run/systemd/journal/socket syslog:/dev/log
make_bundle syslog --env OCI_ONLOAD=all -- 'echo RAN'
assert_eq "[syslog] the hook entry names no log option" "" \
  "$(jq -r '.hooks.prestart[0].args[] | select(startswith("--log") or . == "--config")' "$B/config.json")"
run_container
assert_eq "[syslog] container runs" 0 "$RC"
REC=$(received '.SYSLOG_RAW != null')
info "received: $REC"
assert_match "[syslog] daemon.info, identifier, the applied line" "$(jq -r .SYSLOG_RAW <<<"$REC")" \
  "^<30>[A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} oci-decorator\\[[0-9]+\\]: container $CID: applied "
assert_eq "[syslog] journald not used (the file names syslog only)" "" "$(received '.MESSAGE != null')"
make_bundle syslogref --config-dir "$CONF_POLICY" --annotation oci-decorator/OCI_ONLOAD=all -- 'echo NO'
run_container
check "[syslog] refused container refused" test "$RC" -ne 0
assert_match "[syslog] daemon.err for the refusal" \
  "$(received ".SYSLOG_RAW | contains(\"$CID\")" | jq -r .SYSLOG_RAW)" "^<27>.*activation_policy.require_annotations"

# A broken config file: a warning, the defaults, and the container still runs.
echo '{"log_target": "kafka"}' >/etc/oci-decorator/oci-decorator.conf
make_bundle brokenconf --env OCI_ONLOAD=all -- 'echo RAN'
run_container
assert_eq "[broken config file] an asking container still runs" 0 "$RC"
assert_eq "[broken config file] the defaults: journald" applied \
  "$(received ".CONTAINER_ID == \"$CID\"" | jq -r .DECISION)"
# At debug level a container that did not ask is a decision too: "ignored",
# with the reason "did not ask" (the config file sets the level, so the
# hooks' entries stay as they are).
echo '{"log_level": "debug", "log_target": "journald"}' >/etc/oci-decorator/oci-decorator.conf
make_bundle notaskeddebug -- 'echo RAN'
run_container
assert_eq "[not asked, debug] container runs" 0 "$RC"
REC=$(received ".CONTAINER_ID == \"$CID\"")
info "received: $REC"
assert_eq "[not asked, debug] one datagram for the container" 1 "$(grep -c . <<<"$REC")"
assert_eq "[not asked, debug] DECISION" ignored "$(jq -r .DECISION <<<"$REC")"
assert_eq "[not asked, debug] REASON" "did not ask" "$(jq -r .REASON <<<"$REC")"
assert_eq "[not asked, debug] PRIORITY (debug)" 7 "$(jq -r .PRIORITY <<<"$REC")"
assert_eq "[not asked, debug] OCI_DECORATOR_STAGE" prestart "$(jq -r .OCI_DECORATOR_STAGE <<<"$REC")"
assert_eq "[not asked, debug] MESSAGE" "container $CID: ignored: did not ask" "$(jq -r .MESSAGE <<<"$REC")"
rm /etc/oci-decorator/oci-decorator.conf

# --- --log-format json on stderr: one object per line
echo "# --- --log-format json"
make_bundle jsonref --config-dir "$CONF_POLICY" --annotation oci-decorator/OCI_ONLOAD=all -- 'echo NO'
STATE=$(jq -cn --arg id "$CID" --arg b "$B" '{ociVersion: "1.0.2", id: $id, status: "creating", pid: 1, bundle: $b}')
HERR=$("$OCID_BIN" --config-dir "$CONF_POLICY" --host-root "$HOST_ROOT" --state-dir "$STATE_DIR" \
         --log-format json --log-target stderr hook prestart <<<"$STATE" 2>&1 >/dev/null)
HRC=$?
check "[json] the refusal fails the hook" test "$HRC" -ne 0
info "stderr: $HERR"
check "[json] every stderr line is a JSON object" quiet jq -e -s 'length > 0 and all(type == "object")' <<<"$HERR"
LINE=$(jq -c 'select(.decision == "refused")' <<<"$HERR")
assert_eq "[json] container_id" "$CID" "$(jq -r .container_id <<<"$LINE")"
assert_eq "[json] level" error "$(jq -r .level <<<"$LINE")"
assert_eq "[json] program" oci-decorator "$(jq -r .program <<<"$LINE")"
assert_contains "[json] reason" "$(jq -r .reason <<<"$LINE")" "activation_policy.require_annotations"
assert_match "[json] time is RFC 3339" "$(jq -r .time <<<"$LINE")" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$'

make_bundle jsonnotasked -- 'echo RAN'
STATE=$(jq -cn --arg id "$CID" --arg b "$B" '{ociVersion: "1.0.2", id: $id, status: "creating", pid: 1, bundle: $b}')
HERR=$("$OCID_BIN" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" --state-dir "$STATE_DIR" \
         --log-format json --log-target stderr --log-level debug hook prestart <<<"$STATE" 2>&1 >/dev/null)
assert_eq "[json, not asked] the hook succeeds" 0 "$?"
LINE=$(jq -c "select(.container_id == \"$CID\")" <<<"$HERR")
info "stderr: $LINE"
assert_eq "[json, not asked] decision" ignored "$(jq -r .decision <<<"$LINE")"
assert_eq "[json, not asked] reason" "did not ask" "$(jq -r .reason <<<"$LINE")"
assert_eq "[json, not asked] level" debug "$(jq -r .level <<<"$LINE")"

# --- a real journald, when one runs
if pidof systemd-journald >/dev/null 2>&1 && [[ -S $T/orig_run_systemd/journal/socket ]]; then
  info "systemd-journald runs: checking with journalctl"
  stop_receiver
  umount /run/systemd/journal 2>/dev/null
  mount --bind "$T/orig_run_systemd/journal" /run/systemd/journal
  make_bundle realjournal --env OCI_ONLOAD=all -- 'echo RAN'
  run_container
  sleep 1
  assert_contains "[journalctl] the applied line is in the journal" \
    "$(journalctl -t oci-decorator CONTAINER_ID="$CID" DECISION=applied -o cat 2>&1)" "container $CID: applied"
  umount /run/systemd/journal
else
  info "journalctl part not run: no systemd-journald runs on this machine (its socket was simulated above)"
fi

logs_cleanup
it_finish
