#!/bin/bash
# Issue 28: Onload's libraries where the IMAGE's dynamic loader looks, whatever
# the host's layout. Programs linked against libonload_ext.so.1 (ext-test)
# and libonload_zf.so.1 (zf-test), built here against the SIMULATED
# stand-ins (scripts/sim-onload.sh: the real sonames and file names), must
# start inside the container, print the stand-in's marker, and the file the
# loader mapped must be in the directory expected; libonload is preloaded
# (into them and dyn-hello); the image's own library directories and its
# ld.so.cache are as they were but for new (empty) mountpoints, compared on
# the host side.
#
# Images (rootfs trees built here, no registry):
#   deb     scripts/make-rootfs.sh's: the host's (Debian 12) glibc at
#           /lib/x86_64-linux-gnu, /lib64 holding only the loader's link, plus
#           an ld.so.cache as Debian images have (ldconfig -r); its loader
#           searches /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu, /lib,
#           /usr/lib and never /usr/lib64;
#   lib64   the stand-in for a RHEL/UBI image: libc only in /lib64 (loader
#           /lib64/ld-linux-x86-64.so.2), no multiarch directory, no
#           ld.so.cache. Its glibc is Debian's libc6-amd64 for i386
#           (scripts/fetch-lib64-glibc.sh, nothing installed), the x86-64
#           glibc of Debian's biarch packaging: the host's glibc source and
#           version, installed in /lib64, its loader's system search path
#           /lib64:/usr/lib64:/lib:/usr/lib. RHEL's x86_64 loader has
#           /lib64:/usr/lib64 only, and with no ld.so.cache both look in
#           exactly those two before anything else; the test asserts the
#           library was found in a lib64 directory, never /lib or /usr/lib,
#           so it proves what a RHEL loader would find;
#   noglibc busybox-static only (no libc.so.6 anywhere).
# Hosts: sim-onload's lib64 layout (RHEL, AMD's packaging: /usr/lib64) and
# its debian layout (/usr/lib/x86_64-linux-gnu).
#
# Cases, each checked inside the container, for the four host x image pairs
# (RHEL host + deb image, Debian host + lib64 image, and the two same-layout
# pairs):
#   hook     real runc, the hook as prestart/poststop: libraries in the
#            directory of the image's libc.so.6, preload /etc/ld.so.preload;
#   shim     `oci-decorator runtime` wrapping runc (as shim_runc.sh): the
#            same directory, preload LD_PRELOAD;
#   podman   podman 4.3 with a spec from `oci-decorator cdi generate` (as
#            podman_cdi.sh), no hook; a spec serves every image, so the
#            libraries are in /usr/lib/x86_64-linux-gnu and /usr/lib64, the
#            preload names the first;
#   cri      containerd 2.x through CRI (test/cri/ harness, one containerd
#            start), the same specs in its cdi_spec_dirs, CDI_devices in the
#            ContainerConfig as a kubelet fills it; the container's writable
#            layer holds nothing but empty mountpoints.
# Then: the noglibc image under the hook starts, has its mounts, and the
# hook logs ONE warning that the libraries need a dynamically linked glibc
# program (`oci-decorator plan` on its bundle prints it, and where the
# libraries land); a negative control: the deb image with the libraries
# forced to /usr/lib64 (inventory "target_dir") fails ext-test with
# "cannot open shared object file", as main did for every cross-layout pair.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$SRC/test/cri/containerd2.sh"
it_setup lib64
podman_setup
command -v ldconfig >/dev/null 2>&1 || die "ldconfig is missing (libc-bin)"
command -v readelf >/dev/null 2>&1 || die "readelf is missing (binutils)"

HOST_RHEL=$HOST_ROOT
HOST_DEB=$T/host-debian
make_sim "$HOST_DEB" debian

# Where a library lands, by delivery and image (see the header).
declare -A LIBDIR=(
  [hook,deb]=/lib/x86_64-linux-gnu [hook,lib64]=/lib64
  [shim,deb]=/lib/x86_64-linux-gnu [shim,lib64]=/lib64
  [cdi,deb]=/usr/lib/x86_64-linux-gnu [cdi,lib64]=/usr/lib64
)
CDI_PRELOAD=/usr/lib/x86_64-linux-gnu/libonload.so

# --- programs ------------------------------------------------------------------------------
# Linked as an application is, with -l against the stand-ins' link names:
# DT_NEEDED is then the soname, which the image's loader must find.
echo "# --- ext-test and zf-test, linked against the SIMULATED libraries"
mkdir -p "$T/progs"
for p in ext zf; do
  cc -O2 -DPROG="\"$p-test\"" -DLIB_STEM="\"libonload_$p.so\"" -o "$T/progs/$p-test" \
    "$SRC/test/fixtures/sim_lib_user.c" -L"$HOST_RHEL/usr/lib64" "-lonload_$p" ||
    die "cannot build $p-test"
  assert_eq "$p-test needs libonload_$p.so.1 (the soname) and libc, no RUNPATH" \
    "libonload_$p.so.1 libc.so.6 " \
    "$(readelf -d "$T/progs/$p-test" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p; s/.*(R.*PATH).*\[\(.*\)\]/PATH \1/p' | tr '\n' ' ')"
done

# --- images --------------------------------------------------------------------------------
# lib_snapshot ROOTFS: tree_snapshot of the image's library directories and
# its ld.so.cache (paths, types, modes, owners, sizes, hashes, link targets).
lib_snapshot() {
  tree_snapshot "$1" | grep -E $'^\\./(usr/)?lib(64)?(/|\t)|^\\./etc/ld\\.so\\.cache\t'
}

echo "# --- images"
IMG_DEB=$BASE_ROOTFS
install -m 0755 "$T/progs/ext-test" "$T/progs/zf-test" "$IMG_DEB/usr/bin/"
ldconfig -r "$IMG_DEB" 2>/dev/null
check "[deb] the image has an ld.so.cache (ldconfig -r), as Debian images do" test -s "$IMG_DEB/etc/ld.so.cache"
check "[deb] libc.so.6 is in /lib/x86_64-linux-gnu" test -f "$IMG_DEB/lib/x86_64-linux-gnu/libc.so.6"
check_not "[deb] nothing in /usr/lib64" test -e "$IMG_DEB/usr/lib64"

GLIBC64=$(bash "$SRC/scripts/fetch-lib64-glibc.sh" 2>"$T/logs/fetch-lib64-glibc.log" | tail -1)
if [[ -z $GLIBC64 || ! -d $GLIBC64 ]]; then
  sed 's/^/#      /' "$T/logs/fetch-lib64-glibc.log"
  echo "FAIL - could not get the lib64 glibc (scripts/fetch-lib64-glibc.sh failed: $(tail -1 "$T/logs/fetch-lib64-glibc.log"))"
  exit 1
fi
info "$(tail -1 "$T/logs/fetch-lib64-glibc.log")"
IMG_L64=$T/img-lib64
cp -a "$BASE_ROOTFS" "$IMG_L64"
rm -rf "${IMG_L64:?}"/{lib,lib64,usr/lib,usr/lib64} "$IMG_L64/etc/ld.so.cache"
mkdir "$IMG_L64/lib64"
cp -a "$GLIBC64"/lib64/{ld.so,ld-linux-x86-64.so.2,libc.so.6} "$IMG_L64/lib64/"
assert_eq "[lib64] libc.so.6 and the loader are only in /lib64, no ld.so.cache" \
  "./lib64/ld-linux-x86-64.so.2 ./lib64/ld.so ./lib64/libc.so.6" \
  "$(cd "$IMG_L64" && find . \( -name 'libc.so*' -o -name 'ld*.so*' \) | sort | tr '\n' ' ' | sed 's/ $//')"
loader_dirs=$("$IMG_L64/lib64/ld.so" --help | sed -n 's/^  \(\/[^ ]*\) (system search path)$/\1/p' | tr '\n' ':')
assert_eq "[lib64] its loader's system search path starts /lib64:/usr/lib64, no multiarch directory" \
  "/lib64:/usr/lib64:/lib:/usr/lib:" "$loader_dirs"

IMG_NOGLIBC=$T/img-noglibc
cp -a "$BASE_ROOTFS" "$IMG_NOGLIBC"
rm -rf "${IMG_NOGLIBC:?}"/{lib,lib64,usr/lib,usr/lib64} "$IMG_NOGLIBC/etc/ld.so.cache" \
       "$IMG_NOGLIBC"/usr/bin/{dyn-hello,ext-test,zf-test}
assert_eq "[noglibc] no libc.so.6, no loader: busybox-static alone" "" \
  "$(cd "$IMG_NOGLIBC" && find . \( -name 'libc.so*' -o -name 'ld*.so*' \))"
declare -A IMG=([deb]=$IMG_DEB [lib64]=$IMG_L64 [noglibc]=$IMG_NOGLIBC)

# --- the probe ---------------------------------------------------------------------------
# Runs inside the container; writes nothing (the writable layer is checked).
PROBE=$(cat <<'EOS'
for p in ext zf; do
  o=$(/usr/bin/$p-test 2>&1); echo "$p rc $?"; echo "$o" | sed "s/^/$p /"
done
/usr/bin/dyn-hello 2>&1 | sed 's/^/DYN /'
if [ -e /etc/ld.so.preload ]; then sed 's/^/PRELOAD /' /etc/ld.so.preload; else echo "PRELOAD none"; fi
echo "LDP ${LD_PRELOAD:-unset}"
if [ -e /etc/ld.so.cache ]; then echo "CACHE $(sha256sum </etc/ld.so.cache | cut -c1-64)"; else echo "CACHE absent"; fi
for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64 /lib64 /usr/lib /lib; do
  for f in libonload.so libonload_ext.so.1 libonload_zf.so.1; do
    [ -e $d/$f ] && echo "HAS $d/$f $(sha256sum <$d/$f | cut -c1-64)"
  done
done
echo DONE
EOS
)

# expect_loaded DESC IMAGE DELIVERY HOSTROOT: checks $OUT (a PROBE run).
# DELIVERY: hook (preload file), shim (LD_PRELOAD), cdi (preload file
# naming $CDI_PRELOAD).
expect_loaded() {
  local desc=$1 img=$2 how=$3 hr=$4 dir p lib want_pre
  dir=${LIBDIR[$how,$img]}
  assert_contains "[$desc] the probe ran to the end" "$OUT" "DONE"
  for p in ext zf; do
    lib=libonload_$p.so.1
    assert_eq "[$desc] $p-test starts and exits 0 ($(field "$p" | grep -m1 'error while loading' || true))" 0 \
      "$(field "$p" | sed -n 's/^rc //p')"
    assert_contains "[$desc] $p-test prints the SIMULATED libonload_$p marker" "$(field "$p")" \
      "$p-test: marker SIMULATED libonload_$p "
    assert_eq "[$desc] the loader found $lib in $dir" "$dir/$lib" \
      "$(field "$p" | sed -n "s/^$p-test: mapped //p" | tr '\n' ' ' | sed 's/ $//')"
    assert_contains "[$desc] libonload is preloaded into $p-test" "$(field "$p")" \
      "SIMULATED libonload: preloaded into /usr/bin/$p-test"
    assert_eq "[$desc] $dir/$lib is the host's library" \
      "$(host_sha "$(readlink -f "$hr$(host_libdir "$hr")/$lib")")" \
      "$(field HAS | awk -v f="$dir/$lib" '$1 == f {print $2}')"
  done
  if [[ $img == lib64 ]]; then
    assert_match "[$desc] a lib64 directory, as a RHEL loader searches ($dir)" "$dir" '^(/usr)?/lib64$'
  fi
  assert_contains "[$desc] dyn-hello gets libonload preloaded" "$(field DYN)" \
    "SIMULATED libonload: preloaded into /usr/bin/dyn-hello"
  case $how in
    hook) want_pre=$dir/libonload.so
          assert_eq "[$desc] /etc/ld.so.preload names $want_pre" "$want_pre" "$(field PRELOAD)"
          assert_eq "[$desc] no LD_PRELOAD" unset "$(field LDP)" ;;
    shim) want_pre=$dir/libonload.so
          assert_eq "[$desc] LD_PRELOAD is $want_pre" "$want_pre" "$(field LDP)"
          assert_eq "[$desc] no /etc/ld.so.preload" none "$(field PRELOAD)" ;;
    cdi)  assert_eq "[$desc] /etc/ld.so.preload names $CDI_PRELOAD" "$CDI_PRELOAD" "$(field PRELOAD)"
          assert_eq "[$desc] no LD_PRELOAD" unset "$(field LDP)" ;;
  esac
  if [[ -f ${IMG[$img]}/etc/ld.so.cache ]]; then
    assert_eq "[$desc] the image's ld.so.cache, seen inside, is untouched" \
      "$(host_sha "${IMG[$img]}/etc/ld.so.cache")" "$(field CACHE)"
  else
    assert_eq "[$desc] no ld.so.cache inside (none in the image, none made)" absent "$(field CACHE)"
  fi
}
# host_libdir HOSTROOT: the simulated install's library directory.
host_libdir() { if [[ -d $1/usr/lib64 && -e $1/usr/lib64/libonload.so ]]; then echo /usr/lib64; else echo /usr/lib/x86_64-linux-gnu; fi; }

# expect_lib_dirs_kept DESC IMAGE ROOTFS DIR: ROOTFS (the container's tree
# after it ran, on the host) has the image's library directories and
# ld.so.cache as they were, plus nothing but empty mountpoints, among them
# DIR/libonload_ext.so.1.
expect_lib_dirs_kept() {
  local desc=$1 img=$2 rootfs=$3 dir=$4 before after
  before=$(lib_snapshot "${IMG[$img]}")
  after=$(lib_snapshot "$rootfs")
  assert_eq "[$desc] host side: no entry of the image's library directories or ld.so.cache removed or changed" "" \
    "$(comm -23 <(echo "$before") <(echo "$after"))"
  local added
  added=$(comm -13 <(echo "$before") <(echo "$after"))
  assert_eq "[$desc] host side: only empty mountpoints added there" "" \
    "$(awk -F'\t' '!($2 == "d" || ($2 == "f" && $5 == 0))' <<<"$added" | sed '/^$/d')"
  assert_contains "[$desc] host side: ... among them .$dir/libonload_ext.so.1" "$(cut -f1 <<<"$added")" \
    ".$dir/libonload_ext.so.1"
}

PAIRS=("rhel deb" "deb lib64" "rhel lib64" "deb deb")
declare -A HOST=([rhel]=$HOST_RHEL [deb]=$HOST_DEB)
# hook_log_args FILE: a jq filter adding --log-file FILE to the bundle's hooks.
hook_log_jq() {
  printf '.hooks |= with_entries(.value |= map(.args |= (.[:-2] + ["--log-file", "%s"] + .[-2:])))' "$1"
}

# --- 1. the hook, real runc --------------------------------------------------------------
for pair in "${PAIRS[@]}"; do
  read -r h img <<<"$pair"
  desc="hook, $h host, $img image"
  echo "# --- $desc"
  make_bundle "hook-$h-$img" --rootfs "$T/bundles/rootfs-hook-$h-$img" --host-root "${HOST[$h]}" \
    --env OCI_ONLOAD=all --jq "$(hook_log_jq "$T/logs/hook-$h-$img.log")" -- "$PROBE"
  cp -a "${IMG[$img]}" "$ROOTFS"
  run_container
  assert_eq "[$desc] runc run exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_loaded "$desc" "$img" hook "${HOST[$h]}"
  expect_lib_dirs_kept "$desc" "$img" "$ROOTFS" "${LIBDIR[hook,$img]}"
  assert_not_contains "[$desc] the hook logs no glibc warning" "$(cat "$T/logs/hook-$h-$img.log" 2>/dev/null)" "glibc"
done
assert_state_dir_empty "after the hook cases"

# --- 2. the runtime shim wrapping runc ----------------------------------------------------
RUNC=$(command -v runc)
mkdir -p "$T/bin"
ln -s "$OCID_BIN" "$T/bin/oci-decorator-runtime"
echo "{\"runtime\": \"$RUNC\", \"log_file\": \"$T/logs/shim.log\"}" >"$T/runtime.json"
SHIM_HR=
shim() {
  "$T/bin/oci-decorator-runtime" --ocid-config "$T/runtime.json" --ocid-host-root "$SHIM_HR" \
    --ocid-config-dir "$CONF_DIR" --root "$RUNC_ROOT" --log "$T/logs/runc-$CID.json" --log-format json "$@"
}
for pair in "${PAIRS[@]}"; do
  read -r h img <<<"$pair"
  desc="shim, $h host, $img image"
  echo "# --- $desc"
  make_bundle "shim-$h-$img" --no-hook --rootfs "$T/bundles/rootfs-shim-$h-$img" --env OCI_ONLOAD=all -- "$PROBE"
  cp -a "${IMG[$img]}" "$ROOTFS"
  SHIM_HR=${HOST[$h]}
  shim_create_start
  assert_eq "[$desc] shim create exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_loaded "$desc" "$img" shim "${HOST[$h]}"
  assert_eq "[$desc] config.json mounts ${LIBDIR[shim,$img]}/libonload_ext.so.1 from the host's file" \
    "$(readlink -f "${HOST[$h]}$(host_libdir "${HOST[$h]}")/libonload_ext.so.1")" \
    "$(jq -r --arg d "${LIBDIR[shim,$img]}/libonload_ext.so.1" '.mounts[] | select(.destination == $d) | .source' "$B/config.json")"
  runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1
  expect_lib_dirs_kept "$desc" "$img" "$ROOTFS" "${LIBDIR[shim,$img]}"
done

# --- CDI specs, one per host, for podman and containerd ------------------------------------
RUN_TAG=$(basename "$T" | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z')
it_track_new_dirs /etc/cdi
cdi_cleanup() { rm -f /etc/cdi/oci-decorator-ll-"$RUN_TAG"-*; }
it_add_cleanup cdi_cleanup
declare -A KIND
# gen_spec HOST OUTPUT: `cdi generate` for HOST's install, kind unique to this run.
gen_spec() {
  local h=$1 out=$2 conf=$T/conf-cdi-$1
  KIND[$h]=oci-decorator.test/ll-$RUN_TAG-$h
  mkdir -p "$conf"
  jq --arg k "${KIND[$h]}" '.cdi_kind = $k' "$CONF_DIR/onload.json" >"$conf/onload.json"
  "$OCID_BIN" --host-root "${HOST[$h]}" --config-dir "$conf" cdi generate --output "$out" >"$T/logs/cdi-$h.log" 2>&1 ||
    die "cdi generate for the $h host failed: $(cat "$T/logs/cdi-$h.log")"
}
echo "# --- cdi generate"
for h in rhel deb; do
  gen_spec "$h" "/etc/cdi/oci-decorator-ll-$RUN_TAG-$h.json"
  spec=/etc/cdi/oci-decorator-ll-$RUN_TAG-$h.json
  assert_eq "[$h host] the spec mounts libonload_ext.so.1 in both /usr/lib/x86_64-linux-gnu and /usr/lib64" \
    "/usr/lib/x86_64-linux-gnu/libonload_ext.so.1 /usr/lib64/libonload_ext.so.1" \
    "$(jq -r '[.devices[] | select(.name == "all") | .containerEdits.mounts[] | select(.containerPath | endswith("/libonload_ext.so.1")) | .containerPath] | sort | join(" ")' "$spec")"
  assert_eq "[$h host] the spec's preload file names $CDI_PRELOAD" "$CDI_PRELOAD" \
    "$(cat "$(jq -r '.devices[] | select(.name == "all") | .containerEdits.mounts[] | select(.containerPath == "/etc/ld.so.preload") | .hostPath' "$spec")" 2>&1)"
done

# --- 3. podman with the CDI spec ----------------------------------------------------------
EMPTY_HOOKS=$T/empty-hooks.d
mkdir -p "$EMPTY_HOOKS"
for pair in "${PAIRS[@]}"; do
  read -r h img <<<"$pair"
  desc="podman CDI, $h host, $img image"
  echo "# --- $desc"
  BASE_ROOTFS=${IMG[$img]} run_podman runc --hooks-dir "$EMPTY_HOOKS" -- --device "${KIND[$h]}=all" -- "$PROBE"
  assert_eq "[$desc] podman run exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_loaded "$desc" "$img" cdi "${HOST[$h]}"
  expect_lib_dirs_kept "$desc" "$img" "$ROOTFS" "${LIBDIR[cdi,$img]}"
done
assert_host_mounts_unchanged "after the podman cases"
# Removed now: ctd2_setup below registers a cleanup that would look at
# /etc/cdi before cdi_cleanup runs.
cdi_cleanup

# --- 4. containerd 2.x through CRI, the same specs in its cdi_spec_dirs ----------------------
echo "# --- containerd 2.x"
ctd2_setup
for h in rhel deb; do gen_spec "$h" "$CTD2_CDI_DIR/oci-decorator-ll-$h.json"; done
start=$SECONDS
ctd2_start
L64_IMAGE=docker.io/local/ocid-lib64:1
make_oci_image "$CTD2/lib64.tar" "$IMG_L64" "$L64_IMAGE=[\"sh\"]"
ctr2 images import "$CTD2/lib64.tar" >/dev/null 2>"$T/logs/ctd2-import-l64.err" ||
  die "ctr images import of the lib64 image failed: $(cat "$T/logs/ctd2-import-l64.err")"
info "$CTD2_VERSION: ready in $((SECONDS - start)) s"
declare -A CRI_IMAGE=([deb]=$CTD2_IMAGE [lib64]=$L64_IMAGE)
ctd2_runp ll
for pair in "${PAIRS[@]}"; do
  read -r h img <<<"$pair"
  desc="containerd CRI CDI, $h host, $img image"
  echo "# --- $desc"
  name=cri-$h-$img
  cfg=$(ctd2_container_json "$name" "$PROBE" \
          ".image.image = \"${CRI_IMAGE[$img]}\" | .CDI_devices = [{name: \"${KIND[$h]}=all\"}]")
  ctd2_run "$name" "$cfg" --keep
  assert_eq "[$desc] the container ran (exit 0)" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_loaded "$desc" "$img" cdi "${HOST[$h]}"
  # Its writable layer, on the host: the overlay upperdir of its snapshot.
  cid=$(cri ps | awk -v n="$name" '$2 == n {print $1}')
  upper=$(ctr2 snapshots --snapshotter overlayfs mounts /unused "$cid" 2>/dev/null | grep -o 'upperdir=[^,]*' | cut -d= -f2)
  if [[ -n $upper && -d $upper ]]; then
    assert_eq "[$desc] host side: the writable layer holds only empty mountpoints (no library, no ld.so.cache)" "" \
      "$(tree_snapshot "$upper" | awk -F'\t' '!($2 == "d" || ($2 == "f" && $5 == 0))')"
    assert_contains "[$desc] host side: ... among them ${LIBDIR[cdi,$img]}/libonload_ext.so.1" \
      "$(tree_snapshot "$upper" | cut -f1)" ".${LIBDIR[cdi,$img]}/libonload_ext.so.1"
  else
    nok "[$desc] host side: the container's snapshot upperdir ($cid: '${upper}')"
  fi
  [[ -n $cid ]] && { cri rm "$cid" >/dev/null || nok "[$desc] RemoveContainer $cid"; }
done
ctd2_assert_mounts "after the CRI cases"
cri stopp "$POD_ID" >/dev/null && cri rmp "$POD_ID" >/dev/null
pid=$CTD2_PID
check "containerd and its shims stopped, nothing left mounted" ctd2_stop
check_not "containerd ($pid) is gone" quiet kill -0 "$pid"

# --- 5. no glibc in the image: mounts, and one warning ------------------------------------
desc="hook, noglibc image"
echo "# --- $desc"
NOG_LOG=$T/logs/hook-static.log
# (named "static": a container id holding "glibc" would match the warning count)
make_bundle static --rootfs "$T/bundles/rootfs-static" --env OCI_ONLOAD=all \
  --jq "$(hook_log_jq "$NOG_LOG")" -- 'echo "STATIC ok"; '"$PROBE"
cp -a "$IMG_NOGLIBC" "$ROOTFS"
PLAN=$("$OCID_BIN" --host-root "$HOST_RHEL" --config-dir "$CONF_DIR" --state-dir "$STATE_DIR" \
         plan --bundle "$B" 2>"$T/plan-static.err")
prc=$?
assert_eq "[$desc] plan exits 0 ($(head -c 300 "$T/plan-static.err"))" 0 "$prc"
info "plan's library_dirs: $(jq -c '.library_dirs' <<<"$PLAN" 2>&1)"
info "plan's warnings: $(jq -c '.warnings' <<<"$PLAN" 2>&1)"
plan_dirs=$(jq -r '.library_dirs.dirs // [] | join(" ")' <<<"$PLAN" 2>/dev/null)
check "[$desc] plan says where the libraries land (library_dirs.dirs: '$plan_dirs')" test -n "$plan_dirs"
assert_match "[$desc] ... and why (library_dirs.why)" "$(jq -r '.library_dirs.why // ""' <<<"$PLAN" 2>/dev/null)" '.'
assert_eq "[$desc] plan's JSON has one glibc warning" 1 \
  "$(jq -r '.warnings[]' <<<"$PLAN" 2>/dev/null | grep -ci 'glibc')"
assert_eq "[$desc] plan prints it on stderr, once" 1 "$(grep -ci 'glibc' "$T/plan-static.err")"
run_container
assert_eq "[$desc] runc run exits 0: the container starts" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[$desc] its static busybox ran" "$OUT" "STATIC ok"
for f in libonload.so libonload_ext.so.1 libonload_zf.so.1; do
  want=$(host_sha "$(readlink -f "$HOST_RHEL/usr/lib64/$f")")
  for d in ${plan_dirs:-/usr/lib64}; do
    assert_eq "[$desc] $d/$f is mounted, the host's file (where plan said)" "$want" \
      "$(field HAS | awk -v f="$d/$f" '$1 == f {print $2}')"
  done
done
assert_eq "[$desc] the hook's log has exactly one glibc warning line" 1 \
  "$(grep -i 'warn' "$NOG_LOG" 2>/dev/null | grep -ci 'glibc')"
info "the warning: $(grep -i 'warn' "$NOG_LOG" 2>/dev/null | grep -i -m1 'glibc')"
assert_eq "[$desc] no ld.so.cache made" absent "$(field CACHE)"

# --- 6. negative control: the libraries where this image's loader does not look ----------------
desc="control: deb image, libraries forced to /usr/lib64"
echo "# --- $desc"
CONF_FORCED=$T/conf-forced
mkdir -p "$CONF_FORCED"
jq '.inventory[].libraries |= map(. + {target_dir: "/usr/lib64"})' "$CONF_DIR/onload.json" >"$CONF_FORCED/onload.json"
make_bundle forced --rootfs "$T/bundles/rootfs-forced" --host-root "$HOST_RHEL" --config-dir "$CONF_FORCED" \
  --env OCI_ONLOAD=all -- "$PROBE"
cp -a "$IMG_DEB" "$ROOTFS"
run_container
assert_eq "[$desc] runc run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[$desc] /usr/lib64/libonload_ext.so.1 is there, the host's file" \
  "$(host_sha "$(readlink -f "$HOST_RHEL/usr/lib64/libonload_ext.so.1")")" \
  "$(field HAS | awk '$1 == "/usr/lib64/libonload_ext.so.1" {print $2}')"
for p in ext zf; do
  check_not "[$desc] $p-test does not start" test "$(field "$p" | sed -n 's/^rc //p')" = 0
  assert_contains "[$desc] ... the loader cannot find libonload_$p.so.1" "$(field "$p")" \
    "error while loading shared libraries: libonload_$p.so.1: cannot open shared object file"
done
assert_contains "[$desc] libonload itself is preloaded (an absolute path)" "$(field DYN)" \
  "SIMULATED libonload: preloaded into /usr/bin/dyn-hello"

it_finish
