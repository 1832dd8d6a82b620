#!/usr/bin/python3
"""deploy/kubernetes/*.yaml against yamllint and the Kubernetes API schema.

The schema is the one Debian's python3-kubernetes is generated from (the
OpenAPI spec of the Kubernetes API; each model class lists its fields in
`attribute_map` and their types in `openapi_types`): every key of every
object must be a field of its type, every value of that field's type, and
the client's own constructors (client_side_validation) refuse a missing
required field. NFD's NodeFeatureRule is a custom resource, not in that
spec: it is checked against the shape of NFD's examples/nodefeaturerule.yaml.

Then what deploy/kubernetes/daemonset.yaml promises an operator (issues 20
and 27): probes, no service-account token, maxSurge 0, the health file in a
directory of its own inside an emptyDir of medium Memory, every read-only
hostPath mount recursively read-only, the optional ConfigMap with files not
writable by others, the kubelet directory at the plugin's default path, a
node selector that nodefeaturerule.yaml sets. That the kubelet and a CRI
runtime really run it so is integration.daemonset_cri.

Exit 0 when all hold; prints one line per failure. No root.
"""
import os
import re
import subprocess
import sys

import yaml
from kubernetes import client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import finish, ok  # noqa: E402

SRC = os.environ.get("OCID_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DEPLOY = os.path.join(SRC, "deploy", "kubernetes")
YAMLLINT_CONFIG = os.path.join(SRC, "test", "deploy", "yamllint.yaml")
HEALTH = "/run/oci-decorator-device-plugin/probe/health"

# Fields newer than Debian's python3-kubernetes (22.6: the Kubernetes 1.22
# API), with the values the API takes. recursiveReadOnly: k8s.io/api
# core/v1 types.go VolumeMount.RecursiveReadOnly (RecursiveReadOnlyMode:
# Disabled, IfPossible, Enabled), Kubernetes 1.30 and later.
NEWER_FIELDS = {"V1VolumeMount": {"recursiveReadOnly": {"Disabled", "IfPossible", "Enabled"}}}


# --- the schema -------------------------------------------------------------
PRIMITIVES = {
    "str": lambda v: isinstance(v, str),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "datetime": lambda v: isinstance(v, str),
    "date": lambda v: isinstance(v, str),
    # IntOrString, Quantity, RawExtension: the spec says "object".
    "object": lambda v: True,
}


def check_value(value, typ, where, quantity=False):
    """Checks `value` against an openapi_types type string."""
    m = re.fullmatch(r"list\[(.+)\]", typ)
    if m:
        if not ok(isinstance(value, list), "%s: must be a list (%s)" % (where, typ)):
            return
        for i, v in enumerate(value):
            check_value(v, m.group(1), "%s[%d]" % (where, i))
        return
    m = re.fullmatch(r"dict\((\w+), (.+)\)", typ)
    if m:
        if not ok(isinstance(value, dict), "%s: must be a map (%s)" % (where, typ)):
            return
        # A resource quantity (limits, requests) is a string in the spec; the
        # API server takes a number too (resource.Quantity's UnmarshalJSON),
        # as in `amd.com/onload: 1`.
        quantities = re.search(r"\.resources\.(limits|requests)$", where) is not None
        for k, v in value.items():
            ok(isinstance(k, str), "%s: key %r must be a string" % (where, k))
            check_value(v, m.group(2), "%s.%s" % (where, k), quantities)
        return
    if typ in PRIMITIVES:
        ok(PRIMITIVES[typ](value) or (quantity and PRIMITIVES["int"](value)),
           "%s: %r is not of type %s" % (where, value, typ))
        return
    model = getattr(client.models, typ, None)
    if not ok(model is not None, "%s: unknown type %s in the client" % (where, typ)):
        return
    if not ok(isinstance(value, dict), "%s: must be an object (%s)" % (where, typ)):
        return
    by_json = {j: attr for attr, j in model.attribute_map.items()}
    for k, v in value.items():
        if k not in by_json and k in NEWER_FIELDS.get(typ, {}):
            ok(v in NEWER_FIELDS[typ][k], "%s.%s: %r is not one of %s" %
               (where, k, v, sorted(NEWER_FIELDS[typ][k])))
            continue
        if ok(k in by_json, "%s: unknown field %r of %s" % (where, k, typ)):
            check_value(v, model.openapi_types[by_json[k]], "%s.%s" % (where, k))


def check_k8s_object(doc, where):
    api, kind = doc.get("apiVersion", ""), doc.get("kind", "")
    version = api.split("/")[-1]
    typ = version[0].upper() + version[1:] + kind  # apps/v1 DaemonSet -> V1DaemonSet
    if not ok(hasattr(client.models, typ), "%s: %s %s is not a Kubernetes API type" % (where, api, kind)):
        return
    check_value(doc, typ, "%s(%s)" % (where, kind))
    # Required fields and enums: the client's constructors check them.
    try:
        client.ApiClient()._ApiClient__deserialize(doc, typ)
        ok(True, "")
    except (ValueError, TypeError) as e:
        ok(False, "%s(%s): %s" % (where, kind, e))


def check_node_feature_rule(doc, where):
    # NFD's examples/nodefeaturerule.yaml: spec.rules[] of name, labels,
    # matchFeatures[] of feature and matchExpressions {key: {op, value}}.
    ok(doc.get("apiVersion") == "nfd.k8s-sigs.io/v1alpha1", "%s: apiVersion" % where)
    ok(set(doc) == {"apiVersion", "kind", "metadata", "spec"}, "%s: top-level keys %s" % (where, sorted(doc)))
    ok(isinstance(doc.get("metadata", {}).get("name"), str), "%s: metadata.name" % where)
    rules = doc.get("spec", {}).get("rules")
    if not ok(isinstance(rules, list) and rules, "%s: spec.rules must be a non-empty list" % where):
        return
    for i, r in enumerate(rules):
        w = "%s: spec.rules[%d]" % (where, i)
        ok(set(r) <= {"name", "labels", "matchFeatures", "matchAny", "taints", "extendedResources",
                      "vars", "varsTemplate", "labelsTemplate", "annotations"}, "%s: keys %s" % (w, sorted(r)))
        ok(isinstance(r.get("name"), str), "%s.name" % w)
        ok(all(isinstance(k, str) and isinstance(v, str) for k, v in r.get("labels", {}).items()),
           "%s.labels: strings to strings" % w)
        for j, mf in enumerate(r.get("matchFeatures", [])):
            ok(set(mf) <= {"feature", "matchExpressions", "matchName"} and isinstance(mf.get("feature"), str),
               "%s.matchFeatures[%d]" % (w, j))
            for k, e in mf.get("matchExpressions", {}).items():
                ok(isinstance(e, dict) and e.get("op") in
                   {"In", "NotIn", "InRegexp", "Exists", "DoesNotExist", "Gt", "Lt", "GtLt", "IsTrue", "IsFalse"}
                   and all(isinstance(x, str) for x in e.get("value", [])),
                   "%s.matchFeatures[%d].matchExpressions.%s: %r" % (w, j, k, e))


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


# --- yamllint ---------------------------------------------------------------
files = sorted(os.path.join(DEPLOY, f) for f in os.listdir(DEPLOY) if f.endswith(".yaml"))
ok(len(files) >= 3, "deploy/kubernetes has the DaemonSet, the pod and the NFD rule: %s" % files)
r = subprocess.run(["yamllint", "--strict", "-c", YAMLLINT_CONFIG] + files,
                   capture_output=True, text=True)
ok(r.returncode == 0, "yamllint --strict: " + (r.stdout + r.stderr).strip().replace("\n", " | "))

docs = {}
for path in files:
    name = os.path.basename(path)
    docs[name] = load(path)
    for i, doc in enumerate(docs[name]):
        where = "%s#%d" % (name, i)
        if doc.get("kind") == "NodeFeatureRule":
            check_node_feature_rule(doc, where)
        else:
            check_k8s_object(doc, where)

# --- what the DaemonSet promises ------------------------------------------------
ds = [d for d in docs.get("daemonset.yaml", []) if d.get("kind") == "DaemonSet"]
if ok(len(ds) == 1, "daemonset.yaml holds one DaemonSet"):
    spec = ds[0]["spec"]
    pod = spec["template"]["spec"]
    ok(spec.get("updateStrategy", {}).get("type") == "RollingUpdate" and
       spec["updateStrategy"].get("rollingUpdate", {}).get("maxSurge") == 0,
       "updateStrategy: RollingUpdate with maxSurge 0 (one plugin per kubelet directory)")
    ok(pod.get("automountServiceAccountToken") is False, "automountServiceAccountToken: false")
    c = pod["containers"][0]
    probe = ["oci-decorator-device-plugin", "probe", "--health-file", HEALTH, "--max-age", "60"]
    ok(c.get("livenessProbe", {}).get("exec", {}).get("command") == probe,
       "livenessProbe runs exactly %s" % " ".join(probe))
    ok(c.get("readinessProbe", {}).get("exec", {}).get("command") == probe + ["--ready"],
       "readinessProbe runs exactly %s --ready" % " ".join(probe))
    args = c.get("args", [])
    ok("--health-file" in args and args[args.index("--health-file") + 1:][:1] == [HEALTH],
       "the plugin is started with --health-file %s" % HEALTH)
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    # Issue 27, finding 1: the writer's rule (SECURITY.md 2.9) refuses a
    # directory others can write, and the kubelet's emptyDir root is one
    # (1777 as a tmpfs, 0777 on disk). The file goes in a directory the
    # plugin makes 0755 inside a Memory emptyDir, whose sticky root is then
    # an acceptable ancestor.
    vdir = os.path.dirname(os.path.dirname(HEALTH))
    ok(vdir in mounts and "emptyDir" in vols.get(mounts[vdir], {}),
       "the health file's directory %s is a directory of its own inside the emptyDir at %s"
       % (os.path.dirname(HEALTH), vdir))
    ok(os.path.dirname(HEALTH) not in mounts, "no volume is mounted at the health file's own directory")
    ok((vols.get(mounts.get(vdir), {}).get("emptyDir") or {}).get("medium") == "Memory",
       "the health volume is an emptyDir of medium Memory (a sticky 1777 tmpfs; a disk one is 0777)")
    # Finding 7: a plain readOnly bind leaves the mounts below it writable
    # (cgroupfs under /sys, /dev/shm and /dev/pts under /dev).
    for m in c.get("volumeMounts", []):
        v = vols.get(m["name"], {})
        if "hostPath" in v and m.get("readOnly"):
            ok(m.get("recursiveReadOnly") == "Enabled",
               "the read-only hostPath mount %s is recursively read-only (recursiveReadOnly: Enabled)"
               % m["mountPath"])
        # Kubernetes' own rule (pkg/apis/core/validation/validation.go,
        # validateMountRecursiveReadOnly): only with readOnly, and with
        # mountPropagation None or unset.
        if m.get("recursiveReadOnly") in ("Enabled", "IfPossible"):
            ok(m.get("readOnly") is True and m.get("mountPropagation") in (None, "None"),
               "%s: recursiveReadOnly needs readOnly: true and mountPropagation None or unset (%r)"
               % (m["mountPath"], m))
    ok(c.get("securityContext", {}).get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem")
    kdir = "/var/lib/kubelet/device-plugins"
    ok(kdir in mounts and "hostPath" in vols.get(mounts[kdir], {}),
       "the kubelet's device-plugins directory is a hostPath mounted at %s" % kdir)
    ok("--kubelet-dir" not in args, "the container path of the kubelet directory is the plugin's default")
    ok(re.search(r"#.*KUBELET ROOT", open(os.path.join(DEPLOY, "daemonset.yaml")).read()) is not None,
       "daemonset.yaml marks the one place to change for another kubelet root")
    ok("/etc/oci-decorator/oci-decorator.d" not in mounts,
       "the inventories volume is optional: the image carries them")
    # The optional ConfigMap (commented out): read-only, its files 0644 (the
    # plugin refuses a file others can write, SECURITY.md 2.13).
    text = open(os.path.join(DEPLOY, "daemonset.yaml")).read()
    cm = re.search(r"^\s*# - name: inventories\n\s*#   (configMap: \{.*\})\s*$", text, re.M)
    cm_mount = re.search(r"^\s*# (- \{name: inventories, .*\})\s*$", text, re.M)
    ok(cm is not None and yaml.safe_load(cm.group(1))["configMap"].get("defaultMode") == 0o644,
       "the commented ConfigMap option sets defaultMode 0644")
    ok(cm_mount is not None and yaml.safe_load(cm_mount.group(1))[0].get("readOnly") is True,
       "the commented inventories mount is readOnly")
    sel = pod.get("nodeSelector", {})
    rule_labels = {k: v for d in docs.get("nodefeaturerule.yaml", []) for r in d["spec"]["rules"]
                   for k, v in r.get("labels", {}).items()}
    ok(sel and all(rule_labels.get(k) == v for k, v in sel.items()),
       "the nodeSelector %s is a label nodefeaturerule.yaml sets (%s)" % (sel, rule_labels))
    # The shipped onload.json reads the host's sysfs: the module version
    # (version_lock) and the PCI devices (needs_nic), whose entries under
    # /sys/bus/pci/devices are links into /sys/devices: all of /sys.
    sysfs = mounts.get("/host/sys")
    ok(sysfs is not None and vols.get(sysfs, {}).get("hostPath", {}).get("path") == "/sys",
       "the host's /sys is mounted at /host/sys (version_lock and needs_nic read it)")
    # Issue 30: the shrub controller's directory exists at each boot (the
    # kubelet creates it) for the CDI specs that mount it, and the plugin
    # sees it, read-only, under /host.
    onload_run = mounts.get("/host/run/onload")
    ok(onload_run is not None and
       vols.get(onload_run, {}).get("hostPath") == {"path": "/run/onload", "type": "DirectoryOrCreate"},
       "the host's /run/onload is a DirectoryOrCreate hostPath mounted at /host/run/onload")
    rm = [m for m in c.get("volumeMounts", []) if m["mountPath"] == "/host/run/onload"]
    ok(len(rm) == 1 and rm[0].get("readOnly") is True and rm[0].get("recursiveReadOnly") == "Enabled",
       "/host/run/onload is mounted readOnly, recursiveReadOnly: Enabled")
    lim = c.get("resources", {}).get("limits", {}).get("memory")
    ok(lim is not None, "a memory limit")

finish()
