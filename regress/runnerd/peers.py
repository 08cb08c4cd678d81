#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Stand-ins for approvald, brokerd and auditd in runnerd's tests.

Serves approval.sock, broker.sock and audit.sock in RUNDIR with the
suite's framing and answers as the wire contracts say: every decision
is "allow" (or "deny" for --deny TOOL), with --egress host:port entries
and, with --reuse-ms N, an allow carries "reuse_ms": N, as approvald's
does for a tool decided on its name alone; --decisions FILE gets one
JSON line for each MSG_DECIDE that reached this approvald;
brokerd issues engine "none", or with --secret a sealed memfd holding it
(engine "test"); every audit event is acknowledged and appended, one
JSON line each, to --events FILE.  --audit-fail makes auditd answer
every event with MSG_ERROR, so runnerd must fail closed.  --serve NAME
(repeated) serves only those sockets, so that a test can stop one peer.
"""
import argparse
import fcntl
import json
import os
import socketserver
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from asframe import (ERR_BADMSG, ERR_UNAVAIL, MSG_AUDIT_ACK,  # noqa: E402
                     MSG_AUDIT_EVENT, MSG_CRED_ISSUE, MSG_CRED_ISSUED,
                     MSG_CRED_REVOKE, MSG_CRED_REVOKED, MSG_DECIDE,
                     MSG_DECISION, MSG_ERROR, error_pack, recv_frame,
                     send_frame)

opts = None
lock = threading.Lock()
seq = 0


def send_error(sock, reqid, code, text):
    send_frame(sock, MSG_ERROR, reqid, error_pack(code, text))


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
        if opts.decisions:
            with lock, open(opts.decisions, "a") as f:
                f.write(json.dumps({"tool": body.get("tool")}) + "\n")
        decision = {
            "decision": "deny" if deny else "allow",
            "tier": "deny" if deny else "low",
            "reason": "test policy", "egress": opts.egress,
            "destructive_patterns": [], "destructive_actions": False,
            "working_dir_path": opts.working_dir_path}
        if opts.reuse_ms and not deny:
            decision["reuse_ms"] = opts.reuse_ms
        send_frame(sock, MSG_DECISION, reqid, decision)
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
        send_error(sock, reqid, ERR_BADMSG, "unexpected message %d" % mtype)


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            frame = recv_frame(self.request)
            if frame is None:
                return
            mtype, reqid, data, _ = frame
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
    p.add_argument("--reuse-ms", type=int, default=0)
    p.add_argument("--decisions")
    p.add_argument("--secret")
    p.add_argument("--working-dir-path",
                   help="a terraform call's resolved working directory")
    p.add_argument("--audit-fail", action="store_true")
    p.add_argument("--serve", action="append",
                   choices=("approval.sock", "broker.sock", "audit.sock"))
    opts = p.parse_args()
    servers = []
    for name in opts.serve or ("approval.sock", "broker.sock", "audit.sock"):
        path = os.path.join(opts.rundir, name)
        if os.path.exists(path):
            os.unlink(path)
        srv = Server(path, Handler)
        servers.append(srv)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
