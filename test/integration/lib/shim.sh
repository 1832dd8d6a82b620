# shellcheck shell=bash
# The runtime shim, driven as containerd drives it, and its default
# settings file.
# (Sourced by ../lib.sh, which sets SRC and the tally.)

# shim_create_start: `shim create` (a function the suite defines: the shim with
# its options, as containerd calls runc) with stdio to files, as containerd
# hands the container's stdio to `runc create`, then `shim start`; waits until
# the container has stopped. Sets RC (create), OUT, ERR. Needs CID, B, RUNC_ROOT.
shim_create_start() {
  IT_IDS+=("$CID")
  shim create --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
  RC=$?
  if [[ $RC -eq 0 ]]; then
    shim start "$CID" || nok "shim start $CID"
    local i
    for i in $(seq 1 100); do
      [[ $(runc --root "$RUNC_ROOT" state "$CID" 2>/dev/null | jq -r .status) == stopped ]] && break
      sleep 0.1
    done
  fi
  OUT=$(cat "$B/out")
  ERR=$(cat "$B/err")
}

# shim_settings_setup: /etc/oci-decorator/runtime.json is written by the
# test (write_shim_settings) and at exit removed or, when there was one,
# restored. Sets SHIM_CONFIG, SHIM_LOG.
SHIM_CONFIG=/etc/oci-decorator/runtime.json
shim_settings_setup() {
  SHIM_LOG=$T/logs/shim.log
  it_track_new_dirs /etc/oci-decorator
  SHIM_CONFIG_SAVED=
  if [[ -e $SHIM_CONFIG || -L $SHIM_CONFIG ]]; then
    SHIM_CONFIG_SAVED=$T/runtime.json.saved
    cp -a "$SHIM_CONFIG" "$SHIM_CONFIG_SAVED" || die "cannot save $SHIM_CONFIG"
  fi
  it_add_cleanup restore_shim_settings
}
restore_shim_settings() {
  rm -f "$SHIM_CONFIG"
  [[ -z $SHIM_CONFIG_SAVED ]] || cp -a "$SHIM_CONFIG_SAVED" "$SHIM_CONFIG"
}
# write_shim_settings HOSTROOT: the shim runs runc with the simulated
# install HOSTROOT and $CONF_DIR, logging to $SHIM_LOG.
write_shim_settings() {
  mkdir -p "$(dirname "$SHIM_CONFIG")"
  jq -n --arg r "$(command -v runc)" --arg h "$1" --arg c "$CONF_DIR" --arg l "$SHIM_LOG" \
    '{runtime: $r, host_root: $h, config_dir: $c, log_file: $l}' >"$SHIM_CONFIG.new" &&
    mv "$SHIM_CONFIG.new" "$SHIM_CONFIG" || die "cannot write $SHIM_CONFIG"
}
