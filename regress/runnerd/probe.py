# SPDX-License-Identifier: ISC
"""Runs inside a sandbox (fed to python3 on stdin) and prints one
"name=value" line per observation for rd.subr's checks to match.

  net HOSTADDR TCPPORT UDPPORT   interfaces, TCP and DNS to the host
  proxy TARGET...                HTTP CONNECT through the egress proxy
  direct HOST PORT               a plain TCP connection
  fanout TARGET N SECONDS        N relays through the proxy at once
  idle TARGET SECONDS            when the proxy closes an idle relay
  threads                        threads, posix_spawn, subprocess
  userns                         unshare, clone, clone3 with CLONE_NEWUSER
"""
import concurrent.futures
import ctypes
import errno
import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

CLONE_NEWUSER = 0x10000000
SIGCHLD = 17


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


def fanout(target, n, hold):
    """n connections through the proxy at once, held for hold seconds;
    how many were relayed."""
    req = b"CONNECT %s HTTP/1.1\r\n\r\n" % target.encode()
    socks, got = [], {}
    for _ in range(int(n)):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", 3128))
        socks.append(s)
    unsent = set(socks)
    end = time.monotonic() + float(hold)
    while time.monotonic() < end:
        _, w, _ = select.select([], list(unsent), [], 0.1)
        for s in w:
            try:
                s.send(req)
            except OSError:
                pass
            unsent.discard(s)
        r, _, _ = select.select([s for s in socks if s not in unsent], [],
                                [], 0.1)
        for s in r:
            try:
                got[s] = got.get(s, b"") + s.recv(4096)
            except OSError:
                pass
    print("fanout_opened=%d" % len(socks))
    print("fanout_relayed=%d" % sum(b"hello-" in d for d in got.values()))


def idle(target, wait):
    """One relay left idle: seconds until the proxy closes it."""
    s = socket.create_connection(("127.0.0.1", 3128), timeout=float(wait))
    s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % target.encode())
    t0, data = time.monotonic(), b""
    try:
        while True:
            d = s.recv(4096)
            if not d:
                print("idle_closed=%d" % (time.monotonic() - t0))
                break
            data += d
    except OSError:
        print("idle_closed=never")
    print("idle_relayed=%s" % (b"hello-" in data))


def outcome(fn):
    try:
        fn()
        return "ok"
    except Exception as e:
        return "failed:%s" % e


def command(*argv):
    r = subprocess.run(argv, capture_output=True)
    if r.returncode != 0:
        raise OSError("%s exited %d" % (argv[0], r.returncode))


def thread():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()


def futures():
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        if sum(ex.map(abs, (-1, -2, -3))) != 6:
            raise OSError("wrong sum")


def spawn():
    pid = os.posix_spawn("/bin/true", ["true"], {})
    if os.waitpid(pid, 0)[1] != 0:
        raise OSError("true failed")


def many_threads(n=24):
    """n threads alive at once, each with its malloc arena: 20 could not
    start under an address-space cap of 512 MiB."""
    barrier = threading.Barrier(n + 1)

    def hold():
        kept = [bytearray(300000) for _ in range(3)]
        try:
            barrier.wait()
            barrier.wait()
        except threading.BrokenBarrierError:
            pass    # a later thread could not start
        del kept

    ts = [threading.Thread(target=hold) for _ in range(n)]
    started = []
    try:
        for t in ts:
            t.start()
            started.append(t)
        barrier.wait()
        barrier.wait()
    except RuntimeError:
        barrier.abort()     # the started ones leave
        raise
    finally:
        for t in started:
            t.join()


def threads():
    print("thread=" + outcome(thread))
    print("many_threads=" + outcome(many_threads))
    print("futures=" + outcome(futures))
    print("posix_spawn=" + outcome(spawn))
    print("subprocess=" + outcome(lambda: command("true")))


def output(argv, want, cwd):
    """argv's stdout is want, its stderr empty, and it exits 0."""
    r = subprocess.run(argv, capture_output=True, cwd=cwd, timeout=20)
    if r.returncode != 0 or r.stdout != want or r.stderr:
        raise OSError("exited %d: %r %r" % (r.returncode, r.stdout,
                                             r.stderr[:200]))


def coreutils():
    """What agents run most, on a tree of their own: coreutils 9.1 asks
    statx for AT_NO_AUTOMOUNT, which this runsc refuses; owners by name
    (the root's /etc/passwd and /etc/group); cc and awk, which are links
    through /etc/alternatives; localhost from /etc/hosts; services and
    protocols by name (/etc/services, /etc/protocols); Debian's
    sitecustomize.py, a link into /etc/python3.11; a process pool, whose
    locks are POSIX semaphores in /dev/shm."""
    top = tempfile.mkdtemp()
    os.mkdir(os.path.join(top, "a"))
    with open(os.path.join(top, "a", "f"), "w") as f:
        f.write("hello")
    os.chmod(os.path.join(top, "a", "f"), 0o600)
    checks = (("ls", ["ls", "a"], b"f\n"),
              ("ls_root", ["ls", "-d", "/"], b"/\n"),
              ("ls_l", ["sh", "-c", "ls -l a/f | cut -c1-10"],
               b"-rw-------\n"),
              ("stat", ["stat", "-c", "%s:%F", "a/f"], b"5:regular file\n"),
              ("cp_a", ["sh", "-c", "cp -a a b && ls b"], b"f\n"),
              ("du", ["du", "-b", "a/f"], b"5\ta/f\n"),
              ("find", ["find", "a", "-print0"], b"a\0a/f\0"),
              ("owner", ["sh", "-c", "ls -l a/f | awk '{print $3 \":\" $4}'"],
               b"nobody:nogroup\n"),
              ("id", ["id", "-un"], b"nobody\n"),
              ("cc", ["sh", "-c", "command -v cc"], b"/usr/bin/cc\n"),
              ("localhost", ["python3", "-c", "import socket; print("
                             "socket.gethostbyname('localhost'))"],
               b"127.0.0.1\n"),
              ("services", ["python3", "-c", "import socket; print("
                            "socket.getservbyname('http', 'tcp'), "
                            "socket.getprotobyname('tcp'))"], b"80 6\n"),
              ("sitecustomize", ["/usr/bin/python3", "-c",
                                 "import sitecustomize"], b""),
              ("process_pool", ["python3", "-c", "import concurrent.futures "
                                "as f\nwith f.ProcessPoolExecutor(2) as p: "
                                "print(sum(p.map(abs, [-1, -2])))"], b"3\n"))
    for name, argv, want in checks:
        print("%s=%s" % (name, outcome(lambda: output(argv, want, top))))


def forked(name, r):
    """A raw clone's result: the child leaves at once."""
    if r == 0:
        os._exit(0)
    if r > 0:
        os.waitpid(r, 0)
        print("%s=succeeded" % name)
    else:
        print("%s=refused" % name)
        print("%s_errno=%s" % (name, errno.errorcode.get(ctypes.get_errno())))


def userns():
    libc = ctypes.CDLL(None, use_errno=True)
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    r = subprocess.run(["unshare", "-U", "true"], capture_output=True)
    print("unshare_cmd=" + ("succeeded" if r.returncode == 0 else "refused"))
    forked("clone_newuser", syscall(56, ctypes.c_ulong(CLONE_NEWUSER |
                                                       SIGCHLD), 0, 0, 0, 0))
    # struct clone_args: flags, pidfd, child_tid, parent_tid, exit_signal,
    # stack, stack_size, tls
    args = ctypes.create_string_buffer(struct.pack("=8Q", CLONE_NEWUSER, 0,
                                                   0, 0, SIGCHLD, 0, 0, 0))
    forked("clone3_newuser", syscall(435, args, ctypes.c_size_t(64)))


def main():
    what = sys.argv[1]
    if what == "threads":
        threads()
    elif what == "userns":
        userns()
    elif what == "coreutils":
        coreutils()
    elif what == "net":
        net(*sys.argv[2:5])
    elif what == "proxy":
        for t in sys.argv[2:]:
            print("proxy_%s=%s" % (t, proxy(t)))
    elif what == "fanout":
        fanout(*sys.argv[2:5])
    elif what == "idle":
        idle(*sys.argv[2:4])
    elif what == "direct":
        print("direct=" + tcp(sys.argv[2], sys.argv[3]))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
