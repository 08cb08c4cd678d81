#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Sessions beside slow credentials (a benchmark, not a test).

  bench_vault.py BUILD_DIR [CALLS]                          (as root)

The whole suite on gVisor, brokerd against the Vault double, run twice:
the double answering at once, then taking 200 ms for each credential
(VAULT_DOUBLE_DELAY_MS).  In each run, eight clients each call
run_python("1+1") CALLS times (default 200) in a session of their own
while two clients make one-shot k8s_get_pod_status calls, each with a
pod-reader credential from the double, back to back; then 64 clients
make one such call each, all at once (runnerd.queue_wait 10m: they all
wait their turn for runnerd.max_calls's 8 sandboxes).  Prints the
sessions' p50 of both runs and their ratio, and the 64 clients' calls
per second.

A session needs no credential, so a slow Vault must not slow it: the
script exits 1 when the ratio is over 1.2.  kubectl in the sandbox
finds no API server (the scope names an address nobody serves); the
call is what is measured, not the cluster.
"""
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchsuite import Suite, bench_args, workdir  # noqa: E402
from runcall import call_tool  # noqa: E402
from sesscall import Client  # noqa: E402

DELAY_MS = 200
SESSIONS = 8
ONESHOTS = 2
CLIENTS = 64
BOUND = 1.2
POD_STATUS = ("k8s_get_pod_status", {"namespace": "demo-app"})


def brokerd_lines(w, port):
    return f"""\
  vault: {{ addr: "https://127.0.0.1:{port}", ca_file: {w}/ca.pem,
    token_file: {w}/token }}
  scopes:
    pod-reader: {{ engine: kubernetes, tools: [k8s_get_pod_status],
      mount: kubernetes, role: pod-reader, namespaces: [demo-app],
      target_arg: namespace, kube_server: "https://127.0.0.1:9" }}
"""


def vault(w, delay_ms):
    """The Vault double on w/dbl, its port once it listens."""
    os.makedirs(f"{w}/dbl")
    p = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "..", "brokerd",
                                      "vault_double.py"),
         "--cert", f"{w}/server.pem", "--key", f"{w}/server.key",
         "--token-file", f"{w}/token", "--state", f"{w}/dbl"],
        env=dict(os.environ, VAULT_DOUBLE_DELAY_MS=str(delay_ms)),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    portfile = f"{w}/dbl/port"
    for _ in range(200):
        if os.path.exists(portfile) and os.path.getsize(portfile):
            with open(portfile) as f:
                return p, int(f.read())
        time.sleep(0.05)
    p.kill()
    sys.exit("bench: the Vault double did not start")


class Refused(Exception):
    pass


def oneshot(sock):
    """One credentialed call; runnerd's refusals are not measurements."""
    r = call_tool(sock, *POD_STATUS)
    st = (r.get("structuredContent") or {}).get("status")
    if st in ("failed", "denied", "unrecorded") or "protocol_error" in r:
        raise Refused("k8s_get_pod_status: %s" % r)


def together(*runs):
    """Runs each (function, args) in a thread of its own, until all have
    returned; then raises the first exception any of them raised."""
    errors = []

    def guarded(fn, args):
        try:
            fn(*args)
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=r) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def sessions_p50(sock, calls):
    """p50 ms of run_python("1+1") in SESSIONS sessions, one-shot calls
    beside them; and how many of those ran meanwhile."""
    clients = [Client(sock) for _ in range(SESSIONS)]
    sids = [c.call("run_python", code="1")["structuredContent"]["session_id"]
            for c in clients]
    stop, counts, lat = threading.Event(), [], []
    left, lock = [SESSIONS], threading.Lock()

    def alongside():
        while not stop.is_set():
            oneshot(sock)
            counts.append(1)

    def session(c, sid):
        try:
            for _ in range(calls):
                t0 = time.perf_counter()
                r = c.call("run_python", code="1+1", session_id=sid)
                lat.append((time.perf_counter() - t0) * 1000)
                if r["structuredContent"].get("stdout") != "2\n":
                    raise Refused("run_python: %s" % r)
        finally:
            with lock:
                left[0] -= 1
                if left[0] == 0:
                    stop.set()

    try:
        together(*[(alongside, ())] * ONESHOTS,
                 *[(session, cs) for cs in zip(clients, sids)])
    finally:
        for c in clients:
            c.close()
    return statistics.median(lat), len(counts)


def per_second(sock):
    """Calls per second of CLIENTS clients calling at once."""
    t0 = time.monotonic()
    together(*[(oneshot, (sock,))] * CLIENTS)
    return CLIENTS / (time.monotonic() - t0)


def issued(w):
    with open(f"{w}/var/audit.jsonl") as f:
        return sum('"event":"credential.issued"' in line for line in f)


def run(build, top, delay_ms, calls):
    w = f"{top}/delay-{delay_ms}"
    os.makedirs(w)
    for f in ("ca.pem", "server.pem", "server.key", "token"):
        shutil.copy(f"{top}/{f}", w)
    dbl, port = vault(w, delay_ms)
    suite = None
    try:
        # The 64 clients' calls wait their turn, however long.
        suite = Suite(build, w, runnerd="  sessions_per_user: %d\n"
                      "  queue_wait: 10m\n  inflight_per_user: %d\n" % (
                          SESSIONS, 2 * CLIENTS),
                      brokerd=brokerd_lines(w, port))
        oneshot(suite.sock)         # warm up the sandbox path
        p50, n = sessions_p50(suite.sock, calls)
        cps = per_second(suite.sock)
        want = 1 + n + CLIENTS
        if issued(w) != want:
            sys.exit("bench: %d credentials for %d calls" % (issued(w),
                                                               want))
    finally:
        if suite is not None:
            suite.close()
        dbl.terminate()
        dbl.wait()
    print("Vault +%d ms per issue: %d sessions' run_python('1+1') p50 %.2f "
          "ms beside %d one-shot calls; %d clients: %.1f calls/s" % (
              delay_ms, SESSIONS, p50, n, CLIENTS, cps))
    return p50


def main():
    build, calls = bench_args(__doc__, 200)
    with workdir("bench-vault") as top:
        subprocess.run(["sh", os.path.join(HERE, "..", "brokerd",
                                           "mkcerts.sh"), top], check=True)
        with open(f"{top}/token", "w") as f:
            f.write("hvs.bench-token\n")
        try:
            base = run(build, top, 0, calls)
            slow = run(build, top, DELAY_MS, calls)
        except Refused as e:
            sys.exit("bench: %s" % e)
    ratio = slow / base
    print("sessions' p50 with the delay / without: %.2f ms / %.2f ms = "
          "%.2f (bound %.1f)" % (slow, base, ratio, BOUND))
    if ratio > BOUND:
        sys.exit("bench: a slow Vault slowed the sessions %.2fx" % ratio)


if __name__ == "__main__":
    main()
