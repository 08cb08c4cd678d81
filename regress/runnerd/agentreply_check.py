#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""The checks of t_agentreply.sh, against a runnerd whose session agent
is bad_agent.py:

  agentreply_check.py CASE SOCK

Session A is opened first; session B's agent then misbehaves as CASE
says.  B must end with a reason in its result and in the audit log,
and A must still answer.  Prints what went wrong and exits 1.
"""
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sesscall import Client  # noqa: E402

# CASE: the reason B's session ends with; None where the first reply
# answers the call and what follows ends the session.
REASONS = {
    "oversized": ("reply is over 4 MiB", False),
    "growing": ("reply has a real number", False),
    "nonobject": ("reply is not a JSON object", False),
    "othercall": ("replied for another call", False),
    "duplicate": ("replied when no call was waiting", True),
    "flood": ("replied when no call was waiting", True),
}
ANSWER_S = 5        # how soon the other session must answer


def fail(what, r=None):
    sys.exit(what + ("" if r is None else ": " + json.dumps(r)[:400]))


def sc(r):
    return r.get("structuredContent") or {}


def ended(sid):
    for line in open("events.jsonl"):
        e = json.loads(line)
        if e.get("event") == "sandbox.completed" and \
                e["fields"].get("session_id") == sid:
            return e["fields"].get("reason", "")
    return None


def main():
    case, sock = sys.argv[1], sys.argv[2]
    reason, answered = REASONS[case]
    signal.signal(signal.SIGALRM, lambda *_: fail("no answer in 60 s"))
    signal.alarm(60)
    a, b = Client(sock), Client(sock)
    sids = []
    for c in (a, b):
        r = c.call("run_python", code="1+1")
        if r.get("isError") or sc(r).get("stdout") != "2\n":
            fail("a session opens", r)
        sids.append(sc(r)["session_id"])
    r = b.call("run_python", code="bad:" + case, session_id=sids[1])
    if answered != (not r.get("isError")):
        fail("the bad call's result", r)
    if not answered and reason not in r["content"][0]["text"]:
        fail("the result names why: " + reason, r)
    for _ in range(100):
        why = ended(sids[1])
        if why is not None:
            break
        time.sleep(0.1)
    if why is None or reason not in why:
        fail("the audit log has the session end: %s (%s)" % (reason, why))
    r = b.call("run_python", code="1+1", session_id=sids[1])
    if not r.get("isError"):
        fail("the ended session answers", r)
    t = time.monotonic()
    r = a.call("run_python", code="2+2", session_id=sids[0])
    took = time.monotonic() - t
    if r.get("isError") or sc(r).get("stdout") != "4\n" or took > ANSWER_S:
        fail("the other session answers in %.1f s" % took, r)
    print("%s: ended (%s); the other session answered in %.3f s" %
          (case, why, took))


if __name__ == "__main__":
    main()
