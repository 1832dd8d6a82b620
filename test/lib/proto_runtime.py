"""Message classes from .proto files, compiled at run time.

The test clients (the kubelet and Nomad stand-ins, the CRI client) are built
from the SAME verbatim .proto files the programs are built from, never from
generated code of their own: the system protoc writes a descriptor set, and
python3-protobuf's message factory makes the classes. (Debian's grpc_tools
bundles an older protoc that cannot generate Python code for the installed
protobuf runtime; a descriptor set has no such coupling.)
"""
import os
import subprocess
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def load(proto_dir, protos):
    """(pool, factory) for `protos` (paths relative to proto_dir) and every
    file they import."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "protos.desc")
        subprocess.run(["protoc", "--proto_path=" + proto_dir, "--include_imports",
                        "--descriptor_set_out=" + out] + list(protos), check=True)
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    return pool, message_factory.MessageFactory(pool)
