#!/bin/bash
# sim-onload.sh HOSTROOT [--layout lib64|debian|opt] [--shrub]
#
# Builds a SIMULATED Onload installation under HOSTROOT, for oci-decorator's
# integration tests and demo on machines without Solarflare/AMD hardware.
# Nothing here is Onload: every file says SIMULATED in its content or output.
# Point the hook at it with --host-root HOSTROOT.
#
# Layout (see shared notes "onload-install"):
#   usr/lib64/ (or usr/lib/x86_64-linux-gnu/ with --layout debian)
#     libonload.so                     preload library (constructor prints a line;
#                                      version banner "Onload 0.0.0-sim \nCopyright",
#                                      or $SIM_ONLOAD_VERSION and
#                                      $SIM_ONLOAD_BUILD_PROFILE, in Onload's format)
#     libonload_ext.so.1.2.0 (soname libonload_ext.so.1), .so.1 -> .so.1.2.0,
#                                      .so -> .so.1
#     libonload_zf.so (soname libonload_zf.so.1), libonload_zf.so.1 -> libonload_zf.so
#     (the real names, sonames and links: see "libraries" below)
#   usr/bin/onload, onload_stackdump, zf_stackdump, zf_debug   (sh scripts)
#   usr/sbin/onload_tool                                       (sh script)
#   usr/libexec/onload/profiles/*.opf
#   etc/SIMULATED-ONLOAD-README
#   sys/bus/pci/devices/0000:04:00.0 -> ../../../devices/pci0000:00/0000:00:02.0/0000:04:00.0:
#     a SIMULATED Solarflare NIC laid out as sysfs has it (vendor 0x1924,
#     device 0x0b03, numa_node $SIM_ONLOAD_NIC_NUMA or 0, driver -> sfc,
#     net/simsfc0, and a `label` that says SIMULATED): the shipped onload.json
#     needs a NIC ("needs_nic"), and nothing else here is hardware either.
#   dev/onload, dev/onload_epoll, dev/sfc_char: char devices, mode 0666, minor 0,
#     each with its own major that no driver on this host registered (so an
#     open that the device cgroup allows fails with ENXIO, one it denies with
#     EPERM), outside runc's default allow list.
#
# --layout opt puts every file but the device nodes under opt/onload/ as AMD's
# Kubernetes Onload operator leaves them on a node: its device plugin's init
# container copies the onload-user image's /opt/onload to the host's
# /opt/onload (Xilinx-CNS/kubernetes-onload controllers/onload_controller.go:
# `cp -TRv /opt/onload /host/onload`), and that image is Onload's own
# `scripts/onload_install --nobuild --userfiles` with i_prefix=/opt/onload on
# a RHEL (ubi8) builder (Xilinx-CNS/onload scripts/onload-user.Dockerfile).
# onload_install (calculate_install_paths) then gives:
#   opt/onload/usr/lib64/   libonload.so, libonload_ext.so* (lib64: no
#                           /lib/x86_64-linux-gnu/libc.so.6 on RHEL; TCPDirect's
#                           zf_install --dest-dir /opt/onload/usr puts
#                           libonload_zf.so* beside them)
#   opt/onload/usr/bin/     onload, onload_stackdump, zf_stackdump, zf_debug
#   opt/onload/sbin/        onload_tool (sbindir is /sbin, not /usr/sbin)
#   opt/onload/usr/libexec/onload/profiles/*.opf
#
# --shrub adds X3/X4 queue sharing (Onload's shrub controller; Onload at
# ef17681d): a SIMULATED shrub_controller program where onload_install puts
# it (sbindir: usr/sbin, reached as /sbin/shrub_controller through
# sbin -> usr/sbin, made when HOSTROOT has no sbin, as on a merged-/usr host;
# opt/onload/sbin with --layout opt) and the onload module's parameters as
# sysfs shows them after a default install (src/driver/linux_onload/
# shrub_fns.c:27-109): sys/module/onload/parameters/shrub_controller_path
# (the effective path, no newline: /sbin/shrub_controller, or the opt
# layout's, which such a host must set), shrub_controller_client_gid and
# shrub_controller_client_mode 0 (unset), shrub_controller_uid and
# shrub_controller_gid 65534, in decimal with a newline. Nothing starts a
# controller: test/standins/shrub_standin plays one. Without --shrub none of
# this is written (and what an earlier --shrub run wrote stays).
#
# Idempotent: running it again refreshes the files and keeps existing device
# nodes whose majors are still free. Prints one summary line to stderr.
set -euo pipefail

usage() { echo "usage: $0 HOSTROOT [--layout lib64|debian|opt] [--shrub]" >&2; exit 2; }

[[ $# -ge 1 ]] || usage
HOSTROOT=$1; shift
LAYOUT=lib64
SHRUB=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --layout) [[ $# -ge 2 ]] || usage; LAYOUT=$2; shift 2 ;;
    --layout=*) LAYOUT=${1#--layout=}; shift ;;
    --shrub) SHRUB=1; shift ;;
    *) usage ;;
  esac
done
# Where each kind of file goes: libraries, programs, onload_tool, profiles.
case $LAYOUT in
  lib64) PREFIX=; LIBDIR=usr/lib64; SBINDIR=usr/sbin ;;
  debian) PREFIX=; LIBDIR=usr/lib/x86_64-linux-gnu; SBINDIR=usr/sbin ;;
  opt) PREFIX=opt/onload/; LIBDIR=opt/onload/usr/lib64; SBINDIR=opt/onload/sbin ;;
  *) usage ;;
esac
BINDIR=${PREFIX}usr/bin
PROFDIR=${PREFIX}usr/libexec/onload/profiles
[[ $(id -u) -eq 0 ]] || { echo "$0: must run as root (mknod)" >&2; exit 1; }
command -v cc >/dev/null || { echo "$0: needs a C compiler (cc)" >&2; exit 1; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIXTURES=$HERE/../test/fixtures
[[ -f $FIXTURES/sim_libonload.c ]] || { echo "$0: missing $FIXTURES/sim_libonload.c" >&2; exit 1; }

mkdir -p "$HOSTROOT"
HOSTROOT=$(cd "$HOSTROOT" && pwd -P)
[[ $HOSTROOT != / ]] || { echo "$0: refusing to write a simulated install over /" >&2; exit 1; }

# A previous run with another layout must not leave a second copy that the
# inventory's first-matching-alternative rule would prefer.
for d in usr/lib64 usr/lib/x86_64-linux-gnu opt/onload/usr/lib64; do
  [[ $d == "$LIBDIR" ]] ||
    rm -f "$HOSTROOT/$d"/libonload.so "$HOSTROOT/$d"/libonload_ext.so* "$HOSTROOT/$d"/libonload_zf.so*
done
for p in "" opt/onload/; do
  [[ $p == "$PREFIX" ]] && continue
  rm -f "$HOSTROOT/${p}usr/bin"/{onload,onload_stackdump,zf_stackdump,zf_debug} \
        "$HOSTROOT/${p}usr/sbin/shrub_controller" "$HOSTROOT/${p}sbin/shrub_controller" \
        "$HOSTROOT/${p}usr/sbin/onload_tool" "$HOSTROOT/${p}sbin/onload_tool"
  rm -rf "$HOSTROOT/${p}usr/libexec/onload/profiles"
done

mkdir -p "$HOSTROOT/$LIBDIR" "$HOSTROOT/$BINDIR" "$HOSTROOT/$SBINDIR" \
         "$HOSTROOT/$PROFDIR" "$HOSTROOT/etc" "$HOSTROOT/dev"

# --- libraries -------------------------------------------------------------
# The banner's ONLOAD_VERSION is "$SIM_ONLOAD_VERSION $SIM_ONLOAD_BUILD_PROFILE",
# as Onload's build writes it (sim_libonload.c): what oci-decorator reads.
v_re='^[0-9A-Za-z._/-]([0-9A-Za-z._/ -]{0,110}[0-9A-Za-z._/-])?$'
[[ ${SIM_ONLOAD_VERSION:-0.0.0-sim} =~ $v_re ]] ||
  { echo "$0: SIM_ONLOAD_VERSION must be 1 to 112 of [0-9A-Za-z._/-] and inner spaces" >&2; exit 2; }
[[ -z ${SIM_ONLOAD_BUILD_PROFILE:-} || $SIM_ONLOAD_BUILD_PROFILE =~ ^[0-9A-Za-z_]{1,15}$ ]] ||
  { echo "$0: SIM_ONLOAD_BUILD_PROFILE must be 1 to 15 of [0-9A-Za-z_]" >&2; exit 2; }
L=$HOSTROOT/$LIBDIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -shared -fPIC -O2 -DSIM_VERSION="\"${SIM_ONLOAD_VERSION:-0.0.0-sim}\"" \
   -DSIM_BUILD_PROFILE="\"${SIM_ONLOAD_BUILD_PROFILE:-}\"" \
   -o "$tmp/libonload.so" "$FIXTURES/sim_libonload.c"
# The two libraries applications link against, with the real file names,
# sonames and links (a program linked with -lonload_ext / -lonload_zf records
# the soname as DT_NEEDED, and the loader looks that name up):
# - libonload_ext (Onload, github.com/Xilinx-CNS/onload at ef17681d):
#   version 1.2.0 (mk/site/libs.mk:5,11,14), real name
#   lib$(lib_name).so.$(lib_maj).$(lib_min).$(lib_mic) and soname
#   lib$(lib_name).so.$(lib_maj) (mk/linux_gcc.mk:240-241, used by
#   mk/site/libs.mk:21-22; linked with that soname at
#   src/lib/onload_ext/mmake.mk:34-35); onload_install's install_dlib
#   (scripts/onload_install:143-167, called at :208) installs
#   libonload_ext.so.1.2.0 and the relative links libonload_ext.so.1 ->
#   libonload_ext.so.1.2.0 and libonload_ext.so -> libonload_ext.so.1.
#   `readelf -d` of its own build (mmakebuildtree --user, make NDEBUG=1):
#   SONAME libonload_ext.so.1, NEEDED libc.so.6.
# - libonload_zf (TCPDirect: its own repository, github.com/Xilinx-CNS/tcpdirect
#   at 96d8c69, not a part of Onload's tree): the file is built as
#   libonload_zf.so with soname libonload_zf.so.$(ZF_MAJOR_VERSION) = .so.1
#   (src/lib/zf/Makefile.inc:21,27-32,75-77; ZF_REALNAME, .so.1.2.1, is
#   defined at :29 but names no file), and libonload_zf.so.1 -> libonload_zf.so
#   (:79-80); zf_mkdist copies libonload_zf.so* as they are (scripts/zf_mkdist:140)
#   and zf_install copies them with cp -a into /usr/lib/x86_64-linux-gnu when
#   /lib/x86_64-linux-gnu/libc.so.6 exists, else /usr/lib64
#   (scripts/zf_install:65-71,126,163), then runs ldconfig -n there (:179),
#   which keeps that link. So there is no libonload_zf.so.1.x.y file.
#   `readelf -d` of its own build (make with ONLOAD_TREE, NDEBUG=1): the file
#   libonload_zf.so, SONAME libonload_zf.so.1, NEEDED libc.so.6, and the
#   link libonload_zf.so.1 -> libonload_zf.so.
cc -shared -fPIC -O2 -Wl,-soname,libonload_ext.so.1 \
   -DSIM_NAME='"SIMULATED libonload_ext 1.2.0"' -o "$tmp/libonload_ext.so.1.2.0" \
   "$FIXTURES/sim_libonload_ext.c"
cc -shared -fPIC -O2 -Wl,-soname,libonload_zf.so.1 \
   -DSIM_NAME='"SIMULATED libonload_zf 1"' -o "$tmp/libonload_zf.so" \
   "$FIXTURES/sim_libonload_ext.c"
# A libonload_zf.so.1.0.0 of an older sim-onload.sh would stay behind.
rm -f "$L"/libonload_zf.so.1.*
rm -f "$L/libonload_zf.so"  # was a link: install must not write through it
install -m 0755 "$tmp/libonload.so" "$tmp/libonload_ext.so.1.2.0" "$tmp/libonload_zf.so" "$L/"
ln -sfn libonload_ext.so.1.2.0 "$L/libonload_ext.so.1"
ln -sfn libonload_ext.so.1 "$L/libonload_ext.so"
ln -sfn libonload_zf.so "$L/libonload_zf.so.1"

# --- programs ----------------------------------------------------------------
write_script() {  # path, body
  local path=$1 body=$2
  printf '#!/bin/sh\n# SIMULATED Onload program for oci-decorator tests: not the real Onload.\n%s\n' \
    "$body" >"$path.tmp"
  chmod 0755 "$path.tmp"
  mv -f "$path.tmp" "$path"
}
write_script "$HOSTROOT/$BINDIR/onload" 'case "$1" in
  --version|-v) echo "SIMULATED Onload 0.0.0-sim (oci-decorator test install, not the real Onload)"; exit 0 ;;
  "") echo "SIMULATED onload: usage: onload [--profile=NAME] COMMAND [ARGS...]" >&2; exit 1 ;;
esac
while [ $# -gt 0 ]; do
  case "$1" in --profile=*|-p) shift ;; --*) shift ;; *) break ;; esac
done
echo "SIMULATED onload: would run $* with LD_PRELOAD=libonload.so" >&2
LD_PRELOAD=libonload.so exec "$@"'
write_script "$HOSTROOT/$BINDIR/onload_stackdump" 'echo "SIMULATED onload_stackdump: no stacks (simulated install)"'
write_script "$HOSTROOT/$BINDIR/zf_stackdump" 'echo "SIMULATED zf_stackdump: no TCPDirect stacks (simulated install)"'
write_script "$HOSTROOT/$BINDIR/zf_debug" 'echo "SIMULATED zf_debug (simulated install)"'
write_script "$HOSTROOT/$SBINDIR/onload_tool" 'echo "SIMULATED onload_tool $* (simulated install: no driver to load)"'

if ((SHRUB)); then
  write_script "$HOSTROOT/$SBINDIR/shrub_controller" \
    'echo "SIMULATED shrub_controller $* (simulated install: no NIC to share, nothing started)" >&2; exit 1'
  if [[ $LAYOUT == opt ]]; then
    shrub_path=/$SBINDIR/shrub_controller
  else
    shrub_path=/sbin/shrub_controller
    [[ -e $HOSTROOT/sbin || -L $HOSTROOT/sbin ]] || ln -s usr/sbin "$HOSTROOT/sbin"
  fi
  params=$HOSTROOT/sys/module/onload/parameters
  mkdir -p "$params"
  printf '%s' "$shrub_path" >"$params/shrub_controller_path"
  echo 0 >"$params/shrub_controller_client_gid"
  echo 0 >"$params/shrub_controller_client_mode"
  echo 65534 >"$params/shrub_controller_uid"
  echo 65534 >"$params/shrub_controller_gid"
fi

# --- profiles ----------------------------------------------------------------
P=$HOSTROOT/$PROFDIR
# latency and throughput are straight-line (oci-decorator uses them as
# profiles); latency-best has an `if` over sysfs like the real one, which
# oci-decorator refuses to use (a profile is parsed, never executed).
sim_profile() {  # NAME BODY
  printf '# SIMULATED Onload profile "%s" for oci-decorator tests (not the real Onload)\n%s\n' \
    "$1" "$2" >"$P/$1.opf"
  chmod 0644 "$P/$1.opf"
}
sim_profile latency 'onload_set EF_POLL_USEC 100000
onload_set EF_TCP_FASTSTART_INIT 0
onload_set EF_TCP_FASTSTART_IDLE 0'
sim_profile latency-best 'onload_import latency
if [ -e /sys/class/net/sfc0 ]; then
  onload_set EF_INT_DRIVEN 0
fi'
sim_profile throughput 'onload_set EF_POLL_USEC 100000
onload_set EF_TCP_SNDBUF_MODE 1'

# --- the NIC -------------------------------------------------------------------
# A SIMULATED Solarflare NIC where sysfs puts a PCI device: the bus's entry
# is a link into the device tree, as on a real host.
[[ ${SIM_ONLOAD_NIC_NUMA:-0} =~ ^(-1|[0-9]{1,3})$ ]] ||
  { echo "$0: SIM_ONLOAD_NIC_NUMA must be -1 or a NUMA node number" >&2; exit 2; }
NIC_ADDR=0000:04:00.0
NIC_DEV=$HOSTROOT/sys/devices/pci0000:00/0000:00:02.0/$NIC_ADDR
mkdir -p "$NIC_DEV/net/simsfc0" "$HOSTROOT/sys/bus/pci/devices" "$HOSTROOT/sys/bus/pci/drivers/sfc"
echo 0x1924 >"$NIC_DEV/vendor"
echo 0x0b03 >"$NIC_DEV/device"
echo "${SIM_ONLOAD_NIC_NUMA:-0}" >"$NIC_DEV/numa_node"
echo "SIMULATED Solarflare NIC (oci-decorator scripts/sim-onload.sh): no hardware" >"$NIC_DEV/label"
ln -sfn ../../../../bus/pci/drivers/sfc "$NIC_DEV/driver"
ln -sfn "../../../devices/pci0000:00/0000:00:02.0/$NIC_ADDR" "$HOSTROOT/sys/bus/pci/devices/$NIC_ADDR"

cat >"$HOSTROOT/etc/SIMULATED-ONLOAD-README" <<EOF
SIMULATED Onload installation created by oci-decorator's scripts/sim-onload.sh.
Nothing under this directory is Onload: the libraries only print a line when
loaded, the programs are shell scripts, the device nodes have majors no driver
on this host registered, the NIC under sys/ ($NIC_ADDR, interface simsfc0) is a
few files. Layout: $LAYOUT (libraries in /$LIBDIR, programs in /$BINDIR,
onload_tool in /$SBINDIR, profiles in /$PROFDIR).
EOF
if ((SHRUB)); then
  cat >>"$HOSTROOT/etc/SIMULATED-ONLOAD-README" <<EOF
X3/X4 queue sharing (--shrub): /$SBINDIR/shrub_controller is a shell script
that starts nothing; sys/module/onload/parameters/shrub_controller_* say
where a kernel would look for it.
EOF
fi

# --- device nodes --------------------------------------------------------------
# Char majors registered by drivers on this host.
mapfile -t used < <(awk '/^Character devices:/{c=1;next} /^$/{c=0} /^Block devices:/{c=0} c{print $1}' /proc/devices)
is_used() { local m; for m in "${used[@]}"; do [[ $m == "$1" ]] && return 0; done; return 1; }
# runc's default allow list uses majors 1, 5, 10, 136 (and 4 for ttys): all below 230.

taken=()
is_taken() { local m; for m in "${taken[@]}"; do [[ $m == "$1" ]] && return 0; done; return 1; }
pick_major() {
  local m
  for ((m = 254; m >= 230; m--)); do
    is_used "$m" || is_taken "$m" || { echo "$m"; return 0; }
  done
  return 1
}

summary=()
for name in onload onload_epoll sfc_char; do
  node=$HOSTROOT/dev/$name
  major=
  if [[ -c $node && ! -L $node ]]; then
    cur=$(stat -c '%t' "$node")
    cur=$((16#$cur))
    if ! is_used "$cur" && ! is_taken "$cur" && [[ $cur -ge 230 && $cur -le 254 ]] && \
       [[ $(stat -c '%T' "$node") == 0 ]]; then
      major=$cur
    fi
  fi
  if [[ -z $major ]]; then
    major=$(pick_major) || { echo "$0: no free char major in 230..254" >&2; exit 1; }
    rm -f "$node"
    mknod -m 0666 "$node" c "$major" 0
  fi
  chmod 0666 "$node"
  taken+=("$major")
  summary+=("$name=$major:0")
done

shrub_note=
((SHRUB)) && shrub_note="; shrub controller /$SBINDIR/shrub_controller"
echo "sim-onload: SIMULATED Onload install ($LAYOUT) under $HOSTROOT; devices ${summary[*]}; NIC $NIC_ADDR$shrub_note" >&2
