#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""k8s_req.py [-t TOKEN] [-H HEADER]... METHOD PATH [BODY-FILE]: one
request to the double at https://127.0.0.1:$(cat state/port) with the test
CA; prints the status code on the first line and the body after it; the
Warning header, if any, goes to stderr.  Exits 0 on any HTTP answer, 1
when the connection fails or the answer is cut short.  The tests' curl,
without depending on curl.  A body is sent as application/json unless a
-H Content-Type says otherwise.
"""

import argparse
import http.client
import ssl
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-t", "--token", default=None)
    p.add_argument("-H", "--header", action="append", default=[])
    p.add_argument("--ca", default="ca.pem")
    p.add_argument("--port-file", default="state/port")
    p.add_argument("method")
    p.add_argument("path")
    p.add_argument("body", nargs="?")
    a = p.parse_args()
    with open(a.port_file) as f:
        port = int(f.read())
    ctx = ssl.create_default_context(cafile=a.ca)
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx,
                                       timeout=30)
    headers = {"Accept": "application/json"}
    if a.token is not None:
        headers["Authorization"] = "Bearer " + a.token
    for h in a.header:
        k, _, v = h.partition(":")
        headers[k.strip()] = v.strip()
    body = None
    if a.body:
        with open(a.body, "rb") as f:
            body = f.read()
        headers.setdefault("Content-Type", "application/json")
    try:
        conn.request(a.method, a.path, body=body, headers=headers)
        resp = conn.getresponse()
        print(resp.status)
        if resp.getheader("Warning"):
            print(resp.getheader("Warning"), file=sys.stderr)
        # read1, not readline: readline hides a chunked stream cut short
        # (http.client's peek swallows IncompleteRead) and a watch test
        # must see that.
        while True:
            data = resp.read1(65536)
            if not data:
                break
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
    except (OSError, http.client.HTTPException) as e:
        sys.stdout.flush()
        print("k8s_req: %s" % (e or type(e).__name__), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
