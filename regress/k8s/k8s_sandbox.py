# SPDX-License-Identifier: ISC
"""The agent-sandbox kinds in the Kubernetes API double, and pods/exec.

What the double learns here, written from kubernetes-sigs/agent-sandbox:
first v0.5.6 (the types in api/v1beta1/sandbox_types.go and
extensions/api/v1beta1/, the controllers in
controllers/sandbox_controller.go and extensions/controllers/
sandbox{claim,warmpool}_controller.go), then checked against the CRDs
(k8s/crds/*.yaml) of the newest snapshot reachable here, commit
2fd412d5 of 2026-08-22, just before v1.0.0 (the v1.0.0 and v1.0.1 tags
are not reachable from this machine).  There every kind stores v1beta1
and still serves v1alpha1, deprecated; the schemas the double checks
are in k8s_admission.CRD_SCHEMAS.

- Sandbox (agents.x-k8s.io/v1beta1): spec.podTemplate {metadata, spec};
  spec.operatingMode (Running, the default, or Suspended) replaced
  v1alpha1's spec.replicas; spec.service (boolean) opts in to the
  headless Service, which is otherwise not made.
  Its controller keeps one pod of that template, named after the
  Sandbox (annotation agents.x-k8s.io/pod-name when it tracks another
  name), owned by it, and made again when it is deleted.  Condition
  Ready: True/DependenciesReady when the pod is ready, else
  False/DependenciesNotReady, or False/ReconcilerError with "Error seen:
  ..." when the pod cannot be made (Pod Security refusing it, as the
  admission would: the pod is what is checked, see k8s_admission).
- SandboxTemplate (extensions.agents.x-k8s.io/v1beta1): spec.podTemplate
  (required), spec.service as for a Sandbox; a pod with no
  automountServiceAccountToken gets false.
- SandboxWarmPool: spec.replicas (default 1) Sandboxes of
  spec.sandboxTemplateRef (required),
  named generateName "<pool>-", owned by the pool; status.replicas and
  readyReplicas.
- SandboxClaim: spec.warmPoolRef.name (required; v1alpha1 had
  spec.sandboxTemplateRef instead).  The claim adopts a
  ready Sandbox of its pool (its owner becomes the claim; the pool makes
  another), else, once no candidate of the pool is coming (a 2 s grace,
  warmCandidateGracePeriod), creates one from the pool's template, named
  after the claim.  status.sandbox.name, annotation
  agents.x-k8s.io/sandbox-name; condition Ready mirrored from the
  Sandbox, or False/WarmPoolNotFound, TemplateNotFound, SandboxMissing.
- Deleting an owner deletes what it owns (the garbage collector's
  background propagation), a pod's processes with it.

pods/exec (https://kubernetes.io/docs/reference/kubernetes-api/
workload-resources/pod-v1/, "connect GET/POST exec"): a GET upgraded to
a WebSocket (RFC 6455) with the v4.channel.k8s.io subprotocol, or
v5.channel.k8s.io when offered (kubectl 1.30 and later: v4 plus a
message on stream 255 that closes a stream, KEP-4006), each binary
message's first byte its stream (0 stdin, 1 stdout, 2 stderr, 3 the
closing Status), as k8s.io/apimachinery's wsstream frames them.
The command runs through the double's runner (--runner) with
K8S_DOUBLE_EXEC set to its argv as JSON and K8S_DOUBLE_POD_FILE to
the pod; it is killed with its pod.  Authorization: get on pods/exec
(the upgrade is a GET) and create, which API servers with
AuthorizePodWebsocketUpgradeCreatePermission (on by default from
Kubernetes 1.35) also check.

With --agent-sandbox-version v1alpha1 the double stands for a cluster
whose CRDs serve v1alpha1 alone (agent-sandbox before v1beta1): the
four kinds are stored and served at that version, nothing is checked
against a schema, and no controller acts on them.

Differences, on purpose: no Services, NetworkPolicies, volume claim
templates, lifecycle (shutdownTime) or suspension (operatingMode is
checked, not acted on); no defaulting but the pool's replicas; no PATCH
or status subresource: only the controllers here write status.
"""

import base64
import calendar
import copy
import hashlib
import json
import os
import signal
import struct
import subprocess
import threading
import time

import k8s_admission
from k8s_api import ApiError, not_found
from k8s_store import new_meta, now_rfc3339, pending_pod, start_controller

GROUP = "agents.x-k8s.io"
EXT = "extensions.agents.x-k8s.io"
VERSION = "v1beta1"
RW = ["create", "delete", "deletecollection", "get", "list", "watch"]
KINDS = {
    "sandboxes": (GROUP, VERSION, "Sandbox", True, [], RW),
    "sandboxtemplates": (EXT, VERSION, "SandboxTemplate", True, [], RW),
    "sandboxclaims": (EXT, VERSION, "SandboxClaim", True, [], RW),
    "sandboxwarmpools": (EXT, VERSION, "SandboxWarmPool", True, [], RW),
}
EXEC = {"pods/exec": ("", "v1", "PodExecOptions", True, [],
                      ["create", "get"])}
POD_NAME = "agents.x-k8s.io/pod-name"
SANDBOX_NAME = "agents.x-k8s.io/sandbox-name"
WARM_GRACE = 2.0
WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
WS_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")   # preferred first


def register(resources, version):
    """pods/exec always; the four kinds at VERSION, or not at all when
    it is None (their groups are then unknown: discovery answers 404,
    as without the CRDs)."""
    resources.update(EXEC)
    if version:
        resources.update({r: (g, version, *rest) for r, (g, _, *rest)
                          in KINDS.items()})


def condition(obj, ctype):
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == ctype:
            return c
    return None


def set_ready(obj, status, reason, message=""):
    """metav1.Condition semantics: lastTransitionTime moves only when
    the status does."""
    old = condition(obj, "Ready")
    if old and (old["status"], old["reason"], old["message"]) == \
            (status, reason, message):
        return False
    t = now_rfc3339() if not old or old["status"] != status else \
        old["lastTransitionTime"]
    conds = [c for c in obj.setdefault("status", {}).get("conditions", [])
             if c["type"] != "Ready"]
    conds.append({"type": "Ready", "status": status, "reason": reason,
                  "message": message, "lastTransitionTime": t,
                  "observedGeneration": obj["metadata"].get("generation",
                                                            1)})
    obj["status"]["conditions"] = conds
    return True


def owner_ref(kind, group, obj):
    md = obj["metadata"]
    return {"apiVersion": "%s/%s" % (group, VERSION), "kind": kind,
            "name": md["name"], "uid": md["uid"], "controller": True,
            "blockOwnerDeletion": True}


def controller_of(obj):
    for r in obj["metadata"].get("ownerReferences", []):
        if r.get("controller"):
            return r
    return None


class SandboxController:
    """The agent-sandbox controllers and their garbage collection, in
    one loop under the store's lock, beside the Job controller."""

    def __init__(self, store, jobs, crds):
        self.store, self.jobs, self.crds = store, jobs, crds
        self.execs = {}         # (ns, pod) -> [(uid, Popen)]
        start_controller(store, self.tick)

    def tick(self):
        st = self.store
        if self.crds:
            for pool in st.all("sandboxwarmpools"):
                self.pool(pool)
            for claim in st.all("sandboxclaims"):
                self.claim(claim)
            for sbx in st.all("sandboxes"):
                self.sandbox(sbx)
        self.collect()

    # -- garbage collection --

    def collect(self):
        uids = {o["metadata"]["uid"] for (r, _, _), o in
                self.store.objs.items()}
        for res in ("sandboxes", "pods"):
            for obj in self.store.all(res):
                ref = controller_of(obj)
                if ref and ref.get("kind") in ("Sandbox", "SandboxClaim",
                                               "SandboxWarmPool") and \
                        ref["uid"] not in uids:
                    self.delete(res, obj)
        for (ns, name), procs in list(self.execs.items()):
            pod = self.store.peek("pods", ns, name)
            for uid, proc in list(procs):
                if pod is None or pod["metadata"]["uid"] != uid or \
                        proc.poll() is not None:
                    kill_group(proc)
                    procs.remove((uid, proc))
            if not procs:
                del self.execs[(ns, name)]

    def delete(self, res, obj):
        md = obj["metadata"]
        if res == "pods":
            self.jobs.delete_pod(obj)
        else:
            self.store.remove(res, md["namespace"], md["name"])

    # -- warm pools --

    def template_of(self, ns, name):
        return self.store.peek("sandboxtemplates", ns, name)

    def owned(self, res, owner):
        uid = owner["metadata"]["uid"]
        return [o for o in self.store.all(res, owner["metadata"]
                                          ["namespace"])
                if (controller_of(o) or {}).get("uid") == uid]

    def new_sandbox(self, ns, tmpl, meta, owner):
        spec = copy.deepcopy(tmpl["spec"]["podTemplate"])
        spec.setdefault("spec", {}).setdefault(
            "automountServiceAccountToken", False)
        sbx = {"apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "Sandbox",
               "metadata": dict(meta, ownerReferences=[owner],
                                annotations={
                                    "agents.x-k8s.io/sandbox-template-ref":
                                    tmpl["metadata"]["name"]}),
               "spec": {"podTemplate": spec}, "status": {}}
        new_meta(sbx, ns)
        set_ready(sbx, "False", "DependenciesNotReady")
        self.store.put("sandboxes", sbx, "ADDED")
        return sbx

    def pool(self, pool):
        md, spec = pool["metadata"], pool.get("spec") or {}
        tmpl = self.template_of(md["namespace"], (spec.get(
            "sandboxTemplateRef") or {}).get("name"))
        mine = self.owned("sandboxes", pool)
        if tmpl is not None:
            for _ in range(int(spec.get("replicas", 1)) - len(mine)):
                mine.append(self.new_sandbox(
                    md["namespace"], tmpl, {"generateName": md["name"] + "-"},
                    owner_ref("SandboxWarmPool", EXT, pool)))
        ready = sum(1 for s in mine
                    if (condition(s, "Ready") or {}).get("status") == "True")
        status = {"replicas": len(mine), "readyReplicas": ready,
                  "observedGeneration": md.get("generation", 1)}
        if pool.get("status") != status:
            pool["status"] = status
            self.store.put("sandboxwarmpools", pool, "MODIFIED")

    # -- claims --

    def claim(self, claim):
        md = claim["metadata"]
        ns = md["namespace"]
        name = claim.get("status", {}).get("sandbox", {}).get("name")
        if name:
            sbx = self.store.peek("sandboxes", ns, name)
            if sbx is None:
                changed = set_ready(claim, "False", "SandboxMissing",
                                    "Sandbox does not exist")
            else:
                r = condition(sbx, "Ready")
                changed = set_ready(claim, r["status"], r["reason"],
                                    r["message"])
            if changed:
                self.store.put("sandboxclaims", claim, "MODIFIED")
            return
        pname = ((claim.get("spec") or {}).get("warmPoolRef") or {}).get(
            "name")
        pool = self.store.peek("sandboxwarmpools", ns, pname)
        tmpl = pool and self.template_of(ns, ((pool.get("spec") or {}).get(
            "sandboxTemplateRef") or {}).get("name"))
        if pool is None or tmpl is None:
            if set_ready(claim, "False", "WarmPoolNotFound" if pool is None
                         else "TemplateNotFound",
                         'SandboxWarmPool "%s" not found' % pname
                         if pool is None else "SandboxTemplate of the "
                         "warmpool not found"):
                self.store.put("sandboxclaims", claim, "MODIFIED")
            return
        ref = owner_ref("SandboxClaim", EXT, claim)
        candidates = self.owned("sandboxes", pool)
        ready = [s for s in candidates
                 if (condition(s, "Ready") or {}).get("status") == "True"]
        if ready:
            sbx = ready[0]
            sbx["metadata"]["ownerReferences"] = [ref]
            self.store.put("sandboxes", sbx, "MODIFIED")
        elif candidates and time.time() < created(claim) + WARM_GRACE:
            return
        else:
            sbx = self.new_sandbox(ns, tmpl, {"name": md["name"]}, ref)
        md.setdefault("annotations", {})[SANDBOX_NAME] = \
            sbx["metadata"]["name"]
        claim.setdefault("status", {})["sandbox"] = {
            "name": sbx["metadata"]["name"]}
        r = condition(sbx, "Ready")
        set_ready(claim, r["status"], r["reason"], r["message"])
        self.store.put("sandboxclaims", claim, "MODIFIED")

    # -- sandboxes --

    def sandbox(self, sbx):
        md = sbx["metadata"]
        ns = md["namespace"]
        pname = md.get("annotations", {}).get(POD_NAME, md["name"])
        pod = self.store.peek("pods", ns, pname)
        if pod is None:
            pod, why = self.make_pod(sbx, pname)
            if pod is None:
                if set_ready(sbx, "False", "ReconcilerError",
                             "Error seen: " + why):
                    self.store.put("sandboxes", sbx, "MODIFIED")
                return
        ok = pod["status"]["phase"] == "Running" and all(
            c.get("ready") for c in pod["status"]["containerStatuses"])
        changed = set_ready(sbx, "True" if ok else "False",
                            "DependenciesReady" if ok else
                            "DependenciesNotReady",
                            "Pod is Ready" if ok else
                            "Pod exists with phase: %s" %
                            pod["status"]["phase"])
        ips = [pod["status"]["podIP"]] if ok else []
        if sbx["status"].get("podIPs", []) != ips:
            sbx["status"]["podIPs"] = ips
            changed = True
        if changed:
            self.store.put("sandboxes", sbx, "MODIFIED")

    def make_pod(self, sbx, name):
        """The Sandbox's pod, admitted as a pod create would be; or None
        and the Forbidden message."""
        md = sbx["metadata"]
        tmpl = copy.deepcopy(sbx["spec"]["podTemplate"])
        spec = tmpl.get("spec") or {}
        level = k8s_admission.namespace_level(
            self.store.peek("namespaces", None, md["namespace"]))
        bad = k8s_admission.pod_security(spec, level)
        if bad:
            return None, 'pods "%s" is forbidden: violates PodSecurity ' \
                '"%s:latest": %s' % (name, level, ", ".join(bad))
        labels = dict((tmpl.get("metadata") or {}).get("labels") or {})
        labels["agents.x-k8s.io/sandbox-name-hash"] = hashlib.sha256(
            md["name"].encode()).hexdigest()[:8]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": name, "labels": labels,
            "annotations": (tmpl.get("metadata") or {}).get(
                "annotations", {}),
            "ownerReferences": [owner_ref("Sandbox", GROUP, sbx)]},
            "spec": spec}
        new_meta(pod, md["namespace"])
        pending_pod(pod)
        self.store.put("pods", pod, "ADDED")
        return pod, None

    # -- pods/exec --

    def kill_all(self):
        for procs in self.execs.values():
            for _, proc in procs:
                kill_group(proc)

    def exec_start(self, pod, argv):
        """The exec's process, through the runner; None if it cannot."""
        runner = self.jobs.runner
        md = pod["metadata"]
        key = (md["namespace"], md["name"])
        root = self.jobs.pod_dir(*key)
        podfile = os.path.join(root, ".exec-pod.json")
        with open(podfile, "w") as f:
            json.dump(pod, f)
        env = dict(os.environ, K8S_DOUBLE_VOLUMES=root,
                   K8S_DOUBLE_NAMESPACE=key[0], K8S_DOUBLE_POD=key[1],
                   K8S_DOUBLE_EXEC=json.dumps(argv),
                   K8S_DOUBLE_POD_FILE=podfile)
        proc = subprocess.Popen([runner], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, cwd=root,
                                env=env, start_new_session=True)
        os.makedirs(self.jobs.groups, exist_ok=True)
        open(os.path.join(self.jobs.groups, str(proc.pid)), "w").close()
        self.execs.setdefault(key, []).append((md["uid"], proc))
        return proc


def created(obj):
    return calendar.timegm(time.strptime(
        obj["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# -- the WebSocket side of pods/exec ------------------------------------------

def ws_recv(rfile):
    """One client frame: (opcode, payload), or None at the end."""
    head = rfile.read(2)
    if len(head) < 2:
        return None
    op, n = head[0] & 0x0f, head[1] & 0x7f
    if n == 126:
        n = struct.unpack(">H", rfile.read(2))[0]
    elif n == 127:
        n = struct.unpack(">Q", rfile.read(8))[0]
    if not head[1] & 0x80:
        return None             # a client's frames are masked (5.1)
    mask = rfile.read(4)
    data = bytearray(rfile.read(n))
    for i in range(len(data)):
        data[i] ^= mask[i % 4]
    return op, bytes(data)


def ws_frame(op, data):
    n = len(data)
    if n < 126:
        head = bytes([0x80 | op, n])
    elif n <= 0xffff:
        head = bytes([0x80 | op, 126]) + struct.pack(">H", n)
    else:
        head = bytes([0x80 | op, 127]) + struct.pack(">Q", n)
    return head + data


def serve_exec(handler, route, query):
    """pods/exec for an authorized GET: the upgrade, then the stream."""
    api = handler.server.api
    ctl = handler.server.sandboxes
    api.authorize(handler.user, "create", route)
    argv = [v for k, v in query if k == "command"]
    with handler.server.store.lock:
        pod = handler.server.store.peek("pods", route.ns, route.name)
        if pod is None:
            raise not_found("pods", route.name)
        running = pod["status"]["phase"] == "Running"
        pod = copy.deepcopy(pod)
    protos = [p.strip() for p in handler.headers.get(
        "Sec-WebSocket-Protocol", "").split(",")]
    key = handler.headers.get("Sec-WebSocket-Key")
    if handler.headers.get("Upgrade", "").lower() != "websocket" or not key:
        raise ApiError(400, "BadRequest", "Upgrade request "
                               "required")
    if not running or not argv or not handler.server.api.controller.runner:
        raise ApiError(400, "BadRequest", "unable to upgrade "
                               "connection: container not found or no "
                               "command")
    chosen = [p for p in WS_PROTOCOLS if p in protos]
    if not chosen:
        raise ApiError(400, "BadRequest", "no supported "
                               "subprotocol (%s)" % ", ".join(WS_PROTOCOLS))
    with handler.server.store.lock:
        proc = ctl.exec_start(pod, argv)
    accept = base64.b64encode(hashlib.sha1(key.encode() + WS_GUID)
                              .digest()).decode()
    handler.send_response(101)
    handler.send_header("Upgrade", "websocket")
    handler.send_header("Connection", "Upgrade")
    handler.send_header("Sec-WebSocket-Accept", accept)
    handler.send_header("Sec-WebSocket-Protocol", chosen[0])
    handler.end_headers()
    handler.wfile.flush()
    handler.code = 101
    handler.close_connection = True
    lock = threading.Lock()

    def send(op, data):
        with lock:
            handler.wfile.write(ws_frame(op, data))
            handler.wfile.flush()

    def pump():
        try:
            while True:
                data = os.read(proc.stdout.fileno(), 65536)
                if not data:
                    break
                send(2, b"\x01" + data)
            code = proc.wait()
            st = {"metadata": {}, "status": "Success"} if code == 0 else {
                "metadata": {}, "status": "Failure",
                "message": "command terminated with non-zero exit code",
                "reason": "NonZeroExitCode", "details": {"causes": [
                    {"reason": "ExitCode", "message": str(code)}]}}
            send(2, b"\x03" + json.dumps(st).encode())
            send(8, b"\x03\xe8")
        except OSError:
            pass
        finally:
            try:
                handler.connection.shutdown(2)
            except OSError:
                pass
    t = threading.Thread(target=pump, daemon=True)
    t.start()
    try:
        while True:
            f = ws_recv(handler.rfile)
            if f is None or f[0] == 8:
                break
            if f[0] == 9:
                send(10, f[1])
            elif f[0] == 2 and f[1][:1] == b"\x00":
                proc.stdin.write(f[1][1:])
                proc.stdin.flush()
            elif f[0] == 2 and f[1][:2] == b"\xff\x00" and \
                    chosen[0].startswith("v5"):
                proc.stdin.close()      # v5's close of stdin
    except (OSError, ValueError):
        pass
    kill_group(proc)
    t.join(5)
