#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""t_deccache.sh's checks of runnerd's reuse of approvald's decisions.

  deccache_check.py decisions LOG   one line per guardrail.decision in the
                                    audit log LOG: "asked", or "reused"
                                    when runnerd took a decision again
  deccache_check.py stalled SOCK PID REUSE_S
                                    with approvald (PID) stopped, a
                                    session's run_python answers each call
                                    in under a second until REUSE_S has
                                    passed; the next call waits for
                                    approvald and completes after SIGCONT
"""
import json
import os
import select
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sesscall import Client  # noqa: E402

CALLS = 10


class Fail(Exception):
    pass


def ok(r, what):
    if r.get("isError"):
        raise Fail(what + ": " + json.dumps(r))
    return r.get("structuredContent") or {}


def decisions(path):
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if e.get("event") != "guardrail.decision":
                continue
            fields = e.get("fields", e)
            if fields.get("reused") is True:
                if not isinstance(fields.get("age_ms"), int):
                    raise Fail("a reused decision without its age: " + line)
                print("reused")
            else:
                print("asked")


def stalled(sock, pid, reuse):
    c = Client(sock)
    t0 = time.monotonic()
    sid = ok(c.call("run_python", code="n = 0"), "first call")["session_id"]
    os.kill(pid, signal.SIGSTOP)
    try:
        worst = 0
        for i in range(CALLS):
            t = time.monotonic()
            sc = ok(c.call("run_python", session_id=sid,
                           code="n += 1\nprint(n)"),
                    "call %d with approvald stopped" % i)
            worst = max(worst, time.monotonic() - t)
            if sc.get("stdout", "").strip() != str(i + 1):
                raise Fail("call %d printed %r" % (i, sc.get("stdout")))
        if worst >= 1:
            raise Fail("the slowest of %d calls with approvald stopped took "
                       "%.2f s" % (CALLS, worst))
        # runnerd got the decision after t0: it has expired by then.
        time.sleep(max(0, t0 + reuse + 0.5 - time.monotonic()))
        rid = c.send("run_python", {"session_id": sid, "code": "print(n)"})
        if select.select([c.conn.sock], [], [], 1.5)[0]:
            raise Fail("a call after reuse_ms was answered while approvald "
                       "was stopped")
    finally:
        os.kill(pid, signal.SIGCONT)
    sc = ok(c.result(rid), "the call after SIGCONT")
    if sc.get("stdout", "").strip() != str(CALLS):
        raise Fail("the session lost its state: %r" % sc.get("stdout"))
    c.close()


def main():
    try:
        if sys.argv[1] == "decisions":
            decisions(sys.argv[2])
        else:
            stalled(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    except Fail as e:
        print(e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
