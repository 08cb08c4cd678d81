#!/usr/bin/env python3
"""kcall.py SOCK TOOL ARGUMENTS-JSON [--cancel-after S]: one tool call on
runner.sock (the framing of regress/runnerd/runcall.py); prints the
result JSON.  kcall.py SOCK TOOL ARGUMENTS-JSON -n N: N calls one after
another; prints {"calls", "ms_per_call", "failed"}."""
import argparse
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runnerd"))
from runcall import (HDR, MSG_ERROR, MSG_TOOL_CALL, MSG_TOOL_CANCEL,  # noqa
                     MSG_TOOL_RESULT, frame, recv_exact)


def call(path, tool, args, cancel_after=None):
    reqid = int.from_bytes(os.urandom(8), "little") | 1
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    body = json.dumps({"tool": tool, "arguments": args,
                       "session_owner": "test", "progress": False})
    s.sendall(frame(MSG_TOOL_CALL, reqid, body.encode()))
    if cancel_after is not None:
        time.sleep(cancel_after)
        s.sendall(frame(MSG_TOOL_CANCEL, reqid))
    mtype, length, _, _, _, rid = HDR.unpack(recv_exact(s, HDR.size))
    data = recv_exact(s, length)
    s.close()
    if mtype != MSG_TOOL_RESULT or rid != reqid:
        raise RuntimeError("unexpected reply %d" % mtype)
    return json.loads(data)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sock")
    p.add_argument("tool")
    p.add_argument("arguments")
    p.add_argument("--cancel-after", type=float)
    p.add_argument("-n", type=int, default=0)
    a = p.parse_args()
    args = json.loads(a.arguments)
    if a.n == 0:
        print(json.dumps(call(a.sock, a.tool, args, a.cancel_after)))
        return 0
    failed = 0
    t0 = time.monotonic()
    for _ in range(a.n):
        failed += bool(call(a.sock, a.tool, args).get("isError", True))
    dt = time.monotonic() - t0
    print(json.dumps({"calls": a.n, "ms_per_call": round(dt * 1000 / a.n, 1),
                      "failed": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
