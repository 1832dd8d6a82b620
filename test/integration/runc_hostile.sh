#!/bin/bash
# Real runc with hostile images: symlinks planted at the hook's target paths
# that point at host directories. Whether the hook starts the container or
# refuses it, host marker directories (and the SIMULATED host install) must
# be untouched and the host mount table identical. A symlinked final
# component is refused by design; a symlinked parent resolves inside the rootfs.
# Libraries land in the directory of the image's libc.so.6, which the hook
# only takes when no symlink leads there; an image whose glibc it cannot see
# gets both /usr/lib/<triplet> and /usr/lib64, so the planted links there
# go with an image whose libc the hook does not find (hide_libc).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

# Host marker dirs outside any rootfs, with files named like the targets.
MARK=$T/HOSTMARKER
MARK2=$T/HOSTMARKER2
MARK3=$T/HOSTMARKER3
MARK4=$T/HOSTMARKER4
MARK5=$T/HOSTMARKER5
mkdir -p "$MARK" "$MARK2" "$MARK3" "$MARK4" "$MARK5"
for d in "$MARK" "$MARK2" "$MARK3" "$MARK4" "$MARK5"; do
  echo "HOSTMARKER original content of $d/file" >"$d/file"
  echo "HOSTMARKER fake libonload.so" >"$d/libonload.so"
  echo "HOSTMARKER fake onload" >"$d/onload"
  echo "HOSTMARKER fake profile" >"$d/latency.opf"
  echo "/HOSTMARKER-host-preload-entry.so" >"$d/ld.so.preload"
  chmod 0644 "$d"/*
done
MARKERS=("$MARK" "$MARK2" "$MARK3" "$MARK4" "$MARK5" "$HOST_ROOT")
UP=$(printf '../%.0s' $(seq 1 24))   # more ../ than any rootfs is deep

# hide_libc: the image's libc.so.6 out of the hook's sight, so that it
# mounts libraries into /usr/lib/<triplet> and /usr/lib64 (CDI_LIBDIRS).
hide_libc() { rm -f "${ROOTFS:?}$IMAGE_LIBDIR/libc.so.6"; }

# plant NAME: applies one planted symlink to $ROOTFS.
plant() {
  case $1 in
    lib64-abs)      hide_libc; rm -rf "${ROOTFS:?}/usr/lib64"; ln -s "$MARK" "$ROOTFS/usr/lib64" ;;
    multiarch-abs)  hide_libc; rm -rf "${ROOTFS:?}/usr/lib/$(uname -m)-linux-gnu"; mkdir -p "$ROOTFS/usr/lib"
                    ln -s "$MARK" "$ROOTFS/usr/lib/$(uname -m)-linux-gnu" ;;
    usrbin-rel)     rm -rf "${ROOTFS:?}/usr/bin"; ln -s "${UP}${MARK2#/}" "$ROOTFS/usr/bin" ;;
    profiles-abs)   mkdir -p "$ROOTFS/usr/libexec/onload"; ln -s "$MARK3" "$ROOTFS/usr/libexec/onload/profiles" ;;
    libexec-rel)    ln -s "${UP}${MARK4#/}" "$ROOTFS/usr/libexec" ;;
    preload-abs)    ln -sf "$MARK/file" "$ROOTFS/etc/ld.so.preload" ;;
    etc-abs)        rm -rf "${ROOTFS:?}/etc"; ln -s "$MARK5" "$ROOTFS/etc" ;;
    sbin-dotdot)    rm -rf "${ROOTFS:?}/usr/sbin"; ln -s "../../../../../../../../../../usr/sbin" "$ROOTFS/usr/sbin" ;;
    *) die "unknown plant $1" ;;
  esac
}

PROBE="LIBS='$IMAGE_LIBDIR/libonload.so ${CDI_LIBDIRS// //libonload.so }/libonload.so'"'
for f in $LIBS /usr/bin/onload /usr/libexec/onload/profiles/latency.opf /usr/sbin/onload_tool; do
  if [ -e $f ]; then echo "SHA $f $(sha256sum < $f | cut -c1-64)"; grep -q HOSTMARKER $f && echo "LEAK $f"; fi
done
[ -e /etc/ld.so.preload ] && sed "s/^/PRELOAD /" /etc/ld.so.preload
echo DONE'

# hostile CASE...: one container with the given plants.
hostile() {
  local name=$*
  make_bundle "hostile" --env OCI_ONLOAD=all -- "$PROBE"
  local p
  for p in "$@"; do plant "$p"; done
  local m_before mi_before m_after mi_after
  m_before=$(marker_snapshot "${MARKERS[@]}")
  mi_before=$(host_mountinfo)
  run_container
  m_after=$(marker_snapshot "${MARKERS[@]}")
  mi_after=$(host_mountinfo)
  echo "# --- hostile image: $name"
  if [[ $RC -eq 0 ]]; then
    info "container STARTED (runc exit 0)"
  else
    info "container REFUSED (runc exit $RC): $(grep -o 'stderr: .*' <<<"$ERR" | head -c 300)"
  fi
  assert_eq "[$name] host marker dirs and the host install are untouched" "$m_before" "$m_after"
  assert_eq "[$name] host mountinfo identical" "$mi_before" "$mi_after"
  assert_not_contains "[$name] no host marker content visible inside the container" "$OUT" "HOSTMARKER"
  assert_eq "[$name] no host file mounted into the container" "" "$(field LEAK)"
  assert_not_contains "[$name] runc error does not carry host marker content" "$ERR" "HOSTMARKER fake"
  assert_eq "[$name] nothing left in the state dir" "" "$(ls -A "$STATE_DIR")"
  if [[ $RC -eq 0 ]]; then
    assert_contains "[$name] started: probe ran" "$OUT" "DONE"
  fi
}

# Each plant alone, then all together.
hostile lib64-abs
if [[ $RC -eq 0 ]]; then
  # Parent symlink resolved inside the rootfs: the library must be the host's
  # SIMULATED one, reached through the in-rootfs path.
  assert_eq "[lib64-abs] started: /usr/lib64/libonload.so is the simulated host library" \
    "$(host_sha "$HOST_ROOT/usr/lib64/libonload.so")" "$(field SHA | awk '$1 == "/usr/lib64/libonload.so" {print $2}')"
fi
# The attack reached the directory the hook mounts into (not a directory it
# no longer uses): the refusal names the planted link.
assert_contains "[lib64-abs] refused at the planted /usr/lib64" "$ERR" \
  "refusing to create through it: /usr/lib64"
hostile multiarch-abs
assert_contains "[multiarch-abs] refused at the planted /usr/lib/<triplet>" "$ERR" \
  "refusing to create through it: /usr/lib/$(uname -m)-linux-gnu"
hostile usrbin-rel
hostile profiles-abs
if [[ $RC -eq 0 ]]; then
  nok "[profiles-abs] a symlinked final component (/usr/libexec/onload/profiles) must be refused"
else
  ok "[profiles-abs] symlinked final component refused"
fi
hostile libexec-rel
hostile preload-abs
if [[ $RC -eq 0 ]]; then
  nok "[preload-abs] a symlinked /etc/ld.so.preload (final component) must be refused"
else
  ok "[preload-abs] symlinked /etc/ld.so.preload refused"
fi
hostile etc-abs
check_not "[sanity] host has no /usr/sbin/onload_tool before" test -e /usr/sbin/onload_tool
hostile sbin-dotdot
check_not "[sbin-dotdot] nothing created at host /usr/sbin/onload_tool" test -e /usr/sbin/onload_tool
hostile lib64-abs usrbin-rel profiles-abs preload-abs
hostile multiarch-abs lib64-abs

# --- Exec bait: the hook must execute nothing from the image (no ldconfig).
make_bundle bait --env OCI_ONLOAD=all -- 'echo RAN'
for p in sbin/ldconfig usr/sbin/ldconfig bin/ldconfig usr/bin/ldconfig sbin/ldconfig.real; do
  mkdir -p "$(dirname "$ROOTFS/$p")"
  printf '#!/bin/sh\necho "bait %s ran" >> /BAIT-RAN\necho "bait %s ran" >> %s/BAIT-RAN-HOST\n' "$p" "$p" "$T" >"$ROOTFS/$p"
  chmod 0755 "$ROOTFS/$p"
done
run_container
echo "# --- exec bait (planted ldconfig)"
assert_eq "[exec bait] container ran" 0 "$RC"
check_not "[exec bait] no planted program ran inside the rootfs" test -e "$ROOTFS/BAIT-RAN"
check_not "[exec bait] no planted program ran on the host" test -e "$T/BAIT-RAN-HOST"

# --- Symlinked parents whose targets exist INSIDE the rootfs are followed
# inside the rootfs (merged-/usr images): /usr/lib64 -> <abs path that also
# exists in the rootfs>, /sbin -> usr/sbin with the host's onload_tool in /sbin.
# The image's glibc sits behind a link too (/lib/<triplet> -> the same
# path), which the hook does not take for its libc directory: it mounts into
# both /usr/lib/<triplet> and /usr/lib64, the latter through the link.
HOST_SBIN=$T/host-sbin
cp -a "$HOST_ROOT" "$HOST_SBIN"
mkdir -p "$HOST_SBIN/sbin"
mv "$HOST_SBIN/usr/sbin/onload_tool" "$HOST_SBIN/sbin/onload_tool"
make_bundle inroot --host-root "$HOST_SBIN" --env OCI_ONLOAD=onload -- '
for f in /usr/lib64/libonload.so /sbin/onload_tool; do
  [ -e $f ] && echo "SHA $f $(sha256sum < $f | cut -c1-64)"; grep -q HOSTMARKER $f && echo "LEAK $f"
done
/usr/bin/dyn-hello 2>&1 | sed "s/^/DYN /"
sed "s/^/PRELOAD /" /etc/ld.so.preload
echo DONE'
rm -rf "${ROOTFS:?}/usr/lib64" "$ROOTFS/sbin"
mkdir -p "$ROOTFS$MARK" "$ROOTFS/usr/sbin"
ln -s "$MARK" "$ROOTFS/usr/lib64"     # absolute, host-looking, but exists in the rootfs
ln -s usr/sbin "$ROOTFS/sbin"         # relative, merged-/usr style
cp -a "$ROOTFS$IMAGE_LIBDIR/." "$ROOTFS$MARK/"
rm -rf "${ROOTFS:?}$IMAGE_LIBDIR"
ln -s "$MARK" "$ROOTFS$IMAGE_LIBDIR"  # the image's glibc, behind a link
m_before=$(marker_snapshot "${MARKERS[@]}" "$HOST_SBIN")
mi_before=$(host_mountinfo)
run_container
echo "# --- in-rootfs symlinked parents (/usr/lib64 -> $MARK present in rootfs, /sbin -> usr/sbin)"
assert_eq "[in-rootfs parents] container started" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[in-rootfs parents] /usr/lib64/libonload.so is the host's simulated library" \
  "$(host_sha "$HOST_SBIN/usr/lib64/libonload.so")" "$(field SHA | awk '$1 == "/usr/lib64/libonload.so" {print $2}')"
assert_eq "[in-rootfs parents] /sbin/onload_tool is the host's" \
  "$(host_sha "$HOST_SBIN/sbin/onload_tool")" "$(field SHA | awk '$1 == "/sbin/onload_tool" {print $2}')"
assert_contains "[in-rootfs parents] preload works through the symlinked dir" "$(field DYN)" "SIMULATED libonload: preloaded"
assert_eq "[in-rootfs parents] no host marker file mounted" "" "$(field LEAK)"
assert_eq "[in-rootfs parents] host markers untouched" "$m_before" "$(marker_snapshot "${MARKERS[@]}" "$HOST_SBIN")"
assert_eq "[in-rootfs parents] host mountinfo identical" "$mi_before" "$(host_mountinfo)"
check "[in-rootfs parents] mountpoint created inside the rootfs copy of the marker path" test -e "$ROOTFS$MARK/libonload.so"
check "[in-rootfs parents] mountpoint created at rootfs/usr/sbin/onload_tool" test -e "$ROOTFS/usr/sbin/onload_tool"

it_finish
