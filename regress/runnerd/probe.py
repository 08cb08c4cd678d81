"""Runs inside a sandbox (fed to python3 on stdin) and prints one
"name=value" line per observation for rd.subr's checks to match.

  net HOSTADDR TCPPORT UDPPORT   interfaces, TCP and DNS to the host
  proxy TARGET...                HTTP CONNECT through the egress proxy
  direct HOST PORT               a plain TCP connection
"""
import os
import socket
import struct
import sys


def tcp(host, port):
    try:
        s = socket.create_connection((host, int(port)), timeout=3)
        data = s.recv(64)
        s.close()
        return "open:" + data.decode(errors="replace").strip()
    except OSError as e:
        return "failed:%s" % (e.strerror or e)


def dns_query(host, port):
    # A query for "verify.test" A, to a responder the test runs on the host.
    q = struct.pack(">HHHHHH", 0x4153, 0x0100, 1, 0, 0, 0)
    q += b"\x06verify\x04test\x00" + struct.pack(">HH", 1, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    try:
        s.sendto(q, (host, int(port)))
        s.recv(512)
        return "answered"
    except OSError as e:
        return "failed:%s" % (e.strerror or e)


def resolve(name):
    try:
        socket.getaddrinfo(name, 80)
        return "resolved"
    except OSError as e:
        return "failed:%s" % e


def net(hostaddr, tport, uport):
    names = sorted(n for _, n in socket.if_nameindex())
    print("interfaces=" + ",".join(names))
    print("tcp_loopback=" + tcp("127.0.0.1", tport))
    print("tcp_host=" + tcp(hostaddr, tport))
    print("dns_loopback=" + dns_query("127.0.0.1", uport))
    print("dns_host=" + dns_query(hostaddr, uport))
    print("resolve=" + resolve("example.com"))


def proxy(target):
    try:
        s = socket.create_connection(("127.0.0.1", 3128), timeout=3)
        s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" %
                  (target.encode(), target.encode()))
        data = b""
        while True:
            d = s.recv(4096)
            if not d:
                break
            data += d
        lines = data.decode(errors="replace").split("\r\n")
        return "%s|%s" % (lines[0], lines[-1].strip())
    except OSError as e:
        return "failed:%s" % (e.strerror or e)


def main():
    what = sys.argv[1]
    if what == "net":
        net(*sys.argv[2:5])
    elif what == "proxy":
        for t in sys.argv[2:]:
            print("proxy_%s=%s" % (t, proxy(t)))
    elif what == "direct":
        print("direct=" + tcp(sys.argv[2], sys.argv[3]))
    sys.stdout.flush()
    os._exit(0)


main()
