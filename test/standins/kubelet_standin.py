#!/usr/bin/python3
"""A kubelet stand-in for oci-decorator-device-plugin's Kubernetes mode.

It speaks the device plugin API v1beta1 from the SAME .proto the plugin is
built from (src/plugin/proto/deviceplugin/v1beta1/api.proto): the system
protoc compiles it to a descriptor set at run time and the message classes
come from python3-protobuf's message factory (Debian's grpc_tools bundles a
protoc too old for the installed runtime). No generated stubs: gRPC methods
are called and served by name.

Like the kubelet it serves Registration on <dir>/kubelet.sock, dials each
registering plugin back (GetDevicePluginOptions, then ListAndWatch kept
open), and on a restart deletes every socket in the directory and serves a
new kubelet.sock.

Subcommands:
  scenario  start the plugin and check the protocol end to end (TAP-like
            "ok - ..."/"FAIL - ..." lines; exit 1 on any failure)
  allocate  call Allocate on a plugin socket, print the response as JSON
  devices   read the first ListAndWatch answer from a plugin socket, print it as JSON
  serve     be the kubelet on a directory until killed ("registered NAME" per Register)
  hung      a kubelet that accepts Register, dials back, opens ListAndWatch and then
            never answers ("hung NAME" per Register), until killed
  bench     Allocate latency percentiles and the plugin's idle CPU and RSS
"""
import argparse
import json
import os
import queue
import signal
import stat
import subprocess
import sys
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
PROTO = "deviceplugin/v1beta1/api.proto"


class Api:
    """Message classes and method paths of v1beta1, from the .proto."""

    def __init__(self, proto_dir=PROTO_DIR):
        pool, factory = proto_runtime.load(proto_dir, [PROTO])
        self.pool = pool
        for name in ("Empty", "RegisterRequest", "DevicePluginOptions", "ListAndWatchResponse",
                     "AllocateRequest", "AllocateResponse", "PreferredAllocationRequest",
                     "PreferredAllocationResponse", "PreStartContainerRequest",
                     "PreStartContainerResponse"):
            desc = pool.FindMessageTypeByName("v1beta1." + name)
            setattr(self, name, factory.GetPrototype(desc))

    def unary(self, channel, service, method, resp_cls):
        return channel.unary_unary("/v1beta1.%s/%s" % (service, method),
                                   request_serializer=lambda m: m.SerializeToString(),
                                   response_deserializer=resp_cls.FromString)

    def stream(self, channel, method, resp_cls):
        return channel.unary_stream("/v1beta1.DevicePlugin/" + method,
                                    request_serializer=lambda m: m.SerializeToString(),
                                    response_deserializer=resp_cls.FromString)


def unix_channel(path):
    return grpc.insecure_channel("unix://" + path)


class PluginClient:
    """The kubelet's side of one plugin endpoint."""

    def __init__(self, api, socket_path):
        self.api = api
        self.path = socket_path
        self.channel = unix_channel(socket_path)
        self.options = api.unary(self.channel, "DevicePlugin", "GetDevicePluginOptions",
                                 api.DevicePluginOptions)
        self.allocate = api.unary(self.channel, "DevicePlugin", "Allocate", api.AllocateResponse)
        self.preferred = api.unary(self.channel, "DevicePlugin", "GetPreferredAllocation",
                                   api.PreferredAllocationResponse)
        self.prestart = api.unary(self.channel, "DevicePlugin", "PreStartContainer",
                                  api.PreStartContainerResponse)
        self.list_and_watch = api.stream(self.channel, "ListAndWatch", api.ListAndWatchResponse)
        self.raw_allocate = self.channel.unary_unary(
            "/v1beta1.DevicePlugin/Allocate", request_serializer=lambda b: b,
            response_deserializer=lambda b: b)

    def allocate_ids(self, *containers, timeout=5):
        req = self.api.AllocateRequest()
        for ids in containers:
            req.container_requests.add().devices_ids.extend(ids)
        return self.allocate(req, timeout=timeout)

    def close(self):
        self.channel.close()


class Kubelet:
    """Serves Registration on <dir>/kubelet.sock the way the kubelet does."""

    def __init__(self, api, kdir):
        self.api = api
        self.dir = kdir
        self.server = None
        self.registrations = queue.Queue()   # (RegisterRequest, options or error)
        self.updates = {}                    # resource -> queue of [(id, health)]
        self.clients = {}
        self.reject = 0                      # answer the next N Registers with an error
        self.lock = threading.Lock()

    def _register(self, request, context):
        with self.lock:
            if self.reject > 0:
                self.reject -= 1
                self.registrations.put((request, "rejected"))
                context.abort(grpc.StatusCode.UNAVAILABLE, "stand-in: rejected on purpose")
        path = os.path.join(self.dir, request.endpoint)
        # The real kubelet dials the endpoint while handling Register.
        client = PluginClient(self.api, path)
        try:
            opts = client.options(self.api.Empty(), timeout=5)
        except grpc.RpcError as e:
            self.registrations.put((request, "dial back failed: %s" % e.code()))
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "cannot dial " + path)
        self.registrations.put((request, opts))
        q = self.updates.setdefault(request.resource_name, queue.Queue())
        old = self.clients.get(request.resource_name)
        self.clients[request.resource_name] = client
        if old:
            old.close()
        threading.Thread(target=self._watch, args=(client, q), daemon=True).start()
        return self.api.Empty()

    def _watch(self, client, q):
        try:
            for resp in client.list_and_watch(self.api.Empty()):
                q.put([(d.ID, d.health) for d in resp.devices])
        except grpc.RpcError:
            q.put(None)  # stream ended

    def start(self):
        handler = grpc.method_handlers_generic_handler("v1beta1.Registration", {
            "Register": grpc.unary_unary_rpc_method_handler(
                self._register, request_deserializer=self.api.RegisterRequest.FromString,
                response_serializer=lambda m: m.SerializeToString())})
        from concurrent import futures
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self.server.add_generic_rpc_handlers((handler,))
        self.server.add_insecure_port("unix://" + os.path.join(self.dir, "kubelet.sock"))
        self.server.start()

    def stop(self):
        if self.server:
            self.server.stop(0).wait()
            self.server = None
        for c in self.clients.values():
            c.close()
        self.clients = {}
        try:
            os.unlink(os.path.join(self.dir, "kubelet.sock"))
        except FileNotFoundError:
            pass

    def restart(self):
        """Stops, deletes every socket in the directory, serves again."""
        self.stop()
        for name in os.listdir(self.dir):
            p = os.path.join(self.dir, name)
            if stat.S_ISSOCK(os.lstat(p).st_mode):
                os.unlink(p)
        self.updates = {}
        self.start()

    def next_registration(self, timeout):
        try:
            return self.registrations.get(timeout=timeout)
        except queue.Empty:
            return None, None

    def next_update(self, resource, timeout):
        q = self.updates.setdefault(resource, queue.Queue())
        try:
            return q.get(timeout=timeout)
        except queue.Empty:
            return "timeout"


# --- scenario ------------------------------------------------------------------------
class Tap:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, desc, cond, detail=""):
        if cond:
            self.passed += 1
            print("ok   - " + desc, flush=True)
        else:
            self.failed += 1
            print("FAIL - %s%s" % (desc, (" (" + str(detail) + ")") if detail else ""), flush=True)
        return cond

    def eq(self, desc, want, got):
        return self.check(desc, want == got, "expected %r, got %r" % (want, got))


def rpc_code(fn):
    try:
        fn()
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as e:
        return e.code(), e.details() or ""


def health_of(update):
    if not isinstance(update, list) or not update:
        return update
    hs = {h for _, h in update}
    return hs.pop() if len(hs) == 1 else "mixed"


def wait_health(k, t, resource, want, desc, timeout=15):
    deadline = time.time() + timeout
    got = None
    while time.time() < deadline:
        u = k.next_update(resource, max(0.1, deadline - time.time()))
        if u == "timeout":
            break
        got = health_of(u)
        if got == want:
            break
    return t.eq(desc, want, got)


def expect_registrations(k, t, names, kdir, what, timeout=15):
    # A Register the stand-in refused, or whose endpoint it could not dial
    # (a restart still deleting sockets), is retried by the plugin: wait for
    # a good one, and report the last failure if none comes.
    seen, failed = {}, {}
    deadline = time.time() + timeout
    while set(seen) != set(names) and time.time() < deadline:
        req, opts = k.next_registration(max(0.1, deadline - time.time()))
        if req is None:
            break
        if isinstance(opts, str):
            failed[req.resource_name] = (req, opts)
        else:
            seen[req.resource_name] = (req, opts)
    for name, entry in failed.items():
        if name not in seen and entry[1] != "rejected":
            seen[name] = entry
    t.eq("%s: Register from every resource" % what, sorted(names), sorted(seen))
    for name, (req, opts) in sorted(seen.items()):
        t.eq("%s: %s: version" % (what, name), "v1beta1", req.version)
        p = os.path.join(kdir, req.endpoint)
        # After a restart that raced with the plugin recreating its socket,
        # the socket may be between a deletion and its next creation.
        for _ in range(40):
            if os.path.lexists(p):
                break
            time.sleep(0.05)
        st = os.lstat(p) if os.path.lexists(p) else None
        t.check("%s: %s: endpoint %s is a socket in the kubelet dir, mode 0600"
                % (what, name, req.endpoint),
                st is not None and stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
                and "/" not in req.endpoint, st and oct(st.st_mode))
        t.check("%s: %s: the kubelet could dial back (GetDevicePluginOptions)" % (what, name),
                not isinstance(opts, str), opts)
        if not isinstance(opts, str):
            t.eq("%s: %s: options (pre_start_required, get_preferred_allocation_available)"
                 % (what, name), (False, False),
                 (opts.pre_start_required, opts.get_preferred_allocation_available))
            t.eq("%s: %s: Register carries the same options" % (what, name), (False, False),
                 (req.options.pre_start_required, req.options.get_preferred_allocation_available))
    return seen


def scenario(args):
    api = Api()
    t = Tap()
    kdir, host = args.kubelet_dir, args.host_root
    slots = args.slots
    onload, zf, testdev = "amd.com/onload", "amd.com/zf", "oci-decorator.test/testdev"
    names = [onload, zf, testdev]
    k = Kubelet(api, kdir)
    log = open(args.plugin_log, "ab")
    cmd = [args.plugin, "--config-dir", args.config_dir, "--host-root", host,
           "--log-level", "debug", "kubernetes", "--kubelet-dir", kdir, "--slots", str(slots)]
    if args.cdi_dir:
        cmd += ["--cdi-dir", args.cdi_dir]
    plugin = subprocess.Popen(cmd, stdout=log, stderr=log, env={})
    try:
        return run_scenario(api, t, k, plugin, args, names, kdir, host, slots)
    finally:
        if plugin.poll() is None:
            plugin.kill()
            plugin.wait()
        k.stop()
        print("%d passed, %d failed" % (t.passed, t.failed), flush=True)


def run_scenario(api, t, k, plugin, args, names, kdir, host, slots):
    onload, zf, testdev = names
    # 1. No kubelet yet: the plugin serves and waits.
    time.sleep(1.0)
    t.check("no kubelet.sock: the plugin keeps running", plugin.poll() is None, plugin.returncode)
    k.start()
    seen = expect_registrations(k, t, names, kdir, "first start")
    if len(seen) != len(names):
        return 1

    # 2. ListAndWatch: every slot, healthy.
    for name in names:
        u = k.next_update(name, 10)
        prefix = name.split("/")[1]
        t.eq("ListAndWatch %s: %d IDs %s-0.." % (name, slots, prefix),
             ["%s-%d" % (prefix, i) for i in range(slots)],
             [i for i, _ in u] if isinstance(u, list) else u)
        t.eq("ListAndWatch %s: all Healthy" % name, "Healthy", health_of(u))

    # 3. Allocate.
    c = PluginClient(api, os.path.join(kdir, seen[onload][0].endpoint))
    code, _ = rpc_code(lambda: c.allocate_ids(["onload-0"], ["onload-1", "onload-%d" % (slots - 1)]))
    t.eq("Allocate onload-0 / onload-1,onload-N: OK", grpc.StatusCode.OK, code)
    resp = c.allocate_ids(["onload-0"], ["onload-1"])
    t.eq("Allocate: one answer per container", 2, len(resp.container_responses))
    r = resp.container_responses[0]
    t.eq("Allocate: cdi_devices", ["amd.com/onload=onload"], [d.name for d in r.cdi_devices])
    mounts = {m.container_path: (m.host_path, m.read_only) for m in r.mounts}
    # Libraries go into both standard library directories (the plugin answers
    # for every image), from the host's file.
    for libdir in LIBRARY_DIRS:
        t.eq("Allocate: libonload.so mounted read-only from the host root at " + libdir,
             (host + "/usr/lib64/libonload.so", True), mounts.get(libdir + "/libonload.so"))
    devs = {d.container_path: (d.host_path, d.permissions) for d in r.devices}
    t.eq("Allocate: /dev/onload from the host root, rw", (host + "/dev/onload", "rw"),
         devs.get("/dev/onload"))
    if args.cdi_dir:
        # With --cdi-dir the preload goes through the CDI writer's preload
        # file at /etc/ld.so.preload, which keeps a container's own
        # LD_PRELOAD (issue 20, finding 11); the file may not be written yet
        # on the very first answer, so ask again until it is.
        want = (os.path.join(args.cdi_dir, "oci-decorator-onload.onload.preload"), True)
        for _ in range(50):
            if mounts.get("/etc/ld.so.preload") == want:
                break
            time.sleep(0.1)
            r = c.allocate_ids(["onload-0"]).container_responses[0]
            mounts = {m.container_path: (m.host_path, m.read_only) for m in r.mounts}
        t.eq("Allocate with --cdi-dir: the CDI preload file mounted read-only at /etc/ld.so.preload",
             want, mounts.get("/etc/ld.so.preload"))
        t.eq("Allocate with --cdi-dir: no LD_PRELOAD in envs", None, r.envs.get("LD_PRELOAD"))
    else:
        t.eq("Allocate: LD_PRELOAD", LIBRARY_DIRS[0] + "/libonload.so", r.envs.get("LD_PRELOAD"))
    code, msg = rpc_code(lambda: c.allocate_ids(["onload-0", "gpu-7"]))
    t.eq("Allocate unknown ID: INVALID_ARGUMENT", grpc.StatusCode.INVALID_ARGUMENT, code)
    t.check("…naming the ID", '"gpu-7"' in msg, msg)
    code, _ = rpc_code(lambda: c.allocate_ids(["onload-%d" % slots]))
    t.eq("Allocate onload-<slots> (out of range): INVALID_ARGUMENT",
         grpc.StatusCode.INVALID_ARGUMENT, code)
    code, _ = rpc_code(lambda: c.allocate(api.AllocateRequest(), timeout=5))
    t.eq("Allocate with no container request: INVALID_ARGUMENT",
         grpc.StatusCode.INVALID_ARGUMENT, code)
    code, _ = rpc_code(lambda: c.allocate_ids([]))
    t.eq("Allocate with an empty container request: INVALID_ARGUMENT",
         grpc.StatusCode.INVALID_ARGUMENT, code)
    code, _ = rpc_code(lambda: c.raw_allocate(b"\xff\xff\xff\xff\x0f garbage", timeout=5))
    t.check("Allocate with bytes that are not a message: an error, not a crash (%s)" % code,
            code != grpc.StatusCode.OK and code != grpc.StatusCode.UNAVAILABLE, code)
    code, _ = rpc_code(lambda: c.allocate_ids(["onload-0\n\x00" + "x" * 100000]))
    t.eq("Allocate with a 100 kB ID holding a newline and a NUL: INVALID_ARGUMENT",
         grpc.StatusCode.INVALID_ARGUMENT, code)
    code, _ = rpc_code(lambda: c.preferred(api.PreferredAllocationRequest(), timeout=5))
    t.eq("GetPreferredAllocation: UNIMPLEMENTED (not offered)", grpc.StatusCode.UNIMPLEMENTED, code)
    code, _ = rpc_code(lambda: c.prestart(api.PreStartContainerRequest(), timeout=5))
    t.eq("PreStartContainer: OK", grpc.StatusCode.OK, code)
    t.check("the plugin survived every request", plugin.poll() is None, plugin.returncode)
    c.close()

    if args.cdi_dir:
        spec = os.path.join(args.cdi_dir, "oci-decorator-onload.json")
        try:
            with open(spec) as f:
                j = json.load(f)
            t.eq("--cdi-dir: spec for amd.com/onload with devices onload, zf, all and the profile devices",
                 ("amd.com/onload", ["onload", "zf", "all", "onload-latency", "onload-throughput", "onload-x4-shared"]),
                 (j.get("kind"), [d["name"] for d in j.get("devices", [])]))
        except (OSError, ValueError) as e:
            t.check("--cdi-dir: spec %s written" % spec, False, e)

    # 4. A device node disappears: onload goes Unhealthy, zf does not.
    node = os.path.join(host, "dev", "onload")
    st = os.lstat(node)
    os.unlink(node)
    wait_health(k, t, onload, "Unhealthy", "/dev/onload removed: onload Unhealthy on the stream")
    t.eq("/dev/onload removed: no update for zf (it needs sfc_char only)", "timeout",
         k.next_update(zf, 0.5))
    c = PluginClient(api, os.path.join(kdir, seen[onload][0].endpoint))
    code, msg = rpc_code(lambda: c.allocate_ids(["onload-0"]))
    t.eq("Allocate on the unhealthy onload: FAILED_PRECONDITION",
         grpc.StatusCode.FAILED_PRECONDITION, code)
    t.check("…saying why (/dev/onload)", "onload" in msg and "unhealthy" in msg, msg)
    c.close()
    os.mknod(node, stat.S_IFCHR | 0o666, st.st_rdev)
    wait_health(k, t, onload, "Healthy", "/dev/onload back: onload Healthy again")

    # 5. A broken inventory: its resources go Unhealthy, the other stays.
    inv = os.path.join(args.config_dir, "onload.json")
    with open(inv) as f:
        good = f.read()
    with open(inv, "w") as f:
        f.write("{ this is not json")
    wait_health(k, t, onload, "Unhealthy", "onload.json broken: onload Unhealthy")
    wait_health(k, t, zf, "Unhealthy", "onload.json broken: zf Unhealthy")
    t.eq("onload.json broken: testdev gets no update", "timeout", k.next_update(testdev, 0.5))
    c = PluginClient(api, os.path.join(kdir, seen[testdev][0].endpoint))
    code, _ = rpc_code(lambda: c.allocate_ids(["testdev-0"]))
    t.eq("onload.json broken: Allocate testdev still OK", grpc.StatusCode.OK, code)
    c.close()
    with open(inv, "w") as f:
        f.write(good)
    wait_health(k, t, onload, "Healthy", "onload.json fixed: onload Healthy")
    wait_health(k, t, zf, "Healthy", "onload.json fixed: zf Healthy")

    # 6. The kubelet restarts (deleting every socket), first Registers fail.
    k.reject = 1
    k.restart()
    expect_registrations(k, t, names, kdir, "after a kubelet restart")
    for name in names:
        t.eq("after a kubelet restart: ListAndWatch %s Healthy" % name, "Healthy",
             health_of(k.next_update(name, 10)))

    # 6b. A new kubelet.sock while the plugin sockets stay (no clean-up):
    # the new kubelet still needs every registration.
    time.sleep(1.5)
    while k.next_registration(0.1)[0] is not None:
        pass
    k.stop()
    k.start()
    expect_registrations(k, t, names, kdir, "new kubelet.sock, plugin sockets kept")

    # A socket the plugin recreated while the restart was still deleting
    # (as the real kubelet does) is served and registered once more: fine.
    time.sleep(1.5)
    while k.next_registration(0.1)[0] is not None:
        pass

    # 7. An inventory goes away, then comes back.
    tinv = os.path.join(args.config_dir, "testdev.json")
    tsock = os.path.join(kdir, seen[testdev][0].endpoint)
    with open(tinv) as f:
        tgood = f.read()
    os.unlink(tinv)
    deadline = time.time() + 10
    while os.path.exists(tsock) and time.time() < deadline:
        time.sleep(0.1)
    t.check("testdev.json removed: its socket is removed", not os.path.exists(tsock))
    t.check("testdev.json removed: onload's socket stays",
            os.path.exists(os.path.join(kdir, seen[onload][0].endpoint)))
    with open(tinv, "w") as f:
        f.write(tgood)
    expect_registrations(k, t, [testdev], kdir, "testdev.json back")

    # 8. SIGHUP re-checks; the plugin stays.
    plugin.send_signal(signal.SIGHUP)
    time.sleep(0.3)
    t.check("SIGHUP: the plugin keeps running", plugin.poll() is None, plugin.returncode)

    # 9. SIGTERM: exit 0, our sockets gone.
    plugin.send_signal(signal.SIGTERM)
    try:
        rc = plugin.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = "still running after 10 s"
    t.eq("SIGTERM: exit 0", 0, rc)
    # The lock directory stays (kubelet_lock.h: a lock file is never removed).
    left = sorted(n for n in os.listdir(kdir)
                  if n not in ("kubelet.sock", "oci-decorator-device-plugin"))
    t.eq("SIGTERM: the plugin's sockets are removed", [], left)
    return 1 if t.failed else 0


# --- allocate and bench --------------------------------------------------------------
def allocate_cmd(args):
    api = Api()
    c = PluginClient(api, args.socket)
    try:
        resp = c.allocate_ids(args.ids.split(","))
    except grpc.RpcError as e:
        print("%s: %s" % (e.code().name, e.details()), file=sys.stderr)
        return 1
    print(json_format.MessageToJson(resp, preserving_proto_field_name=True))
    return 0


def devices_cmd(args):
    """The first ListAndWatch answer, as the kubelet receives it, as JSON."""
    api = Api()
    c = PluginClient(api, args.socket)
    try:
        for resp in c.list_and_watch(api.Empty(), timeout=10):
            print(json_format.MessageToJson(resp, preserving_proto_field_name=True))
            return 0
    except grpc.RpcError as e:
        print("%s: %s" % (e.code().name, e.details()), file=sys.stderr)
        return 1
    finally:
        c.close()
    print("ListAndWatch ended without an answer", file=sys.stderr)
    return 1


def serve_cmd(args):
    k = Kubelet(Api(), args.kubelet_dir)
    k.start()
    print("serving", flush=True)
    while True:
        req, opts = k.next_registration(3600)
        if req is not None:
            print("%s %s" % ("registered" if not isinstance(opts, str) else "refused",
                             req.resource_name), flush=True)


def hung_cmd(args):
    """Register never returns; the plugin's streams stay open meanwhile."""
    from concurrent import futures
    api = Api()
    forever = threading.Event()
    clients = []

    def register(request, context):
        c = PluginClient(api, os.path.join(args.kubelet_dir, request.endpoint))
        stream = c.list_and_watch(api.Empty())

        def drain():
            try:
                for _ in stream:
                    pass
            except grpc.RpcError:
                pass
        threading.Thread(target=drain, daemon=True).start()
        clients.append((c, stream))
        print("hung %s" % request.resource_name, flush=True)
        forever.wait()
        return api.Empty()

    handler = grpc.method_handlers_generic_handler("v1beta1.Registration", {
        "Register": grpc.unary_unary_rpc_method_handler(
            register, request_deserializer=api.RegisterRequest.FromString,
            response_serializer=lambda m: m.SerializeToString())})
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port("unix://" + os.path.join(args.kubelet_dir, "kubelet.sock"))
    server.start()
    print("serving", flush=True)
    forever.wait()


def proc_cpu_rss(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])   # utime + stime
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return ticks, rss


def bench_cmd(args):
    api = Api()
    c = PluginClient(api, args.socket)
    ids = args.ids.split(",")
    for _ in range(50):
        c.allocate_ids(ids)
    lat = []
    for _ in range(args.calls):
        t0 = time.perf_counter()
        c.allocate_ids(ids)
        lat.append(time.perf_counter() - t0)
    lat.sort()
    pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1e3
    print("allocate_calls %d" % args.calls)
    print("allocate_p50_ms %.3f" % pct(0.50))
    print("allocate_p99_ms %.3f" % pct(0.99))
    print("allocate_max_ms %.3f" % (lat[-1] * 1e3))
    c.close()
    if args.pid:
        hz = os.sysconf("SC_CLK_TCK")
        t0, _ = proc_cpu_rss(args.pid)
        time.sleep(args.idle)
        t1, rss = proc_cpu_rss(args.pid)
        print("idle_cpu_seconds %.2f over %d s (%.3f%%)" % ((t1 - t0) / hz, args.idle,
                                                          100.0 * (t1 - t0) / hz / args.idle))
        print("rss_kb %d" % rss)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("scenario")
    s.add_argument("--plugin", required=True)
    s.add_argument("--kubelet-dir", required=True)
    s.add_argument("--config-dir", required=True)
    s.add_argument("--host-root", required=True)
    s.add_argument("--cdi-dir", default="")
    s.add_argument("--slots", type=int, default=16)
    s.add_argument("--plugin-log", required=True)
    a = sub.add_parser("allocate")
    a.add_argument("--socket", required=True)
    a.add_argument("--ids", required=True)
    d = sub.add_parser("devices")
    d.add_argument("--socket", required=True)
    for name in ("serve", "hung"):
        sub.add_parser(name).add_argument("--kubelet-dir", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--socket", required=True)
    b.add_argument("--ids", default="onload-0")
    b.add_argument("--calls", type=int, default=2000)
    b.add_argument("--pid", type=int, default=0)
    b.add_argument("--idle", type=int, default=10)
    args = ap.parse_args()
    return {"scenario": scenario, "allocate": allocate_cmd, "devices": devices_cmd,
            "serve": serve_cmd, "hung": hung_cmd, "bench": bench_cmd}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
