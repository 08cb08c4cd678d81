#!/usr/bin/env python3
"""A client of runner.sock that keeps its connection, as mcpd does, so
that the sessions it opens stay its own.  For the session tests and the
session benchmark.

  sesscall.py SOCK TOOL JSON-ARGS...   each call in turn on one connection;
                                       prints each result JSON on a line
"""
import json
import os
import socket
import struct
import sys

HDR = struct.Struct("<IIIHHQ")
MSG_ERROR, MSG_TOOL_CALL, MSG_TOOL_CANCEL, MSG_TOOL_RESULT = 3, 100, 101, 103


class Client:
    def __init__(self, path, owner="test"):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.owner = owner

    def _recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("runnerd closed the connection")
            buf += chunk
        return buf

    def send(self, tool, args):
        reqid = int.from_bytes(os.urandom(8), "little") | 1
        body = json.dumps({"tool": tool, "arguments": args,
                           "session_owner": self.owner,
                           "progress": False}).encode()
        self.sock.sendall(HDR.pack(MSG_TOOL_CALL, len(body), 0, 1, 0, reqid) +
                          body)
        return reqid

    def cancel(self, reqid):
        self.sock.sendall(HDR.pack(MSG_TOOL_CANCEL, 0, 0, 1, 0, reqid))

    def result(self, reqid):
        mtype, length, _, _, _, rid = HDR.unpack(self._recv_exact(HDR.size))
        data = self._recv_exact(length)
        if mtype == MSG_ERROR:
            code, text = struct.unpack("<i256s", data)
            raise RuntimeError("MSG_ERROR %d %s" % (code, text.rstrip(b"\0")))
        if mtype != MSG_TOOL_RESULT or rid != reqid:
            raise RuntimeError("unexpected reply %d" % mtype)
        return json.loads(data)

    def call(self, tool, **args):
        return self.result(self.send(tool, args))

    def close(self):
        self.sock.close()


def main():
    c = Client(sys.argv[1])
    for tool, args in zip(sys.argv[2::2], sys.argv[3::2]):
        print(json.dumps(c.call(tool, **json.loads(args))))
    c.close()


if __name__ == "__main__":
    main()
