#!/bin/bash
# Real runc: who gets activated and who does not, and failures that must stop
# the container with one clear line.
#   - unset, none/void/0/false/empty, DISABLE_OCI_ONLOAD=1, XOCI_ONLOAD=all,
#     oci_onload=all: nothing mounted, image byte-identical, no state left
#   - annotation oci-decorator/OCI_ONLOAD=onload without env
#   - the device cgroup really denies: a node with the simulated major (from
#     linux.devices) gives EPERM without activation, ENXIO with it
#   - OCI_ONLOAD=bogus fails the start, naming the valid features
#   - a missing required file fails the start naming path and inventory file
#   - inventories or config dirs others can write are refused
#   - activation_policy: env ignored (annotation only), a required annotation,
#     privileged containers (CAP_SYS_ADMIN, every device allowed) refused
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

PROBE='
echo "MOUNTS_MATCHING $(grep -cE "onload|sfc_char|ld\.so\.preload|/usr/lib64|/usr/libexec" /proc/mounts)"
for p in /dev/onload /dev/onload_epoll /dev/sfc_char @L@/libonload.so /usr/bin/onload /etc/ld.so.preload /usr/libexec/onload; do
  if [ -e $p ]; then echo "PRESENT $p"; else echo "ABSENT $p"; fi
done
/usr/bin/dyn-hello 2>&1 | sed "s/^/DYN /"
[ -e /dev/ldev ] && echo "LDEV $(cat /dev/ldev 2>&1 </dev/null)"
echo DONE'
PROBE=${PROBE//@L@/$IMAGE_LIBDIR}   # libraries land in the image's libc directory

ONLOAD_MAJ=$(devnum "$HOST_ROOT/dev/onload"); ONLOAD_MAJ=${ONLOAD_MAJ%%:*}
# linux.devices: runc creates the node but adds no cgroup rule for it.
LDEV_JQ=".linux.devices = [{path: \"/dev/ldev\", type: \"c\", major: $ONLOAD_MAJ, minor: 0, fileMode: 438, uid: 0, gid: 0}]"

# not_activated DESC [make_bundle options...]
not_activated() {
  local desc=$1; shift
  make_bundle na "$@" --jq "$LDEV_JQ" -- "$PROBE"
  local before after
  before=$(tree_snapshot "$ROOTFS")
  run_container
  echo "# --- not activated: $desc"
  assert_eq "[$desc] container ran" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  assert_eq "[$desc] no onload/preload mount inside" "0" "$(field MOUNTS_MATCHING)"
  local p
  for p in /dev/onload /dev/onload_epoll /dev/sfc_char "$IMAGE_LIBDIR/libonload.so" /usr/bin/onload /etc/ld.so.preload; do
    assert_contains "[$desc] $p absent" "$(field ABSENT)" "$p"
  done
  assert_eq "[$desc] dyn-hello runs without preload" "dyn-hello: running" "$(field DYN)"
  assert_contains "[$desc] device with the Onload major but no rule: EPERM" "$(field LDEV)" "Operation not permitted"
  assert_eq "[$desc] hook printed nothing on stderr" "" "$ERR"
  after=$(tree_snapshot "$ROOTFS")
  assert_eq "[$desc] image dir byte-identical (not even mountpoints)" "$before" "$after"
  assert_eq "[$desc] nothing in the state dir" "" "$(ls -A "$STATE_DIR")"
}

not_activated "OCI_ONLOAD unset"
for v in none void 0 false ""; do
  not_activated "OCI_ONLOAD='$v'" --env "OCI_ONLOAD=$v"
done
not_activated "DISABLE_OCI_ONLOAD=1" --env DISABLE_OCI_ONLOAD=1
not_activated "XOCI_ONLOAD=all" --env XOCI_ONLOAD=all
not_activated "OCI_ONLOAD_X=all" --env OCI_ONLOAD_X=all
not_activated "oci_onload=all (case)" --env oci_onload=all
not_activated "annotation oci-decorator/OCI_ONLOAD=none" --annotation oci-decorator/OCI_ONLOAD=none
not_activated "annotation for another flag" --annotation oci-decorator/OCI_OTHER=all

# --- annotation activation, no env
make_bundle anno --annotation oci-decorator/OCI_ONLOAD=onload --jq "$LDEV_JQ" -- "$PROBE"
run_container
echo "# --- annotation oci-decorator/OCI_ONLOAD=onload"
assert_eq "[annotation] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
for p in /dev/onload /dev/onload_epoll /dev/sfc_char "$IMAGE_LIBDIR/libonload.so" /usr/bin/onload /etc/ld.so.preload; do
  assert_contains "[annotation] $p present" "$(field PRESENT)" "$p"
done
assert_contains "[annotation] dyn-hello gets libonload preloaded" "$(field DYN)" "SIMULATED libonload: preloaded"
assert_match "[annotation] node with the Onload major now passes the cgroup (ENXIO/ENODEV)" "$(field LDEV)" "No such device"
assert_not_contains "[annotation] ... and is not EPERM" "$(field LDEV)" "Operation not permitted"

# --- zf only: the onload major stays denied
make_bundle zfdeny --env OCI_ONLOAD=zf --jq "$LDEV_JQ" -- "$PROBE"
run_container
echo "# --- zf: onload's major stays denied"
assert_eq "[zf] container ran" 0 "$RC"
assert_contains "[zf] node with /dev/onload's major: EPERM (only sfc_char allowed)" "$(field LDEV)" "Operation not permitted"

# --- unknown feature fails the start
make_bundle bogus --env OCI_ONLOAD=bogus -- 'echo SHOULD-NOT-RUN'
before=$(tree_snapshot "$ROOTFS")
run_container
echo "# --- OCI_ONLOAD=bogus"
check_not "[bogus] runc run fails (exit $RC)" test "$RC" -eq 0
assert_not_contains "[bogus] container process never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[bogus] error names the bad value" "$ERR" "bogus"
assert_contains "[bogus] error lists valid feature onload" "$ERR" "onload"
assert_contains "[bogus] error lists valid feature zf" "$ERR" "zf"
info "runc stderr: $(tr '\n' '|' <<<"$ERR" | head -c 400)"
assert_eq "[bogus] nothing in the state dir" "" "$(ls -A "$STATE_DIR")"
assert_eq "[bogus] image dir byte-identical" "$before" "$(tree_snapshot "$ROOTFS")"
# Mixed valid and unknown features must fail too.
make_bundle mixed --env OCI_ONLOAD=onload,bogus -- 'echo SHOULD-NOT-RUN'
run_container
check_not "[onload,bogus] runc run fails" test "$RC" -eq 0
assert_not_contains "[onload,bogus] container process never ran" "$OUT" "SHOULD-NOT-RUN"

# --- missing required file
HOST_MISSING=$T/host-missing
cp -a "$HOST_ROOT" "$HOST_MISSING"
rm -f "$HOST_MISSING/usr/bin/onload"
make_bundle missing --host-root "$HOST_MISSING" --env OCI_ONLOAD=all -- 'echo SHOULD-NOT-RUN'
before=$(tree_snapshot "$ROOTFS")
run_container
echo "# --- missing required /usr/bin/onload"
check_not "[missing] runc run fails (exit $RC)" test "$RC" -eq 0
assert_not_contains "[missing] container process never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[missing] error names the host path" "$ERR" "$HOST_MISSING/usr/bin/onload"
assert_contains "[missing] error names the inventory file" "$ERR" "onload.json"
info "runc stderr: $(tr '\n' '|' <<<"$ERR" | head -c 400)"
assert_eq "[missing] nothing left under the state dir" "" "$(ls -A "$STATE_DIR")"
after=$(tree_snapshot "$ROOTFS")
added=$(comm -13 <(echo "$before") <(echo "$after"))
assert_eq "[missing] image: nothing removed or changed" "" "$(comm -23 <(echo "$before") <(echo "$after"))"
assert_eq "[missing] image: only empty mountpoints added" "" \
  "$(awk -F'\t' '!($2 == "d" || ($2 == "f" && $5 == 0))' <<<"$added" | sed '/^$/d')"
# The same missing file does not matter for a container that asked only for zf.
make_bundle missingzf --host-root "$HOST_MISSING" --env OCI_ONLOAD=zf -- 'ls /usr/bin/zf_stackdump && echo RAN'
run_container
assert_eq "[missing onload file, zf requested] container runs" 0 "$RC"
assert_contains "[missing onload file, zf requested] zf_stackdump present" "$OUT" "RAN"

# --- a broken extra inventory must not stop a container that did not ask for it
CONF_BROKEN=$T/conf-broken
mkdir -p "$CONF_BROKEN"
cp "$CONF_DIR/onload.json" "$CONF_BROKEN/"
echo '{ this is not json' >"$CONF_BROKEN/broken.json"
make_bundle brokencfg --config-dir "$CONF_BROKEN" -- 'echo RAN'
run_container
echo "# --- broken extra inventory file"
assert_eq "[broken inventory, not activated] container runs" 0 "$RC"
assert_contains "[broken inventory, not activated] process ran" "$OUT" "RAN"
make_bundle brokencfg2 --config-dir "$CONF_BROKEN" --env OCI_ONLOAD=onload -- 'ls /usr/bin/onload && echo RAN'
run_container
assert_eq "[broken other inventory, onload activated] container runs" 0 "$RC"
assert_contains "[broken other inventory, onload activated] onload present" "$OUT" "RAN"
# Missing config dir: a non-activated container still runs.
make_bundle noconf --config-dir "$T/does-not-exist" -- 'echo RAN'
run_container
assert_eq "[missing config dir, not activated] container runs" 0 "$RC"

# --- an inventory anyone can write is refused, for the containers that ask
echo "# --- world-writable inventory"
CONF_OPEN=$T/conf-open
mkdir -m 0755 "$CONF_OPEN"
cp "$SRC/config/onload.json" "$CONF_OPEN/"
chmod 0666 "$CONF_OPEN/onload.json"
make_bundle openask --config-dir "$CONF_OPEN" --env OCI_ONLOAD=all -- 'echo RAN'
run_container
check "[writable inventory, activated] container refused" test "$RC" -ne 0
assert_contains "[writable inventory, activated] the error says why" "$ERR" "writable by others"
assert_contains "[writable inventory, activated] the error names the file" "$ERR" "$CONF_OPEN/onload.json"
assert_not_contains "[writable inventory, activated] never ran" "$OUT" "RAN"
make_bundle opennoask --config-dir "$CONF_OPEN" -- 'echo RAN'
run_container
assert_eq "[writable inventory, not activated] container runs" 0 "$RC"
chmod 0644 "$CONF_OPEN/onload.json"
chmod 0777 "$CONF_OPEN"
make_bundle opendir --config-dir "$CONF_OPEN" --env OCI_ONLOAD=all -- 'echo RAN'
run_container
check "[writable config dir, activated] container refused" test "$RC" -ne 0
assert_contains "[writable config dir, activated] the error says why" "$ERR" "config directory is writable by others"

# --- activation policy: the operator decides whose requests count
echo "# --- activation_policy"
CONF_POLICY=$T/conf-policy
mkdir -p "$CONF_POLICY"
jq '.activation_policy = {sources: ["annotation"],
                          require_annotations: {"example.com/onload-allowed": "yes"},
                          refuse_privileged: true}' \
  "$SRC/config/onload.json" >"$CONF_POLICY/onload.json"
ALLOWED=example.com/onload-allowed=yes
# env alone is ignored: the container starts without Onload, and the log says why.
IT_DEBUG=1 make_bundle polenv --config-dir "$CONF_POLICY" --env OCI_ONLOAD=all --annotation "$ALLOWED" \
  -- "$(onload_probe)"
run_container
assert_eq "[policy: env only] container runs" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload none "policy: env only"
assert_contains "[policy: env only] the hook logs the ignored request" \
  "$(cat "$T/logs/$CID.log" 2>/dev/null)" "ignored: request env OCI_ONLOAD=all"
# The annotation with the required one: activated.
make_bundle polanno --config-dir "$CONF_POLICY" --annotation oci-decorator/OCI_ONLOAD=all \
  --annotation "$ALLOWED" -- "$(onload_probe)"
run_container
assert_eq "[policy: annotation + required annotation] container runs" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
expect_onload all "policy: annotation + required annotation"
# The annotation without the required one, or with another value: refused.
for a in "" example.com/onload-allowed=no; do
  make_bundle polnoreq --config-dir "$CONF_POLICY" --annotation oci-decorator/OCI_ONLOAD=all \
    ${a:+--annotation "$a"} -- 'echo SHOULD-NOT-RUN'
  before=$(tree_snapshot "$ROOTFS")
  run_container
  check "[policy: required annotation ${a:-missing}] container refused" test "$RC" -ne 0
  assert_not_contains "[policy: required annotation ${a:-missing}] never ran" "$OUT" "SHOULD-NOT-RUN"
  assert_contains "[policy: required annotation ${a:-missing}] the error names the rule" "$ERR" \
    "example.com/onload-allowed=yes that $CONF_POLICY/onload.json requires (activation_policy.require_annotations)"
  assert_eq "[policy: required annotation ${a:-missing}] image dir byte-identical" "$before" "$(tree_snapshot "$ROOTFS")"
  assert_eq "[policy: required annotation ${a:-missing}] nothing in the state dir" "" "$(ls -A "$STATE_DIR")"
done
# Privileged (CAP_SYS_ADMIN): refused even with every annotation.
make_bundle polpriv --config-dir "$CONF_POLICY" --cap CAP_SYS_ADMIN --annotation oci-decorator/OCI_ONLOAD=all \
  --annotation "$ALLOWED" -- 'echo SHOULD-NOT-RUN'
run_container
check "[policy: privileged] container refused" test "$RC" -ne 0
assert_not_contains "[policy: privileged] never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[policy: privileged] the error says why" "$ERR" \
  "is privileged (it has CAP_SYS_ADMIN in process.capabilities."
assert_contains "[policy: privileged] the error names the rule" "$ERR" "activation_policy.refuse_privileged"
# Privileged by the device cgroup (docker --privileged style): refused too.
make_bundle polalldev --config-dir "$CONF_POLICY" --annotation oci-decorator/OCI_ONLOAD=all \
  --annotation "$ALLOWED" --jq '.linux.resources.devices += [{allow: true, access: "rwm"}]' -- 'echo SHOULD-NOT-RUN'
run_container
check "[policy: all devices allowed] container refused" test "$RC" -ne 0
assert_contains "[policy: all devices allowed] the error says why" "$ERR" "linux.resources.devices allows every device"
# A privileged container that does not ask is not this policy's business.
make_bundle polprivnoask --config-dir "$CONF_POLICY" --cap CAP_SYS_ADMIN -- 'echo RAN'
run_container
assert_eq "[policy: privileged, not asking] container runs" 0 "$RC"
assert_contains "[policy: privileged, not asking] process ran" "$OUT" "RAN"

# The policy sees what runc applies. runc (Go) reads "Process" as process,
# merging it into the exact key's object: a container with CAP_SYS_ADMIN only
# under "Process" is privileged under runc. The control run, without the
# hook, shows runc grants it; with the hook, a container asking is refused
# (the document is ambiguous), and one not asking starts.
CONF_PRIV=$T/conf-priv
mkdir -p "$CONF_PRIV"
jq '.activation_policy = {refuse_privileged: true}' "$SRC/config/onload.json" >"$CONF_PRIV/onload.json"
ALLCAPS='["CAP_SYS_ADMIN","CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_KILL","CAP_SETUID","CAP_SETGID"]'
VARIANT=". + {\"Process\": {\"capabilities\": {\"bounding\": $ALLCAPS, \"effective\": $ALLCAPS, \"permitted\": $ALLCAPS}}}"
CAPEFF='grep ^CapEff: /proc/self/status'
make_bundle variantctl --no-hook --env OCI_ONLOAD=all --jq "$VARIANT" -- "$CAPEFF"
check "[case variant] config.json holds both \"process\" and \"Process\"" \
  test "$(jq -c '[has("process"), has("Process")]' "$B/config.json")" = '[true,true]'
run_container
capeff=$(awk '{print $2}' <<<"$OUT")
check "[case variant, no hook] runc grants CAP_SYS_ADMIN from \"Process\" (CapEff $capeff)" \
  test -n "$capeff" -a $(( 0x${capeff:-0} & 0x200000 )) -ne 0
make_bundle variantask --config-dir "$CONF_PRIV" --env OCI_ONLOAD=all --jq "$VARIANT" -- 'echo SHOULD-NOT-RUN'
run_container
check "[case variant, asks] container refused" test "$RC" -ne 0
assert_not_contains "[case variant, asks] never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[case variant, asks] the error says why" "$ERR" 'config.json is ambiguous'
assert_contains "[case variant, asks] ... naming the key" "$ERR" 'Process\" matches \"process\" only by case'
assert_state_dir_empty "[case variant, asks]"
make_bundle variantnoask --config-dir "$CONF_PRIV" --jq "$VARIANT" -- 'echo RAN'
run_container
assert_eq "[case variant, not asking] container runs" 0 "$RC"
assert_contains "[case variant, not asking] process ran" "$OUT" "RAN"
# A request only in a later duplicate "process" (runc decodes it into the
# same struct, so its env wins; crun reads the first): it asks, and the
# ambiguity refuses it.
make_bundle dupask --config-dir "$CONF_PRIV" -- 'echo SHOULD-NOT-RUN'
whole=$(jq -c . "$B/config.json")
printf '%s, "process": {"env": ["OCI_ONLOAD=all"]}}\n' "${whole%\}}" >"$B/config.json"
check "[duplicate process, asks] config.json has \"process\" twice" \
  test "$(grep -o '"process"' "$B/config.json" | grep -c '')" -ge 2
run_container
check "[duplicate process, asks] container refused" test "$RC" -ne 0
assert_not_contains "[duplicate process, asks] never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[duplicate process, asks] the error says why" "$ERR" 'process\" is given twice'
# A request only in an earlier duplicate: runc's reading drops it, so the
# container asks for nothing (request_reader.h) and runs without Onload.
make_bundle dupearly --config-dir "$CONF_PRIV" -- 'echo RAN; ls /dev/onload 2>&1; true'
whole=$(jq -c . "$B/config.json")
printf '{"process": {"env": ["OCI_ONLOAD=all"]}, %s\n' "${whole:1}" >"$B/config.json"
run_container
assert_eq "[duplicate process, earlier request] container runs" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[duplicate process, earlier request] process ran" "$OUT" "RAN"
assert_contains "[duplicate process, earlier request] nothing activated" "$OUT" "No such file"

it_finish
