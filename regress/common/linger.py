# SPDX-License-Identifier: ISC
"""Hands every listener a TCP socket that would hold close() for
LINGER seconds (set to linger, its other end never reads), then checks
that the daemon answers PING at once throughout.

  linger.py RUNDIR SOCKET:PID ...

The daemon is stopped while the frame is sent, so that the descriptor
is queued before it accepts the connection: it then arrives also where
the listener refuses descriptors (SO_PASSRIGHTS, set on accept), and
the daemon must close it.  The frame is a PING, which may carry none:
the daemon drops the connection and closes the descriptor at once.
"""

import os
import select
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from asframe import MSG_PING, MSG_PONG, Conn, send_frame  # noqa: E402

LINGER = 10
PING_MAX = 1.0


def fill(c):
    try:
        while True:
            c.send(b"x" * 65536)
    except BlockingIOError:
        pass


def lingering():
    """A socket whose last close waits LINGER seconds, and its peer."""
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    c = socket.create_connection(lst.getsockname())
    peer, _ = lst.accept()
    lst.close()
    c.setblocking(False)
    # Twice: the first fill ends before the peer's window closes.
    fill(c)
    time.sleep(0.2)
    fill(c)
    c.setblocking(True)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                 struct.pack("ii", 1, LINGER))
    return c, peer


def ping(path):
    t0 = time.monotonic()
    c = Conn(path)
    c.sock.settimeout(LINGER + 5)
    reply = c.call(MSG_PING)
    c.close()
    if reply[0] != MSG_PONG:
        raise RuntimeError("no PONG")
    return time.monotonic() - t0


def main():
    rundir = sys.argv[1]
    bad = []
    peers = []
    for arg in sys.argv[2:]:
        name, pid = arg.rsplit(":", 1)
        path = os.path.join(rundir, name)
        c, peer = lingering()
        peers.append(peer)
        os.kill(int(pid), signal.SIGSTOP)
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            send_frame(s, MSG_PING, 1, b"", c.fileno())
        finally:
            c.close()
            os.kill(int(pid), signal.SIGCONT)
        # From the moment the daemon runs again, while it reads the frame
        # and drops the connection.
        worst, until = 0.0, time.monotonic() + 1.5
        while time.monotonic() < until:
            worst = max(worst, ping(path))
        if not select.select([s], [], [], LINGER + 5)[0]:
            bad.append("%s: the connection was not dropped" % name)
        s.close()
        print("%s: slowest PING %.3f s" % (name, worst))
        if worst > PING_MAX:
            bad.append("%s: a PING took %.1f s" % (name, worst))
    for p in peers:
        p.close()
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
