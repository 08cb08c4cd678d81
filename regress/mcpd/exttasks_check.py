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
  reconnect  a task of an mcpd started with -k client.key (which it
             creates, mode 0600) waits on its approval; that mcpd is
             killed (kill -9), a new one with the same key takes the
             task over on tasks/get, one with another key is told there
             is no such task, and after approvalctl approve the new
             one has the applied result
  legacy     the same for a 2025-11-25 task, waited for with
             tasks/result
  dropped    runnerd keeps one task per client (tasks_per_client: 1):
             of two finished terraform_plan tasks the new mcpd gets the
             second, and the first is no longer kept, saying why
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_check import Fail, Mcpd, check, error_code, ext_call  # noqa: E402

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


def keyed(key, legacy=False):
    """An mcpd with the client key file key, initialized if legacy."""
    m = Mcpd(os.path.join(bindir, "mcpd"), conf, ["-k", key])
    if legacy:
        r = m.initialize()
        check(r["result"]["protocolVersion"] == "2025-11-25",
              "initialize %r" % r)
    return m


def answer(r):
    """The result of the answer r, which must not be an error."""
    check("result" in r, "an error %r" % r)
    return r["result"]


def killed(m):
    m.p.kill()
    m.p.wait()


def unknown(r, tid):
    check(error_code(r) == -32602 and "no such task for this client" in
          r["error"]["message"] and r["error"]["data"] == {"taskId": tid},
          "another key's tasks/get %r" % r)


def s_reconnect():
    m = keyed("client.key")
    tid = start_apply(m, "a")
    aid = approval_of(poll(m, tid, approval_of))
    check(os.stat("client.key").st_mode & 0o777 == 0o600, "key file mode")
    killed(m)
    m = keyed("client.key")
    back = answer(ext_call(m, "tasks/get", {"taskId": tid}))
    check(back["status"] == "working" and approval_of(back) == aid and
          "taken over" in back["statusMessage"], "taken over %r" % back)
    other = keyed("other.key")
    unknown(ext_call(other, "tasks/get", {"taskId": tid}), tid)
    check(other.close() == 0, "exit status")
    approvalctl("approve", aid)
    applied(m, tid)
    check(m.close() == 0, "exit status")


def legacy_poll(m, tid, until, timeout=120):
    deadline = time.time() + timeout
    while True:
        r = m.call("tasks/get", {"taskId": tid}, 30)["result"]
        if until(r):
            return r
        check(r["status"] == "working" and time.time() < deadline,
              "task %r" % r)
        time.sleep(r["pollInterval"] / 1000)


def s_legacy():
    m = keyed("client.key", True)
    r = m.call("tools/call", {"name": "terraform_apply", "task": {},
                              "arguments": {"working_dir": "b"}})
    tid = r["result"]["task"]["taskId"]
    waiting = legacy_poll(m, tid, approval_of)
    check(waiting["status"] == "input_required", "waiting %r" % waiting)
    killed(m)
    m = keyed("client.key", True)
    back = answer(m.call("tasks/get", {"taskId": tid}))
    check(back["status"] == "input_required" and
          approval_of(back) == approval_of(waiting) and
          "taken over" in back["statusMessage"], "taken over %r" % back)
    other = keyed("other.key", True)
    unknown(other.call("tasks/get", {"taskId": tid}), tid)
    check(other.close() == 0, "exit status")
    rid = m.request("tasks/result", {"taskId": tid})
    approvalctl("approve", approval_of(waiting))
    r = m.reply(rid, 120)["result"]
    check(r["isError"] is False and
          r["structuredContent"]["status"] == "applied" and
          r["_meta"]["io.modelcontextprotocol/related-task"] ==
          {"taskId": tid}, "applied %r" % r)
    check(m.close() == 0, "exit status")


def s_dropped():
    m = keyed("client.key")
    tids = []
    for wd in ["a", "b"]:
        r = ext_call(m, "tools/call", {"name": "terraform_plan",
                                       "arguments": {"working_dir": wd}})
        tids.append(r["result"]["taskId"])
        poll(m, tids[-1], lambda t: t["status"] != "working")
    killed(m)
    m = keyed("client.key")
    r = answer(ext_call(m, "tasks/get", {"taskId": tids[1]}))
    check(r["status"] == "completed" and "result" in r and
          r["result"]["isError"] is False,
          "the kept task %r" % r)
    r = ext_call(m, "tasks/get", {"taskId": tids[0]})
    check(error_code(r) == -32602 and "no longer kept" in
          r["error"]["message"] and "tasks_per_client" in
          r["error"]["message"], "the dropped task %r" % r)
    check(m.close() == 0, "exit status")


SCENARIOS = {"approved": s_approved, "restart": s_restart,
             "reconnect": s_reconnect, "legacy": s_legacy,
             "dropped": s_dropped}

try:
    SCENARIOS[scenario]()
except (Fail, KeyError, TypeError, subprocess.CalledProcessError) as e:
    sys.exit("FAIL %s: %s: %s" % (scenario, type(e).__name__, e))
print("ok %s" % scenario)
