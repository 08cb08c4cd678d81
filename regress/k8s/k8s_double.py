#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A Kubernetes API server double for agent-sandbox's tests (Python 3
standard library only).  It serves HTTPS on 127.0.0.1, or the address of
--bind (the port is chosen by the kernel and written to STATE/port) with
the certificate it is given.

Contract, written from the Kubernetes API reference:
  API concepts (paths, list/watch, resourceVersion, 410 Gone, DELETE and
  propagationPolicy):
    https://kubernetes.io/docs/reference/using-api/api-concepts/
    https://kubernetes.io/docs/concepts/architecture/garbage-collection/
  Status errors:
    https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/status/
  Watch events (newline-delimited {"type","object"}; a resourceVersion
  older than the resource's history is an ERROR event carrying a 410
  Expired Status in a 200 stream):
    https://kubernetes.io/docs/reference/kubernetes-api/definitions/watch-event-v1-meta/
    https://kubernetes.io/docs/reference/using-api/api-concepts/#410-gone-responses
  Field errors (422 causes: the message without the field) and the
  decoder's 400:
    https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#response-status-kind
  PATCH (merge, strategic merge, JSON patch; k8s_patch.py):
    https://kubernetes.io/docs/reference/using-api/api-concepts/#patch-and-apply
  Events (the job controller's FailedCreate):
    https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/event-v1/
  Jobs: https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/job-v1/
        https://kubernetes.io/docs/concepts/workloads/controllers/job/
  Pods and pods/log:
        https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/
  PersistentVolumeClaims (binding, subPath):
        https://kubernetes.io/docs/concepts/storage/persistent-volumes/
        https://kubernetes.io/docs/concepts/storage/volumes/#using-subpath
  Secrets, ServiceAccounts:
        https://kubernetes.io/docs/reference/kubernetes-api/config-and-storage-resources/secret-v1/
        https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/service-account-v1/
  TokenRequest:
        https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-request-v1/
  RBAC: https://kubernetes.io/docs/reference/access-authn-authz/rbac/
  X.509 client certificates:
        https://kubernetes.io/docs/reference/access-authn-authz/authentication/#x509-client-certificates
  Pod Security:
        https://kubernetes.io/docs/concepts/security/pod-security-standards/
        https://kubernetes.io/docs/concepts/security/pod-security-admission/
  What Vault's kubernetes secrets engine does with it (creates a
  ServiceAccount, Role and RoleBinding, requests a token; deletes them on
  revocation):
        https://developer.hashicorp.com/vault/docs/secrets/kubernetes

Served (core v1, batch/v1, rbac.authorization.k8s.io/v1,
authorization.k8s.io/v1): discovery (/api, /apis, /api/v1, /apis/G/V,
/version); namespaces, pods, pods/log, secrets, persistentvolumeclaims,
serviceaccounts,
serviceaccounts/token, jobs, events, roles, rolebindings, clusterroles,
clusterrolebindings: create, get, list (labelSelector, fieldSelector),
watch (?watch=1), patch, delete (propagationPolicy in the query or the
DeleteOptions body), deletecollection; selfsubjectaccessreviews (what
`kubectl auth can-i` uses).  PUT is refused with 405.

As a real server (checked against a 1.24-era kube-apiserver): Pod
Security enforces on pods, so a Job whose template violates its
namespace's level is created with a `Warning: would violate PodSecurity
"restricted:latest": ...` header and its pods are refused (FailedCreate
events; the Job stays podless until activeDeadlineSeconds); validation
runs before admission; a Secret's bad base64 is the decoder's 400;
watch history is kept per resource.

Differences from a real API server, on purpose:
- no finalizers or graceful termination: a deleted object is gone at
  once, Foreground and Background both delete dependents before the
  answer (a Job deleted with no policy orphans its pods, as batch/v1
  does, with the same Warning header);
- JSON only, plus the protobuf bodies kubectl insists on for a few typed
  requests (k8s_proto.py); Table output for `kubectl get`; no /openapi,
  so `kubectl create -f` needs --validate=false; no PUT (405), no
  server-side apply (415); PATCH changes only labels and annotations,
  and on a Job its mutable spec fields (suspend, parallelism, deadlines);
  a Go struct in a field error's value is printed "T{...}";
- a request with neither a token nor a client certificate gets 401 (no
  anonymous user); tokens are
  HMAC-signed JWTs, not the cluster's keys; expirationSeconds is capped
  at 48h;
- a failed pod is never restarted in place (restartPolicy OnFailure
  behaves like Never): the Job makes a new pod, up to backoffLimit;
- one node, no scheduling, no images, no resource accounting; a pod
  "runs" the --runner program (below), whatever its image;
- no PersistentVolumes: a claim is bound at once to a directory of its
  own, STATE/claims/NAMESPACE/NAME (kept when the claim goes), and a pod
  stays Pending until its claims are bound; the mounts themselves
  (subPath, readOnly, mount points the runtime makes) are the runner's
  to make, and path_runner.py makes them as the kubelet does.

Options: --cert --key (PEM), --client-ca FILE (X.509 client
certificates signed by it authenticate as their subject's CN, with its
O values as groups, as --client-ca-file does), --state DIR,
--admin-token-file FILE (the token of a system:masters user), --runner
PROGRAM (or $K8S_DOUBLE_RUNNER: run for each pod with the Pod JSON on
stdin, env K8S_DOUBLE_VOLUMES (a directory with one sub-directory per
secret/emptyDir volume, secret keys as files, and a link to the claim's
directory per claim volume), K8S_DOUBLE_NAMESPACE, K8S_DOUBLE_POD;
stdout and stderr become the pod's log, the exit status the
container's; none: every pod succeeds with an empty log), --seed FILE (a
JSON List of objects created at start as the admin), --audience (the
API server's token audience), --events-kept N (watch history kept per
resource; older resourceVersions get 410 Gone), --no-agent-sandbox (the
cluster without agent-sandbox's CRDs), --agent-sandbox-version v1alpha1
(CRDs that serve only v1alpha1).  The agent-sandbox kinds, their
controllers and pods/exec are k8s_sandbox.py's.

STATE/fault, read on every request, one line: MODE [ARG] [path=REGEX]
[method=METHOD]; the fault applies to requests matching both filters:
  down            the connection is closed without an answer
  403             every authenticated request is Forbidden
  409             every create answers AlreadyExists
  podsecurity     Pod Security answers as if a created pod or Job
                  template violated restricted (the Job's warning, a
                  pod's 403); the Job's pods are still made
  slow SECONDS    the answer is delayed
  watch-close N   a watch is cut (no final chunk) after N events (def. 1)
STATE/oom-killed, while it exists, makes a container whose process
group was killed by SIGKILL end as gVisor's sandbox did when the kernel
killed it on the real node: exitCode 255, reason Error; holding the
word OOMKilled, as the kubelet reports an OOM kill the runtime saw:
exitCode 137, reason OOMKilled.  pods/log with follow=true streams the
log as it is written, until the container has ended.
STATE/pod-groups/PGID exists while a pod's process group runs (the
double kills them on SIGTERM; after a SIGKILL, k8s.subr does).
STATE/requests.jsonl gets one line per request: method, path, query, user,
verb, code (never a header or a body).
"""

import argparse
import http.server
import json
import os
import re
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True

import k8s_authz  # noqa: E402
import k8s_patch  # noqa: E402
import k8s_proto  # noqa: E402
import k8s_sandbox  # noqa: E402
from k8s_api import Api, ApiError, Route, out, route_of, selector, \
    status, table, verb_of  # noqa: E402
from k8s_store import RESOURCES, Controller, Store, group_of  # noqa: E402

PUBLIC = {"/version", "/healthz", "/livez", "/readyz"}
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public",
                      "kube-node-lease")


def client_cert_user(conn):
    """The user of a verified client certificate (--client-ca): its
    subject's common name, its organizations as groups; else None."""
    cert = conn.getpeercert() if hasattr(conn, "getpeercert") else None
    if not cert:
        return None
    attrs = [a for rdn in cert.get("subject", ()) for a in rdn]
    names = [v for k, v in attrs if k == "commonName"]
    if not names:
        return None
    return k8s_authz.User(names[0], [v for k, v in attrs
                                     if k == "organizationName"] +
                          ["system:authenticated"])


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "k8s-double"
    code = user = verb = None

    def log_message(self, fmt, *args):
        pass    # requests.jsonl has what tests need; never the headers

    def reply(self, code, body, warning=None):
        if isinstance(body, bytes):
            data, ctype = body, "text/plain"
        else:
            data, ctype = json.dumps(body).encode(), "application/json"
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        if warning:
            self.send_header("Warning", warning)
        self.end_headers()
        self.wfile.write(data)
        self.code = code

    def body(self):
        raw = self.raw
        if not raw:
            return {}
        if self.headers.get("Content-Type", "").startswith(
                "application/vnd.kubernetes.protobuf"):
            try:
                return k8s_proto.decode(raw)
            except (ValueError, IndexError) as e:
                raise ApiError(415, "UnsupportedMediaType", str(e))
        try:
            obj = json.loads(raw)
        except ValueError as e:
            raise ApiError(400, "BadRequest", "the body of the request was "
                           "in an unknown format: %s" % e)
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the body is not an object")
        return obj

    def patch_body(self):
        """{"type", "patch"} of a PATCH.  When no route takes it, the
        API server answers a Content-Type that is not a patch type with
        415, and a request with neither Content-Type nor body with 406,
        as Status objects with empty details (a 1.24 kube-apiserver,
        checked by hand).
        https://kubernetes.io/docs/reference/using-api/api-concepts/#patch-and-apply
        """
        ptype = self.headers.get("Content-Type", "").split(";")[0].strip()
        if ptype not in k8s_patch.TYPES:
            if self.raw:
                raise ApiError(415, "UnsupportedMediaType",
                               "415: Unsupported Media Type", {})
            raise ApiError(406, "NotAcceptable", "406: Not Acceptable", {})
        if ptype == k8s_patch.APPLY:
            raise ApiError(415, "UnsupportedMediaType", "the double does "
                           "not serve server-side apply")
        try:
            return {"type": ptype,
                    "patch": k8s_patch.decode(ptype, self.raw)}
        except k8s_patch.PatchError as e:
            raise ApiError(e.code, "Invalid" if e.code == 422 else
                           "BadRequest", str(e), e.details)

    def fault(self, method, path):
        try:
            with open(os.path.join(self.server.state, "fault")) as f:
                words = f.read().split()
        except FileNotFoundError:
            return []
        filters = dict(w.split("=", 1) for w in words if "=" in w)
        if "path" in filters and not re.search(filters["path"], path):
            return []
        if filters.get("method", method) != method:
            return []
        return [w for w in words if "=" not in w]

    def record(self, method, url):
        entry = {"method": method, "path": url.path, "query": url.query,
                 "user": self.user.name if self.user else None,
                 "verb": self.verb, "code": self.code}
        with self.server.log_lock, open(os.path.join(
                self.server.state, "requests.jsonl"), "a") as f:
            f.write(json.dumps(entry) + "\n")

    def drop(self):
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def handle_any(self, method):
        # Read the body before anything can fail: what is left unread
        # would be taken for the next request on this connection.
        n = int(self.headers.get("Content-Length") or 0)
        self.raw = self.rfile.read(n) if n > 0 else b""
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        fault = self.fault(method, url.path)
        if fault[:1] == ["down"]:
            return self.drop()
        if fault[:1] == ["slow"]:
            time.sleep(float(fault[1]) if len(fault) > 1 else 5)
        self.user = self.verb = self.code = None
        try:
            self.serve(method, url.path, query, fault)
        except ApiError as e:
            self.reply(e.code, e.status())
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        self.record(method, url)

    def serve(self, method, path, query, fault):
        api = self.server.api
        if path in PUBLIC and method == "GET":
            self.reply(200, {"major": "1", "minor": "32",
                             "gitVersion": "v1.32.0-k8s-double",
                             "platform": "linux/amd64"}
                       if path == "/version" else b"ok")
            return
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            self.user = user = api.authenticate(auth[7:].strip())
        else:
            self.user = user = client_cert_user(self.connection)
        if user is None:
            raise ApiError(401, "Unauthorized", "Unauthorized")
        kind, route = route_of(path)
        if kind == "discovery":
            self.verb = "get"
            return self.reply(*api.discovery(route,
                                             self.server.server_address[1]))
        self.verb = verb = verb_of(method, route, query)
        api.authorize(user, verb, route, forced_deny=fault[:1] == ["403"])
        if route.sub == "exec" and method == "GET":
            return k8s_sandbox.serve_exec(self, route, urllib.parse.parse_qsl(
                urllib.parse.urlsplit(self.path).query))
        if verb == "watch":
            return self.watch(route, query, fault)
        if route.sub == "log" and query.get("follow") == "true":
            return self.follow_log(route, query)
        if verb == "patch":
            body = self.patch_body()
            if isinstance(body, tuple):
                return self.reply(*body)
        else:
            body = self.body() if method in ("POST", "DELETE") else {}
        code, answer, warning = api.call(verb, user, route, query, body,
                                         fault)
        if verb in ("get", "list") and route.sub is None and \
                "as=Table" in self.headers.get("Accept", ""):
            answer = table(route.resource, answer)
        self.reply(code, answer, warning)

    # -- watch --

    def start_chunks(self, ctype):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.code = 200

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def watch(self, route, query, fault):
        store = self.server.store
        match = selector(query)
        cut = None
        if fault[:1] == ["watch-close"]:
            cut = int(fault[1]) if len(fault) > 1 else 1
        end = time.time() + float(query.get("timeoutSeconds") or 1800)

        def wanted(obj):
            return match(obj) and \
                route.ns in (None, obj["metadata"].get("namespace"))

        def since(rv):
            """The events after RV, or the 410 that ends the watch: an
            ERROR event in the 200 stream, as the watch cache answers."""
            events = store.events_after(route.resource, rv)
            if events is None:
                return [("ERROR", status(
                    410, "Expired", "too old resource version: %d (%d)"
                    % (rv, store.oldest(route.resource))))]
            return [(t, o) for _, t, o in events if wanted(o)]
        with store.lock:
            rv = query.get("resourceVersion")
            if rv in (None, "", "0"):
                # No resourceVersion: the current state as ADDED events.
                pending = [("ADDED", o) for o in store.all(route.resource,
                                                           route.ns)
                           if wanted(o)]
            elif not rv.isdigit():
                raise ApiError(400, "BadRequest", 'invalid resource '
                               'version: "%s"' % rv)
            else:
                pending = since(int(rv))
            last = store.rv
        self.start_chunks("application/json")
        sent = 0
        while True:
            if pending[-1:] and pending[-1][0] == "ERROR":
                end = 0
            for etype, obj in pending:
                if cut is not None and sent >= cut:
                    # Cut mid-stream: no terminating chunk, as when the
                    # API server or a proxy drops the connection.
                    return self.drop()
                if etype != "ERROR":
                    obj = out(route.resource, obj)
                self.chunk(json.dumps({"type": etype, "object": obj})
                           .encode() + b"\n")
                sent += 1
            if time.time() >= end:
                break
            with store.lock:
                store.changed.wait(min(1.0, max(0.0, end - time.time())))
                pending = since(last)
                last = store.rv
        self.chunk(b"")

    def follow_log(self, route, query):
        """pods/log with follow=true: the log as the container writes
        it, the stream ended once the container has (the kubelet checks
        the runtime's state when the log file stays quiet)."""
        api, store = self.server.api, self.server.store
        key = (route.ns, route.name)
        with store.lock:
            pod = store.peek("pods", route.ns, route.name)
            if pod is None:
                raise not_found("pods", route.name)
            api.pod_log(pod, {k: v for k, v in query.items()
                              if k == "container"})
        self.start_chunks("text/plain")
        sent = 0
        while True:
            with store.lock:
                logs = api.controller.logs.get(key, b"")
                pod = store.peek("pods", route.ns, route.name)
                ended = pod is None or any(
                    "terminated" in cs.get("state", {}) for cs in
                    pod["status"].get("containerStatuses", []))
                if len(logs) <= sent and not ended:
                    store.changed.wait(1.0)
                    continue
            if len(logs) > sent:
                self.chunk(logs[sent:])
                sent = len(logs)
            elif ended:
                break
        self.chunk(b"")

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_PATCH(self):
        self.handle_any("PATCH")


def seed(api, path):
    """The default namespaces, then the objects of a JSON List, created
    through the same path as a POST by an admin."""
    objs = [{"kind": "Namespace", "metadata": {"name": n}}
            for n in DEFAULT_NAMESPACES]
    if path:
        with open(path) as f:
            items = json.load(f)
        objs += items.get("items", []) if isinstance(items, dict) else items
    admin = k8s_authz.User("seed", [k8s_authz.MASTERS])
    for obj in objs:
        res = [r for r, v in RESOURCES.items()
               if v[2] == obj.get("kind") and "/" not in r][0]
        ns = obj.get("metadata", {}).get("namespace")
        route = Route(group_of(res), RESOURCES[res][1],
                      ["namespaces", ns, res] if ns else [res])
        api.call("create", admin, route, {}, obj, [])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--state", required=True)
    p.add_argument("--admin-token-file", required=True)
    p.add_argument("--runner", default=os.environ.get("K8S_DOUBLE_RUNNER"))
    p.add_argument("--seed")
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--client-ca")
    p.add_argument("--events-kept", type=int, default=2000)
    p.add_argument("--no-agent-sandbox", action="store_true",
                   help="without the agent-sandbox CRDs (k8s_sandbox.py)")
    p.add_argument("--agent-sandbox-version", default=k8s_sandbox.VERSION,
                   choices=[k8s_sandbox.VERSION, "v1alpha1"],
                   help="the one version the agent-sandbox CRDs serve")
    p.add_argument("--audience",
                   default="https://kubernetes.default.svc.cluster.local")
    a = p.parse_args()
    with open(a.admin_token_file) as f:
        admin_token = f.read().strip()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    if a.client_ca:
        # A certificate is asked for, not required: tokens still work.
        ctx.load_verify_locations(a.client_ca)
        ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    srv = http.server.ThreadingHTTPServer((a.bind, 0), Handler)
    srv.daemon_threads = True
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.state = a.state
    srv.log_lock = threading.Lock()
    crds = None if a.no_agent_sandbox else a.agent_sandbox_version
    k8s_sandbox.register(RESOURCES, crds)
    srv.store = Store(a.events_kept)
    srv.api = Api(srv.store, k8s_authz.Tokens(admin_token, a.audience),
                  Controller(srv.store, a.state, a.runner))
    srv.sandboxes = k8s_sandbox.SandboxController(
        srv.store, srv.api.controller, crds == k8s_sandbox.VERSION)
    seed(srv.api, a.seed)
    tmp = os.path.join(a.state, "port.new")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(a.state, "port"))
    def stop(signum, frame):
        srv.sandboxes.kill_all()
        srv.api.controller.kill_all()
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
