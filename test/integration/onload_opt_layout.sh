#!/bin/bash
# The /opt/onload layout that AMD's Kubernetes Onload operator leaves on a
# node, against the shipped config/onload.json: `plan`, `check` and the
# device plugin's `resources` call it healthy, and a container under runc
# gets the programs, onload_tool and the profiles at the operator's container
# paths, and the libraries where its own loader looks (the directory of the
# image's libc.so.6; the device plugin: /usr/lib/<triplet> and /usr/lib64),
# not at /opt/onload/usr/lib64, which no loader searches.
#
# Where that layout comes from (sim-onload.sh --layout opt builds it):
#   Xilinx-CNS/kubernetes-onload controllers/onload_controller.go:1068, the
#     device plugin pod's init container: `cp -TRv /opt/onload /host/onload`
#     (hostOnloadPath, default /opt/onload, line 905), from the onload-user
#     image;
#   Xilinx-CNS/onload scripts/onload-user.Dockerfile:107-109, that image:
#     `ENV i_prefix=/opt/onload` and `scripts/onload_install --nobuild
#     --userfiles` on ubi8 (no /lib/x86_64-linux-gnu/libc.so.6, so lib64);
#   Xilinx-CNS/onload scripts/onload_install:610-632 and 675-676
#     (calculate_install_paths, detect_lib64_path; sbindir=/sbin): libraries
#     in $i_prefix/usr/lib64 (207-208), programs in $i_prefix/usr/bin
#     (219, 236), onload_tool in $i_prefix/sbin (235), profiles in
#     $i_prefix/usr/libexec/onload/profiles (253);
#   Xilinx-CNS/kubernetes-onload pkg/deviceplugin/mounts.go:61-132 and
#     manager.go:32-41: AMD's plugin mounts libonload.so* and libonload_ext.so*
#     from /opt/onload/usr/lib64 at /opt/onload/usr/lib64/<name> in the pod and
#     sets LD_PRELOAD=/opt/onload/usr/lib64/libonload.so.
# On the onload.json before this layout was accepted for every entry, the
# binaries (/usr/bin only), onload_tool and the profiles directory were
# missing: each check below fails there.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup opt

H=$HOST_ROOT
O=/opt/onload
check "the simulated install has no /usr copy to fall back on" \
  test ! -e "$H/usr/bin/onload" -a ! -e "$H/usr/lib64/libonload.so" -a ! -e "$H/usr/sbin/onload_tool"

# --- plan --------------------------------------------------------------------------
echo "# --- plan, OCI_ONLOAD=all and a profile from the /opt profiles directory"
make_bundle opt-plan --env OCI_ONLOAD=all --env OCI_ONLOAD_PROFILE=throughput -- true
RC=0
PLAN=$("$OCID_BIN" --host-root "$H" --config-dir "$CONF_DIR" --state-dir "$STATE_DIR" \
       plan --bundle "$B" 2>"$T/plan.err") || RC=$?
assert_eq "[plan] exits 0 ($(head -c 300 "$T/plan.err"))" 0 "$RC"
targets=$(jq -r '.mounts[].target' <<<"$PLAN" 2>/dev/null | sort)
L=$IMAGE_LIBDIR
for t in $L/libonload.so $L/libonload_ext.so $L/libonload_ext.so.1 \
         $L/libonload_ext.so.1.2.0 $L/libonload_zf.so \
         $O/usr/bin/onload $O/usr/bin/onload_stackdump $O/sbin/onload_tool \
         $O/usr/bin/zf_stackdump $O/usr/bin/zf_debug $O/usr/libexec/onload/profiles; do
  check "[plan] mounts $t" grep -qxF "$t" <<<"$targets"
done
assert_eq "[plan] no library at its host path $O/usr/lib64" "" "$(grep "^$O/usr/lib64/" <<<"$targets")"
assert_eq "[plan] the /opt library" "$O/usr/lib64/libonload.so" \
  "$(jq -r --arg t "$L/libonload.so" '.mounts[] | select(.target == $t) | .source' <<<"$PLAN" 2>&1)"
assert_eq "[plan] preloads it from the image's library directory" "$L/libonload.so" \
  "$(jq -r '.preload | join(" ")' <<<"$PLAN" 2>&1)"
# A hook cannot set the environment: plan names the profile's variables in
# its one warning, which shows they were read from the /opt .opf (throughput
# is not among onload.json's inline profiles).
assert_contains "[plan] the profile throughput, read from $O/usr/libexec/onload/profiles/throughput.opf" \
  "$(cat "$T/plan.err")" "EF_POLL_USEC=100000 EF_TCP_SNDBUF_MODE=1"
assert_eq "[plan] no other warning (the version lock reads $O/usr/lib64/libonload.so)" 1 \
  "$(grep -c warning "$T/plan.err")"

# --- check -------------------------------------------------------------------------
echo "# --- check, with a Solarflare NIC and the hooks.d entry as a real node has them"
d=$H/sys/bus/pci/devices/0000:01:00.0
mkdir -p "$d/net/eth1" "$H/sys/bus/pci/drivers/sfc" "$H/sys/fs/cgroup/devices"
echo 0x1924 >"$d/vendor"
echo 0x0b03 >"$d/device"
ln -sfn ../../../bus/pci/drivers/sfc "$d/driver"
SELF=/usr/libexec/oci/hooks.d/oci-decorator
mkdir -p "$H/usr/libexec/oci/hooks.d" "$H/usr/share/containers/oci/hooks.d"
printf 'not really oci-decorator\n' >"$H$SELF"
cat >"$H/usr/share/containers/oci/hooks.d/oci-decorator-prestart.json" <<JSON
{"version": "1.0.0",
 "hook": {"path": "$SELF", "args": ["oci-decorator", "hook", "prestart"], "env": []},
 "when": {"always": true}, "stages": ["prestart"]}
JSON
RC=0
OUT=$("$OCID_BIN" --config-dir "$CONF_DIR" --host-root "$H" check --binary "$SELF" --json \
      2>"$T/check.err") || RC=$?
assert_eq "[check] exit 0: ready ($(jq -c '.reasons' <<<"$OUT" 2>&1))" 0 "$RC"
assert_eq "[check] onload.json and both features ok, their plans build" "ok onload:ok:True zf:ok:True" \
  "$(python3 -c 'import json,sys; j=json.load(sys.stdin); i=j["inventories"][0]
print(" ".join([i["state"]] + ["%s:%s:%s" % (f["name"], f["state"], f["plan_builds"]) for f in i["features"]]))' \
     <<<"$OUT" 2>&1)"

# --- the device plugin --------------------------------------------------------------
echo "# --- the device plugin's resources"
if [[ -n ${OCID_PLUGIN:-} ]]; then
  RC=0
  res=$("$OCID_PLUGIN" --host-root "$H" --config-dir "$CONF_DIR" resources --json 2>"$T/res.err") || RC=$?
  assert_eq "[resources] exits 0 ($(head -c 300 "$T/res.err"))" 0 "$RC"
  assert_eq "[resources] amd.com/onload, amd.com/zf and Nomad's amd/onloadzf healthy" \
    "amd.com/onload:true: amd.com/zf:true: amd/onloadzf:true:" \
    "$(jq -r '[.[] | "\(.kubernetes // .nomad):\(.healthy):\(.why // "")"] | join(" ")' <<<"$res" 2>&1)"
  assert_eq "[resources] onload's LD_PRELOAD is the first library directory for every image" \
    "$CDI_LIBONLOAD" \
    "$(jq -r '.[] | select(.kubernetes == "amd.com/onload") | .env.LD_PRELOAD' <<<"$res" 2>&1)"
  res=$("$OCID_PLUGIN" --host-root "$H" --config-dir "$CONF_DIR" --profile throughput resources --json 2>&1)
  assert_eq "[resources --profile throughput] the variables of $O/usr/libexec/onload/profiles/throughput.opf" \
    "100000 1" "$(jq -r '.[] | select(.kubernetes == "amd.com/onload") | "\(.env.EF_POLL_USEC) \(.env.EF_TCP_SNDBUF_MODE)"' <<<"$res" 2>&1)"
else
  info "SKIPPED the device plugin section: it is not built (OCID_PLUGIN unset)"
fi

# --- a container -----------------------------------------------------------------------
echo "# --- runc, OCI_ONLOAD=all: the programs at AMD's container paths, the libraries where the loader looks"
make_bundle opt-run --env OCI_ONLOAD=all -- "
for f in $L/libonload.so $O/usr/lib64/libonload.so $O/usr/bin/onload $O/sbin/onload_tool $O/usr/libexec/onload/profiles/latency.opf; do
  if [ -e \$f ]; then echo \"HAVE \$f\"; else echo \"MISSING \$f\"; fi
done
echo \"PRELOAD \$(cat /etc/ld.so.preload)\"
echo \"TOOL \$($O/sbin/onload_tool status)\""
run_container
assert_eq "[runc] runs ($ERR)" 0 "$RC"
for f in $L/libonload.so $O/usr/bin/onload $O/sbin/onload_tool $O/usr/libexec/onload/profiles/latency.opf; do
  assert_contains "[runc] $f is there" "$OUT" "HAVE $f"
done
assert_contains "[runc] nothing at the host path $O/usr/lib64/libonload.so" "$OUT" "MISSING $O/usr/lib64/libonload.so"
assert_eq "[runc] /etc/ld.so.preload names the library in the image's library directory" "$L/libonload.so" "$(field PRELOAD)"
assert_contains "[runc] onload_tool is the host's (simulated) one" "$(field TOOL)" "SIMULATED onload_tool status"

it_finish
