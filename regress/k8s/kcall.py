#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""kcall.py SOCK TOOL ARGUMENTS-JSON [--cancel-after S]: one tool call on
runner.sock (regress/runnerd/runcall.py's call_tool); prints the result
JSON.  kcall.py SOCK TOOL ARGUMENTS-JSON -n N: N calls one after
another; prints {"calls", "ms_per_call", "failed"}."""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runnerd"))
from runcall import call_tool  # noqa: E402


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
        print(json.dumps(call_tool(a.sock, a.tool, args, a.cancel_after)))
        return 0
    failed = 0
    t0 = time.monotonic()
    for _ in range(a.n):
        failed += bool(call_tool(a.sock, a.tool, args).get("isError", True))
    dt = time.monotonic() - t0
    print(json.dumps({"calls": a.n, "ms_per_call": round(dt * 1000 / a.n, 1),
                      "failed": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
