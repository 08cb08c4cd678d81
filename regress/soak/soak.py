#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""make soak: MINUTES (SOAK_MIN, 30) of CLIENTS (64) MCP clients, each
an mcpd of its own, against the whole suite on one machine, with
clients that misbehave beside them; not in CI.

Honest clients, round robin by kind: one-shot run_shell calls (their
latency is the honest figure), run_python in the client's session
(its state checked on every call; a refusal for a bound is no failure), terraform_plan of the demo module,
and terraform_apply approved by approvalctl.  Misbehaving ones, on
runner.sock itself: a peer that sends PINGs and never reads, one that
sends half a frame and holds it, one that passes a TCP socket set to
linger on close, calls that print NUL bytes, and calls that fill /work
past runnerd.work_max.

Every 10 s it samples each daemon's (and runnerd's children's) RSS and
open descriptors, and once more at rest, 10 s after the clients have
stopped.  At the end: the first sample after the first fifth of the run
against the one at rest, which must be within 10 % (or 4 MiB, 8
descriptors) of it; p50/p99 of the one-shot calls; every request's trail with
exactly one end in the audit log; and `auditctl verify` of the chain.
Exits 1 when any of them fails.

usage: regress/soak/soak.py BUILD_DIR [MINUTES] [CLIENTS]     (as root)
"""
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "runnerd"))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from benchsuite import SOCKS, TOP, Suite, workdir  # noqa: E402
from bench_terraform import Mcp  # noqa: E402
from asframe import HDR, MSG_PING, VERSION, pack, send_frame  # noqa: E402
import linger  # noqa: E402

SAMPLE_S = 10
ENDS = ("tool.result", "tool.failed", "tool.denied")
# What an honest client may be told: a bound reached, or (two applies
# of one directory at once) terraform's own refusal of a stale plan.
EXPECTED = ("too many", "runnerd.sessions_per_user", "runnerd.sessions_max",
            "runnerd.sessions_per_client", "runnerd.inflight_per_user",
            "Saved plan is stale")


def expected(text):
    return any(e in text for e in EXPECTED)


class Run:
    def __init__(self, build, w, minutes):
        self.build, self.w = build, w
        self.until = time.monotonic() + minutes * 60
        self.lock = threading.Lock()
        self.latency = []       # ms of honest one-shot calls
        self.errors = []        # what an honest client saw go wrong
        self.counts = {}

    def going(self):
        return time.monotonic() < self.until

    def count(self, what):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def error(self, what):
        with self.lock:
            if len(self.errors) < 50:
                self.errors.append(what)


def call(m, name, args):
    r = m.rpc("tools/call", {"name": name, "arguments": args})
    return r, r["content"][0]["text"] if r.get("content") else ""


def in_session(m, name, args, sid):
    """A session tool call in session sid (None: a new session), and
    the session it ran in."""
    if sid is not None:
        args = dict(args, session_id=sid)
    r, text = call(m, name, args)
    return r, text, (r.get("structuredContent") or {}).get("session_id",
                                                             sid)


def honest(run, kind, i):
    m = Mcp(f"{run.build}/bin/mcpd", f"{run.w}/conf.yaml")
    n, sid = 0, None    # n: the session's calls that ran
    try:
        while run.going():
            if kind == "oneshot":
                # A session of its own each time, closed after: a
                # sandbox per call, claimed warm or started cold.
                t = time.monotonic()
                r, text, one = in_session(m, "run_shell",
                                          {"command": f"echo c{i}"}, None)
                if not r.get("isError"):
                    with run.lock:
                        run.latency.append((time.monotonic() - t) * 1000)
                elif not expected(text):
                    run.error(f"oneshot {i}: {text[:200]}")
                if one is not None:
                    call(m, "close_session", {"session_id": one})
            elif kind == "session":
                r, text, sid = in_session(m, "run_python",
                                          {"code": "n = 1" if n == 0 else
                                           "n += 1\nprint(n)"}, sid)
                if r.get("isError"):
                    if not expected(text):
                        run.error(f"session {i}: {text[:200]}")
                else:
                    n += 1
                    if n > 1 and str(n) not in text:
                        run.error(f"session {i}: state {text[:200]}")
            elif kind == "plan":
                r, text = call(m, "terraform_plan", {"working_dir": "demo"})
                if r.get("isError") and not expected(text):
                    run.error(f"plan {i}: {text[:200]}")
                time.sleep(5)
            elif kind == "apply":
                r = m.rpc("tools/call", {"name": "terraform_apply",
                                         "arguments": {"working_dir":
                                                       "demo"}})
                aid = (r.get("structuredContent") or {}).get("approval_id")
                if aid:
                    subprocess.run([f"{run.build}/bin/approvalctl", "-f",
                                    f"{run.w}/conf.yaml", "approve", aid],
                                   stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
                    r, text = call(m, "terraform_apply",
                                   {"working_dir": "demo",
                                    "approval_id": aid})
                    if r.get("isError") and not expected(text):
                        run.error(f"apply {i}: {text[:200]}")
                time.sleep(10)
            run.count(kind)
    except Exception as e:  # an honest client's end is a finding
        run.error(f"{kind} {i}: {type(e).__name__}: {e}")
    finally:
        m.close()


def nonreader(run, sock):
    while run.going():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(sock)
            s.settimeout(5)
            chunk = pack(MSG_PING, 1) * 4000
            while run.going():
                s.sendall(chunk)
        except OSError:
            run.count("nonreader dropped")
        finally:
            s.close()


def halfframe(run, sock):
    while run.going():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(sock)
            s.sendall(HDR.pack(MSG_PING, 1 << 20, 0, VERSION, 0, 1) +
                      b"x" * 1000)
            s.settimeout(30)
            s.recv(4096)
            run.count("halfframe dropped")
        except OSError:
            run.count("halfframe dropped")
        finally:
            s.close()


def lingerer(run, sock):
    while run.going():
        c, peer = linger.lingering()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(sock)
            send_frame(s, MSG_PING, 1, b"", fd=c.fileno())
            s.settimeout(5)
            s.recv(4096)
        except OSError:
            pass
        finally:
            s.close()
            c.close()
            peer.close()
        run.count("lingering socket passed")
        time.sleep(2)


def misbehaving_calls(run, cmd, kind):
    m = Mcp(f"{run.build}/bin/mcpd", f"{run.w}/conf.yaml")
    sid = None
    try:
        while run.going():
            _, _, sid = in_session(m, "run_shell", {"command": cmd}, sid)
            run.count(kind)
            time.sleep(1)
    except Exception as e:
        run.error(f"{kind}: {type(e).__name__}: {e}")
    finally:
        m.close()


def pids_of(daemons):
    out = {}
    for name, p in daemons:
        out[name] = p.pid
        try:
            kids = open(f"/proc/{p.pid}/task/{p.pid}/children").read()
        except OSError:
            kids = ""
        for k in kids.split():
            out[f"{name}'s child {k}"] = int(k)
    return out


def sample(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        return rss, len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, StopIteration):
        return None


def trails(audit):
    reqs, ends = set(), {}
    with open(audit) as f:
        for line in f:
            e = json.loads(line)
            rid, ev = e.get("request_id"), e.get("event")
            if ev == "tool.request":
                reqs.add(rid)
            elif ev in ENDS:
                ends[rid] = ends.get(rid, 0) + 1
    bad = [r for r in reqs if ends.get(r, 0) != 1]
    return len(reqs), bad


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    minutes = float(sys.argv[2]) if len(sys.argv) > 2 else 30
    clients = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    names = [d for d, _ in SOCKS]
    with workdir("soak") as w:
        shutil.copytree(f"{TOP}/terraform/demo", f"{w}/tf/demo")
        suite = Suite(build, w, runnerd="""\
  timeout: 60s
  work_max: 64M
  sessions_max: 32
  sessions_per_user: 32
  inflight_per_user: 256
""", brokerd="""\
  scopes:
    terraform: { engine: none, tools: [terraform_plan, terraform_apply] }
""")
        run = Run(build, w, minutes)
        sock = f"{w}/run/runner.sock"
        kinds = ["oneshot", "session", "oneshot", "plan", "session",
                 "oneshot", "apply", "session"]
        threads = [threading.Thread(target=honest,
                                    args=(run, kinds[i % len(kinds)], i))
                   for i in range(clients)]
        threads += [threading.Thread(target=f, args=(run, sock))
                    for f in (nonreader, halfframe, lingerer)]
        threads += [threading.Thread(target=misbehaving_calls, args=(
            run, c, k)) for c, k in (
            ("printf 'a\\0b\\0'; cat /proc/self/cmdline", "NUL output"),
            ("head -c 100M /dev/zero > /work/f; echo $?", "/work filled"))]
        daemons = [(n, p) for n, p in zip(names, suite.daemons)]
        samples = {}
        start = time.monotonic()
        for t in threads:
            t.daemon = True
            t.start()
        while run.going():
            for name, pid in pids_of(daemons).items():
                s = sample(pid)
                if s is not None:
                    samples.setdefault(name, []).append(
                        (time.monotonic() - start, *s))
            time.sleep(SAMPLE_S)
        for t in threads:
            t.join(120)
        # At rest: what a call holds while it runs (a sandbox's
        # descriptors, its buffers) is given back, or it leaked.
        time.sleep(SAMPLE_S)
        rest = {name: sample(pid) for name, pid in pids_of(daemons).items()}
        suite.close()
        total, bad = trails(f"{w}/var/audit.jsonl")
        verify = subprocess.run([f"{build}/bin/auditctl", "-f",
                                 f"{w}/conf.yaml", "verify"],
                                capture_output=True, text=True)
    failed = False
    print(f"soak: {minutes:g} min, {clients} clients; done: " +
          ", ".join(f"{k} {v}" for k, v in sorted(run.counts.items())))
    print("RSS (KiB) and descriptors, from the end of the first fifth to "
          "the end, at rest after the clients stopped:")
    for name, s in samples.items():
        s = [x for x in s if x[0] >= minutes * 60 / 5] or s
        first = s[0]
        last = (None, *rest[name]) if rest.get(name) else s[-1]
        peak = max([x[1] for x in s] + [last[1]])
        flat = last[1] <= max(first[1] * 1.1, first[1] + 4096) and \
            last[2] <= max(first[2] * 1.1, first[2] + 8)
        failed |= not flat
        print(f"  {name:28} RSS {first[1]:7} -> {last[1]:7} (peak {peak:7}),"
              f" fds {first[2]:4} -> {last[2]:4}"
              f"{'' if flat else '  NOT FLAT'}")
    lat = sorted(run.latency)
    if lat:
        print(f"honest one-shot run_shell: {len(lat)} calls, p50 "
              f"{statistics.median(lat):.0f} ms, p99 "
              f"{lat[int(len(lat) * 0.99) - 1]:.0f} ms")
    print(f"trails: {total} requests, {len(bad)} without exactly one end"
          f"{': ' + ', '.join(bad[:5]) if bad else ''}")
    print(f"auditctl verify: {verify.returncode} "
          f"{(verify.stdout + verify.stderr).strip()[:200]}")
    for e in run.errors:
        print("honest client:", e)
    failed |= bool(bad) or verify.returncode != 0 or bool(run.errors) or \
        not lat
    print("soak:", "FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
