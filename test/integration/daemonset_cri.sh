#!/bin/bash
# deploy/kubernetes/daemonset.yaml as the kubelet and containerd 2.x's CRI
# really run it (issue 27): the plugin's container translated from the
# manifest itself (test/cri/daemonset_container.py: args after the
# Dockerfile's ENTRYPOINT, securityContext, volumeMounts with readOnly,
# recursiveReadOnly and propagation, the probes' exec commands), the real
# plugin binary and what it links in an OCI image (with busybox for the
# checks), run in a pod sandbox of a private containerd 2.x
# (test/cri/containerd2.sh), its volumes made as the kubelet makes them under
# a kubelet root $T/kubelet (kubernetes pkg/kubelet/kubelet_getters.go:126
# getPodVolumeDir at 01afcf67: pods/<uid>/volumes/<plugin>/<name>):
#   - emptyDir, medium Memory: a tmpfs mounted on a 0777 directory, its root
#     the kernel's default 1777 (mm/shmem.c shmem_init_fs_context);
#     medium unset: the directory chmod'ed 0777 (pkg/volume/emptydir/
#     empty_dir.go:52, setupDir, at 0379063);
#   - configMap: a plain 0777 directory (configmap.go:142 wraps a disk
#     emptyDir, at 00bdb3fa) in AtomicWriter's layout (pkg/volume/util/
#     atomic_writer.go:48-53: name -> ..data/name, ..data -> ..<timestamp>/,
#     at 00e11024), files 0644 (defaultMode), mounted read-only
#     (configmap.go:130 GetAttributes ReadOnly);
#   - hostPath: the simulated Onload host's /dev (with a tmpfs at dev/shm, as
#     a real /dev has one), /usr, /opt, /sbin, /run/onload (DirectoryOrCreate:
#     made as the kubelet makes it), and the real /sys; the kubelet
#     stand-in serving its kubelet.sock in $T/kubelet/device-plugins.
# The probes run in the container through CRI ExecSync, as the kubelet runs
# exec probes. Cases:
#   [memory emptyDir]  the manifest as shipped: registers, alive and ready and
#       staying so; every write below a read-only mount is EROFS (the
#       cgroupfs below /host/sys, /host/dev/shm, the tops, the rootfs);
#   [disk emptyDir]    liveness fails, and the probe's line says why;
#   [configmap]        the manifest's ConfigMap option: its inventories served;
#   [configmap writable mount], [hostPath 0777 inventories]: refused, not
#       ready, saying why; [no inventories]: not ready, saying why;
#   [plain readOnly]   the old manifest's mounts (readOnly alone): the same
#       writes below /host/sys and /host/dev SUCCEED (so this test can fail).
# OCID_DAEMONSET (default: the tree's daemonset.yaml) runs it on another
# manifest, e.g. the one before issue 27.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$SRC/test/cri/containerd2.sh"
it_setup lib64
plugin_suite kubelet_standin.py
ctd2_setup
DAEMONSET=${OCID_DAEMONSET:-$SRC/deploy/kubernetes/daemonset.yaml}
PLUGIN_IMAGE=docker.io/local/ocid-plugin:1
KROOT=$T/kubelet
KDIR=$KROOT/device-plugins
PROBE_ID=.ocid-rro-$$
started=$SECONDS

# --- mounts this suite makes, and takes back --------------------------------
FIXTURE_MOUNTS=()
fixture_mount() {  # DIR MOUNT-ARGS...: mount, remembered for the cleanup
  local dir=$1; shift
  mount "$@" "$dir" || die "mount $* $dir failed"
  FIXTURE_MOUNTS=("$dir" "${FIXTURE_MOUNTS[@]}")
}
fixture_umount() {  # DIR
  local d rest=()
  umount "$1" || { echo "# warning: umount $1 failed" >&2; return 1; }
  for d in "${FIXTURE_MOUNTS[@]}"; do [[ $d == "$1" ]] || rest+=("$d"); done
  FIXTURE_MOUNTS=("${rest[@]}")
}
fixture_cleanup() {
  local d rc=0
  for d in "${FIXTURE_MOUNTS[@]}"; do umount "$d" 2>/dev/null || umount -l "$d" || rc=1; done
  FIXTURE_MOUNTS=()
  # What a case that failed half-way may have left on the real host.
  rm -f "/sys/fs/cgroup/$PROBE_ID" 2>/dev/null
  rmdir "/sys/fs/cgroup/unified/$PROBE_ID" 2>/dev/null
  return "$rc"
}
KUBELET_PID=
stop_kubelet() { [[ -z $KUBELET_PID ]] || { kill "$KUBELET_PID" 2>/dev/null; wait "$KUBELET_PID" 2>/dev/null; }; KUBELET_PID=; return 0; }
it_add_cleanup fixture_cleanup
it_add_cleanup stop_kubelet   # runs first: before containerd and the mounts

# --- the host ---------------------------------------------------------------
# The simulated host: a shared mount, as / is on a systemd node (the old
# manifest's HostToContainer needs one), and a tmpfs at dev/shm.
fixture_mount "$HOST_ROOT" --bind "$HOST_ROOT"
mount --make-shared "$HOST_ROOT" || die "mount --make-shared $HOST_ROOT failed"
mkdir -p "$HOST_ROOT/dev/shm" "$HOST_ROOT/opt" "$HOST_ROOT/sbin"
fixture_mount "$HOST_ROOT/dev/shm" -t tmpfs -o size=1m,mode=1777 tmpfs
mknod -m 0666 "$HOST_ROOT/dev/ocid_testdev" c 1 3
mkdir -m 0750 "$KROOT" "$KROOT/pods"
mkdir -m 0755 "$KDIR" "$T/cdi"
BASE_MI=$(host_mountinfo)

# --- the image: the real plugin, what it links, its inventory, busybox -------
IMG=$T/plugin-rootfs
cp -a "$BASE_ROOTFS" "$IMG"
chmod 0755 "$IMG"
install -D -m 0755 "$OCID_PLUGIN" "$IMG/usr/bin/oci-decorator-device-plugin"
while read -r lib; do
  mkdir -p "$IMG$(dirname "$lib")"
  cp -L --preserve=mode "$lib" "$IMG$lib"
done < <(ldd "$OCID_PLUGIN" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
install -D -m 0644 "$SRC/config/onload.json" "$IMG/etc/oci-decorator/oci-decorator.d/onload.json"
mkdir -p "$IMG/var" "$IMG/host"
ln -s /run "$IMG/var/run"   # as Debian's image has it
chown -R 0:0 "$IMG"

ctd2_start
make_oci_image "$T/plugin-image.tar" "$IMG" "$PLUGIN_IMAGE=[\"sh\"]"
ctr2 images import "$T/plugin-image.tar" >/dev/null 2>"$T/logs/import-plugin.err" ||
  die "ctr images import of the plugin image failed: $(cat "$T/logs/import-plugin.err")"
info "containerd up and the plugin image imported in $((SECONDS - started)) s"
ctd2_runp ds

"$PY" "$STANDIN" serve --kubelet-dir "$KDIR" >"$T/logs/kubelet.log" 2>&1 &
KUBELET_PID=$!
for _ in $(seq 100); do grep -q '^serving' "$T/logs/kubelet.log" && break; sleep 0.1; done
check "the kubelet stand-in serves $KDIR/kubelet.sock" test -S "$KDIR/kubelet.sock"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
wait_for() {  # SECONDS CMD...
  local end=$(( $(now_ms) + $1 * 1000 )); shift
  until "$@"; do (( $(now_ms) < end )) || return 1; sleep 0.2; done
}

# --- one container of the DaemonSet ----------------------------------------
# make_configmap DIR [FILE...]: the kubelet's AtomicWriter layout.
make_configmap() {
  local dir=$1 ts=..2026_01_01_00_00_00.000000001 f; shift
  mkdir -p "$dir"
  chmod 0777 "$dir"
  mkdir -m 0755 "$dir/$ts"
  for f in "$@"; do install -m 0644 "$f" "$dir/$ts/$(basename "$f")"; done
  ln -s "$ts" "$dir/..data"
  for f in "$@"; do ln -s "..data/$(basename "$f")" "$dir/$(basename "$f")"; done
}
CM_FILES=()
# start_ds LABEL KEY [daemonset_container.py options]: a new pod uid, its
# volumes made, the container created and started; sets CID, VOLS, LIVENESS
# and READINESS (the probes' commands, one word a line). KEY names its files.
start_ds() {
  local label=$1 case=$2 kind name host medium out; shift 2
  UIDP=$(cat /proc/sys/kernel/random/uuid)
  VOLS=$CTD2/ds-$case.vols
  out=$("$PY" "$SRC/test/cri/daemonset_container.py" --manifest "$DAEMONSET" \
          --dockerfile "$SRC/deploy/kubernetes/Dockerfile" --image "$PLUGIN_IMAGE" \
          --kubelet-root "$KROOT" --pod-uid "$UIDP" \
          --host-path /var/lib/kubelet/device-plugins="$KDIR" --host-path /var/run/cdi="$T/cdi" \
          --host-path /dev="$HOST_ROOT/dev" --host-path /usr="$HOST_ROOT/usr" \
          --host-path /opt="$HOST_ROOT/opt" --host-path /sbin="$HOST_ROOT/sbin" \
          --host-path /sys=/sys --host-path /run/onload="$HOST_ROOT/run/onload" \
          --out-config "$CTD2/ds-$case.json" --out-volumes "$VOLS" "$@" 2>&1) ||
    die "[$case] daemonset_container.py: $out"
  LIVENESS=$(sed -n 1p <<<"$out" | jq -r '.[]')
  READINESS=$(sed -n 2p <<<"$out" | jq -r '.[]')
  while read -r kind name host medium; do
    # The kubelet's pod directories are 0750, root's (kubelet.go setupDataDirs
    # at 000d9543 makes the pods directory so; the ones below, likewise).
    [[ $kind == hostPath ]] || install -d -m 0750 "$KROOT/pods/$UIDP" "$KROOT/pods/$UIDP/volumes" \
      "$(dirname "$host")"
    case $kind in
      emptyDir)
        mkdir "$host"
        chmod 0777 "$host"
        if [[ $medium == Memory ]]; then fixture_mount "$host" -t tmpfs -o size=1m tmpfs; fi ;;
      configMap) make_configmap "$host" "${CM_FILES[@]}" ;;
      hostPath) mkdir -p "$host" ;;
    esac
  done <"$VOLS"
  CID=$(cri create "$POD_ID" "$CTD2/ds-$case.json" --pod-config "$POD_CONFIG" 2>"$T/logs/create-$case.err")
  if [[ -z $CID ]] || ! cri start "$CID" 2>"$T/logs/start-$case.err"; then
    nok "[$label] the container is created and started: $(cat "$T/logs/create-$case.err" "$T/logs/start-$case.err" 2>/dev/null)"
    return 1
  fi
  ok "[$label] the container from the manifest is created and started"
}
stop_ds() {  # LABEL KEY
  local kind name host medium
  cri logs "$CID" >"$T/logs/plugin-$2.log" 2>&1
  cri stop "$CID" >/dev/null 2>&1
  cri rm "$CID" >/dev/null 2>&1 || nok "[$1] RemoveContainer $CID"
  while read -r kind name host medium; do
    [[ $kind == emptyDir && $medium == Memory ]] && fixture_umount "$host"
  done <"$VOLS"
  local now
  now=$(host_mountinfo | grep -v " $CTD2/state/io.containerd.runtime.v2.task/k8s.io/$POD_ID/rootfs ")
  if [[ $now == "$(grep -v " $CTD2/state/" <<<"$BASE_MI")" ]]; then
    ok "[$1] host mount table as before the case (but for the pod sandbox)"
  else
    nok "[$1] host mount table changed: $(diff <(echo "$BASE_MI") <(echo "$now") | grep '^[<>]' | head -4 | tr '\n' '|')"
  fi
}
# probe KIND: the manifest's liveness or readiness command through ExecSync
# (timeoutSeconds 5); sets PRC and POUT.
probe() {
  local -a cmd
  mapfile -t cmd <<<"$([[ $1 == liveness ]] && echo "$LIVENESS" || echo "$READINESS")"
  POUT=$(cri --timeout 5 exec "$CID" -- "${cmd[@]}" 2>&1)
  PRC=$?
}
probe_passes() { probe "$1"; [[ $PRC -eq 0 ]]; }
probe_says() { probe "$1"; [[ $PRC -ne 0 && $POUT == *"$2"* ]]; }
registered() { grep -q "^registered $1\$" "$T/logs/kubelet.log"; }
# in_ct SCRIPT ARGS...: busybox sh in the container; output and status.
in_ct() { cri --timeout 10 exec "$CID" -- sh -c "$@" 2>&1; }
write_below() {  # PATH: creates and removes a file (a directory in a cgroupfs)
  in_ct 'if [ "$2" = dir ]; then mkdir "$1" && rmdir "$1"; else touch "$1" && rm -f "$1"; fi && echo WROTE' \
    sh "$1" "${2:-file}"
}
expect_erofs() {  # CASE PATH [dir]
  local out
  out=$(write_below "$2" "${3:-}")
  assert_contains "[$1] writing $2 fails: Read-only file system" "$out" "Read-only file system"
}
expect_written() {  # CASE PATH [dir]
  local out
  out=$(write_below "$2" "${3:-}")
  assert_contains "[$1] writing $2 succeeds (a plain readOnly leaves it writable)" "$out" "WROTE"
}

# --- [memory emptyDir]: the manifest as shipped -------------------------------
echo "# --- [memory emptyDir] the manifest as shipped"
CM_FILES=()
if start_ds "memory emptyDir" mem; then
  check "[memory emptyDir] it registers amd.com/onload with the kubelet" wait_for 20 registered amd.com/onload
  check "[memory emptyDir] the liveness probe passes (ExecSync of the manifest's command)" \
    wait_for 20 probe_passes liveness
  [[ $PRC -eq 0 ]] || info "liveness: $POUT"
  check "[memory emptyDir] the readiness probe passes" wait_for 20 probe_passes readiness
  [[ $PRC -eq 0 ]] || info "readiness: $POUT"
  sleep 6
  probe liveness; l=$PRC; probe readiness
  assert_eq "[memory emptyDir] 6 s later both probes still pass" "0 0" "$l $PRC"
  vol=$(awk '$1 == "emptyDir" {print $3}' "$VOLS")
  assert_eq "[memory emptyDir] the volume's root is the tmpfs's 1777, the plugin's directory 0755, the file root's 0644" \
    "1777 755 0:0 644" \
    "$(stat -c %a "$vol") $(stat -c %a "$vol/probe" 2>&1) $(stat -c %u:%g "$vol/probe/health" 2>&1) $(stat -c %a "$vol/probe/health" 2>&1)"
  # Finding 7: nothing below a read-only mount can be written.
  assert_eq "[memory emptyDir] the host's /run/onload (DirectoryOrCreate) is there, seen at /host/run/onload" \
    "directory" "$(in_ct 'stat -c %F /host/run/onload')"
  for p in /host/dev/shm /host/sys/fs/cgroup /host/dev /host/usr /host/opt /host/sbin /host/sys \
    /host/run/onload /; do
    expect_erofs "memory emptyDir" "${p%/}/$PROBE_ID"
  done
  expect_erofs "memory emptyDir" "/host/sys/fs/cgroup/unified/$PROBE_ID" dir
  stop_ds "memory emptyDir" mem
fi

# --- [disk emptyDir]: medium unset ------------------------------------------
echo "# --- [disk emptyDir] the health volume on disk (0777, not sticky)"
if start_ds "disk emptyDir" disk --disk-emptydir; then
  sleep 2
  probe liveness
  assert_eq "[disk emptyDir] the liveness probe fails" 1 "$PRC"
  assert_contains "[disk emptyDir] the liveness probe fails, saying why" "$POUT" \
    "the plugin may not write it there: directory /run/oci-decorator-device-plugin is writable by others and not sticky (owner 0, mode 0777)"
  assert_eq "[disk emptyDir] ... in one line" 1 "$(wc -l <<<"$POUT")"
  stop_ds "disk emptyDir" disk
fi

# --- the ConfigMap option ------------------------------------------------------
cat >"$T/testdev.json" <<'JSON'
{"version": "1", "activation_flag": "OCI_TESTDEV", "cdi_kind": "oci-decorator.test/testdev",
 "driver_feature": ["testdev"], "inventory": {"testdev": {"devices": ["ocid_testdev"]}}}
JSON
cp "$SRC/config/onload.json" "$T/onload.json"
echo "# --- [configmap] the manifest's ConfigMap option, as the kubelet makes the volume"
CM_FILES=("$T/onload.json" "$T/testdev.json")
if start_ds "configmap" configmap --configmap; then
  check "[configmap] the ConfigMap's inventory (not the image's) is served: oci-decorator.test/testdev registers" \
    wait_for 20 registered oci-decorator.test/testdev
  check "[configmap] the readiness probe passes" wait_for 20 probe_passes readiness
  [[ $PRC -eq 0 ]] || info "readiness: $POUT"
  expect_erofs configmap "/etc/oci-decorator/oci-decorator.d/$PROBE_ID"
  stop_ds "configmap" configmap
fi

echo "# --- [configmap writable mount] the same volume without readOnly"
if start_ds "configmap writable mount" cmrw --configmap --inventories-writable; then
  check "[configmap writable mount] not ready, saying the inventories were refused and why" \
    wait_for 10 probe_says readiness \
    "not ready: no resource to serve: inventory /etc/oci-decorator/oci-decorator.d/onload.json refused: refusing inventories: the config directory is writable by others (owner 0, mode 0777; it must be owned by root and not group- or world-writable, or be a kubelet configMap volume, and its mount is not read-only)"
  info "readiness: $POUT"
  check "[configmap writable mount] alive all the same" probe_passes liveness
  stop_ds "configmap writable mount" cmrw
fi

echo "# --- [hostPath 0777 inventories] a directory a local user can change, mounted read-only"
mkdir -p "$T/user-inventories"
chmod 0777 "$T/user-inventories"
install -m 0644 "$T/testdev.json" "$T/user-inventories/testdev.json"
if start_ds "hostPath 0777 inventories" hp --inventories-hostpath "$T/user-inventories"; then
  check "[hostPath 0777 inventories] not ready: it is not a kubelet volume" \
    wait_for 10 probe_says readiness "its mount is of $T/user-inventories, not of $KROOT/pods/<pod uid>/volumes/kubernetes.io~configmap/<volume>"
  info "readiness: $POUT"
  stop_ds "hostPath 0777 inventories" hp
fi

echo "# --- [no inventories] an empty ConfigMap"
CM_FILES=()
if start_ds "no inventories" none --configmap; then
  check "[no inventories] alive" wait_for 10 probe_passes liveness
  check "[no inventories] not ready, saying why" wait_for 10 probe_says readiness \
    "not ready: no resource to serve: no inventory (*.json) in /etc/oci-decorator/oci-decorator.d"
  info "readiness: $POUT"
  stop_ds "no inventories" none
fi

# --- [plain readOnly]: what the old manifest's mounts allowed -----------------
echo "# --- [plain readOnly] readOnly without recursiveReadOnly"
if start_ds "plain readOnly" plain --no-rro; then
  check "[plain readOnly] the plugin runs" wait_for 20 probe_passes liveness
  expect_written "plain readOnly" "/host/dev/shm/$PROBE_ID"
  expect_written "plain readOnly" "/host/sys/fs/cgroup/$PROBE_ID"
  expect_erofs "plain readOnly" "/host/dev/$PROBE_ID"
  stop_ds "plain readOnly" plain
fi

# --- stop -----------------------------------------------------------------------
for f in "$T"/logs/plugin-*.log; do
  [[ -f $f ]] || continue
  assert_no_match "$(basename "$f"): no crash, no internal error" "$(cat "$f")" \
    "internal error|terminate called|Segmentation|Sanitizer"
  sanitizer_check "$(cat "$f")"
done
stop_kubelet
cri stopp "$POD_ID" >/dev/null && cri rmp "$POD_ID" >/dev/null
check "pods removed, containerd and its shims stopped, nothing left mounted" ctd2_stop
fixture_cleanup
check "nothing left in the real /sys/fs/cgroup" test ! -e "/sys/fs/cgroup/$PROBE_ID" -a ! -e "/sys/fs/cgroup/unified/$PROBE_ID"
info "suite time: $((SECONDS - started)) s"
it_finish
