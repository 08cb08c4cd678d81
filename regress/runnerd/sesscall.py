#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A client of runner.sock that keeps its connection, as mcpd does, so
that the sessions it opens stay its own.  For the session tests, the
session benchmark and runcall.py's one-call client.

  sesscall.py SOCK TOOL JSON-ARGS...   each call in turn on one connection;
                                       prints each result JSON on a line
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from asframe import (MSG_ERROR, MSG_TOOL_CALL, MSG_TOOL_CANCEL,  # noqa: E402
                     MSG_TOOL_RESULT, Conn, error_unpack)


class ProtocolError(RuntimeError):
    """runnerd answered a call with MSG_ERROR instead of a result."""

    def __init__(self, code, text):
        super().__init__("MSG_ERROR %d %s" % (code, text))
        self.code = code
        self.text = text


class Client:
    def __init__(self, path, uid=None):
        """uid: connect as that user (SO_PEERCRED takes the effective
        uid at connect), through the real path for its permissions."""
        if uid is None:
            self.conn = Conn(path)
        else:
            path = os.path.realpath(path)
            os.seteuid(uid)
            try:
                self.conn = Conn(path)
            finally:
                os.seteuid(0)

    def send(self, tool, args):
        reqid = int.from_bytes(os.urandom(8), "little") | 1
        self.conn.send(MSG_TOOL_CALL, {"tool": tool, "arguments": args,
                                       "progress": False}, reqid)
        return reqid

    def cancel(self, reqid):
        self.conn.send(MSG_TOOL_CANCEL, b"", reqid)

    def result(self, reqid):
        reply = self.conn.recv()
        if reply is None:
            raise ConnectionError("runnerd closed the connection")
        mtype, rid, data, _ = reply
        if mtype == MSG_ERROR:
            raise ProtocolError(*error_unpack(data))
        if mtype != MSG_TOOL_RESULT or rid != reqid:
            raise RuntimeError("unexpected reply %d" % mtype)
        return json.loads(data)

    def call(self, tool, **args):
        return self.result(self.send(tool, args))

    def close(self):
        self.conn.close()


def main():
    c = Client(sys.argv[1])
    for tool, args in zip(sys.argv[2::2], sys.argv[3::2]):
        print(json.dumps(c.call(tool, **json.loads(args))))
    c.close()


if __name__ == "__main__":
    main()
