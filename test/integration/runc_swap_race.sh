#!/bin/bash
# Swap race under real runc, zero escapes allowed. At hook time the
# container's own process has not started, so the attacker is ANOTHER
# container sharing the same rootfs directory (no hook): it runs swapper.c,
# which exchanges, as fast as it can with renameat2(RENAME_EXCHANGE), real
# directories and files the hook resolves with symlinks to a host marker
# directory (absolute and ../ relative):
#   the image's libc directory, $IMAGE_LIBDIR (where the hook mounts the
#     libraries while it is a real directory: parent, absolute)
#   /usr/lib64 and /usr/lib/<triplet> (where it mounts them when it met the
#     link and so saw no glibc: parents, absolute and relative)
#   /usr/libexec/onload (parent, relative)
#   /etc (preload's parent, relative)  /usr/bin/onload (target, absolute)
#   /usr/sbin/onload_tool (target, relative)
# Meanwhile RACE_RUNS (default 200) activated containers (OCI_ONLOAD=all) are
# run one after the other on that rootfs. Each may start or be refused (with
# the hook's one line), but after every run: the host markers and the
# SIMULATED install are byte-for-byte unchanged, the host mount table is
# identical, the real host paths gained nothing, the state dir is empty, and
# no marker content is visible in the container or in runc's error. Prints
# how many started, how many were refused (by reason), and how many runs met
# the symlink state (refused on a swapped path, or a probe that saw it), to
# show the race was live.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
SECONDS=0
RUNS=${RACE_RUNS:-200}

SWAPPER=${OCID_SWAPPER:-}
if [[ -z $SWAPPER ]]; then
  SWAPPER=$T/swapper
  cc -O2 -static -o "$SWAPPER" "$IT_LIB_DIR/swapper.c" || die "cannot build swapper.c (static)"
fi
[[ -x $SWAPPER ]] || die "OCID_SWAPPER=$SWAPPER is not executable"
ldd "$SWAPPER" >/dev/null 2>&1 && die "$SWAPPER must be statically linked (it runs inside the container)"

# --- host marker: mirrors the target paths; every file holds TOKEN ------------------
TOKEN="HOSTMARKER-SECRET-$$-$RANDOM$RANDOM"
MARK=$T/HOSTMARKER-race
mkdir -p "$MARK"/usr/{lib64,bin,sbin,libexec/onload/profiles} "$MARK/etc"
for f in usr/lib64/libonload.so usr/bin/onload usr/sbin/onload_tool usr/libexec/onload/profiles/latency.opf \
         etc/ld.so.preload; do
  echo "/$TOKEN.so $MARK/$f" >"$MARK/$f"
done
MARKERS=("$MARK" "$HOST_ROOT" "$CONF_DIR")
host_real() {
  ls -ld --time-style=+%s /usr/lib64 /usr/lib64/libonload* /usr/bin/onload /usr/sbin/onload_tool \
    "$IMAGE_LIBDIR" "$IMAGE_LIBDIR"/libonload* /usr/lib/"$TRIPLET" /usr/lib/"$TRIPLET"/libonload* \
    /usr/libexec/onload /etc/ld.so.preload /dev/onload /HOSTMARKER-race 2>&1 | sort
}

# --- the shared rootfs ------------------------------------------------------------------
TRIPLET=$(uname -m)-linux-gnu
R=$T/race-rootfs
cp -a "$BASE_ROOTFS" "$R"
install -m 0755 "$SWAPPER" "$R/swapper"
mkdir -p "$R/usr/lib64" "$R/usr/lib/$TRIPLET" "$R/usr/libexec/onload" "$R/usr/sbin"
: >"$R/usr/bin/onload"
: >"$R/usr/sbin/onload_tool"
rel() { realpath -m --relative-to="$(dirname "$R$1")" "$2"; }   # LINK HOST_TARGET
ln -s "$MARK/usr/lib64" "$R/usr/lib64.swap"
ln -s "$MARK/usr/lib64" "$R$IMAGE_LIBDIR.swap"
ln -s "$(rel "/usr/lib/$TRIPLET.swap" "$MARK/usr/lib64")" "$R/usr/lib/$TRIPLET.swap"
ln -s "$(rel /usr/libexec/onload.swap "$MARK/usr/libexec/onload")" "$R/usr/libexec/onload.swap"
ln -s "$(rel /etc.swap "$MARK/etc")" "$R/etc.swap"
ln -s "$MARK/usr/bin/onload" "$R/usr/bin/onload.swap"
ln -s "$(rel /usr/sbin/onload_tool.swap "$MARK/usr/sbin/onload_tool")" "$R/usr/sbin/onload_tool.swap"
PAIRS=("$IMAGE_LIBDIR" "$IMAGE_LIBDIR.swap" /usr/lib64 /usr/lib64.swap "/usr/lib/$TRIPLET" "/usr/lib/$TRIPLET.swap"
       /usr/libexec/onload /usr/libexec/onload.swap /etc /etc.swap
       /usr/bin/onload /usr/bin/onload.swap /usr/sbin/onload_tool /usr/sbin/onload_tool.swap)
SWAPPED_RE="($IMAGE_LIBDIR|/usr/lib64|/usr/lib/$TRIPLET|/usr/libexec/onload|/etc|/usr/bin/onload|/usr/sbin/onload_tool)([/:]|\\\\n|\$)"
info "swap pairs: $(for ((i = 0; i < ${#PAIRS[@]}; i += 2)); do printf '%s<->%s(%s) ' "${PAIRS[i]}" "${PAIRS[i+1]}" "$(readlink "$R${PAIRS[i+1]}")"; done)"

# --- the attacker: a container without the hook on the same rootfs ------------------------
make_bundle swapper --no-hook --rootfs "$R" -- "exec /swapper 900 ${PAIRS[*]}"
SW_B=$B SW_CID=$CID
IT_IDS+=("$SW_CID")
runc --root "$RUNC_ROOT" run -d --bundle "$SW_B" "$SW_CID" </dev/null >"$SW_B/out" 2>"$SW_B/err" \
  || die "cannot start the swapper container: $(cat "$SW_B/err")"
wait_running "$SW_CID" || die "the swapper container does not run"
links=0 dirs=0
for _ in $(seq 1 2000); do if [[ -L $R$IMAGE_LIBDIR ]]; then links=$((links + 1)); else dirs=$((dirs + 1)); fi; done
info "host view of $R$IMAGE_LIBDIR over 2000 samples: $links symlink, $dirs directory"
check "the swap is live before the runs (both states seen from the host)" test "$links" -gt 0 -a "$dirs" -gt 0

# --- the runs -------------------------------------------------------------------------------
PROBE="n=0; i=0
while [ \$i -lt 50 ]; do for l in $IMAGE_LIBDIR /usr/lib64 /usr/bin/onload; do [ -L \$l ] && n=\$((n + 1)); done; i=\$((i + 1)); done
echo \"SAWLINK \$n\"
find / \\( -path /proc -o -path /sys \\) -prune -o -type f -print 2>/dev/null | xargs grep -l '$TOKEN' 2>/dev/null | sed 's/^/LEAK /'
awk '\$4 ~ /HOSTMARKER/ {print \"MARKMOUNT \" \$4 \" \" \$5}' /proc/self/mountinfo
echo \"HOSTMNT \$(awk -v h='$HOST_ROOT/' 'index(\$4, h) == 1' /proc/self/mountinfo | wc -l)\"
echo DONE"

M0=$(marker_snapshot "${MARKERS[@]}")
MI0=$(host_mountinfo)
H0=$(host_real)
started=0 refused=0 bad_refusals=0 escapes=0 met_link=0 saw_link=0 slow=0 state_left=0 hostmnt_started=0
probe_met=0
declare -A REASONS
escape() { escapes=$((escapes + 1)); [[ $escapes -le 10 ]] && nok "run $1: ESCAPE: $2"; }
echo "# --- $RUNS activated containers on the shared rootfs while the swapper runs"
for run in $(seq 1 "$RUNS"); do
  make_bundle "r$run" --rootfs "$R" --env OCI_ONLOAD=all -- "$PROBE"
  t0=$EPOCHREALTIME
  run_container
  dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f", b - a}')
  awk -v d="$dt" 'BEGIN {exit !(d >= 20)}' && { slow=$((slow + 1)); nok "run $run took ${dt}s"; }
  if [[ $RC -eq 0 ]]; then
    started=$((started + 1))
    [[ $(field SAWLINK) -gt 0 ]] && saw_link=$((saw_link + 1))
    [[ $(field HOSTMNT) -gt 0 ]] && hostmnt_started=$((hostmnt_started + 1))
    grep -q '^DONE$' <<<"$OUT" || { bad_refusals=$((bad_refusals + 1)); nok "run $run: started but the probe did not finish: $(head -c 300 <<<"$OUT$ERR" | tr '\n' '|')"; }
  else
    refused=$((refused + 1))
    line=$(grep -o "oci-decorator: error: container $CID: refused: [^\\]*" <<<"$ERR")
    # Besides its refusal, the hook may warn that it saw no glibc: its
    # probe met the image's libc directory swapped for the link.
    warned=$(grep -o "oci-decorator: warning: container $CID: inventory [^ ]*onload.json: the image has no glibc" <<<"$ERR" | wc -l)
    ((warned)) && probe_met=$((probe_met + 1))
    if [[ -z $line || $(($(grep -o 'oci-decorator: ' <<<"$ERR" | wc -l) - warned)) -ne 1 ]]; then
      bad_refusals=$((bad_refusals + 1))
      nok "run $run: refused without exactly one line from the hook: $(head -c 400 <<<"$ERR" | tr '\n' '|')"
    else
      reason=${line#"oci-decorator: error: container $CID: refused: "}
      REASONS[$reason]=$((${REASONS[$reason]:-0} + 1))
      grep -qE ": $SWAPPED_RE" <<<"$reason" && met_link=$((met_link + 1))
    fi
  fi
  # Zero escapes, checked after every run.
  [[ $(marker_snapshot "${MARKERS[@]}") == "$M0" ]] || { escape "$run" "host marker or SIMULATED install changed"; M0=$(marker_snapshot "${MARKERS[@]}"); }
  [[ $(host_mountinfo) == "$MI0" ]] || { escape "$run" "host mountinfo changed: $(diff <(echo "$MI0") <(host_mountinfo) | grep '^[<>]' | head -3 | tr '\n' '|')"; MI0=$(host_mountinfo); }
  [[ $(host_real) == "$H0" ]] || { escape "$run" "real host paths changed: $(diff <(echo "$H0") <(host_real) | grep '^[<>]' | tr '\n' '|')"; H0=$(host_real); }
  grep -qF -- "$TOKEN" <<<"$OUT$ERR" && escape "$run" "host marker content in the container's output or runc's error"
  [[ -n $(field LEAK; field MARKMOUNT) ]] && escape "$run" "marker file visible or mounted: $(field LEAK; field MARKMOUNT)"
  [[ -z $(ls -A "$STATE_DIR") ]] || { state_left=$((state_left + 1)); nok "run $run: state dir not empty: $(ls -A "$STATE_DIR")"; }
  ((run % 25 == 0)) && info "after $run runs (${SECONDS}s): $started started, $refused refused, $escapes escapes"
  rm -rf "${B:?}"
done

# --- stop the attacker ----------------------------------------------------------------------
runc --root "$RUNC_ROOT" kill "$SW_CID" TERM >/dev/null 2>&1
for _ in $(seq 1 100); do
  [[ $(runc --root "$RUNC_ROOT" state "$SW_CID" 2>/dev/null | jq -r .status) == stopped ]] && break
  sleep 0.1
done
runc --root "$RUNC_ROOT" delete -f "$SW_CID" >/dev/null 2>&1
SWAPS=$(sed -n 's/^swapper: \([0-9]*\) exchanges.*/\1/p' "$SW_B/out")
info "$(head -1 "$SW_B/out")"
sed -n 's/^swapper: \//#        \//p' "$SW_B/out"

echo "# --- results after ${SECONDS}s"
info "$RUNS runs: $started STARTED, $refused REFUSED"
for r in "${!REASONS[@]}"; do printf '#        %4d x %s\n' "${REASONS[$r]}" "$r"; done | sort -rn
info "runs that met the symlink state: $met_link refused on a swapped path, $saw_link started with a probe that saw a swapped symlink"
info "refused runs whose library-directory probe met the link (no glibc seen, both standard directories planned): $probe_met"
assert_eq "zero escapes over $RUNS runs (markers, SIMULATED install, host mountinfo, real host paths, container output)" 0 "$escapes"
assert_eq "every run started or was refused with the hook's one line (besides a no-glibc warning)" "$RUNS" \
  "$((started + refused - bad_refusals))"
assert_eq "the state dir was empty after every run" 0 "$state_left"
assert_eq "no run took 20 s or more" 0 "$slow"
assert_eq "every started container got mounts from the host install" "$started" "$hostmnt_started"
check "the swapper exchanged names (${SWAPS:-0} exchanges)" test "${SWAPS:-0}" -gt 1000
check "the race was live: runs met the symlink state ($met_link refused on a swapped path, $saw_link probes saw one)" \
  test "$((met_link + saw_link))" -gt 0
for ((i = 0; i < ${#PAIRS[@]}; i += 2)); do
  check "the swapper left ${PAIRS[i]} as it was (not a symlink)" test ! -L "$R${PAIRS[i]}"
done

# --- afterwards the same rootfs, undisturbed, gets the SIMULATED Onload ---------------------
make_bundle after --rootfs "$R" --env OCI_ONLOAD=all -- "$(onload_probe)"
run_container
assert_eq "[after the race] an activated container on the same rootfs starts" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
fails=$IT_FAIL
expect_onload all "after the race" >"$T/logs/after" 2>&1
if ((IT_FAIL > fails)); then grep '^FAIL' "$T/logs/after"; else echo "ok   - [after the race] expect_onload all: $(grep -c '^ok' "$T/logs/after") checks passed"; fi
assert_eq "[after the race] host markers unchanged" "$M0" "$(marker_snapshot "${MARKERS[@]}")"
assert_state_dir_empty "[after the race]"
info "total time ${SECONDS}s"
it_finish
