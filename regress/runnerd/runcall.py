#!/usr/bin/env python3
"""A client of runner.sock for runnerd's tests and benchmark.

  runcall.py SOCK COMMAND          one run_shell call; prints the result JSON
  runcall.py SOCK COMMAND --cancel-after S
                                   sends MSG_TOOL_CANCEL after S seconds
  runcall.py SOCK COMMAND -n N -c C
                                   N calls, C at a time; prints calls/s
"""
import argparse
import json
import os
import socket
import struct
import sys
import threading
import time

HDR = struct.Struct("<IIIHHQ")
MSG_ERROR, MSG_TOOL_CALL, MSG_TOOL_CANCEL, MSG_TOOL_RESULT = 3, 100, 101, 103


def frame(mtype, reqid, payload=b""):
    return HDR.pack(mtype, len(payload), 0, 1, 0, reqid) + payload


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("runnerd closed the connection")
        buf += chunk
    return buf


def call(path, command, tool="run_shell", cancel_after=None):
    reqid = int.from_bytes(os.urandom(8), "little") | 1
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    body = json.dumps({"tool": tool, "arguments": {"command": command},
                       "session_owner": "test", "progress": False}).encode()
    s.sendall(frame(MSG_TOOL_CALL, reqid, body))
    if cancel_after is not None:
        time.sleep(cancel_after)
        s.sendall(frame(MSG_TOOL_CANCEL, reqid))
    mtype, length, _, _, _, rid = HDR.unpack(recv_exact(s, HDR.size))
    data = recv_exact(s, length)
    s.close()
    if mtype == MSG_ERROR:
        code, text = struct.unpack("<i256s", data)
        return {"protocol_error": code, "text": text.rstrip(b"\0").decode()}
    if mtype != MSG_TOOL_RESULT or rid != reqid:
        raise RuntimeError("unexpected reply %d" % mtype)
    return json.loads(data)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sock")
    p.add_argument("command")
    p.add_argument("--tool", default="run_shell")
    p.add_argument("--cancel-after", type=float)
    p.add_argument("-n", type=int, default=0)
    p.add_argument("-c", type=int, default=1)
    a = p.parse_args()
    if a.n == 0:
        print(json.dumps(call(a.sock, a.command, a.tool, a.cancel_after)))
        return 0
    left = [a.n]
    failed = []
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            r = call(a.sock, a.command, a.tool)
            if r.get("isError", True):
                with lock:
                    failed.append(r)

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(a.c)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    dt = time.monotonic() - t0
    print(json.dumps({"calls": a.n, "concurrency": a.c, "seconds": round(dt, 3),
                      "per_second": round(a.n / dt, 2), "failed": len(failed)}))
    if failed:
        print(json.dumps(failed[0]), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
