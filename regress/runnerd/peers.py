#!/usr/bin/env python3
"""Stand-ins for approvald, brokerd and auditd in runnerd's tests.

Serves approval.sock, broker.sock and audit.sock in RUNDIR with the
suite's framing and answers as the wire contracts say: every decision
is "allow" (or "deny" for --deny TOOL), with --egress host:port entries;
brokerd issues engine "none", or with --secret a sealed memfd holding it
(engine "test"); every audit event is acknowledged and appended, one
JSON line each, to --events FILE.  --audit-fail makes auditd answer
every event with MSG_ERROR, so runnerd must fail closed.
"""
import argparse
import json
import os
import socket
import socketserver
import struct
import threading
import fcntl

HDR = struct.Struct("<IIIHHQ")
MSG_ERROR = 3
MSG_DECIDE, MSG_DECISION = 200, 201
MSG_CRED_ISSUE, MSG_CRED_ISSUED, MSG_CRED_REVOKE, MSG_CRED_REVOKED = 400, 401, 402, 403
MSG_AUDIT_EVENT, MSG_AUDIT_ACK = 500, 501
MSGF_FD = 1
ERR_UNAVAIL = 4

opts = None
lock = threading.Lock()
seq = 0


def recv_frame(sock):
    hdr = b""
    while len(hdr) < HDR.size:
        chunk = sock.recv(HDR.size - len(hdr))
        if not chunk:
            return None
        hdr += chunk
    mtype, length, peerid, version, flags, reqid = HDR.unpack(hdr)
    data = b""
    while len(data) < length:
        chunk = sock.recv(length - len(data))
        if not chunk:
            return None
        data += chunk
    return mtype, reqid, data


def send_frame(sock, mtype, reqid, payload, fd=None):
    if isinstance(payload, (dict, list)):
        payload = json.dumps(payload).encode()
    frame = HDR.pack(mtype, len(payload), 0, 1, MSGF_FD if fd is not None else 0,
                     reqid) + payload
    if fd is None:
        sock.sendall(frame)
    else:
        socket.send_fds(sock, [frame], [fd])


def send_error(sock, reqid, code, text):
    send_frame(sock, MSG_ERROR, reqid, struct.pack("<i256s", code, text.encode()[:255]))


def record(line):
    global seq
    with lock:
        seq += 1
        with open(opts.events, "a") as f:
            f.write(json.dumps(line) + "\n")
        return seq


def sealed_secret(text):
    fd = os.memfd_create("credential", os.MFD_ALLOW_SEALING)
    os.write(fd, text.encode())
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK |
                fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    return fd


def answer(sock, mtype, reqid, body):
    if mtype == MSG_DECIDE:
        deny = body.get("tool") in opts.deny
        send_frame(sock, MSG_DECISION, reqid, {
            "decision": "deny" if deny else "allow",
            "tier": "deny" if deny else "low",
            "reason": "test policy", "egress": opts.egress,
            "destructive_patterns": [], "destructive_actions": False})
    elif mtype == MSG_CRED_ISSUE:
        lease = "lease-%016x" % reqid
        record({"peer": "brokerd", "issued": lease})
        if opts.secret:
            fd = sealed_secret(opts.secret)
            send_frame(sock, MSG_CRED_ISSUED, reqid, {
                "scope": "test", "engine": "test", "lease_id": lease,
                "ttl": 600, "namespace": None}, fd)
            os.close(fd)
        else:
            send_frame(sock, MSG_CRED_ISSUED, reqid, {
                "scope": "none", "engine": "none", "lease_id": lease,
                "ttl": 600, "namespace": None})
    elif mtype == MSG_CRED_REVOKE:
        record({"peer": "brokerd", "revoked": body.get("lease_id")})
        send_frame(sock, MSG_CRED_REVOKED, reqid, {"lease_id": body.get("lease_id")})
    elif mtype == MSG_AUDIT_EVENT:
        if opts.audit_fail:
            send_error(sock, reqid, ERR_UNAVAIL, "audit log unavailable")
            return
        n = record(body)
        send_frame(sock, MSG_AUDIT_ACK, reqid, {"seq": n})
    else:
        send_error(sock, reqid, 2, "unexpected message %d" % mtype)


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            frame = recv_frame(self.request)
            if frame is None:
                return
            mtype, reqid, data = frame
            answer(self.request, mtype, reqid, json.loads(data or b"{}"))


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main():
    global opts
    p = argparse.ArgumentParser()
    p.add_argument("rundir")
    p.add_argument("--events", required=True)
    p.add_argument("--deny", action="append", default=[])
    p.add_argument("--egress", action="append", default=[])
    p.add_argument("--secret")
    p.add_argument("--audit-fail", action="store_true")
    opts = p.parse_args()
    servers = []
    for name in ("approval.sock", "broker.sock", "audit.sock"):
        path = os.path.join(opts.rundir, name)
        if os.path.exists(path):
            os.unlink(path)
        srv = Server(path, Handler)
        servers.append(srv)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
