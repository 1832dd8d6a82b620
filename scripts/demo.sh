#!/bin/bash
# demo.sh: one command that shows what oci-decorator does, on a fresh Debian 12
# machine (run as root from anywhere: sudo scripts/demo.sh).
#
#   1. installs the Debian packages it needs (only those missing)
#   2. builds oci-decorator into ./build (Release)
#   3. uses the host's real Onload if there is one (/dev/onload and libonload.so),
#      otherwise builds a clearly SIMULATED Onload install in a temp dir
#   4. makes a tiny busybox container whose config.json asks for OCI_ONLOAD=all
#      and registers oci-decorator as its prestart/poststop hook
#   5. prints the hook's plan (`oci-decorator plan`), then runs the container
#      with runc and shows, from inside, what appeared
#   6. removes everything it created (container, cgroups, temp dirs)
#
# Knobs (for developers): BUILD_DIR (default build), OCID_BIN (use this binary,
# skip the build), DEMO_NO_APT=1 (do not install packages).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
BUILD_DIR=${BUILD_DIR:-build}

bold() { if [[ -t 1 ]]; then printf '\033[1m%s\033[0m\n' "$*"; else printf '%s\n' "$*"; fi; }
step() { echo; bold "==== $* ===="; }
say() { echo "  $*"; }
die() { echo "demo: ERROR: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "run as root (it installs packages, mounts and runs containers): sudo $0"

# ---------------------------------------------------------------------------
step "1. Packages"
# Only what the demo itself needs (the tests need more: test/integration/PACKAGES).
PKGS=(cmake g++ make nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev libseccomp-dev
      doctest-dev runc busybox-static jq gcc libc6-dev util-linux)
missing=()
for p in $(printf '%s\n' "${PKGS[@]}" | sort -u); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  say "all needed packages are installed"
elif [[ ${DEMO_NO_APT:-0} == 1 ]]; then
  die "missing packages: ${missing[*]} (DEMO_NO_APT=1)"
else
  say "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---------------------------------------------------------------------------
step "2. Build"
if [[ -n ${OCID_BIN:-} ]]; then
  BIN=$(readlink -f "$OCID_BIN")
  say "using the given binary $BIN (OCID_BIN set, no build)"
else
  cd "$SRC"
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >"$SRC/$BUILD_DIR.demo-cmake.log" 2>&1 \
    || { tail -n 30 "$SRC/$BUILD_DIR.demo-cmake.log"; die "cmake configure failed"; }
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target oci-decorator >"$SRC/$BUILD_DIR.demo-build.log" 2>&1 \
    || { tail -n 30 "$SRC/$BUILD_DIR.demo-build.log"; die "build failed"; }
  rm -f "$SRC/$BUILD_DIR.demo-cmake.log" "$SRC/$BUILD_DIR.demo-build.log"
  BIN=$SRC/$BUILD_DIR/oci-decorator
  say "built $BIN"
fi
say "$("$BIN" --version)"

# ---------------------------------------------------------------------------
W=$(mktemp -d /tmp/oci-decorator-demo.XXXXXX)
chmod 0755 "$W"
RUNC_ROOT=$W/runc-root
CID=oci-decorator-demo-$$
CG_PARENT=oci-decorator-demo-$$
cleanup() {
  local rc=$?
  runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1 || true
  local d
  for d in /sys/fs/cgroup/*/"$CG_PARENT"; do
    [[ -d $d ]] && { find "$d" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null; rmdir "$d" 2>/dev/null; }
  done
  rm -rf --one-file-system "$W"
  if [[ $rc -eq 0 ]]; then echo; bold "Cleaned up: container deleted, temp dir $W removed."; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "3. Onload on this host"
REAL=0
if [[ -c /dev/onload ]]; then
  for d in /usr/lib64 /usr/lib/x86_64-linux-gnu /opt/onload/usr/lib64; do
    [[ -e $d/libonload.so ]] && REAL=1
  done
fi
if [[ $REAL == 1 ]]; then
  HOST_ROOT=/
  say "REAL Onload found on this host (/dev/onload and libonload.so): using it (--host-root /)."
else
  HOST_ROOT=$W/simulated-onload
  bash "$SRC/scripts/sim-onload.sh" "$HOST_ROOT" 2>"$W/sim.log" || { cat "$W/sim.log"; die "sim-onload.sh failed"; }
  echo
  bold "  ***********************************************************************"
  bold "  *  SIMULATED Onload install (no Onload on this host) under"
  bold "  *    $HOST_ROOT"
  bold "  *  Its libraries only print a line when loaded, its programs are shell"
  bold "  *  scripts, its /dev nodes have majors no driver owns. Not real Onload."
  bold "  ***********************************************************************"
  say "$(sed 's/^sim-onload: //' "$W/sim.log")"
fi
CONF_DIR=$W/oci-decorator.d
mkdir -p "$CONF_DIR"
cp "$SRC/config/onload.json" "$CONF_DIR/"
STATE_DIR=$W/state
mkdir -m 0700 "$STATE_DIR"
say "inventory: config/onload.json (activation variable OCI_ONLOAD, features onload and zf)"

# ---------------------------------------------------------------------------
step "4. A container that asks for Onload"
B=$W/bundle
mkdir -p "$B"
bash "$SRC/scripts/make-rootfs.sh" "$B/rootfs"
(cd "$B" && runc spec)
INSIDE='
L=$(dirname "$(head -n1 /etc/ld.so.preload)")
echo "--- Onload libraries, where this image'"'"'s loader looks (the directory of its libc.so.6, $L):"
ls -l $L/libonload* 2>/dev/null | sed "s/^/    /"
echo "--- Onload tools and profiles (ls -l):"
ls -l /usr/bin/onload* /usr/bin/zf_* /usr/sbin/onload_tool /sbin/onload_tool 2>/dev/null | sed "s/^/    /"
echo "--- Onload profiles:"
ls /usr/libexec/onload/profiles 2>/dev/null | sed "s/^/    /"
echo "--- Device nodes:"
ls -l /dev/onload* /dev/sfc_char 2>/dev/null | sed "s/^/    /"
echo "--- Their mounts in /proc/mounts (read-only, nosuid; nodev except devices):"
grep -E "onload|sfc_char|zf_|ld\.so\.preload" /proc/mounts | sed "s/^/    /"
echo "--- /etc/ld.so.preload:"
sed "s/^/    /" /etc/ld.so.preload
echo "--- Running /usr/bin/dyn-hello (a dynamically linked program):"
/usr/bin/dyn-hello 2>&1 | sed "s/^/    /"
echo "--- onload --version:"
onload --version 2>&1 | sed "s/^/    /"
echo "--- Opening /dev/onload (the device cgroup allows it; with no driver: ENXIO):"
( cat /dev/onload </dev/null >/dev/null ) 2>&1 | sed "s/^/    /"
echo "--- Writing into a mounted file fails:"
( echo x >> /usr/bin/onload ) 2>&1 | sed "s/^/    /"
'
hook() {  # stage
  jq -n --arg bin "$BIN" --arg h "$HOST_ROOT" --arg c "$CONF_DIR" --arg s "$STATE_DIR" --arg st "$1" \
    '{path: $bin, args: ["oci-decorator", "--host-root", $h, "--config-dir", $c, "--state-dir", $s, "hook", $st],
      env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}'
}
jq --arg rootfs "$B/rootfs" --arg script "$INSIDE" --arg cg "/$CG_PARENT/$CID" \
   --argjson pre "$(hook prestart)" --argjson post "$(hook poststop)" '
  .process.terminal = false
  | .process.args = ["sh", "-c", $script]
  | .process.env = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "OCI_ONLOAD=all"]
  | .root = {path: $rootfs, readonly: false}
  | .hostname = "onload-demo"
  | .linux.cgroupsPath = $cg
  | .hooks = {prestart: [$pre], poststop: [$post]}
' "$B/config.json" >"$B/config.json.new"
mv "$B/config.json.new" "$B/config.json"
say "bundle $B: busybox rootfs + dyn-hello; config.json has process.env OCI_ONLOAD=all"
say "hook registered in config.json:"
jq -c '.hooks.prestart[0]' "$B/config.json" | sed 's/^/    /'

# ---------------------------------------------------------------------------
step "5. What the hook will do: oci-decorator plan --bundle (changes nothing)"
PLAN=$("$BIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" --state-dir "$STATE_DIR" plan --bundle "$B")
say "activated: $(jq -r '.activated[] | "\(.file) features \(.features | join(",")) (\(.requested_by))"' <<<"$PLAN")"
say "mounts (host path -> path in the container):"
jq -r '.mounts[] | [("[" + .feature + "] " + .type), .resolved, .target] | @tsv' <<<"$PLAN" |
  awk -F'\t' '{ printf "    %-22s %-36s -> %s\n", $1, $2, $3 }'
say "device cgroup rules: $(jq -r '.cgroup_rules | join(", ")' <<<"$PLAN")"
say "preloaded (added to the container's /etc/ld.so.preload): $(jq -r '.preload | join(", ")' <<<"$PLAN")"
[[ $(jq '.skipped | length' <<<"$PLAN") -eq 0 ]] || say "skipped (optional, not on this host): $(jq -r '.skipped | join(", ")' <<<"$PLAN")"
say "(paths are relative to --host-root $HOST_ROOT; full JSON has more fields, e.g.:)"
jq -c '.mounts[0]' <<<"$PLAN" | sed 's/^/    /'

# ---------------------------------------------------------------------------
step "6. runc run: the container shows what appeared inside"
set +e
runc --root "$RUNC_ROOT" run --bundle "$B" "$CID" </dev/null
rc=$?
set -e
[[ $rc -eq 0 ]] || die "runc run failed (exit $rc)"
runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1 || true
if [[ -z $(ls -A "$STATE_DIR") ]]; then
  say "poststop hook removed the container's state ($STATE_DIR is empty again)."
fi
echo
if [[ $REAL == 1 ]]; then
  bold "Done: the container got this host's Onload."
else
  bold "Done: the container got the SIMULATED Onload install (no real Onload on this host)."
fi
