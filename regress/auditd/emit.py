#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# Test double for a daemon's audit client: sends MSG_AUDIT_EVENT frames
# to audit.sock the way common/audit.c does, but without "writer" and
# "seq" (as an older client would), and waits for each ack.
#   emit.py SOCK [-n COUNT] [-r REQID] [-e EVENT] [-d DAEMON] [-F JSON]
#   emit.py SOCK --trail REQID   (the events of one whole tool call)
# Prints the seq of every ack; exits 1 with auditd's reason otherwise.
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from asframe import (MSG_AUDIT_ACK, MSG_AUDIT_EVENT, MSG_ERROR,  # noqa: E402
                     Conn, error_unpack)

# One call as the daemons record it, each over its own connection.
TRAIL = [("runnerd", "tool.request"), ("approvald", "guardrail.decision"),
         ("brokerd", "credential.issued"), ("runnerd", "sandbox.started"),
         ("runnerd", "sandbox.completed"), ("brokerd", "credential.revoked"),
         ("runnerd", "tool.result")]


def emit(c, reqid, event, daemon, fields):
    typ, rid, data, _ = c.call(MSG_AUDIT_EVENT, {
        "event": event, "request_id": "req-%016x" % reqid,
        "daemon": daemon, "fields": fields}, reqid)
    if typ == MSG_ERROR:
        raise RuntimeError(error_unpack(data)[1])
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
            conns[daemon] = Conn(a.sock)
        return conns[daemon]

    try:
        if a.trail:
            for daemon, ev in TRAIL:
                print(emit(conn(daemon), int(a.trail, 16), ev, daemon,
                           json.loads(a.F)))
        else:
            c = conn(a.d)
            for _ in range(a.n):
                print(emit(c, int(a.r, 16), a.e, a.d, json.loads(a.F)))
    except (RuntimeError, EOFError, OSError) as e:
        print("emit: %s" % e, file=sys.stderr)
        sys.exit(1)


main()
