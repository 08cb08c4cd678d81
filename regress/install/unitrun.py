#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Starts an installed systemd unit's daemon the way systemd would.

usage: unitrun.py UNIT LOGFILE [TIMEOUT]

Runs the unit's ExecStartPre= commands, then its ExecStart= command in a
new session with $NOTIFY_SOCKET set, and waits for the daemon's
"READY=1" datagram (Type=notify; sd_notify(3), systemd.service(5)).
The daemon's -d flag is added so that its log goes to LOGFILE rather
than to a syslog the test cannot read.  Prints the daemon's pid once it
is ready; exits 1 with the reason (and the log) if it is not.
"""
import os
import shlex
import socket
import subprocess
import sys
import tempfile


def unit_commands(path):
    cmds = {"ExecStartPre": [], "ExecStart": []}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, sep, value = line.strip().partition("=")
            if sep and key in cmds:
                cmds[key].append(shlex.split(value))
    if len(cmds["ExecStart"]) != 1:
        sys.exit("%s: want exactly one ExecStart=" % path)
    return cmds


def main():
    unit, logfile = sys.argv[1], sys.argv[2]
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 30
    cmds = unit_commands(unit)
    for pre in cmds["ExecStartPre"]:
        r = subprocess.run(pre, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            sys.exit("%s: ExecStartPre failed: %s" % (unit, r.stderr))
    sockdir = tempfile.mkdtemp(prefix="notify.")
    path = os.path.join(sockdir, "notify")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(timeout)
    env = dict(os.environ, NOTIFY_SOCKET=path)
    argv = cmds["ExecStart"][0] + ["-d"]
    with open(logfile, "ab") as log:
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                             stdout=log, stderr=log, start_new_session=True)
    try:
        while True:
            msg = s.recv(4096).decode()
            if "READY=1" in msg.split("\n"):
                break
    except socket.timeout:
        p.kill()
        with open(logfile, encoding="utf-8", errors="replace") as log:
            sys.stderr.write(log.read())
        sys.exit("%s: no READY=1 within %ss" % (unit, timeout))
    finally:
        s.close()
        os.unlink(path)
        os.rmdir(sockdir)
    if p.poll() is not None:
        sys.exit("%s: exited with %d after READY=1" % (unit, p.returncode))
    print(p.pid)


if __name__ == "__main__":
    main()
