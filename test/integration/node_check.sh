#!/bin/bash
# `oci-decorator check` against fake node trees under --host-root (the
# SIMULATED Onload install plus fake sysfs, hooks.d, daemon.json,
# containerd and CDI files): the exit code (0 ready, 1 not ready, 2 bad
# input) and the JSON fields as each part of the node changes; then once on
# the real host (0 or 1, valid JSON).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

H=$HOST_ROOT
SELF=/usr/libexec/oci/hooks.d/oci-decorator   # the binary the fake node's entries name
mkdir -p "$H/usr/libexec/oci/hooks.d" "$H/usr/bin"
printf 'not really oci-decorator\n' >"$H$SELF"
ln -s "$SELF" "$H/usr/bin/oci-decorator-runtime"

# This suite builds its own NIC (add_nic): the simulated install's goes.
rm "$H/sys/bus/pci/devices/0000:04:00.0"
add_nic() {
  local d=$H/sys/bus/pci/devices/0000:01:00.0
  mkdir -p "$d/net/eth1" "$H/sys/bus/pci/drivers/sfc"
  echo 0x1924 >"$d/vendor"
  echo 0x0b03 >"$d/device"
  echo 1 >"$d/numa_node"
  ln -sfn ../../../bus/pci/drivers/sfc "$d/driver"
}
add_nic
mkdir -p "$H/sys/bus/pci/devices/0000:00:1f.6"          # an Intel NIC: not counted
echo 0x8086 >"$H/sys/bus/pci/devices/0000:00:1f.6/vendor"
mkdir -p "$H/sys/fs/cgroup/devices" "$H/sys/fs/cgroup/unified"
: >"$H/sys/fs/cgroup/unified/cgroup.controllers"

HOOKS=$H/usr/share/containers/oci/hooks.d
add_hooks_entry() {
  mkdir -p "$HOOKS"
  cat >"$HOOKS/oci-decorator-prestart.json" <<JSON
{"version": "1.0.0",
 "hook": {"path": "$SELF", "args": ["oci-decorator", "hook", "prestart"], "env": []},
 "when": {"always": true}, "stages": ["prestart"]}
JSON
}
add_hooks_entry

run_check() {  # [global and check options...]: sets RC, OUT (stdout), ERR
  RC=0
  OUT=$("$OCID_BIN" --config-dir "$CONF_DIR" --host-root "$H" check --binary "$SELF" "$@" \
        2>"$T/check.err") || RC=$?
  ERR=$(cat "$T/check.err")
}
# json EXPR: evaluates a Python expression over the last output, loaded as j.
json() { python3 -c "import json,sys; j=json.load(sys.stdin); print($1)" <<<"$OUT" 2>&1; }

# --- ready ---------------------------------------------------------------------
echo "# --- a node with Onload, a Solarflare NIC and the hooks.d entry"
run_check --json
assert_eq "[ready] exit 0 ($ERR)" 0 "$RC"
check "[ready] the output is one JSON document" quiet python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$OUT"
assert_eq "[ready] version 1, ready true, no reasons" "1 True []" "$(json 'j["version"], j["ready"], j["reasons"]')"
assert_eq "[ready] onload.json: ok, both features plan" "ok onload:ok:True zf:ok:True" \
  "$(json '" ".join([j["inventories"][0]["state"]] + ["%s:%s:%s" % (f["name"], f["state"], f["plan_builds"]) for f in j["inventories"][0]["features"]])')"
assert_eq "[ready] /dev/onload: a char device with the sim's major, mode 0666, root" \
  "char-device $(stat -c '%t' "$H/dev/onload" | xargs -I{} printf '%d' 0x{}) 0 0666 0" \
  "$(json '" ".join(str(x) for x in [[f for e in j["inventories"][0]["features"][0]["entries"] for f in e["files"] if f["path"].endswith("/dev/onload")][0][k] for k in ("type","major","minor","mode","uid")])')"
assert_eq "[ready] the NIC: address, vendor, device, driver, interfaces, NUMA node" "0000:01:00.0 0x1924 0x0b03 sfc ['eth1'] 1 1" \
  "$(json '" ".join(str(j["nics"][0][k]) for k in ("address","vendor","device","driver","interfaces","numa_node")) + " " + str(len(j["nics"]))')"
assert_eq "[ready] cgroup hybrid" hybrid "$(json 'j["cgroup"]["mode"]')"
assert_eq "[ready] kernel interfaces are booleans" "bool bool bool" \
  "$(json '" ".join(type(j["kernel"][k]).__name__ for k in ("openat2","mount_api","statx_mnt_id"))')"
assert_eq "[ready] the hooks.d entry is set up" "True True" \
  "$(json 'j["delivery"]["engine_set_up"], j["delivery"]["hooks"][0]["set_up"]')"
run_check
assert_eq "[ready] the table exits 0 too" 0 "$RC"
assert_contains "[ready] the table ends with READY" "$(tail -1 <<<"$OUT")" "READY: an activated container would start"
assert_match "[ready] the table has a device row" "$OUT" "^OK +device +$H/dev/onload +char [0-9]+:0, mode 0666, owner 0:0"

# --- X3/X4: the shrub controller's condition and group (issue 30) --------------
echo "# --- shrub controller: a module parameter naming a missing file, then an installed one"
HAD_SBIN=0; [[ -e $H/sbin || -L $H/sbin ]] && HAD_SBIN=1
sim_shrub "$H" /opt/onload/sbin/shrub_controller 4242 432
run_check --json
assert_eq "[shrub, path nowhere] still ready: a warning (exit 0)" 0 "$RC"
assert_eq "[shrub, path nowhere] the condition is not met, a warning" "False warn" \
  "$(json '" ".join(str([c for c in j["inventories"][0]["conditions"] if c["name"] == "shrub_controller"][0][k]) for k in ("met","state"))')"
assert_eq "[shrub, path nowhere] its named file exists and names a path that does not" \
  "True /opt/onload/sbin/shrub_controller False" \
  "$(json '" ".join(str([c for c in j["inventories"][0]["conditions"] if c["name"] == "shrub_controller"][0]["named_in"][0][k]) for k in ("exists","names","names_exists"))')"
assert_contains "[shrub, path nowhere] why names the file, the path and the host root" \
  "$(json '[c for c in j["inventories"][0]["conditions"] if c["name"] == "shrub_controller"][0]["why"]')" \
  "$H/sys/module/onload/parameters/shrub_controller_path names /opt/onload/sbin/shrub_controller, which does not exist under $H: every container that uses shrub_controller fails"
assert_eq "[shrub, path nowhere] the client group 4242, mode 0660: required, a warning, per feature" \
  "onload:4242:0660:True:warn zf:4242:0660:True:warn" \
  "$(json '" ".join("%s:%s:%s:%s:%s" % (g["feature"], g["gid"], g["mode"], g["required"], g["state"]) for g in j["inventories"][0]["groups"])')"
sim_shrub "$H" /usr/sbin/shrub_controller
run_check --json
assert_eq "[shrub, installed] exit 0, the condition met by the controller" "0 True ok $H/usr/sbin/shrub_controller" \
  "$RC $(json '" ".join(str([c for c in j["inventories"][0]["conditions"] if c["name"] == "shrub_controller"][0][k]) for k in ("met","state","by"))')"
assert_eq "[shrub, installed] /run/onload will be created when a container asks (both features)" \
  "onload:True:info zf:True:info" \
  "$(json '" ".join("%s:%s:%s" % (f["name"], e["create"], e["state"]) for f in j["inventories"][0]["features"] for e in f["entries"] if e["create_if"] == "shrub_controller")')"
assert_eq "[shrub, installed] no group needed: gid 0" "info info" \
  "$(json '" ".join(g["state"] for g in j["inventories"][0]["groups"])')"
check "[shrub, installed] check created nothing" test ! -e "$H/run/onload"
rm -f "$H"/sys/module/onload/parameters/shrub_controller_* "$H/usr/sbin/shrub_controller"
[[ $HAD_SBIN == 1 ]] || rm -f "$H/sbin"

# --- what makes it not ready ----------------------------------------------------
echo "# --- not ready: no NIC"
mv "$H/sys/bus/pci/devices/0000:01:00.0" "$T/nic"
run_check --json
assert_eq "[no NIC] exit 1" 1 "$RC"
assert_eq "[no NIC] ready false, both features fail" "False fail fail" \
  "$(json 'j["ready"], j["inventories"][0]["features"][0]["state"], j["inventories"][0]["features"][1]["state"]')"
NO_NIC="no NIC of PCI vendor 0x1924 or 0x10ee in /sys/bus/pci/devices (the inventory's \"needs_nic\")"
assert_eq "[no NIC] the reason names it" "$CONF_DIR/onload.json: feature onload: $NO_NIC" "$(json 'j["reasons"][0]')"
# The device plugin decides with the same function: unhealthy, the same line.
if [[ -n ${OCID_PLUGIN:-} && -x ${OCID_PLUGIN:-} ]]; then
  CHECK_WHY=$(json 'j["inventories"][0]["features"][0]["reasons"][-1]')
  OUT=$("$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "$H" resources --json 2>/dev/null)
  assert_eq "[no NIC] resources --json: onload, zf and onloadzf unhealthy with check's line" \
    "amd/onload False $CHECK_WHY|amd/zf False $CHECK_WHY|amd/onloadzf False $CHECK_WHY" \
    "$(json '"|".join("%s %s %s" % (r["nomad"], r["healthy"], r.get("why")) for r in j)')"
  mv "$T/nic" "$H/sys/bus/pci/devices/0000:01:00.0"
  OUT=$("$OCID_PLUGIN" --config-dir "$CONF_DIR" --host-root "$H" resources --json 2>/dev/null)
  assert_eq "[NIC back] resources --json: healthy, served by the NIC on NUMA node 1" \
    "amd/onload True 0000:01:00.0:1|amd/zf True 0000:01:00.0:1|amd/onloadzf True 0000:01:00.0:1" \
    "$(json '"|".join("%s %s %s" % (r["nomad"], r["healthy"], ",".join("%s:%s" % (n["address"], n["numa_node"]) for n in r["nics"])) for r in j)')"
else
  echo "# skip: the device plugin is not built (OCID_PLUGIN unset): resources --json not compared"
  mv "$T/nic" "$H/sys/bus/pci/devices/0000:01:00.0"
fi

echo "# --- not ready: a required file missing"
mv "$H/usr/bin/zf_stackdump" "$T/zf_stackdump"
run_check --json
assert_eq "[zf_stackdump missing] exit 1" 1 "$RC"
assert_eq "[zf_stackdump missing] onload ok, zf fails" "ok fail False" \
  "$(json '" ".join(str(x) for x in [j["inventories"][0]["features"][0]["state"], j["inventories"][0]["features"][1]["state"], j["inventories"][0]["features"][1]["plan_builds"]])')"
assert_eq "[zf_stackdump missing] the entry names the paths tried (onload.json's and AMD's /opt layout)" \
  "['$H/usr/bin/zf_stackdump', '$H/opt/onload/usr/bin/zf_stackdump']" \
  "$(json '[e["tried"] for e in j["inventories"][0]["features"][1]["entries"] if e["state"] == "fail"][0]')"
run_check
assert_match "[zf_stackdump missing] the table: FAIL feature zf with the reason" "$OUT" \
  "^FAIL +feature +zf +required binaries entry of feature \"zf\" not found on the host .*$H/usr/bin/zf_stackdump"
mv "$T/zf_stackdump" "$H/usr/bin/zf_stackdump"

echo "# --- a library only root can read: a warning, still ready"
chmod 0600 "$H/usr/lib64/libonload.so"
run_check --json
assert_eq "[0600 library] exit 0" 0 "$RC"
assert_contains "[0600 library] feature onload warns, naming the file and mode" \
  "$(json 'j["inventories"][0]["features"][0]["state"] + " " + j["inventories"][0]["features"][0]["warnings"][0]')" \
  "warn $H/usr/lib64/libonload.so: only its owner or group can read it (mode 0600, owner 0:0)"
chmod 0755 "$H/usr/lib64/libonload.so"

# --- delivery modes -----------------------------------------------------------------
echo "# --- delivery modes"
rm "$HOOKS/oci-decorator-prestart.json"
run_check --json
assert_eq "[no delivery mode] exit 1" 1 "$RC"
assert_contains "[no delivery mode] the reason says so" "$(json 'j["reasons"]')" "no delivery mode is set up"

mkdir -p "$H/etc/docker"
echo '{"log-level": "warn", "runtimes": {"oci-decorator": {"path": "/usr/bin/oci-decorator-runtime"}}}' >"$H/etc/docker/daemon.json"
run_check --json
assert_eq "[docker shim] exit 0" 0 "$RC"
assert_eq "[docker shim] the runtime is set up" "docker oci-decorator True" \
  "$(json '" ".join(str(j["delivery"]["runtimes"][0][k]) for k in ("engine","name","set_up"))')"
assert_eq "[docker shim] docker's default runtime: runc, not the shim" "runc False" \
  "$(json '" ".join(str(j["delivery"]["docker_default_runtime"][k]) for k in ("name","shim"))')"
echo '{"default-runtime": "oci-decorator", "runtimes": {"oci-decorator": {"path": "/usr/bin/oci-decorator-runtime"}}}' >"$H/etc/docker/daemon.json"
rm -f "$H/usr/sbin/runc"
run_check --json
assert_eq "[docker shim as the default, no runc on the host] exit 1: every container would fail" 1 "$RC"
assert_contains "[docker shim as the default, no runc on the host] the reason" "$(json 'j["reasons"]')" \
  "docker's default runtime oci-decorator is the runtime shim, which would fail every container: the runtime it runs, $H/usr/sbin/runc, does not exist"
mkdir -p "$H/usr/sbin" && : >"$H/usr/sbin/runc"
run_check --json
assert_eq "[docker shim as the default] exit 0" 0 "$RC"
assert_eq "[docker shim as the default] reported" "oci-decorator True" \
  "$(json '" ".join(str(j["delivery"]["docker_default_runtime"][k]) for k in ("name","shim"))')"
run_check
assert_contains "[docker shim as the default] the table says plain docker run reaches it" "$OUT" \
  "default runtime oci-decorator: the runtime shim (plain \`docker run\` reaches it)"
echo '{"runtimes": {"oci-decorator": {"path": "/usr/libexec/oci/hooks.d/oci-decorator"}}}' >"$H/etc/docker/daemon.json"
run_check --json
assert_eq "[docker, the hook's own name] exit 1: it would not run as the shim" 1 "$RC"
assert_contains "[docker, the hook's own name] the problem" "$(json 'j["delivery"]["runtimes"][0]["problem"]')" "not oci-decorator-runtime"
rm "$H/etc/docker/daemon.json"

mkdir -p "$H/etc/containerd/conf.d"
printf '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-decorator.options]\n  BinaryName = "/usr/bin/oci-decorator-runtime"\n' \
  >"$H/etc/containerd/conf.d/oci-decorator.toml"
run_check --json
assert_eq "[containerd drop-in, not imported] exit 1" 1 "$RC"
assert_contains "[containerd drop-in, not imported] says why" "$(json 'j["delivery"]["runtimes"][0]["problem"]')" "does not import it"
printf 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n' >"$H/etc/containerd/config.toml"
run_check --json
assert_eq "[containerd drop-in, imported] exit 0" 0 "$RC"
rm -r "$H/etc/containerd"

echo "# --- CDI specs: current, then stale"
mkdir -p "$H/etc/cdi"
"$OCID_BIN" --config-dir "$CONF_DIR" --host-root "$H" cdi generate --output-dir "$H/etc/cdi" 2>"$T/cdi.err"
check "cdi generate wrote the spec" test -f "$H/etc/cdi/oci-decorator-onload.json"
run_check --json
assert_eq "[current CDI spec, nothing else] exit 0" 0 "$RC"
assert_eq "[current CDI spec] state current, inventory delivered" "current True" \
  "$(json 'j["inventories"][0]["cdi"][0]["state"], j["inventories"][0]["delivered"]')"
check "cdi generate wrote the onload device's preload file" test -f "$H/etc/cdi/oci-decorator-onload.onload.preload"
# A preload file gone or edited: the spec alone is not current.
mv "$H/etc/cdi/oci-decorator-onload.onload.preload" "$T/preload.keep"
run_check --json
assert_eq "[CDI spec without its preload file] exit 1, stale, says which file" \
  "1 stale its preload file /etc/cdi/oci-decorator-onload.onload.preload is missing" \
  "$RC $(json 'j["inventories"][0]["cdi"][0]["state"], j["inventories"][0]["cdi"][0]["reason"].split(":")[0]')"
echo /tmp/other.so >"$H/etc/cdi/oci-decorator-onload.onload.preload"
run_check --json
assert_eq "[CDI spec with an edited preload file] stale" "stale" "$(json 'j["inventories"][0]["cdi"][0]["state"]')"
mv "$T/preload.keep" "$H/etc/cdi/oci-decorator-onload.onload.preload"
run_check --json
assert_eq "[preload file back] current again" "0 current" "$RC $(json 'j["inventories"][0]["cdi"][0]["state"]')"
# Others can write the spec, another user owns the preload file, others can
# change the directory: unsafe, a failure naming the file, owner and mode.
chmod 0666 "$H/etc/cdi/oci-decorator-onload.json"
run_check --json
assert_eq "[0666 CDI spec] exit 1, unsafe, names the file, its owner and mode" \
  "1 unsafe /etc/cdi/oci-decorator-onload.json is writable by others (owner 0, mode 0666)" \
  "$RC $(json 'j["inventories"][0]["cdi"][0]["state"], j["inventories"][0]["cdi"][0]["reason"]')"
chmod 0644 "$H/etc/cdi/oci-decorator-onload.json"
chown 65534:65534 "$H/etc/cdi/oci-decorator-onload.onload.preload"
run_check --json
assert_eq "[foreign-owned preload file] exit 1, unsafe, names it" \
  "1 unsafe its preload file /etc/cdi/oci-decorator-onload.onload.preload belongs to another user (owner 65534, mode 0644)" \
  "$RC $(json 'j["inventories"][0]["cdi"][0]["state"], j["inventories"][0]["cdi"][0]["reason"]')"
chown 0:0 "$H/etc/cdi/oci-decorator-onload.onload.preload"
chmod 1777 "$H/etc/cdi"
run_check
assert_eq "[CDI dir others can write] exit 1" 1 "$RC"
assert_match "[CDI dir others can write] a FAIL row naming the directory, owner and mode" "$OUT" \
  "^FAIL +cdi +/etc/cdi/oci-decorator-onload.json +unsafe: directory /etc/cdi is writable by others \(owner 0, mode 1777\)"
chmod 0755 "$H/etc/cdi"
run_check --json
assert_eq "[safe again] current" "0 current" "$RC $(json 'j["inventories"][0]["cdi"][0]["state"]')"
# Issue 27, finding 5: /etc/cdi a link root made into a directory another
# user owns. check judged the path's prefixes (/etc/cdi, /etc: root's) and
# called it current; the writer walks the real ancestors (/srv/u: the
# user's) and refuses. Now both say so, in the same words.
mkdir -p "$H/srv/u"
mv "$H/etc/cdi" "$H/srv/u/cdi"
chown 65534:65534 "$H/srv/u"
ln -s ../srv/u/cdi "$H/etc/cdi"
run_check --json
assert_eq "[/etc/cdi a root link into another user's directory] exit 1, unsafe, the real ancestor named" \
  "1 unsafe directory /srv/u belongs to another user (owner 65534, mode 0755): others can replace its specs" \
  "$RC $(json 'j["inventories"][0]["cdi"][0]["state"], j["inventories"][0]["cdi"][0]["reason"]')"
gen_rc=0
"$OCID_BIN" --config-dir "$CONF_DIR" --host-root "$H" cdi generate --output-dir "$H/etc/cdi" \
  2>"$T/cdi.err" || gen_rc=$?
assert_eq "[/etc/cdi a root link into another user's directory] cdi generate refuses it, in the same words" \
  "1 directory $H/srv/u belongs to another user (owner 65534, mode 0755)" \
  "$gen_rc $(grep -o "directory $H/srv/u belongs to another user (owner 65534, mode 0755)" "$T/cdi.err")"
rm "$H/etc/cdi"
mv "$H/srv/u/cdi" "$H/etc/cdi"
rm -r "$H/srv"
run_check --json
assert_eq "[link gone] current again" "0 current" "$RC $(json 'j["inventories"][0]["cdi"][0]["state"]')"
# The library is upgraded: the spec names the old file.
mv "$H/usr/lib64/libonload_ext.so.1.2.0" "$H/usr/lib64/libonload_ext.so.1.2.1"
ln -sfn libonload_ext.so.1.2.1 "$H/usr/lib64/libonload_ext.so.1"
run_check --json
assert_eq "[stale CDI spec, nothing else] exit 1" 1 "$RC"
assert_eq "[stale CDI spec] state stale, path" "stale /etc/cdi/oci-decorator-onload.json" \
  "$(json 'j["inventories"][0]["cdi"][0]["state"], j["inventories"][0]["cdi"][0]["path"]')"
run_check
assert_match "[stale CDI spec] the table warns with the file" "$OUT" "^WARN +cdi +/etc/cdi/oci-decorator-onload.json +stale: "
add_hooks_entry
run_check
assert_eq "[stale CDI spec, hooks.d entry] exit 0: the stale spec only warns" 0 "$RC"
chmod 0666 "$H/etc/cdi/oci-decorator-onload.json"
run_check
assert_eq "[0666 CDI spec, hooks.d entry] exit 1: an unsafe spec fails whatever else delivers" 1 "$RC"
chmod 0644 "$H/etc/cdi/oci-decorator-onload.json"

# --- the version lock ---------------------------------------------------------------
echo "# --- the version lock"
jq '. + {"version_lock": {"enforce": true, "module_version": "/sys/module/onload/version",
                           "library": ["/usr/lib64/libonload.so"], "features": ["onload"]}}' \
  "$CONF_DIR/onload.json" >"$T/onload.json" && cat "$T/onload.json" >"$CONF_DIR/onload.json"
# The simulated libonload.so rebuilt as release 9.2.0.43 with the build
# profile "cloud": its banner "Onload 9.2.0.43 cloud\nCopyright ..." as Onload
# writes it (sim_libonload.c); make_sim's loaded module (sys/module/onload)
# removed: no module loaded.
cc -shared -fPIC -O2 -DSIM_VERSION='"9.2.0.43"' -DSIM_BUILD_PROFILE='"cloud"' \
  -o "$H/usr/lib64/libonload.so" "$SRC/test/fixtures/sim_libonload.c" || die "cc of sim_libonload.c failed"
rm -rf "$H/sys/module/onload"
run_check --json
assert_eq "[version, no module loaded] exit 0: unknown only warns" 0 "$RC"
assert_eq "[version, no module loaded] unknown, onload warns" "unknown warn" \
  "$(json 'j["inventories"][0]["version_lock"]["state"], j["inventories"][0]["features"][0]["state"]')"
sim_module_version "$H" 9.2.0.43 cloud   # "9.2.0.43 cloud\n"
run_check --json
assert_eq "[version match] exit 0" 0 "$RC"
assert_eq "[version match] both versions and paths" "match|9.2.0.43 cloud|$H/sys/module/onload/version|9.2.0.43 cloud|$H/usr/lib64/libonload.so" \
  "$(json '"|".join(j["inventories"][0]["version_lock"][k] for k in ("state","module_version","module_path","library_version","library_path"))')"
run_check
assert_match "[version match] the table quotes both versions" "$OUT" \
  "^OK +version +$H/sys/module/onload/version +module \"9.2.0.43 cloud\", library \"9.2.0.43 cloud\" .*match, enforced"
sim_module_version "$H" 9.2.0.43   # the same release without the profile: "9.2.0.43 \n"
run_check --json
assert_eq "[version mismatch, enforced] exit 1" 1 "$RC"
assert_eq "[version mismatch, enforced] onload fails, zf (not guarded) does not" "mismatch fail ok" \
  "$(json 'j["inventories"][0]["version_lock"]["state"], j["inventories"][0]["features"][0]["state"], j["inventories"][0]["features"][1]["state"]')"
run_check
assert_match "[version mismatch, enforced] the table names both versions" "$OUT" \
  "^FAIL +version +$H/sys/module/onload/version +module \"9.2.0.43\", library \"9.2.0.43 cloud\" .*mismatch, enforced"
cp "$SRC/config/onload.json" "$CONF_DIR/onload.json"
rm -r "$H/sys/module/onload"

# --- bad input ------------------------------------------------------------------------
echo "# --- bad input: exit 2"
run_check --bogus
assert_eq "[unknown option] exit 2" 2 "$RC"
RC=0; "$OCID_BIN" --config-dir "$H/usr/bin/onload" --host-root "$H" check --binary "$SELF" >/dev/null 2>"$T/check.err" || RC=$?
assert_eq "[config dir is a file] exit 2" 2 "$RC"
assert_contains "[config dir is a file] one line naming it" "$(cat "$T/check.err")" "$H/usr/bin/onload"
RC=0; "$OCID_BIN" --config-dir "$CONF_DIR" --host-root "$T/nonexistent" check >/dev/null 2>"$T/check.err" || RC=$?
assert_eq "[host root missing] exit 2" 2 "$RC"
RC=0; "$OCID_BIN" --config-dir "$CONF_DIR" --host-root "$H" check --binary /usr/bin/nothing-here >/dev/null 2>"$T/check.err" || RC=$?
ERR=$(cat "$T/check.err")
assert_eq "[--binary missing] exit 2" 2 "$RC"
assert_contains "[--binary missing] names it" "$ERR" "$H/usr/bin/nothing-here"
RC=0; "$OCID_BIN" --config-dir "$T/no-such-dir" --host-root "$H" check --binary "$SELF" --json >"$T/out.json" 2>&1 || RC=$?
assert_eq "[no config dir] exit 1: no inventories, not ready" 1 "$RC"

# --- the real host ----------------------------------------------------------------------
echo "# --- the real host"
RC=0
OUT=$("$OCID_BIN" check --json 2>"$T/check.err") || RC=$?
check "[real host] exit 0 or 1 (was $RC: $(head -c 300 "$T/check.err"))" test "$RC" -eq 0 -o "$RC" -eq 1
assert_eq "[real host] valid JSON, version 1, ready a bool matching the exit code" "1 $([[ $RC -eq 0 ]] && echo True || echo False)" \
  "$(json 'j["version"], j["ready"]')"
RC=0
"$OCID_BIN" check >"$T/table.out" 2>&1 || RC=$?
check "[real host] the table: exit 0 or 1" test "$RC" -eq 0 -o "$RC" -eq 1
assert_match "[real host] the table has its header and verdict" "$(head -1 "$T/table.out") $(grep -c READY "$T/table.out")" "^STATE +CHECK +SUBJECT +DETAIL [1-9]"

it_finish
