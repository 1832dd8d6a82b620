#!/usr/bin/python3
"""Kubernetes mode of oci-decorator-device-plugin: idle CPU, with and without
a kubelet (run as root: the simulated Onload install needs mknod).

  sudo bench/plugin_idle.py --plugin build/src/plugin/oci-decorator-device-plugin [--window 60]

Builds a simulated Onload install (scripts/sim-onload.sh) in a temp dir and
measures the plugin's CPU time (utime + stime from /proc/PID/stat) over
WINDOW seconds with nothing happening, in two states, each a fresh plugin:
  - no kubelet: the kubelet directory is there, kubelet.sock is not (every
    kubelet restart; a plugin that starts first);
  - kubelet: the kubelet stand-in (test/standins/kubelet_standin.py) serves
    kubelet.sock, the resources are registered and their ListAndWatch
    streams open.
The plugin runs with --health-file, as the DaemonSet runs it. Prints one
"name value" line each: CPU seconds per minute and % of one core.
--old PATH measures a second binary the same way (say, a build of the
commit before), interleaved with the first. Not a test: nothing is asserted.
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


def measure(binary, tmp, tag, with_kubelet, window, health):
    host, conf = os.path.join(tmp, "host"), os.path.join(tmp, "conf")
    kdir = os.path.join(tmp, "kubelet-" + tag)
    os.makedirs(kdir)
    k = None
    if with_kubelet:
        k = ks.Kubelet(ks.Api(), kdir)
        k.start()
    cmd = [binary, "--config-dir", conf, "--host-root", host, "--log-level", "warn",
           "kubernetes", "--kubelet-dir", kdir]
    if health:
        cmd += ["--health-file", os.path.join(tmp, "run-" + tag, "health")]
    plugin = subprocess.Popen(cmd, env={})
    try:
        if k:
            names, deadline = set(), time.time() + 15
            while len(names) < 2 and time.time() < deadline:
                req, _ = k.next_registration(1)
                if req is not None:
                    names.add(req.resource_name)
            if len(names) < 2:
                sys.exit("plugin_idle.py: %s did not register with the stand-in" % binary)
        time.sleep(1)
        hz = os.sysconf("SC_CLK_TCK")
        t0, _ = ks.proc_cpu_rss(plugin.pid)
        time.sleep(window)
        t1, _ = ks.proc_cpu_rss(plugin.pid)
        return (t1 - t0) / hz
    finally:
        plugin.terminate()
        try:
            plugin.wait(10)
        except subprocess.TimeoutExpired:
            plugin.kill()
            plugin.wait()
        if k:
            k.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", default=os.path.join(REPO, "build", "src", "plugin",
                                                     "oci-decorator-device-plugin"))
    ap.add_argument("--old", default="", help="a second binary, measured the same way")
    ap.add_argument("--window", type=int, default=60, help="seconds per measurement")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("plugin_idle.py: run as root (the simulated install needs mknod)")
    tmp = tempfile.mkdtemp(prefix="ocid-pidle.")
    try:
        os.makedirs(os.path.join(tmp, "conf"))
        subprocess.run(["bash", os.path.join(REPO, "scripts", "sim-onload.sh"),
                        os.path.join(tmp, "host")], check=True, stderr=subprocess.DEVNULL)
        shutil.copy(os.path.join(REPO, "config", "onload.json"), os.path.join(tmp, "conf"))
        binaries = [("new", args.plugin, True)]
        if args.old:
            # A binary from before --health-file is run without it.
            binaries.append(("old", args.old, False))
        print("window_s %d" % args.window)
        for state, with_kubelet in (("no_kubelet", False), ("kubelet", True)):
            for name, binary, health in binaries:
                cpu = measure(binary, tmp, "%s-%s" % (name, state), with_kubelet, args.window,
                              health)
                print("%s_%s_cpu_s_per_min %.2f (%.2f%% of one core)"
                      % (name, state, cpu * 60.0 / args.window, 100.0 * cpu / args.window),
                      flush=True)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
