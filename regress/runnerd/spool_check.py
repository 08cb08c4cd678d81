#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""runnerd's audit spool across a crash (t_faults.sh:spool_crash).

  spool_check.py calls SOCK AUDITD_PID N
        opens a session, stops auditd (SIGSTOP), then runs N run_python
        calls in the session one after the other; each must answer
        within 1 s, its events spooled, not acknowledged
  spool_check.py once SPOOL AUDIT_LOG
        every event in SPOOL (a copy of the spool runnerd left when it
        was killed) is in the audit log exactly once, no writer's
        record is there twice, and every request has exactly one end
"""
import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sesscall import Client  # noqa: E402
import trail_check  # noqa: E402


def calls(sock, pid, n):
    c = Client(sock)
    c.conn.sock.settimeout(30)
    r = c.call("run_python", code="x = 0")
    if r.get("isError"):
        sys.exit("a session opens: " + json.dumps(r))
    sid = r["structuredContent"]["session_id"]
    os.kill(pid, signal.SIGSTOP)
    for i in range(n):
        t0 = time.monotonic()
        r = c.call("run_python", code="x += 1; print(x)", session_id=sid)
        ms = (time.monotonic() - t0) * 1000
        sc = r.get("structuredContent") or {}
        if sc.get("stdout") != "%d\n" % (i + 1):
            sys.exit("run_python with auditd stopped: " + json.dumps(r))
        if ms > 1000:
            sys.exit("run_python took %.0f ms with auditd stopped" % ms)
    # The connection stays open: runnerd is killed with the session.
    print("%d calls answered with auditd stopped" % n, flush=True)
    time.sleep(3600)


def once(spool, log):
    with open(spool) as f:
        spooled = [json.loads(line) for line in f if line.strip()]
    if not spooled:
        sys.exit("nothing was spooled")
    seen = {}
    for e in trail_check.events(log):
        if "writer" in e:
            key = (e["writer"], e["writer_seq"])
            if key in seen:
                sys.exit("recorded twice: %s seq %d" % key)
            seen[key] = e
    for s in spooled:
        e = seen.get((s["writer"], s["seq"]))
        if e is None or (e["event"], e["request_id"]) != \
                (s["event"], s["request_id"]):
            sys.exit("a spooled %s for %s is not in the audit log" %
                     (s["event"], s["request_id"]))
    trail_check.ends(log, [], [])
    print("%d spooled events, each in the audit log once" % len(spooled))


def main():
    if sys.argv[1] == "calls":
        calls(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        once(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
