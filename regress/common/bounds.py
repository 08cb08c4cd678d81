# SPDX-License-Identifier: ISC
"""Peers that try to hold a daemon's memory or descriptors, on one
daemon socket each; every check prints what it saw and exits 1 when the
daemon did not keep its bound.

  bounds.py nonreader SOCKET PID   PINGs, never reading the PONGs, until
                                   dropped; the daemon's memory stays low
  bounds.py halfframe SOCKET SECS  half a frame, then silence: dropped
                                   within SECS
  bounds.py percap SOCKET N        N connections admitted, one more
                                   refused for its uid
  bounds.py flood SOCKET N PID     N connections past the daemon's
                                   descriptors: refused without spinning,
                                   and PING answered once they are gone
"""

import errno
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from asframe import (HDR, MSG_ERROR, MSG_PING, MSG_PONG, VERSION,  # noqa
                     Conn, error_unpack, pack)

SENT_MAX = 256 * 1024 * 1024
RSS_MAX_KB = 128 * 1024


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ping_ok(path):
    c = Conn(path)
    c.sock.settimeout(10)
    try:
        return c.call(MSG_PING)[0] == MSG_PONG
    finally:
        c.close()


def nonreader(path, pid):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(10)
    chunk = pack(MSG_PING, 1) * 40000
    sent, peak = 0, 0
    try:
        while sent < SENT_MAX:
            s.sendall(chunk)
            sent += len(chunk)
            peak = max(peak, rss_kb(pid))
    except (BrokenPipeError, ConnectionResetError, socket.timeout) as e:
        print("dropped after %d MiB sent (%s)" % (sent >> 20,
                                                 type(e).__name__))
    else:
        print("never dropped: %d MiB sent" % (sent >> 20))
        return 1
    print("peak RSS %d MiB" % (peak >> 10))
    if peak > RSS_MAX_KB:
        return 1
    return 0 if ping_ok(path) else 1


def halfframe(path, secs):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    hdr = HDR.pack(MSG_PING, 1 << 20, 0, VERSION, 0, 1)
    s.sendall(hdr + b"x" * 1000)
    s.settimeout(secs)
    t0 = time.monotonic()
    try:
        got = s.recv(4096)
    except socket.timeout:
        print("still connected after %.0f s" % secs)
        return 1
    print("dropped after %.1f s%s" % (time.monotonic() - t0,
                                       "" if not got else " with a reply"))
    return 0 if ping_ok(path) else 1


def percap(path, n):
    held = []
    for _ in range(n):
        c = Conn(path)
        c.sock.settimeout(10)
        if c.call(MSG_PING)[0] != MSG_PONG:
            print("connection %d refused" % (len(held) + 1))
            return 1
        held.append(c)
    c = Conn(path)
    c.sock.settimeout(5)
    try:
        r = c.recv()
    except socket.timeout:
        r = None
    if r is None or r[0] != MSG_ERROR:
        print("connection %d admitted" % (n + 1))
        return 1
    print(error_unpack(r[2])[1])
    return 0


def flood(path, n, pid):
    held = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
        except BlockingIOError:
            pass
        except OSError as e:
            if e.errno != errno.EAGAIN:
                raise
        held.append(s)
    c0 = cpu_s(pid)
    time.sleep(2)
    busy = cpu_s(pid) - c0
    refused = 0
    # A refusal is written at once: what is not there now never comes.
    for s in held:
        try:
            data = s.recv(65536)
            if len(data) >= HDR.size and \
                    HDR.unpack(data[:HDR.size])[0] == MSG_ERROR and \
                    b"out of descriptors" in data:
                refused += 1
        except OSError:
            pass
        s.close()
    print("%d of %d refused for want of descriptors; %.2f s of CPU in 2 s"
          % (refused, n, busy))
    if refused == 0 or busy > 1.0:
        return 1
    # The daemon sees the others go in its own time.
    until = time.monotonic() + 10
    while not ping_ok(path):
        if time.monotonic() > until:
            return 1
        time.sleep(0.1)
    return 0


def main():
    what, path = sys.argv[1], sys.argv[2]
    if what == "nonreader":
        return nonreader(path, int(sys.argv[3]))
    if what == "halfframe":
        return halfframe(path, float(sys.argv[3]))
    if what == "percap":
        return percap(path, int(sys.argv[3]))
    if what == "flood":
        return flood(path, int(sys.argv[3]), int(sys.argv[4]))
    return 2


if __name__ == "__main__":
    sys.exit(main())
