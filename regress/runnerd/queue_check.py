#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""The queue checks of t_queue.sh, each against a runnerd with
max_calls 1 that the test started (rd.subr) with stand-in peers:

  queue_check.py CHECK SOCK

prints what went wrong on stderr and exits 1 on failure.  A blocker,
sleep 1000 until it is cancelled, holds the one sandbox while calls
queue; each step waits for its audit events, never for a time.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sesscall import Client  # noqa: E402
from asframe import MSG_TOOL_RESULT  # noqa: E402  (sesscall's path)

ENDS = ("tool.result", "tool.failed", "tool.denied")


class Fail(Exception):
    pass


def expect(cond, what, detail=None):
    if not cond:
        raise Fail(what + ("" if detail is None else ": " + json.dumps(detail)))


def rid(reqid):
    return "req-%016x" % reqid


def events():
    with open("events.jsonl") as f:
        return [json.loads(line) for line in f if '"event"' in line]


def wait_events(what, pred):
    """Polls the audit log until pred(events) holds; bounded."""
    for _ in range(1200):
        ev = events()
        if pred(ev):
            return ev
        time.sleep(0.05)
    raise Fail("no " + what + " in the audit log")


def recorded(reqids, event="tool.request"):
    want = {rid(r) for r in reqids}
    wait_events("%s of %d calls" % (event, len(want)), lambda ev: want <= {
        e["request_id"] for e in ev if e["event"] == event})


def trail(reqid):
    return [e["event"] for e in events() if e["request_id"] == rid(reqid)]


def one_end(reqid, end, why):
    t = trail(reqid)
    expect([e for e in t if e in ENDS] == [end], "exactly one end, " + end, t)
    expect("guardrail.decision" not in t and "sandbox.started" not in t,
           "a refused waiting call was neither decided nor run", t)
    f = [e["fields"] for e in events()
         if e["request_id"] == rid(reqid) and e["event"] == end][0]
    expect(why in f.get("reason", ""), "the reason names " + why, f)


def text(r):
    return r["content"][0]["text"]


def refused(r, why):
    expect(r.get("isError") and why in text(r), "refused naming " + why, r)


def ok(r):
    expect(not r.get("isError"), "the call ran", r)


class Blocker:
    """sleep 1000 in the one sandbox, on a connection of its own."""

    def __init__(self, sock):
        self.c = Client(sock)
        self.id = self.c.send("run_shell", {"command": "sleep 1000"})
        recorded([self.id], "sandbox.started")

    def release(self):
        self.c.cancel(self.id)
        r = self.c.result(self.id)
        expect((r.get("structuredContent") or {}).get("status") == "killed",
               "the blocker was cancelled", r)
        self.c.close()


def results(c, n):
    """n results on one connection, in whatever order they come."""
    out = {}
    while len(out) < n:
        mtype, reqid, data, _ = c.conn.recv()
        expect(mtype == MSG_TOOL_RESULT, "a result, not %d" % mtype)
        out[reqid] = json.loads(data)
    return out


def echo(c, word):
    return c.send("run_shell", {"command": "echo " + word})


# Clients that send at once all get their calls run, none refused.
def check_all_served(sock):
    b = Blocker(sock)
    clients = [Client(sock) for _ in range(5)]
    ids = [echo(c, "c%d" % i) for i, c in enumerate(clients)]
    recorded(ids)
    b.release()
    for c, i in zip(clients, ids):
        ok(c.result(i))
        c.close()


# queue_max 1: the one that finds the queue full is refused at once.
def check_full(sock):
    b = Blocker(sock)
    w, x = Client(sock), Client(sock)
    waiting = echo(w, "waits")
    recorded([waiting])
    over = echo(x, "over")
    refused(x.result(over), "runnerd.queue_max")
    one_end(over, "tool.failed", "runnerd.queue_max")
    b.release()
    ok(w.result(waiting))


# Clients take turns: b's one call runs before most of a's earlier ones.
def check_turns(sock):
    blk = Blocker(sock)
    a, b = Client(sock), Client(sock)
    mine = [echo(a, "a%d" % i) for i in range(6)]
    recorded(mine)
    theirs = echo(b, "b")
    recorded([theirs])
    blk.release()
    for r in results(a, len(mine)).values():
        ok(r)
    ok(b.result(theirs))
    order = [e["request_id"] for e in events()
             if e["event"] == "sandbox.started" and
             e["request_id"] in {rid(i) for i in mine + [theirs]}]
    before = order.index(rid(theirs))
    expect(before <= 1, "b's call ran after %d of a's 6" % before, order)


# queue_max 4: a client's share is 4 / (clients waiting).  A flood of
# a's that fills the queue gives up its newest calls to b's, and each
# client past its share is refused, the other not.
def check_share(sock):
    blk = Blocker(sock)
    a, b = Client(sock), Client(sock)
    flood = [echo(a, "a%d" % i) for i in range(4)]
    recorded(flood)
    took = "another client's call took its place"
    mine = [echo(b, "b0")]
    refused(a.result(flood[3]), took)
    one_end(flood[3], "tool.failed", "took its place")
    mine.append(echo(b, "b1"))
    refused(a.result(flood[2]), took)
    over = echo(b, "b2")
    refused(b.result(over), "its share")
    one_end(over, "tool.failed", "its share")
    over = echo(a, "a4")
    refused(a.result(over), "its share")
    blk.release()
    for r in list(results(a, 2).values()) + list(results(b, 2).values()):
        ok(r)


# queue_max 6: a user's share is 6 / (users waiting), however many
# clients it has.  Three clients of root wait a call each, and one of
# uid 65534: root holds its share (3), so a fourth client of root is
# refused, though its client share and the queue have room.
def check_user_share(sock):
    blk = Blocker(sock)
    roots = [Client(sock) for i in range(4)]
    mine = [echo(c, "r%d" % i) for i, c in enumerate(roots[:3])]
    other = Client(sock, uid=65534)
    theirs = echo(other, "nobody")
    recorded(mine + [theirs])
    over = echo(roots[3], "r3")
    # Refused at once; a call let in would wait for the blocker.
    for _ in range(100):
        if "tool.failed" in trail(over):
            break
        time.sleep(0.05)
    expect("tool.failed" in trail(over), "a fourth client of root's call "
           "was let in", trail(over))
    refused(roots[3].result(over), "this user (uid 0)")
    one_end(over, "tool.failed", "users waiting")
    blk.release()
    for c, reqid in zip(roots[:3] + [other], mine + [theirs]):
        ok(c.result(reqid))


# inflight_per_user 3: the blocker and two calls of two more clients of
# root are root's three; a fourth client of root is refused at once,
# though the queue has room, and a client of uid 65534 is not.
def check_user_inflight(sock):
    blk = Blocker(sock)
    roots = [Client(sock) for i in range(3)]
    mine = [echo(c, "r%d" % i) for i, c in enumerate(roots[:2])]
    recorded(mine)
    over = echo(roots[2], "r2")
    refused(roots[2].result(over), "runnerd.inflight_per_user")
    one_end(over, "tool.failed", "runnerd.inflight_per_user")
    other = Client(sock, uid=65534)
    theirs = echo(other, "nobody")
    blk.release()
    for c, reqid in zip(roots[:2] + [other], mine + [theirs]):
        ok(c.result(reqid))
    ok(roots[2].call("run_shell", command="echo after"))


# queue_wait 1s: a call that waited that long is refused, one end.
def check_wait(sock):
    b = Blocker(sock)
    c = Client(sock)
    late = echo(c, "late")
    refused(c.result(late), "runnerd.queue_wait")
    one_end(late, "tool.failed", "runnerd.queue_wait")
    b.release()
    ok(c.call("run_shell", command="echo after"))


# A cancelled call and one whose client went away leave the queue.
def check_leave(sock):
    b = Blocker(sock)
    x, y, z = Client(sock), Client(sock), Client(sock)
    gone = echo(x, "cancelled")
    left = echo(y, "left")
    stays = echo(z, "stays")
    recorded([gone, left, stays])
    x.cancel(gone)
    refused(x.result(gone), "cancelled while it waited")
    one_end(gone, "tool.failed", "cancelled while it waited")
    y.close()
    wait_events("end of the call whose client went away", lambda ev: any(
        e["request_id"] == rid(left) and e["event"] in ENDS for e in ev))
    one_end(left, "tool.failed", "went away")
    b.release()
    ok(z.result(stays))


def main():
    check, sock = sys.argv[1], sys.argv[2]
    try:
        globals()["check_" + check](sock)
    except Fail as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
