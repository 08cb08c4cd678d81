#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A stand-in runnerd for mcpd's tests: serves runner.sock with the
suite's framing (regress/lib/asframe.py) and plays tools:

  k8s_get_pod_status      a result with two pods
  run_shell "sleep N"     waits N seconds (0.1 s steps, progress if asked),
                          unless cancelled (a task's cancel: "stopped")
  run_shell "approved N"  an approved call that runs N seconds: a task's
                          cancel is too late ("running"), the result comes
  run_shell "fail"        an isError result
  run_shell "garble"      a result that is not JSON
  run_shell "deny"        a refusal (tool.denied)

A call that asks for its events ("log") gets the trail runnerd would
show as MSG_TOOL_LOG: info for its steps, warning for a refusal, error
for a failure.
  anything else           echoes the arguments in structuredContent

Every frame it receives is appended to calls.jsonl in the current
directory, so tests can show what did (and did not) reach runnerd.
Usage: fake_runnerd.py SOCKET_PATH
"""
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from asframe import (MSG_PING, MSG_PONG, MSG_TOOL_CALL,  # noqa: E402
                     MSG_TOOL_CANCEL, MSG_TOOL_CANCELLED, MSG_TOOL_LOG,
                     MSG_TOOL_PROGRESS, MSG_TOOL_RESULT, pong_pack,
                     recv_frame, send_frame)

log_lock = threading.Lock()


def record(entry):
    with log_lock, open("calls.jsonl", "a") as f:
        f.write(json.dumps(entry) + "\n")


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.wlock = threading.Lock()
        self.cancelled = set()
        self.approved = set()

    def send(self, mtype, reqid, payload=b""):
        with self.wlock:
            send_frame(self.sock, mtype, reqid, payload)

    def result(self, reqid, text, structured=None, is_error=False):
        r = {"isError": is_error, "content": [{"type": "text", "text": text}]}
        if structured is not None:
            # runnerd names the call in every result it makes.
            r["structuredContent"] = dict(structured,
                                          request_id="req-%016x" % reqid)
        self.send(MSG_TOOL_RESULT, reqid, r)

    def log(self, call, reqid, level, event, **fields):
        if call.get("log"):
            self.send(MSG_TOOL_LOG, reqid, {
                "level": level, "event": event,
                "request_id": "req-%016x" % reqid, "fields": fields})

    def trail(self, call, reqid, cmd):
        """The events before the result; False when the call is refused."""
        self.log(call, reqid, "info", "tool.request", tool=call["tool"])
        if cmd == "deny":
            self.log(call, reqid, "warning", "guardrail.decision",
                     decision="deny", reason="not in policy")
            self.log(call, reqid, "warning", "tool.denied",
                     reason="denied by policy")
            self.result(reqid, "denied by policy", None, True)
            return False
        self.log(call, reqid, "info", "guardrail.decision",
                 decision="allow", tier="low")
        self.log(call, reqid, "info", "credential.issued", scope="none")
        self.log(call, reqid, "info", "sandbox.started", backend="fake")
        return True

    def run_call(self, reqid, call):
        tool, args = call["tool"], call["arguments"]
        cmd = args.get("command", "")
        if not self.trail(call, reqid, cmd):
            return
        self.log(call, reqid, "info", "sandbox.completed", status="exited")
        self.log(call, reqid, "error" if cmd == "fail" else "info",
                 "tool.result", isError=cmd == "fail")
        if tool == "k8s_get_pod_status":
            pods = [{"name": "web-1", "phase": "Running", "ready": True,
                     "restarts": 0},
                    {"name": "web-2", "phase": "Pending", "ready": False,
                     "restarts": 3}]
            self.result(reqid, "2 pods", {"namespace": args["namespace"],
                                          "pods": pods})
            return
        if cmd.startswith("approved "):
            self.approved.add(reqid)
            time.sleep(float(cmd.split()[1]))
            self.result(reqid, "applied", {"exit_code": 0})
        elif cmd.startswith("sleep "):
            steps = int(float(cmd.split()[1]) * 10)
            for i in range(steps):
                if reqid in self.cancelled:
                    return
                if call.get("progress"):
                    self.send(MSG_TOOL_PROGRESS, reqid,
                              {"progress": i + 1, "total": steps,
                               "message": "step %d" % (i + 1)})
                time.sleep(0.1)
            if reqid in self.cancelled:
                return
            self.result(reqid, "slept", {"session_id": "s1",
                                         "exit_code": 0})
        elif cmd == "fail":
            self.result(reqid, "command failed: exit 2", None, True)
        elif cmd == "garble":
            self.send(MSG_TOOL_RESULT, reqid, b"{not json")
        elif cmd == "nul":
            # Output with NULs, and bytes that are not UTF-8 (runnerd's
            # output.c): b"a\0\xff".
            self.result(reqid, "a\0b\0", {
                "session_id": "s1", "exit_code": 0, "stdout": "a\0\ufffd",
                "stdout_base64": "YQD/"})
        else:
            self.result(reqid, json.dumps(args),
                        {"session_id": "s1", "exit_code": 0,
                         "stdout": json.dumps(args)})

    def serve(self):
        while True:
            frame = recv_frame(self.sock)
            if frame is None:
                return
            mtype, reqid, payload, _ = frame
            if mtype == MSG_PING:
                self.send(MSG_PONG, reqid, pong_pack("runnerd", os.getpid()))
            elif mtype == MSG_TOOL_CALL:
                call = json.loads(payload)
                record({"type": "call", "reqid": reqid, "call": call})
                threading.Thread(target=self.run_call, args=(reqid, call),
                                 daemon=True).start()
            elif mtype == MSG_TOOL_CANCEL:
                answer = payload and json.loads(payload).get("answer")
                record({"type": "cancel", "reqid": reqid,
                        "answer": bool(answer)})
                if reqid in self.approved:
                    outcome, why = "running", "too late: already running"
                else:
                    self.cancelled.add(reqid)
                    outcome, why = "stopped", "stopped while it ran"
                if answer:
                    self.send(MSG_TOOL_CANCELLED, reqid,
                              {"outcome": outcome, "reason": why})
            else:
                record({"type": "unknown", "msgtype": mtype})


def main():
    path = sys.argv[1]
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)
    while True:
        s, _ = srv.accept()
        threading.Thread(target=Conn(s).serve, daemon=True).start()


if __name__ == "__main__":
    main()
