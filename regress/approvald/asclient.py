#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A client of approvald's sockets for the tests and the benchmark.

Speaks the suite's framing through regress/lib/asframe.py.

  asclient.py call SOCK TYPE [JSON]      one request, prints the reply
  asclient.py request RUN DIR PLAN       a pending terraform_apply approval
  asclient.py hostile RUN OUT            one whose plan draws on the terminal;
                                         OUT: the request as sent
  asclient.py spend RUN ID DIR PLAN [CLIENT]
                                         spend it for working_dir DIR, plan
                                         PLAN (hex, or "null"), as client
                                         CLIENT (default: CLIENT's id)
  asclient.py every SOCK ID              every message type naming ID
  asclient.py race RUN N ROUNDS          N processes spend one approval
  asclient.py load RUN COUNT OUT         approvals approved, then spent
  asclient.py respend RUN OUT            every approval of OUT again
  asclient.py bench RUN                  decisions/s and spends/s
  asclient.py subscribe RUN N            N waits pushed, on one connection
  asclient.py waiters RUN PID N S        approvald's CPU with N waiters, S
                                         seconds asking each once a second
                                         (as runnerd did), then S seconds
                                         subscribed
"""

import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from asframe import TYPES, Conn, error_unpack, pack, type_name  # noqa: E402

PLAN = "ab" * 32
APPLY_ARGS = {"working_dir": "demo"}
# The MCP client runnerd names in each request and spend; AS_CLIENT_UID
# makes it another user's (the self-approval test).
CLIENT = {"uid": int(os.environ.get("AS_CLIENT_UID", os.getuid())),
          "id": "asclient.1"}


def ask(conn, mtype, payload=b"", reqid=1):
    """(reply type name, payload) of one request."""
    rtype, _, data, _ = conn.call(mtype, payload, reqid)
    return type_name(rtype), data


def show(name, data):
    if name == "ERROR":
        code, text = error_unpack(data)
        return "ERROR %d %s" % (code, text)
    if name == "PONG":
        return "PONG " + data[:16].split(b"\0", 1)[0].decode()
    return "%s %s" % (name, data.decode(errors="replace"))


def expect(name, data, want):
    if name != want:
        raise SystemExit("expected %s, got %s" % (want, show(name, data)))
    return json.loads(data) if data else None


def new_approval(run, args=None, plan=PLAN, approve=True):
    """A pending (or approved) terraform_apply approval id."""
    a = Conn(os.path.join(run, "approval.sock"))
    name, data = ask(a, TYPES["APPROVAL_REQUEST"], {
        "tool": "terraform_apply", "arguments": args or APPLY_ARGS,
        "plan_digest": plan, "summary": {}, "plan_text": "",
        "client": CLIENT},
        reqid=int.from_bytes(os.urandom(7), "little") + 1)
    a.close()
    aid = expect(name, data, "APPROVAL_CREATED")["approval_id"]
    if approve:
        c = Conn(os.path.join(run, "control.sock"))
        name, data = ask(c, TYPES["CTL_APPROVE"], {"approval_id": aid})
        expect(name, data, "CTL_ENTRY")
        c.close()
    return aid


def spend(run, aid, args=None, plan=PLAN):
    """0 spent, 1 refused as already spent, 2 anything else."""
    try:
        a = Conn(os.path.join(run, "approval.sock"))
        name, data = ask(a, TYPES["APPROVAL_SPEND"], {
            "approval_id": aid, "tool": "terraform_apply",
            "arguments": args or APPLY_ARGS, "plan_digest": plan,
            "client": CLIENT})
        a.close()
    except (OSError, EOFError):
        return 2
    if name == "APPROVAL_SPENT":
        return 0
    if name == "ERROR" and "already spent" in error_unpack(data)[1]:
        return 1
    return 2


def cmd_call(argv):
    sock, mtype = argv[0], argv[1]
    payload = argv[2].encode() if len(argv) > 2 else b""
    c = Conn(sock)
    try:
        name, data = ask(c, TYPES[mtype] if mtype in TYPES
                               else int(mtype), payload)
    except (EOFError, ConnectionResetError):
        print("CLOSED")
        return 0
    print(show(name, data))
    return 0


def cmd_request(argv):
    """Prints the id of a pending approval with a destructive summary."""
    run, wd, plan = argv
    a = Conn(os.path.join(run, "approval.sock"))
    name, data = ask(a, TYPES["APPROVAL_REQUEST"], {
        "tool": "terraform_apply", "arguments": {"working_dir": wd},
        "plan_digest": None if plan == "null" else plan,
        "summary": {"replace": 1, "resources": [
            {"address": "terraform_data.app", "actions": ["delete",
                                                          "create"]},
            {"address": "terraform_data.labels", "actions": ["update"]}]},
        "plan_text": "# terraform_data.app must be replaced",
        "client": CLIENT})
    print(expect(name, data, "APPROVAL_CREATED")["approval_id"])
    return 0


# What a module can put in a value, a name or a file name to redraw a
# terminal: CSI (erase line, cursor up), OSC (title, hyperlink), the C1
# CSI and NEL, bidi override and isolate, CR, DEL.
HOSTILE = ("\x1b[2K\x1b[1A\x1b]0;t\x07\x1b]8;;x\x1b\\\u009b1A\u0085"
           "\u202e\u2066\r\x7f")


def cmd_hostile(argv):
    """Prints the id of a pending approval for a replace whose plan
    text, names and values hold HOSTILE, and whose output value is
    multi-line text redrawing it as an update in place."""
    run, out = argv
    h = HOSTILE
    req = {
        "tool": "terraform_apply", "client": CLIENT,
        "arguments": {"working_dir": "demo", "note": h},
        "plan_digest": PLAN,
        "summary": {
            "counts": {"create": 0, "update": 0, "delete": 0,
                       "replace": 1},
            "resources": [{"address": 'terraform_data.app["%s"]' % h,
                           "actions": ["delete", "create"],
                           "forced_by": ["triggers_replace" + h]}],
            "files_changed": [{"change": "added", "path": h + ".tf"}]},
        "plan_text": (
            '  # terraform_data.app["%s"] must be replaced\n'
            '-/+ resource "terraform_data" "app" {\n'
            '      ~ input = "%s"\n    }\n\nChanges to Outputs:\n'
            '  + note = <<-EOT\n'
            '\x1b[8A\x1b[J  # terraform_data.app will be updated in-place\r'
            '  ~ resource "terraform_data" "app" {\n'
            'Plan: 0 to add, 1 to change, 0 to destroy.\n'
            'plan:         0 to create, 1 to update, 0 to delete, '
            '0 to replace\n%s\n    EOT\n') % (h, h, h)}
    with open(out, "w") as f:
        json.dump(req, f)
    a = Conn(os.path.join(run, "approval.sock"))
    name, data = ask(a, TYPES["APPROVAL_REQUEST"], req)
    print(expect(name, data, "APPROVAL_CREATED")["approval_id"])
    return 0


def cmd_spend(argv):
    """Presents the approval as terraform_apply does, approval_id and
    all, and prints the reply."""
    run, aid, wd, plan = argv[:4]
    client = dict(CLIENT, id=argv[4]) if len(argv) > 4 else CLIENT
    a = Conn(os.path.join(run, "approval.sock"))
    name, data = ask(a, TYPES["APPROVAL_SPEND"], {
        "approval_id": aid, "tool": "terraform_apply",
        "arguments": {"working_dir": wd, "approval_id": aid},
        "plan_digest": None if plan == "null" else plan,
        "client": client})
    print(show(name, data))
    return 0


def cmd_every(argv):
    """Sends every message type of the suite (and a few unknown ones),
    each on a fresh connection, each naming approval ID in every field
    a handler might read; prints one line per type with the reply."""
    sock, aid = argv
    payload = json.dumps({
        "approval_id": aid, "tool": "terraform_apply",
        "arguments": {"working_dir": "demo", "approval_id": aid},
        "plan_digest": "a" * 64, "all": True, "reason": "x",
        "state": "approved", "decision": "allow",
        "progress": False, "summary": {}, "plan_text": "",
        "client": CLIENT}).encode()
    for mtype in sorted(TYPES.values()) + [199, 299, 999, 65535]:
        for data in (payload, b""):
            try:
                c = Conn(sock)
                c.sock.settimeout(5)
                name, reply = ask(c, mtype, data)
                c.close()
                line = show(name, reply)
            except (EOFError, ConnectionResetError, BrokenPipeError):
                line = "CLOSED"
            except socket.timeout:
                line = "NO REPLY"
            print("%s %s -> %s" % (type_name(mtype),
                                   "json" if data else "empty", line[:80]))
    return 0


def cmd_race(argv):
    """Each round: one approval, n forked spenders released together."""
    run, n, rounds = argv[0], int(argv[1]), int(argv[2])
    for r in range(rounds):
        aid = new_approval(run)
        rfd, wfd = os.pipe()
        kids = []
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                os.close(wfd)
                os.read(rfd, 1)
                os._exit(spend(run, aid))
            kids.append(pid)
        os.close(rfd)
        os.close(wfd)
        results = [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1])
                   for p in kids]
        if results.count(0) != 1 or results.count(1) != n - 1:
            print("round %d: %d spent, %d already spent, %d other" %
                  (r, results.count(0), results.count(1),
                   results.count(2)))
            return 1
    print("%d rounds: exactly one of %d spenders won each" % (rounds, n))
    return 0


def cmd_load(argv):
    """Approves count approvals, then spends them from 8 processes,
    appending each approval id to OUT.ids and each SPENT to OUT.spent,
    so that a kill -9 can land in the middle."""
    run, count, out = argv[0], int(argv[1]), argv[2]
    ids = [new_approval(run) for _ in range(count)]
    with open(out + ".ids", "w") as f:
        f.write("\n".join(ids) + "\n")
    with open(out + ".ready", "w"):
        pass
    kids = []
    for k in range(8):
        pid = os.fork()
        if pid == 0:
            with open(out + ".spent", "a") as f:
                for aid in ids[k::8]:
                    if spend(run, aid) == 0:
                        f.write(aid + "\n")
                        f.flush()
            os._exit(0)
        kids.append(pid)
    for p in kids:
        os.waitpid(p, 0)
    return 0


def cmd_respend(argv):
    """After the crash: nothing spent before is spendable again, and no
    approval is spent twice in all."""
    run, out = argv[0], argv[1]
    ids = open(out + ".ids").read().split()
    try:
        before = open(out + ".spent").read().split()
    except FileNotFoundError:
        before = []
    if len(before) != len(set(before)):
        print("an approval was spent twice before the crash")
        return 1
    again = [aid for aid in ids if spend(run, aid) == 0]
    twice = set(before) & set(again)
    if twice:
        print("spent twice: %s" % ", ".join(sorted(twice)))
        return 1
    for aid in ids:
        if spend(run, aid) != 1:
            print("%s: not refused as already spent" % aid)
            return 1
    print("%d approvals, %d spent before the crash, %d after, none twice"
          % (len(ids), len(before), len(again)))
    return 0


def pipelined(conn, frames, want):
    """Sends frames in batches and reads every reply: the seconds that
    took, or None unless every reply was a want."""
    ok = True
    t0 = time.monotonic()
    for i in range(0, len(frames), 256):
        batch = frames[i:i + 256]
        conn.sock.sendall(b"".join(batch))
        for _ in batch:
            reply = conn.recv()
            ok = ok and reply is not None and reply[0] == TYPES[want]
    dt = time.monotonic() - t0
    return dt if ok else None


def cmd_bench(argv):
    run = argv[0]
    n = int(argv[1]) if len(argv) > 1 else 20000
    m = int(argv[2]) if len(argv) > 2 else 500
    a = Conn(os.path.join(run, "approval.sock"))
    calls = [("terraform_apply", {"working_dir": "demo"}),
             ("k8s_get_pod_status", {"namespace": "default"}),
             ("not_a_tool", {})]
    frames = [pack(TYPES["DECIDE"], 1, {"tool": t, "arguments": args})
              for t, args in (calls[i % 3] for i in range(n))]
    dt = pipelined(a, frames, "DECISION")
    if dt is None:
        print("bench: not every DECIDE got a DECISION")
        return 1
    print("decisions: %d in %.2f s: %.0f decisions/s" % (n, dt, n / dt))
    ids = [new_approval(run) for _ in range(m)]
    frames = [pack(TYPES["APPROVAL_SPEND"], 1, {
        "approval_id": aid, "tool": "terraform_apply",
        "arguments": APPLY_ARGS, "plan_digest": PLAN, "client": CLIENT})
        for aid in ids]
    dt = pipelined(a, frames, "APPROVAL_SPENT")
    if dt is None:
        print("bench: not every spend succeeded")
        return 1
    print("spends: %d in %.2f s: %.0f durable spends/s "
          "(WAL, synchronous=FULL, each audited)" % (m, dt, m / dt))
    return 0


def pending_approvals(run, n):
    """n pending approvals, made pipelined on one connection."""
    a = Conn(os.path.join(run, "approval.sock"))
    frames = [pack(TYPES["APPROVAL_REQUEST"], i + 1, {
        "tool": "terraform_apply", "arguments": APPLY_ARGS,
        "plan_digest": PLAN, "summary": {}, "plan_text": "",
        "client": CLIENT}) for i in range(n)]
    ids = []
    for i in range(0, n, 256):
        a.sock.sendall(b"".join(frames[i:i + 256]))
        for _ in frames[i:i + 256]:
            mtype, _, data, _ = a.recv()
            ids.append(expect(type_name(mtype), data,
                              "APPROVAL_CREATED")["approval_id"])
    a.close()
    return ids


def statuses(conn, ids, subscribe, first=1):
    """One APPROVAL_STATUS for each of ids, pipelined: the replies."""
    frames = [pack(TYPES["APPROVAL_STATUS"], first + i, {
        "approval_id": aid, "subscribe": subscribe})
        for i, aid in enumerate(ids)]
    replies = []
    for i in range(0, len(frames), 256):
        conn.sock.sendall(b"".join(frames[i:i + 256]))
        for _ in frames[i:i + 256]:
            mtype, rid, data, _ = conn.recv()
            replies.append((rid, expect(type_name(mtype), data,
                                        "APPROVAL_STATE")))
    return replies


def rtt(conn, mtype, payload, reqid):
    """Seconds one request on conn took to be answered."""
    t0 = time.monotonic()
    conn.send(TYPES[mtype], payload, reqid)
    while True:
        _, rid, _, _ = conn.recv()
        if rid == reqid:
            return time.monotonic() - t0


def cmd_subscribe(argv):
    """N pending approvals, each waited for by a subscription on one
    connection; then one approved, one denied, one withdrawn from
    elsewhere: exactly the first two are pushed, under their requests'
    ids, and the connection and approvald answer at once throughout."""
    run, n = argv[0], int(argv[1])
    ids = pending_approvals(run, n)
    w = Conn(os.path.join(run, "approval.sock"))
    for i, (rid, r) in enumerate(statuses(w, ids, True)):
        if rid != i + 1 or r["state"] != "pending" or \
                r.get("subscribed") is not True:
            print("wait %d: %r" % (i, r))
            return 1
    other = Conn(os.path.join(run, "approval.sock"))
    slow = max(rtt(w, "PING", b"", 10 ** 9),
               rtt(other, "DECIDE", {"tool": "terraform_apply",
                                      "arguments": APPLY_ARGS}, 2))
    if slow > 1:
        print("approvald took %.2f s to answer with %d waits" % (slow, n))
        return 1
    for mtype, aid in (("CTL_APPROVE", ids[0]), ("CTL_DENY", ids[1])):
        ctl = Conn(os.path.join(run, "control.sock"))
        expect(*ask(ctl, TYPES[mtype], {"approval_id": aid}), "CTL_ENTRY")
        ctl.close()
    expect(*ask(other, TYPES["APPROVAL_WITHDRAW"],
                {"approval_id": ids[2]}, 3), "APPROVAL_STATE")
    w.sock.settimeout(3)
    pushed = {}
    try:
        while True:
            mtype, rid, data, _ = w.recv()
            pushed[rid] = (type_name(mtype), json.loads(data))
    except (socket.timeout, TypeError):
        pass
    want = {1: ("APPROVAL_STATE", "approved"), 2: ("APPROVAL_STATE",
                                                   "denied")}
    got = {rid: (t, r.get("state")) for rid, (t, r) in pushed.items()}
    if got != want:
        print("pushed %r, want %r" % (got, want))
        return 1
    print("%d waits; 2 pushed, the withdrawn one not; answers in %.0f ms"
          % (n, slow * 1000))
    return 0


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cmd_waiters(argv):
    run, pid, n, secs = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    ids = pending_approvals(run, n)
    w = Conn(os.path.join(run, "approval.sock"))
    c0, t0 = cpu_seconds(pid), time.monotonic()
    for s in range(secs):
        statuses(w, ids, False)
        time.sleep(max(0, t0 + s + 1 - time.monotonic()))
    polled = (cpu_seconds(pid) - c0) / (time.monotonic() - t0)
    print("%d waiters asking once a second: approvald %.0f %% CPU" %
          (n, polled * 100))
    subscribed = sum(1 for _, r in statuses(w, ids, True, n + 1)
                     if r.get("subscribed") is True)
    other = Conn(os.path.join(run, "approval.sock"))
    c0, t0 = cpu_seconds(pid), time.monotonic()
    lat = []
    while time.monotonic() < t0 + secs:
        lat.append(rtt(other, "DECIDE", {"tool": "terraform_apply",
                                         "arguments": APPLY_ARGS}, 1))
        time.sleep(0.1)
    pushed = (cpu_seconds(pid) - c0) / (time.monotonic() - t0)
    lat.sort()
    print("%d waiters subscribed (%d of them): approvald %.1f %% CPU "
          "(10 DECIDEs/s meanwhile, p50 %.2f ms, max %.2f ms)" %
          (n, subscribed, pushed * 100, lat[len(lat) // 2] * 1000,
           lat[-1] * 1000))
    return 0


def main():
    cmds = {"subscribe": cmd_subscribe, "waiters": cmd_waiters,"call": cmd_call, "request": cmd_request, "spend": cmd_spend,
            "hostile": cmd_hostile,
            "every": cmd_every,
            "race": cmd_race, "load": cmd_load,
            "respend": cmd_respend, "bench": cmd_bench}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
