#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""The agent of a code-execution session, inside its gVisor sandbox.

runnerd's launcher starts it as the sandbox's only process, with one
socket as its stdin and stdout, and speaks the suite's framing on it:
the agent sends AGENT_READY once, then answers each AGENT_REQUEST with
one AGENT_REPLY; an AGENT_CANCEL ends the request in progress.

run_python code runs in a worker forked from the agent, whose globals
survive between calls; a crash or a timeout loses that worker only and
the next call gets a fresh one.  A limit gVisor enforces inside (an
allocation past RLIMIT_AS, a fork past RLIMIT_NPROC) fails in the code
that asked, so it ends the call, never the agent.  Shell commands are `sh -c` in /work.
Files are reached only below /work, one component at a time, never
through a symbolic link.

Nothing here is trusted by runnerd: the code the agent runs shares its
user and could replace it; the sandbox, not this file, is the boundary.

    session-agent.py OUTPUT_MAX TIMEOUT_SECONDS [WORKSPACE]

WORKSPACE is /work unless given.  On gvisor the agent is the sandbox's
one process and its stdin and stdout are one socket; on the kubernetes
backend it runs through pods/exec in the sandbox's pod, its stdin and
stdout the exec stream's.
"""
import ast
import base64
import json
import os
import select
import signal
import stat
import struct
import sys
import time
import traceback

HDR = struct.Struct("<IIIHHQ")
VERSION = 1
AGENT_READY, AGENT_REQUEST, AGENT_REPLY, AGENT_CANCEL = 950, 951, 952, 953
LEN = struct.Struct("<I")

output_max = int(sys.argv[1])
timeout = float(sys.argv[2])
WORK = sys.argv[3] if len(sys.argv) > 3 else "/work"
ctl_in, ctl_out = os.dup(0), os.dup(1)   # one socket, but gVisor imports
                                        # stdin read-only, stdout write-only
worker = None


class Cancelled(Exception):
    pass


# gVisor may hand the socket over non-blocking: wait, then go on.
def read_exact(fd, n):
    buf = b""
    while len(buf) < n:
        try:
            chunk = os.read(fd, n - len(buf))
        except BlockingIOError:
            select.select([fd], [], [])
            continue
        if not chunk:
            return None
        buf += chunk
    return buf


def write_all(fd, data):
    while data:
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            select.select([], [fd], [])


def send(mtype, body, call=0):
    """A frame; a reply names its call by the request's id."""
    payload = json.dumps(body).encode()
    write_all(ctl_out, HDR.pack(mtype, len(payload), 0, VERSION, 0, call) +
              payload)


def recv():
    hdr = read_exact(ctl_in, HDR.size)
    if hdr is None:
        sys.exit(0)
    mtype, length, _, _, _, call = HDR.unpack(hdr)
    data = read_exact(ctl_in, length)
    if data is None:
        sys.exit(0)
    return mtype, data, call


class Capture:
    """One output stream, kept up to output_max; the rest is counted."""

    def __init__(self, fd):
        self.fd, self.buf, self.truncated, self.eof = fd, bytearray(), False, False

    def read(self):
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        if not data:
            self.eof = True
            return
        room = output_max - len(self.buf)
        if len(data) > room:
            self.truncated = True
        self.buf += data[:max(room, 0)]

    def fileno(self):
        return self.fd

    def drain(self):
        while not self.eof:
            r, _, _ = select.select([self.fd], [], [], 0)
            if not r:
                return
            self.read()


# Output as runnerd's output.c puts it in a result: UTF-8 text, a NUL as
# any other character (JSON's \u0000); a byte that is not part of valid
# UTF-8 stands as U+FFFD there, one for each, and NAME_base64 holds the
# exact bytes besides.
BAD_BYTES = {c: "\ufffd" for c in range(0xdc80, 0xdd00)}


def output_set(r, key, data):
    text = data.decode("utf-8", "surrogateescape")
    r[key] = text.translate(BAD_BYTES)
    r.pop(key + "_base64", None)
    if r[key] != text:
        r[key + "_base64"] = base64.b64encode(data).decode()


def output_cut(data, n):
    """At most n bytes of data, not ending inside a character."""
    k = n
    while k > 0 and n - k < 3 and data[k] & 0xc0 == 0x80:
        k -= 1
    return data[:n if data[k] & 0xc0 == 0x80 else k]


def reap_orphans(*keep):
    """Reaps what outlived its parent: the agent is the sandbox's init,
    and a zombie holds one of the tasks RLIMIT_NPROC allows."""
    while True:
        try:
            info = os.waitid(os.P_ALL, 0,
                             os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if info is None or info.si_pid in keep:
            return
        os.waitpid(info.si_pid, 0)


def wait_for(fds, until, done, *keep):
    """Reads output until done() or the deadline; a cancel raises."""
    while not done():
        reap_orphans(*keep)
        left = until - time.monotonic()
        if left <= 0:
            return False
        live = [f for f in fds if not getattr(f, "eof", False)]
        ready, _, _ = select.select(live + [ctl_in], [], [], min(left, 0.1))
        for fd in ready:
            if fd == ctl_in:
                mtype, _, _ = recv()
                if mtype == AGENT_CANCEL:
                    raise Cancelled()
                sys.exit(2)
            fd.read()
    return True


def close_fds_except(*keep):
    """Closes what a child inherited: the agent's socket and pipes."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


# The launcher takes a reply of at most 4 MiB as sent (REPLY_MAX in
# launcher/session.c); output that escapes badly (control bytes grow sixfold in
# JSON) is cut until the encoded reply fits, and marked truncated.
REPLY_MAX = 4 * 1024 * 1024 - 4096


def run_result(out, err, code, **flags):
    r = {"exit_code": code, "stdout_truncated": out.truncated,
         "stderr_truncated": err.truncated}
    data = {"stdout": bytes(out.buf), "stderr": bytes(err.buf)}
    for k in data:
        output_set(r, k, data[k])
    r.update(flags)
    while len(json.dumps(r)) > REPLY_MAX:
        k = max(data, key=lambda k: len(data[k]))
        if not data[k]:
            break
        data[k] = output_cut(data[k], len(data[k]) // 2)
        output_set(r, k, data[k])
        r[k + "_truncated"] = True
    return r


# --- the Python worker ---------------------------------------------------

def run_code(code, env):
    """Runs code like an interactive prompt: a final expression is shown."""
    try:
        tree = ast.parse(code, "<session>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<session>", "exec"), env)
        if last is not None:
            value = eval(compile(last, "<session>", "eval"), env)
            if value is not None:
                print(repr(value))
        return 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException as e:
        # The user's frames only, not the agent's own.
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        return 1


def worker_main(rfd, wfd, outfd, errfd):
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(outfd, 1)
    os.dup2(errfd, 2)
    close_fds_except(rfd, wfd)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    env = {"__name__": "__main__", "__builtins__": __builtins__}
    while True:
        n = read_exact(rfd, LEN.size)
        if n is None:
            os._exit(0)
        code = read_exact(rfd, LEN.unpack(n)[0]).decode()
        rc = run_code(code, env)
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass
        os.write(wfd, LEN.pack(rc & 0xffffffff))


class Worker:
    def __init__(self):
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            self.pid = os.fork()
        except OSError:
            for fd in (to_r, to_w, from_r, from_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            raise
        if self.pid == 0:
            try:
                os.close(ctl_in)
                os.close(ctl_out)
                worker_main(to_r, from_w, out_w, err_w)
            finally:
                os._exit(70)
        for fd in (to_r, from_w, out_w, err_w):
            os.close(fd)
        self.tx, self.rx = to_w, from_r
        self.out, self.err = Capture(out_r), Capture(err_r)
        for fd in (out_r, err_r):
            os.set_blocking(fd, False)

    def end(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        for fd in (self.tx, self.rx, self.out.fd, self.err.fd):
            os.close(fd)


def not_started(e):
    """A run that could not start, say for the process limit, reported
    as the shell reports it: the agent goes on."""
    return {"exit_code": 126, "stdout": "", "stderr": "cannot start: %s\n" %
            e.strerror, "stdout_truncated": False, "stderr_truncated": False}


def op_python(req):
    global worker
    if worker is None:
        try:
            worker = Worker()
        except OSError as e:
            return dict(not_started(e), state_lost=True)
    w = worker
    for c in (w.out, w.err):
        c.buf, c.truncated = bytearray(), False
    code = req["code"].encode()
    reply = bytearray()

    class Rx:
        def read(self):
            data = os.read(w.rx, 4 - len(reply))
            reply.extend(data if data else b"\0\0\0\0\0")

        def fileno(self):
            return w.rx

    try:
        write_all(w.tx, LEN.pack(len(code)) + code)
        finished = wait_for([w.out, w.err, Rx()], time.monotonic() + timeout,
                            lambda: len(reply) >= 4, w.pid)
        cancelled = False
    except (Cancelled, BrokenPipeError) as e:
        finished, cancelled = False, isinstance(e, Cancelled)
    if finished and len(reply) == 4:
        w.out.drain()
        w.err.drain()
        return run_result(w.out, w.err, LEN.unpack(bytes(reply))[0],
                          state_lost=False)
    # The worker died, ran out of time or was cancelled: its state goes.
    w.out.drain()
    w.err.drain()
    code = -1
    if finished:
        _, status = os.waitpid(w.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        code = code if code >= 0 else 128 - code
    r = run_result(w.out, w.err, code, state_lost=True,
                   timed_out=not finished and not cancelled,
                   cancelled=cancelled)
    w.end()
    worker = None
    return r


def op_reset(req):
    global worker
    if worker is not None:
        worker.end()
        worker = None
    return {}


# --- shell ---------------------------------------------------------------

def op_shell(req):
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        pid = os.fork()
    except OSError as e:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        return not_started(e)
    if pid == 0:
        # The control channel goes first: a child that fails must never
        # fall back into main() and answer there as a second agent.
        try:
            close_fds_except(out_w, err_w)
            os.setsid()
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            close_fds_except()
            try:
                os.chdir(WORK)
            except OSError as e:
                os.write(2, b"sh: cannot enter %s: %s\n" %
                         (WORK.encode(), e.strerror.encode()))
                os._exit(126)
            # Python ignores these; a shell's pipelines need them back,
            # as subprocess gives them back (restore_signals).
            for s in (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(s, signal.SIG_DFL)
            os.execv("/bin/sh", ["sh", "-c", req["command"]])
        finally:
            os._exit(127)
    os.close(out_w)
    os.close(err_w)
    out, err = Capture(out_r), Capture(err_r)
    os.set_blocking(out_r, False)
    os.set_blocking(err_r, False)
    status = []

    def done():
        # Both streams closed, or sh gone and its background jobs left.
        if not status:
            p, st = os.waitpid(pid, os.WNOHANG)
            if p == pid:
                status.append(st)
        return (out.eof and err.eof and status) or bool(status)

    cancelled = False
    try:
        finished = wait_for([out, err], time.monotonic() + timeout, done,
                            pid, worker.pid if worker else 0)
    except Cancelled:
        finished, cancelled = False, True
    if not finished:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        _, st = os.waitpid(pid, 0)
        status.append(st)
    out.drain()
    err.drain()
    os.close(out_r)
    os.close(err_r)
    code = os.waitstatus_to_exitcode(status[0])
    code = code if code >= 0 else 128 - code
    return run_result(out, err, code, timed_out=not finished and not cancelled,
                      cancelled=cancelled)


# --- files ---------------------------------------------------------------

def open_dir(name, d):
    """Directory name in d, never through a link.  gVisor follows a
    link despite O_NOFOLLOW when O_DIRECTORY is given, so the open is
    checked against what the name is: a link, or a swap, is refused
    before anything is made beyond it."""
    n = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=d)
    st, opened = os.stat(name, dir_fd=d, follow_symlinks=False), os.fstat(n)
    if stat.S_ISLNK(st.st_mode) or \
            (st.st_dev, st.st_ino) != (opened.st_dev, opened.st_ino):
        os.close(n)
        raise PermissionError("path must not go through a link")
    return n


def work_open(path, flags, make_dirs):
    """A file below /work, opened one component at a time, no links."""
    if path.startswith(WORK + "/"):
        path = path[len(WORK) + 1:]
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise PermissionError("path must stay inside the workspace")
    d = os.open(WORK, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for p in parts[:-1]:
            try:
                n = open_dir(p, d)
            except FileNotFoundError:
                if not make_dirs:
                    raise
                os.mkdir(p, 0o755, dir_fd=d)
                n = open_dir(p, d)
            os.close(d)
            d = n
        fd = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644,
                     dir_fd=d)
    finally:
        os.close(d)
    real = os.readlink("/proc/self/fd/%d" % fd)
    if not real.startswith(WORK + "/") or \
            not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PermissionError("not a regular file inside the workspace")
    return fd


def op_write(req):
    data = base64.b64decode(req["content"], validate=True)
    fd = work_open(req["path"], os.O_WRONLY | os.O_CREAT, True)
    try:
        os.ftruncate(fd, 0)
        write_all(fd, data)
    finally:
        os.close(fd)
    return {"bytes": len(data)}


def op_read(req):
    fd = work_open(req["path"], os.O_RDONLY, False)
    try:
        data = bytearray()
        while len(data) <= output_max:
            chunk = os.read(fd, output_max + 1 - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return {"content": base64.b64encode(bytes(data[:output_max])).decode(),
            "bytes": min(len(data), output_max),
            "truncated": len(data) > output_max}


OPS = {"python": op_python, "shell": op_shell, "write": op_write,
       "read": op_read, "reset": op_reset}


def main():
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    os.chdir(WORK)
    global worker
    worker = Worker()   # ready before the first call
    send(AGENT_READY, {"pid": os.getpid()})
    while True:
        mtype, data, call = recv()
        if mtype == AGENT_CANCEL:
            continue    # the request it meant has ended already
        if mtype != AGENT_REQUEST:
            sys.exit(2)
        reap_orphans(worker.pid if worker else 0)
        try:
            req = json.loads(data)
            reply = OPS[req["op"]](req)
        except (OSError, ValueError, KeyError, TypeError) as e:
            reply = {"error": "%s: %s" % (type(e).__name__, e)}
        send(AGENT_REPLY, reply, call)
        if worker is None and req.get("op") in ("python", "reset"):
            try:
                worker = Worker()   # after the reply: off the caller's clock
            except OSError:
                pass            # the next call tries again, and says why


if __name__ == "__main__":
    main()
