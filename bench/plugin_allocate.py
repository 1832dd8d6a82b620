#!/usr/bin/python3
"""Kubernetes mode of oci-decorator-device-plugin: Allocate latency, idle
CPU and RSS (run as root: the simulated Onload install needs mknod).

  sudo bench/plugin_allocate.py --plugin build/src/plugin/oci-decorator-device-plugin

Builds a simulated Onload install (scripts/sim-onload.sh) in a temp dir,
starts the plugin on a temp kubelet dir with the kubelet stand-in
(test/standins/kubelet_standin.py) serving kubelet.sock, so registration and
the ListAndWatch streams are open as on a node. Then:
  - Allocate of one device, CALLS times through the stand-in's gRPC client
    (one channel, sequential): p50, p99, max;
  - idle CPU: utime+stime of the plugin over IDLE seconds with the streams
    open and nothing happening (/proc/PID/stat);
  - RSS: VmRSS after all that (/proc/PID/status).
Prints one "name value" line each. Not a test: nothing is asserted.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "test", "standins"))
import kubelet_standin as ks  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", default=os.path.join(REPO, "build", "src", "plugin",
                                                     "oci-decorator-device-plugin"))
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--idle", type=int, default=10)
    ap.add_argument("--allocate", default="both", choices=["cdi", "mounts", "both"])
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("plugin_allocate.py: run as root (the simulated install needs mknod)")
    tmp = tempfile.mkdtemp(prefix="ocid-pbench.")
    plugin = None
    k = None
    try:
        host, conf, kdir = (os.path.join(tmp, d) for d in ("host", "conf", "kubelet"))
        os.makedirs(conf)
        os.makedirs(kdir)
        subprocess.run(["bash", os.path.join(REPO, "scripts", "sim-onload.sh"), host],
                       check=True, stderr=subprocess.DEVNULL)
        shutil.copy(os.path.join(REPO, "config", "onload.json"), conf)
        api = ks.Api()
        k = ks.Kubelet(api, kdir)
        k.start()
        plugin = subprocess.Popen(
            [args.plugin, "--config-dir", conf, "--host-root", host, "--log-level", "warn",
             "kubernetes", "--kubelet-dir", kdir, "--allocate", args.allocate], env={})
        names = set()
        deadline = time.time() + 10
        while len(names) < 2 and time.time() < deadline:
            req, _ = k.next_registration(1)
            if req is not None:
                names.add(req.resource_name)
        if len(names) < 2:
            sys.exit("plugin_allocate.py: the plugin did not register amd.com/onload and amd.com/zf")
        sock = os.path.join(kdir, "oci-decorator-amd.com_onload.sock")
        c = ks.PluginClient(api, sock)
        for _ in range(100):
            c.allocate_ids(["onload-0"])
        lat = []
        for _ in range(args.calls):
            t0 = time.perf_counter()
            c.allocate_ids(["onload-0"])
            lat.append(time.perf_counter() - t0)
        c.close()
        lat.sort()
        pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1e3
        print("allocate_mode %s" % args.allocate)
        print("allocate_calls %d" % args.calls)
        print("allocate_p50_ms %.3f" % pct(0.50))
        print("allocate_p99_ms %.3f" % pct(0.99))
        print("allocate_max_ms %.3f" % (lat[-1] * 1e3))
        hz = os.sysconf("SC_CLK_TCK")
        time.sleep(1)
        t0, _ = ks.proc_cpu_rss(plugin.pid)
        time.sleep(args.idle)
        t1, rss = ks.proc_cpu_rss(plugin.pid)
        cpu = (t1 - t0) / hz
        print("idle_cpu_s %.2f (over %d s, %.2f%% of one core; 2 ListAndWatch streams open)"
              % (cpu, args.idle, 100.0 * cpu / args.idle))
        print("rss_mib %.1f" % (rss / 1024.0))
        return 0
    finally:
        if plugin and plugin.poll() is None:
            plugin.terminate()
            plugin.wait(10)
        if k:
            k.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
