#!/bin/bash
# bench/memory.sh: the hook's peak memory against the size of its input.
#
# A 32 MiB config.json (the cap for a container that asks) made of millions
# of tiny env entries, once naming OCI_ONLOAD (parsed: only the entries the
# inventories can use are kept) and once not (scanned in chunks, never
# parsed); and a 64 MiB state of a million annotations. Each is compared with
# the same hook on a small config.json that asks (the baseline: the static
# binary's own footprint). The hook stops after parsing and planning (the
# state has no pid), which is where its memory peaks. No root needed.
#
# Prints a markdown table (peak RSS from wait4's ru_maxrss). Needs python3.
#
# Then, when the device plugin is built (PLUGIN_BIN, default
# build/src/plugin/oci-decorator-device-plugin) and this runs as root (the
# simulated Onload install needs mknod): the plugin's RSS in each mode at
# the default 64 slots and at the bound, 1024, driven by the stand-ins of
# test/standins/ as a node would (kubernetes: registered, ListAndWatch open,
# 200 Allocates; nomad: SetConfig, Fingerprint and Stats open, 200
# Reserves), after 3 s idle; and the size of one Stats message.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
OCID_BIN=${OCID_BIN:-$REPO/build/oci-decorator}
[[ -x $OCID_BIN ]] || { echo "memory.sh: build first (OCID_BIN=$OCID_BIN)" >&2; exit 1; }
W=$(mktemp -d /tmp/ocid-mem.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -m 0755 "$W/conf" "$W/host" "$W/small" "$W/asks" "$W/quiet"
install -m 0644 "$REPO/config/onload.json" "$W/conf/onload.json"

python3 - "$OCID_BIN" "$W" <<'PY'
import json, os, resource, subprocess, sys
binary, w = sys.argv[1], sys.argv[2]
MiB = 1 << 20

def config(path, env_entries):
    # (written, then dropped: see peak_rss)
    with open(path, "w") as f:
        f.write('{"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "process": {"env": [')
        f.write(env_entries)
        f.write(']}}')
    return os.path.getsize(path)

def tiny_env(total, last):
    n = (total - 200) // 6          # '"A=1",' is 6 bytes
    return '"A=1",' * n + '"%s"' % last

def state(bundle, extra=""):
    return '{"ociVersion": "1.0.2", "id": "mem", "status": "creating", "bundle": "%s"%s}' % (bundle, extra)

def peak_rss(state_text):
    # Measured from a fresh, small process: a child's ru_maxrss also counts
    # what it had mapped before its exec, and this one has held the inputs.
    with open(w + "/state.json", "w") as f:
        f.write(state_text)
    del state_text
    out = subprocess.run([sys.executable, "-c", MEASURE, binary, w], check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]), int(out[1])

MEASURE = """
import os, subprocess, sys
binary, w = sys.argv[1], sys.argv[2]
with open(w + "/state.json") as f:
    p = subprocess.Popen([binary, "--config-dir", w + "/conf", "--host-root", w + "/host",
                          "--state-dir", w + "/state", "hook", "prestart"],
                         stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
print(ru.ru_maxrss * 1024, os.waitstatus_to_exitcode(status))
"""

rows = []
small = config(w + "/small/config.json", '"OCI_ONLOAD=all"')
base, rc = peak_rss(state(w + "/small"))
rows.append(("small config.json that asks (baseline)", small, base, rc))
big = config(w + "/asks/config.json", tiny_env(32 * MiB, "OCI_ONLOAD=all"))
rss, rc = peak_rss(state(w + "/asks"))
rows.append(("32 MiB config.json, 5.6M env entries, asks", big, rss, rc))
quiet = config(w + "/quiet/config.json", tiny_env(32 * MiB, "B=2"))
rss, rc = peak_rss(state(w + "/quiet"))
rows.append(("32 MiB config.json, 5.6M env entries, does not ask", quiet, rss, rc))
ann = ', "annotations": {' + ",".join('"k%d": "v"' % i for i in range(1000000)) + '}'
size = len(ann) + 100
rss, rc = peak_rss(state(w + "/small", ann))
del ann
rows.append(("%.0f MiB state, 1M annotations, config.json asks" % (size / MiB), size, rss, rc))

print("| input | size | peak RSS | over baseline, per input byte | exit |")
print("|---|---:|---:|---:|---:|")
for name, size, rss, rc in rows:
    extra = (rss - base) / size if size > small else 0.0
    print("| %s | %.1f MiB | %.1f MiB | %.2f | %d |" % (name, size / MiB, rss / MiB, extra, rc))
PY

PLUGIN_BIN=${PLUGIN_BIN:-$REPO/build/src/plugin/oci-decorator-device-plugin}
if [[ ! -x $PLUGIN_BIN ]]; then
  echo "(device plugin: not built, PLUGIN_BIN=$PLUGIN_BIN; its table is left out)"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "(device plugin: needs root for the simulated Onload install; its table is left out)"
  exit 0
fi
bash "$REPO/scripts/sim-onload.sh" "$W/simhost" >/dev/null 2>&1
mkdir -m 0750 "$W/pconf" "$W/kubelet"
install -m 0644 "$REPO/config/onload.json" "$W/pconf/onload.json"
echo
/usr/bin/python3 - "$PLUGIN_BIN" "$W" "$REPO" <<'PY'
import os, subprocess, sys, time
binary, w, repo = sys.argv[1:4]
sys.path.insert(0, os.path.join(repo, "test", "standins"))
import kubelet_standin as ks   # noqa: E402
import nomad_standin as ns     # noqa: E402

def rss(pid):
    """(VmRSS, VmHWM) in MiB."""
    got = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                got[k] = int(v.split()[0]) / 1024
    return got["VmRSS"], got["VmHWM"]

def kubernetes(slots):
    api = ks.Api()
    kdir = os.path.join(w, "kubelet")
    for n in os.listdir(kdir):
        os.unlink(os.path.join(kdir, n))
    k = ks.Kubelet(api, kdir)
    k.start()
    p = subprocess.Popen([binary, "--config-dir", w + "/pconf", "--host-root", w + "/simhost",
                          "--log-level", "error", "kubernetes", "--kubelet-dir", kdir,
                          "--slots", str(slots)], env={})
    try:
        names, deadline = set(), time.time() + 10
        while len(names) < 2 and time.time() < deadline:
            req, _ = k.next_registration(1)
            if req is not None:
                names.add(req.resource_name)
        c = ks.PluginClient(api, os.path.join(kdir, "oci-decorator-amd.com_onload.sock"))
        for i in range(200):
            c.allocate_ids(["onload-%d" % (i % slots)])
        c.close()
        time.sleep(3)
        return rss(p.pid) + ("%d resources registered" % len(names),)
    finally:
        p.terminate()
        p.wait(10)
        k.stop()

def nomad(slots):
    api = ns.Api()
    p = ns.Plugin(binary, args=["--log-level", "error", "nomad"])
    try:
        p.handshake()
        api.call(p.channel, ns.BASE + ".BasePlugin", "SetConfig", msgpack_config=ns.cty_config(
            config_dir=w + "/pconf", host_root=w + "/simhost", slots=slots))
        fp = ns.Stream(api.stream(p.channel, ns.DEVICE + ".DevicePlugin", "Fingerprint"))
        st = ns.Stream(api.stream(p.channel, ns.DEVICE + ".DevicePlugin", "Stats",
                                  collection_interval={"seconds": 1}))
        first, stats = fp.next(10), st.next(10)
        for i in range(200):
            api.call(p.channel, ns.DEVICE + ".DevicePlugin", "Reserve", device_ids=["amd-onload-%d" % (i % slots)])
        time.sleep(3)
        groups = len(first.device_group) if first else 0
        return rss(p.proc.pid) + ("%d groups; a Stats message %.0f KiB" % (groups, stats.ByteSize() / 1024),)
    finally:
        p.kill()

print("| device plugin | slots | RSS | peak RSS | what |")
print("|---|---:|---:|---:|---|")
for mode, run in (("kubernetes", kubernetes), ("nomad", nomad)):
    for slots in (64, 1024):
        now, peak, what = run(slots)
        print("| %s | %d | %.1f MiB | %.1f MiB | %s |" % (mode, slots, now, peak, what))
PY
