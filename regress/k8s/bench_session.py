#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Session figures on the kubernetes backend against the API double
(not a test), driven by bench.sh:

  bench_session.py SOCK POOL ROUNDS [CALLS]

The first call of a new session (open + run_python "1": the claim, its
binding, the exec and the agent's start) ROUNDS times, each after the
warm pool POOL is full again (a pool of replicas 0 gives the cold
figure: the claim makes its Sandbox); then, with CALLS, the p50 and p99
of run_python("1+1") in one session.  Prints milliseconds.
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "runnerd"))
from sesscall import Client  # noqa: E402


def pool_full(pool):
    """Waits until POOL has as many ready Sandboxes as it wants."""
    for _ in range(300):
        p = json.loads(subprocess.check_output(
            ("kubectl", "get", "sandboxwarmpool", pool, "-n",
             "agent-sandbox", "-o", "json")))
        want = p["spec"].get("replicas", 0)
        if p.get("status", {}).get("readyReplicas", 0) >= want:
            return
        time.sleep(0.1)
    raise SystemExit("pool %s never filled" % pool)


def pct(vals, p):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(len(vals) * p))]


def main():
    sock, pool, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    calls = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    firsts = []
    for _ in range(rounds):
        pool_full(pool)
        c = Client(sock)
        t0 = time.perf_counter()
        r = c.call("run_python", code="1")
        firsts.append((time.perf_counter() - t0) * 1000)
        if r.get("isError"):
            raise SystemExit("open failed: " + json.dumps(r))
        c.call("close_session", session_id=r["structuredContent"]
               ["session_id"])
        c.close()
    print("first call of a session (claim on %s): median %.0f ms, "
          "max %.0f ms over %d" % (pool, statistics.median(firsts),
                                   max(firsts), rounds))
    if not calls:
        return
    c = Client(sock)
    sid = c.call("run_python", code="1")["structuredContent"]["session_id"]
    lat = []
    for _ in range(calls):
        t0 = time.perf_counter()
        r = c.call("run_python", code="1+1", session_id=sid)
        lat.append((time.perf_counter() - t0) * 1000)
        if r["structuredContent"].get("stdout") != "2\n":
            raise SystemExit("run_python: " + json.dumps(r))
    print("run_python(\"1+1\") in a cluster session: p50 %.1f ms, p99 %.1f "
          "ms over %d" % (pct(lat, 0.5), pct(lat, 0.99), calls))


if __name__ == "__main__":
    main()
