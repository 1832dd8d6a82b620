#!/usr/bin/python3
"""A Nomad client stand-in for oci-decorator-device-plugin's Nomad mode.

It does what a Nomad client does with an external device plugin, through
HashiCorp go-plugin: starts the binary with the magic cookie, reads the
handshake line from its stdout, dials the unix socket, pings
grpc.health.v1.Health for "plugin", and speaks Nomad's BasePlugin and
DevicePlugin services and go-plugin's GRPCController. The messages come
from the SAME .proto files the plugin is built from (src/plugin/proto,
Nomad's and go-plugin's own files verbatim, see PROVENANCE there): the
system protoc compiles them to a descriptor set at run time and
python3-protobuf's message factory makes the classes. The config goes as
msgpack, written by a small encoder here (what go-cty writes for an object
of strings, bools and numbers: a map).

Subcommands:
  scenario  the protocol end to end against a simulated install: handshake,
            health, PluginInfo, ConfigSchema, SetConfig (good, garbage, a
            wrong type), Fingerprint (groups and health changes), Reserve,
            Stats, Shutdown; also the starts that must fail. Prints
            "ok - ..." / "FAIL - ..." lines; exit 1 on any failure.
  reserve   start the plugin, SetConfig, Reserve the given IDs and print the
            ContainerReservation as JSON (the integration test applies it
            with docker run as Nomad's docker driver would).
  fingerprint  start the plugin, SetConfig, print the first Fingerprint
            message's device groups (id, health, description) as JSON.
  bench     Reserve latency percentiles over the socket, and the plugin's
            CPU time and RSS while it idles with Fingerprint and Stats open.
"""
import argparse
import json
import os
import queue
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

import grpc
from google.protobuf import json_format

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import proto_runtime  # noqa: E402
PROTO_DIR = os.path.join(HERE, "..", "..", "src", "plugin", "proto")
# Where the plugin mounts an inventory's libraries: it answers for every
# image, so both standard library directories, the preload naming the first
# (oci-decorator-device-plugin(8), LIBRARIES).
LIBRARY_DIRS = ["/usr/lib/" + os.uname().machine + "-linux-gnu", "/usr/lib64"]
PROTOS = ["plugins/base/proto/base.proto", "plugins/device/proto/device.proto", "go-plugin/grpc_stdio.proto",
          "go-plugin/grpc_controller.proto"]
COOKIE = "e4327c2e01eabfd75a8a67adb114fb34a757d57eee7728d857a8cec6e91a7255"
BASE = "hashicorp.nomad.plugins.base.proto"
DEVICE = "hashicorp.nomad.plugins.device"


class Api:
    """Message classes of the protos, and callables for their methods."""

    def __init__(self):
        self.pool, self.factory = proto_runtime.load(PROTO_DIR, PROTOS)

    def msg(self, full_name):
        return self.factory.GetPrototype(self.pool.FindMessageTypeByName(full_name))

    def _method(self, channel, service, method, kind):
        sd = self.pool.FindServiceByName(service)
        md = sd.FindMethodByName(method)
        resp = self.factory.GetPrototype(md.output_type)
        make = channel.unary_stream if kind == "stream" else channel.unary_unary
        return make("/%s/%s" % (service, method), request_serializer=lambda m: m.SerializeToString(),
                    response_deserializer=resp.FromString), self.factory.GetPrototype(md.input_type)

    def call(self, channel, service, method, timeout=10, **fields):
        fn, req = self._method(channel, service, method, "unary")
        return fn(req(**fields), timeout=timeout)

    def stream(self, channel, service, method, **fields):
        fn, req = self._method(channel, service, method, "stream")
        return fn(req(**fields))


# --- msgpack, as go-cty encodes an object of primitives ---------------------------------------
def mp(v):
    if v is None:
        return b"\xc0"
    if v is True:
        return b"\xc3"
    if v is False:
        return b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        if len(b) < 32:
            return bytes([0xa0 | len(b)]) + b
        if len(b) < 256:
            return b"\xd9" + bytes([len(b)]) + b
        return b"\xda" + struct.pack(">H", len(b)) + b
    if isinstance(v, dict):
        assert len(v) < 16
        return bytes([0x80 | len(v)]) + b"".join(mp(k) + mp(x) for k, x in sorted(v.items()))
    raise TypeError(v)


ALL_KEYS = ["config_dir", "fingerprint_period", "host_path_root", "host_root", "mount_onload",
            "profile",
            "set_preload", "slots"]


def cty_config(**given):
    """The whole object, as Nomad sends it: every schema key, null when not set."""
    return mp({k: given.get(k) for k in ALL_KEYS})


# --- the plugin process ---------------------------------------------------------------------
class Plugin:
    """One start of the plugin binary, as go-plugin's client does it."""

    def __init__(self, binary, env_extra=None, args=None, cookie=True, log=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLUGIN_") and k != "NOMAD_PLUGIN_MAGIC_COOKIE"}
        if cookie:
            env["NOMAD_PLUGIN_MAGIC_COOKIE"] = COOKIE
            env["PLUGIN_PROTOCOL_VERSIONS"] = "2"
            env["PLUGIN_MIN_PORT"] = "14000"
            env["PLUGIN_MAX_PORT"] = "14512"
        env.update(env_extra or {})
        self.stderr = open(log, "ab") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen([binary] + (args if args is not None else []), env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.stderr)
        self.line = None
        self.socket = None
        self.channel = None

    def handshake(self, timeout=10):
        """Reads the first stdout line (or EOF); returns it."""
        result = {}

        def read():
            result["line"] = self.proc.stdout.readline().decode(errors="replace")

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        self.line = result.get("line")
        m = re.fullmatch(r"1\|2\|unix\|(/[^|]+)\|grpc\n", self.line or "")
        if m:
            self.socket = m.group(1)
            self.channel = grpc.insecure_channel("unix://" + self.socket)
        return self.line

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.channel:
            self.channel.close()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Checks:
    def __init__(self):
        self.failed = 0
        self.passed = 0

    def check(self, desc, cond, detail=""):
        if cond:
            self.passed += 1
            print("ok   - " + desc)
        else:
            self.failed += 1
            print("FAIL - %s%s" % (desc, (": " + str(detail)[:800]) if detail else ""))
        sys.stdout.flush()
        return cond

    def eq(self, desc, want, got):
        return self.check(desc, want == got, "expected %r, got %r" % (want, got))


def rpc_error(fn):
    """Runs fn; returns (None, grpc error) or (result, None)."""
    try:
        return fn(), None
    except grpc.RpcError as e:
        return None, e


class Stream:
    """A server stream read by a thread into a queue."""

    def __init__(self, call):
        self.call = call
        self.q = queue.Queue()
        self.ended = threading.Event()
        self.error = None
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        try:
            for m in self.call:
                self.q.put(m)
        except grpc.RpcError as e:
            self.error = e
        self.ended.set()

    def next(self, timeout):
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            return None

    def until(self, pred, timeout):
        """The first message satisfying pred within timeout (or None)."""
        end = time.time() + timeout
        while time.time() < end:
            m = self.next(max(0.05, end - time.time()))
            if m is not None and pred(m):
                return m
        return None


def groups_health(resp):
    """{"vendor/type": (n devices, all healthy, first description)}"""
    out = {}
    for g in resp.device_group:
        hs = [d.healthy for d in g.devices]
        out[g.vendor + "/" + g.device_type] = (len(hs), all(hs) and bool(hs),
                                              g.devices[0].health_description if g.devices else "")
    return out


def reservation_json(resp):
    res = resp.container_res
    return {"envs": dict(res.envs),
            "mounts": [{"task_path": m.task_path, "host_path": m.host_path, "read_only": m.read_only}
                       for m in res.mounts],
            "devices": [{"task_path": d.task_path, "host_path": d.host_path, "permissions": d.permissions}
                        for d in res.devices]}


# --- scenario -------------------------------------------------------------------------------
def scenario(a):
    api = Api()
    c = Checks()
    log = a.log

    # 1. Run by hand: no cookie.
    p = Plugin(a.plugin, args=["nomad"], cookie=False)
    out, _ = p.proc.communicate(timeout=10)
    c.eq("without the cookie: exit 1", 1, p.proc.returncode)
    c.eq("without the cookie: nothing on stdout (no handshake)", b"", out)
    r = subprocess.run([a.plugin, "nomad"], env={"PATH": os.environ.get("PATH", "")},
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    c.check("without the cookie: says it is a Nomad plugin not meant to be run directly",
            b"not meant to be executed directly" in r.stderr and b"Nomad" in r.stderr, r.stderr)
    # An app protocol we do not speak.
    p = Plugin(a.plugin, args=["nomad"], env_extra={"PLUGIN_PROTOCOL_VERSIONS": "1,3"}, log=log)
    c.eq("PLUGIN_PROTOCOL_VERSIONS=1,3: exit 1", 1, p.wait(10))
    p.kill()

    # 2. The fingerprinting start: PluginInfo and ConfigSchema only, no args
    #    (Nomad runs plugin_dir binaries without arguments unless told).
    sockdir = tempfile.mkdtemp(prefix="nomad-standin-")
    p = Plugin(a.plugin, args=[], log=log, env_extra={"PLUGIN_UNIX_SOCKET_DIR": sockdir})
    line = p.handshake()
    c.check("handshake line is 1|2|unix|<path>|grpc", p.socket is not None, repr(line))
    if not p.socket:
        p.kill()
        return finish(c)
    d = os.path.dirname(p.socket)
    c.eq("the socket is under PLUGIN_UNIX_SOCKET_DIR", sockdir, os.path.dirname(d))
    st = os.stat(d)
    c.eq("the socket's directory is private (0700)", 0o700, stat.S_IMODE(st.st_mode))
    c.eq("the socket's directory is ours", os.getuid(), st.st_uid)
    c.check("the socket is a socket", stat.S_ISSOCK(os.stat(p.socket).st_mode))
    health = p.channel.unary_unary("/grpc.health.v1.Health/Check")
    got, err = rpc_error(lambda: health(b"\n\x06plugin", timeout=5))
    c.eq("health: service \"plugin\" is SERVING", b"\x08\x01", got)
    info = api.call(p.channel, BASE + ".BasePlugin", "PluginInfo")
    c.eq("PluginInfo: type DEVICE", 3, info.type)
    c.eq("PluginInfo: plugin API v0.1.0", ["v0.1.0"], list(info.plugin_api_versions))
    c.eq("PluginInfo: name", "oci-decorator", info.name)
    c.check("PluginInfo: plugin_version is a version", re.fullmatch(r"\d+\.\d+\.\d+.*", info.plugin_version),
            info.plugin_version)
    schema = api.call(p.channel, BASE + ".BasePlugin", "ConfigSchema")
    attrs = schema.spec.object.attributes
    c.eq("ConfigSchema: an object of the config keys", sorted(ALL_KEYS), sorted(attrs.keys()))
    c.eq("ConfigSchema: types", {"config_dir": "string", "host_root": "string", "host_path_root": "string",
                                 "set_preload": "bool", "mount_onload": "bool",
                                 "fingerprint_period": "string", "slots": "number",
                                 "profile": "string"},
         {k: v.Attr.type for k, v in attrs.items()})
    time.sleep(0.5)
    c.check("stdin at EOF (/dev/null) does not stop the plugin", p.proc.poll() is None)
    api.call(p.channel, "plugin.GRPCController", "Shutdown")
    c.eq("Shutdown: the process exits 0", 0, p.wait(5))
    c.check("Shutdown: socket and its directory removed", not os.path.exists(d), d)
    p.kill()
    os.rmdir(sockdir)

    # 3. The validating start: SetConfig with bad configs, then SIGTERM.
    p = Plugin(a.plugin, args=["nomad"], log=log)
    p.handshake()
    setc = lambda b: rpc_error(lambda: api.call(p.channel, BASE + ".BasePlugin", "SetConfig",
                                                msgpack_config=b, plugin_api_version="v0.1.0"))
    _, e = setc(b"\xc1\x00garbage")
    c.check("SetConfig garbage: INVALID_ARGUMENT saying it is not msgpack",
            e is not None and e.code() == grpc.StatusCode.INVALID_ARGUMENT and "not valid msgpack" in e.details(),
            e and (e.code(), e.details()))
    _, e = setc(cty_config(slots="many"))
    c.check("SetConfig slots=\"many\": INVALID_ARGUMENT naming the key",
            e is not None and e.code() == grpc.StatusCode.INVALID_ARGUMENT and 'config key "slots"' in e.details(),
            e and e.details())
    _, e = setc(cty_config(slots=1025))
    c.check("SetConfig slots=1025: INVALID_ARGUMENT naming the key, the value and the limit 1024",
            e is not None and e.code() == grpc.StatusCode.INVALID_ARGUMENT and 'config key "slots"' in e.details()
            and "1025" in e.details() and "1024" in e.details(), e and e.details())
    _, e = setc(cty_config(set_preload=1))
    c.check("SetConfig set_preload=1: INVALID_ARGUMENT naming the key",
            e is not None and 'config key "set_preload"' in e.details(), e and e.details())
    _, e = setc(mp({"need_nic": True}))
    c.check("SetConfig unknown key need_nic: refused naming it",
            e is not None and 'unknown config key "need_nic"' in e.details(), e and e.details())
    _, e = setc(cty_config(host_root=a.host_root + "/nonexistent"))
    c.check("SetConfig host_root not a directory: refused naming the key",
            e is not None and 'config key "host_root"' in e.details(), e and e.details())
    _, e = setc(cty_config(config_dir=a.config_dir, host_root=a.host_root))
    c.check("SetConfig good config: OK", e is None, e and e.details())
    d = os.path.dirname(p.socket)
    p.proc.send_signal(signal.SIGTERM)
    c.eq("SIGTERM: the process exits 0", 0, p.wait(5))
    c.check("SIGTERM: socket directory removed", not os.path.exists(d), d)
    p.kill()

    # 4. The long-lived start.
    # Options from the plugin block's `args`, no mode: the cookie makes it nomad.
    p = Plugin(a.plugin, args=["--log-level", "debug"], log=log)
    p.handshake()
    # go-plugin's client opens the stdio stream first thing.
    stdio = Stream(api.stream(p.channel, "plugin.GRPCStdio", "StreamStdio"))
    _, e = rpc_error(lambda: api.call(p.channel, BASE + ".BasePlugin", "SetConfig",
                                      msgpack_config=cty_config(config_dir=a.config_dir, host_root=a.host_root,
                                                                slots=4, fingerprint_period="1m")))
    c.check("long-lived: SetConfig OK", e is None, e and e.details())
    fp = Stream(api.stream(p.channel, DEVICE + ".DevicePlugin", "Fingerprint"))
    first = fp.next(10)
    c.check("Fingerprint: a first message", first is not None)
    if first is None:
        p.kill()
        return finish(c)
    gh = groups_health(first)
    for g in ("amd/onload", "amd/zf", "amd/onloadzf", "example/tool"):
        c.eq("Fingerprint: group %s with 4 healthy devices" % g, (4, True), gh.get(g, (0, False))[:2])
    ids = sorted(d.ID for g in first.device_group for d in g.devices)
    c.eq("Fingerprint: device IDs unique across groups", len(ids), len(set(ids)))
    c.check("Fingerprint: IDs name their group (amd-onload-0, amd-onloadzf-3)",
            "amd-onload-0" in ids and "amd-onloadzf-3" in ids and "amd-zf-1" in ids, ids)
    g0 = [g for g in first.device_group if g.device_type == "onloadzf"][0]
    c.eq("Fingerprint: device_name", "oci-decorator", g0.device_name)
    c.eq("Fingerprint: onloadzf's features attribute", "onload,zf", g0.attributes["features"].string_val)
    c.eq("Fingerprint: inventory attribute", os.path.join(a.config_dir, "onload.json"),
         g0.attributes["inventory"].string_val)
    # The simulated NIC (sim-onload.sh: 0000:04:00.0, NUMA node 0, simsfc0)
    # and the versions lib.sh's make_sim gives library and module. Wire
    # format: attribute.proto:16 (int_val), device.proto:74-84 (hw_locality).
    on = [g for g in first.device_group if g.device_type == "onload"][0]
    c.eq("Fingerprint: onload's NIC attributes (pci_bus_ids, interfaces, numa_nodes, numa_node as int_val)",
         ("0000:04:00.0", "simsfc0", "0", "int_val", 0),
         (on.attributes["pci_bus_ids"].string_val, on.attributes["interfaces"].string_val,
          on.attributes["numa_nodes"].string_val, on.attributes["numa_node"].WhichOneof("value"),
          on.attributes["numa_node"].int_val))
    c.eq("Fingerprint: onload's library_version and module_version (the version lock's reading)",
         ("0.0.0-sim", "0.0.0-sim"),
         (on.attributes["library_version"].string_val, on.attributes["module_version"].string_val))
    c.eq("Fingerprint: every onload device's hw_locality.pci_bus_id is the one NIC",
         ["0000:04:00.0"] * 4, [d.hw_locality.pci_bus_id for d in on.devices])
    tool = [g for g in first.device_group if g.device_type == "tool"][0]
    c.check("Fingerprint: example/tool needs no NIC: no NIC attributes, no hw_locality",
            "pci_bus_ids" not in tool.attributes and not any(d.HasField("hw_locality") for d in tool.devices),
            dict(tool.attributes))
    c.check("Fingerprint: the stream stays open", fp.next(1.5) is None and not fp.ended.is_set())
    c.check("StreamStdio: open (served, not UNIMPLEMENTED)", not stdio.ended.is_set(),
            stdio.error and stdio.error.code())

    # Reserve.
    res, e = rpc_error(lambda: api.call(p.channel, DEVICE + ".DevicePlugin", "Reserve",
                                        device_ids=["amd-onload-1"]))
    c.check("Reserve amd-onload-1: OK", e is None, e and e.details())
    if res:
        rj = reservation_json(res)
        mounts = {m["task_path"]: m for m in rj["mounts"]}
        devs = {d["task_path"]: d for d in rj["devices"]}
        c.eq("Reserve: /usr/bin/onload mounted read-only from the host root",
             {"task_path": "/usr/bin/onload", "host_path": a.host_root + "/usr/bin/onload", "read_only": True},
             mounts.get("/usr/bin/onload"))
        c.eq("Reserve: devices /dev/onload, /dev/onload_epoll, /dev/sfc_char (rw)",
             {"/dev/onload": "rw", "/dev/onload_epoll": "rw", "/dev/sfc_char": "rw"},
             {k: v["permissions"] for k, v in devs.items()})
        c.eq("Reserve: /dev/onload's host path", a.host_root + "/dev/onload", devs.get("/dev/onload", {}).get("host_path"))
        c.eq("Reserve: LD_PRELOAD", {"LD_PRELOAD": LIBRARY_DIRS[0] + "/libonload.so"}, rj["envs"])
        for libdir in LIBRARY_DIRS:
            c.eq("Reserve: libonload.so in " + libdir + ", from the host's file",
                 a.host_root + "/usr/lib64/libonload.so", mounts.get(libdir + "/libonload.so", {}).get("host_path"))
            c.check("Reserve onload: no TCPDirect library in " + libdir,
                    libdir + "/libonload_zf.so" not in mounts, list(mounts))
    res, e = rpc_error(lambda: api.call(p.channel, DEVICE + ".DevicePlugin", "Reserve",
                                        device_ids=["amd-zf-0", "example-tool-2"]))
    c.check("Reserve IDs of two groups: OK", e is None, e and e.details())
    if res:
        rj = reservation_json(res)
        tp = [m["task_path"] for m in rj["mounts"]]
        c.check("Reserve two groups: the union (libonload_zf and the example tool)",
                all(d + "/libonload_zf.so" in tp for d in LIBRARY_DIRS) and "/usr/bin/example-tool" in tp, tp)
        c.eq("Reserve zf: no LD_PRELOAD", {}, rj["envs"])
    _, e = rpc_error(lambda: api.call(p.channel, DEVICE + ".DevicePlugin", "Reserve",
                                      device_ids=["amd-onload-0", "amd-onload-99"]))
    c.check("Reserve unknown ID: INVALID_ARGUMENT naming it",
            e is not None and e.code() == grpc.StatusCode.INVALID_ARGUMENT and "amd-onload-99" in e.details(),
            e and (e.code(), e.details()))
    _, e = rpc_error(lambda: api.call(p.channel, DEVICE + ".DevicePlugin", "Reserve", device_ids=[]))
    c.check("Reserve no IDs: INVALID_ARGUMENT", e is not None and e.code() == grpc.StatusCode.INVALID_ARGUMENT,
            e and e.code())
    # Issue 20, finding 10: a client's ID with a newline and an ESC makes
    # exactly one log line, with both escaped (error.h Printable: \x0a,
    # \x1b), and the error Nomad gets back (and logs) is escaped too.
    forged = "amd-onload-0\nFORGED-%d level=error \x1b[31mred" % os.getpid()
    _, e = rpc_error(lambda: api.call(p.channel, DEVICE + ".DevicePlugin", "Reserve", device_ids=[forged]))
    c.check("Reserve an ID with a newline and ESC: INVALID_ARGUMENT, the details escaped",
            e is not None and e.code() == grpc.StatusCode.INVALID_ARGUMENT and "\n" not in e.details()
            and "\x1b" not in e.details() and "\\x0aFORGED-" in e.details() and "\\x1b[31m" in e.details(),
            e and (e.code(), e.details()))
    if c.check("the plugin's log is kept (--log)", bool(log)):
        with open(log, "rb") as f:
            lines = [ln for ln in f.read().split(b"\n") if b"FORGED-%d" % os.getpid() in ln]
        c.eq("Reserve with a newline and ESC: exactly one log line names it", 1, len(lines))
        c.check("...that line has them escaped (\\x0a, \\x1b) and no raw ESC",
                len(lines) == 1 and b"amd-onload-0\\x0aFORGED-" in lines[0] and b"\\x1b[31m" in lines[0]
                and b"\x1b" not in lines[0], lines)

    # Stats. StatValue's values are google.protobuf wrapper messages in
    # Nomad's stats.proto (plugins/shared/structs/proto/stats.proto, message
    # StatValue: DoubleValue/Int64Value numerators, StringValue string_val = 5,
    # BoolValue bool_val = 6); the classes here are built from that file
    # verbatim, so an answer with bare scalars fails to deserialize, as it
    # does in a Nomad client.
    st_stream = Stream(api.stream(p.channel, DEVICE + ".DevicePlugin", "Stats",
                                  collection_interval={"seconds": 1}))
    s1 = st_stream.next(10)
    c.check("Stats: a first message, decoded by Nomad's stats.proto", s1 is not None,
            st_stream.error and st_stream.error.details())
    if s1:
        inst = {g.vendor + "/" + g.type: sorted(g.instance_stats.keys()) for g in s1.groups}
        c.eq("Stats: amd/onload's instances", ["amd-onload-%d" % i for i in range(4)], inst.get("amd/onload"))
        one = [g for g in s1.groups if g.type == "onload"][0].instance_stats["amd-onload-0"]
        c.eq("Stats: summary is a StringValue \"healthy\" and nothing else",
             (["desc", "string_val"], "healthy"),
             (sorted(f.name for f, _ in one.summary.ListFields()), one.summary.string_val.value))
        h = one.stats.attributes["healthy"]
        c.eq("Stats: attribute \"healthy\" is a BoolValue true",
             (["bool_val", "desc"], True), (sorted(f.name for f, _ in h.ListFields()), h.bool_val.value))
        c.check("Stats: a timestamp", one.timestamp.seconds > 0, one.timestamp)
    # Stats sends on a change and otherwise at a slow refresh (60 s), not
    # every collection_interval: Nomad's client keeps the last message's
    # groups until the next replaces them (hashicorp/nomad
    # client/devicemanager/instance.go lines 512-516) and reads the stream
    # with no deadline (plugins/device/client.go lines 124-153). Nothing
    # changes for 4 intervals here: no message (the old plugin sent 4).
    time.sleep(4)
    c.eq("Stats: no message over 4 collection intervals with nothing changing", 0, st_stream.q.qsize())
    c.check("Stats: the stream stays open meanwhile", not st_stream.ended.is_set(),
            st_stream.error and st_stream.error.details())
    # A broken inventory: only its groups turn unhealthy.
    extra = os.path.join(a.config_dir, "example.json")
    good = open(extra).read()
    with open(extra + ".tmp", "w") as f:
        f.write('{"version": "1", ')
    os.rename(extra + ".tmp", extra)
    m = fp.until(lambda r: not groups_health(r).get("example/tool", (0, True))[1], 15)
    c.check("broken inventory: a new Fingerprint message with example/tool unhealthy", m is not None)
    if m:
        gh = groups_health(m)
        c.check("broken inventory: the health description says why", "example.json" in gh["example/tool"][2],
                gh["example/tool"])
        c.eq("broken inventory: the Onload groups stay healthy", [True, True, True],
             [gh.get(g, (0, False))[1] for g in ("amd/onload", "amd/zf", "amd/onloadzf")])
    _, e = rpc_error(lambda: api.call(p.channel, DEVICE + ".DevicePlugin", "Reserve", device_ids=["example-tool-0"]))
    c.check("Reserve from an unhealthy group: FAILED_PRECONDITION with why",
            e is not None and e.code() == grpc.StatusCode.FAILED_PRECONDITION and "unhealthy" in e.details(),
            e and (e.code(), e.details()))
    with open(extra + ".tmp", "w") as f:
        f.write(good)
    os.rename(extra + ".tmp", extra)
    m = fp.until(lambda r: groups_health(r).get("example/tool", (0, False))[1], 15)
    c.check("inventory repaired: example/tool healthy again", m is not None)

    # A device node removed: the groups that need it go unhealthy, then back.
    node = a.host_root + "/dev/onload"
    rdev = os.stat(node).st_rdev
    os.unlink(node)
    m = fp.until(lambda r: not groups_health(r).get("amd/onload", (0, True))[1], 15)
    c.check("/dev/onload removed: amd/onload unhealthy", m is not None)
    if m:
        gh = groups_health(m)
        c.check("/dev/onload removed: the description names it", "/dev/onload" in gh["amd/onload"][2],
                gh["amd/onload"])
        c.eq("/dev/onload removed: onloadzf unhealthy, zf (no /dev/onload) healthy", (False, True),
             (gh["amd/onloadzf"][1], gh["amd/zf"][1]))
    # Stats says so too: a BoolValue false is still there (an empty message),
    # not absent.
    # Fingerprint has shown the change: Stats follows at once (the plugin
    # wakes on the new view), well within one 60 s refresh.
    m = st_stream.until(lambda r: any(g.type == "onload" and
                                      g.instance_stats["amd-onload-0"].summary.string_val.value == "unhealthy"
                                      for g in r.groups), 2)
    c.check("/dev/onload removed: within 2 s a Stats message with summary StringValue \"unhealthy\"",
            m is not None, st_stream.error and st_stream.error.details())
    if m:
        h = [g for g in m.groups if g.type == "onload"][0].instance_stats["amd-onload-0"].stats.attributes["healthy"]
        c.eq("/dev/onload removed: Stats attribute \"healthy\" is a BoolValue false",
             (True, False), (h.HasField("bool_val"), h.bool_val.value))
        c.check("/dev/onload removed: the attribute's desc names /dev/onload", "/dev/onload" in h.desc, h.desc)
    os.mknod(node, 0o666 | stat.S_IFCHR, rdev)
    m = fp.until(lambda r: groups_health(r).get("amd/onload", (0, False))[1], 15)
    c.check("/dev/onload back: amd/onload healthy again", m is not None)
    if m:
        c.check("/dev/onload back: every group healthy", all(v[1] for v in groups_health(m).values()),
                groups_health(m))

    # A second SetConfig (slots 2, mount_onload false) reaches the open stream.
    _, e = rpc_error(lambda: api.call(p.channel, BASE + ".BasePlugin", "SetConfig",
                                      msgpack_config=cty_config(config_dir=a.config_dir, host_root=a.host_root,
                                                                slots=2, mount_onload=False)))
    c.check("second SetConfig: OK", e is None, e and e.details())
    m = fp.until(lambda r: groups_health(r).get("amd/onload", (0,))[0] == 2, 10)
    c.check("second SetConfig: the Fingerprint stream sends 2 devices per group", m is not None)
    res, e = rpc_error(lambda: api.call(p.channel, DEVICE + ".DevicePlugin", "Reserve", device_ids=["amd-onload-0"]))
    if c.check("mount_onload=false: Reserve OK", e is None, e and e.details()):
        rj = reservation_json(res)
        c.check("mount_onload=false: devices and LD_PRELOAD, no mounts",
                rj["mounts"] == [] and len(rj["devices"]) == 3 and "LD_PRELOAD" in rj["envs"], rj)

    # A third SetConfig names a profile: Reserve hands out its EF_* with LD_PRELOAD.
    _, e = rpc_error(lambda: api.call(p.channel, BASE + ".BasePlugin", "SetConfig",
                                      msgpack_config=cty_config(config_dir=a.config_dir, host_root=a.host_root,
                                                                slots=2, profile="latency")))
    c.check("SetConfig profile=latency: OK", e is None, e and e.details())
    rj = {}
    for _ in range(50):
        res, e = rpc_error(lambda: api.call(p.channel, DEVICE + ".DevicePlugin", "Reserve",
                                            device_ids=["amd-onload-0"]))
        rj = reservation_json(res) if e is None else {}
        if rj.get("envs", {}).get("EF_POLL_USEC"):
            break
        time.sleep(0.2)
    c.eq("profile=latency: Reserve envs are LD_PRELOAD and the profile's EF_*",
         {"LD_PRELOAD": LIBRARY_DIRS[0] + "/libonload.so", "EF_POLL_USEC": "100000", "EF_TCP_FASTSTART_INIT": "0",
          "EF_TCP_FASTSTART_IDLE": "0"}, rj.get("envs"))

    # Shutdown ends the streams and the process.
    d = os.path.dirname(p.socket)
    api.call(p.channel, "plugin.GRPCController", "Shutdown")
    c.eq("Shutdown with open streams: the process exits 0 within 5 s", 0, p.wait(5))
    c.check("Shutdown: the Fingerprint stream ended", fp.ended.wait(5))
    c.check("Shutdown: the stdio stream ended", stdio.ended.wait(5))
    c.check("Shutdown: socket directory removed", not os.path.exists(d), d)
    p.kill()

    # 5. Concurrency: three Fingerprint streams while SetConfig (swapping the
    #    watch: fingerprint_period changes) and Reserve race each other.
    p = Plugin(a.plugin, args=["nomad"], log=log)
    p.handshake()
    base_cfg = dict(config_dir=a.config_dir, host_root=a.host_root)
    api.call(p.channel, BASE + ".BasePlugin", "SetConfig", msgpack_config=cty_config(slots=3, **base_cfg))
    streams = [Stream(api.stream(p.channel, DEVICE + ".DevicePlugin", "Fingerprint")) for _ in range(3)]
    errors = []

    def configs():
        for i in range(30):
            _, e = rpc_error(lambda: api.call(p.channel, BASE + ".BasePlugin", "SetConfig", msgpack_config=cty_config(
                slots=2 + i % 3, fingerprint_period="%ds" % (10 + i), **base_cfg)))
            if e:
                errors.append(e.details())

    def reserves():
        for i in range(200):
            _, e = rpc_error(lambda: api.call(p.channel, DEVICE + ".DevicePlugin", "Reserve", device_ids=["amd-zf-1"]))
            if e:
                errors.append(e.details())

    threads = [threading.Thread(target=configs), threading.Thread(target=reserves),
               threading.Thread(target=reserves)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    c.eq("concurrency: no SetConfig or Reserve failed", [], errors)
    api.call(p.channel, BASE + ".BasePlugin", "SetConfig", msgpack_config=cty_config(slots=7, **base_cfg))
    c.check("concurrency: every Fingerprint stream ends up with the last config (7 devices per group)",
            all(s.until(lambda r: groups_health(r).get("amd/zf", (0,))[0] == 7, 10) for s in streams))
    c.check("concurrency: the plugin is still running", p.proc.poll() is None)
    api.call(p.channel, "plugin.GRPCController", "Shutdown")
    c.eq("concurrency: Shutdown exits 0", 0, p.wait(10))
    p.kill()
    return finish(c)


def finish(c):
    print("# standin: %d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else 0


def configured(a, body):
    """Starts the plugin as Nomad's long-lived instance (handshake, SetConfig
    from the arguments), runs body(api, plugin) for its exit code, then shuts
    the plugin down as Nomad does."""
    api = Api()
    p = Plugin(a.plugin, args=["nomad"], log=a.log)
    try:
        if not p.handshake() or not p.socket:
            print("no handshake from the plugin", file=sys.stderr)
            return 1
        cfg = {"config_dir": a.config_dir, "host_root": a.host_root}
        if getattr(a, "host_path_root", None):
            cfg["host_path_root"] = a.host_path_root
        api.call(p.channel, BASE + ".BasePlugin", "SetConfig", msgpack_config=cty_config(**cfg))
        rc = body(api, p)
        if rc == 0:
            api.call(p.channel, "plugin.GRPCController", "Shutdown")
            p.wait(5)
        return rc
    except grpc.RpcError as e:
        print("%s: %s" % (e.code(), e.details()), file=sys.stderr)
        return 1
    finally:
        p.kill()


def reserve(a):
    def body(api, p):
        res = api.call(p.channel, DEVICE + ".DevicePlugin", "Reserve", device_ids=a.ids)
        print(json.dumps(reservation_json(res)))
        return 0
    return configured(a, body)


def fingerprint(a):
    """The first Fingerprint message as Nomad receives it, as JSON: for each
    device group "vendor/type", its devices' id, health and description."""
    def body(api, p):
        fp = Stream(api.stream(p.channel, DEVICE + ".DevicePlugin", "Fingerprint"))
        first = fp.next(10)
        if first is None:
            print("no Fingerprint message: %s" % (fp.error,), file=sys.stderr)
            return 1
        print(json.dumps({g.vendor + "/" + g.device_type:
                          [{"id": d.ID, "healthy": d.healthy, "health_description": d.health_description}
                           for d in g.devices] for g in first.device_group}))
        return 0
    return configured(a, body)


def proc_stat(pid):
    """(user+system CPU seconds, RSS KiB) of pid."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return cpu, rss


def bench(a):
    def body(api, p):
        fp = Stream(api.stream(p.channel, DEVICE + ".DevicePlugin", "Fingerprint"))
        st = Stream(api.stream(p.channel, DEVICE + ".DevicePlugin", "Stats",
                               collection_interval={"seconds": 1}))
        first = fp.next(10)
        if first is None:
            print("no Fingerprint message", file=sys.stderr)
            return 1
        ids = [d.ID for g in first.device_group for d in g.devices if d.healthy]
        fn, req = api._method(p.channel, DEVICE + ".DevicePlugin", "Reserve", "unary")
        lat = []
        for i in range(a.n):
            r = req(device_ids=[ids[i % len(ids)]])
            t0 = time.perf_counter()
            fn(r, timeout=10)
            lat.append((time.perf_counter() - t0) * 1e6)
        lat.sort()
        pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
        cpu0, _ = proc_stat(p.proc.pid)
        time.sleep(a.idle)
        cpu1, rss = proc_stat(p.proc.pid)
        print(json.dumps({"reserve_calls": a.n, "reserve_us_p50": round(pct(0.5)), "reserve_us_p90": round(pct(0.9)),
                          "reserve_us_p99": round(pct(0.99)), "reserve_us_max": round(lat[-1]),
                          "idle_seconds": a.idle, "idle_cpu_percent": round(100 * (cpu1 - cpu0) / a.idle, 2),
                          "rss_kib": rss, "groups": len(first.device_group), "devices": len(ids)}))
        return 0
    return configured(a, body)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("scenario", "reserve", "fingerprint", "bench"):
        s = sub.add_parser(name)
        s.add_argument("--plugin", required=True)
        s.add_argument("--config-dir", required=True)
        s.add_argument("--host-root", required=True)
        s.add_argument("--log", help="append the plugin's stderr here")
        if name == "reserve":
            s.add_argument("--host-path-root")
            s.add_argument("ids", nargs="+")
        if name == "bench":
            s.add_argument("-n", type=int, default=2000, help="Reserve calls")
            s.add_argument("--idle", type=float, default=10, help="seconds of idle measured")
    a = ap.parse_args()
    return {"scenario": scenario, "reserve": reserve, "fingerprint": fingerprint, "bench": bench}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
