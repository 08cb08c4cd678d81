# SPDX-License-Identifier: ISC
"""Breaks each listener's rules on one connection per socket and checks
that every break is answered ERR_BADMSG, naming the type, and that the
connection then still answers PING.  Where the kernel lets a listener
refuse descriptors (SO_PASSRIGHTS), a frame with one must instead be
refused by the kernel, at the sender's sendmsg.

  badmsg.py RUNDIR
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from asframe import (ERR_BADMSG, MSG_AUDIT_STATS, MSG_CRED_ISSUED,  # noqa
                     MSG_CRED_REVOKE, MSG_CTL_APPROVE, MSG_CTL_WATCH,
                     MSG_DECIDE, MSG_ERROR, MSG_PING, MSG_PONG,
                     MSG_RCTL_GET, MSG_RCTL_SESSIONS, MSG_TOOL_CALL,
                     MSG_TOOL_CANCEL, LMSG_RUN, Conn, error_unpack,
                     kernel_refuses_fds, type_name)

# (type, payload, with a descriptor, what the error must say)
UNLISTED = (MSG_CTL_APPROVE, b"{}", False, "unexpected CTL_APPROVE")
FD = (MSG_CRED_ISSUED, b"{}", True, "unexpected CRED_ISSUED")
CASES = {
    "approval.sock": [
        UNLISTED, FD,
        (MSG_DECIDE, b"[1]", False, "DECIDE: expected an object"),
        (MSG_DECIDE, b"", False, "DECIDE: "),
        (MSG_DECIDE, b"{", False, "DECIDE: "),
    ],
    "control.sock": [
        (MSG_DECIDE, b"{}", False, "unexpected DECIDE"), FD,
        (MSG_CTL_WATCH, b"{}", False, "CTL_WATCH: no payload expected"),
        (MSG_CTL_APPROVE, b"\"x\"", False, "CTL_APPROVE: expected an object"),
    ],
    "broker.sock": [
        UNLISTED,
        (LMSG_RUN, b"{}", True, "unexpected LMSG_RUN"),
        (MSG_CRED_REVOKE, b"7", False, "CRED_REVOKE: expected an object"),
    ],
    "audit.sock": [
        UNLISTED, FD,
        (MSG_AUDIT_STATS, b"{}", False, "AUDIT_STATS: no payload expected"),
    ],
    "runner.sock": [
        UNLISTED, FD,
        (MSG_TOOL_CANCEL, b"[]", False, "TOOL_CANCEL: expected an object"),
        (MSG_TOOL_CALL, b"[]", False, "TOOL_CALL: expected an object"),
    ],
    "runner-control.sock": [
        UNLISTED, FD,
        (MSG_RCTL_SESSIONS, b"{}", False,
         "RCTL_SESSIONS: no payload expected"),
        (MSG_RCTL_GET, b"", False, "RCTL_GET: "),
    ],
}


def main():
    rundir = sys.argv[1]
    bad = []
    devnull = os.open(os.devnull, os.O_RDONLY)
    refused = kernel_refuses_fds()
    for sock, cases in CASES.items():
        c = Conn(os.path.join(rundir, sock))
        c.sock.settimeout(5)
        for i, (mtype, payload, fd, want) in enumerate(cases):
            what = "%s %s%s" % (sock, type_name(mtype), " +fd" if fd else "")
            try:
                reply = c.call(mtype, payload, i + 1,
                               devnull if fd else None)
                if fd and refused:
                    bad.append("%s: the kernel let the descriptor in" % what)
                    continue
            except PermissionError:
                if not (fd and refused):
                    bad.append("%s: EPERM" % what)
                continue
            except (EOFError, OSError) as e:
                bad.append("%s: no answer (%s)" % (what, e))
                break
            if reply[0] != MSG_ERROR:
                bad.append("%s: got %s" % (what, type_name(reply[0])))
                continue
            code, text = error_unpack(reply[2])
            if code != ERR_BADMSG or not text.startswith(want) or \
                    reply[1] != i + 1:
                bad.append("%s: got error %d %r (reqid %d)" %
                           (what, code, text, reply[1]))
        else:
            if c.call(MSG_PING)[0] != MSG_PONG:
                bad.append("%s: no PONG after the errors" % sock)
        c.close()
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
