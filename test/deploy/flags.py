#!/usr/bin/python3
"""Every command line the deployment files give the device plugin is one the
plugin accepts: deploy/kubernetes/Dockerfile (ENTRYPOINT and CMD),
daemonset.yaml (the container's args after the image's ENTRYPOINT, and the
probes' exec commands).

Each command line is checked twice by the plugin itself ($OCID_PLUGIN):
  - each subcommand is one its --help lists, and each option one that the
    --help of the (sub)command it follows lists (CLI11 defers an unknown
    option's error until after --help, so the listing is the check);
  - the whole line with --help appended exits 0: CLI11 runs the options'
    validators (ranges, allowed values) before it prints help, so a value
    the plugin would refuse fails here without starting it.
Exit 0 when all hold; one line per failure. No root.
"""
import json
import os
import re
import shlex
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import finish, ok  # noqa: E402

SRC = os.environ.get("OCID_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DEPLOY = os.path.join(SRC, "deploy", "kubernetes")
PLUGIN = os.environ.get("OCID_PLUGIN", "")
NAME = "oci-decorator-device-plugin"


def run(args):
    r = subprocess.run([PLUGIN] + args, capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin"}, timeout=30)
    return r.returncode, r.stdout + r.stderr


def help_of(path):
    """(options {name: takes_value}, subcommands) from `PLUGIN path... --help`."""
    rc, out = run(path + ["--help"])
    if rc != 0:
        return None
    options, subcommands, section = {}, set(), None
    for line in out.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1]
            continue
        if section == "Options":
            m = re.match(r"^\s+(?:-\w,\s*)?(--[\w-]+)(?:,\s*-\w)?(\s+[A-Z]+)?", line)
            if m:
                options[m.group(1)] = m.group(2) is not None
        elif section == "Subcommands":
            m = re.match(r"^\s+([\w-]+)\s", line)
            if m:
                subcommands.add(m.group(1))
    return options, subcommands


def check_line(argv, where):
    """argv: the plugin's arguments (no program name)."""
    text = " ".join(shlex.quote(a) for a in argv)
    top = help_of([])
    if not ok(top is not None, "%s: %s --help fails" % (where, NAME)):
        return
    options, subcommands = top
    path, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("-"):
            name = a.split("=", 1)[0]
            if not ok(name in options, "%s: %s is not an option of `%s`" %
                      (where, name, " ".join([NAME] + path))):
                return
            i += 2 if options[name] and "=" not in a else 1
            continue
        if not ok(not path and a in subcommands, "%s: %r is not a subcommand of %s (%s)" %
                  (where, a, NAME, ", ".join(sorted(subcommands)))):
            return
        path = [a]
        sub = help_of(path)
        if not ok(sub is not None, "%s: %s %s --help fails" % (where, NAME, a)):
            return
        options = sub[0]
        i += 1
    ok(path != [], "%s: no subcommand in `%s`" % (where, text))
    rc, out = run(argv + ["--help"])
    ok(rc == 0, "%s: the plugin refuses `%s`: %s" % (where, text, out.strip().splitlines()[-1:]))


def dockerfile():
    """ENTRYPOINT and CMD of the Dockerfile, as exec-form lists."""
    found = {}
    with open(os.path.join(DEPLOY, "Dockerfile")) as f:
        for line in f:
            m = re.match(r"^(ENTRYPOINT|CMD)\s+(\[.*\])\s*$", line)
            if m:
                found[m.group(1)] = json.loads(m.group(2))
    return found.get("ENTRYPOINT", []), found.get("CMD", [])


if not PLUGIN or not os.access(PLUGIN, os.X_OK):
    print("FAIL - OCID_PLUGIN is not the device plugin's binary: %r" % PLUGIN)
    sys.exit(1)

entrypoint, cmd = dockerfile()
ok(entrypoint[:1] == ["/usr/bin/" + NAME], "the Dockerfile's ENTRYPOINT runs /usr/bin/%s" % NAME)
ok(cmd != [], "the Dockerfile has a CMD")
check_line(entrypoint[1:] + cmd, "Dockerfile ENTRYPOINT+CMD")

with open(os.path.join(DEPLOY, "daemonset.yaml")) as f:
    ds = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "DaemonSet"][0]
containers = ds["spec"]["template"]["spec"]["containers"]
ok(len(containers) >= 1, "daemonset.yaml has a container")
for c in containers:
    command = c.get("command", entrypoint)
    args = c.get("args", cmd)
    ok(os.path.basename(command[0]) == NAME, "container %s runs %s" % (c["name"], NAME))
    check_line(command[1:] + args, "daemonset.yaml container %s (args after the image's ENTRYPOINT)"
               % c["name"])
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        ex = c.get(probe, {}).get("exec")
        if ex is None:
            continue
        argv = ex["command"]
        if ok(os.path.basename(argv[0]) == NAME, "%s runs %s: %s" % (probe, NAME, argv)):
            check_line(argv[1:], "daemonset.yaml %s" % probe)

# The DaemonSet mounts the kubelet's directory where the plugin looks by
# default, so another kubelet root changes the hostPath alone.
rc, out = run(["kubernetes", "--help"])
m = re.search(r"--kubelet-dir TEXT=(\S+)", out)
mounts = [vm["mountPath"] for c in containers for vm in c.get("volumeMounts", [])]
ok(m is not None and m.group(1) in mounts,
   "the DaemonSet mounts the kubelet directory at the plugin's --kubelet-dir default (%s; mounts %s)"
   % (m.group(1) if m else "?", mounts))

finish()
