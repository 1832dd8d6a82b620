#!/usr/bin/python3
"""The device plugin's container of deploy/kubernetes/daemonset.yaml, as the
kubelet hands it to a CRI runtime: a ContainerConfig (CRI's JSON mapping,
for test/cri/cri_client.py) and the volumes the kubelet would have set up
first, read from the manifest itself (and the Dockerfile's ENTRYPOINT, which
the runtime runs when the pod gives no `command`).

What the kubelet does, and where (kubernetes/kubernetes):
  - a volume's directory on the node is
      <kubelet root>/pods/<pod uid>/volumes/<plugin, '/' escaped as '~'>/<name>
    (pkg/kubelet/kubelet_getters.go getPodVolumeDir); an emptyDir is
    kubernetes.io~empty-dir, a configMap kubernetes.io~configmap;
  - volumeMounts become CRI Mounts (pkg/kubelet/kubelet_pods.go makeMounts,
    pkg/kubelet/kuberuntime/kuberuntime_container.go makeMounts):
    container_path, host_path, readonly (the mount's readOnly, or the
    volume's own: a configMap is always read-only, pkg/volume/configmap
    GetAttributes), recursive_read_only (recursiveReadOnly Enabled), and
    propagation (mountPropagation None/unset -> PROPAGATION_PRIVATE,
    HostToContainer -> PROPAGATION_HOST_TO_CONTAINER);
  - the securityContext becomes linux.security_context (readonly_rootfs,
    no_new_privs from allowPrivilegeEscalation: false, capabilities'
    drop_capabilities, seccomp RuntimeDefault), the memory limit
    linux.resources.memory_limit_in_bytes.
The runtime (containerd's CRI) then turns each Mount into an OCI bind mount
"rbind" plus "ro", or "rro" for recursive_read_only
(containerd v2.1.9 internal/cri/opts/spec_linux_opts.go:153-194).

Usage:
  daemonset_container.py --manifest daemonset.yaml --dockerfile Dockerfile
      --image REF --kubelet-root DIR --pod-uid UID
      --host-path /dev=$HOST/dev ... (every hostPath of the manifest, mapped)
      [--configmap]        the manifest's commented ConfigMap option, uncommented
      [--inventories-hostpath DIR]  ... or its commented hostPath option, at DIR
      [--inventories-writable]      that volume's mount without readOnly
      [--no-rro]           the old manifest's read-only mounts: readOnly alone
      [--disk-emptydir]    emptyDir volumes on disk (medium unset)
      --out-config FILE --out-volumes FILE
The volumes file has one line per volume the test must prepare:
  <kind> <name> <host dir> <medium or ->
with kind emptyDir, configMap or hostPath.
"""
import argparse
import json
import re
import sys

import yaml

PLUGIN_DIRS = {"emptyDir": "kubernetes.io~empty-dir", "configMap": "kubernetes.io~configmap"}
PROPAGATION = {None: "PROPAGATION_PRIVATE", "None": "PROPAGATION_PRIVATE",
               "HostToContainer": "PROPAGATION_HOST_TO_CONTAINER",
               "Bidirectional": "PROPAGATION_BIDIRECTIONAL"}


def die(msg):
    print("daemonset_container.py: " + msg, file=sys.stderr)
    sys.exit(2)


def entrypoint(dockerfile):
    with open(dockerfile) as f:
        for line in f:
            m = re.match(r"^ENTRYPOINT\s+(\[.*\])\s*$", line)
            if m:
                return json.loads(m.group(1))
    die("no exec-form ENTRYPOINT in " + dockerfile)


def commented_options(text):
    """The manifest's optional inventories volume, as it offers it in
    comments: the volumeMount line and the two volumes (configMap, hostPath)."""
    mount = re.search(r"^\s*# (- \{name: inventories, .*\})\s*$", text, re.M)
    cm = re.search(r"^\s*# - name: inventories\n\s*#   (configMap: \{.*\})\s*$", text, re.M)
    hp = re.search(r"^\s*# - name: inventories\n\s*#   (hostPath: \{.*\})\s*$", text, re.M)
    if not (mount and cm and hp):
        die("the manifest no longer offers the commented inventories volume and mount")
    load = lambda s: yaml.safe_load(s)  # noqa: E731
    return load(mount.group(1))[0], {"name": "inventories", **load(cm.group(1))}, \
        {"name": "inventories", **load(hp.group(1))}


def quantity(q):
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi)?", str(q))
    if not m:
        die("cannot read the quantity %r" % q)
    return int(m.group(1)) * {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}[m.group(2)]


def main():
    ap = argparse.ArgumentParser()
    for a in ("--manifest", "--dockerfile", "--image", "--kubelet-root", "--pod-uid",
              "--out-config", "--out-volumes"):
        ap.add_argument(a, required=True)
    ap.add_argument("--host-path", action="append", default=[])
    ap.add_argument("--configmap", action="store_true")
    ap.add_argument("--inventories-hostpath", default="")
    ap.add_argument("--inventories-writable", action="store_true")
    ap.add_argument("--no-rro", action="store_true")
    ap.add_argument("--disk-emptydir", action="store_true")
    a = ap.parse_args()

    text = open(a.manifest).read()
    ds = [d for d in yaml.safe_load_all(text) if d and d.get("kind") == "DaemonSet"]
    if len(ds) != 1:
        die("expected one DaemonSet in " + a.manifest)
    pod = ds[0]["spec"]["template"]["spec"]
    c = pod["containers"][0]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = list(c.get("volumeMounts", []))
    if a.configmap or a.inventories_hostpath:
        mount, cm, hp = commented_options(text)
        mount = dict(mount)
        if a.inventories_writable:
            mount.pop("readOnly", None)
        mounts.append(mount)
        if a.configmap:
            volumes["inventories"] = cm
        else:
            hp = {"name": "inventories", "hostPath": dict(hp["hostPath"])}
            a.host_path.append("%s=%s" % (hp["hostPath"]["path"], a.inventories_hostpath))
            volumes["inventories"] = hp
    host_map = dict(x.split("=", 1) for x in a.host_path)

    cri_mounts, prepared = [], []
    for m in mounts:
        v = volumes.get(m["name"]) or die("volumeMount %s has no volume" % m["name"])
        kinds = [k for k in ("emptyDir", "configMap", "hostPath") if k in v]
        if not kinds:
            die("volume %s: only emptyDir, configMap and hostPath are emulated" % v["name"])
        kind, medium = kinds[0], "-"
        if kind == "hostPath":
            path = v["hostPath"]["path"]
            if path not in host_map:
                die("hostPath %s is not mapped (--host-path %s=DIR)" % (path, path))
            host = host_map[path]
        else:
            host = "%s/pods/%s/volumes/%s/%s" % (a.kubelet_root, a.pod_uid, PLUGIN_DIRS[kind],
                                                 v["name"])
            if kind == "emptyDir" and not a.disk_emptydir:
                medium = (v["emptyDir"] or {}).get("medium") or "-"
        prepared.append("%s %s %s %s" % (kind, v["name"], host, medium))
        # A configMap volume is read-only whatever the mount says
        # (configmap.go GetAttributes: ReadOnly true; kubelet_pods.go
        # makeMounts: mustMountRO), unless the test asks for the negative case.
        read_only = bool(m.get("readOnly")) or (kind == "configMap" and not a.inventories_writable)
        rro = m.get("recursiveReadOnly") == "Enabled" and not a.no_rro
        cri_mounts.append({"container_path": m["mountPath"], "host_path": host,
                           "readonly": read_only, "recursive_read_only": rro,
                           "propagation": PROPAGATION[m.get("mountPropagation")]})

    sc = c.get("securityContext", {})
    security = {"readonly_rootfs": bool(sc.get("readOnlyRootFilesystem")),
                "no_new_privs": sc.get("allowPrivilegeEscalation") is False,
                "capabilities": {"drop_capabilities": sc.get("capabilities", {}).get("drop", [])}}
    if sc.get("seccompProfile", {}).get("type") == "RuntimeDefault":
        security["seccomp"] = {"profile_type": "RuntimeDefault"}
    resources = {}
    lim = c.get("resources", {}).get("limits", {}).get("memory")
    if lim is not None:
        resources["memory_limit_in_bytes"] = quantity(lim)
    config = {
        "metadata": {"name": c["name"]},
        "image": {"image": a.image},
        "command": c.get("command", entrypoint(a.dockerfile)),
        "args": c.get("args", []),
        "log_path": c["name"] + ".log",
        "mounts": cri_mounts,
        "linux": {"security_context": security, "resources": resources},
    }
    with open(a.out_config, "w") as f:
        json.dump(config, f, indent=1)
    with open(a.out_volumes, "w") as f:
        f.write("\n".join(prepared) + "\n")
    # The probes' exec commands, one JSON list per line, for ExecSync.
    for probe in ("livenessProbe", "readinessProbe"):
        print(json.dumps(c[probe]["exec"]["command"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
