#!/bin/bash
# Real podman 4.3 (hooks.d, --hooks-dir) running containers with a user
# namespace against the SIMULATED Onload install, with --runtime runc and
# --runtime crun (pure v1 wrapper):
#   --uidmap 0:100000:65536 --gidmap 0:100000:65536 with -e OCI_ONLOAD=all:
#     the in-container Onload checks pass (expect_onload), the container runs
#     as a mapped root, the mountpoints the hook created in the rootfs are
#     owned by the container's root on the host (100000:100000);
#   the same without the variable: nothing mounted, image unchanged;
#   --userns=auto with an image imported from the base rootfs (podman picks
#     a range from the "containers" entry of /etc/subuid and /etc/subgid; the
#     test adds one if missing and restores both files at exit).
# After each container: state dir empty, host mount table unchanged.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
podman_setup

HOOKS_DIR=$T/hooks.d
podman_hooks_dir "$HOOKS_DIR"

HOST_BEFORE=$(tree_snapshot "$HOST_ROOT")
# With --rootfs podman uses the tree as it is: the container's root must own
# it (as after podman chowns an image for a mapping), or runc cannot create
# its own mountpoints (/run/.containerenv: permission denied). mapped_base
# ID: a copy of the base rootfs shifted to host ids ID and up.
UNMAPPED_BASE=$BASE_ROOTFS
mapped_base() {
  local dir=$T/base-rootfs-$1
  if [[ ! -d $dir ]]; then
    cp -a "$UNMAPPED_BASE" "$dir"
    chown -R -h "$1:$1" "$dir" || die "chown of $dir failed"
  fi
  BASE_ROOTFS=$dir
}
MAP=(--uidmap 0:100000:65536 --gidmap 0:100000:65536)
probe() { echo "echo \"UIDMAP \$(cat /proc/self/uid_map)\"; $(onload_probe)"; }

# userns_case RUNTIME DESC WHAT WANT_MAP_RE [run options...]
userns_case() {
  local rt=$1 desc="$2 $1" what=$3 want_map=$4; shift 4
  run_podman "$rt" --hooks-dir "$HOOKS_DIR" -- "$@" -- "$(probe)"
  echo "# --- $desc"
  assert_eq "[$desc] podman run exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  assert_match "[$desc] the container has a user namespace" "$(field UIDMAP)" "$want_map"
  expect_onload "$what" "$desc"
  assert_state_dir_empty "[$desc] after the container"
  assert_host_mounts_unchanged "[$desc] after the container"
}

for rt in runc crun; do
  if [[ $rt == crun ]] && ! command -v crun >/dev/null 2>&1; then
    nok "crun is not installed (apt-get install crun; see test/integration/PACKAGES)"
    continue
  fi
  mapped_base 100000
  userns_case "$rt" "uidmap all" all '^ *0 +100000 +65536$' "${MAP[@]}" -e OCI_ONLOAD=all
  assert_eq "[uidmap all $rt] /usr/libexec/onload was created by the hook, owned by 100000:100000" \
    "100000:100000" "$(stat -c %u:%g "$ROOTFS/usr/libexec/onload" 2>&1)"
  userns_case "$rt" "uidmap not asked" none '^ *0 +100000 +65536$' "${MAP[@]}"
  check_not "[uidmap not asked $rt] nothing created in the rootfs" test -e "$ROOTFS/usr/libexec/onload"
done

# --userns=auto takes its range from /etc/subuid and /etc/subgid ("containers").
SUB_SAVED=$T/subid-saved
mkdir -p "$SUB_SAVED"
for f in /etc/subuid /etc/subgid; do
  if [[ -e $f ]]; then cp -a "$f" "$SUB_SAVED/"; else touch "$SUB_SAVED/$(basename "$f").absent"; fi
done
restore_subids() {
  local f b
  for f in /etc/subuid /etc/subgid; do
    b=$(basename "$f")
    if [[ -e $SUB_SAVED/$b.absent ]]; then rm -f "$f"; else cp -a "$SUB_SAVED/$b" "$f"; fi
  done
  return 0
}
it_add_cleanup restore_subids
for f in /etc/subuid /etc/subgid; do
  grep -q '^containers:' "$f" 2>/dev/null || echo "containers:300000:1000000" >>"$f"
done
# podman 4.3 computes an automatic range from an image only (with --rootfs
# runc gets no mappings): the base rootfs imported into the test's storage.
tar -C "$UNMAPPED_BASE" -cf "$T/base.tar" . || die "tar of the base rootfs failed"
"${POD[@]}" import "$T/base.tar" localhost/ocid-it-userns:1 >/dev/null 2>&1 || die "podman import failed"
# shellcheck disable=SC2046
timeout 120 "${POD[@]}" $(pod_runtime_args runc) --hooks-dir "$HOOKS_DIR" run "${POD_RUN[@]}" \
  --userns=auto -e OCI_ONLOAD=all localhost/ocid-it-userns:1 \
  sh -c "echo \"OWN \$(stat -c %u:%g /usr/libexec/onload)\"; $(probe)" </dev/null >"$T/podman/out" 2>"$T/podman/err"
RC=$?
OUT=$(cat "$T/podman/out"); ERR=$(cat "$T/podman/err")
sanitizer_check "$ERR"
desc="userns=auto all runc"
echo "# --- $desc"
assert_eq "[$desc] podman run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_match "[$desc] the container has an automatic user namespace (not host ids)" "$(field UIDMAP)" \
  '^ *0 +[1-9][0-9]* +[0-9]+$'
info "[$desc] uid_map: $(field UIDMAP)"
expect_onload all "$desc"
assert_eq "[$desc] /usr/libexec/onload, created by the hook, is root's inside" "0:0" "$(field OWN)"
assert_state_dir_empty "[$desc] after the container"
assert_host_mounts_unchanged "[$desc] after the container"
"${POD[@]}" rmi -f localhost/ocid-it-userns:1 >/dev/null 2>&1

assert_eq "host install unchanged" "$HOST_BEFORE" "$(tree_snapshot "$HOST_ROOT")"
leftover=$("${POD[@]}" ps -a --format '{{.ID}}' 2>&1)
assert_eq "podman has no container left" "" "$leftover"
it_finish
