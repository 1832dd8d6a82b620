# shellcheck shell=bash
# Running a bundle with runc, and reading the last run's output (any runtime).
# (Sourced by ../lib.sh, which sets SRC and the tally.)

# run_container: runs the bundle $B as $CID in the foreground (stdin /dev/null).
# Sets RC, OUT (container stdout), ERR (stderr: container and runc errors).
run_container() {
  IT_IDS+=("$CID")
  timeout 90 runc --root "$RUNC_ROOT" run --bundle "$B" "$CID" </dev/null >"$B/out" 2>"$B/err"
  RC=$?
  OUT=$(cat "$B/out")
  ERR=$(cat "$B/err")
  sanitizer_check "$ERR"
  runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1
  if [[ ${IT_DEBUG:-0} == 1 && -f $T/logs/$CID.log ]]; then
    sed 's/^/# hook log: /' "$T/logs/$CID.log"
  fi
  return 0
}

# dump_run: prints the last run's output, for failed assertions.
dump_run() {
  info "rc=$RC"
  sed 's/^/#      out: /' <<<"$OUT" | head -80
  sed 's/^/#      err: /' <<<"$ERR" | head -40
}

# field PREFIX: lines of $OUT starting with "PREFIX ", prefix removed.
field() { sed -n "s/^$1 //p" <<<"$OUT"; }

# Waits until a detached container's init runs (status "running").
wait_running() {  # ID
  local i
  for i in $(seq 1 100); do
    [[ $(runc --root "$RUNC_ROOT" state "$1" 2>/dev/null | jq -r .status) == running ]] && return 0
    sleep 0.1
  done
  return 1
}
