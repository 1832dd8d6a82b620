#!/usr/bin/python3
"""Kubernetes mode of oci-decorator-device-plugin under an unprivileged touch
storm (issue 27): its CPU and what it reads while nobody touches /dev/onload
20 times a second (run as root: the simulated Onload install needs mknod).

  sudo bench/plugin_touch.py --plugin build/src/plugin/oci-decorator-device-plugin \\
      [--old OLD] [--window 10] [--rate 20]

Builds a simulated Onload install (scripts/sim-onload.sh) in a temp dir with
a loaded module of the library's version, and replaces its libonload.so with
a file laid out as the real one (test/unit/onload_version_fixture.h): 6.6 MB,
the version banner 590 KB in, so each version-lock read costs what it costs
on a node. Each binary runs as the DaemonSet runs it (`kubernetes
--cdi-dir`), a fresh plugin per measurement, and is measured over WINDOW
seconds twice:
  - idle: nothing happens (the baseline of the same run);
  - storm: a child process with uid and gid 65534 touches /dev/onload (0666,
    as on a real host) RATE times a second.
Prints one line per binary and state: CPU seconds (utime + stime from
/proc/PID/stat), bytes read (rchar from /proc/PID/io), and rebuilds (the
debug line per rebuild; "n/a" for a binary without it); then, per binary,
the storm's CPU over idle's, and with --old the new binary's storm CPU and
bytes over the old one's. Not a test: nothing is asserted.
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
NOBODY = 65534
VERSION = "0.0.0-sim "  # the simulated library's ONLOAD_VERSION (sim_libonload.c)


def real_sized_library(path, banner_at=589896, size=6639008):
    """A file with libonload.so's layout: the banner 590 KB into 6.6 MB."""
    banner = ("Onload " + VERSION + "\nCopyright (c) SIMULATED\nBuilt: SIMULATED\n").encode()
    filler = bytes((i * 131) % 251 for i in range(65536)).replace(b"O", b"o")
    with open(path + ".tmp", "wb") as f:
        f.write(b"\x7fELF")
        left = banner_at - 4
        while left > 0:
            f.write(filler[:min(left, len(filler))])
            left -= len(filler)
        f.write(banner + b"\0")
        left = size - banner_at - len(banner) - 1
        while left > 0:
            f.write(filler[:min(left, len(filler))])
            left -= len(filler)
    os.chmod(path + ".tmp", 0o755)
    os.replace(path + ".tmp", path)


def proc_cpu_read(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    rchar = 0
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            if line.startswith("rchar:"):
                rchar = int(line.split()[1])
    return ticks, rchar


def toucher(node, rate):
    """A child that drops to nobody and touches `node` `rate` times a second."""
    pid = os.fork()
    if pid:
        return pid
    try:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        while True:
            os.utime(node)  # utimensat(UTIME_NOW): write permission is enough
            time.sleep(1.0 / rate)
    finally:
        os._exit(1)


def rebuilds(log):
    with open(log, errors="replace") as f:
        n = sum(1 for line in f if "rebuilding the view (#" in line)
    return n


def measure(binary, tmp, tag, window, rate, storm):
    host, conf = os.path.join(tmp, "host"), os.path.join(tmp, "conf")
    kdir, cdi = os.path.join(tmp, "kubelet-" + tag), os.path.join(tmp, "cdi-" + tag)
    log = os.path.join(tmp, tag + ".log")
    os.makedirs(kdir)
    os.makedirs(cdi)
    cmd = [binary, "--config-dir", conf, "--host-root", host, "--log-level", "debug",
           "--recheck-interval", "3600", "kubernetes", "--kubelet-dir", kdir, "--cdi-dir", cdi]
    with open(log, "w") as out:
        plugin = subprocess.Popen(cmd, env={}, stdout=out, stderr=subprocess.STDOUT)
    child = 0
    try:
        time.sleep(1.5)  # started, first view built, specs written
        if plugin.poll() is not None:
            sys.exit("plugin_touch.py: %s exited at start (%s)" % (binary, log))
        hz = os.sysconf("SC_CLK_TCK")
        n0 = rebuilds(log)
        t0, r0 = proc_cpu_read(plugin.pid)
        if storm:
            child = toucher(os.path.join(host, "dev", "onload"), rate)
        time.sleep(window)
        t1, r1 = proc_cpu_read(plugin.pid)
        n1 = rebuilds(log)
        seen = n0 > 0  # a binary without the debug line never logs one
        return (t1 - t0) / hz, r1 - r0, (n1 - n0) if seen else None
    finally:
        if child:
            os.kill(child, 9)
            os.waitpid(child, 0)
        plugin.terminate()
        try:
            plugin.wait(10)
        except subprocess.TimeoutExpired:
            plugin.kill()
            plugin.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", default=os.path.join(REPO, "build", "src", "plugin",
                                                     "oci-decorator-device-plugin"))
    ap.add_argument("--old", default="", help="a second binary, measured the same way")
    ap.add_argument("--window", type=int, default=10, help="seconds per measurement")
    ap.add_argument("--rate", type=int, default=20, help="touches a second")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("plugin_touch.py: run as root (the simulated install needs mknod)")
    tmp = tempfile.mkdtemp(prefix="ocid-ptouch.")
    try:
        os.chmod(tmp, 0o755)  # nobody walks to host/dev/onload
        os.makedirs(os.path.join(tmp, "conf"))
        host = os.path.join(tmp, "host")
        subprocess.run(["bash", os.path.join(REPO, "scripts", "sim-onload.sh"), host],
                       check=True, stderr=subprocess.DEVNULL)
        os.makedirs(os.path.join(host, "sys", "module", "onload"))
        with open(os.path.join(host, "sys", "module", "onload", "version"), "w") as f:
            f.write(VERSION + "\n")
        real_sized_library(os.path.join(host, "usr", "lib64", "libonload.so"))
        os.chmod(os.path.join(host, "dev", "onload"), 0o666)
        shutil.copy(os.path.join(REPO, "config", "onload.json"), os.path.join(tmp, "conf"))
        binaries = [("new", args.plugin)]
        if args.old:
            binaries.append(("old", args.old))
        print("window_s %d rate_hz %d library 6.6 MB, banner at 590 KB" % (args.window, args.rate))
        got = {}
        for state, storm in (("idle", False), ("storm", True)):
            for name, binary in binaries:
                cpu, read, n = measure(binary, tmp, "%s-%s" % (name, state), args.window,
                                       args.rate, storm)
                got[(name, state)] = (cpu, read)
                print("%s_%s cpu_s %.2f (%.2f%% of one core) read_mb %.1f rebuilds %s"
                      % (name, state, cpu, 100.0 * cpu / args.window, read / 1e6,
                         "n/a" if n is None else n), flush=True)
        for name, _ in binaries:
            idle, storm = got[(name, "idle")][0], got[(name, "storm")][0]
            print("%s storm/idle cpu %s" % (name, "%.1f" % (storm / idle) if idle else
                                             "inf (idle 0.00 s)" if storm else "1 (both 0.00 s)"))
        if args.old:
            (nc, nr), (oc, orr) = got[("new", "storm")], got[("old", "storm")]
            print("storm new/old cpu %s read %s"
                  % ("%.3f" % (nc / oc) if oc else "n/a", "%.4f" % (nr / orr) if orr else "n/a"))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
