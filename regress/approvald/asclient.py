#!/usr/bin/env python3
"""A client of approvald's sockets for the tests and the benchmark.

Speaks the suite's framing (common/proto.h): a 24-byte little-endian
header (u32 type, u32 len, u32 peerid, u16 version, u16 flags, u64
reqid) and a payload.

  asclient.py call SOCK TYPE [JSON]      one request, prints the reply
  asclient.py request RUN DIR PLAN       a pending terraform_apply approval
  asclient.py spend RUN ID DIR PLAN      spend it for working_dir DIR, plan
                                         PLAN (hex, or "null")
  asclient.py every SOCK ID              every message type naming ID
  asclient.py race RUN N ROUNDS          N processes spend one approval
  asclient.py load RUN COUNT OUT         approvals approved, then spent
  asclient.py respend RUN OUT            every approval of OUT again
  asclient.py bench RUN                  decisions/s and spends/s
"""

import json
import os
import socket
import struct
import sys
import time

HDR = struct.Struct("<IIIHHQ")
VERSION = 1

TYPES = {
    "PING": 1, "PONG": 2, "ERROR": 3,
    "TOOL_CALL": 100, "TOOL_CANCEL": 101, "TOOL_PROGRESS": 102,
    "TOOL_RESULT": 103,
    "DECIDE": 200, "DECISION": 201, "APPROVAL_REQUEST": 202,
    "APPROVAL_CREATED": 203, "APPROVAL_SPEND": 204, "APPROVAL_SPENT": 205,
    "CTL_LIST": 300, "CTL_SHOW": 301, "CTL_APPROVE": 302, "CTL_DENY": 303,
    "CTL_WATCH": 304, "CTL_ENTRY": 305, "CTL_END": 306,
    "CRED_ISSUE": 400, "CRED_ISSUED": 401, "CRED_REVOKE": 402,
    "CRED_REVOKED": 403,
    "AUDIT_EVENT": 500, "AUDIT_ACK": 501, "AUDIT_TAIL": 502,
    "AUDIT_SHOW": 503, "AUDIT_RECORD": 504, "AUDIT_END": 505,
    "AUDIT_ROTATE": 506, "AUDIT_STATS": 507,
}
NAMES = {v: k for k, v in TYPES.items()}

PLAN = "ab" * 32
APPLY_ARGS = {"working_dir": "demo"}


class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.buf = b""

    def send(self, mtype, payload=b"", reqid=1):
        if isinstance(payload, (dict, list)):
            payload = json.dumps(payload).encode()
        self.s.sendall(HDR.pack(mtype, len(payload), 0, VERSION, 0, reqid)
                       + payload)

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk

    def recv(self):
        """(type name, reqid, payload bytes)."""
        self._need(HDR.size)
        mtype, length, _, _, _, reqid = HDR.unpack(self.buf[:HDR.size])
        self._need(HDR.size + length)
        data = self.buf[HDR.size:HDR.size + length]
        self.buf = self.buf[HDR.size + length:]
        return NAMES.get(mtype, str(mtype)), reqid, data

    def call(self, mtype, payload=b"", reqid=1):
        self.send(mtype, payload, reqid)
        return self.recv()

    def close(self):
        self.s.close()


def error_text(data):
    code, text = struct.unpack("<i256s", data)
    return code, text.split(b"\0", 1)[0].decode()


def show(name, data):
    if name == "ERROR":
        code, text = error_text(data)
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
    name, _, data = a.call(TYPES["APPROVAL_REQUEST"], {
        "tool": "terraform_apply", "arguments": args or APPLY_ARGS,
        "plan_digest": plan, "summary": {}, "plan_text": ""},
        reqid=int.from_bytes(os.urandom(7), "little") + 1)
    a.close()
    aid = expect(name, data, "APPROVAL_CREATED")["approval_id"]
    if approve:
        c = Conn(os.path.join(run, "control.sock"))
        name, _, data = c.call(TYPES["CTL_APPROVE"], {"approval_id": aid})
        expect(name, data, "CTL_ENTRY")
        c.close()
    return aid


def spend(run, aid, args=None, plan=PLAN):
    """0 spent, 1 refused as already spent, 2 anything else."""
    try:
        a = Conn(os.path.join(run, "approval.sock"))
        name, _, data = a.call(TYPES["APPROVAL_SPEND"], {
            "approval_id": aid, "tool": "terraform_apply",
            "arguments": args or APPLY_ARGS, "plan_digest": plan})
        a.close()
    except (OSError, EOFError):
        return 2
    if name == "APPROVAL_SPENT":
        return 0
    if name == "ERROR" and "already spent" in error_text(data)[1]:
        return 1
    return 2


def cmd_call(argv):
    sock, mtype = argv[0], argv[1]
    payload = argv[2].encode() if len(argv) > 2 else b""
    c = Conn(sock)
    try:
        name, _, data = c.call(TYPES[mtype] if mtype in TYPES
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
    name, _, data = a.call(TYPES["APPROVAL_REQUEST"], {
        "tool": "terraform_apply", "arguments": {"working_dir": wd},
        "plan_digest": None if plan == "null" else plan,
        "summary": {"replace": 1, "resources": [
            {"address": "terraform_data.app", "actions": ["delete",
                                                          "create"]},
            {"address": "terraform_data.labels", "actions": ["update"]}]},
        "plan_text": "# terraform_data.app must be replaced"})
    print(expect(name, data, "APPROVAL_CREATED")["approval_id"])
    return 0


def cmd_spend(argv):
    """Presents the approval as terraform_apply does, approval_id and
    all, and prints the reply."""
    run, aid, wd, plan = argv
    a = Conn(os.path.join(run, "approval.sock"))
    name, _, data = a.call(TYPES["APPROVAL_SPEND"], {
        "approval_id": aid, "tool": "terraform_apply",
        "arguments": {"working_dir": wd, "approval_id": aid},
        "plan_digest": None if plan == "null" else plan})
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
        "state": "approved", "decision": "allow", "session_owner": "t",
        "progress": False, "summary": {}, "plan_text": ""}).encode()
    for mtype in sorted(TYPES.values()) + [0, 199, 299, 999, 65535]:
        for data in (payload, b""):
            try:
                c = Conn(sock)
                c.s.settimeout(5)
                name, _, reply = c.call(mtype, data)
                c.close()
                line = show(name, reply)
            except (EOFError, ConnectionResetError, BrokenPipeError):
                line = "CLOSED"
            except socket.timeout:
                line = "NO REPLY"
            print("%s %s -> %s" % (NAMES.get(mtype, str(mtype)),
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


def pipelined(conn, frames):
    """Sends frames in batches, reads every reply; the reply names."""
    names = []
    for i in range(0, len(frames), 256):
        batch = frames[i:i + 256]
        conn.s.sendall(b"".join(batch))
        for _ in batch:
            names.append(conn.recv()[0])
    return names


def frame(mtype, payload, reqid=1):
    data = json.dumps(payload).encode()
    return HDR.pack(mtype, len(data), 0, VERSION, 0, reqid) + data


def cmd_bench(argv):
    run = argv[0]
    n = int(argv[1]) if len(argv) > 1 else 20000
    m = int(argv[2]) if len(argv) > 2 else 500
    a = Conn(os.path.join(run, "approval.sock"))
    calls = [("terraform_apply", {"working_dir": "demo"}),
             ("k8s_get_pod_status", {"namespace": "default"}),
             ("not_a_tool", {})]
    frames = [frame(TYPES["DECIDE"], {"tool": t, "arguments": args})
              for t, args in (calls[i % 3] for i in range(n))]
    t0 = time.monotonic()
    names = pipelined(a, frames)
    dt = time.monotonic() - t0
    if names.count("DECISION") != n:
        print("bench: not every DECIDE got a DECISION")
        return 1
    print("decisions: %d in %.2f s: %.0f decisions/s" % (n, dt, n / dt))
    ids = [new_approval(run) for _ in range(m)]
    frames = [frame(TYPES["APPROVAL_SPEND"], {
        "approval_id": aid, "tool": "terraform_apply",
        "arguments": APPLY_ARGS, "plan_digest": PLAN}) for aid in ids]
    t0 = time.monotonic()
    names = pipelined(a, frames)
    dt = time.monotonic() - t0
    if names.count("APPROVAL_SPENT") != m:
        print("bench: not every spend succeeded")
        return 1
    print("spends: %d in %.2f s: %.0f durable spends/s "
          "(WAL, synchronous=FULL, each audited)" % (m, dt, m / dt))
    return 0


def main():
    cmds = {"call": cmd_call, "request": cmd_request, "spend": cmd_spend,
            "every": cmd_every,
            "race": cmd_race, "load": cmd_load,
            "respend": cmd_respend, "bench": cmd_bench}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
