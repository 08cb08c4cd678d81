#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""brokerd's added latency per issue+revoke, against the Vault double.

  python3 regress/brokerd/bench.py BINDIR [ROUNDS]

Starts the Vault double, the real auditd and brokerd in a temporary
directory, then times ROUNDS (default 200) of

  via brokerd: CRED_ISSUE (the memfd read back) + CRED_REVOKE on broker.sock
  direct:      POST kubernetes/creds/<role> + PUT sys/leases/revoke to the
               double over one kept-alive TLS connection, as brokerd does

and reports both and their difference: what brokerd adds per call (scope
checks, journal fsyncs, two audit round trips with auditd's fsyncs, the
memfd).  Then, with the double answering each request after SLOW_S
(its "slow" fault), it sends CONCURRENT issues at once on one
connection, then their revokes, and reports the wall time: served one
at a time it would be CONCURRENT * 2 * SLOW_S.  Not a kyua test:
figures depend on the machine.
"""

import http.client
import json
import os
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from asframe import (MSG_CRED_ISSUE, MSG_CRED_ISSUED,  # noqa: E402
                     MSG_CRED_REVOKE, MSG_CRED_REVOKED, Conn)

TOKEN = "hvs.bench-token"
CONCURRENT = 8
SLOW_S = 0.2


def wait_for(path):
    for _ in range(400):
        if os.path.exists(path):
            return
        time.sleep(0.025)
    sys.exit("%s did not appear" % path)


def call(conn, mtype, reqid, payload):
    """The reply, the credential memfd read back as runnerd would."""
    rtype, _, body, fds = conn.call(mtype, payload, reqid)
    for fd in fds:
        os.pread(fd, 4096, 0)
        os.close(fd)
    if rtype not in (MSG_CRED_ISSUED, MSG_CRED_REVOKED):
        sys.exit("brokerd answered %d: %r" % (rtype, body))
    return json.loads(body)


def via_brokerd(sockpath, rounds):
    times = []
    conn = Conn(sockpath, fds=True)
    for i in range(rounds):
        t = time.perf_counter()
        r = call(conn, MSG_CRED_ISSUE, i + 1, {"tool": "k8s_get_pod_status",
                 "arguments": {"namespace": "demo"}})
        call(conn, MSG_CRED_REVOKE, i + 1, {"lease_id": r["lease_id"]})
        times.append(time.perf_counter() - t)
    conn.close()
    return times


def pipelined(conn, mtype, payloads):
    """Sends every request, then reads the answers in whatever order."""
    for i, p in enumerate(payloads):
        conn.send(mtype, json.dumps(p).encode(), i + 1)
    answers = {}
    while len(answers) < len(payloads):
        rtype, reqid, body, fds = conn.recv()
        for fd in fds:
            os.close(fd)
        if rtype not in (MSG_CRED_ISSUED, MSG_CRED_REVOKED):
            sys.exit("brokerd answered %d: %r" % (rtype, body))
        answers[reqid] = json.loads(body)
    return [answers[i + 1] for i in range(len(payloads))]


def concurrent(sockpath):
    """Wall time of CONCURRENT issues, then their revokes, at once."""
    conn = Conn(sockpath, fds=True)
    t = time.perf_counter()
    issued = pipelined(conn, MSG_CRED_ISSUE, [
        {"tool": "k8s_get_pod_status", "arguments": {"namespace": "demo"}}
        for _ in range(CONCURRENT)])
    pipelined(conn, MSG_CRED_REVOKE, [{"lease_id": r["lease_id"]}
                                      for r in issued])
    conn.close()
    return time.perf_counter() - t


def direct(port, ca, rounds):
    ctx = ssl.create_default_context(cafile=ca)
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx)
    hdrs = {"X-Vault-Token": TOKEN, "Content-Type": "application/json"}
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        conn.request("POST", "/v1/kubernetes/creds/pod-reader", json.dumps(
            {"kubernetes_namespace": "demo", "ttl": "600s"}), hdrs)
        lease = json.loads(conn.getresponse().read())["lease_id"]
        conn.request("PUT", "/v1/sys/leases/revoke",
                     json.dumps({"lease_id": lease}), hdrs)
        conn.getresponse().read()
        times.append(time.perf_counter() - t)
    return times


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    bindir = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    w = tempfile.mkdtemp(prefix="asbench.")
    procs = []
    try:
        os.chdir(w)
        os.makedirs("run")
        os.makedirs("dbl")
        subprocess.run(["sh", os.path.join(HERE, "mkcerts.sh"), "."],
                       check=True)
        with open("token", "w") as f:
            f.write(TOKEN + "\n")
        log = open("bench.log", "w")
        procs.append(subprocess.Popen(
            [sys.executable, os.path.join(HERE, "vault_double.py"), "--cert",
             "server.pem", "--key", "server.key", "--token-file", "token",
             "--state", "dbl"], stdout=log, stderr=log))
        wait_for("dbl/port")
        port = int(open("dbl/port").read())
        uid = os.getuid()
        with open("conf.yaml", "w") as f:
            f.write("""runtime_dir: {w}/run
auditd:
  user: ""
  peers: {{ users: [{uid}] }}
  log: {w}/audit.jsonl
  key: {w}/ckpt/checkpoint.key
  pubkey: {w}/audit-checkpoint.pub
  checkpoint_file: {w}/ckpt/checkpoint.json
brokerd:
  user: ""
  peers: {{ users: [{uid}] }}
  journal: {w}/leases.journal
  vault:
    addr: https://127.0.0.1:{port}
    ca_file: {w}/ca.pem
    token_file: {w}/token
  scopes:
    pod-reader:
      engine: kubernetes
      tools: [k8s_get_pod_status]
      mount: kubernetes
      role: pod-reader
      namespaces: [demo]
      target_arg: namespace
""".format(w=w, uid=uid, port=port))
        for d, sock in (("auditd", "audit.sock"), ("brokerd", "broker.sock")):
            procs.append(subprocess.Popen(
                [os.path.join(bindir, d), "-d", "-f", w + "/conf.yaml"],
                stdout=log, stderr=log))
            wait_for("run/" + sock)
        time.sleep(0.3)
        via_brokerd(w + "/run/broker.sock", 10)    # warm up both paths
        direct(port, "ca.pem", 10)
        b = via_brokerd(w + "/run/broker.sock", rounds)
        d = direct(port, "ca.pem", rounds)
        mb, md = statistics.median(b), statistics.median(d)
        print("rounds: %d (issue + revoke each)" % rounds)
        print("via brokerd: median %.2f ms, mean %.2f ms, p95 %.2f ms" % (
            mb * 1e3, statistics.mean(b) * 1e3,
            sorted(b)[int(rounds * 0.95) - 1] * 1e3))
        print("direct:      median %.2f ms, mean %.2f ms, p95 %.2f ms" % (
            md * 1e3, statistics.mean(d) * 1e3,
            sorted(d)[int(rounds * 0.95) - 1] * 1e3))
        print("brokerd adds: %.2f ms per issue+revoke (median)" % (
            (mb - md) * 1e3))
        with open("dbl/fault", "w") as f:
            f.write("slow %g\n" % SLOW_S)
        w_s = concurrent(w + "/run/broker.sock")
        print("%d issue+revoke at once, Vault taking %d ms each: %.0f ms "
              "(one at a time: %.0f ms)" % (CONCURRENT, SLOW_S * 1e3,
                                            w_s * 1e3,
                                            CONCURRENT * 2 * SLOW_S * 1e3))
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    main()
