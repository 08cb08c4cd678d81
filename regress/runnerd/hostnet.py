#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Test listeners on this machine's own addresses, for rd.subr.

  hostnet.py addr                  prints this host's first non-loopback IPv4
  hostnet.py serve PORTFILE TCP... UDP:PORT...
      TCP: a listener on 0.0.0.0 that greets with "hello-PORT";
      UDP:PORT: a responder on 0.0.0.0 that echoes every datagram.
      Port 0 picks a free port; the ports chosen go to PORTFILE.
Nothing here ever sends to another machine.
"""
import socket
import subprocess
import sys
import os
import threading


def host_addr():
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        return line.split()[3].split("/")[0]
    return ""


def tcp_server(sock):
    port = sock.getsockname()[1]
    while True:
        c, _ = sock.accept()
        try:
            c.sendall(b"hello-%d\n" % port)
        finally:
            c.close()


def hold_server(sock):
    """Says hello and keeps every connection open, silent, for relays
    that stay up."""
    port, held = sock.getsockname()[1], []
    while True:
        c, _ = sock.accept()
        c.sendall(b"hello-%d\n" % port)
        held.append(c)


def udp_server(sock):
    while True:
        data, peer = sock.recvfrom(512)
        sock.sendto(data, peer)


def main():
    if sys.argv[1] == "addr":
        print(host_addr())
        return
    ports = []
    for spec in sys.argv[3:]:
        if spec.startswith("UDP:"):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("0.0.0.0", int(spec[4:])))
            target = udp_server
        else:
            hold = spec.startswith("HOLD:")
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("0.0.0.0", int(spec[5:] if hold else spec)))
            s.listen(512 if hold else 16)
            target = hold_server if hold else tcp_server
        ports.append(str(s.getsockname()[1]))
        threading.Thread(target=target, args=(s,), daemon=True).start()
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(" ".join(ports) + "\n")

    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    threading.Event().wait()


if __name__ == "__main__":
    main()
