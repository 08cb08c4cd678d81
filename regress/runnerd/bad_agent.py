#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A stand-in session agent for t_agentreply.sh.  It speaks the agent's
framing (see sandbox-init/session-agent.py) and answers run_python with the
value of the code as an expression, except that code "bad:CASE" makes
it misbehave as CASE says: what a session's own code could do once it
has replaced the agent.
"""
import json
import os
import select
import struct

HDR = struct.Struct("<IIIHHQ")
AGENT_READY, AGENT_REQUEST, AGENT_REPLY = 950, 951, 952
MIB = 1 << 20


def read_exact(n):
    buf = b""
    while len(buf) < n:
        try:
            chunk = os.read(0, n - len(buf))
        except BlockingIOError:
            select.select([0], [], [])
            continue
        if not chunk:
            raise SystemExit(0)
        buf += chunk
    return buf


def send(mtype, payload, reqid=0):
    data = HDR.pack(mtype, len(payload), 0, 1, 0, reqid) + payload
    while data:
        try:
            data = data[os.write(1, data):]
        except BlockingIOError:
            select.select([], [1], [])


def fine(text):
    return json.dumps({"exit_code": 0, "stdout": text, "stderr": ""}).encode()


# CASE: the (payload, reqid) frames that answer a call whose id is rid.
BAD = {
    # Past the reply cap, yet under the frame limit.
    "oversized": lambda rid: [(b'{"stdout": "' + b"a" * (12 * MIB) +
                               b'"}', rid)],
    # Under 4 MiB as sent; re-encoded, each 1e-7 takes 22 bytes.
    "growing": lambda rid: [(b'{"stdout": "", "x": [' +
                             b",".join([b"1e-7"] * (4 * MIB // 5 - 64)) +
                             b']}', rid)],
    "nonobject": lambda rid: [(b"[0]", rid)],
    "duplicate": lambda rid: [(fine("once\n"), rid), (fine("twice\n"), rid)],
    "othercall": lambda rid: [(fine("other\n"), rid + 1)],
    "flood": lambda rid: [(fine("flood\n"), rid)] * 10000,
}


def main():
    send(AGENT_READY, b'{"pid": %d}' % os.getpid())
    while True:
        mtype, length, _, _, _, rid = HDR.unpack(read_exact(HDR.size))
        data = read_exact(length)
        if mtype != AGENT_REQUEST:
            continue
        code = json.loads(data).get("code", "")
        if code.startswith("bad:"):
            for payload, reqid in BAD[code[4:]](rid):
                send(AGENT_REPLY, payload, reqid)
        else:
            send(AGENT_REPLY, fine("%r\n" % eval(code)), rid)


if __name__ == "__main__":
    main()
