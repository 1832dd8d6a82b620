#!/bin/bash
# bench/run.sh: benchmarks the oci-decorator hook (run as root). See README.md.
#
#   a. hook alone, container that does not ask: /bin/true vs the hook
#   b. hook alone, activated (OCI_ONLOAD=all), against a real runc container
#      held in its prestart phase, a fresh one per run (untimed setup)
#   c. end to end: `runc run` of a busybox `true` container without the hook,
#      with the hook installed but inactive, with the hook activated
#
# Every section runs its candidates interleaved (round-robin) under hookbench,
# so ratios compare numbers taken side by side. Prints a table per section and
# writes bench/results/latest.md. Cleans up everything it created.
#
# Environment (defaults in brackets):
#   RUNS_INACTIVE [300]  RUNS_ACTIVE [100]  RUNS_E2E [40]  WARMUP [10]
#   SECTIONS ["a b c"]   SETTLE [0.05] (section b: seconds of quiet before each timed run)
#   BUILD_DIR [<repo>/build-bench]   OCID_BIN [BUILD_DIR/oci-decorator: skips the build]
#   RESULTS [bench/results/latest.md]   KEEP_WORKDIR [0]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
RUNS_INACTIVE=${RUNS_INACTIVE:-300}
RUNS_ACTIVE=${RUNS_ACTIVE:-100}
RUNS_E2E=${RUNS_E2E:-40}
WARMUP=${WARMUP:-10}
SECTIONS=${SECTIONS:-a b c}
SETTLE=${SETTLE:-0.05}
BUILD_DIR=${BUILD_DIR:-$REPO/build-bench}
RESULTS=${RESULTS:-$HERE/results/latest.md}
TAG=ocidb-$$          # prefix of every container id, cgroup and temp dir name

die() { echo "run.sh: $*" >&2; exit 1; }
log() { echo "== $*" >&2; }

[[ $(id -u) -eq 0 ]] || die "must run as root (runc, mounts, device cgroups)"
for tool in runc cmake cc timeout; do
  command -v "$tool" >/dev/null || die "needs $tool (apt-get install runc cmake g++ busybox-static)"
done

# --- build ---------------------------------------------------------------------
build() {
  local top=0
  if [[ -z ${OCID_BIN:-} ]]; then
    if [[ ! -f $BUILD_DIR/CMakeCache.txt ]]; then
      log "configuring $BUILD_DIR (Release)"
      cmake -S "$REPO" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null || die "cmake configure failed"
    elif ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$BUILD_DIR/CMakeCache.txt"; then
      echo "run.sh: warning: $BUILD_DIR is not a Release build" >&2
    fi
    cmake --build "$BUILD_DIR" -j"$(nproc)" --target oci-decorator >/dev/null || die "building oci-decorator failed"
    OCID_BIN=$BUILD_DIR/oci-decorator
    top=1
  fi
  # hookbench: from the top-level build when it includes bench/, else on its own.
  if [[ $top == 1 ]] && grep -qs 'add_subdirectory(bench)' "$REPO/CMakeLists.txt"; then
    cmake --build "$BUILD_DIR" -j"$(nproc)" --target hookbench static-true >/dev/null
    BENCH_BIN=$BUILD_DIR/bench
  else
    cmake -S "$HERE" -B "$BUILD_DIR/bench-standalone" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$BUILD_DIR/bench-standalone" -j"$(nproc)" >/dev/null
    BENCH_BIN=$BUILD_DIR/bench-standalone
  fi
  HOOKBENCH=$BENCH_BIN/hookbench
  STATIC_TRUE=$BENCH_BIN/static-true
  [[ -x $OCID_BIN ]] || die "no hook binary at $OCID_BIN"
  [[ -x $HOOKBENCH ]] || die "no hookbench at $HOOKBENCH"
  OCID_BIN=$(cd "$(dirname "$OCID_BIN")" && pwd)/$(basename "$OCID_BIN")
}

# --- work dir and cleanup ------------------------------------------------------
W=
SLEEP_PID=
cleanup() {
  local rc=$?
  set +e
  if [[ -n $W && -d $W/runc ]]; then
    for id in $(runc --root "$W/runc" list -q 2>/dev/null); do
      runc --root "$W/runc" delete -f "$id" >/dev/null 2>&1
    done
  fi
  [[ -n $SLEEP_PID ]] && kill "$SLEEP_PID" 2>/dev/null && wait "$SLEEP_PID" 2>/dev/null
  # runc removes a container's cgroups on delete; sweep what a failure left
  # (all ours carry $TAG in their name), deepest first.
  find /sys/fs/cgroup -mindepth 2 -maxdepth 6 -depth -type d -name "$TAG*" \
    -exec rmdir {} \; 2>/dev/null
  if [[ -n $W && -d $W ]]; then
    if [[ ${KEEP_WORKDIR:-0} == 1 ]]; then
      echo "run.sh: kept $W (unmount $W/tmpfs, then remove it)" >&2
    else
      mountpoint -q "$W/tmpfs" && { umount "$W/tmpfs" || umount -l "$W/tmpfs"; }
      rm -rf --one-file-system "$W"
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- fixtures ------------------------------------------------------------------
# make_config OUT ARGS ONLOAD(0|1) HOOKS(none|decorator|blocker): a runc-spec
# config.json with a relative, writable rootfs "rootfs" (as podman and docker
# make it). decorator: oci-decorator as prestart + poststop hook; blocker:
# helpers/blocker.sh as the only prestart hook, given the run dir @RUN_DIR@.
make_config() {
  local out=$1 args=$2 onload=$3 hooks=$4 env_extra="" hooks_json=""
  [[ $onload == 1 ]] && env_extra=', "OCI_ONLOAD=all"'
  if [[ $hooks == decorator ]]; then
    local a="\"oci-decorator\", \"--config-dir\", \"$W/config.d\", \"--host-root\", \"$W/host\", \"--state-dir\", \"$STATE\", \"hook\""
    hooks_json="\"hooks\": {\"prestart\": [{\"path\": \"$OCID_BIN\", \"args\": [$a, \"prestart\"]}], \"poststop\": [{\"path\": \"$OCID_BIN\", \"args\": [$a, \"poststop\"]}]},"
  elif [[ $hooks == blocker ]]; then
    hooks_json="\"hooks\": {\"prestart\": [{\"path\": \"$HERE/helpers/blocker.sh\", \"args\": [\"blocker\", \"@RUN_DIR@\"]}]},"
  fi
  sed -e 's/"terminal": true/"terminal": false/' \
      -e 's/"readonly": true/"readonly": false/' \
      -e "s/^\(\s*\)\"sh\"\$/\1$args/" \
      -e "s/\"TERM=xterm\"/\"TERM=xterm\"$env_extra/" \
      "$W/spec.json" >"$out"
  if [[ -n $hooks_json ]]; then
    sed -i "s|^\(\s*\)\"ociVersion\": \(.*\)\$|&\n\1$hooks_json|" "$out"
  fi
  grep -q "$args" "$out" || die "could not set process.args in $out (runc spec format changed?)"
}

prepare() {
  W=$(mktemp -d "/tmp/$TAG.XXXXXX")
  # Bundles and the hook's state dir live on a tmpfs: on the development VMs a
  # file create on the root ext4 costs ~1 ms (vs ~6 us on tmpfs), which would
  # time the disk rather than the hook. /run (the default state dir) is a tmpfs
  # in production anyway. Section b also times the hook with the bundle on disk.
  mkdir -p "$W/tmpfs"
  mount -t tmpfs -o mode=0700,size=512m "$TAG" "$W/tmpfs"
  TMPFS=$W/tmpfs
  STATE=$TMPFS/state
  DISK_FS=$(df --output=fstype "$W" | tail -n 1)
  mkdir -p "$W/runc" "$W/act" "$W/inactive" "$W/config.d" "$TMPFS/act" "$TMPFS/e2e"
  install -d -m 0700 "$STATE"
  log "work dir $W: simulated Onload host root, busybox rootfs"
  "$REPO/scripts/sim-onload.sh" "$W/host" 2>"$W/sim-onload.log" ||
    { cat "$W/sim-onload.log" >&2; die "sim-onload.sh failed"; }
  "$REPO/scripts/make-rootfs.sh" "$W/rootfs" >/dev/null
  cp "$REPO"/config/*.json "$W/config.d/"
  mkdir -p "$W/config-onload.d" && cp "$REPO/config/onload.json" "$W/config-onload.d/"
  (cd "$W" && runc spec && mv config.json spec.json)

  make_config "$W/cfg-sleep-inactive.json" '"sleep", "1000"' 0 none
  make_config "$W/cfg-sleep-active.json"   '"sleep", "1000"' 1 blocker
  make_config "$W/cfg-true-nohook.json"    '"true"' 0 none
  make_config "$W/cfg-true-inactive.json"  '"true"' 0 decorator
  make_config "$W/cfg-true-active.json"    '"true"' 1 decorator

  # For the helpers/ scripts that hookbench runs as per-run setup/teardown.
  export OCIDB_W=$W OCIDB_TAG=$TAG OCIDB_BIN=$OCID_BIN OCIDB_STATE=$STATE OCIDB_SETTLE=$SETTLE
}

# --- report helpers ------------------------------------------------------------
# tsv_get FILE NAME COLUMN
tsv_get() {
  awk -F'\t' -v n="$2" -v c="$3" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} $1==n{print $h[c]}' "$1"
}
fmt() { awk -v x="$1" -v d="${2:-3}" 'BEGIN{printf "%.*f", d, x}'; }
MD_ROWS=()
VERDICTS=()
# md_rows SECTION_LABEL TSV: one Markdown row per candidate of a section.
md_rows() {
  local label=$1 tsv=$2 first=1 name runs med p90 cell
  while IFS=$'\t' read -r name _; do
    runs=$(tsv_get "$tsv" "$name" runs)
    med=$(fmt "$(tsv_get "$tsv" "$name" median_ms)")
    p90=$(fmt "$(tsv_get "$tsv" "$name" p90_ms)")
    if [[ $first == 1 ]]; then
      cell="1.00 (baseline)"
    else
      cell="**$(fmt "$(tsv_get "$tsv" "$name" ratio)" 2)×** [$(fmt "$(tsv_get "$tsv" "$name" ratio_lo)" 2), $(fmt "$(tsv_get "$tsv" "$name" ratio_hi)" 2)]"
    fi
    MD_ROWS+=("| $label | $name | $runs | $med | $p90 | $cell |")
    first=0 label=""
  done < <(tail -n +2 "$tsv")
}
# verdict TEXT VALUE LIMIT: one line "TEXT: VALUE (target <= LIMIT): within|OVER".
verdict() {
  VERDICTS+=("$1 (target ≤ $3): $(awk -v v="$2" -v l="$3" 'BEGIN{print (v+0 <= l+0) ? "within" : "**over**"}')")
}

# --- sections ------------------------------------------------------------------
section_a() {
  log "a. hook alone, container does not ask ($RUNS_INACTIVE runs each)"
  sleep 1000 & SLEEP_PID=$!
  cp -a "$W/rootfs" "$W/inactive/rootfs"
  cp "$W/cfg-sleep-inactive.json" "$W/inactive/config.json"
  printf '{"ociVersion":"1.0.2","id":"%s-inactive","status":"creating","pid":%d,"bundle":"%s"}\n' \
    "$TAG" "$SLEEP_PID" "$W/inactive" >"$W/state-inactive.json"
  local hook=(--stdin "$W/state-inactive.json")
  "$HOOKBENCH" --runs "$RUNS_INACTIVE" --warmup "$WARMUP" --tsv "$W/a.tsv" \
    --name /bin/true "${hook[@]}" /bin/true :: \
    --name "oci-decorator hook" "${hook[@]}" \
      "$OCID_BIN" --config-dir "$W/config.d" --state-dir "$STATE" hook prestart :: \
    --name "oci-decorator hook, onload.json only" "${hook[@]}" \
      "$OCID_BIN" --config-dir "$W/config-onload.d" --state-dir "$STATE" hook prestart :: \
    --name "static no-op" "${hook[@]}" "$STATIC_TRUE"
  md_rows "Hook alone, container does not ask" "$W/a.tsv"
  local r; r=$(tsv_get "$W/a.tsv" "oci-decorator hook" ratio)
  verdict "Hook alone, container does not ask (all shipped inventories): $(fmt "$r" 2)× /bin/true" "$r" 1.2
  kill "$SLEEP_PID"; wait "$SLEEP_PID" 2>/dev/null || true; SLEEP_PID=
}

# One activated run outside the benchmark, to show the hook does the work:
# the mounts it adds in the container's mount namespace, the device rules in
# its cgroup once runc has finished creating it (runc must still succeed).
verify_activated() {
  local base=$TMPFS/act b=$TMPFS/act/verify pid before after rules list dev mj
  "$HERE/helpers/new-container.sh" verify "$W/cfg-sleep-active.json" "$base"
  pid=$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$b/state.json")
  before=$(wc -l <"/proc/$pid/mountinfo")
  if ! "$OCID_BIN" --config-dir "$W/config.d" --host-root "$W/host" --state-dir "$STATE" \
       hook prestart <"$b/state.json" 2>"$W/verify.err"; then
    echo "run.sh: the activated hook failed. Command:" >&2
    echo "  $OCID_BIN --config-dir $W/config.d --host-root $W/host --state-dir $STATE hook prestart < $b/state.json" >&2
    echo "  state: $(cat "$b/state.json")" >&2
    cat "$W/verify.err" >&2
    "$HERE/helpers/del-container.sh" verify "$base"
    die "activated hook failed"
  fi
  cp "/proc/$pid/mountinfo" "$W/verify.mountinfo"
  after=$(wc -l <"$W/verify.mountinfo")
  echo go >"$b/release"
  while [[ ! -e $b/create.rc ]]; do sleep 0.01; done
  if [[ $(cat "$b/create.rc") != 0 ]]; then
    cat "$b/create.log" >&2
    "$HERE/helpers/del-container.sh" verify "$base"
    die "runc create failed after the activated hook ran"
  fi
  list=/sys/fs/cgroup/devices$(awk -F: '$2=="devices"{print $3}' "/proc/$pid/cgroup")/devices.list
  rules=0
  for dev in onload onload_epoll sfc_char; do
    mj=$(( 16#$(stat -c %t "$W/host/dev/$dev") ))
    grep -q "^c $mj:0 " "$list" && rules=$((rules + 1))
  done
  ADDED_MOUNTS=$((after - before))
  ADDED_RULES=$rules
  log "verify: the activated hook added $ADDED_MOUNTS mounts and $ADDED_RULES/3 device rules"
  if (( ADDED_MOUNTS < 10 || ADDED_RULES < 3 )); then
    echo "run.sh: warning: expected 10+ mounts and 3 device rules. Container mountinfo (last 20):" >&2
    tail -n 20 "$W/verify.mountinfo" >&2
    echo "devices.list:" >&2; cat "$list" >&2
  fi
  "$HERE/helpers/del-container.sh" verify "$base"
}

section_b() {
  log "b. hook alone, activated, a fresh runc container per run ($RUNS_ACTIVE runs each)"
  verify_activated
  local h="$HERE/helpers" cfg=$W/cfg-sleep-active.json
  local hook=("$OCID_BIN" --config-dir "$W/config.d" --host-root "$W/host" --state-dir "$STATE" hook prestart)
  "$HOOKBENCH" --runs "$RUNS_ACTIVE" --warmup "$WARMUP" --tsv "$W/b.tsv" \
    --name /bin/true --setup "$h/new-container.sh {n} $cfg $TMPFS/act" \
      --teardown "$h/del-container.sh {n} $TMPFS/act" --stdin "$TMPFS/act/{n}/state.json" /bin/true :: \
    --name "oci-decorator hook" --setup "$h/new-container.sh {n} $cfg $TMPFS/act" \
      --teardown "$h/del-container.sh {n} $TMPFS/act" --stdin "$TMPFS/act/{n}/state.json" "${hook[@]}" :: \
    --name "oci-decorator hook, bundle on $DISK_FS" --setup "$h/new-container.sh {n} $cfg $W/act" \
      --teardown "$h/del-container.sh {n} $W/act" --stdin "$W/act/{n}/state.json" "${hook[@]}"
  md_rows "Hook alone, activated Onload: $ADDED_MOUNTS mounts, $ADDED_RULES devices + cgroup rules, runc container in prestart" "$W/b.tsv"
  local m; m=$(tsv_get "$W/b.tsv" "oci-decorator hook" median_ms)
  verdict "Hook alone, activated (bundle on tmpfs): median $(fmt "$m") ms" "$m" 1.5
}

section_c() {
  log "c. end to end: runc run busybox true ($RUNS_E2E runs each)"
  local c=() v h="$HERE/helpers" base=$TMPFS/e2e
  for v in "no hook:nohook" "hook installed, inactive:inactive" "hook activated:active"; do
    [[ ${#c[@]} -gt 0 ]] && c+=("::")
    c+=(--name "runc run, ${v%%:*}"
        --setup "$h/new-bundle.sh {n} $W/cfg-true-${v#*:}.json $base" --teardown "$h/del-bundle.sh {n} $base"
        runc --root "$W/runc" run --bundle "$base/{n}" "$TAG-e{n}")
  done
  "$HOOKBENCH" --runs "$RUNS_E2E" --warmup "$(( WARMUP < 5 ? WARMUP : 5 ))" --tsv "$W/c.tsv" "${c[@]}"
  md_rows "End to end: \`runc run\` of busybox \`true\`" "$W/c.tsv"
}

write_results() {
  mkdir -p "$(dirname "$RESULTS")"
  local cpu runcv commit load_end
  cpu=$(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)
  runcv=$(runc --version | awk 'NR==1{print $3}')
  commit=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)
  load_end=$(cut -d' ' -f1-3 /proc/loadavg)
  {
    echo "## Benchmark results"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC') · kernel $(uname -r) · runc $runcv · $cpu, $(nproc) cores ·"
    echo "oci-decorator $commit (Release, static) · load average $LOAD_START at start, $load_end at end"
    echo
    echo "Wall time per run of fork + exec + wait, with the OCI state piped in; the candidates of a"
    echo "section ran interleaved in one run. Ratio = median / the section's first row, with a"
    echo "bootstrap 95% interval. Bundles on tmpfs unless stated. See bench/README.md."
    echo
    echo "| Scenario | Candidate | Runs | Median (ms) | p90 (ms) | Ratio [95% CI] |"
    echo "|---|---|---:|---:|---:|---|"
    printf '%s\n' "${MD_ROWS[@]}"
    if [[ ${#VERDICTS[@]} -gt 0 ]]; then
      echo
      printf -- '- %s\n' "${VERDICTS[@]}"
    fi
  } >"$RESULTS"
}

build
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v l="${LOAD_START%% *}" 'BEGIN{exit !(l > 0.5)}' &&
  echo "run.sh: warning: load average $LOAD_START at start: other work on this machine adds noise" >&2
prepare
ADDED_MOUNTS=? ADDED_RULES=?
for s in $SECTIONS; do
  [[ $(type -t "section_$s") == function ]] || die "unknown section $s (a, b, c)"
  "section_$s"
  echo
done
write_results
cat "$RESULTS"
echo
log "written to $RESULTS"
