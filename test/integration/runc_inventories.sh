#!/bin/bash
# Real runc with the other shipped inventories and inventory shapes:
#   config/rdma.json: a device glob (infiniband/uverbs*), optional devices
#   that are absent; inventories stay independent of each other; a vendor
#   directory that holds version links, with the links also listed as files.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

# A SIMULATED RDMA host: two uverbs nodes on a char major no driver holds
# (the Onload nodes already took some; pick the highest still free).
used=$(awk '/^Character/{c=1;next} /^Block/{c=0} c{print $1}' /proc/devices;
       stat -c '%t' "$HOST_ROOT"/dev/onload* "$HOST_ROOT"/dev/sfc_char | while read -r h; do echo $((16#$h)); done)
RDMA_MAJOR=
for m in $(seq 254 -1 230); do
  grep -qx "$m" <<<"$used" || { RDMA_MAJOR=$m; break; }
done
[[ -n $RDMA_MAJOR ]] || die "no free char major for the simulated RDMA devices"
mkdir -p "$HOST_ROOT/dev/infiniband"
mknod -m 0666 "$HOST_ROOT/dev/infiniband/uverbs0" c "$RDMA_MAJOR" 0
mknod -m 0666 "$HOST_ROOT/dev/infiniband/uverbs1" c "$RDMA_MAJOR" 1
cp "$SRC/config/rdma.json" "$CONF_DIR/"

PROBE='
for d in /dev/infiniband/uverbs0 /dev/infiniband/uverbs1 /dev/infiniband/rdma_cm /dev/knem /dev/onload; do
  n=$(basename $d)
  if [ -e $d ]; then echo "OPEN_$n $(cat $d 2>&1 </dev/null)"; else echo "OPEN_$n ABSENT"; fi
done
echo "ONLOADLIB $( [ -e @L@/libonload.so ] && echo present || echo absent)"
echo DONE'
PROBE=${PROBE//@L@/$IMAGE_LIBDIR}   # libraries land in the image's libc directory

echo "# --- OCI_RDMA=all: glob matches both uverbs nodes, absent optional ones are skipped"
make_bundle rdma --env OCI_RDMA=all -- "$PROBE"
plan=$("$OCID_BIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" plan --bundle "$B")
assert_eq "plan: cgroup rules are the two uverbs nodes" \
  "c $RDMA_MAJOR:0 rw,c $RDMA_MAJOR:1 rw" "$(jq -r '.cgroup_rules | join(",")' <<<"$plan")"
assert_eq "plan: both optional devices reported as skipped" "2" "$(jq '.skipped | length' <<<"$plan")"
run_container
assert_eq "container started" "0" "$RC"
assert_match "uverbs0 allowed by the device cgroup (no driver: ENXIO/ENODEV)" \
  "$(field OPEN_uverbs0)" "No such device"
assert_match "uverbs1 allowed by the device cgroup" "$(field OPEN_uverbs1)" "No such device"
assert_eq "optional rdma_cm absent on the host, absent inside" "ABSENT" "$(field OPEN_rdma_cm)"
assert_eq "optional knem absent on the host, absent inside" "ABSENT" "$(field OPEN_knem)"
assert_eq "RDMA does not bring Onload devices" "ABSENT" "$(field OPEN_onload)"
assert_eq "RDMA does not bring Onload libraries" "absent" "$(field ONLOADLIB)"
[[ $RC -eq 0 ]] || dump_run

echo "# --- OCI_RDMA=all and OCI_ONLOAD=onload: both, each by its own inventory"
make_bundle both --env OCI_RDMA=all --env OCI_ONLOAD=onload -- "$PROBE"
run_container
assert_eq "container started" "0" "$RC"
assert_match "uverbs0 allowed" "$(field OPEN_uverbs0)" "No such device"
assert_match "onload allowed" "$(field OPEN_onload)" "No such device"
assert_eq "Onload libraries present" "present" "$(field ONLOADLIB)"

echo "# --- a missing required device (no uverbs node at all) fails only the container that asks"
mv "$HOST_ROOT/dev/infiniband" "$HOST_ROOT/dev/infiniband.away"
make_bundle rdma-missing --env OCI_RDMA=all -- "$PROBE"
run_container
check "RDMA container refused" test "$RC" -ne 0
assert_contains "error names the device pattern" "$ERR" "/dev/infiniband/uverbs*"
assert_contains "error names the inventory file" "$ERR" "rdma.json"
make_bundle onload-only --env OCI_ONLOAD=onload -- "$PROBE"
run_container
assert_eq "an Onload container on the same host is unaffected" "0" "$RC"
mv "$HOST_ROOT/dev/infiniband.away" "$HOST_ROOT/dev/infiniband"

echo "# --- a vendor directory holding version links, the links also listed as files"
mkdir -p "$HOST_ROOT/usr/lib64/vendor"
echo "SIMULATED vendor library" >"$HOST_ROOT/usr/lib64/vendor/libv.so.1.0"
ln -s libv.so.1.0 "$HOST_ROOT/usr/lib64/vendor/libv.so.1"
ln -s /usr/lib64/vendor/libv.so.1 "$HOST_ROOT/usr/lib64/vendor/libv.so"
cat >"$CONF_DIR/vendor.json" <<'JSON'
{"version": "1", "activation_flag": "OCI_VENDOR", "driver_feature": ["lib"],
 "inventory": {"lib": {"directories": ["/usr/lib64/vendor"],
                       "libraries": ["/usr/lib64/vendor/libv.so*"],
                       "preload": ["libv.so"]}}}
JSON
# The libraries go by name into the image's libc directory; the directory
# is mounted as listed, so both show the host's files.
make_bundle vendor --env OCI_VENDOR=all -- '
for f in /usr/lib64/vendor/libv.so /usr/lib64/vendor/libv.so.1 /usr/lib64/vendor/libv.so.1.0; do
  echo "READ_$(basename $f) $(cat $f 2>&1)"
done
for f in '"$IMAGE_LIBDIR"'/libv.so '"$IMAGE_LIBDIR"'/libv.so.1 '"$IMAGE_LIBDIR"'/libv.so.1.0; do
  echo "LIBDIR_$(basename $f) $(cat $f 2>&1)"
done
echo "PRELOAD $(cat /etc/ld.so.preload)"
echo "VMOUNTS $(grep -c " /usr/lib64/vendor" /proc/mounts)"'
run_container
assert_eq "container started" "0" "$RC"
for f in libv.so libv.so.1 libv.so.1.0; do
  assert_eq "$f reads the host library" "SIMULATED vendor library" "$(field "READ_$f")"
  assert_eq "$IMAGE_LIBDIR/$f reads the host library" "SIMULATED vendor library" "$(field "LIBDIR_$f")"
done
assert_eq "preload names the library by its container path, in the library directory" \
  "$IMAGE_LIBDIR/libv.so" "$(field PRELOAD)"
check "the directory is mounted, the links inside it resolve through it" \
  test "$(field VMOUNTS)" -ge 1
[[ $RC -eq 0 ]] || dump_run

echo "# --- an inventory whose flag is spelled with a JSON escape still activates"
# The fast path scans inventories for flags literally; a file with escapes
# must be parsed instead, never skipped.
cat >"$CONF_DIR/escaped.json" <<'JSON'
{"version": "1", "activation_flag": "OCI_\u0045SCAPED", "driver_feature": ["lib"],
 "inventory": {"lib": {"libraries": ["/usr/lib64/vendor/libv.so.1.0"]}}}
JSON
make_bundle escaped --env OCI_ESCAPED=all -- "echo \"READ_v \$(cat $IMAGE_LIBDIR/libv.so.1.0 2>&1)\""
run_container
assert_eq "container started" "0" "$RC"
assert_eq "the escaped inventory was applied" "SIMULATED vendor library" "$(field READ_v)"
rm -f "$CONF_DIR/escaped.json"

it_finish
