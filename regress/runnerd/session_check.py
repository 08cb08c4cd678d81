#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""The session checks of t_session.sh, each run against a runnerd that
the test started (rd.subr) with stand-in peers:

  session_check.py CHECK SOCK [ARGS...]

prints what went wrong on stderr and exits 1 on failure.  Every probe
that touches the network goes to this machine's own addresses only.
"""
import base64
import hashlib
import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sesscall import Client  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class Fail(Exception):
    pass


def expect(cond, what, result=None):
    if not cond:
        raise Fail(what + ("" if result is None else ": " + json.dumps(result)))


def sc(r):
    return r.get("structuredContent") or {}


def named(r):
    """The structured content less its request id, which must be there."""
    rest = dict(sc(r))
    rid = rest.pop("request_id", "")
    expect(re.fullmatch(r"req-[0-9a-f]{16}", rid), "request_id", r)
    return rest


def out(r):
    return sc(r).get("stdout", "")


def ok(r, what):
    expect(not r.get("isError") and sc(r).get("exit_code", 0) == 0, what, r)
    return r


def opened(c, tool="run_python", **args):
    """A new session through a first call; its id."""
    r = ok(c.call(tool, **args), "first call of a new session")
    sid = sc(r).get("session_id", "")
    expect(sid.startswith("ses-") and len(sid) == 20, "session id", r)
    return sid, r


def text(r):
    return r["content"][0]["text"]


def events(path="events.jsonl"):
    with open(path) as f:
        return [json.loads(line) for line in f if '"event"' in line]


# --- state ---------------------------------------------------------------

def check_state(sock):
    c = Client(sock)
    sid, _ = opened(c, code="x = 41")
    r = ok(c.call("run_python", code="x + 1", session_id=sid), "x + 1")
    expect(out(r) == "42\n", "x + 1 should print 42", r)
    ok(c.call("write_file", path="kept.txt", session_id=sid,
              content=base64.b64encode(b"still here").decode()), "write")
    # A crash loses the Python state only, and says so.
    r = c.call("run_python", code="import os; os._exit(1)", session_id=sid)
    expect(r.get("isError") and sc(r).get("state_lost") is True and
           sc(r).get("exit_code") == 1, "os._exit(1): state_lost", r)
    expect("state" in text(r) and "lost" in text(r), "the text says so", r)
    r = c.call("run_python", code="x", session_id=sid)
    expect(r.get("isError") and "NameError" in sc(r).get("stderr", ""),
           "x must be gone after the crash", r)
    r = ok(c.call("read_file", path="kept.txt", session_id=sid), "read")
    expect(base64.b64decode(sc(r)["content"]) == b"still here",
           "files survive a worker crash", r)
    # reset clears the state; the session goes on.
    ok(c.call("run_python", code="import json; y = 7", session_id=sid), "y")
    r = ok(c.call("reset", session_id=sid), "reset")
    expect(named(r) == {"session_id": sid, "reset": True}, "reset result",
           r)
    r = c.call("run_python", code="y", session_id=sid)
    expect(r.get("isError") and "NameError" in sc(r).get("stderr", ""),
           "y must be gone after reset", r)
    r = c.call("run_python", code="json", session_id=sid)
    expect(r.get("isError"), "imports must be gone after reset", r)
    # Exceptions are results, not crashes: the state stays.
    ok(c.call("run_python", code="z = 1", session_id=sid), "z")
    r = c.call("run_python", code="1/0", session_id=sid)
    expect(r.get("isError") and "ZeroDivisionError" in sc(r)["stderr"] and
           not sc(r)["state_lost"], "an exception keeps the state", r)
    r = ok(c.call("run_python", code="z", session_id=sid), "z after 1/0")
    expect(out(r) == "1\n", "z survives an exception", r)
    r = ok(c.call("close_session", session_id=sid), "close")
    expect(named(r) == {"session_id": sid, "closed": True}, "close result",
           r)
    r = c.call("run_python", code="1", session_id=sid)
    expect(r.get("isError") and "no session" in text(r),
           "a closed session is gone", r)


# --- the proof scenario ----------------------------------------------------

PRIMES = '''
import hashlib
primes, n = [], 2
while len(primes) < 1000:
    if all(n % p for p in primes if p * p <= n):
        primes.append(n)
    n += 1
hashlib.sha256("\\n".join(map(str, primes)).encode()).hexdigest()
'''


def check_primes(sock):
    c = Client(sock)
    sid, r = opened(c, code=PRIMES)
    inside = out(r).strip().strip("'")
    primes, n = [], 2
    while len(primes) < 1000:
        if all(n % p for p in primes if p * p <= n):
            primes.append(n)
        n += 1
    host = hashlib.sha256("\n".join(map(str, primes)).encode()).hexdigest()
    expect(inside == host, "sandbox %s, host %s" % (inside, host), r)
    print("sha256 of the first 1000 primes: %s (sandbox = host)" % host)


# --- files -----------------------------------------------------------------

def check_files(sock):
    c = Client(sock)
    blob = bytes(range(256)) * 4
    sid, r = opened(c, "write_file", path="d/e/blob.bin",
                    content=base64.b64encode(blob).decode())
    expect(sc(r).get("bytes") == len(blob), "bytes written", r)
    r = ok(c.call("read_file", path="d/e/blob.bin", session_id=sid), "read")
    expect(base64.b64decode(sc(r)["content"]) == blob and
           sc(r)["bytes"] == len(blob) and not sc(r)["truncated"],
           "binary round trip", r)
    r = ok(c.call("run_shell", command="sha256sum d/e/blob.bin",
                  session_id=sid), "sha256sum")
    expect(out(r).split()[0] == hashlib.sha256(blob).hexdigest(),
           "the shell sees the same bytes", r)
    # Symbolic links out of the workspace are refused both ways.
    ok(c.call("run_shell", session_id=sid, command="ln -s /etc/passwd "
              "out; ln -s /etc etc; ln -s /tmp tmp; echo t > /tmp/t"),
       "links")
    for tool, path in (("read_file", "out"), ("read_file", "etc/passwd"),
                       ("read_file", "tmp/t"), ("write_file", "out"),
                       ("write_file", "etc/new"), ("write_file", "tmp/x")):
        args = {"path": path, "session_id": sid}
        if tool == "write_file":
            args["content"] = base64.b64encode(b"x").decode()
        r = c.call(tool, **args)
        expect(r.get("isError"), "%s %s through a link must fail" %
               (tool, path), r)
    r = c.call("run_shell", command="cat /tmp/x /etc/new 2>&1; "
               "echo /tmp/*", session_id=sid)
    expect("No such file" in out(r) and "x" not in out(r).split(),
           "nothing was written through a link", r)
    # The paths runnerd refuses before the agent sees them.
    for path in ("../x", "a/../../x", "./x", "a//b"):
        r = c.call("read_file", path=path, session_id=sid)
        expect(r.get("isError") and "path" in text(r), "path " + path, r)
    r = c.call("read_file", path="/etc/passwd", session_id=sid)
    expect(r.get("isError"), "an absolute path is refused", r)
    r = c.call("read_file", path="missing", session_id=sid)
    expect(r.get("isError") and "No such file" in text(r), "missing", r)
    # The log has each file's size and digest, never its content; and a
    # long argument as its size and digest too.
    long_command = "true " + "x" * (64 * 1024)
    ok(c.call("run_shell", command=long_command, session_id=sid), "long")
    digest = {"bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest()}
    ev = events()
    req = [e["fields"]["arguments"] for e in ev
           if e["event"] == "tool.request"]
    expect(dict(req[0], content=digest) == req[0], "write_file's content "
           "recorded as its size and digest", req[0])
    expect({"bytes": len(long_command), "sha256": hashlib.sha256(
        long_command.encode()).hexdigest()} in [a.get("command") for a in req],
        "a long command recorded as its size and digest")
    reads = [e["fields"] for e in ev if e["event"] == "tool.result" and
             e["fields"].get("sha256") == digest["sha256"]]
    expect(len(reads) == 1 and reads[0]["bytes"] == len(blob),
           "read_file's result recorded with its digest", reads)
    with open("events.jsonl") as f:
        log = f.read()
    expect(base64.b64encode(blob).decode()[:64] not in log and
           "x" * 1024 not in log, "content in the audit log")


# --- output of any bytes ---------------------------------------------------

def b64(r, key):
    """The exact bytes of a stream: its base64 copy, or its text."""
    v = sc(r).get(key + "_base64")
    return base64.b64decode(v) if v is not None else \
        sc(r).get(key, "").encode()


def check_nul(sock):
    c = Client(sock)
    # A first call without a session is a new session's: it is one-shot.
    r = ok(c.call("run_python", code="print('x\\0y')"), "one-shot print")
    expect(out(r) == "x\0y\n" and text(r) == "x\0y\n",
           "print('x\\0y') one-shot: the NUL kept", r)
    sid, _ = opened(c, code="kept = 'still here'")
    r = ok(c.call("run_shell", command="printf 'a\\0b'", session_id=sid),
           "printf a\\0b")
    expect(out(r) == "a\0b" and text(r) == "a\0b" and
           "stdout_base64" not in sc(r), "printf 'a\\0b': \\u0000 in text",
           r)
    r = ok(c.call("run_python", code="kept", session_id=sid), "kept")
    expect(out(r) == "'still here'\n", "the Python state survives", r)
    r = ok(c.call("run_python", code="print('x\\0y')", session_id=sid),
           "print")
    expect(out(r) == "x\0y\n", "print('x\\0y') in a session", r)
    r = ok(c.call("run_shell", command="mkdir -p f/g && find f -print0; "
                  "cat /proc/self/cmdline", session_id=sid), "find -print0")
    expect(out(r) == "f\0f/g\0cat\0/proc/self/cmdline\0",
           "find -print0 and /proc/self/cmdline", r)
    # Bytes that are not UTF-8: U+FFFD each in the text, and the exact
    # bytes as base64; a stream that is UTF-8 has no copy.
    r = ok(c.call("run_shell", command="printf 'a\\377\\0\\342\\202z'; "
                  "printf '\\342\\202\\254' >&2", session_id=sid), "bytes")
    expect(out(r) == "a\ufffd\0\ufffd\ufffdz" and
           b64(r, "stdout") == b"a\xff\0\xe2\x82z" and
           sc(r).get("stderr") == "\u20ac" and
           "stderr_base64" not in sc(r), "not UTF-8: text and base64", r)
    r = ok(c.call("run_python", session_id=sid, code="import sys; "
                  "_ = sys.stdout.buffer.write(bytes(range(256)))"), "256")
    expect(b64(r, "stdout") == bytes(range(256)), "every byte value", r)
    blob = b"\0a\0\0b\0"
    ok(c.call("write_file", path="nul.bin", session_id=sid,
              content=base64.b64encode(blob).decode()), "write NULs")
    r = ok(c.call("read_file", path="nul.bin", session_id=sid), "read NULs")
    expect(base64.b64decode(sc(r)["content"]) == blob, "read_file", r)
    # What a limit prints is found after a NUL too.
    r = c.call("run_shell", command="printf 'x\\0' >&2; "
               "echo MemoryError >&2; exit 1", session_id=sid)
    expect(sc(r).get("memory_limit") is True, "MemoryError after a NUL", r)
    r = ok(c.call("run_python", code="kept", session_id=sid), "kept again")
    expect(out(r) == "'still here'\n", "the session lives on", r)
    res = [e["fields"] for e in events() if e["event"] == "tool.result" and
           e["fields"].get("session_id") == sid]
    expect("a\0b" in [f.get("stdout") for f in res] and
           "f\0f/g\0cat\0/proc/self/cmdline\0" in
           [f.get("stdout") for f in res], "the NULs are in the log", res)


# --- limits: timeout, output cap -----------------------------------------

def check_timeout(sock):
    c = Client(sock)
    sid, _ = opened(c, code="k = 5")
    t0 = time.monotonic()
    r = c.call("run_python", code="while True: pass", session_id=sid)
    expect(r.get("isError") and sc(r)["timed_out"] and sc(r)["state_lost"],
           "a runaway loop times out and loses the worker", r)
    expect(time.monotonic() - t0 < 10, "the timeout is the configured one")
    r = c.call("run_shell", command="echo before; sleep 100",
               session_id=sid)
    expect(r.get("isError") and sc(r)["timed_out"] and
           out(r) == "before\n", "sleep 100 times out", r)
    r = ok(c.call("run_python", code="k = 6; k", session_id=sid),
           "the session lives on")
    expect(out(r) == "6\n", "fresh worker", r)
    r = c.call("run_shell", command="head -c 3000000 /dev/zero | tr '\\0' a",
               session_id=sid)
    expect(sc(r)["truncated"] and len(out(r)) == 1024 * 1024,
           "output capped at output_max", dict(sc(r), stdout=len(out(r))))
    # mcpd's cancel ends the call, not the session.
    rid = c.send("run_python", {"code": "import time; time.sleep(60)",
                                "session_id": sid})
    time.sleep(1)
    c.cancel(rid)
    r = c.result(rid)
    expect(r.get("isError") and "cancelled" in text(r), "cancelled", r)
    ok(c.call("run_shell", command="true", session_id=sid), "after cancel")


# --- limits inside the sandbox (issue 19) ---------------------------------

# Bounded: 3000 forks at most.  A fork takes tens of milliseconds in
# gVisor's ptrace platform, so children that left at once would free
# their slots as fast as the loop takes them; these stay until the loop
# has failed, then the command ends them all.
SH_FORKS = ("(i=0; while [ $i -lt 3000 ]; do sleep 10 & i=$((i+1)); done);"
            " s=$?; trap '' TERM; kill 0; exit $s")
PY_FORKS = """import os
n = 0
try:
    for _ in range(3000):
        if os.fork() == 0:
            os._exit(0)
        n += 1
finally:
    print("forked", n)
    for _ in range(n):
        os.wait()
"""


def limited(r, flag, what):
    """An error that names the limit, from a session that lives on."""
    expect(r.get("isError") and sc(r).get(flag) is True and
           "ended" not in text(r) and "limit" in text(r), what, r)
    expect(sc(r).get("state_lost") in (None, False), what + ": state kept", r)


def check_limits(sock):
    c = Client(sock)
    sid, _ = opened(c, code="kept = 'set before the limits'")
    ok(c.call("write_file", path="before.txt", session_id=sid,
              content=base64.b64encode(b"written before").decode()),
       "write")
    # gVisor is told the sandbox's bound (memory 256M, work_max 64M for
    # its /work, and 128M), not the host's memory.
    r = ok(c.call("run_shell", command="head -1 /proc/meminfo",
                  session_id=sid), "meminfo")
    expect(out(r).split()[1:] == [str(448 * 1024), "kB"], "MemTotal", r)
    limited(c.call("run_shell", command=SH_FORKS, session_id=sid),
            "pids_limit", "a shell fork loop")
    r = c.call("run_python", code=PY_FORKS, session_id=sid)
    limited(r, "pids_limit", "a Python fork loop")
    n = int(out(r).split()[-1])
    expect(0 <= n < 32, "forked %d under a limit of 32" % n, r)
    limited(c.call("run_python", code="x = bytearray(4 << 30)",
                   session_id=sid), "memory_limit", "4 GiB in the worker")
    limited(c.call("run_shell", command="python3 -c 'bytearray(4 << 30)'",
                   session_id=sid), "memory_limit", "4 GiB in a command")
    r = ok(c.call("run_python", code="len(bytearray(64 << 20))",
                  session_id=sid), "64 MiB under the limit")
    expect(out(r) == "67108864\n" and sc(r)["memory_limit"] is False and
           sc(r)["pids_limit"] is False, "no limit reported", r)
    r = ok(c.call("run_python", code="kept", session_id=sid), "state")
    expect(out(r) == "'set before the limits'\n", "the worker's state", r)
    r = ok(c.call("read_file", path="before.txt", session_id=sid), "read")
    expect(base64.b64decode(sc(r)["content"]) == b"written before",
           "the file written before", r)
    r = ok(c.call("run_shell", command="echo forks again", session_id=sid),
           "a command after the limits")
    expect(out(r) == "forks again\n", "the agent forks again", r)


# --- isolation between sessions ------------------------------------------

def check_isolation(sock):
    a, b = Client(sock), Client(sock)
    sa, _ = opened(a, "run_shell", command="echo a-secret > /work/mine; "
                   "echo a-tmp > /tmp/mine; (sleep 120 &) ; echo started")
    sb, _ = opened(b, "run_shell", command="true")
    same, _ = opened(a, "run_shell", command="true")
    for c, s in ((b, sb), (a, same)):
        r = ok(c.call("run_shell", session_id=s, command="echo /work/* /work/.* /tmp/*; "
                      "cat /work/mine /tmp/mine 2>&1; "
                      "for p in /proc/[0-9]*; do "
                      "tr '\\0' ' ' < $p/cmdline; echo; done"), "look")
        expect("a-secret" not in out(r) and "a-tmp" not in out(r) and
               "sleep 120" not in out(r),
               "another session's files or processes are visible", r)
    r = ok(a.call("run_shell", session_id=sa, command="cat /work/mine; "
                  "ps -eo args 2>/dev/null | grep -c '^sleep 120' || "
                  "grep -l 'sleep' /proc/[0-9]*/cmdline | wc -l"), "own")
    expect(out(r).startswith("a-secret\n"), "own files stay", r)


def probed(sock, what):
    """probe.py's WHAT in the session's Python worker and from its shell:
    the lines each printed."""
    c = Client(sock)
    with open(os.path.join(HERE, "probe.py"), "rb") as f:
        src = f.read()
    sid, _ = opened(c, "write_file", path="probe.py",
                    content=base64.b64encode(src).decode())
    worker = ok(c.call("run_python", session_id=sid, code="import sys\n"
                       "sys.path.insert(0, '/work')\n"
                       "import probe\nprobe.%s()" % what), "run_python")
    shell = ok(c.call("run_shell", session_id=sid,
                      command="python3 probe.py " + what), "run_shell")
    return [(w, out(r).splitlines()) for w, r in (("run_python", worker),
                                                  ("run_shell", shell))]


def check_threads(sock):
    for where, lines in probed(sock, "threads"):
        for w in ("thread", "many_threads", "futures", "posix_spawn",
                  "subprocess"):
            expect(w + "=ok" in lines, "%s in %s" % (w, where), lines)


def check_coreutils(sock):
    for where, lines in probed(sock, "coreutils"):
        for w in ("ls", "ls_root", "ls_l", "stat", "cp_a", "du", "find",
                  "owner", "id", "cc", "localhost", "sitecustomize",
                  "process_pool"):
            expect(w + "=ok" in lines, "%s in %s" % (w, where), lines)
    # The session's shell gets SIGPIPE back from the agent's Python.
    c = Client(sock)
    sid, _ = opened(c, "run_shell", command="true")
    r = ok(c.call("run_shell", session_id=sid, command="yes | head -1"),
           "a pipeline")
    expect(out(r) == "y\n" and sc(r).get("stderr") == "",
           "yes | head -1 ends quietly, as on the host", r)


def check_userns(sock):
    for where, lines in probed(sock, "userns"):
        for w in ("unshare_cmd", "clone_newuser", "clone3_newuser"):
            expect(w + "=refused" in lines, "%s in %s" % (w, where), lines)


# --- ownership, caps, reaping ----------------------------------------------

def check_owner(sock):
    a, b = Client(sock), Client(sock)
    sid, _ = opened(a, code="secret = 'a'")
    for tool, args in (("run_python", {"code": "secret"}),
                       ("run_shell", {"command": "true"}),
                       ("read_file", {"path": "x"}),
                       ("write_file", {"path": "x", "content": ""}),
                       ("reset", {}), ("close_session", {})):
        args["session_id"] = sid
        r = b.call(tool, **args)
        expect(r.get("isError") and "belongs to another client" in text(r),
               "%s on another client's session" % tool, r)
    r = ok(a.call("run_python", code="secret", session_id=sid), "owner")
    expect(out(r) == "'a'\n", "the owner's state is untouched", r)
    r = b.call("run_python", code="1", session_id="ses-0000000000000000")
    expect(r.get("isError") and "no session" in text(r), "unknown id", r)
    # The owner's connection closes: its sessions end.
    a.close()
    for _ in range(100):
        ends = [e for e in events() if e["event"] == "sandbox.completed" and
                e["fields"].get("session_id") == sid]
        if ends:
            break
        time.sleep(0.1)
    expect(ends and "client went away" in ends[0]["fields"]["reason"],
           "the session ends with its client", ends)


def check_caps(sock):
    # a and b: two clients of this uid; n: one of uid 65534.
    a, b = Client(sock), Client(sock)
    n = Client(sock, uid=65534)
    s1, _ = opened(a, code="1")
    opened(a, code="2")
    r = a.call("run_python", code="3")
    expect(r.get("isError") and "runnerd.sessions_per_client" in text(r),
           "sessions_per_client 2", r)
    opened(b, code="4")
    r = b.call("run_python", code="5")
    expect(r.get("isError") and "runnerd.sessions_per_user" in text(r),
           "sessions_per_user 3, counting both clients", r)
    opened(n, code="6")
    r = n.call("run_python", code="7")
    expect(r.get("isError") and "sessions are open" in text(r),
           "sessions_max 4", r)
    ok(a.call("close_session", session_id=s1), "close")
    opened(b, code="8")


def check_reap(sock):
    c = Client(sock)
    sid, _ = opened(c, code="1")
    busy, _ = opened(c, code="2")
    # busy is used every second: idle never, but its lifetime ends it.
    t0 = time.monotonic()
    while time.monotonic() - t0 < 4:
        r = c.call("run_python", code="3", session_id=busy)
        if r.get("isError"):
            break
        time.sleep(0.5)
    r = c.call("run_python", code="1", session_id=sid)
    expect(r.get("isError") and "no session" in text(r),
           "an idle session is reaped", r)
    ends = {e["fields"]["session_id"]: e["fields"]["reason"]
            for e in events() if e["event"] == "sandbox.completed"}
    expect("idle" in ends.get(sid, ""), "reaped as idle", ends)
    for _ in range(60):
        r = c.call("run_python", code="3", session_id=busy)
        if r.get("isError") and "closing" not in text(r):
            break
        time.sleep(0.5)
    expect(r.get("isError") and "no session" in text(r),
           "a session past its lifetime is reaped", r)
    ends = {e["fields"]["session_id"]: e["fields"]["reason"]
            for e in events() if e["event"] == "sandbox.completed"}
    expect("lifetime" in ends.get(busy, ""), "reaped at its lifetime", ends)


def check_audit(sock):
    c = Client(sock)
    sid, _ = opened(c, code="print('out-' + 'put')")
    ok(c.call("run_shell", command="echo shell-out", session_id=sid), "sh")
    ok(c.call("close_session", session_id=sid), "close")
    ev = events()
    names = [e["event"] for e in ev]
    expect(names[:4] == ["tool.request", "guardrail.decision",
                         "sandbox.started", "tool.result"],
           "a new session's events", names)
    expect(not any("issued" in e for e in ev), "brokerd was asked")
    req = [e["fields"] for e in ev if e["event"] == "tool.request"]
    expect(req[0]["arguments"]["code"] == "print('out-' + 'put')" and
           req[1]["arguments"]["command"] == "echo shell-out",
           "code and commands are recorded", req)
    res = [e["fields"] for e in ev if e["event"] == "tool.result"]
    expect(res[0]["stdout"] == "out-put\n" and
           res[1]["stdout"] == "shell-out\n" and
           all(f["session_id"] == sid for f in res), "outputs recorded", res)
    st = [e["fields"] for e in ev if e["event"] == "sandbox.started"][0]
    expect(st["session_id"] == sid and st["container"].startswith("as-"),
           "sandbox.started names the session and its container", st)


def check_warm(sock):
    # The pool (warm_pool: 1) gets time to start, and to refill (a start
    # took more than 3 s on a loaded machine); a client each, within
    # sessions_per_client.
    clients = [Client(sock) for _ in range(3)]
    for c in clients:
        time.sleep(8)
        opened(c, code="1")
    st = [e["fields"] for e in events() if e["event"] == "sandbox.started"]
    expect(len(st) == 3 and all(f["warm"] for f in st),
           "each new session claims a warm sandbox", st)


# --- breakout attempts -------------------------------------------------------

BREAKOUT = r'''
import ctypes, os, signal, socket
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, fn):
    try:
        r = fn()
        print("%s=succeeded:%r" % (name, r))
    except Exception as e:
        print("%s=failed:%s" % (name, type(e).__name__))
def c_call(f, *a):
    if f(*a) != 0:
        raise OSError(ctypes.get_errno(), "")
    return 0
def read(p):
    with open(p, "rb") as f:
        return f.read(64)
def write(p):
    with open(p, "w") as f:
        f.write("x")
attempt("host_file", lambda: read(HOST_FILE))
attempt("sa_token", lambda: read("/var/run/secrets/kubernetes.io/serviceaccount/token"))
attempt("run_secrets", lambda: os.listdir("/run/secrets"))
for d in ("/", "/usr", "/etc", "/bin", "/run", "/var", "/proc/sys/kernel/hostname"):
    attempt("write_" + d, lambda: write(d if d.startswith("/proc") else d + "/.probe"))
attempt("mount", lambda: c_call(libc.mount, b"none", b"/tmp", b"tmpfs", 0, None))
attempt("chroot", lambda: os.chroot("/tmp"))
attempt("unshare_user", lambda: c_call(libc.unshare, 0x10000000))
attempt("raw_socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("packet_socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
attempt("signal_host_pid", lambda: os.kill(HOST_PID, signal.SIGKILL))
attempt("ptrace_host_pid", lambda: c_call(libc.ptrace, 16, HOST_PID, None, None))
attempt("setuid_root", lambda: os.setuid(0))
attempt("setresuid_root", lambda: os.setresuid(0, 0, 0))
attempt("setgid_root", lambda: os.setgid(0))
print("uid=%d,%d" % (os.getuid(), os.geteuid()))
print("env=" + ",".join(sorted(os.environ)))
print("agent_env=" + ",".join(sorted(k.split("=")[0] for k in open("/proc/1/environ").read().split("\0") if k)))
'''

MEMORY = r'''
try:
    a = bytearray(768 * 1024 * 1024)
    a[::4096] = b"x" * (len(a) // 4096)
    print("allocated")
except MemoryError:
    print("MemoryError")
'''

PIDS = r'''python3 -c "
import os, signal, sys, time
kids = []
for n in range(200):
    try:
        pid = os.fork()
    except OSError:
        print(\"forked\", n)
        for pid in kids:
            os.kill(pid, signal.SIGKILL)
        sys.exit(1)
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
print(\"forked\", 200)"'''


def check_breakout(sock, host_file, host_pid, addr, tport, uport):
    host_pid = int(host_pid)
    with open(host_file, "rb") as f:
        host_before = f.read()
    c = Client(sock)
    bystander, _ = opened(c, code="kept = 'bystander'")
    sid, _ = opened(c, code="pass")
    code = BREAKOUT.replace("HOST_FILE", repr(host_file)).replace(
        "HOST_PID", str(host_pid))
    r = c.call("run_python", code=code, session_id=sid)
    lines = dict(line.split("=", 1) for line in out(r).splitlines())
    expect(len(lines) > 20 and not sc(r).get("state_lost"),
           "the probe ran", r)
    for k, v in lines.items():
        if k in ("uid", "env", "agent_env", "run_secrets"):
            continue
        expect(v.startswith("failed:"), "%s did not fail: %s" % (k, v), r)
    expect(lines.get("uid") == "65534,65534", "uid inside", r)
    allowed = {"HOME", "LANG", "PATH", "TMPDIR", "XDG_CONFIG_HOME",
               "XDG_CACHE_HOME", "XDG_DATA_HOME", "TF_CLI_CONFIG_FILE",
               "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL",
               "GIT_TERMINAL_PROMPT"}
    for k in ("env", "agent_env"):
        expect(set(lines[k].split(",")) <= allowed,
               "environment inside: " + lines[k], r)
    expect(lines["run_secrets"] in ("succeeded:[]",) or
           lines["run_secrets"].startswith("failed:"),
           "no credential in a session", r)
    r = c.call("read_file", path="../" * 8 + host_file.lstrip("/"),
               session_id=sid)
    expect(r.get("isError"), "read_file of a host path", r)
    # Network: only lo; TCP and DNS to this machine's own addresses fail.
    with open(os.path.join(HERE, "probe.py")) as f:
        probe = f.read()
    r = ok(c.call("run_shell", session_id=sid, command="python3 - net %s %s "
                  "%s <<'PROBE'\n%sPROBE" % (addr, tport, uport, probe)),
           "net probe")
    net = dict(line.split("=", 1) for line in out(r).splitlines())
    expect(net.get("interfaces") == "lo", "interfaces", r)
    for k in ("tcp_loopback", "tcp_host", "dns_loopback", "dns_host",
              "resolve"):
        expect(net.get(k, "").startswith("failed:"), k + " did not fail", r)
    # Exhaustion, bounded: a fixed allocation over the memory limit, a
    # fork loop of at most 200 over the pids limit.
    r = c.call("run_python", code=MEMORY, session_id=sid)
    expect(r.get("isError") or out(r) == "MemoryError\n",
           "768 MiB under a 256 MiB limit", r)
    victim = sid if not r.get("isError") or "ended" not in text(r) else None
    if victim is None:
        victim, _ = opened(c, code="pass")
    r = c.call("run_shell", command=PIDS, session_id=victim)
    n = int(out(r).split()[-1]) if out(r).startswith("forked") else -1
    expect(0 <= n <= 32, "forked %d under a limit of 32" % n, r)
    # The host and the other session are unaffected.
    os.kill(host_pid, 0)
    with open(host_file, "rb") as f:
        expect(f.read() == host_before, "the host file changed")
    r = ok(c.call("run_python", code="kept", session_id=bystander),
           "bystander")
    expect(out(r) == "'bystander'\n", "the other session's state", r)
    # Last: kill everything it can see; that is its own session only.
    r = c.call("run_shell", command="kill -9 -1; sleep 1", session_id=victim)
    os.kill(host_pid, 0)
    r = ok(c.call("run_python", code="kept", session_id=bystander),
           "bystander after kill -1")


# --- what comes out of a sandbox (issue 21) --------------------------------

def answered(secs, fn, *a, **kw):
    """fn's answer, or Fail after secs: a hang is a failure, not a wait."""
    def late(*_):
        raise Fail("no answer within %d s" % secs)
    signal.signal(signal.SIGALRM, late)
    signal.alarm(secs)
    try:
        return fn(*a, **kw)
    finally:
        signal.alarm(0)


def own_replies(c, sid, what):
    """Later calls in the session each get their own answer."""
    for i in range(3):
        r = answered(30, c.call, "run_shell", command="echo call-%d" % i,
                     session_id=sid)
        expect(not r.get("isError") and out(r) == "call-%d\n" % i,
               "%s: call %d got its own reply" % (what, i), r)
    r = answered(30, c.call, "run_python", code="6 * 7", session_id=sid)
    expect(out(r) == "42\n", "%s: Python answers" % what, r)


def bystander(sock):
    """Another client's session, opened before one misbehaves."""
    other = Client(sock)
    osid, _ = opened(other, code="n = 1")
    return other, osid


def bystander_answers(by, what):
    """The bystander's session answers while the other one misbehaves."""
    other, osid = by
    r = answered(10, other.call, "run_python", code="n", session_id=osid)
    expect(out(r) == "1\n", "%s: the other session answers" % what, r)


BIG = ("head -c 1048576 /dev/zero | tr '\\0' '\\1'; "
       "head -c 1048576 /dev/zero | tr '\\0' '\\1' >&2")


def check_bigout(sock):
    c = Client(sock)
    sid, _ = opened(c, tool="run_shell", command="true")
    by = bystander(sock)
    for args in ({}, {"session_id": sid}):
        r = answered(60, c.call, "run_shell", command=BIG, **args)
        delivered = len(json.dumps(r))
        expect(delivered < 16 * 1024 * 1024, "the result fits its frame")
        # Each runs in a session (a new one, then the same): the agent
        # has cut its reply to the launcher's 4 MiB as encoded, and the
        # result is whole or, to fit its frame, without its structured
        # copies of the output.
        whole = "stdout" in sc(r)
        expect(sc(r).get("truncated") is True and
               text(r).count("\x01") > 64 * 1024,
               "the output is there, and said to be cut",
               {k: v for k, v in sc(r).items()
                if k not in ("stdout", "stderr")})
        # The record is written before the result is sent: the last one.
        res = [e["fields"] for e in events()
               if e["event"] == "tool.result"][-1]
        expect(res.get("delivered") == ("whole" if whole else
               "truncated") and res["isError"] == r["isError"],
               "the audit log says what was delivered",
               dict(res, stdout=None, stderr=None))
        bystander_answers(by, "a big output")
    own_replies(c, sid, "after a big output")


def broken_work(c, sid, by, what, breaks, mends=None):
    """After breaks, a command gets an answer (an error, if its /work
    is gone) and later calls their own replies; the bystander's session
    answers meanwhile."""
    answered(30, c.call, "run_shell", command=breaks, session_id=sid)
    bystander_answers(by, what)
    r = answered(30, c.call, "run_shell", command="echo reached",
                 session_id=sid)
    expect(out(r) == "reached\n" or (r.get("isError") and out(r) == "" and
           "/work" in sc(r).get("stderr", "")),
           "%s: the call gets its answer or a clear error" % what, r)
    if mends is not None:
        expect(r.get("isError"), "%s: the call is refused" % what, r)
        ok(answered(30, c.call, "run_python", code=mends, session_id=sid),
           "%s: mended" % what)
    own_replies(c, sid, what)


def check_workdir(sock):
    c = Client(sock)
    sid, _ = opened(c, tool="run_shell", command="true")
    by = bystander(sock)
    broken_work(c, sid, by, "chmod 000 /work", "chmod 000 /work",
                "import os; os.chmod('/work', 0o755)")
    # /work is a mount: rm empties it, the directory stays.
    broken_work(c, sid, by, "/work removed", "rm -rf /work")


def check_tmpfull(sock):
    c = Client(sock)
    sid, _ = opened(c, tool="run_shell", command="true")
    by = bystander(sock)
    r = answered(60, c.call, "run_shell", session_id=sid,
                 command="cat /dev/zero > /tmp/fill; df -k /tmp")
    expect("No space left" in sc(r).get("stderr", ""), "/tmp is full", r)
    r = answered(30, c.call, "run_shell", session_id=sid,
                 command="echo x > /tmp/more")
    # gVisor says EIO where Linux says ENOSPC.
    expect(r.get("isError") and "echo" in sc(r).get("stderr", ""),
           "a write to the full /tmp gets a clear error", r)
    bystander_answers(by, "/tmp full")
    own_replies(c, sid, "/tmp full")
    ok(answered(30, c.call, "run_shell", command="rm /tmp/fill",
                session_id=sid), "rm /tmp/fill")


def main():
    name, sock, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        globals()["check_" + name](sock, *args)
    except Fail as e:
        print("FAIL %s: %s" % (name, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
