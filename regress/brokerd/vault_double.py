#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A Vault API double for brokerd's tests (Python 3 standard library).

Serves HTTPS with the certificate it is given and implements what
brokerd uses, as Vault's API documentation describes it:

  GET  /v1/sys/health          200 {"initialized","sealed","standby",...};
                               unauthenticated
       https://developer.hashicorp.com/vault/api-docs/system/health
  POST /v1/<mount>/creds/<role> {"kubernetes_namespace", "ttl"}
                               -> {"lease_id","lease_duration","renewable",
                               "data": {"service_account_name",
                               "service_account_namespace",
                               "service_account_token"}}
       https://developer.hashicorp.com/vault/api-docs/secret/kubernetes
  POST /v1/<mount>/sts/<role>  {"ttl"} -> data {"access_key","secret_key",
                               "security_token"}
       https://developer.hashicorp.com/vault/api-docs/secret/aws
  PUT  /v1/sys/leases/revoke   {"lease_id"} -> 204 (also for a lease that is
                               gone, as Vault does)
  PUT  /v1/sys/leases/lookup   {"lease_id"} -> {"data": {"id","issue_time",
                               "expire_time","last_renewal","renewable",
                               "ttl"}}, 400 {"errors":["invalid lease"]}
       https://developer.hashicorp.com/vault/api-docs/system/leases

Every other endpoint wants the X-Vault-Token header to equal the token
file's contents, else 403 {"errors":["permission denied"]}.  Errors are
Vault-shaped: {"errors": [...]}.

With --kubernetes URL (and --kubernetes-token-file, --kubernetes-ca,
--roles-dir), the kubernetes engine works as Vault's does against a real
cluster: for role R (ROLES-DIR/R.json, Vault's role fields) it checks
allowed_kubernetes_namespaces, creates a ServiceAccount, a Role with
generated_role_rules and a RoleBinding in the namespace, asks the
TokenRequest API for the token (expirationSeconds = ttl), and deletes the
three objects when the lease is revoked.
       https://developer.hashicorp.com/vault/docs/secrets/kubernetes
Without it (the default), tokens are minted locally.

State directory (--state):
  port         written once listening (the port is chosen by the kernel)
  fault        read on every request: "" | down | 403 | 500 | slow SECONDS
  hold         read by credential requests: while it names the request's
               kubernetes_namespace (or "*"), one a line, the request waits
               (at most 60 s); remove the file or the name to release it
  held         appended: the namespace of each request that waits on hold
  leases.jsonl appended: {"op":"mint",...} and {"op":"revoke",...}

VAULT_DOUBLE_DELAY_MS in the environment delays every credential
request (creds/, sts/) by that many milliseconds.

hold and VAULT_DOUBLE_DELAY_MS are test affordances, not Vault
behaviour: they make a slow issue that tests and benchmarks can place.
The double serves each connection in its own thread (the TLS handshake
included), so that a held request holds up no other.
"""

import argparse
import datetime
import http.client
import http.server
import json
import os
import re
import secrets
import socket
import ssl
import sys
import threading
import time
import urllib.parse

CREDS = re.compile(r"^/v1/(.+)/(creds|sts)/([^/]+)$")
HOLD_MAX = 60
DELAY_MS = int(os.environ.get("VAULT_DOUBLE_DELAY_MS") or 0)


class Double:
    def __init__(self, state, token_file, sa_token_prefix, kube=None):
        self.state = state
        self.token_file = token_file
        self.prefix = sa_token_prefix
        self.lock = threading.Lock()
        self.leases = {}
        self.kube = kube
        self.objects = {}       # lease id -> [object paths in the cluster]

    def token(self):
        with open(self.token_file) as f:
            return f.read().strip()

    def fault(self):
        try:
            with open(os.path.join(self.state, "fault")) as f:
                return f.read().split()
        except FileNotFoundError:
            return []

    def held(self, ns):
        try:
            with open(os.path.join(self.state, "hold")) as f:
                names = f.read().split()
        except FileNotFoundError:
            return False
        return "*" in names or ns in names

    def hold(self, ns):
        """The test affordances: a fixed delay, then any hold on ns."""
        time.sleep(DELAY_MS / 1000)
        if not self.held(ns):
            return
        with self.lock, open(os.path.join(self.state, "held"), "a") as f:
            f.write("%s\n" % ns)
        end = time.monotonic() + HOLD_MAX
        while self.held(ns) and time.monotonic() < end:
            time.sleep(0.02)

    def record(self, entry):
        with self.lock, open(os.path.join(self.state, "leases.jsonl"),
                             "a") as f:
            f.write(json.dumps(entry) + "\n")


def parse_ttl(v, default=3600):
    if v is None or v == "":
        return default
    if isinstance(v, int):
        return v
    m = re.fullmatch(r"(\d+)([smh]?)", str(v))
    if not m:
        raise ValueError("invalid ttl %r" % v)
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def rfc3339(t):
    return datetime.datetime.fromtimestamp(
        t, datetime.timezone.utc).isoformat().replace("+00:00", "Z")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "vault-double"

    def setup(self):
        super().setup()
        # Headers and body go out in two writes: no Nagle wait between.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self):
        # Here, in this connection's thread, not in accept().
        try:
            self.connection.do_handshake()
        except OSError:
            return
        super().handle()

    def log_message(self, fmt, *args):
        pass    # the request line is enough noise; never the headers

    def reply(self, status, body=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, *msgs):
        self.reply(status, {"errors": list(msgs)})

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        return json.loads(raw) if raw else {}

    def handle_any(self, method):
        d = self.server.double
        fault = d.fault()
        if fault and fault[0] == "slow":
            time.sleep(float(fault[1]) if len(fault) > 1 else 5)
        elif fault and fault[0] == "down":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        try:
            body = self.body()
        except ValueError:
            return self.error(400, "failed to parse JSON input")
        if self.path.split("?")[0] == "/v1/sys/health" and method == "GET":
            if fault and fault[0] == "500":
                return self.error(500, "internal error")
            return self.reply(200, {
                "initialized": True, "sealed": False, "standby": False,
                "performance_standby": False, "version": "double",
                "cluster_name": "vault-double",
                "server_time_utc": int(time.time())})
        if self.headers.get("X-Vault-Token") != d.token() or \
                (fault and fault[0] == "403"):
            return self.error(403, "permission denied")
        if fault and fault[0] == "500":
            return self.error(500, "1 error occurred:\n\t* internal error")
        if self.path == "/v1/sys/leases/revoke" and method in ("PUT", "POST"):
            return self.revoke(body)
        if self.path == "/v1/sys/leases/lookup" and method in ("PUT", "POST"):
            return self.lookup(body)
        m = CREDS.match(self.path)
        if m and method in ("POST", "PUT", "GET"):
            return self.creds(m.group(1), m.group(2), m.group(3), body)
        return self.error(404)

    def creds(self, mount, kind, role, body):
        d = self.server.double
        try:
            ttl = parse_ttl(body.get("ttl"))
        except ValueError as e:
            return self.error(400, str(e))
        ns = body.get("kubernetes_namespace")
        if kind == "creds" and not ns:
            return self.error(400, "'kubernetes_namespace' is required")
        d.hold(ns)
        lease_id = "%s/%s/%s/%s" % (mount, kind, role, secrets.token_hex(12))
        now = time.time()
        if kind == "creds" and d.kube:
            try:
                data, paths = d.kube.mint(role, ns, ttl)
            except KubeError as e:
                return self.error(e.status, str(e))
            with d.lock:
                d.objects[lease_id] = paths
        elif kind == "creds":
            data = {"service_account_name": "v-token-%s-%s" % (
                        role, secrets.token_hex(4)),
                    "service_account_namespace": ns,
                    "service_account_token": "%s-%s" % (
                        d.prefix, secrets.token_hex(16))}
        else:
            data = {"access_key": "ASIA" + secrets.token_hex(8).upper(),
                    "secret_key": "%s-aws-%s" % (d.prefix,
                                                 secrets.token_hex(16)),
                    "security_token": "%s-sts-%s" % (d.prefix,
                                                     secrets.token_hex(16)),
                    "arn": "arn:aws:sts::000000000000:assumed-role/" + role}
        with d.lock:
            d.leases[lease_id] = (now, ttl)
        d.record({"op": "mint", "lease_id": lease_id, "namespace": ns,
                  "ttl": ttl, "role": role})
        self.reply(200, {"request_id": secrets.token_hex(16),
                         "lease_id": lease_id, "renewable": False,
                         "lease_duration": ttl, "data": data,
                         "wrap_info": None, "warnings": None, "auth": None})

    def revoke(self, body):
        d = self.server.double
        lease_id = body.get("lease_id")
        if not lease_id:
            return self.error(400, "lease_id is required")
        with d.lock:
            known = d.leases.pop(lease_id, None) is not None
            paths = d.objects.pop(lease_id, [])
        for path in paths:
            try:
                d.kube.request("DELETE", path)
            except KubeError as e:
                if e.status != 404:
                    return self.error(500, "revoke: %s" % e)
        d.record({"op": "revoke", "lease_id": lease_id, "known": known})
        self.reply(204)

    def lookup(self, body):
        d = self.server.double
        with d.lock:
            lease = d.leases.get(body.get("lease_id"))
        if lease is None:
            return self.error(400, "invalid lease")
        issued, ttl = lease
        left = max(0, int(issued + ttl - time.time()))
        self.reply(200, {"data": {
            "id": body["lease_id"], "issue_time": rfc3339(issued),
            "expire_time": rfc3339(issued + ttl), "last_renewal": None,
            "renewable": False, "ttl": left}})

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PUT(self):
        self.handle_any("PUT")


class KubeError(Exception):
    def __init__(self, status, msg):
        super().__init__(msg)
        self.status = status


class Kube:
    """What Vault's kubernetes engine does in the cluster, as the
    service account Vault is configured with (--kubernetes-token-file)."""

    def __init__(self, url, token_file, ca, roles_dir):
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port or 443
        self.token_file = token_file
        self.ctx = ssl.create_default_context(cafile=ca)
        self.roles_dir = roles_dir

    def request(self, method, path, body=None):
        with open(self.token_file) as f:
            token = f.read().strip()
        conn = http.client.HTTPSConnection(self.host, self.port,
                                           context=self.ctx, timeout=10)
        try:
            conn.request(method, path, body=json.dumps(body) if body else
                         None, headers={"Authorization": "Bearer " + token,
                                        "Content-Type": "application/json",
                                        "Accept": "application/json"})
            resp = conn.getresponse()
            data = json.loads(resp.read() or b"{}")
        except (OSError, ValueError, http.client.HTTPException) as e:
            raise KubeError(500, "kubernetes: %s" % e)
        finally:
            conn.close()
        if resp.status >= 300:
            raise KubeError(resp.status if resp.status < 500 else 500,
                            data.get("message", "HTTP %d" % resp.status))
        return data

    def mint(self, role, ns, ttl):
        try:
            with open(os.path.join(self.roles_dir, role + ".json")) as f:
                r = json.load(f)
        except (OSError, ValueError):
            raise KubeError(400, "role '%s' does not exist" % role)
        allowed = r.get("allowed_kubernetes_namespaces", [])
        if "*" not in allowed and ns not in allowed:
            raise KubeError(403, "kubernetes_namespace '%s' is not "
                            "allowed by role" % ns)
        name = "v-token-%s-%s" % (role[:16], secrets.token_hex(6))
        meta = {"name": name, "namespace": ns,
                "labels": r.get("extra_labels") or {}}
        base = "/api/v1/namespaces/%s" % ns
        rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/%s" % ns
        made = []
        try:
            self.request("POST", base + "/serviceaccounts", {
                "apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": meta})
            made.append("%s/serviceaccounts/%s" % (base, name))
            self.request("POST", rbac + "/roles", {
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": meta, "rules": json.loads(
                    r["generated_role_rules"])["rules"]})
            made.append("%s/roles/%s" % (rbac, name))
            self.request("POST", rbac + "/rolebindings", {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding", "metadata": meta,
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                            "kind": "Role", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": name,
                              "namespace": ns}]})
            made.append("%s/rolebindings/%s" % (rbac, name))
            tr = self.request("POST", "%s/serviceaccounts/%s/token" % (
                base, name), {"apiVersion": "authentication.k8s.io/v1",
                              "kind": "TokenRequest",
                              "spec": {"expirationSeconds": max(600, ttl)}})
        except KubeError:
            for path in reversed(made):
                try:
                    self.request("DELETE", path)
                except KubeError:
                    pass
            raise
        data = {"service_account_name": name,
                "service_account_namespace": ns,
                "service_account_token": tr["status"]["token"]}
        return data, list(reversed(made))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--token-file", required=True)
    p.add_argument("--state", required=True)
    p.add_argument("--sa-token-prefix", default="SATOKEN")
    p.add_argument("--kubernetes")
    p.add_argument("--kubernetes-token-file")
    p.add_argument("--kubernetes-ca")
    p.add_argument("--roles-dir")
    a = p.parse_args()
    kube = Kube(a.kubernetes, a.kubernetes_token_file, a.kubernetes_ca,
                a.roles_dir) if a.kubernetes else None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True,
                                 do_handshake_on_connect=False)
    srv.double = Double(a.state, a.token_file, a.sa_token_prefix, kube)
    tmp = os.path.join(a.state, "port.new")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(a.state, "port"))
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
