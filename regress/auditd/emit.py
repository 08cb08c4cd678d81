#!/usr/bin/env python3
# Test double for a daemon's audit client: sends MSG_AUDIT_EVENT frames
# to audit.sock the way common/audit.c does and waits for each ack.
#   emit.py SOCK [-n COUNT] [-r REQID] [-e EVENT] [-d DAEMON] [-F JSON]
#   emit.py SOCK --trail REQID   (the events of one whole tool call)
# Prints the seq of every ack; exits 1 with auditd's reason otherwise.
import argparse
import json
import socket
import struct
import sys

HDR = struct.Struct("<IIIHHQ")
MSG_ERROR, MSG_AUDIT_EVENT, MSG_AUDIT_ACK = 3, 500, 501
# One call as the daemons record it, each over its own connection.
TRAIL = [("runnerd", "tool.request"), ("approvald", "guardrail.decision"),
         ("brokerd", "credential.issued"), ("runnerd", "sandbox.started"),
         ("runnerd", "sandbox.completed"), ("brokerd", "credential.revoked"),
         ("runnerd", "tool.result")]


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("auditd closed the connection")
        buf += chunk
    return buf


def emit(s, reqid, event, daemon, fields):
    body = json.dumps({"event": event, "request_id": "req-%016x" % reqid,
                       "daemon": daemon, "fields": fields}).encode()
    s.sendall(HDR.pack(MSG_AUDIT_EVENT, len(body), 0, 1, 0, reqid) + body)
    typ, ln, _, _, _, rid = HDR.unpack(recv_exact(s, HDR.size))
    data = recv_exact(s, ln)
    if typ == MSG_ERROR:
        code, text = struct.unpack("<i256s", data)
        raise RuntimeError(text.split(b"\0")[0].decode())
    if typ != MSG_AUDIT_ACK or rid != reqid:
        raise RuntimeError("unexpected reply type %d" % typ)
    return json.loads(data)["seq"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sock")
    p.add_argument("-n", type=int, default=1)
    p.add_argument("-r", default="1")
    p.add_argument("-e", default="tool.request")
    p.add_argument("-d", default="runnerd")
    p.add_argument("-F", default="{}")
    p.add_argument("--trail")
    a = p.parse_args()
    conns = {}

    def conn(daemon):
        if daemon not in conns:
            conns[daemon] = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conns[daemon].connect(a.sock)
        return conns[daemon]

    try:
        if a.trail:
            for daemon, ev in TRAIL:
                print(emit(conn(daemon), int(a.trail, 16), ev, daemon,
                           json.loads(a.F)))
        else:
            s = conn(a.d)
            for _ in range(a.n):
                print(emit(s, int(a.r, 16), a.e, a.d, json.loads(a.F)))
    except (RuntimeError, EOFError, OSError) as e:
        print("emit: %s" % e, file=sys.stderr)
        sys.exit(1)


main()
