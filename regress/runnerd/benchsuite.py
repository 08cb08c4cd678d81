# SPDX-License-Identifier: ISC
"""The whole suite but mcpd for runnerd's benchmarks (not a test):
auditd, approvald, brokerd and runnerd in the foreground on W/run,
state in W/var, etc/policy.yaml with its terraform_root at W/tf.

  s = Suite(build, w, runnerd="  timeout: 120s\\n", brokerd="  scopes: ...")
  ... s.sock (runner.sock), s.conf ...
  s.close()

runnerd and brokerd take extra lines (indented two spaces), and so does
mcpd in config().  Also the
benchmarks' command line and their temporary directory.
"""
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SOCKS = (("auditd", "audit"), ("approvald", "approval"),
         ("brokerd", "broker"), ("runnerd", "runner"))


def config(w, runnerd="", brokerd="", mcpd="", top=TOP):
    """top: the source tree, for the session agent."""
    uid = os.getuid()
    return f"""runtime_dir: {w}/run
mcpd:
  user: ""
{mcpd}runnerd:
  user: ""
  peers: {{ users: [{uid}] }}
  state_dir: {w}/var/runner
  session_agent: {top}/sandbox-init/session-agent.py
{runnerd}approvald:
  user: ""
  peers: {{ users: [{uid}] }}
  operators: {{ users: [{uid}] }}
  self_approval: root
  policy: {w}/policy.yaml
  database: {w}/var/approvals.db
brokerd:
  user: ""
  peers: {{ users: [{uid}] }}
  journal: {w}/var/leases.journal
{brokerd}auditd:
  user: ""
  peers: {{ users: [{uid}] }}
  readers: {{ users: [{uid}] }}
  log: {w}/var/audit.jsonl
  key: {w}/var/ckpt/checkpoint.key
  pubkey: {w}/var/audit-checkpoint.pub
  checkpoint_file: {w}/var/ckpt/checkpoint.json
"""


class Suite:
    def __init__(self, build, w, runnerd="", brokerd=""):
        os.makedirs(f"{w}/run")
        os.makedirs(f"{w}/var")
        self.conf, self.sock = f"{w}/conf.yaml", f"{w}/run/runner.sock"
        with open(self.conf, "w") as f:
            f.write(config(w, runnerd, brokerd))
        with open(f"{TOP}/etc/policy.yaml") as f:
            policy = f.read().replace("terraform_root: /var/lib/"
                                      "agent-sandbox/terraform",
                                      f"terraform_root: {w}/tf")
        with open(f"{w}/policy.yaml", "w") as f:
            f.write(policy)
        self.daemons = []
        for d, sock in SOCKS:
            self.daemons.append(subprocess.Popen(
                [f"{build}/bin/{d}", "-d", "-f", self.conf],
                stderr=subprocess.DEVNULL))
            for _ in range(200):
                if os.path.exists(f"{w}/run/{sock}.sock"):
                    break
                time.sleep(0.05)

    def close(self):
        for p in self.daemons:
            p.terminate()
        for p in self.daemons:
            p.wait()


def bench_args(usage, default):
    """BUILD_DIR and the count after it (default), or exits with usage."""
    if len(sys.argv) < 2:
        sys.exit(usage)
    return os.path.abspath(sys.argv[1]), \
        int(sys.argv[2]) if len(sys.argv) > 2 else default


@contextlib.contextmanager
def workdir(name):
    """A directory of the benchmark's own in /var/tmp, removed after."""
    w = tempfile.mkdtemp(prefix=name + ".", dir="/var/tmp")
    try:
        yield w
    finally:
        shutil.rmtree(w, ignore_errors=True)
