#!/usr/bin/env python3
"""A stand-in for journald and syslogd in the logs_journald test: binds unix
datagram sockets and appends each datagram received, decoded, as one JSON
line to OUT. journald's native protocol (KEY=value, or KEY\\n<le64 length>
value\\n for values holding a newline) becomes an object of fields; a syslog
datagram becomes {"SYSLOG_RAW": text}.
usage: journal_receiver.py OUT READY_FILE journald:PATH syslog:PATH ..."""
import json
import os
import select
import socket
import struct
import sys


def journal_fields(data):
    fields, i = {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            i = nl + 1
        else:
            k = line
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            v = data[nl + 9:nl + 9 + n]
            if data[nl + 9 + n:nl + 10 + n] != b"\n":
                raise ValueError("binary field not followed by a newline")
            i = nl + 10 + n
        fields[k.decode()] = v.decode("utf-8", "replace")
    return fields


def main():
    out, ready = sys.argv[1], sys.argv[2]
    socks = {}
    for spec in sys.argv[3:]:
        kind, path = spec.split(":", 1)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        s.bind(path)
        os.chmod(path, 0o666)
        socks[s] = kind
    open(ready, "w").close()
    with open(out, "a", buffering=1) as f:
        while True:
            for s in select.select(list(socks), [], [])[0]:
                data = s.recv(16 << 20)
                try:
                    rec = journal_fields(data) if socks[s] == "journald" else {"SYSLOG_RAW": data.decode("utf-8", "replace")}
                except (ValueError, struct.error) as e:
                    rec = {"UNDECODABLE": str(e)}
                rec["_TARGET"] = socks[s]
                f.write(json.dumps(rec) + "\n")


main()
