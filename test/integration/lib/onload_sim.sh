# shellcheck shell=bash
# The SIMULATED Onload install (scripts/sim-onload.sh) on the host, and
# what a container must see of it.
# (Sourced by ../lib.sh, which sets SRC and the tally.)

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

# X3/X4 queue sharing on the SIMULATED install: what a loaded onload module
# with a shrub controller looks like. Writes the module's five
# shrub_controller_* parameters as sysfs shows them (Onload at ef17681d,
# src/driver/linux_onload/shrub_fns.c):
# - shrub_controller_path: PATH_VALUE, default /sbin/shrub_controller (the
#   getter returns the effective path, the default when the parameter is
#   empty: :27-29, :35-40, :63-88). The getter adds no newline and today's
#   kernels' param_attr_show adds none either (older kernels added one to
#   every parameter): SIM_SHRUB_PATH_NEWLINE=1 writes that older form.
# - shrub_controller_client_gid: CLIENT_GID, default 0 (unset);
#   shrub_controller_client_mode: MODE_DEC, default 0 (unset: the controller
#   then uses 0666); shrub_controller_uid and _gid: SIM_SHRUB_UID and
#   SIM_SHRUB_GID, default 65534 (DEFAULT_OVERFLOWUID/GID). All four are int
#   parameters (:90-109): decimal and a newline, so a mode 0660 reads 432.
# Then a SIMULATED usr/sbin/shrub_controller, with sbin -> usr/sbin when
# HOSTROOT has no sbin (merged /usr, where onload_install puts it in
# /usr/sbin: scripts/onload_install:598-605; the default path reaches it
# through the link). SIM_SHRUB_PROGRAM=0 writes the parameters only.
sim_shrub() {  # HOSTROOT [PATH_VALUE] [CLIENT_GID] [MODE_DEC]
  local hr=$1 p=$1/sys/module/onload/parameters nl=
  [[ ${SIM_SHRUB_PATH_NEWLINE:-0} == 1 ]] && nl=$'\n'
  mkdir -p "$p"
  printf '%s%s' "${2:-/sbin/shrub_controller}" "$nl" >"$p/shrub_controller_path"
  printf '%d\n' "${3:-0}" >"$p/shrub_controller_client_gid"
  printf '%d\n' "${4:-0}" >"$p/shrub_controller_client_mode"
  printf '%d\n' "${SIM_SHRUB_UID:-65534}" >"$p/shrub_controller_uid"
  printf '%d\n' "${SIM_SHRUB_GID:-65534}" >"$p/shrub_controller_gid"
  [[ ${SIM_SHRUB_PROGRAM:-1} == 0 ]] && return 0
  mkdir -p "$hr/usr/sbin"
  printf '#!/bin/sh\n# SIMULATED Onload program for oci-decorator tests: not the real Onload.\n%s\n' \
    'echo "SIMULATED shrub_controller $* (simulated install: no NIC to share, nothing started)" >&2; exit 1' \
    >"$hr/usr/sbin/shrub_controller"
  chmod 0755 "$hr/usr/sbin/shrub_controller"
  [[ -e $hr/sbin || -L $hr/sbin ]] || ln -s usr/sbin "$hr/sbin"
}

# Where libraries land (oci-decorator.json(5), Libraries; issue 28):
#   IMAGE_LIBDIR  the hook and the shim: the directory of the image's own
#                 libc.so.6. make-rootfs.sh copies the host's libc at the
#                 host's path and keeps /lib a real directory, so on a
#                 Debian-family test host /lib/x86_64-linux-gnu. it_setup
#                 sets it from $BASE_ROOTFS (image_libdir).
#   CDI_LIBDIRS   CDI and the device plugin, for every image: both standard
#                 directories, the preload naming the first.
#   SIM_LIBDIR    where the simulated install (layout lib64) keeps them on
#                 the host: the source, no longer the container path.
IMAGE_LIBDIR=/lib/x86_64-linux-gnu
CDI_LIBDIRS="/usr/lib/$(uname -m)-linux-gnu /usr/lib64"
# shellcheck disable=SC2034  # for the scripts
CDI_LIBONLOAD=${CDI_LIBDIRS%% *}/libonload.so  # what their preload names
SIM_LIBDIR=/usr/lib64

# image_libdir ROOTFS: the directory the hook's probe picks in ROOTFS: the
# first candidate that is a real directory (no symlink on the way) holding a
# libc.so.6; "" when none does.
image_libdir() {
  local root c real t
  root=$(cd "$1" && pwd -P) || return 1
  t=$(uname -m)-linux-gnu
  for c in "/usr/lib/$t" "/lib/$t" /usr/lib64 /lib64 /usr/lib /lib; do
    real=$(cd "$root$c" 2>/dev/null && pwd -P) || continue
    [[ $real == "$root$c" && -f $root$c/libc.so.6 ]] && { echo "$c"; return 0; }
  done
  echo ""
}

# The files onload_probe looks at and expect_onload checks: the libraries
# in each of LIBDIRS (container directories, space-separated), then the
# files that keep their host paths.
ONLOAD_PROBE_LIBS_ONLOAD="libonload.so libonload_ext.so.1.2.0 libonload_ext.so.1"
ONLOAD_PROBE_LIBS_ZF="libonload_zf.so libonload_zf.so.1"
ONLOAD_PROBE_FILES_ONLOAD="/usr/bin/onload /usr/sbin/onload_tool /usr/libexec/onload/profiles/latency.opf"
ONLOAD_PROBE_FILES_ZF="/usr/bin/zf_stackdump /usr/bin/zf_debug"
probe_files() {  # onload|zf LIBDIRS
  local libs files d n
  if [[ $1 == onload ]]; then libs=$ONLOAD_PROBE_LIBS_ONLOAD files=$ONLOAD_PROBE_FILES_ONLOAD
  else libs=$ONLOAD_PROBE_LIBS_ZF files=$ONLOAD_PROBE_FILES_ZF; fi
  for d in $2; do for n in $libs; do printf '%s ' "$d/$n"; done; done
  echo "$files"
}

# onload_probe [LIBDIRS]: a container script printing one line per fact that
# expect_onload checks (SHA, MNT, DEV, OPENR, OPENW, PRELOAD, DYN, MOUNTS_MATCHING, DONE).
onload_probe() {
  local L=${1:-$IMAGE_LIBDIR}
  local files
  files="$(probe_files onload "$L") $(probe_files zf "$L")"
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

# expect_onload WHAT DESC [HOSTROOT] [LIBDIRS] [MODE] [HOSTLIBDIR]: checks
# $OUT (an onload_probe run of the same LIBDIRS) for WHAT = all | onload |
# zf | none against the simulated host install, its libraries in
# HOSTLIBDIR (default $SIM_LIBDIR) and expected in every one of LIBDIRS
# (default $IMAGE_LIBDIR; CDI modes: $CDI_LIBDIRS), preloaded from the
# first. MODE is how the plan was delivered:
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
  local what=$1 desc=$2 hr=${3:-$HOST_ROOT} L=${4:-$IMAGE_LIBDIR} mode=${5:-hook}
  local hl=${6:-$SIM_LIBDIR}
  local want_onload=0 want_zf=0 f d m opts got want r w hf pre
  local onload_files zf_files
  onload_files=$(probe_files onload "$L")
  zf_files=$(probe_files zf "$L")
  pre=${L%% *}/libonload.so
  case $what in
    all) want_onload=1; want_zf=1 ;;
    onload) want_onload=1 ;;
    zf) want_zf=1 ;;
    none) ;;
    *) die "expect_onload: unknown WHAT $what" ;;
  esac
  [[ $mode == hook || $mode == spec || $mode == bind || $mode == bindpre || $mode == cdi || $mode == both ]] || die "expect_onload: unknown MODE $mode"
  assert_contains "[$desc] probe ran to the end" "$OUT" "DONE"
  for f in $onload_files $zf_files; do
    got=$(field SHA | awk -v f="$f" '$1 == f {print $2}')
    # A library's host file is in HOSTLIBDIR, whatever directory it lands in.
    hf=$hr$f
    [[ ${f##*/} == lib*.so* ]] && hf=$hr$hl/${f##*/}
    if { [[ " $onload_files " == *" $f "* ]] && ((want_onload)); } ||
       { [[ " $zf_files " == *" $f "* ]] && ((want_zf)); }; then
      assert_eq "[$desc] $f has the host file's content" "$(host_sha "$hf")" "$got"
      # In hook mode a version link is mounted from the file it resolves to.
      [[ $mode == hook && -L $hf ]] && continue
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
      assert_contains "[$desc] /etc/ld.so.preload lists $pre" "$(field PRELOAD)" "$pre"
    elif [[ $mode == cdi || $mode == both ]]; then
      assert_eq "[$desc] /etc/ld.so.preload is $pre" "$pre" "$(field PRELOAD)"
      opts=$(field MNT | awk '$1 == "/etc/ld.so.preload" {print $2}')
      assert_match "[$desc] /etc/ld.so.preload is mounted ro,nosuid,nodev (${opts:-not a mount})" "$opts" \
        '(^|,)ro(,|$).*nosuid.*nodev|(^|,)ro(,|$).*nodev.*nosuid'
      assert_eq "[$desc] LD_PRELOAD unset (the preload is not in the env)" unset "$(field LDP)"
    elif [[ $mode == bindpre ]]; then
      assert_eq "[$desc] /etc/ld.so.preload is $pre" "$pre" "$(field PRELOAD)"
      opts=$(field MNT | awk '$1 == "/etc/ld.so.preload" {print $2}')
      assert_match "[$desc] /etc/ld.so.preload is mounted ro (${opts:-not a mount})" "$opts" '(^|,)ro(,|$)'
      assert_eq "[$desc] LD_PRELOAD unset (the preload is not in the env)" unset "$(field LDP)"
    else
      assert_eq "[$desc] LD_PRELOAD is $pre" "$pre" "$(field LDP)"
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
