#!/bin/bash
# Real podman 4.3 finding the hook through --hooks-dir (hooks.d JSON, version
# 1.0.0, when.always), with --runtime runc and with --runtime crun (pure v1
# wrapper), against the SIMULATED Onload install. Activation by
# -e OCI_ONLOAD=all, -e OCI_ONLOAD=zf and --annotation oci-decorator/OCI_ONLOAD=all;
# a container without the variable gets nothing and still runs. After each
# container: nothing left in the hook's state dir, host mount table unchanged.
#
# The hooks dir holds the build's generated entries ($OCID_BUILD_DIR/hooks.d/)
# with hook.path replaced by $OCID_BIN and the args extended by
# --host-root/--config-dir/--state-dir (the simulated install). The installed,
# unmodified entries are exercised by package_deb.sh (podman without --hooks-dir).
# Podman's storage, run, tmp, network config and runtime state live under $T.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
podman_setup

HOOKS_DIR=$T/hooks.d
podman_hooks_dir "$HOOKS_DIR"
for stage in prestart poststop; do
  src=${OCID_BUILD_DIR:-$(dirname "$OCID_BIN")}/hooks.d/oci-decorator-$stage.json
  assert_eq "generated $stage entry: version 1.0.0, when.always, stages [$stage], args end with hook $stage" \
    "1.0.0 true [\"$stage\"] [\"hook\",\"$stage\"] true" \
    "$(jq -c '[.version, .when.always, .stages, .hook.args[-2:], (.hook.env | type == "array")] | map(tostring) | join(" ")' -r "$src")"
done

# podman_case RUNTIME DESC WHAT [run options...]: runs the probe, checks it.
podman_case() {
  local rt=$1 desc="$2 $1" what=$3; shift 3
  run_podman "$rt" --hooks-dir "$HOOKS_DIR" -- "$@" -- "$(onload_probe)"
  echo "# --- $desc"
  assert_eq "[$desc] podman run exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_onload "$what" "$desc"
  assert_state_dir_empty "[$desc] after the container"
  assert_host_mounts_unchanged "[$desc] after the container"
}

for rt in runc crun; do
  if [[ $rt == crun ]] && ! command -v crun >/dev/null 2>&1; then
    nok "crun is not installed (apt-get install crun; see test/integration/PACKAGES)"
    continue
  fi
  podman_case "$rt" "env all" all -e OCI_ONLOAD=all
  podman_case "$rt" "env zf" zf -e OCI_ONLOAD=zf
  podman_case "$rt" "annotation all" all --annotation oci-decorator/OCI_ONLOAD=all
  podman_case "$rt" "not asked" none -e DISABLE_OCI_ONLOAD=1
  # The hook ran for the last container too (when.always): prove it is on the
  # path by an activated container that must fail (unknown feature).
  run_podman "$rt" --hooks-dir "$HOOKS_DIR" -- -e OCI_ONLOAD=bogus -- 'echo SHOULD-NOT-RUN'
  echo "# --- bogus feature $rt"
  check_not "[bogus $rt] podman run fails" test "$RC" -eq 0
  assert_not_contains "[bogus $rt] the container process never ran" "$OUT" "SHOULD-NOT-RUN"
  if [[ $rt == runc ]]; then
    # runc passes the hook's stderr on; crun discards it (run.oci.hooks.stderr).
    assert_contains "[bogus $rt] podman shows the hook's line" "$ERR" 'unknown feature "bogus" requested by OCI_ONLOAD'
  else
    assert_contains "[bogus $rt] podman names the failing hook" "$ERR" "$OCID_BIN"
  fi
  assert_state_dir_empty "[bogus $rt]"
  assert_host_mounts_unchanged "[bogus $rt]"
done

leftover=$("${POD[@]}" ps -a --format '{{.ID}}' 2>&1)
assert_eq "podman has no container left" "" "$leftover"
# Podman 4.3 with cgroupfs leaves empty libpod-<id> and conmon cgroups under
# --cgroup-parent even without any hook: it_cleanup removes /$CG_PARENT.
it_finish
