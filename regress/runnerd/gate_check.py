#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""The two-call approval flow of one MCP client, on one runner.sock
connection, against another connection that learns the approval id.

  gate_check.py SOCK APPROVALCTL...    exits 0 when every step held

The client's call stops at a pending approval; the operator approves it;
another connection presenting the id is refused and leaves it approved;
the client's own second call runs once.  An approval granted for any
client (approvalctl approve --any-client) runs for the other one.
"""
import subprocess
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sesscall import Client  # noqa: E402


def text(r):
    return r["content"][0]["text"]


def expect(what, r, error, word):
    if r["isError"] != error or word not in text(r):
        sys.exit("%s: %s" % (what, text(r)))


def pending(client, command):
    r = client.call("run_shell", command=command)
    expect("first call", r, True, "approval")
    return r["structuredContent"]["approval_id"]


def main():
    sock, ctl = sys.argv[1], sys.argv[2:]
    mine, other = Client(sock), Client(sock)
    aid = pending(mine, "echo gated")
    expect("before approval", mine.call("run_shell", command="echo gated",
           approval_id=aid), True, "is pending, not approved")
    subprocess.run(ctl + ["approve", aid], check=True,
                   stdout=subprocess.DEVNULL)
    expect("another connection", other.call(
           "run_shell", command="echo gated", approval_id=aid), True,
           "was asked for by another client")
    expect("other arguments", mine.call(
           "run_shell", command="echo other", approval_id=aid), True,
           "bound to other parameters")
    expect("the client's own", mine.call(
           "run_shell", command="echo gated", approval_id=aid), False,
           "gated")
    expect("replay", mine.call("run_shell", command="echo gated",
           approval_id=aid), True, "already spent")
    aid = pending(mine, "echo anyone")
    subprocess.run(ctl + ["approve", aid, "--any-client"], check=True,
                   stdout=subprocess.DEVNULL)
    expect("for any client", other.call(
           "run_shell", command="echo anyone", approval_id=aid), False,
           "anyone")
    expect("replay by its client", mine.call(
           "run_shell", command="echo anyone", approval_id=aid), True,
           "already spent")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
