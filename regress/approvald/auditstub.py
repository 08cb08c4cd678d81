#!/usr/bin/env python3
"""A minimal audit.sock for approvald's tests: acks every
MSG_AUDIT_EVENT with MSG_AUDIT_ACK {"seq": n} and appends the event to
a JSON-lines file.  While the file REFUSE exists in its directory it
hangs up instead of acking, so that tests can see approvald fail closed.

  auditstub.py SOCKET LOGFILE
"""

import json
import os
import socket
import struct
import sys
import threading

HDR = struct.Struct("<IIIHHQ")
AUDIT_EVENT, AUDIT_ACK = 500, 501


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def serve(s, log, lock, state):
    refuse = os.path.join(os.path.dirname(os.path.abspath(log)), "REFUSE")
    try:
        while True:
            mtype, length, _, _, _, reqid = HDR.unpack(recv_exact(s,
                                                                  HDR.size))
            data = recv_exact(s, length)
            if mtype != AUDIT_EVENT or os.path.exists(refuse):
                break
            with lock:
                state["seq"] += 1
                seq = state["seq"]
                with open(log, "a") as f:
                    f.write(data.decode() + "\n")
            ack = json.dumps({"seq": seq}).encode()
            s.sendall(HDR.pack(AUDIT_ACK, len(ack), 0, 1, 0, reqid) + ack)
    except (EOFError, OSError):
        pass
    s.close()


def main():
    path, log = sys.argv[1], sys.argv[2]
    if os.path.exists(path):
        os.unlink(path)
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(path)
    ls.listen(64)
    lock, state = threading.Lock(), {"seq": 0}
    while True:
        s, _ = ls.accept()
        threading.Thread(target=serve, args=(s, log, lock, state),
                         daemon=True).start()


if __name__ == "__main__":
    main()
