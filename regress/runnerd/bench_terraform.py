#!/usr/bin/env python3
"""terraform_plan and terraform_apply through the whole suite (an MCP
client on mcpd's stdio, runnerd, gVisor, approvald, brokerd, auditd)
against bare terraform on the same module, in the same run.

Each round changes the replica count, so that every plan has a change
and every apply applies one.  The suite's apply is timed from the call
with the approval id to its result; the person's approval in between is
not part of it.  Prints the median of each, and their ratio.

usage: regress/runnerd/bench_terraform.py BUILD_DIR [ROUNDS]     (as root)
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchsuite import TOP, Suite, bench_args, workdir  # noqa: E402

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


def bare(module, rounds):
    run = lambda *a: subprocess.run(["terraform", *a, "-no-color"],
                                    cwd=module, env=TF_ENV, check=True,
                                    stdout=subprocess.DEVNULL)
    run("init", "-input=false")
    plans, applies = [], []
    for i in range(rounds):
        set_replicas(module, 4 + i % 2)
        plans.append(timed(lambda: (run("plan", "-out=p.tfplan"),
                                    run("show", "-json", "p.tfplan"))))
        applies.append(timed(lambda: run("apply", "p.tfplan")))
    return plans, applies


def suite(build, w, rounds):
    daemons = Suite(build, w, runnerd="  timeout: 120s\n", brokerd="""\
  scopes:
    terraform: { engine: none, tools: [terraform_plan, terraform_apply] }
""")
    conf, binp = daemons.conf, f"{build}/bin"
    mcp = Mcp(f"{binp}/mcpd", conf)
    plans, applies = [], []
    try:
        for i in range(rounds):
            set_replicas(f"{w}/tf/demo", 4 + i % 2)
            plans.append(timed(lambda: mcp.tool("terraform_plan",
                                                {"working_dir": "demo"})))
            pend = mcp.tool("terraform_apply", {"working_dir": "demo"})
            subprocess.run([f"{binp}/approvalctl", "-f", conf, "approve",
                            pend["approval_id"]], check=True,
                           stdout=subprocess.DEVNULL)
            applies.append(timed(lambda: mcp.tool(
                "terraform_apply", {"working_dir": "demo",
                                    "approval_id": pend["approval_id"]})))
    finally:
        mcp.close()
        daemons.close()
    return plans, applies


def main():
    build, rounds = bench_args(__doc__, 10)
    with workdir("bench-tf") as w:
        for where in ("bare", "tf"):
            shutil.copytree(f"{TOP}/terraform/demo", f"{w}/{where}/demo")
        bplan, bapply = bare(f"{w}/bare/demo", rounds)
        splan, sapply = suite(build, w, rounds)
    for name, b, s in (("plan", bplan, splan), ("apply", bapply, sapply)):
        mb, ms = statistics.median(b), statistics.median(s)
        print(f"terraform {name}: bare {mb:.0f} ms, through the suite "
              f"{ms:.0f} ms (median of {rounds}), ratio {ms / mb:.2f}")


if __name__ == "__main__":
    main()
