#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""The crash trail's checks on the audit log (events.jsonl) of t_trail.sh.

  trail_check.py wait EVENTS EVENT KEY=VALUE...
        waits (30 s) for EVENT of the call whose tool.request has those
        arguments; prints its request id
  trail_check.py session SOCK OUT
        opens a session with one run_python, then starts a run_python
        that sleeps; writes both request ids to OUT and waits for runnerd
  trail_check.py ends EVENTS SWEPT-ID... -- RESTARTED-ID...
        every call has exactly one end; each SWEPT-ID a sandbox.swept and
        each RESTARTED-ID a tool.failed, both for "runnerd restarted"
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sesscall import Client  # noqa: E402

ENDS = ("tool.result", "tool.failed", "tool.denied")
RESTARTED = "runnerd restarted"


def events(path):
    """The audit events; brokerd's stand-in notes its leases there too."""
    with open(path) as f:
        return [e for e in map(json.loads, filter(str.strip, f))
                if "event" in e]


def request_id(evs, args):
    for e in evs:
        a = e["fields"].get("arguments") or {}
        if e["event"] == "tool.request" and \
                all(str(a.get(k)) == v for k, v in args.items()):
            return e["request_id"]
    return None


def wait(path, event, args):
    for _ in range(300):
        evs = events(path)
        rid = request_id(evs, args)
        if rid and any(e["event"] == event and e["request_id"] == rid
                       for e in evs):
            print(rid)
            return
        time.sleep(0.1)
    sys.exit("no %s for the call with %s" % (event, args))


def session(sock, out):
    c = Client(sock)
    opener = c.send("run_python", {"code": "x = 1"})
    sid = c.result(opener)["structuredContent"]["session_id"]
    rid = c.send("run_python", {"code": "import time; time.sleep(30)",
                                "session_id": sid})
    with open(out, "w") as f:
        f.write("req-%016x req-%016x\n" % (opener, rid))
    try:
        c.result(rid)
    except (ConnectionError, OSError):
        pass


def ends(path, swept, restarted):
    evs = events(path)
    bad = []
    for rid in sorted({e["request_id"] for e in evs
                       if e["event"] == "tool.request"}):
        n = [e["event"] for e in evs
             if e["request_id"] == rid and e["event"] in ENDS]
        if len(n) != 1:
            bad.append("%s has %d ends %s" % (rid, len(n), n))
    for rid in swept:
        if not any(e["event"] == "sandbox.swept" and e["request_id"] == rid
                   and e["fields"].get("reason") == RESTARTED for e in evs):
            bad.append("%s: no sandbox.swept" % rid)
    for rid in restarted:
        if not any(e["event"] == "tool.failed" and e["request_id"] == rid
                   and e["fields"].get("reason") == RESTARTED for e in evs):
            bad.append("%s: no tool.failed for the restart" % rid)
    if bad:
        sys.exit("; ".join(bad))


def main():
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "wait":
        wait(rest[0], rest[1], dict(a.split("=", 1) for a in rest[2:]))
    elif cmd == "session":
        session(rest[0], rest[1])
    else:
        i = rest.index("--")
        ends(rest[0], rest[1:i], rest[i + 1:])


if __name__ == "__main__":
    main()
