#!/bin/bash
# `oci-decorator plan --bundle DIR` run as an unprivileged user (nobody): JSON
# with the expected targets, device rules and preload for an activated bundle,
# "active": false for one that did not ask, and nothing changed anywhere; a
# bundle's C1 controls and DEL printed as JSON escapes.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

# A copy of the binary that nobody can surely reach (the build dir may not be).
mkdir -p "$T/bin"
install -m 0755 "$OCID_BIN" "$T/bin/oci-decorator"
BIN=$T/bin/oci-decorator
AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
command -v setpriv >/dev/null || AS_NOBODY=()

plan_as_nobody() {  # BUNDLE [extra global args...]
  local bundle=$1; shift
  PLAN_RC=0
  PLAN=$("${AS_NOBODY[@]}" "$BIN" --config-dir "$CONF_DIR" --host-root "$HOST_ROOT" \
         --state-dir "$STATE_DIR" "$@" plan --bundle "$bundle" 2>"$T/plan.err") || PLAN_RC=$?
  PLAN_ERR=$(cat "$T/plan.err")
}

check "nobody exists (uid 65534)" quiet getent passwd 65534
[[ ${#AS_NOBODY[@]} -gt 0 ]] && ok "setpriv available" || nok "setpriv missing: plan runs as root"

# --- activated: OCI_ONLOAD=all
make_bundle planall --env OCI_ONLOAD=all -- true
before=$(tree_snapshot "$ROOTFS")
state_before=$(ls -A "$STATE_DIR")
mi_before=$(host_mountinfo)
plan_as_nobody "$B"
echo "# --- plan, OCI_ONLOAD=all, as nobody"
assert_eq "[all] plan exits 0" 0 "$PLAN_RC"
[[ $PLAN_RC -eq 0 ]] || info "stderr: $PLAN_ERR"
check "[all] output is valid JSON" jq -e . <<<"$PLAN" >/dev/null
assert_eq "[all] active is true" true "$(jq -r .active <<<"$PLAN")"
assert_contains "[all] activated mentions onload.json" "$(jq -c .activated <<<"$PLAN")" "onload"
targets=$(jq -r '.mounts[].target' <<<"$PLAN" 2>/dev/null | sort)
L=$IMAGE_LIBDIR   # libraries land in the directory of the image's libc.so.6
for t in $L/libonload.so $L/libonload_ext.so.1.2.0 $L/libonload_ext.so.1 \
         $L/libonload_ext.so /usr/bin/onload /usr/bin/onload_stackdump /usr/sbin/onload_tool \
         /usr/libexec/onload/profiles /dev/onload /dev/onload_epoll /dev/sfc_char \
         $L/libonload_zf.so $L/libonload_zf.so.1 \
         /usr/bin/zf_stackdump /usr/bin/zf_debug; do
  check "[all] plan mounts $t" grep -qxF "$t" <<<"$targets"
done
assert_eq "[all] no library at its host path /usr/lib64" "" "$(grep '^/usr/lib64/' <<<"$targets")"
assert_eq "[all] library_dirs: the image's libc directory, and why" \
  "{\"dirs\":[\"$L\"],\"why\":\"the image's libc.so.6 is in $L\"}" "$(jq -c .library_dirs <<<"$PLAN")"
assert_eq "[all] no target is mounted twice" "" "$(uniq -d <<<"$targets")"
info "targets: $(tr '\n' ' ' <<<"$targets")"
want_rules=$(for n in onload onload_epoll sfc_char; do echo "c $(devnum "$HOST_ROOT/dev/$n") rw"; done | sort -u)
assert_eq "[all] cgroup_rules are exactly the 3 host device numbers" "$want_rules" \
  "$(jq -r '.cgroup_rules[]' <<<"$PLAN" 2>/dev/null | sort -u)"
assert_eq "[all] cgroup_rules has no duplicates" \
  "$(jq -r '.cgroup_rules | length' <<<"$PLAN" 2>/dev/null)" "$(jq -r '.cgroup_rules | unique | length' <<<"$PLAN" 2>/dev/null)"
for n in onload onload_epoll sfc_char; do
  num=$(devnum "$HOST_ROOT/dev/$n")
  assert_eq "[all] devices has /dev/$n c ${num}" "c $num" \
    "$(jq -r --arg p "/dev/$n" '.devices[] | select(.path == $p) | "\(.type) \(.major):\(.minor)"' <<<"$PLAN" 2>/dev/null | head -1)"
done
assert_eq "[all] preload is [$L/libonload.so]" "[\"$L/libonload.so\"]" "$(jq -c .preload <<<"$PLAN")"
assert_eq "[all] every mount has type/source/resolved/target/flags/inventory/feature" "0" \
  "$(jq '[.mounts[] | select((has("type") and has("source") and has("resolved") and has("target") and has("flags") and has("inventory") and has("feature")) | not)] | length' <<<"$PLAN" 2>/dev/null)"
# source/resolved are host paths as seen inside --host-root (without the prefix).
missing_src=""
while IFS=$'\t' read -r src res; do
  [[ $src == /* && -e $HOST_ROOT$src ]] || missing_src+=" $src"
  [[ $res == /* && -e $HOST_ROOT$res && ! -L $HOST_ROOT$res ]] || missing_src+=" $res"
done < <(jq -r '.mounts[] | [.source, .resolved] | @tsv' <<<"$PLAN" 2>/dev/null)
assert_eq "[all] every source/resolved exists under --host-root (resolved is no symlink)" "" "$missing_src"
assert_eq "[all] libonload_ext.so resolves to the real file" "/usr/lib64/libonload_ext.so.1.2.0" \
  "$(jq -r --arg t "$L/libonload_ext.so" '.mounts[] | select(.target == $t) | .resolved' <<<"$PLAN" 2>/dev/null)"
assert_eq "[all] device mounts have no nodev flag, files have nodev" "0" \
  "$(jq '[.mounts[] | select((.type | test("device")) == (.flags | index("nodev") != null))] | length' <<<"$PLAN" 2>/dev/null)"
assert_eq "[all] every mount is ro and nosuid" "0" \
  "$(jq '[.mounts[] | select((.flags | index("ro")) == null or (.flags | index("nosuid")) == null)] | length' <<<"$PLAN" 2>/dev/null)"
assert_eq "[all] zf_debug comes from feature zf" "zf" \
  "$(jq -r '.mounts[] | select(.target == "/usr/bin/zf_debug") | .feature' <<<"$PLAN" 2>/dev/null)"
assert_eq "[all] plan changed nothing in the image" "$before" "$(tree_snapshot "$ROOTFS")"
assert_eq "[all] plan changed nothing in the state dir" "$state_before" "$(ls -A "$STATE_DIR")"
assert_eq "[all] plan changed no mounts" "$mi_before" "$(host_mountinfo)"

# --- zf only
make_bundle planzf --env OCI_ONLOAD=zf -- true
plan_as_nobody "$B"
echo "# --- plan, OCI_ONLOAD=zf"
assert_eq "[zf] plan exits 0" 0 "$PLAN_RC"
assert_eq "[zf] cgroup rule only for sfc_char" "c $(devnum "$HOST_ROOT/dev/sfc_char") rw" \
  "$(jq -r '.cgroup_rules[]' <<<"$PLAN" 2>/dev/null | sort -u)"
assert_eq "[zf] no preload" "[]" "$(jq -c '.preload' <<<"$PLAN")"
check_not "[zf] no libonload.so target" grep -qxF "$L/libonload.so" < <(jq -r '.mounts[].target' <<<"$PLAN" 2>/dev/null)
check_not "[zf] no libonload.so at its host path" grep -qxF /usr/lib64/libonload.so < <(jq -r '.mounts[].target' <<<"$PLAN" 2>/dev/null)

# --- annotation activation
make_bundle plananno --annotation oci-decorator/OCI_ONLOAD=onload -- true
plan_as_nobody "$B"
assert_eq "[annotation] plan active" true "$(jq -r .active <<<"$PLAN")"

# --- not activated
for envv in "" "OCI_ONLOAD=none" "DISABLE_OCI_ONLOAD=1"; do
  if [[ -n $envv ]]; then make_bundle planoff --env "$envv" -- true; else make_bundle planoff -- true; fi
  plan_as_nobody "$B"
  d=${envv:-unset}
  echo "# --- plan, not activated ($d)"
  assert_eq "[$d] plan exits 0" 0 "$PLAN_RC"
  assert_eq "[$d] active is false" false "$(jq -r .active <<<"$PLAN")"
  assert_eq "[$d] no mounts" 0 "$(jq -r '.mounts | length' <<<"$PLAN")"
  assert_eq "[$d] no cgroup rules" 0 "$(jq -r '.cgroup_rules | length' <<<"$PLAN")"
done

# --- a bundle's terminal controls (issue 19, finding 6): root.path and an ignored env
# value holding U+009B (CSI) and DEL reach the terminal as JSON escapes, never raw.
# An inventory that accepts only the annotation, so the env request is ignored.
CONF_ANNO=$T/conf-anno
mkdir -p "$CONF_ANNO"
jq '. + {"activation_policy": {"sources": ["annotation"]}}' "$CONF_DIR/onload.json" >"$CONF_ANNO/onload.json"
make_bundle planctl --env $'OCI_ONLOAD=all\xc2\x9b31m\x7f' \
  --jq '.root.path = "rootfs\u009b2J\u007f"' -- true
PLAN=$("${AS_NOBODY[@]}" "$BIN" --config-dir "$CONF_ANNO" --host-root "$HOST_ROOT" \
       --state-dir "$STATE_DIR" plan --bundle "$B" 2>"$T/plan.err")
PLAN_RC=$?
echo "# --- plan, controls in root.path and an ignored env value"
assert_eq "[controls] plan exits 0" 0 "$PLAN_RC"
check_not "[controls] no raw U+009B or DEL on stdout" quiet grep -qaP '\xc2\x9b|\x7f' <<<"$PLAN"
assert_contains "[controls] root.path as escapes" "$PLAN" 'rootfs\u009b2J\u007f"'
assert_contains "[controls] the ignored request as escapes" "$PLAN" 'env OCI_ONLOAD=all\u009b31m\u007f ('
assert_eq "[controls] the JSON still holds the bytes" $'OCI_ONLOAD=all\xc2\x9b31m\x7f' \
  "$(jq -r '.ignored[0] | sub("^env "; "") | sub(" \\(.*$"; "")' <<<"$PLAN")"

# --- failures are reported, not crashed on
make_bundle planbogus --env OCI_ONLOAD=bogus -- true
plan_as_nobody "$B"
echo "# --- plan, OCI_ONLOAD=bogus"
check_not "[bogus] plan exits non-zero" test "$PLAN_RC" -eq 0
check "[bogus] plan exit code is not a crash (<128)" test "$PLAN_RC" -lt 128
assert_contains "[bogus] stderr names the valid features" "$PLAN_ERR" "zf"
check_not "[missing bundle] plan fails cleanly" quiet "${AS_NOBODY[@]}" "$BIN" --config-dir "$CONF_DIR" plan --bundle "$T/no-such-bundle"
"${AS_NOBODY[@]}" "$BIN" --config-dir "$CONF_DIR" plan --bundle "$T/no-such-bundle" >/dev/null 2>&1
check "[missing bundle] exit code is not a crash (<128)" test "$?" -lt 128

it_finish
