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

# onload_probe [LIBDIR]: a container script printing one line per fact that
# expect_onload checks (SHA, MNT, DEV, OPENR, OPENW, PRELOAD, DYN, MOUNTS_MATCHING, DONE).
ONLOAD_PROBE_FILES_ONLOAD="@L@/libonload.so @L@/libonload_ext.so.1.2.0 @L@/libonload_ext.so.1 /usr/bin/onload /usr/sbin/onload_tool /usr/libexec/onload/profiles/latency.opf"
ONLOAD_PROBE_FILES_ZF="@L@/libonload_zf.so @L@/libonload_zf.so.1 /usr/bin/zf_stackdump /usr/bin/zf_debug"
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
