#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A task's cancel, as mcpd sends it (TOOL_CANCEL {"answer": true}) for a
call waiting on its approval (TOOL_AWAIT), is answered with what it did,
and the call's end agrees with the answer.

  await_check.py SOCK BINDIR CONF   exits 0 when all held (in the
                                    directory of runnerd.log)

  withdrawn   cancelled while pending: "withdrawn", the approval is
              denied, nothing runs, no result follows
  too late    cancelled once the approved call's sandbox has started:
              "running", and the call's own result follows
  restarted   approvald restarted while a call waits (it forgets the
              wait's subscription): approved after, the call runs
  adopted     a wait that carries a client key for an approval no call
              of its connection asked for, as mcpd sends after runnerd
              restarted: its cancel withdraws nothing, and once approved
              its call is refused unless its client asked
  racing      cancelled at once after the approval, several times:
              whatever the answer, the end agrees with it: nothing
              started and at most a "cancelled" refusal, or the run
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sesscall import Client  # noqa: E402
from asframe import (MSG_ERROR, MSG_TOOL_AWAIT,  # noqa: E402
                     MSG_TOOL_CANCEL, MSG_TOOL_CANCELLED, MSG_TOOL_RESULT,
                     type_name)

sock, bindir, conf = sys.argv[1:4]
ctl = [os.path.join(bindir, "approvalctl"), "-f", conf]


def fail(why):
    sys.exit(why)


def approvalctl(*args):
    return subprocess.run(ctl + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


def state(aid):
    return json.loads(approvalctl("-j", "show", aid).stdout)["state"]


def awaiting(c, command):
    """A pending approval for command and the TOOL_AWAIT's request id."""
    r = c.call("run_shell", command=command)
    aid = r["structuredContent"].get("approval_id")
    if aid is None:
        fail("no pending approval: %r" % r)
    reqid = int.from_bytes(os.urandom(7), "little") | 1
    c.conn.send(MSG_TOOL_AWAIT, {"tool": "run_shell", "arguments":
                                 {"command": command}, "approval_id": aid},
                reqid)
    return aid, reqid


def frames(c, timeout, until=None):
    """Every frame until timeout passes without one, or until until(got)
    holds: a test that knows what it waits for need not wait out the
    silence."""
    c.conn.sock.settimeout(timeout)
    got = []
    try:
        while until is None or not until(got):
            f = c.conn.recv()
            if f is None:
                break
            got.append(f)
    except (TimeoutError, OSError):
        pass
    c.conn.sock.settimeout(None)
    return got


def result_of(reqid):
    """For frames' until: a TOOL_RESULT for reqid has come."""
    return lambda got: any(f[0] == MSG_TOOL_RESULT and f[1] == reqid
                           for f in got)


def started(reqid):
    """The launcher has the call's sandbox (runnerd.log, -v).  Not the
    audit log's sandbox.started: runnerd records that before the call
    runs, and a cancel between the two stops it before it ran."""
    with open("runnerd.log") as f:
        return any(" runs %016x" % reqid in l for l in f)


def cancel(c, reqid, wait=8):
    """The cancel's answer and, after it, the call's result, if any: the
    frames until the result, or until wait seconds pass without one."""
    c.conn.send(MSG_TOOL_CANCEL, {"answer": True}, reqid)
    answer = result = None
    for mtype, rid, data, _ in frames(c, wait, result_of(reqid)):
        if rid != reqid:
            continue
        if mtype == MSG_TOOL_CANCELLED and answer is None:
            answer = json.loads(data)
        elif mtype == MSG_TOOL_RESULT and answer is not None:
            result = json.loads(data)
        else:
            fail("unexpected %s for the cancelled call: %r" %
                 (type_name(mtype), data[:120]))
    if answer is None:
        fail("no TOOL_CANCELLED for the task's cancel")
    return answer, result


def withdrawn(c):
    aid, reqid = awaiting(c, "echo never")
    answer, result = cancel(c, reqid, 2)
    if answer["outcome"] != "withdrawn" or result is not None:
        fail("cancelled while pending: %r, %r" % (answer, result))
    if state(aid) != "denied" or approvalctl("approve", aid).returncode == 0:
        fail("the withdrawn approval is %s" % state(aid))


def too_late(c):
    aid, reqid = awaiting(c, "sleep 2; echo applied")
    approvalctl("approve", aid)
    deadline = time.time() + 20
    while not started(reqid):
        if time.time() > deadline:
            fail("the approved call did not start")
        time.sleep(0.05)
    answer, result = cancel(c, reqid)
    if answer["outcome"] != "running" or "too late" not in answer["reason"]:
        fail("cancelled while running: %r" % answer)
    if result is None or result["isError"] or \
            "applied" not in result["content"][0]["text"]:
        fail("the too-late call's result: %r" % result)


def restart_approvald():
    """As as_start would: the new one's pid goes to ./pids."""
    with open("pids") as f:
        pid = [int(l.split()[0]) for l in f if l.split()[1:] ==
               ["approvald"]][-1]
    os.kill(pid, 15)
    while os.path.exists("/proc/%d" % pid) and \
            open("/proc/%d/stat" % pid).read().split()[2] != "Z":
        time.sleep(0.05)
    log = open("approvald.restarted.log", "w")
    p = subprocess.Popen([os.path.join(bindir, "approvald"), "-d", "-v",
                          "-f", conf], stdout=log, stderr=log)
    with open("pids", "a") as f:
        f.write("%d approvald\n" % p.pid)
    control = os.path.join(os.path.dirname(sock), "control.sock")
    for _ in range(200):
        if approvalctl("ping").returncode == 0:
            return
        time.sleep(0.05)
    fail("approvald did not come back: %s" % control)


def restarted(c):
    aid, reqid = awaiting(c, "echo after the restart")
    time.sleep(0.5)
    restart_approvald()
    approvalctl("approve", aid)
    got = [f for f in frames(c, 8, result_of(reqid)) if f[1] == reqid]
    if not got or got[0][0] != MSG_TOOL_RESULT or \
            "after the restart" not in json.loads(got[0][2])[
                "content"][0]["text"]:
        fail("after approvald's restart: %r" % got[:1])


def adopt(c, aid, command, key):
    reqid = int.from_bytes(os.urandom(7), "little") | 1
    c.conn.send(MSG_TOOL_AWAIT, {"tool": "run_shell", "arguments":
                                 {"command": command}, "approval_id": aid,
                                 "client_key": key}, reqid)
    return reqid


def adopted(c):
    command = "echo adopted"
    r = c.call("run_shell", command=command)
    aid = r["structuredContent"]["approval_id"]
    other = Client(sock)
    adopt(other, aid, command, "not-a-key")
    got = frames(other, 1)
    if len(got) != 1 or got[0][0] != MSG_ERROR or \
            b"bad TOOL_AWAIT" not in got[0][2]:
        fail("a malformed client_key: %r" % got)
    key = os.urandom(16).hex()
    answer, result = cancel(other, adopt(other, aid, command, key), 2)
    if answer["outcome"] != "stopped" or \
            "not withdrawn" not in answer["reason"] or result is not None:
        fail("an adopted wait cancelled: %r, %r" % (answer, result))
    if state(aid) != "pending":
        fail("an adopted wait withdrew %s: %s" % (aid, state(aid)))
    reqid = adopt(other, aid, command, key)
    time.sleep(0.5)
    approvalctl("approve", aid)
    # Its result, then a second of nothing more.
    got = [f for f in frames(other, 8, result_of(reqid)) + frames(other, 1)
           if f[1] == reqid]
    if len(got) != 1 or got[0][0] != MSG_TOOL_RESULT or \
            not json.loads(got[0][2])["isError"] or started(reqid):
        fail("another client's approval, adopted: %r" % got)
    if state(aid) != "approved":
        fail("another client spent %s: %s" % (aid, state(aid)))
    r = c.call("run_shell", command=command, approval_id=aid)
    if r["isError"] or "adopted" not in r["content"][0]["text"]:
        fail("the client that asked, after: %r" % r)
    other.close()


def racing(c, rounds):
    seen = set()
    for _ in range(rounds):
        aid, reqid = awaiting(c, "echo raced")
        approvalctl("approve", aid)
        answer, result = cancel(c, reqid, 3)
        seen.add(answer["outcome"])
        ran = started(reqid)
        if answer["outcome"] == "running":
            if result is None or not ran:
                fail("said running, but %r (started: %s)" % (result, ran))
        elif ran or (result is not None and not (
                result["isError"] and "cancelled" in
                result["content"][0]["text"])):
            # A call stopped before it ran ends as a refusal, if at all.
            fail("said %r, but %r (started: %s)" % (answer, result, ran))
    return seen


def main():
    c = Client(sock)
    withdrawn(c)
    too_late(c)
    restarted(c)
    adopted(c)
    print("racing: %s" % ", ".join(sorted(racing(c, 6))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
