# shellcheck shell=bash
# Shared helpers for oci-decorator's root integration tests (sourced, bash).
#
# Environment:
#   OCID_BIN         the oci-decorator binary (set by CTest)
#   OCID_SOURCE_DIR  the source tree (set by CTest; defaults to ../.. of this file)
#   IT_DEBUG=1       run the hook with --log-level debug --log-file, print logs on failure
#   IT_KEEP=1        keep the temp dir (for debugging)
#   OCID_HOOK_WRAPPER  run make_bundle's hooks through this program (see make_bundle)
#
# Each script: source lib.sh; it_setup; ... assertions ...; it_finish
# Exit codes: 0 pass, 1 fail, 77 skip (not root, or runc missing).

IT_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=${OCID_SOURCE_DIR:-$(cd "$IT_LIB_DIR/../.." && pwd)}
IT_PASS=0
IT_FAIL=0
IT_IDS=()
IT_NAME=$(basename "$0" .sh)

# --- reporting ------------------------------------------------------------------
ok()  { IT_PASS=$((IT_PASS + 1)); echo "ok   - $*"; }
nok() { IT_FAIL=$((IT_FAIL + 1)); echo "FAIL - $*"; }
info() { echo "#      $*"; }
skip_all() { echo "SKIP $IT_NAME: $*"; exit 77; }
die() { echo "ERROR $IT_NAME: $*" >&2; exit 1; }

# check DESC CMD...: passes when CMD succeeds.
check() { local d=$1; shift; if "$@"; then ok "$d"; else nok "$d"; fi; }
# check_not DESC CMD...: passes when CMD fails.
check_not() { local d=$1; shift; if "$@"; then nok "$d"; else ok "$d"; fi; }
# quiet CMD...: runs CMD with its output discarded (for check/check_not).
quiet() { "$@" >/dev/null 2>&1; }
assert_eq() {  # DESC EXPECTED ACTUAL (multi-line values are shown as a diff)
  if [[ $2 == "$3" ]]; then
    ok "$1"
  elif [[ $2 == *$'\n'* || $3 == *$'\n'* ]]; then
    nok "$1 (differs, expected < > actual:)"
    diff <(echo "$2") <(echo "$3") | grep '^[<>]' | head -20 | sed 's/^/#        /'
  else
    nok "$1 (expected '$2', got '$3')"
  fi
}
assert_contains() {  # DESC HAYSTACK NEEDLE   (fixed string)
  if grep -qF -- "$3" <<<"$2"; then ok "$1"; else nok "$1 (no '$3' in: $(head -c 600 <<<"$2" | tr '\n' '|'))"; fi
}
assert_not_contains() {  # DESC HAYSTACK NEEDLE
  if grep -qF -- "$3" <<<"$2"; then nok "$1 (found '$3': $(grep -F -- "$3" <<<"$2" | head -3 | tr '\n' '|'))"; else ok "$1"; fi
}
assert_match() {  # DESC HAYSTACK ERE
  if grep -qE -- "$3" <<<"$2"; then ok "$1"; else nok "$1 (no /$3/ in: $(head -c 600 <<<"$2" | tr '\n' '|'))"; fi
}
assert_no_match() {  # DESC HAYSTACK ERE
  if grep -qE -- "$3" <<<"$2"; then nok "$1 (matched /$3/: $(grep -E -- "$3" <<<"$2" | head -3 | tr '\n' '|'))"; else ok "$1"; fi
}

# --- setup and cleanup --------------------------------------------------------------
# it_setup [LAYOUT]: checks preconditions, creates $T with a SIMULATED Onload host
# root ($HOST_ROOT), config dir ($CONF_DIR), state dir ($STATE_DIR), base rootfs
# ($BASE_ROOTFS) and a private runc root.
# plugin_suite STANDIN: what a device plugin suite needs before it starts:
# the plugin binary (skipped, saying why, where the build has none), python3
# with gRPC and protobuf and protoc for the stand-in test/standins/STANDIN
# (built from the plugin's own .proto files). Sets PY and STANDIN.
plugin_suite() {
  [[ -n ${OCID_PLUGIN:-} ]] || \
    skip_all "OCID_PLUGIN is not set: the build has no oci-decorator-device-plugin (OCID_DEVICE_PLUGIN=OFF)"
  [[ -x $OCID_PLUGIN ]] || die "OCID_PLUGIN=$OCID_PLUGIN is not executable"
  PY=/usr/bin/python3
  $PY -c 'import grpc, google.protobuf' 2>/dev/null || \
    die "python3-grpcio and python3-protobuf are missing (see test/integration/PACKAGES)"
  command -v protoc >/dev/null 2>&1 || die "protoc is missing (protobuf-compiler, see test/integration/PACKAGES)"
  STANDIN=$SRC/test/standins/$1
}

it_setup() {
  local layout=${1:-lib64}
  [[ $(id -u) -eq 0 ]] || skip_all "needs root (runc, mknod, mounts)"
  command -v runc >/dev/null 2>&1 || skip_all "runc is not installed (apt-get install runc)"
  [[ -n ${OCID_BIN:-} ]] || die "OCID_BIN is not set (path to the oci-decorator binary)"
  [[ -x $OCID_BIN ]] || die "OCID_BIN=$OCID_BIN is not executable"
  OCID_BIN=$(readlink -f "$OCID_BIN")
  command -v jq >/dev/null 2>&1 || die "jq is missing (see test/integration/PACKAGES)"
  [[ -d /sys/fs/cgroup/devices ]] || die "no cgroup v1 devices controller at /sys/fs/cgroup/devices"

  T=$(mktemp -d /tmp/ocid-it.XXXXXX)
  chmod 0755 "$T"   # plan_cli runs as nobody below it
  trap it_cleanup EXIT
  trap 'exit 1' INT TERM
  RUNC_ROOT=$T/runc-root
  CG_PARENT=ocid-it-$(basename "$T" | tr -dc 'A-Za-z0-9')
  STATE_DIR=$T/state
  mkdir -m 0700 "$STATE_DIR"
  CONF_DIR=$T/conf
  mkdir -p "$CONF_DIR" "$T/bundles" "$T/logs"
  cp "$SRC/config/onload.json" "$CONF_DIR/"
  HOST_ROOT=$T/host
  make_sim "$HOST_ROOT" "$layout"
  BASE_ROOTFS=$T/base-rootfs
  bash "$SRC/scripts/make-rootfs.sh" "$BASE_ROOTFS" || die "make-rootfs.sh failed"
  IT_MOUNTINFO_START=$(host_mountinfo)
  info "binary $OCID_BIN; temp dir $T"
}

# The simulated install plus a "loaded module" of its version, as on a real
# host: onload.json's version lock then matches and stays silent. (Without
# sys/module/onload it warns that it cannot check; version_lock.sh covers
# that, and mismatches.) SIM_ONLOAD_VERSION and SIM_ONLOAD_BUILD_PROFILE pick
# the version.
make_sim() {  # HOSTROOT [LAYOUT]
  bash "$SRC/scripts/sim-onload.sh" "$1" --layout "${2:-lib64}" 2>/dev/null \
    || die "sim-onload.sh $1 failed"
  sim_module_version "$1" "${SIM_ONLOAD_VERSION:-0.0.0-sim}" "${SIM_ONLOAD_BUILD_PROFILE:-}"
}

# HOSTROOT/sys/module/onload/version as the kernel shows Onload's: its
# ONLOAD_VERSION (VERSION, a space, PROFILE: Onload's
# scripts/lib/mkdist/preprocess_source:54, scripts/onload_version_gen:24) and
# a newline (src/driver/linux_onload/driver.c:44, MODULE_VERSION).
sim_module_version() {  # HOSTROOT VERSION [PROFILE]
  mkdir -p "$1/sys/module/onload"
  printf '%s %s\n' "$2" "${3:-}" >"$1/sys/module/onload/version"
}

# Host mount table without the columns that change by themselves.
host_mountinfo() { sort /proc/self/mountinfo; }

it_cleanup() {
  local rc=$? id d
  for id in "${IT_IDS[@]}"; do
    runc --root "$RUNC_ROOT" delete -f "$id" >/dev/null 2>&1
  done
  # runc leaves the empty parent of cgroupsPath in every hierarchy.
  for d in /sys/fs/cgroup/*/"$CG_PARENT"; do
    [[ -d $d ]] || continue
    find "$d" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
    rmdir "$d" 2>/dev/null || echo "# warning: could not remove cgroup $d" >&2
  done
  # Safety: a mount leaked into the host namespace below $T must never make
  # rm -rf walk into host directories.
  local leaked
  leaked=$(awk -v t="$T/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | sort -r)
  if [[ -n $leaked ]]; then
    echo "FAIL - mounts leaked into the host mount namespace under $T:" >&2
    echo "$leaked" >&2
    while read -r d; do umount -l "$d" 2>/dev/null; done <<<"$leaked"
    rc=1
  fi
  if [[ ${IT_KEEP:-0} == 1 ]]; then
    echo "# kept $T" >&2
  else
    rm -rf --one-file-system "$T"
  fi
  exit "$rc"
}

it_finish() {
  assert_host_mounts_unchanged "over the whole script"
  echo "$IT_PASS passed, $IT_FAIL failed"
  [[ $IT_FAIL -eq 0 ]] && exit 0 || exit 1
}

# --- bundles ---------------------------------------------------------------------------
# make_bundle NAME [options] -- SCRIPT
#   --env K=V           add to process.env (repeatable)
#   --annotation K=V    add to annotations (repeatable)
#   --rootfs DIR        use DIR as root.path as is (default: a copy of $BASE_ROOTFS)
#   --host-root DIR     hook --host-root (default $HOST_ROOT)
#   --config-dir DIR    hook --config-dir (default $CONF_DIR)
#   --state-dir DIR     hook --state-dir (default $STATE_DIR)
#   --cap CAP           add a capability (e.g. CAP_MKNOD) to all sets
#   --readonly          root.readonly true (default false, like docker/podman)
#   --jq FILTER         extra jq filter applied to config.json last
#   --no-hook           register no hooks
# Sets B (bundle dir), CID (container id), ROOTFS (rootfs path).
make_bundle() {
  local name=$1; shift
  local envs=() annos=() rootfs="" hr=$HOST_ROOT cd=$CONF_DIR sd=$STATE_DIR caps=() ro=false
  local extra='.' hook=1
  while [[ $# -gt 0 ]]; do
    case $1 in
      --env) envs+=("$2"); shift 2 ;;
      --annotation) annos+=("$2"); shift 2 ;;
      --rootfs) rootfs=$2; shift 2 ;;
      --host-root) hr=$2; shift 2 ;;
      --config-dir) cd=$2; shift 2 ;;
      --state-dir) sd=$2; shift 2 ;;
      --cap) caps+=("$2"); shift 2 ;;
      --readonly) ro=true; shift ;;
      --jq) extra=$2; shift 2 ;;
      --no-hook) hook=0; shift ;;
      --) shift; break ;;
      *) die "make_bundle: unknown option $1" ;;
    esac
  done
  local script=${1:-true}
  CID="ocid-it-$name-$$-$RANDOM"
  B=$T/bundles/$CID
  mkdir -p "$B"
  if [[ -z $rootfs ]]; then
    rootfs=$B/rootfs
    cp -a "$BASE_ROOTFS" "$rootfs"
  fi
  ROOTFS=$rootfs
  (cd "$B" && runc spec) || die "runc spec failed"

  local hookargs=(--host-root "$hr" --config-dir "$cd" --state-dir "$sd")
  if [[ ${IT_DEBUG:-0} == 1 ]]; then
    hookargs+=(--log-level debug --log-file "$T/logs/$CID.log")
  fi
  local envj annoj capsj argsj
  envj=$(printf '%s\n' "PATH=/usr/sbin:/usr/bin:/sbin:/bin" "${envs[@]}" | jq -R . | jq -s .)
  if [[ ${#annos[@]} -gt 0 ]]; then
    annoj=$(printf '%s\n' "${annos[@]}" | jq -R 'index("=") as $i | {(.[:$i]): .[$i+1:]}' | jq -s 'add')
  else
    annoj='{}'
  fi
  capsj=$(printf '%s\n' "${caps[@]}" | jq -R 'select(. != "")' | jq -s .)
  argsj=$(printf '%s\n' "${hookargs[@]}" | jq -R . | jq -s .)
  # OCID_HOOK_WRAPPER=PROG: every hook runs as PROG <oci-decorator> <argv...>
  # (PROG execs its first argument with the rest as argv), e.g. enosys_exec
  # for the legacy-kernel runs.
  local hpath=$OCID_BIN hprefix='[]'
  if [[ -n ${OCID_HOOK_WRAPPER:-} ]]; then
    hpath=$OCID_HOOK_WRAPPER
    hprefix=$(jq -n --arg w "$OCID_HOOK_WRAPPER" --arg b "$OCID_BIN" '[$w, $b]')
  fi

  jq --arg rootfs "$rootfs" --argjson ro "$ro" --arg script "$script" \
     --argjson env "$envj" --argjson anno "$annoj" --argjson caps "$capsj" \
     --arg bin "$hpath" --argjson hpre "$hprefix" --argjson hargs "$argsj" --argjson hook "$hook" \
     --arg cg "/$CG_PARENT/$CID" '
    .process.terminal = false
    | .process.args = ["sh", "-c", $script]
    | .process.env = $env
    | .root = {path: $rootfs, readonly: $ro}
    | .hostname = "ocid-it"
    | .linux.cgroupsPath = $cg
    | (if ($anno | length) > 0 then .annotations = $anno else . end)
    | .process.capabilities |= with_entries(.value = ((.value + $caps) | unique))
    | (if $hook == 1 then .hooks = {
          prestart: [{path: $bin, args: ($hpre + ["oci-decorator"] + $hargs + ["hook", "prestart"]),
                      env: ["PATH=/usr/bin:/bin"]}],
          poststop: [{path: $bin, args: ($hpre + ["oci-decorator"] + $hargs + ["hook", "poststop"]),
                      env: ["PATH=/usr/bin:/bin"]}]}
       else del(.hooks) end)
  ' "$B/config.json" >"$B/config.json.new" || die "jq edit of config.json failed"
  if [[ $extra != . ]]; then
    jq "$extra" "$B/config.json.new" >"$B/config.json" || die "jq filter failed: $extra"
    rm -f "$B/config.json.new"
  else
    mv "$B/config.json.new" "$B/config.json"
  fi
}

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

# In the sanitizer build a report from the hook fails the container, but a
# test that only expects a refusal would not notice: any report in the
# runtime's stderr is a failure of its own.
sanitizer_check() {  # TEXT
  [[ ${OCID_SANITIZED:-0} == 1 ]] || return 0
  if grep -qE 'Sanitizer|:[0-9]+: runtime error:' <<<"$1"; then
    nok "no sanitizer report from the hook (${CID:-?})"
    head -40 <<<"$1" | sed 's/^/#      /'
  fi
}

# Snapshot of a tree: path, type, mode, size (files), link target, sha256.
# Directories carry no size (it changes with entries); mtimes are left out.
tree_snapshot() {  # DIR
  local dir=$1
  (cd "$dir" && find . -printf '%p\t%y\t%m\t%U:%G\t%l\n' | sort | while IFS=$'\t' read -r p y m o l; do
     case $y in
       f) printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$p" f "$m" "$o" "$(stat -c %s "$p")" "$(sha256sum <"$p" | cut -c1-64)" ;;
       l) printf '%s\t%s\t%s\t%s\t->%s\n' "$p" l "$m" "$o" "$l" ;;
       *) printf '%s\t%s\t%s\t%s\n' "$p" "$y" "$m" "$o" ;;
     esac
   done)
}

# Snapshot of a host marker directory in the brief's format plus ctime and hashes.
marker_snapshot() {  # DIR...
  find "$@" -printf '%p %y %s %m %T@ %C@\n' | sort
  find "$@" -type f -exec sha256sum {} + | sort
}

# Waits until a detached container's init runs (status "running").
wait_running() {  # ID
  local i
  for i in $(seq 1 100); do
    [[ $(runc --root "$RUNC_ROOT" state "$1" 2>/dev/null | jq -r .status) == running ]] && return 0
    sleep 0.1
  done
  return 1
}

# Device major:minor (decimal) of a host node.
devnum() { printf '%d:%d' "0x$(stat -c %t "$1")" "0x$(stat -c %T "$1")"; }

# wait_socket PATH: true once PATH is a socket (within 5 s), for a server
# started in the background (the device plugin's endpoints).
wait_socket() {
  local i
  for i in $(seq 1 100); do [[ -S $1 ]] && return 0; sleep 0.05; done
  return 1
}

host_sha() { sha256sum <"$1" | cut -c1-64; }

# ==== Helpers for crun, podman, the parallel load test and the package test ====
# (appended; nothing above changes behaviour)

# --- the runtime shim, driven as containerd drives it -------------------------------
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

# --- packages -----------------------------------------------------------------------
# package_build_dir: sets BUILD to the build dir cpack runs in: OCID_BUILD_DIR
# when it installs to /usr, else a configure of the sources in $T/build.
package_build_dir() {
  local prefix
  BUILD=${OCID_BUILD_DIR:-}
  [[ -n $BUILD && -f $BUILD/CMakeCache.txt ]] || die "OCID_BUILD_DIR is not a configured build dir: '$BUILD'"
  prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
  if [[ $prefix != /usr ]]; then
    info "build dir $BUILD has CMAKE_INSTALL_PREFIX=$prefix: configuring $T/build with /usr"
    cmake -S "$SRC" -B "$T/build" -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF >"$T/logs/cmake.log" 2>&1 \
      || { tail -20 "$T/logs/cmake.log"; die "cmake configure of $T/build failed"; }
    BUILD=$T/build
  fi
}

# --- extra cleanup steps ----------------------------------------------------------
# it_add_cleanup FN: FN runs at exit, before it_cleanup (last added runs first).
# A step that returns non-zero makes the script fail.
IT_EXTRA_CLEANUPS=()
it_add_cleanup() {
  IT_EXTRA_CLEANUPS=("$1" "${IT_EXTRA_CLEANUPS[@]}")
  trap it_cleanup_chain EXIT
}
it_cleanup_chain() {
  local rc=$? f
  for f in "${IT_EXTRA_CLEANUPS[@]}"; do
    "$f" || rc=1
  done
  (exit "$rc")
  it_cleanup
}

# it_track_new_dirs DIR...: those of DIR... that do not exist now are removed at
# exit if they are then empty directory trees (engines create e.g. /run/runc).
IT_NEW_DIRS=()
it_track_new_dirs() {
  local d
  for d in "$@"; do [[ -e $d ]] || IT_NEW_DIRS+=("$d"); done
  it_add_cleanup it_remove_new_dirs
}
it_remove_new_dirs() {
  local d
  for d in "${IT_NEW_DIRS[@]}"; do
    [[ -d $d && ! -L $d ]] || continue
    find "$d" -depth -type d -empty -delete 2>/dev/null
    [[ -e $d ]] && echo "# warning: $d was created during the test and is not empty: left in place" >&2
  done
  return 0
}

# --- the SIMULATED Onload, probed from inside a container ---------------------------
# onload_probe [LIBDIR]: a container script printing one line per fact that
# expect_onload checks (SHA, MNT, DEV, OPENR, OPENW, PRELOAD, DYN, MOUNTS_MATCHING, DONE).
ONLOAD_PROBE_FILES_ONLOAD="@L@/libonload.so @L@/libonload_ext.so.1.2.0 @L@/libonload_ext.so.1 /usr/bin/onload /usr/sbin/onload_tool /usr/libexec/onload/profiles/latency.opf"
ONLOAD_PROBE_FILES_ZF="@L@/libonload_zf.so.1.0.0 @L@/libonload_zf.so.1 /usr/bin/zf_stackdump /usr/bin/zf_debug"
onload_probe() {
  local L=${1:-/usr/lib64}
  local files="${ONLOAD_PROBE_FILES_ONLOAD//@L@/$L} ${ONLOAD_PROBE_FILES_ZF//@L@/$L}"
  cat <<EOS
for f in $files; do
  if [ -e \$f ]; then echo "SHA \$f \$(sha256sum < \$f | cut -c1-64)"; else echo "SHA \$f MISSING"; fi
done
for m in $files /usr/libexec/onload/profiles /etc/ld.so.preload /dev/onload /dev/onload_epoll /dev/sfc_char; do
  echo "MNT \$m \$(awk -v p=\$m '\$2 == p {o = \$4} END {print o}' /proc/mounts)"
done
for d in /dev/onload /dev/onload_epoll /dev/sfc_char; do
  if [ -e \$d ]; then
    echo "DEV \$d \$(stat -c '%F %t:%T' \$d)"
    echo "OPENR \$d \$(cat \$d 2>&1 </dev/null)"
    echo "OPENW \$d \$( (echo x > \$d) 2>&1)"
  else
    echo "DEV \$d ABSENT"
  fi
done
if [ -e /etc/ld.so.preload ]; then sed 's/^/PRELOAD /' /etc/ld.so.preload; echo "PRELOAD_FILE yes"; else echo "PRELOAD_FILE no"; fi
echo "LDP \${LD_PRELOAD:-unset}"
/usr/bin/dyn-hello 2>&1 | sed 's/^/DYN /'
echo "MOUNTS_MATCHING \$(grep -cE 'onload|sfc_char|ld\.so\.preload' /proc/mounts)"
echo "DONE"
EOS
}

# expect_onload WHAT DESC [HOSTROOT] [LIBDIR] [MODE]: checks $OUT (an
# onload_probe run) for WHAT = all | onload | zf | none against the simulated
# host install. MODE is how the plan was delivered:
#   hook  files and device nodes are read-only bind mounts; libonload comes
#         through /etc/ld.so.preload;
#   spec  (runtime shim, CDI) files are read-only bind mounts, devices are
#         nodes the runtime created (the host's major:minor, allowed by the
#         device cgroup); libonload comes as LD_PRELOAD, no /etc/ld.so.preload.
#   cdi   as spec, but libonload comes through /etc/ld.so.preload, a
#         read-only nosuid,nodev mount of the preload file written with the
#         CDI spec; no LD_PRELOAD (the container's own is left alone).
#   both  as cdi (a kubelet's Allocate mounts next to its CDI device: with
#         --cdi-dir the mounts half preloads through the same file, so no
#         LD_PRELOAD either).
#   bind  as spec, for an orchestrator's own mounts (a kubelet's Allocate
#         mounts, a Nomad reservation): read-only, but the engine does not
#         add nosuid,nodev.
#   bindpre as bind, but libonload comes through /etc/ld.so.preload, a
#         read-only mount of the plugin's preload file (--allocate mounts
#         with --cdi-dir); no LD_PRELOAD.
expect_onload() {
  local what=$1 desc=$2 hr=${3:-$HOST_ROOT} L=${4:-/usr/lib64} mode=${5:-hook}
  local want_onload=0 want_zf=0 f d m opts got want r w
  case $what in
    all) want_onload=1; want_zf=1 ;;
    onload) want_onload=1 ;;
    zf) want_zf=1 ;;
    none) ;;
    *) die "expect_onload: unknown WHAT $what" ;;
  esac
  [[ $mode == hook || $mode == spec || $mode == bind || $mode == bindpre || $mode == cdi || $mode == both ]] || die "expect_onload: unknown MODE $mode"
  assert_contains "[$desc] probe ran to the end" "$OUT" "DONE"
  for f in ${ONLOAD_PROBE_FILES_ONLOAD//@L@/$L} ${ONLOAD_PROBE_FILES_ZF//@L@/$L}; do
    got=$(field SHA | awk -v f="$f" '$1 == f {print $2}')
    if { [[ " ${ONLOAD_PROBE_FILES_ONLOAD//@L@/$L} " == *" $f "* ]] && ((want_onload)); } ||
       { [[ " ${ONLOAD_PROBE_FILES_ZF//@L@/$L} " == *" $f "* ]] && ((want_zf)); }; then
      assert_eq "[$desc] $f has the host file's content" "$(host_sha "$hr$f")" "$got"
      # In hook mode a version link is mounted from the file it resolves to.
      [[ $mode == hook && -L $hr$f ]] && continue
      m=$f
      [[ $f == /usr/libexec/onload/profiles/* ]] && m=/usr/libexec/onload/profiles   # inside a mounted dir
      opts=$(field MNT | awk -v m="$m" '$1 == m {print $2}')
      if [[ $mode == bind || $mode == bindpre ]]; then
        assert_match "[$desc] $m is mounted ro (${opts:-not a mount})" "$opts" '(^|,)ro(,|$)'
      else
        assert_match "[$desc] $m is mounted ro,nosuid,nodev (${opts:-not a mount})" "$opts" \
          '(^|,)ro(,|$).*nosuid.*nodev|(^|,)ro(,|$).*nodev.*nosuid'
      fi
    else
      assert_eq "[$desc] $f absent" MISSING "$got"
    fi
  done
  for d in /dev/onload /dev/onload_epoll /dev/sfc_char; do
    if { [[ $d == /dev/sfc_char ]] && ((want_onload || want_zf)); } || ((want_onload)); then
      want=$(printf '%x:%x' "0x$(stat -c %t "$hr$d")" "0x$(stat -c %T "$hr$d")")
      assert_eq "[$desc] $d is the host's char device" "character special file $want" \
        "$(field DEV | awk -v d="$d" '$1 == d {$1=""; sub(/^ /, ""); print}')"
      r=$(field OPENR | awk -v d="$d" '$1 == d')
      w=$(field OPENW | awk -v d="$d" '$1 == d')
      assert_contains "[$desc] open($d, O_RDONLY) passes the device cgroup (ENXIO)" "$r" "No such device"
      assert_not_contains "[$desc] open($d, O_RDONLY) is not EPERM" "$r" "Operation not permitted"
      assert_contains "[$desc] open($d, O_WRONLY) passes the device cgroup (ENXIO)" "$w" "No such device"
      if [[ $mode == hook ]]; then
        opts=$(field MNT | awk -v m="$d" '$1 == m {print $2}')
        assert_match "[$desc] $d mounted ro (${opts:-not a mount})" "$opts" '(^|,)ro(,|$)'
      fi
    else
      assert_eq "[$desc] $d absent" ABSENT "$(field DEV | awk -v d="$d" '$1 == d {print $2}')"
    fi
  done
  if ((want_onload)); then
    if [[ $mode == hook ]]; then
      assert_contains "[$desc] /etc/ld.so.preload lists $L/libonload.so" "$(field PRELOAD)" "$L/libonload.so"
    elif [[ $mode == cdi || $mode == both ]]; then
      assert_eq "[$desc] /etc/ld.so.preload is $L/libonload.so" "$L/libonload.so" "$(field PRELOAD)"
      opts=$(field MNT | awk '$1 == "/etc/ld.so.preload" {print $2}')
      assert_match "[$desc] /etc/ld.so.preload is mounted ro,nosuid,nodev (${opts:-not a mount})" "$opts" \
        '(^|,)ro(,|$).*nosuid.*nodev|(^|,)ro(,|$).*nodev.*nosuid'
      assert_eq "[$desc] LD_PRELOAD unset (the preload is not in the env)" unset "$(field LDP)"
    elif [[ $mode == bindpre ]]; then
      assert_eq "[$desc] /etc/ld.so.preload is $L/libonload.so" "$L/libonload.so" "$(field PRELOAD)"
      opts=$(field MNT | awk '$1 == "/etc/ld.so.preload" {print $2}')
      assert_match "[$desc] /etc/ld.so.preload is mounted ro (${opts:-not a mount})" "$opts" '(^|,)ro(,|$)'
      assert_eq "[$desc] LD_PRELOAD unset (the preload is not in the env)" unset "$(field LDP)"
    else
      assert_eq "[$desc] LD_PRELOAD is $L/libonload.so" "$L/libonload.so" "$(field LDP)"
    fi
    assert_contains "[$desc] dyn-hello gets the SIMULATED libonload preloaded" "$(field DYN)" \
      "SIMULATED libonload: preloaded into /usr/bin/dyn-hello"
  else
    if [[ $mode == hook || $mode == cdi || $mode == both || $mode == bindpre ]]; then
      assert_eq "[$desc] no /etc/ld.so.preload" no "$(field PRELOAD_FILE)"
      [[ $mode != hook ]] && assert_eq "[$desc] LD_PRELOAD unset" unset "$(field LDP)"
    else
      assert_eq "[$desc] LD_PRELOAD unset" unset "$(field LDP)"
    fi
    assert_not_contains "[$desc] dyn-hello runs without libonload" "$(field DYN)" "SIMULATED libonload"
  fi
  if [[ $mode == spec || $mode == bind ]]; then
    assert_eq "[$desc] no /etc/ld.so.preload (LD_PRELOAD is used instead)" no "$(field PRELOAD_FILE)"
  fi
  assert_contains "[$desc] dyn-hello runs" "$(field DYN)" "dyn-hello: running"
  if [[ $what == none ]]; then
    assert_eq "[$desc] no onload/sfc_char/ld.so.preload mount at all" 0 "$(field MOUNTS_MATCHING)"
  fi
}

# assert_state_dir_empty DESC [DIR]: the hook's --state-dir holds nothing.
assert_state_dir_empty() {
  assert_eq "$1: hook state dir ${2:-$STATE_DIR} is empty" "" "$(ls -A "${2:-$STATE_DIR}" 2>&1)"
}
# assert_host_mounts_unchanged DESC: host mountinfo equals the one at it_setup.
# A second argument is the table to compare instead of the host's now (a
# suite that leaves some mounts on purpose filters them out first).
assert_host_mounts_unchanged() {  # DESC [MOUNTINFO]
  local now=${2-$(host_mountinfo)}
  if [[ $now == "$IT_MOUNTINFO_START" ]]; then
    ok "$1: host mount table unchanged"
  else
    nok "$1: host mount table changed: $(diff <(echo "$IT_MOUNTINFO_START") <(echo "$now") | grep '^[<>]' | head -6 | tr '\n' '|')"
  fi
}

# --- crun ----------------------------------------------------------------------------
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

# --- podman --------------------------------------------------------------------------
# podman_setup: after it_setup. Sets POD (podman with storage, run and runtime
# state under $T, cgroupfs, file events) and POD_RUN (options for `run`).
# Podman creates /run/containers, /run/runc and /run/crun: removed at exit if
# they did not exist before and are empty.
podman_setup() {
  command -v podman >/dev/null 2>&1 || skip_all "podman is not installed (apt-get install podman)"
  it_track_new_dirs /run/containers /run/runc /run/crun /run/libpod
  mkdir -p "$T/podman"
  POD=(podman --root "$T/podman/storage" --runroot "$T/podman/run" --tmpdir "$T/podman/tmp"
       --network-config-dir "$T/podman/net" --storage-driver vfs
       --cgroup-manager cgroupfs --events-backend file)
  POD_RUN=(--rm --network=none --cgroup-parent "/$CG_PARENT"
           --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
}
# podman_hooks_dir DIR: the build's generated hooks.d entries in DIR, with
# hook.path replaced by $OCID_BIN and --host-root/--config-dir/--state-dir of
# the simulated install added ($OCID_BUILD_DIR, else the binary's directory).
podman_hooks_dir() {
  local dir=$1 build=${OCID_BUILD_DIR:-$(dirname "$OCID_BIN")} stage src extra
  mkdir -p "$dir"
  for stage in prestart poststop; do
    src=$build/hooks.d/oci-decorator-$stage.json
    [[ -f $src ]] || die "missing generated hooks.d entry $src (OCID_BUILD_DIR=$build)"
    extra=(--host-root "$HOST_ROOT" --config-dir "$CONF_DIR" --state-dir "$STATE_DIR")
    [[ ${IT_DEBUG:-0} == 1 ]] && extra+=(--log-level debug --log-file "$T/logs/podman-hook.log")
    jq --arg bin "$OCID_BIN" --argjson extra "$(printf '%s\n' "${extra[@]}" | jq -R . | jq -s .)" '
        .hook.path = $bin | .hook.args = (.hook.args[0:1] + $extra + .hook.args[1:])' \
      "$src" >"$dir/oci-decorator-$stage.json" || die "jq edit of $src failed"
  done
}
# v2_restore V2_ROOT SUBTREE_START: removes $CG_PARENT from the cgroup2
# hierarchy and turns off the controllers runc enabled in its root (runc turns
# hugetlb on and leaves its parent cgroup).
v2_restore() {
  local root=$1 start=$2 c
  if [[ -d $root/$CG_PARENT ]]; then
    find "$root/$CG_PARENT" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
    rmdir "$root/$CG_PARENT" 2>/dev/null || echo "# warning: could not remove $root/$CG_PARENT" >&2
  fi
  for c in $(cat "$root/cgroup.subtree_control"); do
    [[ " $start " == *" $c "* ]] && continue
    echo "-$c" >"$root/cgroup.subtree_control" 2>/dev/null \
      || echo "# warning: could not turn $c off in $root/cgroup.subtree_control" >&2
  done
  return 0
}
# stop_daemon PID NAME SECONDS: TERM, then KILL after SECONDS, and reaps
# it; returns 1 (with a warning) if it had to kill.
stop_daemon() {
  local pid=$1 name=$2 secs=$3 i rc=0
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 1 $((secs * 5))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "# warning: $name $pid did not stop within $secs s: killed" >&2
    kill -KILL "$pid" 2>/dev/null
    rc=1
  fi
  wait "$pid" 2>/dev/null
  return "$rc"
}
# wait_daemon_ready PID NAME LOG SECONDS CMD...: waits until CMD succeeds
# (the daemon answers) for up to SECONDS; if the daemon exits or never
# answers, dies with the last lines of its LOG.
wait_daemon_ready() {
  local pid=$1 name=$2 log=$3 secs=$4 i
  shift 4
  for i in $(seq 1 $((secs * 5))); do
    kill -0 "$pid" 2>/dev/null || break
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  sed "s/^/# $name: /" "$log" | tail -20
  die "$name did not become ready (log above)"
}
# kill_shims_of SOCKET: kills the containerd shims still serving the
# containerd at SOCKET (started with -address SOCKET); returns 1 if any were.
kill_shims_of() {
  local pid rc=0
  for pid in $(pgrep -f -- "-address $1" 2>/dev/null); do
    echo "# warning: containerd shim $pid still running: killed" >&2
    kill -KILL "$pid" 2>/dev/null
    rc=1
  done
  return "$rc"
}
# docker_setup: a private dockerd for this test (socket, pidfile, data and
# exec roots under $T; no iptables, no bridge), stopped by its recorded pid at
# exit, with its cgroups, mounts and the directories it creates on the host
# (/run/docker, /run/containerd, /opt/containerd) removed. Sets DOCKER (the
# docker.io client: another docker CLI may come first in PATH).
docker_setup() {
  DOCKER=/usr/bin/docker
  [[ -x $DOCKER ]] || DOCKER=$(command -v docker) || skip_all "no docker client (apt-get install docker.io)"
  export DOCKER_CONFIG=$T/docker-cli
  mkdir -p "$DOCKER_CONFIG"
  DOCKERD_PID=
  CGROUPS_DOCKER_BEFORE=$(cgroups_snapshot docker)
  KEY_JSON_BEFORE=$([[ -e /etc/docker/key.json ]] && echo yes)
  it_track_new_dirs /run/docker /run/containerd /opt/containerd
  it_add_cleanup docker_stop
}
# dk ARGS...: the docker client on the private dockerd.
dk() { timeout 120 "$DOCKER" -H "unix://$T/docker.sock" "$@"; }
# docker_stop: removes the containers, stops dockerd (TERM, then KILL after
# 60 s) by its pid and the containerd it started; returns 1 if it had to kill.
docker_stop() {
  local rc=0 ids ctd_pid
  [[ -n $DOCKERD_PID ]] || return 0
  ids=$(dk ps -aq 2>/dev/null)
  [[ -n $ids ]] && dk rm -f $ids >/dev/null 2>&1
  ctd_pid=$(cat "$T/exec/containerd/containerd.pid" 2>/dev/null)
  stop_daemon "$DOCKERD_PID" dockerd 60 || rc=1
  if [[ -n $ctd_pid ]] && kill -0 "$ctd_pid" 2>/dev/null &&
     [[ $(readlink "/proc/$ctd_pid/exe") == */containerd ]]; then
    echo "# warning: dockerd's containerd $ctd_pid outlived it: killed" >&2
    kill -KILL "$ctd_pid" 2>/dev/null
    rc=1
  fi
  DOCKERD_PID=
  local left
  left=$(unmount_under "$T/data"; unmount_under "$T/exec")
  [[ -n $left ]] && echo "# warning: dockerd left mounts (unmounted): $(tr '\n' ' ' <<<"$left")" >&2
  remove_new_cgroups docker "$CGROUPS_DOCKER_BEFORE"
  if [[ -z $KEY_JSON_BEFORE && -e /etc/docker/key.json ]]; then
    echo "# warning: dockerd wrote /etc/docker/key.json: removed" >&2
    rm -f /etc/docker/key.json
  fi
  return "$rc"
}
# docker_start DAEMON_JSON: starts the private dockerd with DAEMON_JSON and
# waits until it answers; dies with its log when it does not.
docker_start() {
  dockerd --config-file "$1" -H "unix://$T/docker.sock" --pidfile "$T/docker.pid" \
    --data-root "$T/data" --exec-root "$T/exec" --iptables=false --ip6tables=false --bridge=none \
    </dev/null >"$T/logs/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  wait_daemon_ready "$DOCKERD_PID" dockerd "$T/logs/dockerd.log" 60 \
    "$DOCKER" -H "unix://$T/docker.sock" version
}
# pod_runtime_args RUNTIME: global podman options selecting RUNTIME with its state under $T.
pod_runtime_args() { echo "--runtime $1 --runtime-flag root=$T/podman/rt-$1"; }
# run_podman RUNTIME [global podman options...] -- [run options...] -- SCRIPT
# runs SCRIPT in a --rootfs copy of $BASE_ROOTFS. crun is wrapped in in_crun.
# Sets RC, OUT, ERR, ROOTFS.
run_podman() {
  local rt=$1; shift
  local globals=() runopts=()
  while [[ $# -gt 0 && $1 != -- ]]; do globals+=("$1"); shift; done
  shift
  while [[ $# -gt 0 && $1 != -- ]]; do runopts+=("$1"); shift; done
  shift
  local script=$1 wrap=()
  [[ $rt == crun ]] && wrap=(in_crun)
  ROOTFS=$T/podman/rootfs-$RANDOM$RANDOM
  cp -a "$BASE_ROOTFS" "$ROOTFS"
  # shellcheck disable=SC2046
  "${wrap[@]}" timeout 120 "${POD[@]}" $(pod_runtime_args "$rt") "${globals[@]}" run "${POD_RUN[@]}" "${runopts[@]}" \
    --rootfs "$ROOTFS" sh -c "$script" </dev/null >"$T/podman/out" 2>"$T/podman/err"
  RC=$?
  OUT=$(cat "$T/podman/out")
  ERR=$(cat "$T/podman/err")
  sanitizer_check "$ERR"
  return 0
}

# ==== Helpers for the docker and containerd runtime-shim tests ====
# (appended; nothing above changes behaviour)

# engine_preflight: skips unless docker.io (dockerd, docker, containerd, ctr) is installed.
engine_preflight() {
  local b
  for b in dockerd containerd ctr; do
    command -v "$b" >/dev/null 2>&1 || skip_all "$b is not installed (apt-get install docker.io)"
  done
}

# cgroups_snapshot NAME: the hierarchies under /sys/fs/cgroup where NAME exists.
cgroups_snapshot() { local d; for d in /sys/fs/cgroup/*/"$1"; do [[ -d $d ]] && echo "$d"; done; }
# remove_new_cgroups NAME BEFORE: removes /sys/fs/cgroup/*/NAME trees (empty
# cgroups only) that are not in BEFORE (a cgroups_snapshot); warns on failure.
remove_new_cgroups() {
  local d
  for d in /sys/fs/cgroup/*/"$1"; do
    [[ -d $d ]] || continue
    grep -qxF "$d" <<<"$2" && continue
    find "$d" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
    rmdir "$d" 2>/dev/null || echo "# warning: could not remove cgroup $d (created during the test)" >&2
  done
  return 0
}

# unmount_under DIR: unmounts (lazily) every mount below DIR, deepest first;
# prints them.
unmount_under() {
  local d
  awk -v t="$1/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r d; do
    echo "$d"
    umount -l "$d" 2>/dev/null
  done
}

# ==== OCI images without a registry ====
# make_oci_image TAR ROOTFS REF=CMDJSON...: an OCI image layout tarball
# (image-spec image-layout.md: oci-layout, index.json, blobs/sha256) with one
# uncompressed layer, ROOTFS, and one image per REF=CMDJSON (e.g.
# 'docker.io/local/bb:1=["sh"]'): its own config (Cmd CMDJSON, amd64/linux)
# and manifest, named in index.json with containerd's
# io.containerd.image.name annotation, which `ctr images import` uses.
make_oci_image() {
  local tar=$1 rootfs=$2; shift 2
  local dir=$tar.layout spec ref cmd layer lsize config csize manifest msize manifests='[]'
  _oci_blob() {  # FILE: moved into the blobs as sha256/<digest>; prints the digest
    local d
    d=$(sha256sum <"$1" | cut -c1-64)
    mv "$1" "$dir/blobs/sha256/$d"
    echo "$d"
  }
  rm -rf "$dir"
  mkdir -p "$dir/blobs/sha256"
  tar -C "$rootfs" -cf "$dir/layer" . || die "make_oci_image: tar of $rootfs failed"
  lsize=$(stat -c %s "$dir/layer")
  layer=$(_oci_blob "$dir/layer")
  for spec in "$@"; do
    ref=${spec%%=*}
    cmd=${spec#*=}
    jq -cnj --arg l "sha256:$layer" --argjson cmd "$cmd" '{architecture: "amd64", os: "linux",
        config: {Env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], Cmd: $cmd},
        rootfs: {type: "layers", diff_ids: [$l]}}' >"$dir/config" || die "make_oci_image: bad CMDJSON in $spec"
    csize=$(stat -c %s "$dir/config")
    config=$(_oci_blob "$dir/config")
    jq -cnj --arg c "sha256:$config" --argjson cs "$csize" --arg l "sha256:$layer" --argjson ls "$lsize" '{
        schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
        layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]}' >"$dir/manifest"
    msize=$(stat -c %s "$dir/manifest")
    manifest=$(_oci_blob "$dir/manifest")
    manifests=$(jq -c --arg m "sha256:$manifest" --argjson ms "$msize" --arg name "$ref" '. + [{
        mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
        annotations: {"io.containerd.image.name": $name,
                      "org.opencontainers.image.ref.name": ($name | sub(".*:"; ""))}}]' <<<"$manifests")
  done
  jq -cn --argjson m "$manifests" '{schemaVersion: 2, manifests: $m}' >"$dir/index.json"
  echo '{"imageLayoutVersion": "1.0.0"}' >"$dir/oci-layout"
  tar -C "$dir" -cf "$tar" oci-layout index.json blobs || die "make_oci_image: tar of the layout failed"
  rm -rf "$dir"
}

# ==== The runtime shim's default settings file, for engines that start it
# without arguments (containerd's BinaryName, ctr --runc-binary) ====
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
