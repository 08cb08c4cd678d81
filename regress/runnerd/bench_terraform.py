#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""terraform_plan and terraform_apply through the whole suite (an MCP
client on mcpd's stdio, runnerd, gVisor, approvald, brokerd, auditd),
with runnerd.terraform_pool off and on, against `runsc do terraform`
and bare terraform on the same already-initialised module, in the same
rounds: each round runs bare terraform's and `runsc do`'s plan just
before the suite's, and their applies just before the suite's, so that
the ratios compare the same minutes of a machine whose speed drifts;
then each daemon's private memory when idle.

Each round changes the replica count, so that every plan has a change
and every apply applies one.  The suite's apply is timed from the call
with the approval id to its result; the person's approval in between is
not part of it.  `runsc do` (root, --network=none) runs the plan, and
the apply of a plan made outside it, on the host's root through
gVisor's overlay, so what it writes is dropped.  The suite gets the
CPUs `runsc do` has (cpu_percent: all of them; runnerd's default is
one).  Its first call of the module runs terraform init and builds the
init cache's entry; the later ones take it from there.  Prints the
median of each, and the ratios.

Private memory is Private_Clean + Private_Dirty of
/proc/PID/smaps_rollup (proc(5)), for each daemon fresh (started, no
call yet) and idle after the rounds with the pool on; runnerd's
launcher is its child, shown beside it.

usage: regress/runnerd/bench_terraform.py BUILD_DIR [ROUNDS]     (as root)
"""
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchsuite import SOCKS, TOP, Suite, bench_args, workdir  # noqa: E402

TF_ENV = dict(os.environ, TF_IN_AUTOMATION="1", TF_INPUT="0",
              CHECKPOINT_DISABLE="1", TF_CLI_CONFIG_FILE="/dev/null")


class Mcp:
    """A minimal MCP client over mcpd's stdio: one request at a time."""

    def __init__(self, mcpd, conf):
        self.p = subprocess.Popen([mcpd, "-f", conf], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.n = 0
        self.rpc("initialize", {"protocolVersion": "2025-11-25",
                                "capabilities": {},
                                "clientInfo": {"name": "bench",
                                               "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method":
                                       "notifications/initialized"}) + "\n")

    def rpc(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n,
                                       "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        reply = json.loads(self.p.stdout.readline())
        if "error" in reply:
            sys.exit(f"bench: {method}: {reply['error']}")
        return reply["result"]

    def tool(self, name, args):
        r = self.rpc("tools/call", {"name": name, "arguments": args})
        if r.get("isError"):
            sys.exit(f"bench: {name}: {r['content'][0]['text']}")
        return r["structuredContent"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def set_replicas(module, n):
    with open(os.path.join(module, "replicas.auto.tfvars"), "w") as f:
        f.write(f"replicas = {n}\n")


def timed(fn):
    t = time.monotonic()
    fn()
    return (time.monotonic() - t) * 1000


def tf(module, command, *args):
    subprocess.run(["terraform", command, "-no-color", *args], cwd=module,
                   env=TF_ENV, check=True, stdout=subprocess.DEVNULL)


class Bare:
    """terraform itself, on its own copy of the module."""

    def __init__(self, module):
        self.module = module
        tf(module, "init", "-input=false")

    def plan(self):
        return timed(lambda: (tf(self.module, "plan", "-input=false",
                                 "-out=p.tfplan"),
                              tf(self.module, "show", "-json", "p.tfplan")))

    def apply(self):
        return timed(lambda: tf(self.module, "apply", "-input=false",
                                "p.tfplan"))


class RunscDo(Bare):
    """The same commands in a fresh gVisor sandbox each."""
    RUN = ["runsc", "--network=none", "do", "--", "/usr/bin/env",
           "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1",
           "TF_CLI_CONFIG_FILE=/dev/null", "terraform"]

    def plan(self):
        t = timed(lambda: subprocess.run(
            self.RUN + ["plan", "-input=false", "-no-color",
                        "-out=p.tfplan"],
            cwd=self.module, check=True, stdout=subprocess.DEVNULL))
        # The plan it applies is made outside, unchanged by the overlay.
        tf(self.module, "plan", "-input=false", "-out=p.tfplan")
        return t

    def apply(self):
        return timed(lambda: subprocess.run(
            self.RUN + ["apply", "-input=false", "-no-color", "p.tfplan"],
            cwd=self.module, check=True, stdout=subprocess.DEVNULL))


def when(event):
    """An audit event's time, in ms since the epoch."""
    t = datetime.datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000


def phases(audit):
    """Each terraform_plan's phases from the audit log, in ms: before the
    sandbox (policy, credential), in it (claim or start, copy-in, init,
    plan), and after it (render, copy-out, result)."""
    calls, start = [], {}
    with open(audit) as f:
        for line in f:
            e = json.loads(line)
            name = e["event"]
            if name == "tool.request" and \
                    e["fields"].get("tool") != "terraform_plan":
                continue
            if name in ("tool.request", "sandbox.started"):
                start[name] = when(e)
            elif name == "sandbox.completed" and "tool.request" in start:
                ran = e["fields"].get("duration_ms", 0)
                calls.append((start["sandbox.started"] -
                              start["tool.request"], ran,
                              when(e) - start["sandbox.started"] - ran))
            elif name == "tool.result":
                start.clear()
    return calls


def private_kib(pid):
    """Private_Clean + Private_Dirty of pid, in KiB."""
    kib = 0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                kib += int(line.split()[1])
    return kib


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


def memory(daemons, mcp):
    """{name: KiB} of each daemon, runnerd's launcher and mcpd."""
    m = {"mcpd": private_kib(mcp.p.pid)}
    for (name, _), p in zip(SOCKS, daemons.daemons):
        m[name] = private_kib(p.pid)
        if name == "runnerd":
            # Its child: the sandbox launcher (helper.c).
            for kid in children(p.pid):
                m[f"runnerd's child {kid}"] = private_kib(kid)
    return m


def suite(build, w, rounds, pool, baselines):
    """The suite's rounds, each baseline's command just before the
    suite's, so that the ratios compare the same minutes of a machine
    whose speed drifts; a pool's refill after a call is over (a second)
    before the next baseline starts."""
    # The CPUs runsc do has: all of them (runnerd's default is one).
    daemons = Suite(build, w, runnerd=f"""\
  timeout: 120s
  warm_pool: 0
  terraform_pool: {pool}
  cpu_percent: {100 * os.cpu_count()}
""", brokerd="""\
  scopes:
    terraform: { engine: none, tools: [terraform_plan, terraform_apply] }
""")
    conf, binp = daemons.conf, f"{build}/bin"
    mcp = Mcp(f"{binp}/mcpd", conf)
    times = {name: ([], []) for name in [*baselines, "suite"]}
    # The pool's first sandboxes start with the daemons.
    time.sleep(2)
    fresh = memory(daemons, mcp)
    try:
        for i in range(rounds):
            set_replicas(f"{w}/tf/demo", 4 + i % 2)
            for name, b in baselines.items():
                set_replicas(b.module, 4 + i % 2)
                times[name][0].append(b.plan())
            times["suite"][0].append(timed(lambda: mcp.tool(
                "terraform_plan", {"working_dir": "demo"})))
            pend = mcp.tool("terraform_apply", {"working_dir": "demo"})
            subprocess.run([f"{binp}/approvalctl", "-f", conf, "approve",
                            pend["approval_id"]], check=True,
                           stdout=subprocess.DEVNULL)
            time.sleep(1)
            for name, b in baselines.items():
                times[name][1].append(b.apply())
            times["suite"][1].append(timed(lambda: mcp.tool(
                "terraform_apply", {"working_dir": "demo",
                                    "approval_id": pend["approval_id"]})))
            time.sleep(1)
        idle = memory(daemons, mcp)
    finally:
        mcp.close()
        daemons.close()
    return times, fresh, idle, phases(f"{w}/var/audit.jsonl")


def main():
    build, rounds = bench_args(__doc__, 10)
    runs = {}
    with workdir("bench-tf") as w:
        for where in ("bare", "runsc", "off/tf", "on/tf"):
            shutil.copytree(f"{TOP}/terraform/demo", f"{w}/{where}/demo")
        baselines = {"bare": Bare(f"{w}/bare/demo"),
                     "runsc do": RunscDo(f"{w}/runsc/demo")}
        runs["pool off"], _, _, cold = suite(build, f"{w}/off", rounds, 0,
                                             baselines)
        runs["pool on"], fresh, idle, warm = suite(build, f"{w}/on",
                                                   rounds, 2, baselines)
    for i, name in enumerate(("plan", "apply")):
        print(f"terraform {name} (median of {rounds} rounds, each baseline "
              "just before the suite):")
        for k, times in runs.items():
            m = {n: statistics.median(v[i]) for n, v in times.items()}
            print(f"  {k}: the suite {m['suite']:.0f} ms, runsc do "
                  f"{m['runsc do']:.0f} ms, bare {m['bare']:.0f} ms: "
                  f"{m['suite'] / m['runsc do']:.2f}x runsc do (target "
                  f"{1.25 if k == 'pool off' else 1.0:.2f}), "
                  f"{m['suite'] / m['bare']:.2f}x bare")
    print("where a terraform_plan's time goes (median ms: before the "
          "sandbox / "
          "in it / after it, render included):")
    for k, calls in (("pool off", cold), ("pool on", warm)):
        print(f"  {k}: " + " / ".join(
            f"{statistics.median(c[i] for c in calls):.0f}"
            for i in range(3)))
    print("private memory (Private_Clean + Private_Dirty), fresh / idle "
          "after the rounds (target < 2 MiB, approvald < 4 MiB):")
    for k in fresh:
        print(f"  {k:24} {fresh[k] / 1024:5.2f} MiB / "
              f"{idle.get(k, 0) / 1024:5.2f} MiB")


if __name__ == "__main__":
    main()
