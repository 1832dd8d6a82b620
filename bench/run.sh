#!/bin/bash
# bench/run.sh: benchmarks the oci-decorator hook (run as root). See bench/README.md.
#
#   a. hook alone, container that does not ask: /bin/true vs the hook
#   b. hook alone, activated (OCI_ONLOAD=all), against a real runc container
#      held in its prestart phase, a fresh one per run (untimed setup)
#   c. end to end: `runc run` of a busybox `true` container without the hook,
#      with the hook installed but inactive, with the hook activated
#   d. crun (on pure cgroup v1, in a private mount namespace without the v2
#      mount): b's hook-alone runs against a crun container, and c's end to end
#      runs with `crun run`
#   e. cgroup v2 (runc on pure v2, in a private mount namespace with cgroup2 on
#      /sys/fs/cgroup): b's hook-alone runs (the hook replaces the container's
#      eBPF device program) and c's end to end runs
#   f. the runtime shim (oci-decorator-runtime, as docker and containerd call
#      it) on `create`: `runc create` directly vs through the shim for a
#      container that does not ask (pass-through) and for an activated one
#      (the shim edits config.json, then runc makes the mounts and devices),
#      plus `runc create` of the config.json the shim wrote (runc's own share)
#
# Every section runs its candidates interleaved (round-robin) under hookbench,
# so ratios compare numbers taken side by side. Prints a table per section and
# writes bench/results/latest.md. Cleans up everything it created.
#
# Environment (defaults in brackets):
#   RUNS_INACTIVE [300]  RUNS_ACTIVE [100]  RUNS_E2E [40]  RUNS_SHIM [100]  WARMUP [10]
#   SECTIONS ["a b c d e f"]   SETTLE [0.05] (b, d, e: seconds of quiet before each timed run)
#   BUILD_DIR [<repo>/build-bench]   OCID_BIN [BUILD_DIR/oci-decorator: skips the build]
#   OLD_BIN [unset]: a second hook binary (say, a build of the previous commit)
#     timed beside OCID_BIN in sections a and b, same inputs, interleaved: what a
#     change costs on the not-asked and the activated path, in one run
#   OLD_CONFIG_DIR [the same copy of config/]: the inventories OLD_BIN reads (an
#     older binary may refuse keys the current config/ has)
#   RESULTS [bench/results/latest.md]   KEEP_WORKDIR [0]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
RUNS_INACTIVE=${RUNS_INACTIVE:-300}
RUNS_ACTIVE=${RUNS_ACTIVE:-100}
RUNS_E2E=${RUNS_E2E:-40}
RUNS_SHIM=${RUNS_SHIM:-100}
WARMUP=${WARMUP:-10}
SECTIONS=${SECTIONS:-a b c d e f}
SETTLE=${SETTLE:-0.05}
BUILD_DIR=${BUILD_DIR:-$REPO/build-bench}
RESULTS=${RESULTS:-$HERE/results/latest.md}
TAG=ocidb-$$          # prefix of every container id, cgroup and temp dir name

V2_ROOT=/sys/fs/cgroup/unified   # the cgroup2 hierarchy of these hybrid hosts

die() { echo "run.sh: $*" >&2; exit 1; }
log() { echo "== $*" >&2; }

[[ $(id -u) -eq 0 ]] || die "must run as root (runc, mounts, device cgroups)"
for s in $SECTIONS; do
  [[ $s == [abcdef] ]] || die "unknown section $s (a, b, c, d, e, f)"
done
for tool in runc cmake cc timeout; do
  command -v "$tool" >/dev/null || die "needs $tool (apt-get install runc cmake g++ busybox-static)"
done
if [[ " $SECTIONS " == *" d "* ]]; then
  for tool in crun unshare nsenter; do
    command -v "$tool" >/dev/null || die "section d needs $tool (apt-get install crun util-linux)"
  done
fi
if [[ " $SECTIONS " == *" e "* ]]; then
  for tool in bpftool unshare nsenter; do
    command -v "$tool" >/dev/null || die "section e needs $tool (apt-get install bpftool util-linux)"
  done
  [[ $(stat -f -c %T "$V2_ROOT" 2>/dev/null) == cgroup2fs ]] ||
    die "section e needs the cgroup2 hierarchy at $V2_ROOT (a hybrid host) to run runc on pure v2"
fi
if [[ " $SECTIONS " == *" f "* ]]; then
  command -v jq >/dev/null || die "section f needs jq (apt-get install jq)"
fi

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
NS_PID=               # the holder of section d's or e's mount namespace
SUBTREE_START=-       # $V2_ROOT/cgroup.subtree_control before section e ("-": not run)
# release_blocked: a run interrupted between setup and teardown leaves a
# runtime held in blocker.sh: let it go, and give its create a moment to end.
release_blocked() {
  local f b i
  for f in "$W"/tmpfs/act/*/release "$W"/act/*/release; do
    [[ -p $f ]] || continue
    b=${f%/release}
    [[ -e $b/create.rc ]] && continue
    timeout 2 sh -c 'echo go >"$1"' _ "$f" 2>/dev/null
    for ((i = 0; i < 300; i++)); do [[ -e $b/create.rc ]] && break; sleep 0.01; done
  done
}
# delete_all RUNTIME ROOT [v1|v2]: deletes every container of that state root,
# in a pure cgroup v1 or v2 mount namespace like the one it was created in.
delete_all() {
  local rt=$1 root=$2 pre=() id
  [[ -d $root ]] || return 0
  [[ -n ${3:-} ]] && pre=("$HERE/helpers/pure-cgroup.sh" "$3")
  for id in $("$rt" --root "$root" list -q 2>/dev/null); do
    "${pre[@]}" "$rt" --root "$root" delete -f "$id" >/dev/null 2>&1 ||
      echo "run.sh: warning: could not delete $rt container $id" >&2
  done
}
ns_stop() {
  if [[ -n $NS_PID ]]; then
    kill "$NS_PID" 2>/dev/null
    wait "$NS_PID" 2>/dev/null || true
    NS_PID=
  fi
  return 0
}
# v2_restore: turns off the controllers runc turned on in the v2 root (it adds
# +hugetlb), unless a populated cgroup that is not ours has them (another
# test's container, running now: that test turns it off itself).
v2_restore() {
  local c f users
  [[ $SUBTREE_START != - ]] || return 0
  for c in $(cat "$V2_ROOT/cgroup.subtree_control"); do
    [[ " $SUBTREE_START " == *" $c "* ]] && continue
    users=
    while IFS= read -r f; do
      grep -qw "$c" "$f" && [[ -n $(head -c 1 "${f%/*}/cgroup.procs") ]] && users+="${f%/*} "
    done < <(find "$V2_ROOT" -mindepth 2 -name cgroup.controllers ! -path "$V2_ROOT/$TAG*" 2>/dev/null)
    if [[ -n $users ]]; then
      echo "run.sh: warning: left +$c on in $V2_ROOT/cgroup.subtree_control: in use by $users" >&2
    elif ! echo "-$c" >"$V2_ROOT/cgroup.subtree_control"; then
      echo "run.sh: warning: could not turn $c off in $V2_ROOT/cgroup.subtree_control" >&2
    fi
  done
  SUBTREE_START=-
}
cleanup() {
  local rc=$?
  set +e
  if [[ -n $W && -d $W ]]; then
    release_blocked
    delete_all runc "$W/runc"
    delete_all crun "$W/crun" v1
    delete_all runc "$W/runc-v2" v2
  fi
  ns_stop
  [[ -n $SLEEP_PID ]] && kill "$SLEEP_PID" 2>/dev/null && wait "$SLEEP_PID" 2>/dev/null
  # runc and crun remove a container's cgroups on delete; sweep what a failure
  # left (all ours carry $TAG in their name; runc on v2 makes them under
  # $V2_ROOT), deepest first.
  find /sys/fs/cgroup -mindepth 2 -maxdepth 6 -depth -type d -name "$TAG*" \
    -exec rmdir {} \; 2>/dev/null
  v2_restore
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
  # A loaded module of the simulated library's version, so the activated
  # runs pay for the whole version lock check (a match), as on a real host.
  # As the kernel shows it: ONLOAD_VERSION ("0.0.0-sim ", sim_libonload.c) and a newline.
  mkdir -p "$W/host/sys/module/onload" && echo '0.0.0-sim ' >"$W/host/sys/module/onload/version"
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
  use_runtime runc "$W/runc"
}

# --- runtime and mount namespace of a section ------------------------------------
# use_runtime RUNTIME STATE_ROOT [v1|v2]: what the helpers (and verify_activated)
# drive for the next section. With v1 or v2, starts a holder process in a new
# private mount namespace that shows a pure cgroup v1 or v2 host
# (helpers/pure-cgroup.sh); `sec CMD` then runs CMD in it: hookbench, and so
# the setups, the runtime, its hooks and the timed hook, all see that mount
# table. Without, `sec` runs CMD here, on the hybrid host (sections a, b, c).
use_runtime() {
  local i self
  SEC_RT=$1 SEC_RT_ROOT=$2
  mkdir -p "$SEC_RT_ROOT"
  ns_stop
  [[ -n ${3:-} ]] || return 0
  "$HERE/helpers/pure-cgroup.sh" "$3" sleep 100000 &
  NS_PID=$!
  self=$(readlink /proc/self/ns/mnt)
  for ((i = 0; i < 500; i++)); do
    if [[ $(cat "/proc/$NS_PID/comm" 2>/dev/null) == sleep ]]; then
      [[ $(readlink "/proc/$NS_PID/ns/mnt") != "$self" ]] || die "pure-cgroup.sh did not unshare"
      return 0
    fi
    kill -0 "$NS_PID" 2>/dev/null || break
    sleep 0.01
  done
  die "could not make a mount namespace with pure cgroup $3 (helpers/pure-cgroup.sh)"
}
sec() {
  local pre=(env OCIDB_RUNTIME="$SEC_RT" OCIDB_RT_ROOT="$SEC_RT_ROOT")
  [[ -n $NS_PID ]] && pre+=(nsenter -t "$NS_PID" -m --)
  "${pre[@]}" "$@"
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

# old_vs_new TSV NEW_NAME WHAT: with OLD_BIN, one line comparing the two
# binaries' medians from the same interleaved run (each is also a row).
old_vs_new() {
  [[ -n ${OLD_BIN:-} ]] || return 0
  local new old
  new=$(tsv_get "$1" "$2" median_ms) old=$(tsv_get "$1" "OLD_BIN hook" median_ms)
  VERDICTS+=("$3: this build $(fmt "$new") ms, OLD_BIN ($OLD_BIN) $(fmt "$old") ms: $(awk -v n="$new" -v o="$old" 'BEGIN{printf "%+.3f ms (%.2f×)", n - o, n / o}')")
}

# --- sections ------------------------------------------------------------------
section_a() {
  log "a. hook alone, container does not ask ($RUNS_INACTIVE runs each)"
  sleep 1000 & SLEEP_PID=$!
  cp -a "$W/rootfs" "$W/inactive/rootfs"
  cp "$W/cfg-sleep-inactive.json" "$W/inactive/config.json"
  printf '{"ociVersion":"1.0.2","id":"%s-inactive","status":"creating","pid":%d,"bundle":"%s"}\n' \
    "$TAG" "$SLEEP_PID" "$W/inactive" >"$W/state-inactive.json"
  local hook=(--stdin "$W/state-inactive.json") old=()
  [[ -z ${OLD_BIN:-} ]] ||
    old=(:: --name "OLD_BIN hook" "${hook[@]}" "$OLD_BIN" --config-dir "${OLD_CONFIG_DIR:-$W/config.d}" --state-dir "$STATE" hook prestart)
  "$HOOKBENCH" --runs "$RUNS_INACTIVE" --warmup "$WARMUP" --tsv "$W/a.tsv" \
    --name /bin/true "${hook[@]}" /bin/true :: \
    --name "oci-decorator hook" "${hook[@]}" \
      "$OCID_BIN" --config-dir "$W/config.d" --state-dir "$STATE" hook prestart :: \
    --name "oci-decorator hook, onload.json only" "${hook[@]}" \
      "$OCID_BIN" --config-dir "$W/config-onload.d" --state-dir "$STATE" hook prestart :: \
    --name "static no-op" "${hook[@]}" "$STATIC_TRUE" "${old[@]}"
  md_rows "Hook alone, container does not ask" "$W/a.tsv"
  old_vs_new "$W/a.tsv" "oci-decorator hook" "not asked"
  local r; r=$(tsv_get "$W/a.tsv" "oci-decorator hook" ratio)
  verdict "Hook alone, container does not ask (all shipped inventories): $(fmt "$r" 2)× /bin/true" "$r" 1.2
  kill "$SLEEP_PID"; wait "$SLEEP_PID" 2>/dev/null || true; SLEEP_PID=
}

# One activated run outside the benchmark, to show the hook does the work:
# the mounts it adds in the container's mount namespace, the device rules in
# its cgroup once the runtime has finished creating it (the runtime must still
# succeed). Runs with the section's runtime, in its namespace (sec).
# verify_activated [v2]: on v1 (and hybrid) hosts, counts the three Onload
# rules in the container's devices.list; with v2, lists the eBPF programs
# attached to the container's cgroup (exactly one, the hook's ocid_devices)
# and counts the Onload majors the program checks.
# Sets ADDED_MOUNTS, ADDED_RULES, and V2_PROGS (v2).
verify_activated() {
  local v2=${1:-} base=$TMPFS/act b=$TMPFS/act/verify pid before after rules list dev mj i cg id
  sec "$HERE/helpers/new-container.sh" verify "$W/cfg-sleep-active.json" "$base"
  pid=$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$b/state.json")
  before=$(wc -l <"/proc/$pid/mountinfo")
  if ! sec "$OCID_BIN" --config-dir "$W/config.d" --host-root "$W/host" --state-dir "$STATE" \
       hook prestart <"$b/state.json" 2>"$W/verify.err"; then
    echo "run.sh: the activated hook failed. Command:" >&2
    echo "  $OCID_BIN --config-dir $W/config.d --host-root $W/host --state-dir $STATE hook prestart < $b/state.json" >&2
    [[ -n $NS_PID ]] && echo "  (run in the mount namespace of $SEC_RT: helpers/pure-cgroup.sh)" >&2
    echo "  state: $(cat "$b/state.json")" >&2
    cat "$W/verify.err" >&2
    sec "$HERE/helpers/del-container.sh" verify "$base"
    die "activated hook failed"
  fi
  cp "/proc/$pid/mountinfo" "$W/verify.mountinfo"
  after=$(wc -l <"$W/verify.mountinfo")
  echo go >"$b/release"
  for ((i = 0; i < 3000; i++)); do [[ -e $b/create.rc ]] && break; sleep 0.01; done
  if [[ $(cat "$b/create.rc" 2>/dev/null) != 0 ]]; then
    cat "$b/create.log" >&2
    sec "$HERE/helpers/del-container.sh" verify "$base"
    die "$SEC_RT create failed after the activated hook ran"
  fi
  ADDED_MOUNTS=$((after - before))
  if [[ $v2 == v2 ]]; then
    # The container's cgroup as the host sees it ($V2_ROOT), from its 0:: line.
    cg=$V2_ROOT$(awk -F: '$1 == "0" {print $3}' "/proc/$pid/cgroup")
    bpftool cgroup list "$cg" >"$W/verify.progs" 2>&1 || true
    # "ID AttachType AttachFlags Name" under a header; the name is last.
    V2_PROGS=$(awk 'NR > 1 && $2 == "cgroup_device" {n++; s = s (n > 1 ? ", " : "") $NF}
                    END {printf "%d device program%s attached: %s", n, n == 1 ? "" : "s", n ? s : "none"}' \
                 "$W/verify.progs")
    # The majors of the three Onload nodes in the program's checks.
    rules=0
    id=$(awk 'NR > 1 && $2 == "cgroup_device" {print $1; exit}' "$W/verify.progs")
    if [[ -n $id ]]; then
      bpftool prog dump xlated id "$id" >"$W/verify.xlated" 2>&1 || true
      for dev in onload onload_epoll sfc_char; do
        mj=$(( 16#$(stat -c %t "$W/host/dev/$dev") ))
        grep -q "if r4 != $(printf '0x%x' "$mj") goto" "$W/verify.xlated" && rules=$((rules + 1))
      done
    fi
    ADDED_RULES=$rules
    log "verify: the activated hook added $ADDED_MOUNTS mounts; $V2_PROGS (on $cg), checking $ADDED_RULES/3 Onload majors"
    if (( ADDED_MOUNTS < 10 || ADDED_RULES < 3 )) || [[ $V2_PROGS != "1 device program attached: ocid_devices" ]]; then
      echo "run.sh: warning: expected 10+ mounts and exactly one device program, ocid_devices, that checks the 3 Onload majors. bpftool cgroup list $cg:" >&2
      cat "$W/verify.progs" >&2
      echo "Container mountinfo (last 20):" >&2; tail -n 20 "$W/verify.mountinfo" >&2
    fi
  else
    list=/sys/fs/cgroup/devices$(awk -F: '$2=="devices"{print $3}' "/proc/$pid/cgroup")/devices.list
    rules=0
    for dev in onload onload_epoll sfc_char; do
      mj=$(( 16#$(stat -c %t "$W/host/dev/$dev") ))
      grep -q "^c $mj:0 " "$list" && rules=$((rules + 1))
    done
    ADDED_RULES=$rules
    log "verify: the activated hook added $ADDED_MOUNTS mounts and $ADDED_RULES/3 device rules"
    if (( ADDED_MOUNTS < 10 || ADDED_RULES < 3 )); then
      echo "run.sh: warning: expected 10+ mounts and 3 device rules. Container mountinfo (last 20):" >&2
      tail -n 20 "$W/verify.mountinfo" >&2
      echo "devices.list:" >&2; cat "$list" >&2
    fi
  fi
  sec "$HERE/helpers/del-container.sh" verify "$base"
}

section_b() {
  log "b. hook alone, activated, a fresh runc container per run ($RUNS_ACTIVE runs each)"
  verify_activated
  local h="$HERE/helpers" cfg=$W/cfg-sleep-active.json
  local hook=("$OCID_BIN" --config-dir "$W/config.d" --host-root "$W/host" --state-dir "$STATE" hook prestart) old=()
  [[ -z ${OLD_BIN:-} ]] ||
    old=(:: --name "OLD_BIN hook" --setup "$h/new-container.sh {n} $cfg $TMPFS/act"
         --teardown "$h/del-container.sh {n} $TMPFS/act" --stdin "$TMPFS/act/{n}/state.json"
         "$OLD_BIN" --config-dir "${OLD_CONFIG_DIR:-$W/config.d}" "${hook[@]:3}")
  "$HOOKBENCH" --runs "$RUNS_ACTIVE" --warmup "$WARMUP" --tsv "$W/b.tsv" \
    --name /bin/true --setup "$h/new-container.sh {n} $cfg $TMPFS/act" \
      --teardown "$h/del-container.sh {n} $TMPFS/act" --stdin "$TMPFS/act/{n}/state.json" /bin/true :: \
    --name "oci-decorator hook" --setup "$h/new-container.sh {n} $cfg $TMPFS/act" \
      --teardown "$h/del-container.sh {n} $TMPFS/act" --stdin "$TMPFS/act/{n}/state.json" "${hook[@]}" :: \
    --name "oci-decorator hook, bundle on $DISK_FS" --setup "$h/new-container.sh {n} $cfg $W/act" \
      --teardown "$h/del-container.sh {n} $W/act" --stdin "$W/act/{n}/state.json" "${hook[@]}" \
    "${old[@]}"
  old_vs_new "$W/b.tsv" "oci-decorator hook" "activated"
  md_rows "Hook alone, activated Onload: $ADDED_MOUNTS mounts, $ADDED_RULES devices + cgroup rules, runc container in prestart" "$W/b.tsv"
  local m; m=$(tsv_get "$W/b.tsv" "oci-decorator hook" median_ms)
  verdict "Hook alone, activated (bundle on tmpfs): median $(fmt "$m") ms" "$m" 1.5
}

# e2e_runs TSV: `RUNTIME run` of a busybox `true` container, a fresh bundle
# per run (untimed): no hook; hook installed (prestart + poststop), inactive;
# hook activated. With the section's runtime, in its namespace (sec).
e2e_runs() {
  local tsv=$1 c=() v h="$HERE/helpers" base=$TMPFS/e2e
  for v in "no hook:nohook" "hook installed, inactive:inactive" "hook activated:active"; do
    [[ ${#c[@]} -gt 0 ]] && c+=("::")
    c+=(--name "$SEC_RT run, ${v%%:*}"
        --setup "$h/new-bundle.sh {n} $W/cfg-true-${v#*:}.json $base" --teardown "$h/del-bundle.sh {n} $base"
        "$SEC_RT" --root "$SEC_RT_ROOT" run --bundle "$base/{n}" "$TAG-e{n}")
  done
  sec "$HOOKBENCH" --runs "$RUNS_E2E" --warmup "$(( WARMUP < 5 ? WARMUP : 5 ))" --tsv "$tsv" "${c[@]}"
}

section_c() {
  log "c. end to end: runc run busybox true ($RUNS_E2E runs each)"
  e2e_runs "$W/c.tsv"
  md_rows "End to end: \`runc run\` of busybox \`true\`" "$W/c.tsv"
}

# hook_alone_activated TSV: section b's /bin/true and activated-hook rows
# (bundle on tmpfs) with the section's runtime, in its namespace (sec): each
# run follows a fresh container held in its prestart phase by blocker.sh.
hook_alone_activated() {
  local tsv=$1 h="$HERE/helpers" cfg=$W/cfg-sleep-active.json
  local hook=("$OCID_BIN" --config-dir "$W/config.d" --host-root "$W/host" --state-dir "$STATE" hook prestart)
  local run=(--setup "$h/new-container.sh {n} $cfg $TMPFS/act" --teardown "$h/del-container.sh {n} $TMPFS/act"
             --stdin "$TMPFS/act/{n}/state.json")
  sec "$HOOKBENCH" --runs "$RUNS_ACTIVE" --warmup "$WARMUP" --tsv "$tsv" \
    --name /bin/true "${run[@]}" /bin/true :: \
    --name "oci-decorator hook" "${run[@]}" "${hook[@]}"
}

section_d() {
  log "d. crun on pure cgroup v1: hook alone, activated ($RUNS_ACTIVE runs each); crun run ($RUNS_E2E runs each)"
  use_runtime crun "$W/crun" v1
  verify_activated
  hook_alone_activated "$W/d.tsv"
  md_rows "crun, hook alone, activated Onload: $ADDED_MOUNTS mounts, $ADDED_RULES devices + cgroup rules, crun container in prestart" "$W/d.tsv"
  local m; m=$(tsv_get "$W/d.tsv" "oci-decorator hook" median_ms)
  verdict "crun: hook alone, activated (bundle on tmpfs): median $(fmt "$m") ms" "$m" 1.5
  e2e_runs "$W/d-e2e.tsv"
  md_rows "crun, end to end: \`crun run\` of busybox \`true\`" "$W/d-e2e.tsv"
  use_runtime runc "$W/runc"
}

section_e() {
  log "e. runc on pure cgroup v2: hook alone, activated ($RUNS_ACTIVE runs each); runc run ($RUNS_E2E runs each)"
  [[ $SUBTREE_START != - ]] || SUBTREE_START=$(cat "$V2_ROOT/cgroup.subtree_control")
  use_runtime runc "$W/runc-v2" v2
  verify_activated v2
  hook_alone_activated "$W/e.tsv"
  md_rows "cgroup v2 (runc), hook alone, activated Onload: $ADDED_MOUNTS mounts, $ADDED_RULES devices in the eBPF device program that replaced runc's ($V2_PROGS)" "$W/e.tsv"
  local m; m=$(tsv_get "$W/e.tsv" "oci-decorator hook" median_ms)
  verdict "cgroup v2: hook alone, activated, device program replaced (bundle on tmpfs): median $(fmt "$m") ms" "$m" 2
  e2e_runs "$W/e-e2e.tsv"
  md_rows "cgroup v2 (runc), end to end: \`runc run\` of busybox \`true\`" "$W/e-e2e.tsv"
  use_runtime runc "$W/runc"
  # The containers are gone: remove what runc left under $V2_ROOT (nothing,
  # normally) and turn its +hugetlb off again.
  find "$V2_ROOT" -mindepth 1 -maxdepth 5 -depth -type d -name "$TAG*" -exec rmdir {} \; 2>/dev/null || true
  v2_restore
}

# f. The runtime shim on `create`, as docker and containerd call runc
# (--root, --log, --log-format json, create --bundle B ID): runc directly;
# the shim (oci-decorator-runtime -> oci-decorator) for a container that does
# not ask (pass-through: runtime.json read, config.json scanned for the flag,
# exec of runc) and for an activated one (config.json edited, then runc makes
# the mounts and devices); and runc directly on the config.json the shim
# wrote, which separates the shim's own time from runc's extra work. A fresh
# bundle per run (untimed setup); the created container is deleted after
# (untimed teardown). The shim reads $W/runtime.json (all shipped inventories).
section_f() {
  log "f. runtime shim on create: runc create vs oci-decorator-runtime create ($RUNS_SHIM runs each)"
  local h="$HERE/helpers" base=$TMPFS/shim runc_bin shim=$W/bin/oci-decorator-runtime b v c=() pre
  local name cfg how
  runc_bin=$(command -v runc)
  mkdir -p "$base" "$W/bin"
  ln -sfn "$OCID_BIN" "$shim"
  printf '{"runtime": "%s", "config_dir": "%s", "host_root": "%s"}\n' \
    "$runc_bin" "$W/config.d" "$W/host" >"$W/runtime.json"
  make_config "$W/cfg-shim-inactive.json" '"sleep", "1000"' 0 none
  make_config "$W/cfg-shim-active.json"   '"sleep", "1000"' 1 none
  # One activated create through the shim outside the benchmark: it must edit
  # config.json and runc must create the container; its config.json is the
  # "pre-edited" candidate's.
  b=$base/verify
  mkdir "$b" && cp -a "$W/rootfs" "$b/rootfs" && cp "$W/cfg-shim-active.json" "$b/config.json"
  if ! "$shim" --ocid-config "$W/runtime.json" --root "$W/runc" --log "$b/runc.log" --log-format json \
       create --bundle "$b" "$TAG-fverify" </dev/null >/dev/null 2>"$W/shim-verify.err"; then
    echo "run.sh: the shim's activated create failed. Command:" >&2
    echo "  $shim --ocid-config $W/runtime.json --root $W/runc create --bundle $b $TAG-fverify" >&2
    cat "$W/shim-verify.err" "$b/runc.log" >&2
    die "activated shim create failed"
  fi
  runc --root "$W/runc" delete -f "$TAG-fverify" >/dev/null 2>&1
  SHIM_MOUNTS=$(( $(jq '.mounts | length' "$b/config.json") - $(jq '.mounts | length' "$W/cfg-shim-active.json") ))
  SHIM_DEVICES=$(jq '[.linux.devices[]? | select(.path | test("onload|sfc_char"))] | length' "$b/config.json")
  log "verify: the shim added $SHIM_MOUNTS mounts and $SHIM_DEVICES devices (with their rules) to config.json; runc created the container"
  (( SHIM_MOUNTS >= 10 && SHIM_DEVICES == 3 )) ||
    echo "run.sh: warning: expected 10+ mounts and 3 devices in the shim's config.json ($b/config.json)" >&2
  cp "$b/config.json" "$W/cfg-shim-edited.json"
  rm -rf --one-file-system "$b"

  pre=(--root "$W/runc" --log "$base/{n}/runc.log" --log-format json create --bundle "$base/{n}" "$TAG-e{n}")
  for v in "runc create:inactive:runc" "oci-decorator-runtime create, not asked:inactive:shim" \
           "oci-decorator-runtime create, activated:active:shim" \
           "runc create of the shim's config.json:edited:runc"; do
    [[ ${#c[@]} -gt 0 ]] && c+=("::")
    IFS=: read -r name cfg how <<<"$v"
    c+=(--name "$name" --setup "$h/new-bundle.sh {n} $W/cfg-shim-$cfg.json $base" --teardown "$h/del-bundle.sh {n} $base")
    if [[ $how == shim ]]; then
      c+=("$shim" --ocid-config "$W/runtime.json" "${pre[@]}")
    else
      c+=("$runc_bin" "${pre[@]}")
    fi
  done
  sec "$HOOKBENCH" --runs "$RUNS_SHIM" --warmup "$(( WARMUP < 5 ? WARMUP : 5 ))" --tsv "$W/f.tsv" "${c[@]}"
  md_rows "Runtime shim on \`create\` (as docker/containerd call runc; activated: $SHIM_MOUNTS mounts, $SHIM_DEVICES devices + rules written to config.json)" "$W/f.tsv"
  local act edited
  act=$(tsv_get "$W/f.tsv" "oci-decorator-runtime create, activated" median_ms)
  edited=$(tsv_get "$W/f.tsv" "runc create of the shim's config.json" median_ms)
  SHIM_NOTE="Runtime shim, activated: $(fmt "$(awk -v a="$act" -v e="$edited" 'BEGIN{print a - e}')") ms over \`runc create\` of the config.json it wrote (the shim's own time; the rest is runc making the mounts and devices)"
}

write_results() {
  mkdir -p "$(dirname "$RESULTS")"
  local cpu runcv commit load_end
  cpu=$(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)
  runcv=$(runc --version | awk 'NR==1{print $3}')
  [[ " $SECTIONS " == *" d "* ]] && runcv+=" · crun $(crun --version | awk 'NR==1{print $3}')"
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
    if [[ ${#VERDICTS[@]} -gt 0 || -n ${SHIM_NOTE:-} ]]; then
      echo
      [[ ${#VERDICTS[@]} -eq 0 ]] || printf -- '- %s\n' "${VERDICTS[@]}"
      [[ -z ${SHIM_NOTE:-} ]] || printf -- '- %s\n' "$SHIM_NOTE"
    fi
  } >"$RESULTS"
}

build
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v l="${LOAD_START%% *}" 'BEGIN{exit !(l > 0.5)}' &&
  echo "run.sh: warning: load average $LOAD_START at start: other work on this machine adds noise" >&2
prepare
ADDED_MOUNTS='?' ADDED_RULES='?' V2_PROGS='?'
for s in $SECTIONS; do
  [[ $(type -t "section_$s") == function ]] || die "unknown section $s (a, b, c, d, e, f)"
  "section_$s"
  echo
done
write_results
cat "$RESULTS"
echo
log "written to $RESULTS"
