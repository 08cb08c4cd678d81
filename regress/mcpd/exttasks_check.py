#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""2026-07-28 tasks (io.modelcontextprotocol/tasks) against the real
suite, over raw JSON-RPC on mcpd's stdio: the v2 SDK client has no
support for the extension.  For t_exttasks.sh.

Usage: exttasks_check.py BINDIR CONF SCENARIO

  approved   an approval-gated terraform_apply on working dir "a" as a
             task: working while it waits, applied after approvalctl
             approve, polled with tasks/get to its result
  restart    the same on "b", but runnerd is killed (kill -9) and
             started again while the task waits: t_exttasks.sh does
             that when this writes kill-runnerd, and writes
             runnerd-back; the task waits on and is applied after the
             approval.  A second task, on "a", cancelled while runnerd
             is away, is cancelled once it is back, and its approval,
             not withdrawn, stays pending
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_check import Fail, Mcpd, check, ext_call  # noqa: E402

bindir, conf, scenario = sys.argv[1:4]


def approvalctl(*args):
    subprocess.run([os.path.join(bindir, "approvalctl"), "-f", conf] +
                   list(args), check=True, stdout=subprocess.DEVNULL)


def approval_state(aid):
    return json.loads(subprocess.run(
        [os.path.join(bindir, "approvalctl"), "-f", conf, "-j", "show", aid],
        check=True, stdout=subprocess.PIPE).stdout)["state"]


def start_apply(m, wd):
    r = ext_call(m, "tools/call", {"name": "terraform_apply",
                                   "arguments": {"working_dir": wd}})["result"]
    check(r["resultType"] == "task" and r["status"] == "working",
          "CreateTaskResult %r" % r)
    return r["taskId"]


def poll(m, tid, until, timeout=120):
    """tasks/get at the task's pollIntervalMs until until(task) holds."""
    deadline = time.time() + timeout
    while True:
        r = ext_call(m, "tasks/get", {"taskId": tid}, timeout=30)["result"]
        if until(r):
            return r
        check(r["status"] == "working" and time.time() < deadline,
              "task %r" % r)
        time.sleep(r["pollIntervalMs"] / 1000)


def approval_of(task):
    """The approval a waiting task names in its statusMessage."""
    found = re.search(r"approvalctl show (apr-[0-9a-f]+)",
                      task.get("statusMessage", ""))
    return found.group(1) if found else None


def applied(m, tid):
    r = poll(m, tid, lambda t: t["status"] != "working")
    check(r["status"] == "completed" and r["result"]["isError"] is False and
          r["result"]["structuredContent"]["status"] == "applied",
          "applied %r" % r)


def s_approved():
    m = Mcpd(os.path.join(bindir, "mcpd"), conf)
    tid = start_apply(m, "a")
    waiting = poll(m, tid, approval_of)
    check(waiting["status"] == "working" and "inputRequests" not in waiting,
          "waiting for the approval %r" % waiting)
    time.sleep(1)
    again = ext_call(m, "tasks/get", {"taskId": tid})["result"]
    check(again["status"] == "working" and "result" not in again,
          "ran before the approval %r" % again)
    approvalctl("approve", approval_of(waiting))
    applied(m, tid)
    check(m.close() == 0, "exit status")


def told(name, timeout=60):
    """Waits for t_exttasks.sh to create the file name."""
    deadline = time.time() + timeout
    while not os.path.exists(name):
        check(time.time() < deadline, "t_exttasks.sh did not write " + name)
        time.sleep(0.05)


def s_restart():
    m = Mcpd(os.path.join(bindir, "mcpd"), conf)
    tid = start_apply(m, "b")
    aid = approval_of(poll(m, tid, approval_of))
    dropped = start_apply(m, "a")
    dropped_aid = approval_of(poll(m, dropped, approval_of))
    open("kill-runnerd", "w").close()
    lost = poll(m, tid, lambda t: "went away" in t["statusMessage"], 30)
    check(lost["status"] == "working" and approval_of(lost) == aid,
          "while runnerd is away %r" % lost)
    r = ext_call(m, "tasks/cancel", {"taskId": dropped})["result"]
    check(r["resultType"] == "complete", "cancel while away %r" % r)
    open("start-runnerd", "w").close()
    told("runnerd-back")
    back = poll(m, tid, lambda t: "runnerd is back" in t["statusMessage"],
                30)
    check(back["status"] == "working" and approval_of(back) == aid,
          "waiting again %r" % back)
    r = poll(m, dropped, lambda t: t["status"] != "working", 30)
    check(r["status"] == "cancelled" and "not withdrawn" in
          r["statusMessage"], "cancelled while runnerd was away %r" % r)
    check(approval_state(dropped_aid) == "pending",
          "the cancelled task's approval is %s" %
          approval_state(dropped_aid))
    approvalctl("approve", aid)
    applied(m, tid)
    check(m.close() == 0, "exit status")


SCENARIOS = {"approved": s_approved, "restart": s_restart}

try:
    SCENARIOS[scenario]()
except (Fail, KeyError, TypeError, subprocess.CalledProcessError) as e:
    sys.exit("FAIL %s: %s: %s" % (scenario, type(e).__name__, e))
print("ok %s" % scenario)
