# SPDX-License-Identifier: ISC
"""The suite's wire (common/proto.h) for the Python test doubles and
clients under regress/: the one place outside common/ that knows it.

A frame is a 24-byte little-endian header (u32 type, u32 len,
u32 peerid, u16 version, u16 flags, u64 reqid) and len bytes of
payload; flag MSGF_FD says one descriptor rides with the frame
(SCM_RIGHTS, on its first byte).  Payloads given as a dict or a list
are sent as JSON.

Callers import it with the lib directory on sys.path, found from their
own __file__ (regress/ is copied as is into the build directory).
"""

import json
import socket
import struct

HDR = struct.Struct("<IIIHHQ")
VERSION = 1
MSGF_FD = 0x0001
ERROR = struct.Struct("<i256s")
PONG = struct.Struct("<16sII")

# common/proto.h's MSG_TYPES, by name (msg_type_name()); regress/common's
# t_proto checks that the two agree.
TYPES = {
    "NONE": 0, "PING": 1, "PONG": 2, "ERROR": 3,
    "TOOL_CALL": 100, "TOOL_CANCEL": 101, "TOOL_PROGRESS": 102,
    "TOOL_RESULT": 103, "TOOL_LOG": 104, "TOOL_AWAIT": 105, "PLAN_READ": 106,
    "PLAN": 107, "TOOL_CANCELLED": 108, "TASK_SAVE": 109, "TASK_LOAD": 110,
    "TASK_RECORD": 111,
    "DECIDE": 200, "DECISION": 201, "APPROVAL_REQUEST": 202,
    "APPROVAL_CREATED": 203, "APPROVAL_SPEND": 204, "APPROVAL_SPENT": 205,
    "APPROVAL_STATUS": 206, "APPROVAL_STATE": 207, "APPROVAL_WITHDRAW": 208,
    "CTL_LIST": 300, "CTL_SHOW": 301, "CTL_APPROVE": 302, "CTL_DENY": 303,
    "CTL_WATCH": 304, "CTL_ENTRY": 305, "CTL_END": 306,
    "CRED_ISSUE": 400, "CRED_ISSUED": 401, "CRED_REVOKE": 402,
    "CRED_REVOKED": 403,
    "AUDIT_EVENT": 500, "AUDIT_ACK": 501, "AUDIT_TAIL": 502,
    "AUDIT_SHOW": 503, "AUDIT_RECORD": 504, "AUDIT_END": 505,
    "AUDIT_ROTATE": 506, "AUDIT_STATS": 507,
    "RCTL_SESSIONS": 600, "RCTL_PUT": 601, "RCTL_GET": 602,
    "RCTL_ENTRY": 603, "RCTL_END": 604,
    "NOTIFY_HELLO": 700, "NOTIFY_EVENT": 701, "NOTIFY_ACK": 702,
    "LMSG_RUN": 900, "LMSG_KILL": 901, "LMSG_DONE": 902, "LMSG_SWEPT": 903,
    "LMSG_EGRESS_SOCKET": 904, "LMSG_SESSION_OPEN": 905,
    "LMSG_SESSION_CALL": 906, "LMSG_SESSION_CANCEL": 907,
    "LMSG_SESSION_CLOSE": 908, "LMSG_SESSION_READY": 909,
    "LMSG_SESSION_REPLY": 910, "LMSG_SESSION_ENDED": 911,
    "LMSG_JOURNAL_DONE": 912, "LMSG_PROGRESS": 913, "LMSG_CONFIG": 914,
    "AGENT_READY": 950, "AGENT_REQUEST": 951, "AGENT_REPLY": 952,
    "AGENT_CANCEL": 953,
    "CLAIM_SEED": 980, "CLAIM_COLLECT": 981, "CLAIM_REPLY": 982,
    "RENDER_PLAN": 985, "RENDER_REPLY": 986,
}
NAMES = {v: k for k, v in TYPES.items()}
# runnerd's internal groups keep their prefix in the name.
INTERNAL = ("LMSG_", "AGENT_", "CLAIM_", "RENDER_")


def symbol(name):
    """The name's symbol in proto.h: MSG_PING for PING."""
    return name if name.startswith(INTERNAL) else "MSG_" + name


# MSG_PING and the rest, under their symbols in proto.h.
globals().update({symbol(k): v for k, v in TYPES.items()})

# msg_error codes
ERR_DENIED, ERR_BADMSG, ERR_INTERNAL, ERR_UNAVAIL, ERR_NOSPACE = 1, 2, 3, 4, 5


def type_name(mtype):
    return NAMES.get(mtype, str(mtype))


SO_PASSRIGHTS = 83


def kernel_refuses_fds():
    """Whether this kernel lets a socket refuse descriptors (SO_PASSRIGHTS,
    Linux 6.16), as every daemon listener then does."""
    a, b = socket.socketpair()
    try:
        b.setsockopt(socket.SOL_SOCKET, SO_PASSRIGHTS, 0)
        return True
    except OSError:
        return False
    finally:
        a.close()
        b.close()


def _bytes(payload):
    if isinstance(payload, (dict, list)):
        return json.dumps(payload).encode()
    return payload


def pack(mtype, reqid, payload=b"", flags=0):
    """One whole frame."""
    payload = _bytes(payload)
    return HDR.pack(mtype, len(payload), 0, VERSION, flags, reqid) + payload


def error_pack(code, text):
    return ERROR.pack(code, text.encode()[:255])


def error_unpack(payload):
    """(code, text) of a MSG_ERROR payload."""
    code, text = ERROR.unpack(payload)
    return code, text.split(b"\0", 1)[0].decode()


def pong_pack(proc, pid):
    return PONG.pack(proc.encode(), pid, VERSION)


def recv_exact(sock, n):
    """n bytes, or None if the peer closes first."""
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def recv_frame(sock, fds=False):
    """(type, reqid, payload, fds), or None once the peer has closed.
    With fds, descriptors passed with the frame are returned (the caller
    closes them); without, the kernel drops any that come."""
    got = []
    if fds:
        hdr, got, _, _ = socket.recv_fds(sock, HDR.size, 1)
        if not hdr:
            return None
        rest = recv_exact(sock, HDR.size - len(hdr))
        hdr = None if rest is None else hdr + rest
    else:
        hdr = recv_exact(sock, HDR.size)
    if hdr is None:
        return None
    mtype, length, _, _, _, reqid = HDR.unpack(hdr)
    payload = recv_exact(sock, length)
    if payload is None:
        return None
    return mtype, reqid, payload, got


def send_frame(sock, mtype, reqid, payload=b"", fd=None):
    if fd is None:
        sock.sendall(pack(mtype, reqid, payload))
        return
    frame = pack(mtype, reqid, payload, MSGF_FD)
    sent = socket.send_fds(sock, [frame], [fd])
    sock.sendall(frame[sent:])


class Conn:
    """A client connection to a daemon socket, reading ahead so that
    pipelined replies cost one recv per many frames."""

    def __init__(self, path, fds=False):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.fds = fds
        self.buf = b""
        self.pending_fds = []

    def send(self, mtype, payload=b"", reqid=1, fd=None):
        send_frame(self.sock, mtype, reqid, payload, fd)

    def _fill(self, n):
        while len(self.buf) < n:
            if self.fds:
                chunk, fds, _, _ = socket.recv_fds(self.sock, 65536, 4)
                self.pending_fds += fds
            else:
                chunk = self.sock.recv(65536)
            if not chunk:
                return False
            self.buf += chunk
        return True

    def recv(self):
        """As recv_frame."""
        if not self._fill(HDR.size):
            return None
        mtype, length, _, _, flags, reqid = HDR.unpack(self.buf[:HDR.size])
        if not self._fill(HDR.size + length):
            return None
        payload = self.buf[HDR.size:HDR.size + length]
        self.buf = self.buf[HDR.size + length:]
        fds = []
        # Descriptors come in the order of the frames that carry them.
        if flags & MSGF_FD and self.pending_fds:
            fds.append(self.pending_fds.pop(0))
        return mtype, reqid, payload, fds

    def call(self, mtype, payload=b"", reqid=1, fd=None):
        """The reply; EOFError if the daemon hangs up instead."""
        self.send(mtype, payload, reqid, fd)
        reply = self.recv()
        if reply is None:
            raise EOFError("connection closed")
        return reply

    def close(self):
        self.sock.close()
