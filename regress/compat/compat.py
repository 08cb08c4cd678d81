#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""The differential suite (issue 31): what runs on this machine runs the
same in the sandbox.

  compat.py [options] BINDIR OUTDIR

CPython's own test modules (python-modules, Debian's
libpython3.11-testsuite) are run natively first, each as
"python3 -m test -q -W M" in a scratch directory, as uid 65534 with the
sandbox's environment, NATIVE_TIMEOUT seconds each; those that pass are
run the same way through mcpd, as an MCP client over stdio: in a session
(run_shell opens it, then the command with its session_id, then
close_session) and in a one-shot sandbox (a runnerd with sessions off).
Then the shell set (shellset.py): each command in a fresh scratch
directory on the host and in both sandboxes, compared by exit status and
output.  The exclusion file names what may fail, and why; a failure it
does not name fails the suite, an entry that no longer fails is reported
stale.  OUTDIR gets report.json and report.txt.  Exit 0: all held; 1: a
difference not excluded; 2: the suite could not start.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import regrtest  # noqa: E402
import shellset  # noqa: E402
from suite import Client, Suite, SuiteError  # noqa: E402

NOBODY = 65534
MODES = ("session", "oneshot")


def sandbox_env(home, tmp):
    """The environment runnerd(8) gives a sandbox, with the host's
    stand-ins for HOME (empty, not writable) and TMPDIR."""
    return {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0", "HOME": home, "LANG": "C.UTF-8",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "TF_CLI_CONFIG_FILE": "/dev/null", "TMPDIR": tmp,
            "XDG_CACHE_HOME": home, "XDG_CONFIG_HOME": home,
            "XDG_DATA_HOME": home}


class Host:
    """Runs a command on the host as uid 65534 in a fresh scratch
    directory under base, as the sandbox runs it in /work."""

    def __init__(self, base):
        self.base = base
        self.home = os.path.join(base, "home")
        os.makedirs(self.home, exist_ok=True)
        os.chmod(self.home, 0o555)
        os.chmod(base, 0o755)
        self.n = 0

    def run(self, name, command, timeout):
        self.n += 1
        scratch = os.path.join(self.base, "%03d-%s" % (self.n, name))
        tmp = scratch + ".tmp"
        for d in (scratch, tmp):
            os.mkdir(d)
            os.chown(d, NOBODY, NOBODY)
        t0 = time.monotonic()
        p = subprocess.Popen(
            ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
             "--clear-groups", "--", "/bin/sh", "-c", command],
            cwd=scratch, env=sandbox_env(self.home, tmp),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
            status = "exited"
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            status = "deadline"
        return {"status": status, "exit_code": p.returncode,
                "stdout": out.decode("utf-8", "replace"),
                "stderr": err.decode("utf-8", "replace"),
                "seconds": round(time.monotonic() - t0, 1),
                "scratch": scratch, "home": self.home}


class Sandbox:
    """Runs a command through mcpd: in a session of its own or one-shot."""

    def __init__(self, mode, suite):
        self.mode, self.suite = mode, suite
        self.client = Client(suite)
        self.session = None

    def open(self):
        if self.mode == "session":
            r = self.client.call("run_shell", {"command": "true"}, 120)
            sid = r.get("structuredContent", {}).get("session_id")
            if r.get("isError") or not sid:
                raise SuiteError("no session: %s" % json.dumps(r)[:500])
            self.session = sid

    def close(self):
        if self.session:
            self.client.call("close_session", {"session_id": self.session},
                             60)
            self.session = None

    def run(self, command, timeout=None):
        args = {"command": command}
        if self.session:
            args["session_id"] = self.session
        t0 = time.monotonic()
        r = self.client.call("run_shell", args,
                             (timeout or self.suite.timeout) + 90)
        sc = r.get("structuredContent", {})
        res = {"status": sc.get("status", "exited"),
               "exit_code": sc.get("exit_code"),
               "stdout": sc.get("stdout", ""), "stderr": sc.get("stderr", ""),
               "seconds": round(time.monotonic() - t0, 1)}
        if r.get("isError") and "exit_code" not in sc:
            res["status"] = sc.get("status", "failed")
            res["stderr"] += "\n[tool error] " + " ".join(
                c.get("text", "") for c in r.get("content", []))
        for flag in ("timed_out", "memory_limit", "pids_limit", "truncated"):
            if sc.get(flag):
                res[flag] = True
        return res

    def shutdown(self):
        self.client.close()


def read_modules(path, quick):
    mods = []
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words and (not quick or "quick" in words[1:]):
                mods.append(words[0])
    return mods


def module_command(mod, ignores=(), matches=(), test_timeout=None):
    # -W: the output of a failing test, for its name and error.
    # --timeout (a whole module's, in regrtest): just before the call's
    # deadline regrtest dumps the stack, which names the test running.
    cmd = "python3 -m test -q -W " + mod
    if test_timeout:
        cmd += " --timeout %d" % test_timeout
    for p in ignores:
        cmd += " -i '%s'" % p
    for p in matches:
        cmd += " -m '%s'" % p
    return cmd


def summarise(res):
    """The module's outcome from a run's result."""
    out = res["stdout"] + "\n" + res["stderr"]
    if res["status"] != "exited":
        v = "failed"
    else:
        v = regrtest.verdict(res["exit_code"], out)
    d = {"result": v, "exit_code": res["exit_code"],
         "seconds": res["seconds"]}
    if res["status"] != "exited":
        d["status"] = res["status"]
    if v == "failed":
        test, err = regrtest.first_failure(out)
        if res["status"] == "deadline":
            err = "deadline (%s)" % err
        elif res["status"] != "exited":
            err = "%s: %s" % (res["status"], err)
        d["first_failure"] = test
        d["error"] = err
        d["tail"] = out[-3000:]
    for flag in ("memory_limit", "pids_limit"):
        if res.get(flag):
            d[flag] = True
    return d


class Run:
    def __init__(self, a):
        self.a = a
        self.top = os.path.abspath(a.srcdir)
        self.out = os.path.abspath(a.outdir)
        os.makedirs(self.out, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix="compat-", dir="/tmp")
        # The host's runs are uid 65534's, in scratch directories here.
        os.chmod(self.work, 0o755)
        self.test_timeout = max(10, a.timeout - 10)
        self.excl = [] if a.no_exclusions else \
            regrtest.read_exclusions(a.exclude)
        self.suites = {}
        self.sandboxes = {}
        self.report = {
            "date": datetime.date.today().isoformat(),
            "host": {"kernel": platform.release(),
                     "python": subprocess.run(
                         ["/usr/bin/python3", "--version"],
                         capture_output=True, text=True).stdout.strip(),
                     "runsc": self.runsc_version()},
            "config": {"timeout": a.timeout, "native_timeout":
                       a.native_timeout, "memory": a.memory or "default",
                       "modes": a.modes, "backend": a.backend,
                       "exclusions": not a.no_exclusions},
            "python": [], "shell": [], "warnings": [], "failures": []}

    def runsc_version(self):
        try:
            return subprocess.run(["runsc", "--version"], capture_output=True,
                                  text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            return None

    def save(self):
        with open(os.path.join(self.out, "report.json"), "w") as f:
            json.dump(self.report, f, indent=1)

    def start(self):
        extra = ""
        if self.a.backend == "kubernetes":
            extra = self.a.backend_conf
        for mode in self.a.modes:
            d = os.path.join(self.work, mode)
            s = Suite(self.top, self.a.bindir, d, sessions=(mode == "session"),
                      timeout=self.a.timeout, memory=self.a.memory,
                      backend_extra=extra)
            self.suites[mode] = s.start()
            self.sandboxes[mode] = Sandbox(mode, s)

    def stop(self):
        for sb in self.sandboxes.values():
            try:
                sb.shutdown()
            except Exception:   # noqa: BLE001 -- stopping whatever is left
                pass
        for s in self.suites.values():
            s.stop()

    def excluded(self, mod):
        whole = [e for e in self.excl if e.name == mod]
        tests = [e for e in self.excl if e.module == mod and not e.whole]
        return (whole[0] if whole else None), tests

    # -- CPython's modules --

    def python(self):
        mods = self.a.module or read_modules(self.a.modules, self.a.quick)
        native_from = {}
        if self.a.native_from:
            with open(self.a.native_from) as f:
                native_from = {m["module"]: m["native"]
                               for m in json.load(f)["python"]}
        host = Host(os.path.join(self.work, "host-python"))
        for mod in mods:
            if mod in native_from:
                nat = native_from[mod]
            else:
                nat = summarise(host.run(mod, module_command(mod),
                                         self.a.native_timeout))
            entry = {"module": mod, "native": nat}
            self.report["python"].append(entry)
            self.log("%-28s native %-8s %5.1fs" % (mod, nat["result"],
                                                 nat["seconds"]))
            if nat["result"] != "passed":
                self.save()
                continue
            whole, tests = self.excluded(mod)
            if whole:
                entry["excluded"] = whole.as_dict()
            if tests:
                entry["excluded_tests"] = [e.as_dict() for e in tests]
            for mode in self.a.modes:
                entry[mode] = self.sandbox_module(mode, mod, whole, tests)
            self.save()

    def sandbox_module(self, mode, mod, whole, tests):
        sb = self.sandboxes[mode]
        sb.open()
        try:
            res = summarise(sb.run(module_command(
                mod, [e.pattern() for e in tests],
                test_timeout=self.test_timeout)))
            self.log("%-28s %-7s %-8s %5.1fs %s" % (
                mod, mode, res["result"], res["seconds"],
                res.get("first_failure") or res.get("error") or ""))
            if res["result"] == "failed":
                if whole:
                    res["verdict"] = "excluded"
                else:
                    res["verdict"] = "FAIL"
                    self.report["failures"].append(
                        "%s (%s): %s: %s" % (mod, mode,
                                             res.get("first_failure"),
                                             res.get("error")))
            else:
                res["verdict"] = "ok"
                if whole:
                    self.warn("stale exclusion %s (line %d): passes in %s" % (
                        whole.name, whole.lineno, mode))
            # Each excluded test alone: does it still fail?  A minute at
            # most, since most of those that fail so hang.
            for e in tests if not self.a.no_stale else ():
                r = summarise(sb.run(module_command(mod, matches=[
                    e.pattern()], test_timeout=min(self.test_timeout, 60))))
                if r["result"] in ("passed", "no-tests"):
                    self.warn("stale exclusion %s (line %d): %s in %s" % (
                        e.name, e.lineno, r["result"], mode))
                    res.setdefault("stale", []).append(e.name)
            return res
        finally:
            sb.close()

    # -- the shell set --

    def shell(self):
        host = Host(os.path.join(self.work, "host-shell"))
        names = set(self.a.shell_only or [])
        for mode in self.a.modes:
            self.sandboxes[mode].open()
        try:
            for name, norms, script in shellset.SET:
                if names and name not in names:
                    continue
                self.shell_one(host, name, norms, script)
                self.save()
        finally:
            for mode in self.a.modes:
                self.sandboxes[mode].close()

    def shell_one(self, host, name, norms, script):
        h = host.run(name, script, self.a.shell_timeout)
        entry = {"name": name, "script": script, "normalised": norms,
                 "host": self.shell_result(h, norms, h["scratch"],
                                           h["home"])}
        for mode in self.a.modes:
            scratch = "/work/c-" + name
            # mkdir fails if the name was used: each command's is fresh.
            r = self.sandboxes[mode].run(
                "mkdir %s && cd %s || exit 99\n%s" % (scratch, scratch,
                                                      script),
                self.a.shell_timeout)
            s = self.shell_result(r, norms, scratch, "/run/home")
            diffs = [k for k in ("status", "exit_code", "stdout", "stderr")
                     if s[k] != entry["host"][k]]
            s["same"] = not diffs
            ex = [e for e in self.excl if e.name == "shell:" + name]
            if diffs:
                s["differs"] = diffs
                if ex:
                    s["verdict"] = "excluded"
                    entry["excluded"] = ex[0].as_dict()
                else:
                    self.report["failures"].append("shell %s (%s): %s differ"
                                                   % (name, mode,
                                                      ", ".join(diffs)))
            elif ex:
                self.warn("stale exclusion %s (line %d): same in %s" % (
                    ex[0].name, ex[0].lineno, mode))
            entry[mode] = s
            self.log("shell %-18s %-7s %s %s" % (
                name, mode, "same" if not diffs else "DIFFERS",
                "" if not diffs else "(%s) host %r / sandbox %r" % (
                    ", ".join(diffs),
                    (entry["host"]["exit_code"],
                     entry["host"]["stderr"][:120]),
                    (s["exit_code"], s["stderr"][:120]))))
        self.report["shell"].append(entry)

    @staticmethod
    def shell_result(r, norms, scratch, home):
        return {"status": r["status"], "exit_code": r["exit_code"],
                "stdout": shellset.normalise(r["stdout"], norms, scratch,
                                             home),
                "stderr": shellset.normalise(r["stderr"], norms, scratch,
                                             home),
                "seconds": r["seconds"]}

    def log(self, line):
        print(line, flush=True)

    def warn(self, w):
        self.report["warnings"].append(w)
        print("warning: " + w, flush=True)

    def text_report(self):
        rep = self.report
        lines = ["differential suite, %s; %s; runsc %s; host kernel %s" % (
            rep["date"], rep["host"]["python"], rep["host"]["runsc"],
            rep["host"]["kernel"]),
            "config: %s" % json.dumps(rep["config"]), ""]
        py = rep["python"]
        if py:
            nat = [m for m in py if m["native"]["result"] == "passed"]
            lines.append("CPython modules: %d candidates, %d pass natively "
                         "(within %d s each)" % (len(py), len(nat),
                                                  self.a.native_timeout))
            for mode in self.a.modes:
                ok = [m for m in nat if m.get(mode, {}).get("result") ==
                      "passed"]
                lines.append("  %-8s %d/%d pass" % (mode, len(ok), len(nat)))
            whole = [m for m in nat if "excluded" in m]
            lines.append("  excluded whole: %d (%.1f %% of the natively "
                         "passing)%s" % (len(whole), 100.0 * len(whole) /
                                         max(1, len(nat)),
                                         "".join(" " + m["module"]
                                                 for m in whole)))
            lines.append("")
            hdr = "%-28s %-16s" % ("module", "native")
            for mode in self.a.modes:
                hdr += " %-16s" % mode
            lines.append(hdr + " first failure")
            for m in py:
                n = m["native"]
                row = "%-28s %-16s" % (m["module"], "%s %.0fs" % (
                    n["result"], n["seconds"]))
                why = []
                for mode in self.a.modes:
                    s = m.get(mode)
                    if s is None:
                        row += " %-16s" % "-"
                        continue
                    row += " %-16s" % ("%s %.0fs" % (
                        s["result"] + ("(x)" if s.get("verdict") ==
                                       "excluded" else ""), s["seconds"]))
                    if s["result"] == "failed":
                        why.append("%s: %s: %s" % (mode, s.get(
                            "first_failure"), s.get("error")))
                lines.append(row + (" " + why[0] if why else ""))
                for w in why[1:]:
                    lines.append(" " * 28 + " " + w)
            lines.append("")
        if rep["shell"]:
            lines.append("shell set: %d commands" % len(rep["shell"]))
            for mode in self.a.modes:
                same = [c for c in rep["shell"] if c.get(mode, {}).get("same")]
                lines.append("  %-8s %d/%d same as the host" % (
                    mode, len(same), len(rep["shell"])))
            for c in rep["shell"]:
                row = "  %-18s norm=%-22s" % (c["name"], ",".join(
                    c["normalised"]) or "-")
                for mode in self.a.modes:
                    s = c[mode]
                    row += " %s:%s" % (mode, "same" if s["same"] else
                                       "DIFFERS(" + ",".join(s["differs"]) +
                                       ")")
                lines.append(row)
                for mode in self.a.modes:
                    s = c[mode]
                    if not s["same"]:
                        lines.append("      %s: host exit %s %r; sandbox "
                                     "exit %s %r" % (
                                         mode, c["host"]["exit_code"],
                                         c["host"]["stderr"][:200],
                                         s["exit_code"], s["stderr"][:200]))
            lines.append("")
        for w in rep["warnings"]:
            lines.append("warning: " + w)
        for f in rep["failures"]:
            lines.append("FAIL: " + f)
        lines.append("result: " + ("FAIL" if rep["failures"] else "ok"))
        with open(os.path.join(self.out, "report.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("bindir")
    p.add_argument("outdir")
    p.add_argument("--srcdir", default=os.path.join(HERE, "..", ".."),
                   help="the source tree (session-agent.py, etc/policy.yaml)")
    p.add_argument("--modules", default=os.path.join(HERE, "python-modules"))
    p.add_argument("--module", action="append",
                   help="this module only (repeatable)")
    p.add_argument("--quick", action="store_true",
                   help="only the modules marked quick")
    p.add_argument("--exclude", default=os.path.join(HERE, "exclude"))
    p.add_argument("--no-exclusions", action="store_true",
                   help="run everything, excluded tests too")
    p.add_argument("--no-stale", action="store_true",
                   help="do not rerun excluded tests to find stale entries")
    p.add_argument("--no-python", action="store_true")
    p.add_argument("--no-shell", action="store_true")
    p.add_argument("--shell-only", action="append",
                   help="this shell command only (repeatable)")
    p.add_argument("--modes", default="session,oneshot")
    p.add_argument("--memory", help="runnerd's memory (default: runnerd's)")
    p.add_argument("--timeout", type=int, default=120,
                   help="runnerd's timeout, seconds")
    p.add_argument("--native-timeout", type=int, default=30)
    p.add_argument("--shell-timeout", type=int, default=110)
    p.add_argument("--native-from",
                   help="take the native results from this report.json")
    p.add_argument("--keep", action="store_true",
                   help="keep the work directory (sandboxes' logs)")
    p.add_argument("--backend", default="gvisor",
                   choices=("gvisor", "kubernetes"))
    p.add_argument("--backend-conf", default="",
                   help="runnerd and kubernetes lines for that backend")
    a = p.parse_args()
    a.bindir = os.path.abspath(a.bindir)
    a.modes = [m for m in a.modes.split(",") if m]
    if any(m not in MODES for m in a.modes):
        p.error("modes are " + ", ".join(MODES))
    if os.getuid() != 0:
        print("compat: needs root (runnerd, and the host runs as uid 65534)",
              file=sys.stderr)
        return 2
    for prog in ("setpriv",):
        if shutil.which(prog) is None:
            print("compat: no " + prog, file=sys.stderr)
            return 2
    # SIGTERM (kyua's timeout, a person) still stops what was started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
    # A shell's background job starts with SIGINT and SIGQUIT ignored,
    # and the native runs would inherit that (test_threading's
    # interrupt_main then raises nothing): they get what a terminal's
    # command gets, as the sandbox's processes do.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)
    r = Run(a)
    code = 0
    try:
        r.start()
        if not a.no_python:
            r.python()
        if not a.no_shell:
            r.shell()
    except (SuiteError, OSError) as e:
        r.report["failures"].append("the suite: %s" % e)
        print("compat: %s" % e, file=sys.stderr)
        code = 2
    finally:
        r.stop()
        r.save()
        print(r.text_report())
        if not a.keep:
            shutil.rmtree(r.work, ignore_errors=True)
        else:
            print("work directory kept: " + r.work)
    if code == 0 and r.report["failures"]:
        code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
