#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Session benchmark (not a test), driven by bench_sessions.sh:

  bench_sessions.py WARM_DIR COLD_DIR SUITE_DIR MCPD [ROUNDS] [CALLS]

WARM_DIR and COLD_DIR each hold a running runnerd (run/runner.sock),
the first with warm_pool 1, the second with warm_pool 0.  Measures, in
alternating rounds so that both see the same load, the first call of a
new session (open + run_python "1") when it claims a warm sandbox and
when it cold-starts one.  Then p50/p99 of run_python("1+1") in a warm
session through mcpd's stdio, mcpd started on SUITE_DIR/conf.yaml (the
real approvald and auditd behind runnerd), and on its runner.sock
directly.
"""
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True      # run from the source tree
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "mcpd"))
from sesscall import Client  # noqa: E402
from mcp_check import Mcpd  # noqa: E402


def pct(vals, p):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(len(vals) * p))]


def first_call(sock):
    """ms of the call that opens a session, and the launcher's start_ms."""
    c = Client(sock)
    t0 = time.perf_counter()
    r = c.call("run_python", code="1")
    ms = (time.perf_counter() - t0) * 1000
    if r.get("isError"):
        raise SystemExit("open failed: " + json.dumps(r))
    sid = r["structuredContent"]["session_id"]
    c.call("close_session", session_id=sid)
    c.close()
    return ms


def start_ms(d):
    with open(os.path.join(d, "events.jsonl")) as f:
        return [json.loads(line)["fields"] for line in f
                if '"sandbox.started"' in line]


def main():
    warm, cold, suite, mcpd = sys.argv[1:5]
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 10
    calls = int(sys.argv[6]) if len(sys.argv) > 6 else 500
    wsock = os.path.join(warm, "run/runner.sock")
    csock = os.path.join(cold, "run/runner.sock")
    w_ms, c_ms = [], []
    for _ in range(rounds):
        time.sleep(2)           # the pool refills
        w_ms.append(first_call(wsock))
        c_ms.append(first_call(csock))
    ws = [f for f in start_ms(warm) if f.get("warm")]
    cs = [f for f in start_ms(cold) if not f.get("warm")]
    if len(ws) != rounds or len(cs) != rounds:
        raise SystemExit("expected %d warm and %d cold starts, got %d, %d"
                         % (rounds, rounds, len(ws), len(cs)))
    w, c = statistics.median(w_ms), statistics.median(c_ms)
    print("new session + run_python('1'), median of %d: warm pool claim "
          "%.1f ms, cold start %.1f ms, ratio %.3f" % (rounds, w, c, w / c))
    print("  launcher's claim-to-ready: warm %d ms, cold %d ms (medians)" % (
        statistics.median(f["start_ms"] for f in ws),
        statistics.median(f["start_ms"] for f in cs)))

    # run_python("1+1") in a warm session through mcpd.
    os.chdir(suite)
    m = Mcpd(mcpd, os.path.join(suite, "conf.yaml"))
    m.initialize()
    r = m.call("tools/call", {"name": "run_python",
                              "arguments": {"code": "1"}}, timeout=60)
    sid = r["result"]["structuredContent"]["session_id"]
    lat = []
    for _ in range(calls):
        t0 = time.perf_counter()
        r = m.call("tools/call", {"name": "run_python", "arguments": {
            "code": "1+1", "session_id": sid}})
        lat.append((time.perf_counter() - t0) * 1000)
        if r["result"]["structuredContent"].get("stdout") != "2\n":
            raise SystemExit("bad result: " + json.dumps(r))
    print("run_python('1+1') through mcpd, warm session, %d calls: "
          "p50 %.2f ms, p99 %.2f ms" % (calls, pct(lat, .5), pct(lat, .99)))
    m.close()
    c = Client(os.path.join(suite, "run/runner.sock"))
    sid = c.call("run_python", code="1")["structuredContent"]["session_id"]
    lat = []
    for _ in range(calls):
        t0 = time.perf_counter()
        c.call("run_python", code="1+1", session_id=sid)
        lat.append((time.perf_counter() - t0) * 1000)
    print("run_python('1+1') on runner.sock directly, %d calls: "
          "p50 %.2f ms, p99 %.2f ms" % (calls, pct(lat, .5), pct(lat, .99)))


if __name__ == "__main__":
    main()
