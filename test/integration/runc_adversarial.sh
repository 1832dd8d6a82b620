#!/bin/bash
# Adversarial rootfs suite: hostile images run under real runc with the hook
# activated (OCI_ONLOAD=all, SIMULATED host install). Every case plants one
# trap in a fresh rootfs copy and states what must happen: STARTED (and the
# container gets exactly the SIMULATED Onload) or REFUSED (runc fails with
# the hook's one line naming the path). In every case, whatever the outcome:
#   - host marker directories (targets of the planted links, full of files
#     named like the hook's targets) and the SIMULATED install are
#     byte-for-byte unchanged (marker_snapshot: type, size, mode, mtime,
#     ctime, sha256), and so are the real host paths the targets mirror;
#   - the host mount table is identical before and after;
#   - no marker content is visible inside the container or in runc's error,
#     and no marker file is mounted into it;
#   - the hook's state dir is empty, and runc returns within 20 s (no hang).
# Traps: symlink loops and long chains (39/40 resolve, 41+ refused), absolute
# and relative escapes at every depth of the targets, magic /proc links,
# FIFOs, sockets, devices, directories and files in the wrong places,
# /etc/ld.so.preload planted in every shape, dangling links, read-only
# rootfs, a planted /dev/onload and /dev, shared mount propagation, and a
# container in the host's mount namespace (hook driven directly).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
SECONDS=0

# --- helper program (plants sockets, watches for open()) ------------------------
ADV_TOOL=${OCID_ADV_TOOL:-}
if [[ -z $ADV_TOOL ]]; then
  ADV_TOOL=$T/adv_tool
  cc -O2 -o "$ADV_TOOL" "$IT_LIB_DIR/adv_tool.c" || die "cannot build adv_tool.c"
fi
[[ -x $ADV_TOOL ]] || die "OCID_ADV_TOOL=$ADV_TOOL is not executable"

# --- host markers ------------------------------------------------------------------
# Every marker file holds TOKEN: seeing TOKEN anywhere in a container or an
# error means host content got in. Each marker mirrors the targets' paths
# (M/usr/lib64/libonload.so, M/usr/libexec/onload/profiles/latency.opf,
# M/etc/ld.so.preload, M/dev/onload...), and a link planted at path P points
# at M/P: a hook that followed it on the host would find an existing file to
# mount over, or a directory to create in.
TOKEN="HOSTMARKER-SECRET-$$-$RANDOM$RANDOM"
MA=$T/HOSTMARKER-abs   # reached by absolute links
MR=$T/HOSTMARKER-rel   # reached by relative links
make_marker() {
  local m=$1 f
  mkdir -p "$m"/usr/{lib64,bin,sbin,libexec/onload/profiles} "$m/etc" "$m/dev"
  for f in usr/lib64/libonload.so usr/lib64/libonload_ext.so.1 usr/bin/onload usr/bin/onload_stackdump \
           usr/sbin/onload_tool usr/libexec/onload/profiles/latency.opf etc/ld.so.preload dev/onload; do
    echo "/$TOKEN.so $m/$f" >"$m/$f"
    chmod 0644 "$m/$f"
  done
}
make_marker "$MA"
make_marker "$MR"
MARKERS=("$MA" "$MR" "$HOST_ROOT" "$CONF_DIR")
# The real host paths the targets mirror: nothing may appear or change there.
host_real() {
  ls -ld --time-style=+%s /usr/lib64 /usr/lib64/libonload* /usr/bin/onload /usr/bin/onload_stackdump \
    /usr/bin/zf_stackdump /usr/bin/zf_debug /usr/sbin/onload_tool /sbin/onload_tool /usr/libexec/onload \
    /etc/ld.so.preload /dev/onload /dev/onload_epoll /dev/sfc_char /nonexistent /c /devreal \
    /HOSTMARKER-abs /HOSTMARKER-rel 2>&1 | sort
}
# Dirs outside $T that a broken hook could create: removed at exit if it did.
it_track_new_dirs /nonexistent /c /devreal /HOSTMARKER-abs /HOSTMARKER-rel

# --- probes --------------------------------------------------------------------------
# LEAK: a regular file holding TOKEN; MARKMOUNT: a mount whose source is a
# marker; HOSTMNT: each mount from the SIMULATED install (target, options).
LEAK_CHECK="find / \\( -path /proc -o -path /sys \\) -prune -o -type f -print 2>/dev/null \
  | xargs grep -l '$TOKEN' 2>/dev/null | sed 's/^/LEAK /'
awk '\$4 ~ /HOSTMARKER/ {print \"MARKMOUNT \" \$4 \" \" \$5}' /proc/self/mountinfo
awk -v h='$HOST_ROOT/' 'index(\$4, h) == 1 {print \"HOSTMNT \" \$5 \" \" \$6}' /proc/self/mountinfo
echo \"ROOTOPTS \$(awk '\$2 == \"/\" {print \$4}' /proc/mounts)\"
"
PROBE_REFUSED="${LEAK_CHECK}echo DONE"

# --- where the libraries go -----------------------------------------------------------
# The hook mounts libraries into the directory of the image's libc.so.6,
# which it takes only when no symlink leads there: a link planted there
# makes it look elsewhere rather than mount through it. So for the links
# planted at library directories to aim where the hook mounts, every case
# runs by default with the image's glibc behind a link (hide_glibc: the
# loader still finds it, the hook does not), and the hook mounts into both
# /usr/lib/<triplet> and /usr/lib64 ($CDI_LIBDIRS), with its one warning
# saying the image has no glibc it can see. GLIBC_SEEN=1 cases keep the
# image as it is: libraries in $IMAGE_LIBDIR.
NO_GLIBC_WARNING="the image has no glibc"
hide_glibc() {
  mkdir -p "$ROOTFS/opt"
  mv "$ROOTFS$IMAGE_LIBDIR" "$ROOTFS/opt/glibc-behind-a-link"
  ln -s "$(realpath -m --relative-to="$(dirname "$ROOTFS$IMAGE_LIBDIR")" "$ROOTFS/opt/glibc-behind-a-link")" \
    "$ROOTFS$IMAGE_LIBDIR"
}
adv_libdirs() { if [[ ${GLIBC_SEEN:-0} == 1 ]]; then echo "$IMAGE_LIBDIR"; else echo "$CDI_LIBDIRS"; fi; }
probe_started() { echo "${LEAK_CHECK}$(onload_probe "$(adv_libdirs)")"; }

# --- what a started container must have -----------------------------------------------
BASE_HOSTMNT=""   # set by the baseline case
# check_sim: every Onload file is the SIMULATED host's, libonload is
# preloaded, the devices are the host's char devices, and the mounts from
# the host install are all there and read-only. Unlike expect_onload it
# does not require the mounts at the literal paths (a symlinked parent
# inside the rootfs puts them elsewhere).
check_sim() {
  local f got bad="" d want n hf base
  for f in $(probe_files onload "$(adv_libdirs)") $(probe_files zf "$(adv_libdirs)"); do
    got=$(field SHA | awk -v f="$f" '$1 == f {print $2}')
    hf=$HOST_ROOT$f
    [[ ${f##*/} == lib*.so* ]] && hf=$HOST_ROOT$SIM_LIBDIR/${f##*/}
    [[ $got == "$(host_sha "$hf")" ]] || bad+=" $f=${got:-none}"
  done
  assert_eq "[$CASE] every Onload file in the container is the SIMULATED host's" "" "$bad"
  assert_contains "[$CASE] dyn-hello gets the SIMULATED libonload preloaded" "$(field DYN)" \
    "SIMULATED libonload: preloaded into /usr/bin/dyn-hello"
  bad=""
  for d in onload onload_epoll sfc_char; do
    want="character special file $(printf '%x:%x' "0x$(stat -c %t "$HOST_ROOT/dev/$d")" "0x$(stat -c %T "$HOST_ROOT/dev/$d")")"
    got=$(field DEV | awk -v d="/dev/$d" '$1 == d {$1 = ""; sub(/^ /, ""); print}')
    [[ $got == "$want" ]] || bad+=" /dev/$d=${got:-none}"
  done
  assert_eq "[$CASE] /dev/onload, onload_epoll, sfc_char are the host's char devices" "" "$bad"
  n=$(field HOSTMNT | wc -l)
  base=$BASE_HOSTMNT
  [[ ${GLIBC_SEEN:-0} == 1 ]] && base=$BASE_HOSTMNT_SEEN
  if [[ -n $base ]]; then
    assert_eq "[$CASE] as many mounts from the host install as a plain container ($base)" "$base" "$n"
  fi
  assert_eq "[$CASE] every mount from the host install is read-only" "" \
    "$(field HOSTMNT | awk '$2 !~ /^ro(,|$)/')"
}
# check_full: check_sim, plus expect_onload (mounts at the literal paths),
# summarised in one line.
check_full() {
  local f=$IT_FAIL p=$IT_PASS
  check_sim
  expect_onload all "$CASE" "$HOST_ROOT" "$(adv_libdirs)" hook >"$T/logs/expect.$CASE_NO" 2>&1
  if ((IT_FAIL == f)); then
    echo "ok   - [$CASE] expect_onload all: $((IT_PASS - p)) checks passed"
  else
    grep '^FAIL' "$T/logs/expect.$CASE_NO"
  fi
}

# --- the case runner -----------------------------------------------------------------
# Per case, define (all optional; reset after each case):
#   plant      plants the trap in $ROOTFS (after make_bundle)
#   pre_run    host-side setup right before the snapshots (e.g. a mount)
#   post_case  extra assertions, after the generic ones (and teardown)
#   WATCH=()   planted paths the hook must never open() (inotify IN_OPEN);
#              only for REFUSED cases (no container process runs)
#   STARTED_CHECK  check_full (default) or check_sim
# adv NAME STARTED [make_bundle options...]
# adv NAME REFUSED LINE [make_bundle options...]
#   LINE: the hook's line after "container ID: refused: ", exactly, up to its end;
#   "re:ERE" for a regular expression instead.
CASE_NO=0
RESULTS=()
reset_case() {
  plant() { :; }
  pre_run() { :; }
  post_case() { :; }
  WATCH=()
  STARTED_CHECK=check_full
  GLIBC_SEEN=0
}
reset_case
adv() {
  CASE=$1
  local expect=$2 line=""
  shift 2
  if [[ $expect == REFUSED ]]; then line=$1; shift; fi
  CASE_NO=$((CASE_NO + 1))
  echo "# --- case $CASE_NO: $CASE (expected: $expect${line:+: $line})"
  local probe=$PROBE_REFUSED
  [[ $expect == STARTED ]] && probe=$(probe_started)
  make_bundle "adv$CASE_NO" --env OCI_ONLOAD=all "$@" -- "$probe"
  [[ $GLIBC_SEEN == 1 ]] || hide_glibc
  plant
  pre_run
  local wpid="" wlog=$T/logs/watch.$CASE_NO
  if [[ ${#WATCH[@]} -gt 0 ]]; then
    "$ADV_TOOL" watch "${WATCH[@]}" >"$wlog" 2>&1 </dev/null &
    wpid=$!
    for _ in $(seq 1 50); do grep -q READY "$wlog" && break; sleep 0.05; done
    grep -q READY "$wlog" || nok "[$CASE] open watch did not start: $(cat "$wlog")"
  fi
  local m0 mi0 h0 t0 dt
  m0=$(marker_snapshot "${MARKERS[@]}")
  mi0=$(host_mountinfo)
  h0=$(host_real)
  t0=$EPOCHREALTIME
  run_container
  dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f", b - a}')
  if [[ -n $wpid ]]; then
    sleep 0.1
    kill "$wpid" 2>/dev/null
    wait "$wpid" 2>/dev/null
    assert_eq "[$CASE] the hook never open()ed the planted object(s) ${WATCH[*]#"$ROOTFS"}" \
      "" "$(grep '^OPEN' "$wlog" | sed "s|$ROOTFS||")"
  fi
  if [[ $RC -eq 0 ]]; then info "STARTED in ${dt}s"; else info "REFUSED in ${dt}s (runc exit $RC): $(grep -o 'stderr: .*' <<<"$ERR" | head -c 400)"; fi
  assert_eq "[$CASE] host marker dirs, the SIMULATED install and the config dir are byte-for-byte unchanged" \
    "$m0" "$(marker_snapshot "${MARKERS[@]}")"
  assert_eq "[$CASE] host mountinfo identical" "$mi0" "$(host_mountinfo)"
  assert_eq "[$CASE] real host paths (/usr/lib64, /usr/bin/onload, /etc/ld.so.preload, /dev/onload...) unchanged" \
    "$h0" "$(host_real)"
  assert_not_contains "[$CASE] no host marker content in the container's output" "$OUT" "$TOKEN"
  assert_not_contains "[$CASE] no host marker content in runc's error" "$ERR" "$TOKEN"
  assert_eq "[$CASE] no marker file visible or mounted in the container" "" "$(field LEAK; field MARKMOUNT)"
  assert_state_dir_empty "[$CASE]"
  check "[$CASE] runc returned within 20 s (took ${dt}s; no hang)" awk -v d="$dt" 'BEGIN {exit !(d < 20)}'
  if [[ $expect == STARTED ]]; then
    assert_eq "[$CASE] STARTED (runc exit 0)" 0 "$RC"
    if [[ $RC -eq 0 ]]; then
      assert_contains "[$CASE] the probe ran to the end" "$OUT" "DONE"
      "$STARTED_CHECK"
    else
      dump_run
    fi
  else
    check_not "[$CASE] REFUSED (runc exit non-zero)" test "$RC" -eq 0
    local hook_lines warned=0
    hook_lines=$(grep -o 'oci-decorator: ' <<<"$ERR" | wc -l)
    # Besides its refusal, the warning that the image's glibc is hidden
    # (hide_glibc), and nothing else.
    [[ $GLIBC_SEEN == 1 ]] || warned=$(grep -o "oci-decorator: warning: container $CID: inventory [^ ]*onload.json: $NO_GLIBC_WARNING" <<<"$ERR" | wc -l)
    assert_eq "[$CASE] runc's error carries exactly one line from the hook (besides $warned no-glibc warning)" \
      1 "$((hook_lines - warned))"
    if [[ $line == re:* ]]; then
      assert_match "[$CASE] the hook's line: ${line#re:}" "$ERR" \
        "oci-decorator: error: container $CID: refused: ${line#re:}\\\\n\""
    else
      assert_contains "[$CASE] the hook's line: $line" "$ERR" \
        "oci-decorator: error: container $CID: refused: $line\\n\""
    fi
  fi
  post_case
  RESULTS+=("$(printf '%-34s expected %-8s got %s' "$CASE" "$expect" "$([[ $RC -eq 0 ]] && echo STARTED || echo REFUSED)")")
  reset_case
}

# Link helpers (paths inside the rootfs; whatever is there is replaced).
abs_link() {  # LINK TARGET
  rm -rf "${ROOTFS:?}$1"
  mkdir -p "$(dirname "$ROOTFS$1")"
  ln -s "$2" "$ROOTFS$1"
}
# A relative link with the exact ../ path from the link's directory ON THE
# HOST to TARGET: what a hook resolving on the host would follow. Inside the
# rootfs the ../ stop at its root.
rel_link() {  # LINK HOST_TARGET
  rm -rf "${ROOTFS:?}$1"
  mkdir -p "$(dirname "$ROOTFS$1")"
  ln -s "$(realpath -m --relative-to="$(dirname "$ROOTFS$1")" "$2")" "$ROOTFS$1"
}
# chain LINK K [END]: LINK plus K-1 more links in /c (alternately relative
# and absolute), K symlinks in all, ending at /c/real (created as END: dir
# or file).
chain() {
  local link=$1 k=$2 end=${3:-dir} i
  rm -rf "${ROOTFS:?}$link" "$ROOTFS/c"
  mkdir -p "$ROOTFS/c" "$(dirname "$ROOTFS$link")"
  if [[ $end == dir ]]; then mkdir "$ROOTFS/c/real"; else echo image-file >"$ROOTFS/c/real"; fi
  if ((k == 1)); then ln -s /c/real "$ROOTFS$link"; return; fi
  ln -s /c/1 "$ROOTFS$link"
  for ((i = 1; i < k - 1; i++)); do
    if ((i % 2)); then ln -s "$((i + 1))" "$ROOTFS/c/$i"; else ln -s "/c/$((i + 1))" "$ROOTFS/c/$i"; fi
  done
  ln -s real "$ROOTFS/c/$((k - 1))"
}
NO_DEV_TMPFS='.mounts |= map(select(.destination != "/dev"))'
SYMLINK_PARENT="the image has a symlink here whose target does not exist inside the rootfs; refusing to create through it"
SYMLINK_LEAF="refusing to mount over a symlink in the image"
PRELOAD_SYMLINK="refusing: the image's file is a symlink: /etc/ld.so.preload"
preload_not_reg() { echo "refusing: the image's file is a $1, not a regular file: /etc/ld.so.preload"; }
ELOOP="Too many levels of symbolic links"

# =====================================================================================
echo "# === baseline: a plain image"
adv baseline STARTED
BASE_HOSTMNT=$(field HOSTMNT | wc -l)
info "a plain container gets $BASE_HOSTMNT mounts from the host install"
check "[baseline] the host install gives at least 16 mounts" test "$BASE_HOSTMNT" -ge 16
GLIBC_SEEN=1
adv "baseline, the image's glibc seen" STARTED
BASE_HOSTMNT_SEEN=$(field HOSTMNT | wc -l)
info "with its glibc seen, $BASE_HOSTMNT_SEEN mounts (libraries in $IMAGE_LIBDIR only)"
check "[baseline, glibc seen] fewer mounts: one library directory, not two" \
  test "$BASE_HOSTMNT_SEEN" -lt "$BASE_HOSTMNT"

# =====================================================================================
echo "# === escapes at every depth of the targets: absolute link to a host marker, relative ../ link to one"
# parent: a directory on the way to a target; leaf: the target itself;
# inside: an entry below a mounted directory (hidden by the mount: harmless).
for spec in /usr:parent /usr/lib64:parent /usr/lib64/libonload.so:leaf \
            /usr/libexec:parent /usr/libexec/onload:parent /usr/libexec/onload/profiles:leaf \
            /usr/libexec/onload/profiles/latency.opf:inside \
            /usr/bin:parent /usr/bin/onload:leaf /usr/sbin:parent /usr/sbin/onload_tool:leaf \
            /etc:parent /etc/ld.so.preload:preload; do
  P=${spec%%:*} KIND=${spec#*:}
  for how in abs rel; do
    M=$MA; [[ $how == rel ]] && M=$MR
    TGT=$M$P
    if [[ $how == abs ]]; then eval "plant() { abs_link '$P' '$TGT'; }"; else eval "plant() { rel_link '$P' '$TGT'; }"; fi
    case $KIND in
      parent)  adv "$how-escape $P" REFUSED "$SYMLINK_PARENT: $P" ;;
      leaf)    adv "$how-escape $P" REFUSED "$SYMLINK_LEAF: $P" ;;
      preload) adv "$how-escape $P" REFUSED "$PRELOAD_SYMLINK" ;;
      inside)  STARTED_CHECK=check_full; adv "$how-escape $P" STARTED ;;
    esac
  done
done

# The same relative link text, when its target also exists inside the
# rootfs, resolves there: the hook creates the mountpoint in the rootfs.
TWIN=/HOSTMARKER-rel/usr/libexec/onload
plant() { rel_link /usr/libexec/onload "$MR/usr/libexec/onload"; mkdir -p "$ROOTFS$TWIN"; }
post_case() {
  check "[$CASE] mountpoint created inside the rootfs (rootfs$TWIN/profiles)" test -d "$ROOTFS$TWIN/profiles"
  assert_eq "[$CASE] the container's /usr/libexec/onload/profiles is mounted at $TWIN/profiles" \
    1 "$(field HOSTMNT | awk -v t="$TWIN/profiles" '$1 == t' | wc -l)"
}
STARTED_CHECK=check_sim
adv "rel-link resolving inside the rootfs /usr/libexec/onload" STARTED

# =====================================================================================
echo "# === magic links: /proc/1/root is runc init's root (the HOST's / before pivot_root)"
plant() { abs_link /usr/lib64 "/proc/1/root$MA/usr/lib64"; }
adv "magic /usr/lib64 -> /proc/1/root/<marker>" REFUSED "cannot open directory in rootfs: /usr/lib64: $ELOOP"
plant() { mv "$ROOTFS/etc" "$ROOTFS/etc.real"; abs_link /etc "/proc/1/root$MA/etc"; }
adv "magic /etc -> /proc/1/root/<marker>" REFUSED "cannot resolve inside root: /etc: $ELOOP"
plant() { abs_link /usr/bin/onload "/proc/1/root$MA/usr/bin/onload"; }
adv "magic /usr/bin/onload -> /proc/1/root/<marker>/onload" REFUSED "$SYMLINK_LEAF: /usr/bin/onload"

# =====================================================================================
echo "# === symlink loops and long chains"
plant() { abs_link /usr/lib64 /usr/lib64; }
adv "self loop /usr/lib64 (parent)" REFUSED "cannot open directory in rootfs: /usr/lib64: $ELOOP"
plant() { abs_link /usr/libexec libexec.b; abs_link /usr/libexec.b libexec; }
adv "a<->b loop /usr/libexec (parent)" REFUSED "cannot open directory in rootfs: /usr/libexec/onload: $ELOOP"
plant() { mv "$ROOTFS/etc" "$ROOTFS/etc.real"; abs_link /etc /etc2; abs_link /etc2 /etc; }
adv "a<->b loop /etc (preload parent)" REFUSED "cannot resolve inside root: /etc: $ELOOP"
plant() { abs_link /usr/bin/onload onload; }
adv "self loop /usr/bin/onload (leaf)" REFUSED "$SYMLINK_LEAF: /usr/bin/onload"
plant() { abs_link /usr/sbin/onload_tool /usr/sbin/onload_tool.b; abs_link /usr/sbin/onload_tool.b /usr/sbin/onload_tool; }
adv "a<->b loop /usr/sbin/onload_tool (leaf)" REFUSED "$SYMLINK_LEAF: /usr/sbin/onload_tool"
plant() { abs_link /etc/ld.so.preload ld.so.preload; }
adv "self loop /etc/ld.so.preload" REFUSED "$PRELOAD_SYMLINK"
STARTED_CHECK=check_sim
plant() { chain /usr/lib64 39; }
adv "chain of 39 links /usr/lib64 (parent)" STARTED
STARTED_CHECK=check_sim
plant() { chain /usr/lib64 40; }
adv "chain of 40 links /usr/lib64 (kernel limit)" STARTED
plant() { chain /usr/lib64 41; }
adv "chain of 41 links /usr/lib64 (parent)" REFUSED "cannot open directory in rootfs: /usr/lib64: $ELOOP"
plant() { chain /usr/libexec/onload 60; }
adv "chain of 60 links /usr/libexec/onload" REFUSED "cannot open directory in rootfs: /usr/libexec/onload: $ELOOP"
STARTED_CHECK=check_sim
plant() { chain /etc 39; rmdir "$ROOTFS/c/real"; cp -a "$BASE_ROOTFS/etc" "$ROOTFS/c/real"; }
adv "chain of 39 links /etc (preload parent)" STARTED
plant() { chain /usr/bin/onload 39 file; }
adv "chain of 39 links /usr/bin/onload (leaf)" REFUSED "$SYMLINK_LEAF: /usr/bin/onload"

# =====================================================================================
echo "# === dangling symlinks"
plant() { abs_link /usr/bin/onload /nonexistent/onload; }
adv "dangling leaf /usr/bin/onload" REFUSED "$SYMLINK_LEAF: /usr/bin/onload"
plant() { abs_link /usr/lib64 /nonexistent/lib64; }
post_case() {
  check_not "[$CASE] nothing created at the link's target inside the rootfs" test -e "$ROOTFS/nonexistent"
  check_not "[$CASE] nothing created at the link's target on the host" test -e /nonexistent
}
adv "dangling parent /usr/lib64 -> /nonexistent/lib64" REFUSED "$SYMLINK_PARENT: /usr/lib64"
plant() { abs_link /usr/libexec/onload ../nowhere/onload; }
post_case() { check_not "[$CASE] nothing created at the link's target (rootfs/usr/nowhere)" test -e "$ROOTFS/usr/nowhere"; }
adv "dangling parent /usr/libexec/onload -> ../nowhere/onload" REFUSED "$SYMLINK_PARENT: /usr/libexec/onload"
plant() { abs_link /etc/ld.so.preload /nonexistent/ld.so.preload; }
adv "dangling /etc/ld.so.preload" REFUSED "$PRELOAD_SYMLINK"

# =====================================================================================
echo "# === wrong types at the targets (what config/onload.json mounts: files, one directory, devices)"
plant() { mkdir -p "$ROOTFS/usr/bin"; mkfifo "$ROOTFS/usr/bin/onload"; WATCH=("$ROOTFS/usr/bin/onload"); }
adv "FIFO at /usr/bin/onload (file)" REFUSED "refusing to mount: the image has a FIFO where a file is needed: /usr/bin/onload"
plant() { mkdir -p "$ROOTFS/usr/lib64"; "$ADV_TOOL" mksock "$ROOTFS/usr/lib64/libonload.so"; }
adv "socket at /usr/lib64/libonload.so (file)" REFUSED "refusing to mount: the image has a socket where a file is needed: /usr/lib64/libonload.so"
plant() { mkdir -p "$ROOTFS/usr/sbin"; mknod "$ROOTFS/usr/sbin/onload_tool" c 1 3; WATCH=("$ROOTFS/usr/sbin/onload_tool"); }
adv "char device 1:3 at /usr/sbin/onload_tool (file)" REFUSED "refusing to mount: the image has a character device where a file is needed: /usr/sbin/onload_tool"
plant() { mkdir -p "$ROOTFS/usr/bin"; mknod "$ROOTFS/usr/bin/onload_stackdump" b 7 0; WATCH=("$ROOTFS/usr/bin/onload_stackdump"); }
adv "block device 7:0 at /usr/bin/onload_stackdump (file)" REFUSED "refusing to mount: the image has a block device where a file is needed: /usr/bin/onload_stackdump"
plant() { mkdir -p "$ROOTFS/usr/lib64/libonload.so"; echo image >"$ROOTFS/usr/lib64/libonload.so/x"; }
adv "directory at /usr/lib64/libonload.so (file)" REFUSED "refusing to mount: the image has a directory where a file is needed: /usr/lib64/libonload.so"
# The image's glibc seen: the libraries go into its libc directory, a real
# directory of the image; what it plants at the files there is refused.
for how in abs rel; do
  M=$MA; [[ $how == rel ]] && M=$MR
  if [[ $how == abs ]]; then
    plant() { abs_link "$IMAGE_LIBDIR/libonload.so" "$MA/usr/lib64/libonload.so"; }
  else
    plant() { rel_link "$IMAGE_LIBDIR/libonload.so" "$MR/usr/lib64/libonload.so"; }
  fi
  GLIBC_SEEN=1
  adv "$how-escape $IMAGE_LIBDIR/libonload.so (glibc seen)" REFUSED "$SYMLINK_LEAF: $IMAGE_LIBDIR/libonload.so"
done
plant() { "$ADV_TOOL" mksock "$ROOTFS$IMAGE_LIBDIR/libonload_ext.so.1"; }
GLIBC_SEEN=1
adv "socket at $IMAGE_LIBDIR/libonload_ext.so.1 (glibc seen)" REFUSED \
  "refusing to mount: the image has a socket where a file is needed: $IMAGE_LIBDIR/libonload_ext.so.1"
plant() { mkfifo "$ROOTFS$IMAGE_LIBDIR/libonload_zf.so.1"; WATCH=("$ROOTFS$IMAGE_LIBDIR/libonload_zf.so.1"); }
GLIBC_SEEN=1
adv "FIFO at $IMAGE_LIBDIR/libonload_zf.so.1 (glibc seen)" REFUSED \
  "refusing to mount: the image has a FIFO where a file is needed: $IMAGE_LIBDIR/libonload_zf.so.1"
plant() { mkdir -p "$ROOTFS/usr/libexec/onload"; echo image >"$ROOTFS/usr/libexec/onload/profiles"; }
adv "file at /usr/libexec/onload/profiles (directory)" REFUSED "refusing to mount: the image has a regular file where a directory is needed: /usr/libexec/onload/profiles"
plant() { mkdir -p "$ROOTFS/usr/libexec/onload"; mkfifo "$ROOTFS/usr/libexec/onload/profiles"; WATCH=("$ROOTFS/usr/libexec/onload/profiles"); }
adv "FIFO at /usr/libexec/onload/profiles (directory)" REFUSED "refusing to mount: the image has a FIFO where a directory is needed: /usr/libexec/onload/profiles"
plant() { mkdir -p "$ROOTFS/usr/libexec"; echo image >"$ROOTFS/usr/libexec/onload"; }
adv "file at /usr/libexec/onload (parent)" REFUSED "cannot open directory in rootfs: /usr/libexec/onload: Not a directory"
plant() { mkfifo "$ROOTFS/usr/lib64"; WATCH=("$ROOTFS/usr/lib64"); }
adv "FIFO at /usr/lib64 (parent)" REFUSED "cannot open directory in rootfs: /usr/lib64: Not a directory"

# =====================================================================================
echo "# === /etc/ld.so.preload planted (the one file the hook reads from the image)"
plant() { echo /lib/image-own.so >"$ROOTFS/etc/ld.so.preload.real"; abs_link /etc/ld.so.preload ld.so.preload.real; }
adv "/etc/ld.so.preload -> a file inside the rootfs" REFUSED "$PRELOAD_SYMLINK"
# The hook reads the image's file, so it opens it: it must check the type
# BEFORE opening. open() on a FIFO or a device node taken from the image is
# done as host root, outside the container's device cgroup (a watchdog node
# arms the host watchdog, a tape rewinds, a tty raises DTR...).
plant() { mkfifo "$ROOTFS/etc/ld.so.preload"; WATCH=("$ROOTFS/etc/ld.so.preload"); }
adv "FIFO at /etc/ld.so.preload" REFUSED "$(preload_not_reg FIFO)"
plant() { mknod "$ROOTFS/etc/ld.so.preload" c 1 3; WATCH=("$ROOTFS/etc/ld.so.preload"); }
adv "char device 1:3 at /etc/ld.so.preload" REFUSED "$(preload_not_reg "character device")"
plant() { "$ADV_TOOL" mksock "$ROOTFS/etc/ld.so.preload"; }
adv "socket at /etc/ld.so.preload" REFUSED "$(preload_not_reg socket)"
plant() { mkdir "$ROOTFS/etc/ld.so.preload"; echo /image-entry.so >"$ROOTFS/etc/ld.so.preload/x"; }
adv "directory at /etc/ld.so.preload" REFUSED "$(preload_not_reg directory)"
plant() { head -c 1048576 /dev/zero | tr '\0' 'a' >"$ROOTFS/etc/ld.so.preload"; }
adv "1 MiB /etc/ld.so.preload" REFUSED "the image's /etc/ld.so.preload is larger than 65536 bytes"
plant() { truncate -s 16G "$ROOTFS/etc/ld.so.preload"; }
adv "16 GiB sparse /etc/ld.so.preload" REFUSED "the image's /etc/ld.so.preload is larger than 65536 bytes"

# =====================================================================================
echo "# === read-only rootfs"
post_case() { assert_match "[$CASE] the container's / is read-only" "$(field ROOTOPTS)" '^ro(,|$)'; }
adv "root.readonly, no mountpoints in the image" STARTED --readonly
# Every mountpoint already there: the hook must create nothing.
premake() {
  local f d
  mkdir -p "$ROOTFS/usr/bin" "$ROOTFS/usr/sbin" "$ROOTFS/usr/libexec/onload/profiles"
  for d in $(adv_libdirs); do
    mkdir -p "$ROOTFS$d"
    for f in libonload.so libonload_ext.so libonload_ext.so.1 libonload_ext.so.1.2.0 libonload_zf.so \
             libonload_zf.so.1; do
      : >"$ROOTFS$d/$f"
    done
  done
  for f in /usr/bin/onload /usr/bin/onload_stackdump /usr/bin/zf_stackdump \
           /usr/bin/zf_debug /usr/sbin/onload_tool /etc/ld.so.preload; do
    : >"$ROOTFS$f"
  done
}
plant() { premake; }
pre_run() { TREE0=$(tree_snapshot "$ROOTFS"); }
post_case() {
  assert_match "[$CASE] the container's / is read-only" "$(field ROOTOPTS)" '^ro(,|$)'
  assert_eq "[$CASE] the hook created nothing in the rootfs" "$TREE0" "$(tree_snapshot "$ROOTFS")"
}
adv "root.readonly, all mountpoints pre-made" STARTED --readonly
# The rootfs directory itself on a read-only mount (host side).
ro_bind() { mount --bind "$ROOTFS" "$ROOTFS" && mount -o remount,bind,ro "$ROOTFS" || die "cannot make $ROOTFS a read-only bind mount"; }
plant() { :; }
pre_run() { ro_bind; }
post_case() { umount "$ROOTFS"; }
adv "rootfs on a read-only filesystem, no mountpoints" REFUSED \
  "cannot create mountpoint in rootfs: /usr/bin/onload: Read-only file system" --readonly
plant() { premake; }
pre_run() { ro_bind; TREE0=$(tree_snapshot "$ROOTFS"); }
post_case() {
  umount "$ROOTFS"
  assert_eq "[$CASE] the hook created nothing in the rootfs" "$TREE0" "$(tree_snapshot "$ROOTFS")"
}
STARTED_CHECK=check_sim
adv "rootfs on a read-only filesystem, all mountpoints pre-made" STARTED --readonly

# =====================================================================================
echo "# === /dev/onload and /dev planted"
STARTED_CHECK=check_sim
plant() { ln -s /dev/sda "$ROOTFS/dev/onload"; }
adv "/dev/onload -> /dev/sda under runc's /dev tmpfs (hidden)" STARTED
plant() { ln -s /dev/sda "$ROOTFS/dev/onload"; }
adv "/dev/onload -> /dev/sda, image's own /dev" REFUSED "$SYMLINK_LEAF: /dev/onload" --jq "$NO_DEV_TMPFS"
plant() { abs_link /dev/onload "$MA/dev/onload"; }
adv "/dev/onload -> host marker (absolute), image's /dev" REFUSED "$SYMLINK_LEAF: /dev/onload" --jq "$NO_DEV_TMPFS"
plant() { rel_link /dev/onload "$MR/dev/onload"; }
adv "/dev/onload -> host marker (relative), image's /dev" REFUSED "$SYMLINK_LEAF: /dev/onload" --jq "$NO_DEV_TMPFS"
plant() { mkfifo "$ROOTFS/dev/onload"; WATCH=("$ROOTFS/dev/onload"); }
adv "/dev/onload a FIFO, image's /dev" REFUSED \
  "refusing to mount: the image has a FIFO where a file is needed: /dev/onload" --jq "$NO_DEV_TMPFS"
plant() { mkdir "$ROOTFS/dev/onload"; }
adv "/dev/onload a directory, image's /dev" REFUSED \
  "refusing to mount: the image has a directory where a file is needed: /dev/onload" --jq "$NO_DEV_TMPFS"
# A device node where a device is mounted is fine: the host's is mounted over it.
STARTED_CHECK=check_sim
plant() { mknod "$ROOTFS/dev/onload" b 7 0; }
adv "/dev/onload a block device 7:0, image's /dev" STARTED --jq "$NO_DEV_TMPFS"
STARTED_CHECK=check_sim
plant() { mv "$ROOTFS/dev" "$ROOTFS/devreal"; ln -s devreal "$ROOTFS/dev"; }
adv "/dev -> devreal (relative, inside the rootfs)" STARTED

# /dev -> an absolute host path. runc 1.1 itself writes through such a link on
# the host (fd, stdin, stdout, stderr, ptmx): measured first without the hook,
# so that the hook is held to adding nothing beyond runc's own footprint.
MD0=$T/HOSTMARKER-dev-nohook MD1=$T/HOSTMARKER-dev
mkdir -p "$MD0" "$MD1"
echo "$TOKEN" >"$MD0/onload"; echo "$TOKEN" >"$MD1/onload"
make_bundle devctl --no-hook -- 'echo DONE'
rm -rf "${ROOTFS:?}/dev"; ln -s "$MD0" "$ROOTFS/dev"
run_container
RUNC_FOOTPRINT=$(ls -A "$MD0")
info "runc without the hook, /dev -> $MD0: exit $RC; it created on the host: $(find "$MD0" -mindepth 1 ! -name onload -printf '%P ')"
MD1_SHA=$(host_sha "$MD1/onload")
plant() { rm -rf "${ROOTFS:?}/dev"; ln -s "$MD1" "$ROOTFS/dev"; }
post_case() {
  assert_eq "[$CASE] the host dir got only what runc without the hook puts there" "$RUNC_FOOTPRINT" "$(ls -A "$MD1")"
  assert_eq "[$CASE] the host dir's onload file is unchanged" "$MD1_SHA" "$(host_sha "$MD1/onload")"
  check_not "[$CASE] no device node created in the host dir" test -c "$MD1/onload_epoll" -o -c "$MD1/sfc_char"
}
STARTED_CHECK=check_sim
adv "/dev -> host path (absolute); runc mounts its tmpfs inside the rootfs copy" STARTED

# =====================================================================================
echo "# === shared mount propagation"
adv "linux.rootfsPropagation shared" STARTED --jq '.linux.rootfsPropagation = "shared"'
adv "linux.rootfsPropagation rshared" STARTED --jq '.linux.rootfsPropagation = "rshared"'
# A host directory on a SHARED host mount: a container mount in its peer
# group would carry the hook's mounts back to the host.
SHV=$T/shared-vol
mkdir -p "$SHV"
mount -t tmpfs ocid-shared-vol "$SHV" && mount --make-shared "$SHV" || die "cannot mount a shared tmpfs at $SHV"
umount_shv() { if mountpoint -q "$SHV"; then umount -l "$SHV"; fi; return 0; }
it_add_cleanup umount_shv
echo "the volume's own file" >"$SHV/existing"
mkdir -p "$SHV/root"
vol() {  # DEST PROPAGATION -> jq filter adding a bind volume of $SHV
  echo ".mounts += [{destination: \"$1\", type: \"bind\", source: \"$SHV\", options: [\"rbind\", \"$2\"]}]"
}
vol_post() {
  assert_eq "[$CASE] the volume's own file is unchanged" "the volume's own file" "$(cat "$SHV/existing")"
  assert_eq "[$CASE] nothing but empty mountpoints added to the host volume" "existing" \
    "$(cd "$SHV" && find . -type f ! -empty -printf '%P\n' | sort)"
}
post_case() { vol_post; }
adv "volume at /usr/lib64 from a shared host mount, propagation shared" REFUSED \
  "refusing to mount under a mount with shared propagation (it would leak to other mount namespaces): /usr/lib64/libonload.so" \
  --jq "$(vol /usr/lib64 shared)"
post_case() { vol_post; }
adv "rootfsPropagation rshared + volume rshared at /usr/lib64" REFUSED \
  "refusing to mount under a mount with shared propagation (it would leak to other mount namespaces): /usr/lib64/libonload.so" \
  --jq ".linux.rootfsPropagation = \"rshared\" | $(vol /usr/lib64 rshared)"
post_case() { vol_post; }
adv "volume at /usr/libexec/onload, propagation shared" REFUSED \
  "refusing to mount under a mount with shared propagation (it would leak to other mount namespaces): /usr/libexec/onload/profiles" \
  --jq "$(vol /usr/libexec/onload shared)"
# A slave volume receives from the host but sends nothing back.
post_case() { vol_post; }
STARTED_CHECK=check_full
adv "rootfsPropagation rshared + volume rslave at /usr/lib64" STARTED \
  --jq ".linux.rootfsPropagation = \"rshared\" | $(vol /usr/lib64 rslave)"
# The rootfs itself on a shared host mount.
cp -a "$BASE_ROOTFS" "$SHV/root/rootfs"
post_case() {
  assert_eq "[$CASE] no host mount below the shared rootfs" "" \
    "$(awk -v p="$SHV/" 'index($5, p) == 1 {print $5}' /proc/self/mountinfo)"
}
STARTED_CHECK=check_full
adv "rootfs on a shared host mount, rootfsPropagation rshared" STARTED \
  --rootfs "$SHV/root/rootfs" --jq '.linux.rootfsPropagation = "rshared"'
umount "$SHV"

# =====================================================================================
echo "# === a container in the host's mount namespace"
CASE_NO=$((CASE_NO + 1)) CASE="host mount namespace"
echo "# --- case $CASE_NO: $CASE (expected: REFUSED: the container shares the host's mount namespace; refusing to mount)"
make_bundle hostns --env OCI_ONLOAD=all --jq '.linux.namespaces |= map(select(.type != "mount"))' -- "$PROBE_REFUSED"
run_container
check_not "[$CASE] runc itself refuses a config without a mount namespace (exit $RC)" test "$RC" -eq 0
assert_contains "[$CASE] runc's reason" "$ERR" "private MNT namespace"
# So drive the hook binary as runc would, with the hook entry make_bundle
# wrote, and a state whose pid is a process in the host mount namespace.
HOOK_PATH=$(jq -r '.hooks.prestart[0].path' "$B/config.json")
mapfile -t HOOK_ARGS < <(jq -r '.hooks.prestart[0].args[1:][]' "$B/config.json")
mapfile -t HOOK_ENV < <(jq -r '.hooks.prestart[0].env // [] | .[]' "$B/config.json")
# (With OCID_HOOK_WRAPPER, make_bundle's entry is already the wrapper:
# path=WRAPPER, args=[WRAPPER, oci-decorator binary, argv0, args...].)
HOOK_CMD=("$HOOK_PATH" "${HOOK_ARGS[@]}")
if [[ -n ${OCID_HOOK_WRAPPER:-} && $HOOK_PATH != "$OCID_HOOK_WRAPPER" ]]; then
  HOOK_CMD=("$OCID_HOOK_WRAPPER" "$OCID_BIN" oci-decorator "${HOOK_ARGS[@]}")
fi
info "hook command: ${HOOK_CMD[*]}"
# The process gets a devices cgroup of its own, to see that no rule is added.
HCG=/sys/fs/cgroup/devices/$CG_PARENT/hostns
mkdir -p "$HCG"
sleep 300 >/dev/null 2>&1 &
SLEEP_PID=$!
kill_sleep() { kill "$SLEEP_PID" 2>/dev/null; wait "$SLEEP_PID" 2>/dev/null; return 0; }
it_add_cleanup kill_sleep
echo "$SLEEP_PID" >"$HCG/cgroup.procs"
check "[$CASE] the pid is in the host's mount namespace" \
  test "$(readlink "/proc/$SLEEP_PID/ns/mnt")" == "$(readlink /proc/self/ns/mnt)"
DEVLIST0=$(cat "$HCG/devices.list")
STATE=$(jq -cn --arg id "$CID" --arg b "$B" --argjson pid "$SLEEP_PID" \
  '{ociVersion: "1.0.2", id: $id, status: "creating", pid: $pid, bundle: $b, annotations: {}}')
m0=$(marker_snapshot "${MARKERS[@]}"); mi0=$(host_mountinfo); h0=$(host_real)
t0=$EPOCHREALTIME
(cd "$B" && env -i "${HOOK_ENV[@]}" timeout 20 "${HOOK_CMD[@]}" <<<"$STATE" >"$B/hook.out" 2>"$B/hook.err")
HRC=$?
dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f", b - a}')
HERR=$(cat "$B/hook.err")
info "hook exit $HRC in ${dt}s: $HERR"
check_not "[$CASE] REFUSED (hook exit non-zero)" test "$HRC" -eq 0
check "[$CASE] the hook returned within 20 s" test "$HRC" -ne 124
assert_eq "[$CASE] one line on stderr, naming the reason" \
  "oci-decorator: error: container $CID: refused: the container shares the host's mount namespace; refusing to mount" "$HERR"
assert_eq "[$CASE] nothing on stdout" "" "$(cat "$B/hook.out")"
assert_eq "[$CASE] host marker dirs and the SIMULATED install unchanged" "$m0" "$(marker_snapshot "${MARKERS[@]}")"
assert_eq "[$CASE] host mountinfo identical" "$mi0" "$(host_mountinfo)"
assert_eq "[$CASE] real host paths unchanged" "$h0" "$(host_real)"
assert_eq "[$CASE] the process's device cgroup is unchanged" "$DEVLIST0" "$(cat "$HCG/devices.list")"
check_not "[$CASE] no mountpoint created in the bundle's rootfs" test -e "$ROOTFS/usr/lib64"
check_not "[$CASE] no mountpoint created in the image's library directory" \
  test -e "$ROOTFS$IMAGE_LIBDIR/libonload.so"
assert_state_dir_empty "[$CASE]"
kill_sleep
rmdir "$HCG" 2>/dev/null
RESULTS+=("$(printf '%-34s expected %-8s got %s' "$CASE" REFUSED "$([[ $HRC -eq 0 ]] && echo STARTED || echo REFUSED)")")

# =====================================================================================
echo "# === summary: $CASE_NO cases in ${SECONDS}s"
for r in "${RESULTS[@]}"; do echo "#   $r"; done
check "at least 25 cases ran" test "$CASE_NO" -ge 25
it_finish
