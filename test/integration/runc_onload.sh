#!/bin/bash
# Real runc + the SIMULATED Onload install: what an activated container sees.
#   OCI_ONLOAD=all (lib64 layout), the same with a read-only rootfs,
#   OCI_ONLOAD=zf, OCI_ONLOAD=all with the Debian library layout (same
#   unchanged config/onload.json), an image's own /etc/ld.so.preload, and the
#   image directory left unchanged but for empty mountpoints. Libraries land
#   in the directory of the image's libc.so.6 ($IMAGE_LIBDIR), never at their
#   host path.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

# Prints, inside the container, one line per fact the host checks: the
# lib's onload_probe, plus the files it does not list, writes attempted on
# the mounts, and onload --version. DONE comes last.
# $1: library directory inside the container; $2: the host's (where the
# libraries must not appear inside unless it is $1).
probe_script() {
  local L=$1 HL=$2
  onload_probe "$L" | sed '/^echo "DONE"$/d'
  cat <<EOF
L=$L
HL=$HL
for f in \$L/libonload_ext.so /usr/bin/onload_stackdump \
         /usr/libexec/onload/profiles/latency-best.opf /usr/libexec/onload/profiles/throughput.opf \
         \$( [ \$L != \$HL ] && echo \$HL/libonload.so \$HL/libonload_ext.so.1 \$HL/libonload_zf.so.1) \
         \$( [ \$L != /usr/lib64 ] && [ \$HL != /usr/lib64 ] && echo /usr/lib64/libonload.so); do
  if [ -e \$f ]; then echo "SHA \$f \$(sha256sum < \$f | cut -c1-64)"; else echo "SHA \$f MISSING"; fi
done
echo "MNT /usr/bin/onload_stackdump \$(awk '\$2 == "/usr/bin/onload_stackdump" {o = \$4} END {print o}' /proc/mounts)"
for f in /usr/bin/onload \$L/libonload.so /usr/libexec/onload/profiles/latency.opf; do
  [ -e \$f ] && echo "WRITE \$f \$( (echo x >> \$f) 2>&1 && echo WRITTEN)"
done
[ -d /usr/libexec/onload/profiles ] && echo "WRITE newfile \$( (touch /usr/libexec/onload/profiles/new.opf) 2>&1 && echo WRITTEN)"
[ -e /usr/bin/onload ] && onload --version 2>&1 | sed 's/^/VER /'
echo "DONE"
EOF
}

# check_files HOSTROOT LIBDIR HOSTLIBDIR NAMES...: SHA lines match the host
# files (@L@/name inside is HOSTLIBDIR/name on the host).
check_files() {
  local hr=$1 L=$2 HL=$3; shift 3
  local f got want
  for f in "$@"; do
    want=$(host_sha "$hr${f//@L@/$HL}")
    f=${f//@L@/$L}
    got=$(field SHA | awk -v f="$f" '$1 == f {print $2}')
    assert_eq "$f inside has the host file's content" "$want" "$got"
  done
}
check_absent() {
  local L=$1; shift
  local f
  for f in "$@"; do
    f=${f//@L@/$L}
    assert_eq "$f absent inside" MISSING "$(field SHA | awk -v f="$f" '$1 == f {print $2}')"
  done
}
# check_mount_flags PATH KIND(file|dev)
check_mount_flags() {
  local m=$1 kind=$2 opts
  opts=$(field MNT | awk -v m="$m" '$1 == m {print $2}')
  if [[ -z $opts ]]; then nok "$m is a mount point in /proc/mounts"; return; fi
  assert_match "$m mounted read-only ($opts)" "$opts" '(^|,)ro(,|$)'
  assert_match "$m mounted nosuid" "$opts" '(^|,)nosuid(,|$)'
  if [[ $kind == dev ]]; then
    assert_no_match "$m (device) mounted without nodev" "$opts" '(^|,)nodev(,|$)'
  else
    assert_match "$m mounted nodev" "$opts" '(^|,)nodev(,|$)'
  fi
}
check_device_allowed() {  # container path, host node
  local d=$1 node=$2 want
  want=$(printf '%x:%x' "0x$(stat -c %t "$node")" "0x$(stat -c %T "$node")")
  assert_eq "$d is the host's char device node" "character special file $want" "$(field DEV | awk -v d="$d" '$1 == d {$1=""; sub(/^ /, ""); print}')"
  local r w
  r=$(field OPENR | awk -v d="$d" '$1 == d')
  w=$(field OPENW | awk -v d="$d" '$1 == d')
  assert_match "open($d, O_RDONLY) passes the device cgroup (ENXIO/ENODEV)" "$r" 'No such device'
  assert_not_contains "open($d, O_RDONLY) is not EPERM" "$r" "Operation not permitted"
  assert_match "open($d, O_WRONLY) passes the device cgroup (ENXIO/ENODEV)" "$w" 'No such device'
}

ONLOAD_FILES=(@L@/libonload.so @L@/libonload_ext.so.1.2.0 @L@/libonload_ext.so.1 @L@/libonload_ext.so
              /usr/bin/onload /usr/bin/onload_stackdump /usr/sbin/onload_tool
              /usr/libexec/onload/profiles/latency.opf /usr/libexec/onload/profiles/latency-best.opf
              /usr/libexec/onload/profiles/throughput.opf)
ZF_FILES=(@L@/libonload_zf.so @L@/libonload_zf.so.1 /usr/bin/zf_stackdump /usr/bin/zf_debug)

# full_check HOSTROOT LIBDIR HOSTLIBDIR DESC: assertions for OCI_ONLOAD=all on
# the last run.
full_check() {
  local hr=$1 L=$2 HL=$3 desc=$4
  echo "# --- $desc"
  assert_eq "[$desc] container ran (runc exit 0)" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  check_files "$hr" "$L" "$HL" "${ONLOAD_FILES[@]}" "${ZF_FILES[@]}"
  if [[ $L != "$HL" ]]; then
    check_absent "$HL" @L@/libonload.so @L@/libonload_ext.so.1 @L@/libonload_zf.so.1
    assert_eq "[$desc] nothing mounted under the host's library directory $HL" "" \
      "$(field MNT | awk -v d="$HL/" 'index($1, d) == 1 && $2 != ""')"
  fi
  local m
  for m in "$L/libonload.so" "$L/libonload_ext.so.1.2.0" "$L/libonload_zf.so" /usr/bin/onload \
           /usr/bin/onload_stackdump /usr/bin/zf_stackdump /usr/bin/zf_debug /usr/sbin/onload_tool \
           /usr/libexec/onload/profiles /etc/ld.so.preload; do
    check_mount_flags "$m" file
  done
  for m in /dev/onload /dev/onload_epoll /dev/sfc_char; do check_mount_flags "$m" dev; done
  local w
  while read -r f msg; do
    [[ -n $f ]] || continue
    assert_contains "[$desc] writing to $f fails with EROFS" "$msg" "Read-only file system"
  done < <(field WRITE)
  check_device_allowed /dev/onload "$hr/dev/onload"
  check_device_allowed /dev/onload_epoll "$hr/dev/onload_epoll"
  check_device_allowed /dev/sfc_char "$hr/dev/sfc_char"
  assert_contains "[$desc] /etc/ld.so.preload lists $L/libonload.so" "$(field PRELOAD)" "$L/libonload.so"
  assert_contains "[$desc] dyn-hello gets the SIMULATED libonload preloaded" "$(field DYN)" \
    "SIMULATED libonload: preloaded into /usr/bin/dyn-hello"
  assert_contains "[$desc] dyn-hello still runs" "$(field DYN)" "dyn-hello: running"
  assert_contains "[$desc] onload --version prints SIMULATED" "$(field VER)" "SIMULATED Onload"
  assert_contains "[$desc] container script ran to the end" "$OUT" "DONE"
}

# --- 1. OCI_ONLOAD=all, lib64 layout; the image dir must stay unchanged but for empty mountpoints.
make_bundle all --env OCI_ONLOAD=all -- "$(probe_script "$IMAGE_LIBDIR" "$SIM_LIBDIR")"
before=$(tree_snapshot "$ROOTFS")
ROOTFS_ALL=$ROOTFS
run_container
full_check "$HOST_ROOT" "$IMAGE_LIBDIR" "$SIM_LIBDIR" "all, lib64"
after=$(tree_snapshot "$ROOTFS_ALL")
removed_or_changed=$(comm -23 <(echo "$before") <(echo "$after"))
added=$(comm -13 <(echo "$before") <(echo "$after"))
assert_eq "image dir: no file removed or changed after the container is gone" "" "$removed_or_changed"
bad_added=$(awk -F'\t' '!($2 == "d" || ($2 == "f" && $5 == 0))' <<<"$added" | sed '/^$/d')
assert_eq "image dir: only empty files/dirs (mountpoints) were added" "" "$bad_added"
info "mountpoints left in the image: $(cut -f1,2 <<<"$added" | tr '\t\n' ' ,')"
assert_eq "state dir is empty after the container is deleted (poststop)" "" "$(ls -A "$STATE_DIR")"

# --- 2. read-only rootfs (root.readonly true): the hook runs before runc makes it read-only.
make_bundle allro --readonly --env OCI_ONLOAD=onload -- "$(probe_script "$IMAGE_LIBDIR" "$SIM_LIBDIR")"
run_container
echo "# --- onload, read-only rootfs"
assert_eq "[readonly rootfs] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
check_files "$HOST_ROOT" "$IMAGE_LIBDIR" "$SIM_LIBDIR" "${ONLOAD_FILES[@]}"
check_absent "$IMAGE_LIBDIR" "${ZF_FILES[@]}"
assert_contains "[readonly rootfs] dyn-hello gets libonload preloaded" "$(field DYN)" "SIMULATED libonload: preloaded"

# --- 3. OCI_ONLOAD=zf: only the TCPDirect entries.
make_bundle zf --env OCI_ONLOAD=zf -- "$(probe_script "$IMAGE_LIBDIR" "$SIM_LIBDIR")"
run_container
echo "# --- zf"
assert_eq "[zf] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
check_files "$HOST_ROOT" "$IMAGE_LIBDIR" "$SIM_LIBDIR" "${ZF_FILES[@]}"
check_absent "$IMAGE_LIBDIR" @L@/libonload.so @L@/libonload_ext.so.1.2.0 @L@/libonload_ext.so /usr/bin/onload \
  /usr/bin/onload_stackdump /usr/sbin/onload_tool /usr/libexec/onload/profiles/latency.opf
check_device_allowed /dev/sfc_char "$HOST_ROOT/dev/sfc_char"
assert_eq "[zf] /dev/onload absent" "ABSENT" "$(field DEV | awk '$1 == "/dev/onload" {print $2}')"
assert_eq "[zf] /dev/onload_epoll absent" "ABSENT" "$(field DEV | awk '$1 == "/dev/onload_epoll" {print $2}')"
assert_eq "[zf] no /etc/ld.so.preload (no preload for zf)" "no" "$(field PRELOAD_FILE)"
assert_not_contains "[zf] dyn-hello runs without preload" "$(field DYN)" "SIMULATED libonload"
assert_contains "[zf] dyn-hello runs" "$(field DYN)" "dyn-hello: running"

# --- 4. Debian library layout, same unchanged config/onload.json.
HOST_DEB=$T/host-debian
make_sim "$HOST_DEB" debian
make_bundle deb --host-root "$HOST_DEB" --env OCI_ONLOAD=all -- \
  "$(probe_script "$IMAGE_LIBDIR" /usr/lib/x86_64-linux-gnu)"
run_container
full_check "$HOST_DEB" "$IMAGE_LIBDIR" /usr/lib/x86_64-linux-gnu "all, debian layout"
assert_eq "[debian layout] nothing mounted under /usr/lib64" "" \
  "$(field MNT | awk '$1 ~ /^\/usr\/lib64\// && $2 != ""')"
check_absent /usr/lib64 @L@/libonload.so

# --- 5. The image's own /etc/ld.so.preload entry is kept.
make_bundle ownpreload --env OCI_ONLOAD=onload -- \
  'sed "s/^/PRELOAD /" /etc/ld.so.preload; /usr/bin/dyn-hello 2>&1 | sed "s/^/DYN /"'
echo "/usr/lib/image-own-preload.so" >"$ROOTFS/etc/ld.so.preload"
mkdir -p "$ROOTFS/usr/lib"
cp "$HOST_ROOT/usr/lib64/libonload_ext.so.1.2.0" "$ROOTFS/usr/lib/image-own-preload.so"
own_before=$(sha256sum <"$ROOTFS/etc/ld.so.preload")
run_container
echo "# --- image's own ld.so.preload"
assert_eq "[own preload] container ran" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[own preload] image's entry kept" "$(field PRELOAD)" "/usr/lib/image-own-preload.so"
assert_contains "[own preload] libonload entry added" "$(field PRELOAD)" "$IMAGE_LIBDIR/libonload.so"
assert_eq "[own preload] exactly two entries" 2 "$(field PRELOAD | grep -c .)"
assert_contains "[own preload] dyn-hello gets libonload" "$(field DYN)" "SIMULATED libonload: preloaded"
assert_eq "[own preload] the image's file on the host is unchanged" "$own_before" "$(sha256sum <"$ROOTFS/etc/ld.so.preload")"

it_finish
