#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A minimal auditd for the daemons' tests: acks every MSG_AUDIT_EVENT
with MSG_AUDIT_ACK {"seq": n} and appends the event, exactly as
received, to a JSON-lines log.  Unlike auditd it scrubs nothing, so a
leak in the sender shows.  While a file named REFUSE exists next to the
log it hangs up instead of acking, so that tests can see the sender
fail closed.  Anything but a well-formed event also ends the connection.

  audit_standin.py SOCKET LOG
"""

import json
import os
import socket
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from asframe import (MSG_AUDIT_ACK, MSG_AUDIT_EVENT, recv_frame,  # noqa: E402
                     send_frame)


class StandIn:
    def __init__(self, log):
        self.log = log
        self.refuse = os.path.join(os.path.dirname(os.path.abspath(log)),
                                   "REFUSE")
        self.seq = 0
        self.lock = threading.Lock()

    def record(self, event):
        """The event's seq, or None if it is not to be acked."""
        if os.path.exists(self.refuse):
            return None
        try:
            json.loads(event)
        except ValueError:
            return None
        with self.lock:
            self.seq += 1
            with open(self.log, "ab") as f:
                f.write(event + b"\n")
            return self.seq

    def serve(self, conn):
        with conn:
            try:
                while True:
                    frame = recv_frame(conn)
                    if frame is None or frame[0] != MSG_AUDIT_EVENT:
                        return
                    _, reqid, event, _ = frame
                    seq = self.record(event)
                    if seq is None:
                        return
                    send_frame(conn, MSG_AUDIT_ACK, reqid, {"seq": seq})
            except OSError:
                pass    # the sender went away: nothing to ack


def main():
    path, log = sys.argv[1:3]
    # Bound under another name, then renamed: once the socket is there,
    # it accepts.
    tmp = path + ".new"
    if os.path.exists(tmp):
        os.unlink(tmp)
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(tmp)
    ls.listen(64)
    os.rename(tmp, path)
    standin = StandIn(log)
    while True:
        conn, _ = ls.accept()
        threading.Thread(target=standin.serve, args=(conn,),
                         daemon=True).start()


if __name__ == "__main__":
    main()
