# shellcheck shell=bash
# crun, on a pure cgroup v1 view.
# (Sourced by ../lib.sh, which sets SRC and the tally.)

# crun 1.8 refuses hybrid cgroups: in_crun runs CMD in a private mount namespace
# without the cgroup2 mount at /sys/fs/cgroup/unified, where crun sees pure v1.
in_crun() {
  unshare -m --propagation private sh -c \
    'if grep -q " /sys/fs/cgroup/unified " /proc/self/mountinfo; then umount /sys/fs/cgroup/unified || exit 125; fi; exec "$@"' \
    sh "$@"
}
# crun_setup: after it_setup. Sets CRUN_ROOT; skips if crun is missing.
IT_CRUN_IDS=()
crun_setup() {
  command -v crun >/dev/null 2>&1 || skip_all "crun is not installed (apt-get install crun)"
  in_crun true || die "cannot give crun a pure cgroup v1 view (umount /sys/fs/cgroup/unified in a private mount namespace)"
  CRUN_ROOT=$T/crun-root
  it_add_cleanup crun_cleanup
}
crun_cleanup() {
  local id
  for id in "${IT_CRUN_IDS[@]}"; do
    in_crun crun --root "$CRUN_ROOT" delete -f "$id" >/dev/null 2>&1
  done
  return 0
}
# crun_capture_hook_stderr: crun discards hooks' stderr unless the bundle has the
# annotation run.oci.hooks.stderr; point it at $B/hook.err.
crun_capture_hook_stderr() {
  jq --arg f "$B/hook.err" '.annotations["run.oci.hooks.stderr"] = $f' "$B/config.json" >"$B/config.json.new" \
    && mv "$B/config.json.new" "$B/config.json" || die "jq edit of $B/config.json failed"
}
# run_crun_container: like run_container, with crun (pure v1), from cwd /.
# ERR includes the hooks' stderr (HOOKERR alone).
run_crun_container() {
  IT_CRUN_IDS+=("$CID")
  crun_capture_hook_stderr
  (cd / && in_crun timeout 90 crun --root "$CRUN_ROOT" run --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err")
  RC=$?
  OUT=$(cat "$B/out")
  HOOKERR=$(cat "$B/hook.err" 2>/dev/null)
  ERR=$(cat "$B/err"; [[ -n $HOOKERR ]] && sed 's/^/hook stderr: /' <<<"$HOOKERR")
  sanitizer_check "$ERR"
  in_crun crun --root "$CRUN_ROOT" delete -f "$CID" >/dev/null 2>&1
  if [[ ${IT_DEBUG:-0} == 1 && -f $T/logs/$CID.log ]]; then
    sed 's/^/# hook log: /' "$T/logs/$CID.log"
  fi
  return 0
}
