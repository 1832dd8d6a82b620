#!/usr/bin/python3
"""A CRI client for tests: the kubelet's side of a CRI runtime, by hand.

It speaks k8s.io/cri-api's runtime.v1 from the VERBATIM api.proto under
test/cri/proto/ (see PROVENANCE there): the system protoc compiles it to a
descriptor set at run time and the message classes come from
python3-protobuf's message factory (as test/standins/kubelet_standin.py does;
Debian's grpc_tools bundles a protoc too old for the installed runtime). No
generated stubs: methods are called by name.

Configs are given as JSON in protobuf's JSON mapping of the CRI messages
(field names as in api.proto or their lowerCamel JSON names, e.g.
"CDI_devices" or "CDIDevices"), parsed strictly: an unknown field is an error.

Subcommands (socket: --socket, the runtime's gRPC socket):
  version             RuntimeService.Version, as JSON
  wait-ready          Status until the runtime reports RuntimeReady (or
                      --timeout); NetworkReady is false without CNI, which
                      host-network pod sandboxes do not need
  image-status REF    ImageService.ImageStatus, as JSON ("null" if absent)
  runp FILE           RunPodSandbox with the PodSandboxConfig in FILE
                      (--runtime-handler: a RuntimeClass's handler); prints
                      the sandbox id
  create POD FILE     CreateContainer in sandbox POD with the ContainerConfig in
                      FILE (--pod-config: the sandbox's PodSandboxConfig, which
                      the kubelet sends along; --allocate: a device plugin's
                      AllocateResponse JSON, applied as the kubelet applies it);
                      prints the container id
  start ID            StartContainer
  wait ID             ContainerStatus until EXITED; prints the exit code
  logs ID             the container's log file (its log_path below the
                      sandbox's log_directory, CRI's log format) as plain
                      text: stdout lines on stdout, stderr lines on stderr
  run POD FILE        create + start + wait + logs + remove; exits with the
                      container's exit code; when CreateContainer or
                      StartContainer fails, prints "<Method>: <code>: <details>"
                      on stderr and exits 125
  exec ID CMD...      ExecSync: CMD in the running container ID, as the kubelet
                      runs an exec probe (--timeout: the probe's timeoutSeconds);
                      its stdout and stderr printed, exits with its exit code
  status ID           ContainerStatus (verbose), as JSON
  stop ID / rm ID     StopContainer (--timeout) / RemoveContainer
  stopp ID / rmp ID   StopPodSandbox / RemovePodSandbox
  ps                  ListContainers: "<id> <name> <state>" lines
  pods                ListPodSandbox: "<id> <name> <state>" lines

Errors of a call: one line "<Method>: <gRPC code>: <details>" on stderr, exit 1.
"""
import argparse
import json
import os
import sys
import time

import grpc
from google.protobuf import json_format

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import proto_runtime  # noqa: E402
PROTO_DIR = os.path.join(HERE, "proto")
PROTO = "pkg/apis/runtime/v1/api.proto"
PKG = "runtime.v1"


class CallError(Exception):
    def __init__(self, method, err):
        self.method = method
        self.code = err.code().name if hasattr(err, "code") else "UNKNOWN"
        self.details = err.details() if hasattr(err, "details") else str(err)
        super().__init__("%s: %s: %s" % (method, self.code, self.details))


class Cri:
    """runtime.v1 message classes and calls, from the verbatim api.proto."""

    def __init__(self, socket, proto_dir=PROTO_DIR, timeout=60):
        self.pool, self.factory = proto_runtime.load(proto_dir, [PROTO])
        self.channel = grpc.insecure_channel("unix://" + socket)
        self.timeout = timeout

    def msg(self, name):
        return self.factory.GetPrototype(self.pool.FindMessageTypeByName(PKG + "." + name))

    def call(self, service, method, request):
        svc = self.pool.FindServiceByName(PKG + "." + service)
        m = svc.FindMethodByName(method)
        resp_cls = self.factory.GetPrototype(m.output_type)
        stub = self.channel.unary_unary("/%s.%s/%s" % (PKG, service, method),
                                        request_serializer=lambda x: x.SerializeToString(),
                                        response_deserializer=resp_cls.FromString)
        try:
            return stub(request, timeout=self.timeout)
        except grpc.RpcError as e:
            raise CallError(method, e)

    def rt(self, method, **fields):
        req = self.msg(method + "Request")(**fields)
        return self.call("RuntimeService", method, req)

    def img(self, method, **fields):
        req = self.msg(method + "Request")(**fields)
        return self.call("ImageService", method, req)

    def parse(self, name, obj):
        m = self.msg(name)()
        json_format.ParseDict(obj, m)
        return m


def to_json(m):
    return json_format.MessageToJson(m, preserving_proto_field_name=True)


def load_json(path):
    if path == "-":
        return json.load(sys.stdin)
    with open(path) as f:
        return json.load(f)


def apply_allocate(config, resp):
    """A device plugin's AllocateResponse into a ContainerConfig (dicts), as
    the kubelet does it: the device manager collects each
    ContainerAllocateResponse's envs, mounts, devices, annotations and
    cdi_devices (kubernetes/kubernetes pkg/kubelet/cm/devicemanager/manager.go,
    deviceRunContainerOptions), and the CRI container config gets them as
    ContainerConfig.envs (KeyValue), mounts (Mount: container_path, host_path,
    readonly), devices (Device: container_path, host_path, permissions),
    annotations and CDI_devices (CDIDevice: name)
    (pkg/kubelet/kuberuntime/kuberuntime_container.go, generateContainerConfig
    with makeDevices, makeMounts and makeCDIDevices)."""
    for r in resp.get("container_responses", []):
        for k, v in sorted(r.get("envs", {}).items()):
            config.setdefault("envs", []).append({"key": k, "value": v})
        for mt in r.get("mounts", []):
            config.setdefault("mounts", []).append({
                "container_path": mt["container_path"], "host_path": mt["host_path"],
                "readonly": bool(mt.get("read_only", False))})
        for d in r.get("devices", []):
            config.setdefault("devices", []).append({
                "container_path": d["container_path"], "host_path": d["host_path"],
                "permissions": d.get("permissions", "")})
        for k, v in r.get("annotations", {}).items():
            config.setdefault("annotations", {})[k] = v
        for c in r.get("cdi_devices", []):
            config.setdefault("CDI_devices", []).append({"name": c["name"]})
    return config


def state_name(cri, enum, value):
    return cri.pool.FindEnumTypeByName(PKG + "." + enum).values_by_number[value].name


def wait_exit(cri, cid, timeout):
    deadline = time.time() + timeout
    while True:
        st = cri.rt("ContainerStatus", container_id=cid).status
        if state_name(cri, "ContainerState", st.state) == "CONTAINER_EXITED":
            return st
        if time.time() > deadline:
            raise TimeoutError("container %s did not exit within %d s" % (cid, timeout))
        time.sleep(0.1)


def print_log(path):
    """CRI's container log format: '<RFC3339Nano> <stream> <P|F> <text>'
    lines (kubernetes/cri-api pkg/apis/runtime/v1/api.proto, log_path;
    written by the runtime); a P(artial) line continues in the next."""
    out = {"stdout": sys.stdout, "stderr": sys.stderr}
    partial = {"stdout": "", "stderr": ""}
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 3)
            if len(parts) < 3 or parts[1] not in out:
                continue
            text = parts[3] if len(parts) > 3 else ""
            if parts[2] == "P":
                partial[parts[1]] += text
                continue
            print(partial[parts[1]] + text, file=out[parts[1]])
            partial[parts[1]] = ""
    sys.stdout.flush()
    sys.stderr.flush()


def container_log_path(cri, cid):
    st = cri.rt("ContainerStatus", container_id=cid).status
    return st.log_path


def create(cri, args):
    config = load_json(args.config)
    if args.allocate:
        apply_allocate(config, load_json(args.allocate))
    pod_config = cri.parse("PodSandboxConfig", load_json(args.pod_config)) if args.pod_config else None
    req = cri.msg("CreateContainerRequest")(pod_sandbox_id=args.pod,
                                            config=cri.parse("ContainerConfig", config))
    if pod_config is not None:
        req.sandbox_config.CopyFrom(pod_config)
    return cri.call("RuntimeService", "CreateContainer", req).container_id


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", required=True)
    ap.add_argument("--timeout", type=int, default=60, help="per call, and for wait/run")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("version")
    sub.add_parser("wait-ready")
    sub.add_parser("ps")
    sub.add_parser("pods")
    p = sub.add_parser("image-status")
    p.add_argument("ref")
    p = sub.add_parser("runp")
    p.add_argument("config")
    p.add_argument("--runtime-handler", default="", help="RunPodSandboxRequest.runtime_handler")
    for name in ("create", "run"):
        p = sub.add_parser(name)
        p.add_argument("pod")
        p.add_argument("config")
        p.add_argument("--pod-config", default="")
        p.add_argument("--allocate", default="")
        if name == "run":
            p.add_argument("--keep", action="store_true", help="do not remove the container")
    p = sub.add_parser("exec")
    p.add_argument("id")
    # Not "cmd": that is the subcommand's dest.
    p.add_argument("argv", nargs=argparse.REMAINDER)
    for name in ("start", "wait", "logs", "status", "stop", "rm", "stopp", "rmp"):
        sub.add_parser(name).add_argument("id")
    args = ap.parse_args()
    cri = Cri(args.socket, timeout=args.timeout)
    try:
        return run_cmd(cri, args)
    except CallError as e:
        print(str(e), file=sys.stderr)
        return 125 if args.cmd == "run" else 1
    except (TimeoutError, json_format.ParseError, OSError, ValueError) as e:
        print("%s: %s" % (args.cmd, e), file=sys.stderr)
        return 1


def run_cmd(cri, args):
    c = args.cmd
    if c == "version":
        print(to_json(cri.rt("Version")))
    elif c == "wait-ready":
        deadline = time.time() + args.timeout
        while True:
            try:
                conds = {x.type: x.status for x in cri.rt("Status").status.conditions}
                if conds.get("RuntimeReady"):
                    return 0
                why = conds
            except CallError as e:
                why = e
            if time.time() > deadline:
                print("wait-ready: not ready after %d s: %s" % (args.timeout, why), file=sys.stderr)
                return 1
            time.sleep(0.2)
    elif c == "image-status":
        resp = cri.img("ImageStatus", image=cri.msg("ImageSpec")(image=args.ref))
        print(to_json(resp.image) if resp.HasField("image") else "null")
    elif c == "runp":
        cfg = cri.parse("PodSandboxConfig", load_json(args.config))
        print(cri.rt("RunPodSandbox", config=cfg,
                     runtime_handler=args.runtime_handler).pod_sandbox_id)
    elif c == "create":
        print(create(cri, args))
    elif c == "start":
        cri.rt("StartContainer", container_id=args.id)
    elif c == "wait":
        print(wait_exit(cri, args.id, args.timeout).exit_code)
    elif c == "logs":
        print_log(container_log_path(cri, args.id))
    elif c == "exec":
        cmd = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
        resp = cri.rt("ExecSync", container_id=args.id, cmd=cmd, timeout=args.timeout)
        sys.stdout.write(resp.stdout.decode(errors="replace"))
        sys.stderr.write(resp.stderr.decode(errors="replace"))
        sys.stdout.flush()
        sys.stderr.flush()
        return resp.exit_code
    elif c == "status":
        print(to_json(cri.rt("ContainerStatus", container_id=args.id, verbose=True)))
    elif c == "stop":
        cri.rt("StopContainer", container_id=args.id, timeout=10)
    elif c == "rm":
        cri.rt("RemoveContainer", container_id=args.id)
    elif c == "stopp":
        cri.rt("StopPodSandbox", pod_sandbox_id=args.id)
    elif c == "rmp":
        cri.rt("RemovePodSandbox", pod_sandbox_id=args.id)
    elif c == "ps":
        for x in cri.rt("ListContainers").containers:
            print(x.id, x.metadata.name, state_name(cri, "ContainerState", x.state))
    elif c == "pods":
        for x in cri.rt("ListPodSandbox").items:
            print(x.id, x.metadata.name, state_name(cri, "PodSandboxState", x.state))
    elif c == "run":
        cid = create(cri, args)
        try:
            cri.rt("StartContainer", container_id=cid)
            st = wait_exit(cri, cid, args.timeout)
            print_log(st.log_path)
            return st.exit_code
        finally:
            if not args.keep:
                try:
                    cri.rt("RemoveContainer", container_id=cid)
                except CallError as e:
                    print(str(e), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
