#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
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
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sesscall import Client, ProtocolError  # noqa: E402


def call_tool(path, tool, arguments, cancel_after=None):
    """One call on its own connection: the result, or, when runnerd
    answers MSG_ERROR, {"protocol_error": code, "text": text}."""
    c = Client(path)
    try:
        reqid = c.send(tool, arguments)
        if cancel_after is not None:
            time.sleep(cancel_after)
            c.cancel(reqid)
        return c.result(reqid)
    except ProtocolError as e:
        return {"protocol_error": e.code, "text": e.text}
    finally:
        c.close()


def call(path, command, tool="run_shell", cancel_after=None):
    return call_tool(path, tool, {"command": command}, cancel_after)


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
