#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A webhook receiver on 127.0.0.1 for notifyd's tests and benchmark.

  receiver.py PORT PORTFILE LOG KEYFILE MODEFILE

Listens on PORT (0: any; the port is written to PORTFILE), checks each
POST as Standard Webhooks says (webhook-id, webhook-timestamp within
5 minutes, webhook-signature "v1,<base64 HMAC-SHA256 of id.ts.body>"
with KEYFILE's whsec_ secret, or, when KEYFILE holds a whpk_ public
key, "v1a,<base64 Ed25519 signature of id.ts.body>", checked with
python3-cryptography), answers 401 to a bad one, and appends one JSON
line per request to LOG: id, ts, valid, signature, code (the answer), type,
received (time.time()), body.  MODEFILE, read per request, says how to answer a good one:
"ok" (200), "500", "500 PATH" (500 on PATH, 200 elsewhere), or "slow S"
(200 after S seconds).
"""

import base64
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, PORTFILE, LOG, KEYFILE, MODEFILE = sys.argv[1:6]
KEYTEXT = open(KEYFILE).read().strip()
if KEYTEXT.startswith("whpk_"):
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PublicKey)
    VERSION = "v1a"
    PUBLIC = Ed25519PublicKey.from_public_bytes(
        base64.b64decode(KEYTEXT[len("whpk_"):]))
else:
    VERSION = "v1"
    KEY = base64.b64decode(KEYTEXT[len("whsec_"):])
LOCK = threading.Lock()


def signed(content, value):
    """True when value, a signature's base64, is content's under KEYFILE."""
    if VERSION == "v1":
        want = base64.b64encode(hmac.new(KEY, content,
                                         hashlib.sha256).digest())
        return hmac.compare_digest(value.encode(), want)
    try:
        PUBLIC.verify(base64.b64decode(value, validate=True), content)
        return True
    except (InvalidSignature, ValueError):
        return False


def verify(msg_id, ts, body, header):
    """True when one signature of header, of KEYFILE's version, is
    id.ts.body's."""
    try:
        if abs(time.time() - int(ts)) > 300:
            return False
    except (TypeError, ValueError):
        return False
    content = msg_id.encode() + b"." + ts.encode() + b"." + body
    for sig in (header or "").split(" "):
        version, _, value = sig.partition(",")
        if version == VERSION and signed(content, value):
            return True
    return False


def mode():
    try:
        return open(MODEFILE).read().split()
    except OSError:
        return ["ok"]


class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        msg_id = self.headers.get("webhook-id", "")
        ts = self.headers.get("webhook-timestamp", "")
        valid = verify(msg_id, ts, body, self.headers.get("webhook-signature"))
        try:
            kind = json.loads(body).get("type")
        except ValueError:
            kind = None
        m = mode()
        if not valid:
            code = 401
        elif m[0] == "500" and (len(m) == 1 or m[1] == self.path):
            code = 500
        else:
            code = 200
        with LOCK, open(LOG, "a") as f:
            f.write(json.dumps({"id": msg_id, "ts": ts, "valid": valid,
                                "signature":
                                self.headers.get("webhook-signature"),
                                "code": code, "type": kind,
                                "received": time.time(),
                                "body": body.decode(errors="replace")})
                    + "\n")
        if code == 200 and m[0] == "slow":
            time.sleep(float(m[1]))
        try:
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()
        except OSError:
            pass

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", int(PORT)), Hook)
    tmp = PORTFILE + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, PORTFILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
