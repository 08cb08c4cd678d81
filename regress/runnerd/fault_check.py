#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""One fault of t_faults.sh: a peer of runnerd stopped (SIGSTOP) while
calls run, against the real suite the test started.

  fault_check.py PEER PID SOCK AUDIT_LOG [STOP_SECONDS]

Before the stop, two sessions are open; one runs run_python("1+1") in a
loop throughout, the other starts a call that sleeps 2 s just before the
stop.  During the stop: two terraform_plan calls (each needs approvald,
brokerd and auditd), and a new client that pings runner.sock and opens a
session of its own.  Prints the session latencies during the stop and
when each result came; exits 1 naming what went wrong:

  - always: PING answered within 1 s during the stop; every call has a
    result naming its request id, none unrecorded; both plans succeeded,
    one after SIGCONT (the peer was really stopped); in the audit log every
    tool.request has exactly one end, no writer's record is there twice,
    no request has two sandbox.completed
  - every peer: session p99 under 1 s during the stop, and the new
    client's session answered before SIGCONT.  Sessions need no
    credential (brokerd), their tools' decisions are reused (approvald),
    and an event auditd has not acknowledged within 500 ms is recorded
    in runnerd's spool (auditd)
  - approvald and brokerd: the sleeping call's result, made during the
    stop, reached its client before SIGCONT
"""
import json
import os
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sesscall import Client  # noqa: E402
from asframe import MSG_PING, MSG_PONG, Conn  # noqa: E402
import trail_check  # noqa: E402

WAIT = 90               # s: the most any one result may take
ONE_S = 1000.0


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


def pct(vals, p):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(len(vals) * p))] if vals else 0.0


def client(sock):
    c = Client(sock)
    c.conn.sock.settimeout(WAIT)
    return c


class Call(threading.Thread):
    """One call on a connection of its own, timed; started at once."""

    def __init__(self, sock, tool, args, c=None):
        super().__init__(daemon=True)
        self.c = c or client(sock)
        self.tool, self.args = tool, args
        self.res = self.err = self.sent = self.done = None
        self.start()

    def run(self):
        self.sent = time.monotonic()
        try:
            self.res = self.c.result(self.c.send(self.tool, self.args))
        except Exception as e:      # reported with the call's name
            self.err = "%s: %s" % (type(e).__name__, e)
        self.done = time.monotonic()


class Loop(threading.Thread):
    """run_python("1+1") in session sid, back to back, until stopped."""

    def __init__(self, c, sid):
        super().__init__(daemon=True)
        self.c, self.sid = c, sid
        self.samples = []       # (sent, ms, result)
        self.err = None
        self.stop = threading.Event()
        self.start()

    def run(self):
        try:
            while not self.stop.is_set():
                t0 = time.monotonic()
                r = self.c.call("run_python", code="1+1", session_id=self.sid)
                self.samples.append((t0, (time.monotonic() - t0) * 1000, r))
        except Exception as e:
            self.err = "%s: %s" % (type(e).__name__, e)


def session(c):
    r = c.call("run_python", code="1")
    expect(not r.get("isError"), "a session opens: " + json.dumps(r))
    return r["structuredContent"]["session_id"]


def ping(sock):
    """ms until runner.sock answers a new connection's PING."""
    t0 = time.monotonic()
    c = Conn(sock)
    c.sock.settimeout(5)
    try:
        mtype, _, _, _ = c.call(MSG_PING)
    except OSError as e:
        raise Fail("runner.sock: no PONG within 5 s during the stop (%s)"
                   % e)
    finally:
        c.close()
    expect(mtype == MSG_PONG, "runner.sock answered PING with %d" % mtype)
    return (time.monotonic() - t0) * 1000


def when(t, cont):
    return "%+.2f s after SIGCONT" % (t - cont)


def check_result(name, call):
    expect(call.err is None and call.res is not None,
           "%s: no result (%s)" % (name, call.err))
    sc = call.res.get("structuredContent") or {}
    expect(str(sc.get("request_id", "")).startswith("req-"),
           "%s: no request_id in %s" % (name, json.dumps(call.res)))
    expect(sc.get("status") != "unrecorded",
           "%s: unrecorded: %s" % (name, json.dumps(call.res)))


def audit_sound(path):
    """One end per request, no record twice, one completion per sandbox."""
    evs = trail_check.events(path)
    trail_check.ends(path, [], [])
    seen, completed = set(), set()
    for e in evs:
        if "writer" in e:
            key = (e["writer"], e["writer_seq"])
            expect(key not in seen, "recorded twice: %s seq %d" % key)
            seen.add(key)
        if e["event"] == "sandbox.completed":
            expect(e["request_id"] not in completed,
                   "two sandbox.completed for " + e["request_id"])
            completed.add(e["request_id"])
    return len(evs)


class Fault:
    """The traffic around one stop of pid, and when each part ended."""

    def __init__(self, pid, sock, stop_s):
        self.a, b = client(sock), client(sock)
        sa, sb = session(self.a), session(b)
        self.loop = Loop(self.a, sa)
        time.sleep(1)
        self.sleeper = Call(sock, "run_python", {"session_id": sb, "code":
                            "import time; time.sleep(2); print('slept')"}, b)
        time.sleep(0.5)
        os.kill(pid, signal.SIGSTOP)
        self.stopped = time.monotonic()
        try:
            time.sleep(1)
            self.plans = [Call(sock, "terraform_plan", {"working_dir":
                                                        "demo"})
                          for _ in range(2)]
            time.sleep(1)
            self.ping_ms = ping(sock)
            self.newcomer = Call(sock, "run_python", {"code": "print(3)"})
            time.sleep(max(0, stop_s - (time.monotonic() - self.stopped)))
        finally:
            os.kill(pid, signal.SIGCONT)
        self.cont = time.monotonic()
        for c in self.calls():
            c.join(WAIT)
        time.sleep(1)
        self.loop.stop.set()
        self.loop.join(WAIT)
        # The session calls in flight at any time of the stop.
        self.during = [ms for t, ms, _ in self.loop.samples
                       if t < self.cont and t + ms / 1000 > self.stopped]

    def calls(self):
        return [self.sleeper, self.newcomer] + self.plans

    def close(self):
        self.a.close()
        for c in self.calls():
            c.c.close()

    def report(self, peer):
        before = [ms for t, ms, _ in self.loop.samples if t < self.stopped]
        print("%s stopped %.1f s: session run_python during the stop: %d "
              "calls, p50 %.1f ms, p99 %.1f ms (before: p50 %.1f ms)" % (
                  peer, self.cont - self.stopped, len(self.during),
                  pct(self.during, .5), pct(self.during, .99),
                  pct(before, .5)))
        print("  PING on a new connection during the stop: %.1f ms" %
              self.ping_ms)
        names = ["sleeping session call", "new client's session"] + \
            ["terraform_plan %d" % i for i in range(len(self.plans))]
        for name, c in zip(names, self.calls()):
            print("  %s: %s, %s" % (
                name, "no result" if c.done is None else
                when(c.done, self.cont), json.dumps(
                    (c.res or {}).get("structuredContent", c.err))[:200]))

    def judge(self, peer):
        expect(self.loop.err is None,
               "the session loop broke: %s" % self.loop.err)
        for t, ms, r in self.loop.samples:
            expect((r.get("structuredContent") or {}).get("stdout") ==
                   "2\n", "session run_python: " + json.dumps(r))
        expect(self.ping_ms < ONE_S,
               "PING took %.0f ms during the stop" % self.ping_ms)
        check_result("the sleeping session call", self.sleeper)
        check_result("the new client's session", self.newcomer)
        for p in self.plans:
            check_result("terraform_plan", p)
            expect(not p.res.get("isError"), "terraform_plan failed: " +
                   json.dumps(p.res)[:300])
        expect(any(p.done > self.cont for p in self.plans),
               "every terraform_plan ended before SIGCONT: was %s stopped?"
               % peer)
        # Sessions need no credential, their tools' decisions are
        # reused within approvald's reuse_ms, and runnerd spools what
        # auditd does not acknowledge: no peer holds them.
        p99 = pct(self.during, .99)
        expect(len(self.during) >= 5 and p99 < ONE_S,
               "session p99 %.0f ms over %d calls while %s was "
               "stopped" % (p99, len(self.during), peer))
        expect(self.newcomer.done < self.cont,
               "a new session waited for %s (%s)" %
               (peer, when(self.newcomer.done, self.cont)))
        if peer in ("approvald", "brokerd"):
            expect(self.sleeper.done < self.cont, "a result made during "
                   "the stop reached its client %s" %
                   when(self.sleeper.done, self.cont))


def main():
    peer, pid, sock, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
        sys.argv[4]
    try:
        f = Fault(pid, sock, float((sys.argv[5:] or [10])[0]))
        f.report(peer)
        f.judge(peer)
        f.close()
        print("  audit log: %d records, one end per request, none twice" %
              audit_sound(log))
    except Fail as e:
        sys.exit(str(e))


if __name__ == "__main__":
    main()
