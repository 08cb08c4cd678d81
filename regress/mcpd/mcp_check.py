#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Drives a real mcpd over stdio, line by line, for t_mcpd.sh.

Usage: mcp_check.py MCPD_BINARY CONF SCENARIO
Each scenario starts its own mcpd (against fake_runnerd.py, already
serving the configuration's runner.sock), asserts, and exits 0 only if
everything held; what went wrong is printed on stderr.
"""
import json
import os
import re
import select
import subprocess
import sys
import time

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


class Mcpd:
    def __init__(self, binary, conf, args=()):
        self.p = subprocess.Popen([binary, "-v", "-f", conf] + list(args),
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=open("mcpd.log", "ab"))
        self.buf = b""
        self.pending = []
        self.next_id = 1000

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, msg):
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def request(self, method, params=None, rid=None):
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def read(self, timeout=5.0):
        """The next message mcpd writes, or None after timeout."""
        if self.pending:
            return self.pending.pop(0)
        return self.read_stream(timeout)

    def read_stream(self, timeout):
        deadline = time.time() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def reply(self, rid, timeout=5.0):
        """The response to rid; notifications seen meanwhile are kept."""
        deadline = time.time() + timeout
        for i, m in enumerate(self.pending):
            if m.get("id") == rid and "method" not in m:
                return self.pending.pop(i)
        while time.time() < deadline:
            m = self.read_stream(deadline - time.time())
            if m is None:
                break
            if "method" not in m and m.get("id") == rid:
                return m
            self.pending.append(m)
        raise Fail("no reply to id %r" % (rid,))

    def call(self, method, params=None, timeout=5.0):
        return self.reply(self.request(method, params), timeout)

    def initialize(self, version="2025-11-25"):
        r = self.call("initialize", {"protocolVersion": version,
                                     "capabilities": {},
                                     "clientInfo": {"name": "mcp_check",
                                                    "version": "1"}})
        self.notify("notifications/initialized")
        return r

    def alive(self):
        r = self.call("ping")
        check(r.get("result") == {}, "ping after that: %r" % r)

    def close(self, timeout=5.0):
        self.p.stdin.close()
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise Fail("mcpd did not exit on stdin EOF")


def error_code(r):
    return r.get("error", {}).get("code")


def text_of(r):
    return " ".join(c.get("text", "") for c in r["result"]["content"])


def forwarded():
    try:
        with open("calls.jsonl") as f:
            return [json.loads(l) for l in f if l.strip()]
    except FileNotFoundError:
        return []


def wait_for(pred, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def err_reply(m, line):
    """Sends one raw line; returns the error response it drew."""
    m.send_raw(line + b"\n")
    r = m.read()
    check(r is not None, "no answer to %r" % line[:60])
    return r


def s_malformed(m):
    """Each bad line gets the right error, and the server keeps answering."""
    m.initialize()
    cases = [
        (b"garbage", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,', -32700, None),
        (b'{"jsonrpc":"2.0","id":"\xc0\xaf","method":"ping"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"p\xff"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":123456789012345678901234567890,'
         b'"method":"ping"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' +
         b"[" * 100000 + b"]" * 100000 + b"}}", -32700, None),
        (b'{"jsonrpc":"1.0","id":7,"method":"ping"}', -32600, 7),
        (b'{"id":"s","method":"ping"}', -32600, "s"),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":{},"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600, None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, None),
        (b"42", -32600, None),
        (b'{"jsonrpc":"2.0","id":8,"method":"no/such"}', -32601, 8),
        (b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":[]}',
         -32602, 9),
    ]
    for line, code, rid in cases:
        r = err_reply(m, line)
        # 2025-11-25 leaves out an id it could not read (not "id": null).
        check(error_code(r) == code and r.get("id") == rid and
              (rid is not None or "id" not in r),
              "%r -> %r (want %d, id %r)" % (line[:60], r, code, rid))
        m.alive()
    # Ids of the valid types are echoed exactly, big integers included.
    for rid in ["", "x" * 200, 0, -1, 9007199254740993]:
        r = m.reply(m.request("ping", rid=rid))
        check(r.get("id") == rid and r.get("result") == {}, "id %r" % rid)
    # A request without id is a notification: no reply at all.
    m.send_raw(b'{"jsonrpc":"2.0","method":"tools/list"}\n')
    r = m.call("ping")
    check(not m.pending, "a notification was answered: %r" % m.pending)
    # 10 MiB on one line: refused, discarded, and the server goes on.
    big = b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"' + \
        b"a" * (10 << 20) + b'"}}'
    r = err_reply(m, big)
    check(error_code(r) == -32600 and "id" not in r and
          "longer than" in r["error"]["message"], "10 MiB line: %r" % r)
    r = m.read(0.5)
    check(r is None, "more than one reply to the long line: %r" % r)
    m.alive()
    check(m.close() == 0, "mcpd exit status")


def s_lifecycle(binary, conf):
    for asked, want in [("2025-11-25", "2025-11-25"),
                        ("2025-06-18", "2025-06-18"),
                        ("2025-03-26", "2025-03-26"),
                        ("2024-11-05", "2024-11-05"),
                        ("2026-07-28", "2025-11-25"),
                        ("1999-01-01", "2025-11-25")]:
        m = Mcpd(binary, conf)
        r = m.call("ping")
        check(r.get("result") == {}, "ping before initialize: %r" % r)
        r = m.call("tools/list")
        check(error_code(r) == -32600, "tools/list before init: %r" % r)
        r = m.initialize(asked)
        res = r["result"]
        check(res["protocolVersion"] == want, "%s -> %r" % (asked, res))
        check("tools" in res["capabilities"] and
              res["capabilities"]["logging"] == {}, "capabilities %r" % res)
        check(res["serverInfo"]["name"] == "agent-sandbox-mcpd", "info")
        check("resultType" not in res, "legacy result with resultType")
        r = m.initialize(asked)
        check(error_code(r) == -32600, "second initialize: %r" % r)
        r = m.call("logging/setLevel", {"level": "debug"})
        check(r.get("result") == {}, "logging/setLevel: %r" % r)
        check(m.close() == 0, "exit status on EOF")
    m = Mcpd(binary, conf)
    r = m.call("initialize", {"capabilities": {}})
    check(error_code(r) == -32602, "initialize without version: %r" % r)
    m.close()


def s_modern(m):
    """2026-07-28 requests: no handshake, _meta on each, resultType."""
    r = m.call("server/discover", {"_meta": META})["result"]
    check(r["supportedVersions"] == [MODERN] and r["resultType"] ==
          "complete" and "tools" in r["capabilities"] and
          r["capabilities"]["logging"] == {} and server_info(r) and
          "serverInfo" not in r and
          "ttlMs" in r and "cacheScope" in r, "discover: %r" % r)
    r = m.call("tools/list", {"_meta": META})["result"]
    check(r["resultType"] == "complete" and len(r["tools"]) >= 9 and
          "ttlMs" in r and server_info(r), "modern tools/list: %r" % r.keys())
    r = m.call("tools/call", {"_meta": META, "name": "k8s_get_pod_status",
                              "arguments": {"namespace": "web"}})["result"]
    check(r["resultType"] == "complete" and not r["isError"] and
          server_info(r) and
          r["structuredContent"]["namespace"] == "web", "call: %r" % r)
    # initialize is no method of 2026-07-28 (basic/versioning).
    r = m.call("initialize", {"_meta": META, "protocolVersion": MODERN,
                              "capabilities": {},
                              "clientInfo": {"name": "x", "version": "1"}})
    check(error_code(r) == -32601, "initialize with modern _meta: %r" % r)
    r = m.call("tools/list")
    check(error_code(r) == -32600, "that initialize began a session: %r" % r)
    r = m.call("logging/setLevel", {"_meta": META, "level": "info"})
    check(error_code(r) == -32601, "modern logging/setLevel: %r" % r)
    bad = dict(META)
    bad["io.modelcontextprotocol/protocolVersion"] = "2030-01-01"
    r = m.call("tools/list", {"_meta": bad})
    check(error_code(r) == -32022 and r["error"]["data"] ==
          {"supported": [MODERN], "requested": "2030-01-01"}, "-32022 %r" % r)
    r = m.call("server/discover", {"_meta": bad})
    check(error_code(r) == -32022, "discover, bad version: %r" % r)
    nocaps = {"io.modelcontextprotocol/protocolVersion": MODERN}
    r = m.call("tools/list", {"_meta": nocaps})
    check(error_code(r) == -32602, "no clientCapabilities: %r" % r)
    r = m.call("ping", {"_meta": META})
    check(error_code(r) == -32601, "modern ping: %r" % r)
    r = m.call("server/discover")
    check(error_code(r) == -32602, "discover without _meta: %r" % r)
    r = m.call("tools/list")
    check(error_code(r) == -32600, "legacy request, no handshake: %r" % r)
    check(m.close() == 0, "exit status")


def server_info(result):
    """The 2026-07-28 identity in result._meta (SEP-2575)."""
    info = result.get("_meta", {}).get("io.modelcontextprotocol/serverInfo")
    return (isinstance(info, dict) and info.get("name") ==
            "agent-sandbox-mcpd" and isinstance(info.get("version"), str))


def ping(rid):
    return {"jsonrpc": "2.0", "id": rid, "method": "ping"}


def shell(rid, command):
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "run_shell",
                       "arguments": {"command": command}}}


NOTE = {"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "none", "progress": 1}}


def batch_refused(binary, conf, version, null_id):
    m = Mcpd(binary, conf)
    m.initialize(version)
    for batch in ([ping(1), ping(2)], []):
        m.send(batch)
        r = m.read()
        check(isinstance(r, dict) and error_code(r) == -32600 and
              ("id" in r) == null_id and r.get("id") is None,
              "%s batch %r -> %r" % (version, batch, r))
    check(m.read(0.3) is None, "more than one answer")
    m.alive()
    check(m.close() == 0, "exit status")


def s_batch(binary, conf):
    """Batches: answered under 2025-03-26 only (MUST accept there)."""
    batch_refused(binary, conf, "2025-06-18", True)
    batch_refused(binary, conf, "2025-11-25", False)
    m = Mcpd(binary, conf)
    m.send([ping(1)])
    r = m.read()
    check(error_code(r) == -32600, "batch before initialize: %r" % r)
    m.initialize("2025-03-26")
    # Mixed: the array answers the requests only, once the slow call
    # (answered last) is done, with the notification left out.
    m.send([shell(10, "sleep 0.5"), NOTE, ping(11), shell(12, "echo"),
            {"jsonrpc": "2.0", "id": 13, "method": "no/such"}, 42])
    r = m.read(10)
    check(isinstance(r, list) and len(r) == 5, "mixed batch: %r" % r)
    byid = {x.get("id"): x for x in r}
    check(byid[11]["result"] == {} and
          byid[12]["result"]["isError"] is False and
          byid[10]["result"]["structuredContent"]["exit_code"] == 0 and
          error_code(byid[13]) == -32601 and error_code(byid[None]) ==
          -32600 and "id" in byid[None], "mixed batch: %r" % r)
    check(m.read(0.3) is None, "more than one answer to a batch")
    m.send([NOTE, NOTE])
    check(m.read(0.5) is None, "a batch of notifications was answered")
    m.send([])
    r = m.read()
    check(isinstance(r, dict) and error_code(r) == -32600 and
          r.get("id") is None, "empty batch: %r" % r)
    # A lone request reusing a waiting member's id is answered alone.
    m.send([shell(30, "sleep 0.5"), ping(31)])
    check(wait_for(lambda: len([e for e in forwarded()
                                if e["type"] == "call"]) == 3),
          "slow member not forwarded")
    m.send(shell(30, "echo"))
    r = m.read()
    check(isinstance(r, dict) and r.get("id") == 30 and
          error_code(r) == -32600, "lone request, a member's id: %r" % r)
    r = m.read()
    check(isinstance(r, list) and sorted(x["id"] for x in r) == [30, 31] and
          "result" in r[0] and "result" in r[1], "its batch: %r" % r)
    # A cancelled member is never answered; the batch still is.
    m.send([shell(20, "sleep 5"), ping(21)])
    check(wait_for(lambda: len([e for e in forwarded()
                                if e["type"] == "call"]) == 4),
          "slow member not forwarded")
    m.notify("notifications/cancelled", {"requestId": 20})
    r = m.read()
    check(isinstance(r, list) and [x["id"] for x in r] == [21],
          "batch with a cancelled member: %r" % r)
    # Cancelled in its own batch: the rest is answered, at once.
    m.send([shell(40, "sleep 5"), {"jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 40}}, ping(41)])
    r = m.read()
    check(isinstance(r, list) and [x["id"] for x in r] == [41],
          "batch cancelling its own member: %r" % r)
    m.alive()
    check(m.close() == 0, "exit status")


LEVELS = ["debug", "info", "notice", "warning", "error", "critical",
          "alert", "emergency"]


def logged(m, rid, params=None, timeout=5.0):
    """A call's reply and the notifications/message sent before it."""
    r = m.reply(rid, timeout)
    msgs = [n["params"] for n in m.pending
            if n.get("method") == "notifications/message"]
    m.pending.clear()
    return r, msgs


def s_logging(m):
    """logging/setLevel and per-request logLevel filter the call trail."""
    m.initialize()
    r = m.call("tools/call", {"name": "run_shell",
                              "arguments": {"command": "echo"}})
    check(not m.pending, "log messages before any level: %r" % m.pending)
    check(forwarded()[-1]["call"]["log"] is False, "log asked for")
    for bad in ["verbose", "INFO", "", 3, None]:
        r = m.call("logging/setLevel", {"level": bad})
        check(error_code(r) == -32602 and
              r["error"]["data"]["levels"] == LEVELS,
              "level %r: %r" % (bad, r))
    r = m.call("logging/setLevel", {})
    check(error_code(r) == -32602, "no level: %r" % r)
    for level in LEVELS:
        check(m.call("logging/setLevel", {"level": level}).get("result") ==
              {}, "setLevel %s" % level)
        for cmd, floor in (("echo", "info"), ("deny", "warning"),
                           ("fail", "error")):
            rid = m.request("tools/call", {"name": "run_shell",
                                           "arguments": {"command": cmd}})
            r, msgs = logged(m, rid)
            check(forwarded()[-1]["call"]["log"] is True, "log not asked")
            shown = [x for x in msgs
                     if LEVELS.index(x["level"]) >= LEVELS.index(level)]
            check(msgs == shown, "%s: below the level: %r" % (level, msgs))
            check(all(x["logger"] == "agent-sandbox" and
                      x["data"]["request_id"].startswith("req-") and
                      isinstance(x["data"]["fields"], dict) for x in msgs),
                  "message shape: %r" % msgs)
            events = [x["data"]["event"] for x in msgs]
            if LEVELS.index(level) <= LEVELS.index("info"):
                check(events[0] == "tool.request" and
                      events[-1] in ("tool.result", "tool.denied"),
                      "%s %s: trail %r" % (level, cmd, events))
            if LEVELS.index(level) <= LEVELS.index(floor):
                check(any(x["level"] == floor for x in msgs),
                      "%s %s: no %s message: %r" % (level, cmd, floor, msgs))
            if LEVELS.index(level) > LEVELS.index("error"):
                check(msgs == [], "%s: %r" % (level, msgs))
    check(m.close() == 0, "exit status")


def s_logging_modern(m):
    """2026-07-28: a request's own _meta logLevel, none without it."""
    def call(meta, cmd):
        return m.request("tools/call", {"_meta": meta, "name": "run_shell",
                                        "arguments": {"command": cmd}})

    r, msgs = logged(m, call(META, "echo"))
    check(msgs == [] and forwarded()[-1]["call"]["log"] is False,
          "messages without logLevel: %r" % msgs)
    for bad in ["loud", 7, ""]:
        meta = dict(META, **{"io.modelcontextprotocol/logLevel": bad})
        r = m.call("tools/list", {"_meta": meta})
        check(error_code(r) == -32602, "logLevel %r: %r" % (bad, r))
    meta = dict(META, **{"io.modelcontextprotocol/logLevel": "warning"})
    r, msgs = logged(m, call(meta, "deny"))
    check([x["data"]["event"] for x in msgs] ==
          ["guardrail.decision", "tool.denied"] and
          all(x["level"] == "warning" for x in msgs), "warning: %r" % msgs)
    meta = dict(META, **{"io.modelcontextprotocol/logLevel": "debug"})
    r, msgs = logged(m, call(meta, "echo"))
    check(len(msgs) == 6 and server_info(r["result"]), "debug: %r" % msgs)
    check(m.close() == 0, "exit status")


def s_calls(m):
    m.initialize()
    tools = {t["name"]: t for t in m.call("tools/list")["result"]["tools"]}
    check(set(tools) >= {"k8s_get_pod_status", "terraform_plan",
                         "terraform_apply", "run_shell"}, "tools %r" % tools)
    for t in tools.values():
        check(t["inputSchema"]["type"] == "object" and
              "outputSchema" in t and "annotations" in t, "tool %r" % t)
    check(tools["terraform_apply"]["annotations"]["destructiveHint"] is True,
          "apply annotations")
    r = m.call("tools/call", {"name": "k8s_get_pod_status",
                              "arguments": {"namespace": "default"}})
    res = r["result"]
    check(res["isError"] is False and
          res["structuredContent"]["pods"][0]["name"] == "web-1" and
          res["content"][0]["type"] == "text", "pod status: %r" % res)
    sent = forwarded()
    check(len(sent) == 1 and sent[0]["call"]["tool"] == "k8s_get_pod_status"
          and sent[0]["call"]["arguments"] == {"namespace": "default"} and
          "session_owner" not in sent[0]["call"] and
          sent[0]["call"]["progress"] is False, "forwarded %r" % sent)
    bad = [("k8s_get_pod_status", {}, "required"),
           ("k8s_get_pod_status", {"namespace": "default", "x": 1},
            "unknown argument"),
           ("k8s_get_pod_status", {"namespace": 3}, "type string"),
           ("k8s_get_pod_status", {"namespace": "Kube_System"}, "DNS-1123"),
           ("terraform_plan", {"working_dir": "/etc"}, "relative path"),
           ("terraform_plan", {"working_dir": "envs/../../x"},
            "relative path"),
           ("terraform_apply", {"working_dir": "a", "approval_id": "x"},
            "approval_id"),
           ("write_file", {"path": "a", "content": "%%%"}, "base64"),
           ("run_shell", "not an object", "object")]
    for tool, args, why in bad:
        r = m.call("tools/call", {"name": tool, "arguments": args})
        check(r["result"]["isError"] is True and why in text_of(r),
              "%s %r -> %r" % (tool, args, r))
    check(len(forwarded()) == 1, "invalid calls reached runnerd")
    r = m.call("tools/call", {"name": "no_such_tool", "arguments": {}})
    check(error_code(r) == -32602, "unknown tool: %r" % r)
    r = m.call("tools/call", {"arguments": {}})
    check(error_code(r) == -32602, "no name: %r" % r)
    r = m.call("tools/call", {"name": "run_shell",
                              "arguments": {"command": "fail"}})
    check(r["result"]["isError"] is True and "exit 2" in text_of(r),
          "tool failure: %r" % r)
    r = m.call("tools/call", {"name": "run_shell",
                              "arguments": {"command": "garble"}})
    check(r["result"]["isError"] is True and "malformed" in text_of(r),
          "garbled result: %r" % r)
    r = m.call("tools/call", {"name": "run_shell",
                              "arguments": {"command": "nul"}})
    sc = r["result"].get("structuredContent", {})
    check(r["result"]["isError"] is False and text_of(r) == "a\0b\0" and
          sc.get("stdout") == "a\0\ufffd" and sc.get("stdout_base64") ==
          "YQD/", "output with NULs, whole: %r" % r)
    # Concurrency: a slow call does not hold up a quick one, ids match.
    slow = m.request("tools/call", {"name": "run_shell",
                                    "arguments": {"command": "sleep 1"}})
    quick = m.request("tools/call", {"name": "run_shell",
                                     "arguments": {"command": "echo"}})
    first = m.read()
    check(first.get("id") == quick, "quick call answered first: %r" % first)
    r = m.reply(slow)
    check(r["result"]["structuredContent"]["exit_code"] == 0, "slow %r" % r)
    check(m.close() == 0, "exit status")


def s_cancel(m):
    m.initialize()
    rid = m.request("tools/call", {"name": "run_shell",
                                   "arguments": {"command": "sleep 5"},
                                   "_meta": {"progressToken": "tok-1"}})
    progress = []
    while len(progress) < 2:
        n = m.read()
        check(n is not None and n.get("method") == "notifications/progress",
              "progress notification: %r" % n)
        progress.append(n["params"])
    check(all(p["progressToken"] == "tok-1" for p in progress) and
          progress[1]["progress"] > progress[0]["progress"] and
          progress[0]["total"] == 50, "progress %r" % progress)
    m.notify("notifications/cancelled", {"requestId": rid,
                                         "reason": "user stopped it"})
    call = [e for e in forwarded() if e["type"] == "call"][-1]
    check(call["call"]["progress"] is True, "progress flag not forwarded")
    check(wait_for(lambda: any(e["type"] == "cancel" and
                               e["reqid"] == call["reqid"]
                               for e in forwarded())),
          "runnerd never saw MSG_TOOL_CANCEL")
    m.alive()
    deadline = time.time() + 1
    while time.time() < deadline:
        r = m.read(0.2)
        check(r is None or r.get("method") == "notifications/progress",
              "answer after cancellation: %r" % r)
    check(m.close() == 0, "exit status")


def s_timeout(m):
    """call_timeout: 1 in the configuration."""
    m.initialize()
    t0 = time.time()
    r = m.call("tools/call", {"name": "run_shell",
                              "arguments": {"command": "sleep 4"}})
    took = time.time() - t0
    check(r["result"]["isError"] is True and "timed out" in text_of(r) and
          took < 3, "timeout after %.1fs: %r" % (took, r))
    check(wait_for(lambda: any(e["type"] == "cancel" for e in forwarded())),
          "the timed-out call was not cancelled in runnerd")
    m.alive()
    m.close()


def s_inflight(m):
    """max_inflight: 2 in the configuration; tasks count."""
    m.initialize()
    ids = [m.request("tools/call", {"name": "run_shell",
                                    "arguments": {"command": "sleep 1"}})
           for _ in range(3)]
    r = m.reply(ids[2])
    check(r["result"]["isError"] is True and "too many" in text_of(r),
          "third call: %r" % r)
    for rid in ids[:2]:
        check(m.reply(rid)["result"]["isError"] is False, "first two")
    check(len(forwarded()) == 2, "the refused call was forwarded")
    # A task is a call for the bound: a task and a call fill it.
    r = task_call(m, "run_shell", {"command": "sleep 1"}, {})
    tid = r["result"]["task"]["taskId"]
    rid = m.request("tools/call", {"name": "run_shell",
                                   "arguments": {"command": "sleep 1"}})
    r = m.call("tools/call", {"name": "run_shell",
                              "arguments": {"command": "sleep 1"}})
    check(r["result"]["isError"] is True and "too many" in text_of(r),
          "a call beside a task and a call: %r" % r)
    check(m.reply(rid)["result"]["isError"] is False, "the call")
    check(m.call("tasks/result", {"taskId": tid})["result"]["isError"] is
          False, "the task")
    r = m.call("tools/call", {"name": "run_shell",
                              "arguments": {"command": "sleep 1"}})
    check(r["result"]["isError"] is False, "a call once both ended: %r" % r)
    m.close()


def s_eof(m):
    """stdin closes with a call in flight: mcpd cancels it and exits 0."""
    m.initialize()
    m.request("tools/call", {"name": "run_shell",
                             "arguments": {"command": "sleep 5"}})
    check(wait_for(lambda: len(forwarded()) == 1), "call not forwarded")
    check(m.close() == 0, "exit status on EOF")
    check(wait_for(lambda: any(e["type"] == "cancel" for e in forwarded())),
          "the call outlived its client")


def kill_runnerd():
    """SIGKILL for the stand-in runnerd, as a crash would do it."""
    with open("runnerd.pid") as f:
        pid = int(f.read())
    os.kill(pid, 9)
    check(wait_for(lambda: not os.path.exists("/proc/%d/stat" % pid) or
                   open("/proc/%d/stat" % pid).read().split()[2] == "Z"),
          "the stand-in runnerd outlived SIGKILL")


def start_runnerd():
    """A new stand-in on the same socket, as a restarted runnerd."""
    sock = os.path.join("run", "runner.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    p = subprocess.Popen([sys.executable,
                          os.path.join(os.path.dirname(
                              os.path.abspath(__file__)), "fake_runnerd.py"),
                          sock], stdout=open("runnerd.log", "ab"),
                         stderr=subprocess.STDOUT)
    with open("runnerd.pid", "w") as f:
        f.write("%d\n" % p.pid)
    check(wait_for(lambda: os.path.exists(sock)), "no new stand-in")


def call_in_flight(m):
    """A slow call with a progress token, seen by runnerd: its id."""
    rid = m.request("tools/call", {"name": "run_shell",
                                   "arguments": {"command": "sleep 5"},
                                   "_meta": {"progressToken": "tok-gone"}})
    check(wait_for(lambda: len(forwarded()) == 1), "call not forwarded")
    return rid


def down_call(m):
    """A call while runnerd is down: refused at once, not forwarded."""
    before = len(forwarded())
    t0 = time.time()
    r = m.call("tools/call", {"name": "run_shell",
                              "arguments": {"command": "echo"}})
    took = time.time() - t0
    check(r["result"]["isError"] is True and
          "not reachable" in text_of(r) and "not run" in text_of(r) and
          took < 1, "call while down, after %.1fs: %r" % (took, r))
    check(len(forwarded()) == before, "a call reached no runnerd?")


def s_runner_gone(m):
    """runnerd dies with a call in flight: an isError result; mcpd stays."""
    m.initialize()
    rid = call_in_flight(m)
    kill_runnerd()
    r = m.reply(rid)
    check(r["result"]["isError"] is True and "went away" in text_of(r) and
          "unknown" in text_of(r), "in-flight call: %r" % r)
    m.alive()
    check(m.p.poll() is None, "mcpd exited without runnerd")
    check(m.close() == 0, "exit status on EOF while runnerd is down")


def noticed(m):
    """Until mcpd has seen the hangup, a call may still be sent to the
    dead runnerd (and fail as lost): wait for the first refusal."""
    t0 = time.time()
    while True:
        r = m.call("tools/call", {"name": "run_shell",
                                  "arguments": {"command": "echo"}})
        if "not reachable" in text_of(r):
            return
        check(r["result"]["isError"] is True and time.time() - t0 < 3,
              "mcpd did not notice runnerd went away: %r" % r)
        time.sleep(0.05)


def s_runner_down(m):
    """While runnerd is down, each call fails promptly; stdio goes on."""
    m.initialize()
    kill_runnerd()
    noticed(m)
    for _ in range(3):
        down_call(m)
        m.alive()
        time.sleep(0.5)
    check(m.close() == 0, "exit status on EOF while runnerd is down")


def s_runner_back(m):
    """runnerd restarts: the next call works; the lost one stays lost."""
    m.initialize()
    rid = call_in_flight(m)
    kill_runnerd()
    check(m.reply(rid)["result"]["isError"] is True, "in-flight call")
    m.pending.clear()	# progress sent before the crash
    down_call(m)
    time.sleep(1.5)		# the retries back off past their floor
    start_runnerd()
    t0 = time.time()
    while True:
        r = m.call("tools/call", {"name": "k8s_get_pod_status",
                                  "arguments": {"namespace": "web"}})
        if not r["result"]["isError"]:
            break
        check("not reachable" in text_of(r) and time.time() - t0 < 5,
              "no reconnection after %.1fs: %r" % (time.time() - t0, r))
        time.sleep(0.1)
    check(r["result"]["structuredContent"]["namespace"] == "web", "%r" % r)
    sent = forwarded()
    check(len(sent) == 2 and sent[1]["call"]["arguments"] ==
          {"namespace": "web"},
          "after reconnecting: %r" % sent)
    # The lost call is forgotten: no cancellation for it, no second answer.
    m.notify("notifications/cancelled", {"requestId": rid})
    m.alive()
    r = m.read(0.5)
    check(r is None, "more after the lost call: %r" % r)
    check(not m.pending, "more after the lost call: %r" % m.pending)
    check(all(e["type"] == "call" for e in forwarded()),
          "a cancellation reached the new runnerd: %r" % forwarded())
    check(m.close() == 0, "exit status")


def s_real_restart(m):
    """The real runnerd, kill -9'd and restarted by t_mcpd.sh meanwhile."""
    def pods():
        r = m.call("tools/call", {"name": "k8s_get_pod_status",
                                  "arguments": {"namespace": "default"}},
                   timeout=30)
        return "not reachable" not in text_of(r)

    m.initialize()
    check(pods(), "runnerd did not answer before the restart")
    open("kill-runnerd", "w").close()
    check(wait_for(lambda: not pods(), 10), "runnerd still answers")
    open("runnerd-down", "w").close()
    check(wait_for(pods, 20), "the restarted runnerd was not reached")
    check(m.close() == 0, "exit status")


def task_call(m, name, args, task):
    return m.call("tools/call", {"name": name, "arguments": args,
                                 "task": task})


def s_tasks(m):
    """Tasks under 2025-11-25, and each bad input to tasks/* and resources/*."""
    r = m.initialize()["result"]
    check(r["capabilities"]["tasks"]["requests"]["tools"]["call"] == {} and
          "resources" in r["capabilities"], "capabilities %r" % r)
    tools = m.call("tools/list")["result"]["tools"]
    check(all(t["execution"]["taskSupport"] == "optional" for t in tools),
          "taskSupport %r" % tools)
    r = task_call(m, "k8s_get_pod_status", {"namespace": "default"},
                  {"ttl": -5})
    check(error_code(r) == -32602, "negative ttl: %r" % r)
    r = task_call(m, "k8s_get_pod_status", {"namespace": "default"},
                  {"ttl": 60000})
    task = r["result"]["task"]
    check(task["status"] == "working" and task["ttl"] == 60000 and
          task["taskId"].startswith("task-") and "createdAt" in task,
          "created %r" % r)
    tid = task["taskId"]
    r = m.call("tasks/result", {"taskId": tid})["result"]
    check(r["structuredContent"]["pods"][0]["name"] == "web-1" and
          r["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] ==
          tid, "tasks/result %r" % r)
    r = m.call("tasks/get", {"taskId": tid})["result"]
    check(r["status"] == "completed", "tasks/get %r" % r)
    check(any(n.get("method") == "notifications/tasks/status" and
              n["params"]["taskId"] == tid and
              n["params"]["status"] == "completed" for n in m.pending),
          "notifications/tasks/status %r" % m.pending)
    r = m.call("tasks/cancel", {"taskId": tid})
    check(error_code(r) == -32602, "cancelling a finished task: %r" % r)
    # A running call cancelled: runnerd is told, the task says so.
    r = task_call(m, "run_shell", {"command": "sleep 3"}, {})
    tid = r["result"]["task"]["taskId"]
    r = m.call("tasks/cancel", {"taskId": tid})["result"]
    check(r["status"] == "cancelled", "cancelled %r" % r)
    check(wait_for(lambda: any(f["type"] == "cancel" for f in forwarded())),
          "runnerd was not told: %r" % forwarded())
    r = m.call("tasks/cancel", {"taskId": tid})
    check(error_code(r) == -32602, "cancelling twice: %r" % r)
    r = m.call("tasks/result", {"taskId": tid})["result"]
    check(r["isError"] is True, "a cancelled task's result %r" % r)
    # Too late: runnerd says the approved call runs; the task goes on
    # and ends with the call's own result.
    r = task_call(m, "run_shell", {"command": "approved 1"}, {})
    tid = r["result"]["task"]["taskId"]
    check(wait_for(lambda: any(f["type"] == "call" and
                               f["call"]["arguments"].get("command") ==
                               "approved 1" for f in forwarded())),
          "the approved call did not reach runnerd")
    r = m.call("tasks/cancel", {"taskId": tid})
    check(error_code(r) == -32602 and
          "too late: already running" in r["error"]["message"] and
          r["error"]["data"]["status"] == "working", "too late %r" % r)
    r = m.call("tasks/result", {"taskId": tid})["result"]
    check(r["isError"] is False and text_of({"result": r}) == "applied",
          "the too-late task's result %r" % r)
    r = m.call("tasks/get", {"taskId": tid})["result"]
    check(r["status"] == "completed", "the too-late task %r" % r)
    for method, params in [("tasks/get", {}), ("tasks/get", {"taskId": 5}),
                           ("tasks/result", {"taskId": "task-nope"}),
                           ("tasks/cancel", {"taskId": "task-nope"}),
                           ("tasks/list", {"cursor": 7}),
                           ("tasks/list", {"cursor": "task-nope"}),
                           ("resources/read", {}),
                           ("resources/list", {"cursor": "x"})]:
        r = m.call(method, params)
        check(error_code(r) == -32602, "%s %r: %r" % (method, params, r))
    r = m.call("tasks/list")["result"]
    check(len(r["tasks"]) == 3 and "nextCursor" not in r, "list %r" % r)
    for uri in ["plan://" + "0" * 64, "plan://x", "file:///etc/passwd"]:
        r = m.call("resources/read", {"uri": uri})
        check(error_code(r) == -32002 and
              r["error"]["data"]["uri"] == uri, "read %s: %r" % (uri, r))
    check(m.call("resources/list")["result"]["resources"] == [],
          "resources/list")
    check(not any(f["type"] == "unknown" for f in forwarded()),
          "a bad request reached runnerd: %r" % forwarded())
    m.alive()


def s_tasks_older(m):
    """Before 2025-11-25 there are no tasks: params.task is ignored."""
    r = m.initialize("2025-06-18")["result"]
    check("tasks" not in r["capabilities"], "capabilities %r" % r)
    tools = m.call("tools/list")["result"]["tools"]
    check(all("execution" not in t for t in tools), "tools %r" % tools)
    r = task_call(m, "k8s_get_pod_status", {"namespace": "default"}, {})
    check("task" not in r["result"] and
          r["result"]["structuredContent"]["pods"], "plain result %r" % r)
    for method in ["tasks/list", "tasks/get"]:
        r = m.call(method, {"taskId": "task-x"})
        check(error_code(r) == -32601, "%s %r" % (method, r))


EXT = "io.modelcontextprotocol/tasks"
META_EXT = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {EXT: {}}}}


def ext_call(m, method, params, meta=META_EXT, timeout=5.0):
    return m.call(method, dict(params, _meta=meta), timeout)


def ext_poll(m, tid, timeout=10.0):
    """tasks/get until the task is terminal: its last answer."""
    deadline = time.time() + timeout
    while True:
        r = ext_call(m, "tasks/get", {"taskId": tid})["result"]
        check(r["resultType"] == "complete" and r["taskId"] == tid,
              "tasks/get %r" % r)
        if r["status"] in ("completed", "failed", "cancelled"):
            return r
        check(r["status"] == "working" and time.time() < deadline,
              "task still %r" % r)
        time.sleep(0.1)


def missing_capability(r):
    return error_code(r) == -32021 and r["error"]["data"] == {
        "requiredCapabilities": {"extensions": {EXT: {}}}}


def s_ext_tasks(binary, conf):
    """The 2026-07-28 tasks extension: a task for each call that lists
    it, polled to its result; -32021 without it; ids of this connection
    and era only."""
    m = Mcpd(binary, conf)
    r = ext_call(m, "server/discover", {})["result"]
    check(r["capabilities"]["extensions"] == {EXT: {}} and
          "tasks" not in r["capabilities"], "discover %r" % r)
    r = ext_call(m, "tools/call", {"name": "k8s_get_pod_status",
                                   "arguments": {"namespace": "web"}})
    t = r["result"]
    check(t["resultType"] == "task" and t["status"] == "working" and
          t["ttlMs"] > 0 and t["pollIntervalMs"] > 0 and
          re.fullmatch("task-[0-9a-f]{32}", t["taskId"]) and
          "createdAt" in t and "lastUpdatedAt" in t and "task" not in t and
          "ttl" not in t, "CreateTaskResult %r" % r)
    tid = t["taskId"]
    r = ext_poll(m, tid)
    check(r["status"] == "completed" and r["result"]["isError"] is False and
          r["result"]["structuredContent"]["namespace"] == "web",
          "completed %r" % r)
    check(not any(n.get("method", "").startswith("notifications/tasks")
                  for n in m.pending), "task notifications %r" % m.pending)
    # A tool error is a result: the task completes with it.
    tid2 = ext_call(m, "tools/call", {"name": "run_shell", "arguments":
                                      {"command": "fail"}})["result"]["taskId"]
    check(tid2 != tid, "the same id twice")
    r = ext_poll(m, tid2)
    check(r["status"] == "completed" and r["result"]["isError"] is True,
          "an isError result %r" % r)
    # tasks/update: nothing was asked for, so any answer is ignored.
    r = ext_call(m, "tasks/update", {"taskId": tid2, "inputResponses":
                                     {"x": {"action": "accept"}}})
    check(r["result"]["resultType"] == "complete" and
          set(r["result"]) == {"resultType", "_meta"}, "update %r" % r)
    r = ext_call(m, "tasks/update", {"taskId": tid2})
    check(error_code(r) == -32602, "update without inputResponses %r" % r)
    # Cancelled while it runs: acknowledged at once, then cancelled.
    tid3 = ext_call(m, "tools/call", {"name": "run_shell", "arguments":
                                      {"command": "sleep 3"}})["result"][
                                          "taskId"]
    r = ext_call(m, "tasks/cancel", {"taskId": tid3})
    check(set(r["result"]) == {"resultType", "_meta"}, "cancel %r" % r)
    check(ext_poll(m, tid3)["status"] == "cancelled", "not cancelled")
    check(wait_for(lambda: any(f["type"] == "cancel" for f in forwarded())),
          "runnerd was not told: %r" % forwarded())
    r = ext_call(m, "tasks/cancel", {"taskId": tid3})
    check(set(r["result"]) == {"resultType", "_meta"}, "cancel again %r" % r)
    # Without the extension: asking for a task, or any tasks/ method.
    before = len(forwarded())
    r = ext_call(m, "tools/call", {"name": "k8s_get_pod_status", "arguments":
                                   {"namespace": "web"}, "task": {}}, META)
    check(missing_capability(r), "a task without the extension %r" % r)
    check(len(forwarded()) == before, "the refused call was forwarded")
    for method, params in [("tasks/get", {"taskId": tid}),
                           ("tasks/cancel", {"taskId": tid}),
                           ("tasks/update", {"taskId": tid,
                                             "inputResponses": {}})]:
        r = ext_call(m, method, params, META)
        check(missing_capability(r), "%s without it: %r" % (method, r))
    # Without it and not asking, a call is answered as ever.
    r = ext_call(m, "tools/call", {"name": "k8s_get_pod_status",
                                   "arguments": {"namespace": "x"}}, META)
    check(r["result"]["resultType"] == "complete" and
          r["result"]["structuredContent"]["namespace"] == "x", "%r" % r)
    # Guessed ids, bad ids, and what the extension does not have.
    # One digit changed: the last, to one it is not (once in sixteen
    # ids it already ends in 0).
    near = tid[:-1] + ("1" if tid.endswith("0") else "0")
    for bad in ["task-" + os.urandom(16).hex(), near, "", 5]:
        for method in ["tasks/get", "tasks/cancel"]:
            r = ext_call(m, method, {"taskId": bad})
            check(error_code(r) == -32602, "%s %r: %r" % (method, bad, r))
    for method in ["tasks/result", "tasks/list"]:
        r = ext_call(m, method, {"taskId": tid})
        check(error_code(r) == -32601, "%s %r" % (method, r))
    # A legacy task is not the extension's, nor the other way round.
    m.initialize()
    legacy = task_call(m, "k8s_get_pod_status", {"namespace": "default"},
                       {})["result"]["task"]["taskId"]
    check(error_code(ext_call(m, "tasks/get", {"taskId": legacy})) ==
          -32602, "a legacy task seen by the extension")
    check(error_code(m.call("tasks/get", {"taskId": tid})) == -32602,
          "the extension's task seen by a legacy request")
    r = m.call("tasks/list")["result"]["tasks"]
    check([t["taskId"] for t in r] == [legacy], "tasks/list %r" % r)
    # Another client: its own mcpd, which knows none of these tasks.
    other = Mcpd(binary, conf)
    for t in [tid, tid2, tid3]:
        r = ext_call(other, "tasks/get", {"taskId": t})
        check(error_code(r) == -32602, "another client's task: %r" % r)
    check(other.close() == 0 and m.close() == 0, "exit status")


SCENARIOS = {
    "malformed": s_malformed, "modern": s_modern, "calls": s_calls,
    "logging": s_logging, "logging_modern": s_logging_modern,
    "cancel": s_cancel, "timeout": s_timeout, "inflight": s_inflight,
    "eof": s_eof, "runner_gone": s_runner_gone,
    "runner_down": s_runner_down, "runner_back": s_runner_back,
    "real_restart": s_real_restart, "tasks": s_tasks,
    "tasks_older": s_tasks_older,
}


def main():
    binary, conf, name = sys.argv[1:4]
    try:
        if name in ("lifecycle", "batch", "ext_tasks"):
            {"lifecycle": s_lifecycle, "batch": s_batch,
             "ext_tasks": s_ext_tasks}[name](binary, conf)
        else:
            SCENARIOS[name](Mcpd(binary, conf))
    except (Fail, KeyError, TypeError) as e:
        print("FAIL %s: %s: %s" % (name, type(e).__name__, e),
              file=sys.stderr)
        sys.exit(1)
    print("ok %s" % name)


if __name__ == "__main__":
    main()
