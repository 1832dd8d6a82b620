#!/bin/bash
# Hostile input to the real hook binary (issue 5 item 4): malformed, truncated,
# huge, wrongly typed and non-UTF-8 states on stdin, config.json files and
# inventory directories; pids that exited or are no container. Each case
# checks the exit code, exactly one line on stderr (none where a container
# that did not ask passes silently) naming what was wrong and where, no
# signal or core dump (exit < 128), no hang (timeout), nothing left in the
# state dir and the host mount table unchanged. Real runc containers check
# that a broken inventory stops only the containers that ask for it.
#
# "Asked" is decided without a strict parse: an activation flag of an
# installed inventory occurs in the state or config.json bytes, and runc's
# reading of it holds a request (or runc could not read it either). A
# garbage config.json that mentions no flag did not ask (exit 0); when the
# hook cannot read what it would need to tell (no usable bundle,
# config.json unreadable), it fails.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

H_CONF=$CONF_DIR          # the config dir of the next hook_run
EMPTY_CONF=$T/conf-empty
mkdir -m 0755 "$EMPTY_CONF"

# hook_run STDIN_FILE: the hook's prestart with that stdin.
# Sets HRC (exit code) and HERR (stderr).
hook_run() {
  timeout 30 "$OCID_BIN" --config-dir "$H_CONF" --host-root "$HOST_ROOT" \
    --state-dir "$STATE_DIR" hook prestart <"$1" >"$T/hook.out" 2>"$T/hook.err"
  HRC=$?
  HERR=$(cat "$T/hook.err")
}

# expect DESC RC LINES [NEEDLE...]: checks the last hook_run.
# LINES is the number of stderr lines wanted (1, or 0 for a silent pass).
expect() {
  local desc=$1 rc=$2 lines=$3 n
  shift 3
  echo "# --- $desc"
  check "[$desc] no hang (timeout), no signal or core dump (exit $HRC)" \
    test "$HRC" -ne 124 -a "$HRC" -lt 128
  assert_eq "[$desc] exit code" "$rc" "$HRC"
  n=$(grep -c '' <<<"$HERR")
  [[ -z $HERR ]] && n=0
  assert_eq "[$desc] lines on stderr" "$lines" "$n"
  local needle
  for needle in "$@"; do assert_contains "[$desc] stderr names '$needle'" "$HERR" "$needle"; done
  if [[ -n $HERR ]]; then
    check "[$desc] the line is printable UTF-8, at most 16 KiB" \
      test "$(LC_ALL=C.UTF-8 grep -caxv '[[:print:]]*' <<<"$HERR")" -eq 0 -a "${#HERR}" -le 16384
    info "stderr: $(head -c 300 <<<"$HERR")"
  fi
  assert_eq "[$desc] nothing in the state dir" "" "$(ls -A "$STATE_DIR")"
  assert_host_mounts_unchanged "[$desc]"
}

# new_bundle NAME: an empty bundle dir (with a rootfs dir holding only a
# libc.so.6, a glibc image as far as the hook's library-directory probe
# looks: an image without one would add the hook's no-glibc warning to the
# one line each case expects); sets HB.
new_bundle() {
  HB=$T/hb/$1
  mkdir -p "$HB/rootfs$IMAGE_LIBDIR"
  : >"$HB/rootfs$IMAGE_LIBDIR/libc.so.6"
}
# config_env ENV_JSON...: writes $HB/config.json with these process.env entries
# (each a JSON string, raw bytes allowed).
config_env() {
  local IFS=,
  printf '{"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "process": {"env": ["PATH=/bin"%s]}}\n' \
    "${*:+,$*}" >"$HB/config.json"
}
# state_to FILE BUNDLE [PID] [EXTRA_JSON_MEMBERS]: an OCI state like runc's.
state_to() {
  local pid=${3:+\"pid\": $3, }
  printf '{"ociVersion": "1.0.2", "id": "hostile-%s", "status": "creating", %s"bundle": "%s"%s}' \
    "$$" "$pid" "$2" "${4:+, $4}" >"$1"
}

IN=$T/state.json

# ============================================================================
# The state on stdin.
new_bundle plain
config_env '"HOME=/root"'

for s in '' 'null' '[]' '{' '{"id": "x", "bundle": ' "$(printf '\xff\xfe{}')"; do
  printf '%s' "$s" >"$IN"
  q=$(printf '%q' "$s")
  hook_run "$IN"
  expect "state $q, onload installed: cannot tell, fails" 1 1 "OCI state"
  H_CONF=$EMPTY_CONF
  hook_run "$IN"
  expect "state $q, no inventory installed: nobody asked" 0 1 "OCI state" "ignored"
  H_CONF=$CONF_DIR
done

# Truncated real states at a few offsets, and the whole one.
state_to "$T/whole.json" "$HB" 4242
size=$(stat -c %s "$T/whole.json")
for n in 1 17 40 $((size / 2)) $((size - 2)); do
  head -c "$n" "$T/whole.json" >"$IN"
  hook_run "$IN"
  expect "state truncated at $n of $size bytes" 1 1 "OCI state on stdin is not valid JSON (line 1"
done
# Cut after the bundle: it still says where config.json is, which does not ask.
head -c $((size - 1)) "$T/whole.json" >"$IN"
hook_run "$IN"
expect "state truncated after its bundle, config.json does not ask" 0 1 \
  "OCI state on stdin is not valid JSON (line 1" "ignored"
hook_run "$T/whole.json"
expect "the whole state, a container that did not ask" 0 0

# A NUL byte after the document: nlohmann would stop there.
{ cat "$T/whole.json"; printf '\0{"pid": 1}'; } >"$IN"
hook_run "$IN"
expect "state with a NUL byte after the document, config.json does not ask" 0 1 \
  "NUL byte at offset $size" "ignored"
# What follows the first JSON value is no part of the state (a Decoder, as
# runc's, never reads it), so a flag named there asks for nothing.
{ cat "$T/whole.json"; printf '\0{"oci-decorator/OCI_ONLOAD": 1}'; } >"$IN"
hook_run "$IN"
expect "state with a NUL byte after the document, which names OCI_ONLOAD after it" 0 1 \
  "NUL byte at offset $size" "ignored"

# 50 MB on stdin: through a pipe (read as a stream, drained), from a
# regular file, and a stream that never ends (given up on at 64 MiB).
( head -c 50000000 /dev/zero | tr '\0' ' '; ) | timeout 30 "$OCID_BIN" --config-dir "$CONF_DIR" \
  --host-root "$HOST_ROOT" --state-dir "$STATE_DIR" hook prestart >/dev/null 2>"$T/hook.err"
HRC=${PIPESTATUS[1]}
HERR=$(cat "$T/hook.err")
expect "50 MB of blanks on a pipe: no bundle, cannot tell" 1 1 "OCI state on stdin is not valid JSON"
truncate -s 50M "$T/big-state"
hook_run "$T/big-state"
expect "50 MB of NULs from a regular file" 1 1 "NUL byte at offset 0"
{ printf '{"id": "x", "bundle": "%s", "annotations": {"x": "' "$T/hb/plain"; yes x | tr -d '\n'; } |
  timeout 30 "$OCID_BIN" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" \
  --state-dir "$STATE_DIR" hook prestart >/dev/null 2>"$T/hook.err"
HRC=${PIPESTATUS[1]}
HERR=$(cat "$T/hook.err")
expect "a state that never ends, its config.json does not ask" 0 1 "67108864-byte limit" "ignored"
# A real state with a 20 MB annotation and 100000 small ones (the cap of
# 1 MiB once asked), for a container that does not ask: it starts.
state_to "$IN" "$HB" 4242 "\"annotations\": {\"big\": \"$(head -c 20000000 /dev/zero | tr '\0' x)\", $(seq -f '"k%.0f": "v",' 1 100000 | tr -d '\n') \"last\": \"v\"}"
hook_run "$IN"
expect "a 21 MB state, a container that did not ask" 0 0

# Wrongly typed and missing fields: fail only a container that may have asked.
for extra in '"pid": "4242"' '"pid": 4.5' '"pid": -1' '"pid": 18446744073709551615' \
             '"pid": [1]' '"annotations": ["x"]' '"annotations": {"k": 1}' '"status": {}' \
             '"root": 7' '"ociVersion": null, "root": "a\u0000b"'; do
  state_to "$IN" "$HB" "" "$extra"
  hook_run "$IN"
  expect "state with $extra, config.json does not ask" 0 1 "OCI state" "ignored"
done
new_bundle asks
config_env '"OCI_ONLOAD=all"'
state_to "$IN" "$HB" '"4242"'
hook_run "$IN"
expect "pid as a string, config.json asks" 1 1 '"pid" is not an integer (it is a string)'
state_to "$IN" "$HB" 4194305
hook_run "$IN"
expect "pid out of range, config.json asks" 1 1 '"pid" is out of range' 4194305
state_to "$IN" "$HB"
hook_run "$IN"
expect "no pid, config.json asks" 1 1 'has no "pid"'
printf '{"id": "x", "pid": 1}' >"$IN"
hook_run "$IN"
expect "no bundle, onload installed" 1 1 'OCI state: missing "bundle"'
printf '{"bundle": "%s", "pid": 1}' "$HB" >"$IN"
hook_run "$IN"
expect "no id, config.json asks" 1 1 'OCI state: missing "id"'
new_bundle plain2
config_env '"HOME=/"'
printf '{"bundle": "%s", "pid": 1}' "$HB" >"$IN"
hook_run "$IN"
expect "no id, config.json does not ask" 0 1 'OCI state: missing "id"' "ignored"
printf '{"id": "x", "bundle": "%s", "root": "rootfs", "annotations": {"oci-decorator/OCI_ONLOAD": "all", "k\xff": "v"}}' \
  "$T/hb/plain2" >"$IN"
hook_run "$IN"
expect "non-UTF-8 annotation key in a state that asks" 1 1 "OCI state on stdin is not valid JSON" "UTF-8"

# No root (crun's field) and no env: a container that does not ask passes.
new_bundle noenv
printf '{"root": {"path": "rootfs"}, "process": {"args": ["sh"]}}' >"$HB/config.json"
state_to "$IN" "$HB" 4242
hook_run "$IN"
expect "no root in the state, no process.env" 0 0
printf '{"root": {"path": "rootfs"}, "annotations": {"oci-decorator/OCI_ONLOAD": "onload"}}' >"$HB/config.json"
state_to "$IN" "$HB"
hook_run "$IN"
expect "no process at all, annotation asks, no pid" 1 1 'has no "pid"'

# ============================================================================
# The pid.
new_bundle pid
config_env '"OCI_ONLOAD=all"'
sleep 0 &
gone=$!
wait "$gone"
check "[exited pid] /proc/$gone is gone" test ! -e "/proc/$gone"
state_to "$IN" "$HB" "$gone"
hook_run "$IN"
expect "a pid that has exited" 1 1 "the container process is gone: /proc/$gone"

sleep 300 &
host_pid=$!
state_to "$IN" "$HB" "$host_pid"
hook_run "$IN"
expect "a pid that is no container (host mount namespace)" 1 1 "shares the host's mount namespace; refusing"
kill "$host_pid"
wait "$host_pid" 2>/dev/null
# pid 1: refused whether its mount namespace is ours, another (init's own:
# the hook refuses init's namespace too), or cannot be opened.
init_mnt=$(stat -L -c %i /proc/1/ns/mnt 2>/dev/null)
state_to "$IN" "$HB" 1
if [[ -z $init_mnt ]]; then
  hook_run "$IN"
  expect "pid 1 (its namespace cannot be opened)" 1 1 "cannot open the container's mount namespace: /proc/1/ns/mnt"
elif [[ $init_mnt == "$(stat -L -c %i /proc/self/ns/mnt)" ]]; then
  hook_run "$IN"
  expect "pid 1 (host mount namespace)" 1 1 "shares the host's mount namespace; refusing"
else
  hook_run "$IN"
  expect "pid 1 (init's mount namespace, not ours)" 1 1 "shares init's mount namespace; refusing"
fi

# ============================================================================
# The bundle and its config.json.
# A config.json the hook cannot scan holds no request it can see: without
# one in the state, the container did not ask (a warning says so). With a
# request in the state, the caps and strictness apply.
ASKS='"annotations": {"oci-decorator/OCI_ONLOAD": "all"}'
state_to "$IN" "$T/hb/does-not-exist" 4242
hook_run "$IN"
expect "missing bundle dir" 0 1 "cannot open: $T/hb/does-not-exist/config.json: No such file or directory" \
  "did not ask"
state_to "$IN" "$T/hb/does-not-exist" 4242 "$ASKS"
hook_run "$IN"
expect "missing bundle dir, the state asks" 1 1 "cannot open: $T/hb/does-not-exist/config.json: No such file or directory"
state_to "$IN" "$T/hb/does-not-exist" 4242
H_CONF=$EMPTY_CONF
hook_run "$IN"
expect "missing bundle dir, no inventory installed" 0 0
H_CONF=$CONF_DIR

touch "$T/hb/a-file"
state_to "$IN" "$T/hb/a-file" 4242
hook_run "$IN"
expect "bundle path is a file" 0 1 "$T/hb/a-file/config.json: Not a directory"
state_to "$IN" "$T/hb/a-file" 4242 "$ASKS"
hook_run "$IN"
expect "bundle path is a file, the state asks" 1 1 "$T/hb/a-file/config.json: Not a directory"

# A symlinked bundle is followed like runc follows it: here it leads to a
# bundle that asks, and the hook gets as far as the missing pid.
ln -s "$T/hb/asks" "$T/hb/link-to-asks"
state_to "$IN" "$T/hb/link-to-asks"
hook_run "$IN"
expect "bundle path is a symlink to a bundle that asks" 1 1 'has no "pid"'
ln -s "$T/hb/plain" "$T/hb/link-to-plain"
state_to "$IN" "$T/hb/link-to-plain" 4242
hook_run "$IN"
expect "bundle path is a symlink to a bundle that does not ask" 0 0

new_bundle fifo
mkfifo "$HB/config.json"
state_to "$IN" "$HB" 4242
hook_run "$IN"
expect "config.json is a FIFO" 0 1 "not a regular file (a FIFO): $HB/config.json" "did not ask"
state_to "$IN" "$HB" 4242 "$ASKS"
hook_run "$IN"
expect "config.json is a FIFO, the state asks" 1 1 "not a regular file (a FIFO): $HB/config.json"

new_bundle dir
mkdir "$HB/config.json"
state_to "$IN" "$HB" 4242
hook_run "$IN"
expect "config.json is a directory" 0 1 "not a regular file (a directory): $HB/config.json"
state_to "$IN" "$HB" 4242 "$ASKS"
hook_run "$IN"
expect "config.json is a directory, the state asks" 1 1 "not a regular file (a directory): $HB/config.json"

# A symlinked config.json is followed for the scan, as runc follows it.
new_bundle symlink
echo '{"root": {"path": "rootfs"}}' >"$HB/real.json"
ln -s real.json "$HB/config.json"
state_to "$IN" "$HB" 4242
hook_run "$IN"
expect "config.json is a symlink, does not ask" 0 0
echo '{"root": {"path": "rootfs"}, "process": {"env": ["OCI_ONLOAD=all"]}}' >"$HB/real.json"
hook_run "$IN"
expect "config.json is a symlink to one that asks" 1 1 "refusing to read through a symbolic link: $HB/config.json"

new_bundle huge
truncate -s 50M "$HB/config.json"
state_to "$IN" "$HB" 4242
hook_run "$IN"
expect "config.json of 50 MB (sparse), does not ask" 0 0
state_to "$IN" "$HB" 4242 "$ASKS"
hook_run "$IN"
expect "config.json of 50 MB (sparse), the state asks" 1 1 "$HB/config.json is larger than 33554432 bytes"
state_to "$IN" "$HB" 4242
{ printf '{"root": {"path": "rootfs"}, "process": {"env": ["OCI_ONLOAD=all"]}, "x": "'
  head -c 52428800 /dev/zero | tr '\0' 'x'; printf '"}'; } >"$HB/config.json"
hook_run "$IN"
expect "config.json of 50 MB (real bytes)" 1 1 "$HB/config.json is larger than 33554432 bytes"

new_bundle garbage
printf '\xff\xfe\x00 this { is [ not json' >"$HB/config.json"
state_to "$IN" "$HB" 4242
hook_run "$IN"
expect "garbage config.json that mentions no flag: did not ask" 0 0
printf '{"process": {"env": ["OCI_ONLOAD=all"' >"$HB/config.json"
hook_run "$IN"
expect "truncated config.json that mentions OCI_ONLOAD" 1 1 "not valid JSON (line 1" "$HB/config.json"
printf '{"root": {"path": "rootfs"}, "process": {"env": ["OCI_ONLOAD=all", "LANG=caf\xe9"]}}' >"$HB/config.json"
hook_run "$IN"
expect "non-UTF-8 env value, config.json asks" 1 1 "ill-formed UTF-8" "$HB/config.json"
printf '{"root": {"path": "rootfs"}, "process": {"env": ["LANG=caf\xe9"]}, "annotations": {"k\xff": "v"}}' >"$HB/config.json"
hook_run "$IN"
expect "non-UTF-8 env value and annotation key, config.json does not ask" 0 0
printf '{"root": {"path": "rootfs"}, "process": {"env": ["OCI\\u005fONLOAD=all"]}}' >"$HB/config.json"
state_to "$IN" "$HB"
hook_run "$IN"
expect "OCI_ONLOAD spelled with a \\u005f escape still asks" 1 1 'has no "pid"'
state_to "$IN" "$HB" 4242
for bad in '"root": "rootfs"' '"root": {"path": 5}' '"root": {"path": "a\u0000b"}' \
           '"root": {"path": "r"}, "process": []' '"root": {"path": "r"}, "process": {"env": {}}' \
           '"root": {"path": "r"}, "process": {"env": ["A=1", 5]}' \
           '"root": {"path": "r"}, "annotations": {"oci-decorator/OCI_ONLOAD": 1}' \
           '"root": {"path": "r"}, "linux": []'; do
  printf '{%s, "x-flag": "OCI_ONLOAD"}' "$bad" >"$HB/config.json"
  hook_run "$IN"
  if [[ $bad == *process* || $bad == *annotations* ]]; then
    # The wrong type where a request would be: runc cannot read it, nor
    # can the hook tell, so it counts as asking and is refused.
    expect "config.json with $bad (mentions OCI_ONLOAD)" 1 1 "$HB/config.json"
  else
    # Elsewhere runc refuses the document itself; the mention asks nothing.
    expect "config.json with $bad (mentions OCI_ONLOAD outside a request)" 0 0
  fi
  [[ $bad == *OCI_ONLOAD* ]] && continue  # it mentions the flag itself
  printf '{%s}' "$bad" >"$HB/config.json"
  hook_run "$IN"
  expect "config.json with $bad (no flag)" 0 0
done
# Deep nesting: no stack overflow in the real binary.
{ printf '{"root": {"path": "rootfs"}, "process": {"env": ["OCI_ONLOAD=all"]}, "hostname": '
  head -c 200000 /dev/zero | tr '\0' '['; head -c 200000 /dev/zero | tr '\0' ']'; printf '}'; } >"$HB/config.json"
state_to "$IN" "$HB"
hook_run "$IN"
expect "config.json nested 200000 deep, asks" 1 1 'has no "pid"'
# A 10 MB request value: one bounded line.
{ printf '{"root": {"path": "rootfs"}, "process": {"env": ["OCI_ONLOAD='
  head -c 10485760 /dev/zero | tr '\0' 'z'; printf '"]}}'; } >"$HB/config.json"
hook_run "$IN"
expect "a 10 MB OCI_ONLOAD value" 1 1 "unknown feature" "bytes ...]" "onload.json"
printf '{"root": {"path": "rootfs"}, "process": {"env": ["OCI_ONLOAD=bogus\\n\\u001b[31mred"]}}' >"$HB/config.json"
hook_run "$IN"
expect "a request value with a newline and an escape sequence" 1 1 'bogus\x0a\x1b[31mred'

# ============================================================================
# Hostile inventory directories, with the hook alone.
BROKEN_CONF=$T/conf-hostile
mkdir -m 0755 "$BROKEN_CONF"
cp "$CONF_DIR/onload.json" "$BROKEN_CONF/"
printf '{"activation_flag": "OCI_BROKEN", "driver_feature": ["f"], "inventory": {"f": ' >"$BROKEN_CONF/broken.json"
printf '\xff\xfe garbage' >"$BROKEN_CONF/garbage.json"
mkfifo -m 0644 "$BROKEN_CONF/fifo.json"
mkdir "$BROKEN_CONF/dir.json"
truncate -s 50M "$BROKEN_CONF/huge.json"
printf '{"activation_flag": "OCI_TYPED", "driver_feature": "f", "inventory": []}' >"$BROKEN_CONF/typed.json"
chmod 0644 "$BROKEN_CONF"/{onload,broken,garbage,huge,typed}.json
ln -s /dev/zero "$BROKEN_CONF/zero.json"
H_CONF=$BROKEN_CONF
new_bundle inv
config_env '"HOME=/"'
state_to "$IN" "$HB" 4242
hook_run "$IN"
expect "hostile inventories, container does not ask" 0 0
for flag in OCI_BROKEN OCI_TYPED; do
  config_env "\"$flag=all\""
  hook_run "$IN"
  expect "hostile inventories, container asks $flag" 1 1 "invalid inventory $BROKEN_CONF/"
done
config_env '"OCI_BROKEN=none"'
hook_run "$IN"
expect "hostile inventories, OCI_BROKEN=none" 0 0
"$OCID_BIN" --config-dir "$BROKEN_CONF" check >"$T/check.out" 2>&1
check_rc=$?
assert_eq "[check] exit 1 with broken inventories" 1 "$check_rc"
assert_eq "[check] one FAIL inventory ... broken: line per broken file (7)" 7 \
  "$(grep -cE '^FAIL +inventory +[^ ]+ +broken: ' "$T/check.out")"
assert_contains "[check] the 50 MB file names the cap" "$(cat "$T/check.out")" "larger than 1048576 bytes"
H_CONF=$CONF_DIR

# ============================================================================
# Real runc containers.
ERRS=$T/conf-runc
mkdir -m 0755 "$ERRS"
cp "$CONF_DIR/onload.json" "$ERRS/"
cp "$BROKEN_CONF/broken.json" "$BROKEN_CONF/garbage.json" "$BROKEN_CONF/typed.json" "$ERRS/"
mkfifo -m 0644 "$ERRS/fifo.json"
truncate -s 50M "$ERRS/huge.json"
chmod 0644 "$ERRS"/{onload,broken,garbage,typed,huge}.json

make_bundle good --config-dir "$ERRS" --env OCI_ONLOAD=onload -- 'ls /usr/bin/onload && echo RAN'
run_container
echo "# --- runc: broken inventories next to onload.json, container asks for onload"
assert_eq "[runc, asks onload] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[runc, asks onload] onload is there" "$OUT" "RAN"

make_bundle asksbroken --config-dir "$ERRS" --env OCI_BROKEN=all -- 'echo SHOULD-NOT-RUN'
run_container
echo "# --- runc: container asks for the broken inventory"
check_not "[runc, asks broken] runc run fails" test "$RC" -eq 0
assert_not_contains "[runc, asks broken] never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[runc, asks broken] the error names the file" "$ERR" "invalid inventory $ERRS/broken.json"
assert_eq "[runc, asks broken] one line from the hook" 1 "$(grep -o 'oci-decorator: ' <<<"$ERR" | grep -c '')"
info "runc stderr: $(tr '\n' '|' <<<"$ERR" | head -c 400)"
assert_state_dir_empty "[runc, asks broken]"

ALLBAD=$T/conf-allbad
mkdir -m 0755 "$ALLBAD"
cp "$BROKEN_CONF/broken.json" "$BROKEN_CONF/garbage.json" "$BROKEN_CONF/typed.json" "$ALLBAD/"
mkfifo -m 0644 "$ALLBAD/fifo.json"
truncate -s 50M "$ALLBAD/huge.json"
cp "$CONF_DIR/onload.json" "$ALLBAD/writable.json"
chmod 0644 "$ALLBAD"/{broken,garbage,typed,huge}.json
chmod 0666 "$ALLBAD/writable.json"   # refused: others can write it
make_bundle noask --config-dir "$ALLBAD" -- 'echo RAN'
run_container
echo "# --- runc: every inventory broken, container does not ask"
assert_eq "[runc, all broken, no request] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[runc, all broken, no request] process ran" "$OUT" "RAN"
assert_eq "[runc, all broken, no request] hook printed nothing" "" "$ERR"

# Inputs of any size and kind, for containers that do not ask: a 33 MiB
# config.json (over the 32 MiB cap that applies once asked), a 2 MiB
# annotation (runc copies it into the state on the hook's stdin), and a
# symlinked config.json (runc follows it). They start.
make_bundle bigcfg -- 'echo RAN'
head -c 34603008 /dev/zero | tr '\0' p >"$T/padding"
jq --rawfile pad "$T/padding" '.["x-padding"] = $pad' "$B/config.json" >"$B/c.new" &&
  mv "$B/c.new" "$B/config.json"
check "[runc, 33 MiB config.json] it is over the 32 MiB cap" test "$(stat -c %s "$B/config.json")" -gt 33554432
run_container
assert_eq "[runc, 33 MiB config.json, no request] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[runc, 33 MiB config.json, no request] hook printed nothing" "" "$ERR"
make_bundle bigann -- 'echo RAN'
head -c 2097152 /dev/zero | tr '\0' a >"$T/padding"
jq --rawfile big "$T/padding" '.annotations["example.com/big"] = $big' "$B/config.json" >"$B/c.new" &&
  mv "$B/c.new" "$B/config.json"
run_container
assert_eq "[runc, 2 MiB annotation, no request] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[runc, 2 MiB annotation, no request] hook printed nothing" "" "$ERR"
make_bundle linkcfg -- 'echo RAN'
mv "$B/config.json" "$B/real-config.json"
ln -s real-config.json "$B/config.json"
run_container
assert_eq "[runc, symlinked config.json, no request] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[runc, symlinked config.json, no request] hook printed nothing" "" "$ERR"

# runc itself takes a non-UTF-8 env value (Go replaces it); the hook must
# not stop a container that does not ask because of it. (make_bundle goes
# through jq, which would repair the byte: it is put in afterwards.)
latin1() { sed -i 's/@LATIN1@/\xe9/' "$B/config.json"; check "[$1] config.json holds a raw 0xe9 byte" env LC_ALL=C grep -q "$(printf 'caf\xe9')" "$B/config.json"; }
make_bundle latin1 --env "LANG=caf@LATIN1@" -- 'echo RAN'
latin1 "non-UTF-8 env, no request"
run_container
echo "# --- runc: non-UTF-8 env value, no request"
assert_eq "[runc, non-UTF-8 env, no request] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
make_bundle latin1ask --env "LANG=caf@LATIN1@" --env OCI_ONLOAD=all -- 'echo SHOULD-NOT-RUN'
latin1 "non-UTF-8 env, asks"
run_container
echo "# --- runc: non-UTF-8 env value, asks"
check_not "[runc, non-UTF-8 env, asks] runc run fails" test "$RC" -eq 0
assert_not_contains "[runc, non-UTF-8 env, asks] never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[runc, non-UTF-8 env, asks] the error says why" "$ERR" "ill-formed UTF-8"
assert_contains "[runc, non-UTF-8 env, asks] ... and where" "$ERR" "$B/config.json"
assert_state_dir_empty "[runc, non-UTF-8 env, asks]"

# "Asked" is runc's reading (SECURITY 2.5, 2.11): OCI_ONLOAD named only in
# process.args, in a 33 MiB config.json (padded under a key runc ignores:
# exec takes no 33 MiB argument or variable) with a 0xff byte in another
# variable's value, asks for nothing. runc runs it (Go replaces the byte);
# the hook must neither apply the 32 MiB cap nor parse it strictly. The same
# container with OCI_ONLOAD=all in process.env asks, and the cap applies.
head -c 34603008 /dev/zero | tr '\0' p >"$T/padding"
mention_bundle() {  # NAME [make_bundle options]: sets B, CID; the hook logs at debug
  local name=$1; shift
  IT_DEBUG=1 make_bundle "$name" --env "LANG=caf@FF@" "$@" -- 'echo RAN; : OCI_ONLOAD=all'
  jq --rawfile pad "$T/padding" '.["x-padding"] = $pad' "$B/config.json" >"$B/c.new" &&
    mv "$B/c.new" "$B/config.json"
  sed -i 's/@FF@/\xff/' "$B/config.json"
  check "[$name] config.json is over the 32 MiB cap" test "$(stat -c %s "$B/config.json")" -gt 33554432
  check "[$name] config.json holds a raw 0xff byte" env LC_ALL=C grep -q "$(printf 'caf\xff')" "$B/config.json"
  check "[$name] config.json names OCI_ONLOAD in process.args" \
    test "$(jq -r '.process.args[2]' "$B/config.json")" = 'echo RAN; : OCI_ONLOAD=all'
}
mention_bundle mention-args
run_container
echo "# --- runc: OCI_ONLOAD only in process.args, 33 MiB, 0xff in another variable"
assert_eq "[runc, mention in args] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[runc, mention in args] process ran" "$OUT" "RAN"
check "[runc, mention in args] the hook wrote its debug log" test -s "$T/logs/$CID.log"
assert_eq "[runc, mention in args] hook logged nothing above debug" "" \
  "$(grep -v '^[^ ]* oci-decorator\[[0-9]*\] debug: ' "$T/logs/$CID.log")"
assert_contains "[runc, mention in args] ... and says why it did not ask" "$(cat "$T/logs/$CID.log")" \
  "mentioned in $B/config.json but not requested"
assert_state_dir_empty "[runc, mention in args]"
mention_bundle mention-env --env OCI_ONLOAD=all
run_container
echo "# --- runc: the same with OCI_ONLOAD=all in process.env"
check_not "[runc, mention in env] runc run fails" test "$RC" -eq 0
assert_not_contains "[runc, mention in env] never ran" "$OUT" "RAN"
assert_contains "[runc, mention in env] the refusal names the cap" "$ERR" \
  "$B/config.json is larger than 33554432 bytes"
assert_state_dir_empty "[runc, mention in env]"
rm -f "$T/padding"

it_finish
