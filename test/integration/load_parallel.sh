#!/bin/bash
# 20 activated containers (OCI_ONLOAD=all) started in parallel under real runc,
# all running at the same time: each probes what it got, then signals "ready"
# through a bind-mounted shared directory and waits for "go". 10 have their own
# rootfs copy, 10 share one fresh rootfs directory (the hooks create the same
# mountpoints in it concurrently, as with several containers on one --rootfs). While all run: 20 state dir entries, the device rules in every
# container's devices cgroup. Then all are deleted in parallel; afterwards: no
# mount under the temp dir in the host mount table, the host mount table as
# before, no per-container cgroup dir left in any hierarchy, an empty state dir.
# Then 4 rounds of 8 containers started at once on a fresh shared rootfs, to hit
# the concurrent-mountpoint-creation race reliably.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

N=20
N_SHARED=10
SHARED=$T/shared
mkdir -p "$SHARED"
SHARED_ROOTFS=$T/shared-rootfs
cp -a "$BASE_ROOTFS" "$SHARED_ROOTFS"

mount_shared=".mounts += [{destination: \"/shared\", type: \"bind\", source: \"$SHARED\", options: [\"rbind\", \"rw\"]}]"
script="$(onload_probe)
touch /shared/ready.\$IDX
n=0
while [ ! -e /shared/go ] && [ \$n -lt 600 ]; do sleep 0.1; n=\$((n + 1)); done
[ -e /shared/go ] && echo GO_SEEN"

BS=(); CIDS=()
for i in $(seq 1 "$N"); do
  rootfs_opt=()
  ((i > N - N_SHARED)) && rootfs_opt=(--rootfs "$SHARED_ROOTFS")
  make_bundle "p$i" "${rootfs_opt[@]}" --env OCI_ONLOAD=all --env "IDX=$i" --jq "$mount_shared" -- "$script"
  BS[i]=$B; CIDS[i]=$CID
  IT_IDS+=("$CID")
done

echo "# --- starting $N containers in parallel"
t0=$(date +%s.%N)
for i in $(seq 1 "$N"); do
  (timeout 90 runc --root "$RUNC_ROOT" run -d --bundle "${BS[i]}" "${CIDS[i]}" </dev/null \
     >"${BS[i]}/out" 2>"${BS[i]}/err"; echo $? >"${BS[i]}/rc") &
done
wait
started=0
for i in $(seq 1 "$N"); do
  rc=$(cat "${BS[i]}/rc")
  if [[ $rc == 0 ]]; then
    started=$((started + 1))
  else
    nok "container $i: runc run -d exited $rc: $(head -c 600 "${BS[i]}/err" | tr '\n' '|')"
  fi
done
assert_eq "all $N runc run -d succeeded" "$N" "$started"
info "all runc run -d returned after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}') s"

# Wait until every started container has probed and is waiting for "go".
for _ in $(seq 1 300); do
  [[ $(find "$SHARED" -name 'ready.*' | wc -l) -ge $started ]] && break
  sleep 0.1
done
assert_eq "all $N containers probed and are waiting" "$N" "$(find "$SHARED" -name 'ready.*' | wc -l)"

running=0
for i in $(seq 1 "$N"); do
  [[ $(runc --root "$RUNC_ROOT" state "${CIDS[i]}" 2>/dev/null | jq -r .status) == running ]] && running=$((running + 1))
done
assert_eq "all $N containers are running at the same time" "$N" "$running"
assert_eq "the state dir holds one entry per container" "$N" "$(find "$STATE_DIR" -mindepth 1 -maxdepth 1 | wc -l)"

CGPATHS=()
rules_ok=0
for i in $(seq 1 "$N"); do
  [[ $(cat "${BS[i]}/rc") == 0 ]] || continue   # reported above
  pid=$(runc --root "$RUNC_ROOT" state "${CIDS[i]}" 2>/dev/null | jq -r .pid)
  cgpath=$(awk -F: '$2 == "devices" {print $3}' "/proc/$pid/cgroup" 2>/dev/null)
  CGPATHS[i]=$cgpath
  [[ -n $cgpath && $cgpath != / ]] || { nok "container $i: no devices cgroup found (pid '$pid')"; continue; }
  devlist=$(cat "/sys/fs/cgroup/devices$cgpath/devices.list" 2>&1)
  good=1
  for n in onload onload_epoll sfc_char; do
    grep -qxF "c $(devnum "$HOST_ROOT/dev/$n") rw" <<<"$devlist" || good=0
  done
  if ((good)); then rules_ok=$((rules_ok + 1)); else nok "container $i: devices.list lacks a rule: $(tr '\n' '|' <<<"$devlist")"; fi
done
assert_eq "every container's devices cgroup allows the 3 Onload devices" "$N" "$rules_ok"

touch "$SHARED/go"
for i in $(seq 1 "$N"); do
  for _ in $(seq 1 300); do
    st=$(runc --root "$RUNC_ROOT" state "${CIDS[i]}" 2>/dev/null | jq -r .status)
    [[ $st == running || $st == created ]] || break   # stopped, or never started
    sleep 0.1
  done
done

echo "# --- what each container saw"
for i in $(seq 1 "$N"); do
  OUT=$(cat "${BS[i]}/out"); ERR=$(cat "${BS[i]}/err"); RC=$(cat "${BS[i]}/rc")
  if [[ $RC != 0 ]]; then
    nok "container $i did not start: $(grep -o 'oci-decorator: [^\]*' <<<"$ERR" || head -c 300 <<<"$ERR")"
    continue
  fi
  fails_before=$IT_FAIL passes_before=$IT_PASS
  expect_onload all "container $i" >"$T/logs/assert-$i"
  assert_contains "[container $i] saw go and exited" "$OUT" "GO_SEEN" >>"$T/logs/assert-$i"
  if ((IT_FAIL == fails_before)); then
    echo "ok   - container $i$( ((i > N - N_SHARED)) && echo ' (shared rootfs)'): $((IT_PASS - passes_before)) probe checks passed"
  else
    grep '^FAIL' "$T/logs/assert-$i"
    dump_run
  fi
done

echo "# --- deleting all in parallel"
for i in $(seq 1 "$N"); do
  (runc --root "$RUNC_ROOT" delete "${CIDS[i]}" >"${BS[i]}/delout" 2>&1; echo $? >"${BS[i]}/delrc") &
done
wait
deleted=0
for i in $(seq 1 "$N"); do
  if [[ $(cat "${BS[i]}/delrc") == 0 ]]; then deleted=$((deleted + 1)); elif [[ $(cat "${BS[i]}/rc") == 0 ]]; then nok "container $i: runc delete: $(tr '\n' '|' <"${BS[i]}/delout")"; fi
done
assert_eq "runc delete succeeded for every started container (poststop hooks included)" "$started" "$deleted"

# --- The same race, repeated: rounds of 8 activated containers started at once
# on a fresh shared rootfs (run to completion; runc run deletes them).
ROUNDS=4 K=8
for r in $(seq 1 "$ROUNDS"); do
  R=$T/race-rootfs-$r
  cp -a "$BASE_ROOTFS" "$R"
  RB=(); RC_IDS=()
  for i in $(seq 1 "$K"); do
    make_bundle "race$r-$i" --rootfs "$R" --env OCI_ONLOAD=all -- '/usr/bin/dyn-hello'
    RB[i]=$B; RC_IDS[i]=$CID
    IT_IDS+=("$CID"); CIDS+=("$CID")
  done
  for i in $(seq 1 "$K"); do
    (timeout 90 runc --root "$RUNC_ROOT" run --bundle "${RB[i]}" "${RC_IDS[i]}" </dev/null \
       >"${RB[i]}/out" 2>"${RB[i]}/err"; echo $? >"${RB[i]}/rc") &
  done
  wait
  good=0 errs=""
  for i in $(seq 1 "$K"); do
    if [[ $(cat "${RB[i]}/rc") == 0 ]] && cat "${RB[i]}/out" "${RB[i]}/err" | grep -q "SIMULATED libonload: preloaded"; then
      good=$((good + 1))
    else
      errs+="$(grep -o 'oci-decorator: [^\]*' "${RB[i]}/err" || head -c 200 "${RB[i]}/err")|"
    fi
  done
  assert_eq "shared-rootfs round $r: all $K concurrent containers started and got libonload${errs:+ (errors: $errs)}" "$K" "$good"
done

echo "# --- afterwards"
assert_eq "no mount under $T in the host mount table" "" \
  "$(awk -v t="$T/" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo)"
assert_host_mounts_unchanged "after $N parallel containers"
left=""
for id in "${CIDS[@]}"; do
  for d in /sys/fs/cgroup/*/"$CG_PARENT/$id"; do [[ -d $d ]] && left+="$d "; done
done
for cg in "${CGPATHS[@]}"; do
  [[ -n $cg && $cg != / && -d /sys/fs/cgroup/devices$cg ]] && left+="/sys/fs/cgroup/devices$cg "
done
assert_eq "no per-container cgroup dir left in any hierarchy" "" "$left"
# runc leaves the empty parent /$CG_PARENT: it must be removable (empty).
parents_left=""
for d in /sys/fs/cgroup/*/"$CG_PARENT"; do
  [[ -d $d ]] || continue
  rmdir "$d" 2>/dev/null || parents_left+="$d "
done
assert_eq "the parent cgroup dirs runc left are empty (removed)" "" "$parents_left"
assert_state_dir_empty "after $N parallel containers"
assert_eq "the shared rootfs has no leftover non-empty file added" "" \
  "$(comm -13 <(tree_snapshot "$BASE_ROOTFS") <(tree_snapshot "$SHARED_ROOTFS") | awk -F'\t' '!($2 == "d" || ($2 == "f" && $5 == 0))' | sed '/^$/d')"

it_finish
