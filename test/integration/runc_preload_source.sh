#!/bin/bash
# The one file the hook reads from the container, /etc/ld.so.preload, read
# as host root and merged into a world-readable file the container sees.
# Nothing the container's user could not read may get into it: config.json
# binding a host file at /etc/ld.so.preload, or a host directory at /etc, is
# refused (the file is not on the rootfs mount); an image file the process
# (process.user, through the id mappings) cannot read is refused; an image's
# own readable file keeps its entries. Real runc; each case checks that the
# marker word in the unreadable file appears neither in the container's
# output, runc's error, the generated preload file nor the state dir.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

TOKEN="PRELOAD-SECRET-$$-$RANDOM$RANDOM"
SECRET=$T/host-secret
mkdir -p "$SECRET/etc"
cp "$BASE_ROOTFS/etc/passwd" "$BASE_ROOTFS/etc/group" "$SECRET/etc/"
echo "/$TOKEN.so" >"$SECRET/etc/ld.so.preload"
chmod 0600 "$SECRET/etc/ld.so.preload"
OTHER_MOUNT="refusing: the image's file is on another mount than the rootfs (a bind mount from config.json?): /etc/ld.so.preload"
unreadable() { echo "refusing: the image's file is not readable by the container's user ($1): /etc/ld.so.preload"; }
PROBE='id -u; if [ -r /etc/ld.so.preload ]; then sed "s/^/PRELOAD /" /etc/ld.so.preload; fi; echo DONE'

# bind SRC DEST: a config.json mounts entry (jq filter).
bind() { echo ".mounts += [{destination: \"$2\", source: \"$1\", type: \"bind\", options: [\"rbind\", \"rw\"]}]"; }
user() { echo ".process.user = {uid: $1, gid: $2}"; }

# run_created: runc create (the prestart hook runs), the generated preload
# file read while the container exists, then start, wait, delete. Sets RC
# (create's exit), GEN (the generated file), OUT, ERR.
run_created() {
  IT_IDS+=("$CID")
  timeout 60 runc --root "$RUNC_ROOT" create --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
  RC=$?
  GEN=$(cat "$STATE_DIR/$CID/ld.so.preload" 2>/dev/null)
  if [[ $RC -eq 0 ]]; then
    runc --root "$RUNC_ROOT" start "$CID" 2>>"$B/err"
    for _ in $(seq 1 100); do
      [[ $(runc --root "$RUNC_ROOT" state "$CID" 2>/dev/null | jq -r .status) == stopped ]] && break
      sleep 0.1
    done
  fi
  runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1
  OUT=$(cat "$B/out")
  ERR=$(cat "$B/err")
  sanitizer_check "$ERR"
}

# preload_case NAME EXPECT [LINE] -- make_bundle options: one container.
# EXPECT is STARTED or REFUSED (with the hook's LINE).
preload_case() {
  local name=$1 expect=$2 line="" mi0
  shift 2
  if [[ $expect == REFUSED ]]; then line=$1; shift; fi
  echo "# --- $name (expected: $expect${line:+: $line})"
  make_bundle preload --env OCI_ONLOAD=onload "$@" -- "$PROBE"
  plant
  mi0=$(host_mountinfo)
  run_created
  assert_not_contains "[$name] the secret is not in the generated preload file" "$GEN" "$TOKEN"
  assert_not_contains "[$name] the secret is not in the container's output" "$OUT" "$TOKEN"
  assert_not_contains "[$name] the secret is not in runc's error" "$ERR" "$TOKEN"
  assert_eq "[$name] host mountinfo identical" "$mi0" "$(host_mountinfo)"
  assert_state_dir_empty "[$name]"
  if [[ $expect == STARTED ]]; then
    assert_eq "[$name] STARTED (runc create exit 0)" 0 "$RC"
    assert_contains "[$name] the probe ran" "$OUT" DONE
  else
    check_not "[$name] REFUSED (runc create exit non-zero)" test "$RC" -eq 0
    assert_eq "[$name] runc's error carries exactly one line from the hook" 1 \
      "$(grep -o 'oci-decorator: ' <<<"$ERR" | wc -l)"
    assert_contains "[$name] the hook's line" "$ERR" "$line"
  fi
}

echo "# === host files brought in by config.json"
plant() { :; }
preload_case "host file bound at /etc/ld.so.preload" REFUSED "$OTHER_MOUNT" \
  --jq "$(bind "$SECRET/etc/ld.so.preload" /etc/ld.so.preload) | $(user 1000 1000)"
preload_case "host file bound at /etc/ld.so.preload, root process" REFUSED "$OTHER_MOUNT" \
  --jq "$(bind "$SECRET/etc/ld.so.preload" /etc/ld.so.preload)"
preload_case "host directory bound at /etc" REFUSED "$OTHER_MOUNT" \
  --jq "$(bind "$SECRET/etc" /etc) | $(user 1000 1000)"

echo "# === the image's own file"
plant() { echo /lib/image-own.so >"$ROOTFS/etc/ld.so.preload"; chmod 0644 "$ROOTFS/etc/ld.so.preload"; }
preload_case "image's own file, root process" STARTED
assert_eq "[image's own file, root process] the generated file keeps the image's entry first" \
  "$(printf '/lib/image-own.so\n%s' "$IMAGE_LIBDIR/libonload.so")" "$GEN"
assert_eq "[image's own file, root process] the container sees it" \
  "$(printf '/lib/image-own.so\n%s' "$IMAGE_LIBDIR/libonload.so")" "$(field PRELOAD)"
preload_case "image's own file 0644, uid 1000" STARTED --jq "$(user 1000 1000)"
assert_eq "[image's own file 0644, uid 1000] the container sees the merged file" \
  "$(printf '/lib/image-own.so\n%s' "$IMAGE_LIBDIR/libonload.so")" "$(field PRELOAD)"

plant() { echo "/$TOKEN.so" >"$ROOTFS/etc/ld.so.preload"; chmod 0600 "$ROOTFS/etc/ld.so.preload"; }
preload_case "image file 0600 root:root, uid 1000" REFUSED "$(unreadable "host uid 1000")" \
  --jq "$(user 1000 1000)"
plant() { echo /lib/group-entry.so >"$ROOTFS/etc/ld.so.preload"; chmod 0640 "$ROOTFS/etc/ld.so.preload"; chgrp 1000 "$ROOTFS/etc/ld.so.preload"; }
preload_case "image file 0640 root:1000, uid 1000 gid 1000" STARTED --jq "$(user 1000 1000)"
assert_eq "[image file 0640 root:1000, uid 1000 gid 1000] the group's entry is kept" \
  "$(printf '/lib/group-entry.so\n%s' "$IMAGE_LIBDIR/libonload.so")" "$GEN"

echo "# === a user namespace: the container's root is host uid 100000"
USERNS='.linux.namespaces += [{type: "user"}]
  | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
  | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
plant() { echo "/$TOKEN.so" >"$ROOTFS/etc/ld.so.preload"; chmod 0600 "$ROOTFS/etc/ld.so.preload"; }
preload_case "user namespace root, image file 0600 root:root" REFUSED "$(unreadable "host uid 100000")" \
  --jq "$USERNS"

it_finish
