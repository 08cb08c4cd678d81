#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""The checks of t_runnerctl.sh, each run against a runnerd that the
test started (rd.subr) with stand-in peers and the test's uid among
runnerd.operators:

  rctl_check.py CHECK RUNNERCTL CONF [NOBODY-CONF]

A session is opened through runner.sock as its owner (sesscall.py)
would; runnerctl copies files into and out of it.  Prints what went
wrong on stderr and exits 1 on failure.
"""
import base64
import hashlib
import json
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from asframe import (MSG_ERROR, MSG_PING, MSG_PONG, ERR_BADMSG,  # noqa: E402
                     MSG_RCTL_SESSIONS, error_unpack, pack, recv_frame)
from sesscall import Client  # noqa: E402

# Every byte value, NULs among them, and no line structure.
BLOB = bytes(range(256)) * 300 + b"\0tail\0"


class Fail(Exception):
    pass


def expect(cond, what, detail=None):
    if not cond:
        raise Fail(what + ("" if detail is None else ": " + str(detail)))


class Ctl:
    def __init__(self, prog, conf):
        self.prog, self.conf = prog, conf

    def run(self, *args, stdin=None, user=None):
        argv = [self.prog, "-f", self.conf] + list(args)
        if user is not None:
            argv = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user,
                    "--clear-groups"] + argv
        return subprocess.run(argv, input=stdin, capture_output=True,
                              timeout=60)

    def ok(self, *args, **kw):
        p = self.run(*args, **kw)
        expect(p.returncode == 0, "runnerctl %s failed" % " ".join(args),
               p.stderr.decode(errors="replace"))
        return p

    def refused(self, what, *args, **kw):
        p = self.run(*args, **kw)
        err = p.stderr.decode(errors="replace")
        expect(p.returncode == 1 and what in err,
               "runnerctl %s: expected a refusal naming %r" %
               (" ".join(args), what), "exit %d: %s" % (p.returncode, err))
        return err


def sc(r):
    return r.get("structuredContent") or {}


def session(c):
    r = c.call("run_shell", command="mkdir -p seed")
    sid = sc(r).get("session_id", "")
    expect(not r.get("isError") and sid.startswith("ses-"), "open", r)
    return sid


def shell(c, sid, command):
    r = c.call("run_shell", command=command, session_id=sid)
    expect(not r.get("isError"), command, r)
    return sc(r).get("stdout", "")


def events():
    with open("events.jsonl") as f:
        return [json.loads(line) for line in f if '"event"' in line]


def check_copy(ctl, nobody):
    c = Client(SOCK)
    sid = session(c)
    listed = json.loads(ctl.ok("-j", "sessions").stdout)
    mine = [s for s in listed if s.get("session_id") == sid]
    expect(len(mine) == 1 and mine[0]["owner"] > 0 and
           mine[0]["owner_uid"] == os.getuid() and
           mine[0]["state"] == "idle" and
           mine[0]["container"].startswith("as-"), "sessions", listed)
    text = ctl.ok("sessions").stdout.decode()
    expect(sid in text and "idle" in text, "sessions as text", text)

    # put, then the owner reads the same bytes.
    with open("blob.bin", "wb") as f:
        f.write(BLOB)
    p = ctl.ok("-j", "put", sid, "blob.bin", "in/blob.bin")
    expect(json.loads(p.stdout) == {"session_id": sid, "path": "in/blob.bin",
                                    "bytes": len(BLOB)}, "put's reply",
           p.stdout)
    r = c.call("read_file", path="in/blob.bin", session_id=sid)
    expect(not r.get("isError") and
           base64.b64decode(sc(r)["content"]) == BLOB,
           "the owner reads what was put", r)
    ctl.ok("put", sid, "-", "in/stdin.bin", stdin=BLOB[::-1])
    r = c.call("read_file", path="in/stdin.bin", session_id=sid)
    expect(base64.b64decode(sc(r)["content"]) == BLOB[::-1],
           "put from stdin", r)

    # The owner writes, get returns the bytes, into a file or stdout.
    # Made inside, so that only a get could put them in the log.
    shell(c, sid, "mkdir out && head -c 30000 /dev/urandom > out/own.bin")
    r = c.call("read_file", path="out/own.bin", session_id=sid)
    own = base64.b64decode(sc(r)["content"])
    expect(len(own) == 30000, "the owner's read_file", r)
    with open("got.bin", "wb") as f:
        f.write(b"older and longer content " * 10000)
    p = ctl.ok("get", sid, "out/own.bin", "got.bin")
    expect(("%d bytes read" % len(own)).encode() in p.stdout, "get's report",
           p.stdout)
    with open("got.bin", "rb") as f:
        expect(f.read() == own, "get returns the owner's bytes")
    p = ctl.ok("get", sid, "out/own.bin", "-")
    expect(p.stdout == own, "get to stdout is the file alone", p.stdout[:80])
    written = b"\0by write_file\xff\0" * 100
    r = c.call("write_file", path="out/w.bin", session_id=sid,
               content=base64.b64encode(written).decode())
    expect(not r.get("isError"), "the owner's write_file", r)
    p = ctl.ok("get", sid, "out/w.bin", "-")
    expect(p.stdout == written, "get returns write_file's bytes",
           p.stdout[:80])
    ctl.ok("put", sid, "/dev/null", "empty")
    p = ctl.ok("get", sid, "empty", "-")
    expect(p.stdout == b"", "an empty file", p.stdout)

    # The session is still its owner's, and usable.
    expect(shell(c, sid, "cmp in/blob.bin in/blob.bin && echo same")
           .strip() == "same", "the owner's session after the copies")

    # Each copy is recorded, never its content.
    ev = [e for e in events() if e["event"].startswith("operator.")]
    ups = [e["fields"] for e in ev if e["event"] == "operator.upload"]
    downs = [e["fields"] for e in ev if e["event"] == "operator.download"]
    expect({"uid": os.getuid(), "session_id": sid, "path": "in/blob.bin",
            "bytes": len(BLOB), "sha256": hashlib.sha256(BLOB).hexdigest()}
           in ups, "operator.upload", ups)
    expect({"uid": os.getuid(), "session_id": sid, "path": "out/own.bin",
            "bytes": len(own), "sha256": hashlib.sha256(own).hexdigest()}
           in downs, "operator.download", downs)
    expect(len(ups) == 3 and len(downs) == 4, "one event per copy", ev)
    with open("events.jsonl") as f:
        log = f.read()
    for secret in (BLOB, BLOB[::-1], own):
        for b64 in (base64.b64encode(secret).decode()[:64],
                    base64.b64encode(secret[1:]).decode()[:64]):
            expect(b64 not in log, "content in the audit log")
    expect("content" not in json.dumps([e["fields"] for e in ev]),
           "a content field in the operator events", ev)
    c.close()


def check_refuse(ctl, nobody):
    c = Client(SOCK)
    sid = session(c)
    with open("x.txt", "wb") as f:
        f.write(b"x\n")
    for path in ("../x", "a/../../x", "/etc/passwd", "/work/x", "./x",
                 "a//b"):
        ctl.refused("path", "put", sid, "x.txt", path)
        ctl.refused("path", "get", sid, path, "never.txt")
    expect(not os.path.exists("never.txt"), "a refused get made its file")

    # Links out of the workspace, and any link, are refused both ways.
    shell(c, sid, "ln -s /etc/passwd out; ln -s /tmp tmp; "
                  "echo t > /tmp/t; ln -s seed inside; "
                  "ln -s /tmp/made dangling")
    for path in ("out", "tmp/t", "inside/x"):
        ctl.refused("read_file: ", "get", sid, path, "never.txt")
    for path in ("out", "tmp/x", "inside/x", "dangling", "tmp/new/x"):
        ctl.refused("write_file: ", "put", sid, "x.txt", path)
    expect(not os.path.exists("never.txt"), "a refused get made its file")
    left = shell(c, sid, "echo /tmp/* seed/*")
    expect(left.split() == ["/tmp/t", "seed/*"], "a put went through a link",
           left)
    fails = [e["fields"] for e in events() if e["event"] ==
             "operator.failed"]
    expect(any(f.get("path") == "out" and f.get("tool") == "read_file"
               for f in fails), "operator.failed for a refused get", fails)

    # Unknown sessions; sizes past write_file's and read_file's caps.
    ctl.refused("no session", "get", "ses-0000000000000000", "x", "-")
    ctl.refused("no session", "put", "ses-0000000000000000", "x.txt", "x")
    with open("big.bin", "wb") as f:
        f.write(b"b" * 2200000)
    ctl.refused("longer than", "put", sid, "big.bin", "big")
    shell(c, sid, "head -c 1100000 /dev/zero > large")
    ctl.refused("larger than", "get", sid, "large", "never.txt")
    expect(not os.path.exists("never.txt"), "a truncated get made its file")
    expect(shell(c, sid, "test -e big || echo none").strip() == "none",
           "the big put landed")

    # A request the socket does not list is refused; the connection stays.
    path = os.path.join(os.path.dirname(SOCK), "runner-control.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    for mtype in (MSG_RCTL_SESSIONS + 99, 100, 501):
        s.sendall(pack(mtype, 7, b"{}"))
        mt, rid, data, _ = recv_frame(s)
        code, why = error_unpack(data)
        expect(mt == MSG_ERROR and rid == 7 and code == ERR_BADMSG and
               why.startswith("unexpected "), "type %d: unexpected" % mtype,
               (mt, code, why))
    s.sendall(pack(MSG_PING, 8))
    expect(recv_frame(s)[0] == MSG_PONG, "the connection after a refusal")
    s.close()
    c.close()


def check_peer(ctl, nobody):
    c = Client(SOCK)
    sid = session(c)
    n = Ctl(ctl.prog, nobody)
    # The first gate is the socket's ACL; with it opened to all,
    # runnerd's own SO_PEERCRED check refuses as well.
    n.refused("Permission denied", "ping", stdin=b"", user=65534)
    os.chmod(os.path.join(os.path.dirname(SOCK), "runner-control.sock"),
             0o666)
    # stdin and stdout: nobody cannot reach the test's directory.
    for args in (("sessions",), ("ping",), ("put", sid, "-", "x"),
                 ("get", sid, "seed", "-")):
        n.refused("uid 65534 is not allowed", *args, stdin=b"x\n",
                  user=65534)
    expect(shell(c, sid, "test -e x || echo none").strip() == "none",
           "a refused put landed")
    ctl.ok("ping")
    expect(not [e for e in events() if e["event"].startswith("operator.")],
           "a refused peer's copy recorded")
    c.close()


SOCK = None

if __name__ == "__main__":
    check, prog, conf = sys.argv[1:4]
    nobody_conf = sys.argv[4] if len(sys.argv) > 4 else None
    SOCK = os.path.join(os.getcwd(), "run", "runner.sock")
    try:
        globals()["check_" + check](Ctl(prog, conf), nobody_conf)
    except (Fail, OSError, subprocess.SubprocessError) as e:
        print("%s: %s" % (check, e), file=sys.stderr)
        sys.exit(1)
