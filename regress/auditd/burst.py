#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# Writers that flood auditd at once: CONNS connections, each sending
# one MSG_AUDIT_EVENT whose payload is exactly BYTES long, all released
# together; then each waits for its ack.  With --stopped PID, auditd is
# stopped while every event is queued whole in its socket (root may
# raise a socket's buffer past wmem_max), then let go: all of them are
# then read in one turn of its loop and so make one batch.
#   burst.py SOCK -c CONNS -s BYTES [--stopped PID]
# Prints the number of events acknowledged; exits 1 with the first
# failure otherwise.
import argparse
import json
import os
import signal
import socket
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from asframe import (MSG_AUDIT_ACK, MSG_AUDIT_EVENT, MSG_ERROR,  # noqa: E402
                     Conn, error_unpack)


SO_SNDBUFFORCE = 32


def event(reqid, size):
    ev = {"event": "tool.request", "request_id": "req-%016x" % reqid,
          "daemon": "runnerd", "fields": {"pad": ""}}
    fill = size - len(json.dumps(ev).encode())
    if fill < 0:
        raise ValueError("%d bytes cannot hold an event" % size)
    ev["fields"]["pad"] = "a" * fill
    b = json.dumps(ev).encode()
    assert len(b) == size
    return b


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sock")
    p.add_argument("-c", type=int, default=1)
    p.add_argument("-s", type=int, default=1024)
    p.add_argument("--stopped", type=int)
    a = p.parse_args()
    conns = [Conn(a.sock) for _ in range(a.c)]
    payloads = [event(i + 1, a.s) for i in range(a.c)]
    errors = []
    acked = []
    if a.stopped:
        os.kill(a.stopped, signal.SIGSTOP)
        try:
            for i, c in enumerate(conns):
                c.sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE,
                                  2 * a.s + 65536)
                c.sock.setblocking(False)
                c.send(MSG_AUDIT_EVENT, payloads[i], i + 1)
                c.sock.setblocking(True)
        except BlockingIOError:
            print("burst: an event does not fit whole in the socket",
                  file=sys.stderr)
            sys.exit(1)
        finally:
            os.kill(a.stopped, signal.SIGCONT)
    go = threading.Barrier(a.c)

    def writer(i):
        reqid = i + 1
        try:
            go.wait()
            if not a.stopped:
                conns[i].send(MSG_AUDIT_EVENT, payloads[i], reqid)
            reply = conns[i].recv()
            if reply is None:
                raise EOFError("connection closed")
            typ, rid, data, _ = reply
            if typ == MSG_ERROR:
                errors.append(error_unpack(data)[1])
            elif typ != MSG_AUDIT_ACK or rid != reqid:
                errors.append("unexpected reply type %d" % typ)
            else:
                acked.append(json.loads(data)["seq"])
        except (EOFError, OSError) as e:
            errors.append(str(e))

    threads = [threading.Thread(target=writer, args=(i,))
               for i in range(a.c)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        print("burst: %s" % errors[0], file=sys.stderr)
        sys.exit(1)
    print(len(acked))


main()
