# SPDX-License-Identifier: ISC
"""The real suite for the differential (regress/compat): auditd,
approvald, brokerd and runnerd on sockets in a directory of their own,
and mcpd over stdio as the MCP client's end, as an agent reaches it.

Suite(top, bindir, workdir, sessions=True, ...) writes conf.yaml and
policy.yaml there, starts the daemons and waits for their sockets;
anything that does not start raises SuiteError, which the callers turn
into a failure (never a skip).  Client(suite) is an MCP client of a
fresh mcpd on that configuration.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "mcpd"))
sys.path.insert(0, os.path.join(HERE, "..", "runnerd"))
import benchsuite  # noqa: E402
from mcp_check import Fail, Mcpd  # noqa: E402

SOCKETS = {"auditd": "audit.sock", "approvald": "approval.sock",
           "brokerd": "broker.sock", "runnerd": "runner.sock"}


class SuiteError(RuntimeError):
    pass


class Suite:
    def __init__(self, top, bindir, workdir, sessions=True, timeout=120,
                 memory=None, pids=None, backend_extra=""):
        self.top, self.bindir, self.dir = top, bindir, workdir
        self.procs = []
        os.makedirs(os.path.join(workdir, "var"), exist_ok=True)
        self.run = os.path.join(workdir, "run")
        os.makedirs(self.run, exist_ok=True)
        runsc = shutil.which("runsc")
        if runsc is None and "backend: kubernetes" not in backend_extra:
            raise SuiteError("no runsc on PATH: the sandbox cannot start")
        extra = ""
        if memory:
            extra += "  memory: %s\n" % memory
        if pids:
            extra += "  pids: %s\n" % pids
        w = workdir
        # Sessions off makes run_shell one-shot (runnerd(8) sessions_max);
        # that sandbox asks brokerd, so run_shell has a scope of engine none.
        conf = benchsuite.config(w, top=top, mcpd="  call_timeout: %ds\n" % (
            timeout + 120), runnerd="""\
  timeout: {timeout}s
  sessions_max: {smax}
  sessions_per_user: 4
  warm_pool: {pool}
{extra}{backend_extra}""".format(timeout=timeout, smax=4 if sessions else 0,
                                 pool=1 if sessions else 0, extra=extra,
                                 backend_extra=backend_extra),
            brokerd="""\
  scopes:
    code: { engine: none, tools: [run_python, run_shell, write_file,
      read_file, reset, close_session] }
""")
        self.conf = os.path.join(w, "conf.yaml")
        with open(self.conf, "w") as f:
            f.write(conf)
        # etc/policy.yaml allows run_shell and the session tools (low tier).
        shutil.copy(os.path.join(top, "etc", "policy.yaml"),
                    os.path.join(w, "policy.yaml"))
        self.timeout = timeout

    def start(self):
        for d in ("auditd", "approvald", "brokerd", "runnerd"):
            log = open(os.path.join(self.dir, d + ".log"), "ab")
            p = subprocess.Popen([os.path.join(self.bindir, d), "-d", "-v",
                                  "-f", self.conf], stdout=log, stderr=log,
                                 stdin=subprocess.DEVNULL)
            self.procs.append((d, p))
            sock = os.path.join(self.run, SOCKETS[d])
            deadline = time.time() + 15
            while not os.path.exists(sock):
                if p.poll() is not None or time.time() > deadline:
                    raise SuiteError("%s did not start: %s" % (
                        d, self.tail(d + ".log")))
                time.sleep(0.05)
        return self

    def tail(self, name, n=2000):
        try:
            with open(os.path.join(self.dir, name), "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError as e:
            return str(e)

    def stop(self):
        """SIGTERM to each daemon this suite started, runnerd first so that
        its launcher removes the sandboxes; then SIGKILL what is left."""
        for d, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []


class Client:
    """An MCP client of a fresh mcpd (stdio, JSON-RPC 2.0) on the suite."""

    def __init__(self, suite):
        self.suite = suite
        cwd = os.getcwd()
        os.chdir(suite.dir)         # mcpd.log goes there
        try:
            self.m = Mcpd(os.path.join(suite.bindir, "mcpd"), suite.conf)
            r = self.m.initialize()
        finally:
            os.chdir(cwd)
        if "result" not in r:
            raise SuiteError("mcpd did not initialize: %r" % r)

    def call(self, tool, args, timeout):
        """The tool's result (result of tools/call), or raises SuiteError."""
        try:
            r = self.m.call("tools/call", {"name": tool, "arguments": args},
                            timeout=timeout)
        except Fail as e:
            raise SuiteError("%s: %s; mcpd: %s" % (
                tool, e, self.suite.tail("mcpd.log", 500)))
        # Progress and other notifications are not kept between calls.
        self.m.pending = []
        if "result" not in r:
            raise SuiteError("%s: %s" % (tool, json.dumps(r)[:500]))
        return r["result"]

    def close(self):
        try:
            self.m.close()
        except Fail:
            pass
