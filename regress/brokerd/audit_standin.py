#!/usr/bin/env python3
"""A minimal auditd for brokerd's tests (Python 3 standard library).

Listens on a Unix socket, speaks the suite's framing (24-byte header,
little-endian: u32 type, u32 len, u32 peerid, u16 version=1, u16 flags,
u64 reqid), answers MSG_AUDIT_EVENT (500) with MSG_AUDIT_ACK (501)
{"seq": n} and appends each event, exactly as received, to --out: unlike
auditd it scrubs nothing, so a leak in the sender shows.
"""

import argparse
import json
import os
import socket
import struct
import sys
import threading

HDR = struct.Struct("<IIIHHQ")
MSG_AUDIT_EVENT, MSG_AUDIT_ACK = 500, 501


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


class StandIn:
    def __init__(self, out):
        self.out = out
        self.seq = 0
        self.lock = threading.Lock()

    def serve(self, conn):
        with conn:
            while True:
                hdr = recv_exact(conn, HDR.size)
                if hdr is None:
                    return
                mtype, length, _, version, _, reqid = HDR.unpack(hdr)
                payload = recv_exact(conn, length) if length else b""
                if payload is None or version != 1 or \
                        mtype != MSG_AUDIT_EVENT:
                    return
                json.loads(payload)
                with self.lock:
                    self.seq += 1
                    seq = self.seq
                    with open(self.out, "ab") as f:
                        f.write(payload + b"\n")
                ack = json.dumps({"seq": seq}).encode()
                conn.sendall(HDR.pack(MSG_AUDIT_ACK, len(ack), 0, 1, 0,
                                      reqid) + ack)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = a.socket + ".new"
    if os.path.exists(tmp):
        os.unlink(tmp)
    s.bind(tmp)
    s.listen(16)
    os.rename(tmp, a.socket)
    standin = StandIn(a.out)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=standin.serve, args=(conn,),
                         daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
