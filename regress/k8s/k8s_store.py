# SPDX-License-Identifier: ISC
"""Object store, selectors and the Job "controller" of the Kubernetes API
double.

Every change bumps one resourceVersion counter (etcd's revision, shared
by all resources) and is kept as a watch event in its resource's own
history, as the API server's watch cache keeps one window per resource
(https://kubernetes.io/docs/reference/using-api/api-concepts/,
"Efficient detection of changes", "Resource versions"): only the last
events of each resource are kept (2000 by default), and a watch from a
resourceVersion older than its resource's window gets 410 Gone; churn on
one resource never expires a watch on another.

The controller does what the Job and Pod lifecycle pages describe
(https://kubernetes.io/docs/concepts/workloads/controllers/job/,
https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/), in
small: a Job gets one Pod at a time, up to backoffLimit retries; the Pod
waits in ContainerCreating until the Secrets it mounts exist; then it
"runs" by executing the configured runner with the Pod as JSON on stdin
(its stdout and stderr become the log); activeDeadlineSeconds fails the
Job with DeadlineExceeded; ttlSecondsAfterFinished deletes it; spec.suspend
deletes its running pod and creates none until resumed
(https://kubernetes.io/docs/concepts/workloads/controllers/job/#suspending-a-job).
A pod that Pod Security refuses is not created: the Job gets a Warning
Event FailedCreate, "Error creating: pods "NAME" is forbidden: violates
PodSecurity ...", repeated with a count while the Job lives, as the job
controller's event recorder does
(https://kubernetes.io/docs/concepts/security/pod-security-admission/#workload-resources-and-pod-templates,
https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/event-v1/).
"""

import base64
import collections
import copy
import datetime
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import threading
import time
import traceback
import uuid

import k8s_admission

LOG_CAP = 4 << 20

# resource: (group, version, kind, namespaced, short names, verbs)
RW = ["create", "delete", "deletecollection", "get", "list", "patch",
      "watch"]
RESOURCES = {
    "namespaces": ("", "v1", "Namespace", False, ["ns"], RW),
    "pods": ("", "v1", "Pod", True, ["po"], RW),
    "pods/log": ("", "v1", "Pod", True, [], ["get"]),
    "secrets": ("", "v1", "Secret", True, [], RW),
    "serviceaccounts": ("", "v1", "ServiceAccount", True, ["sa"], RW),
    "serviceaccounts/token": ("authentication.k8s.io", "v1", "TokenRequest",
                              True, [], ["create"]),
    "persistentvolumeclaims": ("", "v1", "PersistentVolumeClaim", True,
                               ["pvc"], RW),
    "jobs": ("batch", "v1", "Job", True, [], RW),
    "events": ("", "v1", "Event", True, ["ev"], RW),
    "roles": ("rbac.authorization.k8s.io", "v1", "Role", True, [], RW),
    "rolebindings": ("rbac.authorization.k8s.io", "v1", "RoleBinding", True,
                     [], RW),
    "clusterroles": ("rbac.authorization.k8s.io", "v1", "ClusterRole", False,
                     [], RW),
    "clusterrolebindings": ("rbac.authorization.k8s.io", "v1",
                            "ClusterRoleBinding", False, [], RW),
    "selfsubjectaccessreviews": ("authorization.k8s.io", "v1",
                                 "SelfSubjectAccessReview", False, [],
                                 ["create"]),
}


def group_of(resource):
    """The API group a resource is served under (subresources are served
    under their parent's path even when their kind is elsewhere)."""
    if resource == "serviceaccounts/token":
        return ""
    return RESOURCES[resource][0]


def api_version(resource):
    g, v = RESOURCES[resource][:2]
    return "%s/%s" % (g, v) if g else v


def now_rfc3339(t=None):
    return datetime.datetime.fromtimestamp(
        time.time() if t is None else t, datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ")


# -- selectors ---------------------------------------------------------------

class BadSelector(ValueError):
    pass


SET_TERM = re.compile(r"^\s*([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
EXISTS_TERM = re.compile(r"^\s*(!?)([\w./-]+)\s*$")
EQ_TERM = re.compile(r"^\s*([\w./-]+)\s*(==|=|!=)\s*([\w./-]*)\s*$")


def _terms(s):
    depth, cur, out = 0, "", []
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def label_selector(s):
    """A predicate over a labels dict; the equality- and set-based forms."""
    preds = []
    for t in _terms(s or ""):
        if not t.strip():
            continue
        m = SET_TERM.match(t)
        if m:
            k, op = m.group(1), m.group(2)
            vals = {v.strip() for v in m.group(3).split(",")}
            preds.append(lambda lb, k=k, op=op, vals=vals:
                         (lb.get(k) in vals) == (op == "in")
                         and (op == "notin" or k in lb))
            continue
        m = EQ_TERM.match(t)
        if m:
            k, op, v = m.groups()
            preds.append(lambda lb, k=k, op=op, v=v:
                         (lb.get(k) == v) == (op != "!="))
            continue
        m = EXISTS_TERM.match(t)
        if m:
            neg, k = m.groups()
            preds.append(lambda lb, k=k, neg=neg: (k in lb) != bool(neg))
            continue
        raise BadSelector("unable to parse requirement: %r" % t.strip())
    return lambda labels: all(p(labels or {}) for p in preds)


FIELDS = {"metadata.name", "metadata.namespace", "status.phase",
          "spec.nodeName", "status.successful", "involvedObject.kind",
          "involvedObject.name", "involvedObject.namespace",
          "involvedObject.uid", "reason", "type"}


def field_selector(s):
    preds = []
    for t in (s or "").split(","):
        if not t.strip():
            continue
        m = EQ_TERM.match(t)
        if not m:
            raise BadSelector("invalid field selector: %r" % t)
        k, op, v = m.groups()
        if k not in FIELDS:
            raise BadSelector('field label not supported: %s' % k)

        def get(obj, path=k.split(".")):
            for p in path:
                obj = (obj or {}).get(p)
            return "" if obj is None else str(obj)
        preds.append(lambda o, get=get, op=op, v=v:
                     (get(o) == v) == (op != "!="))
    return lambda obj: all(p(obj) for p in preds)


# -- store -------------------------------------------------------------------

class Store:
    def __init__(self, events_kept=2000):
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.objs = {}
        self.rv = 1
        self.kept = events_kept
        self.events = {}    # resource -> deque of (rv, type, object)
        self.evicted = {}   # resource -> rv of its newest evicted event

    def peek(self, resource, ns, name):
        return self.objs.get((resource, ns, name))

    def all(self, resource, ns=None):
        return [o for (r, n, _), o in sorted(self.objs.items(),
                                             key=lambda kv: kv[0][2])
                if r == resource and (ns is None or n == ns)]

    def put(self, resource, obj, etype):
        with self.lock:
            self.rv += 1
            md = obj["metadata"]
            md["resourceVersion"] = str(self.rv)
            key = (resource, md.get("namespace"), md["name"])
            self.objs[key] = obj
            self.record(resource, etype, obj)

    def remove(self, resource, ns, name):
        with self.lock:
            obj = self.objs.pop((resource, ns, name), None)
            if obj is not None:
                self.rv += 1
                obj["metadata"]["resourceVersion"] = str(self.rv)
                self.record(resource, "DELETED", obj)
            return obj

    def record(self, resource, etype, obj):
        kept = self.events.setdefault(resource, collections.deque())
        if len(kept) == self.kept:
            self.evicted[resource] = kept.popleft()[0]
        kept.append((self.rv, etype, copy.deepcopy(obj)))
        self.changed.notify_all()

    def events_after(self, resource, rv):
        """RESOURCE's events newer than RV, or None when some of them are
        no longer kept."""
        if rv < self.evicted.get(resource, 0):
            return None
        return [e for e in self.events.get(resource, ()) if e[0] > rv]

    def oldest(self, resource):
        """The resourceVersion a 410 names: the one before the oldest
        event kept (the watch cache's "too old resource version: RV
        (OLDEST-1)")."""
        kept = self.events.get(resource)
        return kept[0][0] - 1 if kept else self.rv


def new_meta(obj, ns):
    md = obj.setdefault("metadata", {})
    if not md.get("name") and md.get("generateName"):
        md["name"] = md["generateName"] + "".join(
            secrets.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    if ns is not None:
        md["namespace"] = ns
    else:
        md.pop("namespace", None)
    md["uid"] = str(uuid.uuid4())
    md["creationTimestamp"] = now_rfc3339()
    md["generation"] = 1
    return md


def pending_pod(pod):
    """What the scheduler and kubelet add to a new pod: a node, the
    default ServiceAccount, an IP, containers waiting to be created."""
    spec = pod["spec"]
    spec.setdefault("serviceAccountName", "default")
    spec["nodeName"] = "double-node"
    pod["status"] = {
        "phase": "Pending", "hostIP": "127.0.0.1",
        "podIP": "10.244.0.%d" % secrets.randbelow(250),
        "qosClass": "Guaranteed", "containerStatuses": [
            {"name": c["name"], "image": c.get("image"), "imageID": "",
             "ready": False, "restartCount": 0, "started": False,
             "state": {"waiting": {"reason": "ContainerCreating"}}}
            for c in spec.get("containers", [])]}


# -- the Job controller and the pod runner ------------------------------------

def _condition(ctype, reason="", message=""):
    t = now_rfc3339()
    return {"type": ctype, "status": "True", "lastProbeTime": t,
            "lastTransitionTime": t, "reason": reason, "message": message}


def start_controller(store, tick):
    """Runs tick every 50 ms under the store's lock, in a thread of its
    own, as a controller's reconcile loop."""
    def loop():
        try:
            while True:
                time.sleep(0.05)
                with store.lock:
                    tick()
        except Exception:
            # A double whose controller died must not look alive.
            traceback.print_exc()
            os._exit(70)
    threading.Thread(target=loop, daemon=True).start()


class Controller:
    def __init__(self, store, state_dir, runner):
        self.store = store
        self.state = os.path.abspath(state_dir)
        self.groups = os.path.join(self.state, "pod-groups")
        self.runner = runner
        self.procs = {}         # (ns, pod) -> Popen, None once finished
        self.logs = {}          # (ns, pod) -> bytes
        self.started = {}       # job uid -> time
        self.finished = {}      # job uid -> time
        self.refused = {}       # job uid -> (Event, time of next try)
        start_controller(store, self.tick)

    def tick(self):
        st = self.store
        for pvc in st.all("persistentvolumeclaims"):
            if pvc["status"].get("phase") != "Bound":
                self.bind(pvc)
        for job in st.all("jobs"):
            status = job["status"]
            if any(c["type"] in ("Complete", "Failed") and
                   c["status"] == "True"
                   for c in status.get("conditions", [])):
                self.expire(job)
                continue
            if self.suspended(job):
                continue
            if not status.get("startTime"):
                # The controller's first sync starts the deadline clock,
                # whether or not a pod can be created.
                status["startTime"] = now_rfc3339()
                self.started[job["metadata"]["uid"]] = time.time()
                self.store.put("jobs", job, "MODIFIED")
            deadline = job["spec"].get("activeDeadlineSeconds")
            started = self.started.get(job["metadata"]["uid"])
            if deadline and started and time.time() > started + deadline:
                self.fail(job, "DeadlineExceeded",
                          "Job was active longer than specified deadline")
                continue
            running = [p for p in self.pods_of(job)
                       if p["status"]["phase"] in ("Pending", "Running")]
            if not running and \
                    status.get("failed", 0) <= job["spec"]["backoffLimit"]:
                self.spawn(job)
        for pod in st.all("pods"):
            if pod["status"]["phase"] == "Pending" and \
                    (pod["metadata"]["namespace"],
                     pod["metadata"]["name"]) not in self.procs and \
                    self.volumes_ready(pod):
                self.start(pod)

    def pods_of(self, job):
        uid = job["metadata"]["uid"]
        return [p for p in self.store.all("pods",
                                          job["metadata"]["namespace"])
                if any(r.get("uid") == uid for r in
                       p["metadata"].get("ownerReferences", []))]

    def spawn(self, job):
        md = job["metadata"]
        tmpl = copy.deepcopy(job["spec"]["template"])
        spec = tmpl.get("spec", {})
        ns = md["namespace"]
        refused = self.refused.get(md["uid"])
        if refused and time.time() < refused[1]:
            return
        labels = dict((tmpl.get("metadata") or {}).get("labels") or {})
        labels.update({"batch.kubernetes.io/controller-uid": md["uid"],
                       "batch.kubernetes.io/job-name": md["name"],
                       "controller-uid": md["uid"], "job-name": md["name"]})
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "generateName": md["name"] + "-", "labels": labels,
            "annotations": (tmpl.get("metadata") or {}).get(
                "annotations", {}),
            "ownerReferences": [{
                "apiVersion": "batch/v1", "kind": "Job", "name": md["name"],
                "uid": md["uid"], "controller": True,
                "blockOwnerDeletion": True}]}, "spec": spec}
        new_meta(pod, ns)
        why = k8s_admission.refusal(spec, self.store.peek("namespaces",
                                                          None, ns))
        if why:
            # Enforce applies to the pod: the Job stays without one until
            # its deadline, with a FailedCreate event per try.
            self.failed_create(job, 'Error creating: pods "%s" is '
                               'forbidden: violates %s' % (pod["metadata"]["name"],
                                                  why))
            return
        pending_pod(pod)
        self.store.put("pods", pod, "ADDED")
        job["status"]["active"] = 1
        self.store.put("jobs", job, "MODIFIED")

    def failed_create(self, job, message):
        """The job controller's Warning event, one object whose count and
        lastTimestamp grow with each try, as client-go's event
        correlator aggregates repeats; tries back off from 10 s."""
        md = job["metadata"]
        now = now_rfc3339()
        ev, _ = self.refused.get(md["uid"], (None, 0))
        ev = ev and self.store.peek("events", md["namespace"],
                                    ev["metadata"]["name"])
        if ev is None:
            ev = {"metadata": {"name": "%s.%x" % (md["name"],
                                                  time.time_ns())},
                  "involvedObject": {
                      "kind": "Job", "namespace": md["namespace"],
                      "name": md["name"], "uid": md["uid"],
                      "apiVersion": "batch/v1",
                      "resourceVersion": md["resourceVersion"]},
                  "reason": "FailedCreate", "message": message,
                  "source": {"component": "job-controller"},
                  "firstTimestamp": now, "count": 0, "type": "Warning",
                  "eventTime": None, "reportingComponent": "",
                  "reportingInstance": ""}
            new_meta(ev, md["namespace"])
        ev["count"] += 1
        ev["lastTimestamp"] = now
        ev["message"] = message
        self.store.put("events", ev, "MODIFIED" if ev["count"] > 1
                       else "ADDED")
        self.refused[md["uid"]] = (ev, time.time() + min(
            360, 10 * 2 ** (ev["count"] - 1)))

    def suspended(self, job):
        """spec.suspend: running pods go, none is created, the deadline
        clock stops; resuming restarts it (startTime is reset).
        https://kubernetes.io/docs/concepts/workloads/controllers/job/#suspending-a-job
        """
        st, uid = job["status"], job["metadata"]["uid"]
        conds = st.setdefault("conditions", [])
        cond = [c for c in conds if c["type"] == "Suspended"]
        if job["spec"].get("suspend"):
            if cond and cond[0]["status"] == "True":
                return True
            for pod in self.pods_of(job):
                if pod["status"]["phase"] in ("Pending", "Running"):
                    self.delete_pod(pod)
            conds[:] = [c for c in conds if c["type"] != "Suspended"] + \
                [_condition("Suspended", "JobSuspended", "Job suspended")]
            st["active"] = 0
            st.pop("startTime", None)
            self.started.pop(uid, None)
            self.store.put("jobs", job, "MODIFIED")
            return True
        if cond and cond[0]["status"] == "True":
            cond[0].update(_condition("Suspended", "JobResumed",
                                      "Job resumed"), status="False")
            st.pop("startTime", None)   # tick() starts the clock again
        if not conds:
            del st["conditions"]
        return False

    def claim_dir(self, ns, name):
        return os.path.join(self.state, "claims", ns, name)

    def bind(self, pvc):
        """The provisioner's part: a claim gets a directory of its own
        (a local volume, kept when the claim goes: Retain)."""
        md = pvc["metadata"]
        os.makedirs(self.claim_dir(md["namespace"], md["name"]),
                    exist_ok=True)
        spec = pvc.get("spec") or {}
        pvc["spec"]["volumeName"] = "pv-" + md["uid"]
        pvc["status"] = {"phase": "Bound",
                         "accessModes": spec.get("accessModes") or [],
                         "capacity": (spec.get("resources") or {}).get(
                             "requests") or {}}
        self.store.put("persistentvolumeclaims", pvc, "MODIFIED")

    def volumes_ready(self, pod):
        """A pod starts once its Secrets exist and its claims are bound
        (a real scheduler leaves it Pending, unschedulable, till then)."""
        ns = pod["metadata"]["namespace"]
        for v in pod["spec"].get("volumes") or []:
            s = v.get("secret")
            if s and not s.get("optional") and \
                    self.store.peek("secrets", ns, s.get("secretName")) is None:
                return False
            c = v.get("persistentVolumeClaim")
            pvc = c and self.store.peek("persistentvolumeclaims", ns,
                                        c.get("claimName"))
            if c and (not pvc or pvc["status"].get("phase") != "Bound"):
                return False
        return True

    def pod_dir(self, ns, name):
        return os.path.join(self.state, "volumes", ns, name)

    def materialize(self, pod):
        """Write the pod's secret and emptyDir volumes under the state
        directory, one sub-directory per volume, for the runner; a
        claim's is a link to the claim's directory."""
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        root = self.pod_dir(ns, name)
        for v in pod["spec"].get("volumes") or []:
            d = os.path.join(root, v["name"])
            c = v.get("persistentVolumeClaim")
            if c:
                os.makedirs(root, exist_ok=True)
                os.symlink(self.claim_dir(ns, c["claimName"]), d)
                continue
            os.makedirs(d, exist_ok=True)
            s = v.get("secret")
            sec = s and self.store.peek("secrets", ns, s.get("secretName"))
            if not sec:
                continue
            data = sec.get("data") or {}
            items = s.get("items") or [{"key": k, "path": k} for k in data]
            for it in items:
                if it["key"] in data:
                    p = os.path.join(d, it["path"])
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    with open(p, "wb") as f:
                        f.write(base64.b64decode(data[it["key"]]))
        os.makedirs(root, exist_ok=True)
        return root

    def start(self, pod):
        root = self.materialize(pod)
        t = now_rfc3339()
        pod["status"].update({"phase": "Running", "startTime": t})
        for cs in pod["status"]["containerStatuses"]:
            cs.update({"ready": True, "started": True,
                       "state": {"running": {"startedAt": t}}})
        pod["status"]["conditions"] = [
            {"type": k, "status": "True", "lastTransitionTime": t}
            for k in ("PodScheduled", "Initialized", "ContainersReady",
                      "Ready")]
        self.store.put("pods", pod, "MODIFIED")
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        if not self.runner:
            self.procs[key] = None
            self.finish(key, 0, b"")
            return
        env = dict(os.environ, K8S_DOUBLE_VOLUMES=root,
                   K8S_DOUBLE_NAMESPACE=key[0], K8S_DOUBLE_POD=key[1])
        proc = subprocess.Popen([self.runner], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, cwd=root, env=env,
                                start_new_session=True)
        self.procs[key] = proc
        # A record of the pod's process group while it runs, for
        # k8s.subr's k8s_stop should the double die without its TERM
        # handler (kyua ends a test's own process group with KILL).
        os.makedirs(self.groups, exist_ok=True)
        open(os.path.join(self.groups, str(proc.pid)), "w").close()
        threading.Thread(target=self.wait, args=(key, proc, pod),
                         daemon=True).start()

    def wait(self, key, proc, pod):
        try:
            proc.stdin.write(json.dumps(pod).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        # The log as it comes, for pods/log with follow=true.
        kept = 0
        while True:
            piece = proc.stdout.read1(1 << 16)
            if not piece:
                break
            piece = piece[:max(0, LOG_CAP - kept)]
            kept += len(piece)
            with self.store.lock:
                if self.procs.get(key) is proc:
                    self.logs[key] = self.logs.get(key, b"") + piece
                    self.store.changed.notify_all()
        proc.stdout.close()
        code = proc.wait()
        try:
            os.unlink(os.path.join(self.groups, str(proc.pid)))
        except FileNotFoundError:
            pass
        with self.store.lock:
            if self.procs.get(key) is proc:
                self.finish(key, code, self.logs.get(key, b""))

    def terminated(self, code):
        """A terminated container's exitCode and reason
        (ContainerStateTerminated,
        https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#PodStatus)
        for the runner's status (negative: the signal that killed it).
        With STATE/oom-killed, a process group killed by SIGKILL stands
        for the kernel's OOM killer ending the sandbox whole.  The real
        node (runsc through the runc shim, 2026-12-07) reported that as
        exitCode 255, reason Error, with nothing of the sandbox's end on
        the log; a file holding OOMKilled gives what the kubelet reports
        where the runtime tells it of the OOM kill
        (https://kubernetes.io/docs/tasks/configure-pod-container/assign-memory-resource/#exceed-a-container-s-memory-limit)."""
        if code == 0:
            return 0, "Completed"
        if code == -signal.SIGKILL:
            try:
                with open(os.path.join(self.state, "oom-killed")) as f:
                    oom = f.read().strip()
            except FileNotFoundError:
                oom = None
            if oom == "OOMKilled":
                return 137, oom
            if oom is not None:
                return 255, "Error"
        return (code if code >= 0 else 137), "Error"

    def finish(self, key, code, logs):
        pod = self.store.peek("pods", key[0], key[1])
        if pod is None:
            return
        self.logs[key] = logs
        t = now_rfc3339()
        phase = "Succeeded" if code == 0 else "Failed"
        pod["status"]["phase"] = phase
        for cs in pod["status"]["containerStatuses"]:
            exit_code, reason = self.terminated(code)
            cs.update({"ready": False, "started": False, "state": {
                "terminated": {"exitCode": exit_code, "reason": reason,
                               "finishedAt": t}}})
        for c in pod["status"].get("conditions", []):
            if c["type"] in ("Ready", "ContainersReady"):
                c["status"] = "False"
        self.store.put("pods", pod, "MODIFIED")
        job = self.owner(pod)
        if job is None:
            return
        st = job["status"]
        st["active"] = 0
        if code == 0:
            st["succeeded"] = st.get("succeeded", 0) + 1
            st["completionTime"] = t
            st["conditions"] = [_condition("SuccessCriteriaMet",
                                           "CompletionsReached",
                                           "Reached expected number of "
                                           "succeeded pods"),
                                _condition("Complete", "CompletionsReached",
                                           "Reached expected number of "
                                           "succeeded pods")]
            self.finished[job["metadata"]["uid"]] = time.time()
            self.store.put("jobs", job, "MODIFIED")
            return
        st["failed"] = st.get("failed", 0) + 1
        if st["failed"] > job["spec"]["backoffLimit"]:
            self.fail(job, "BackoffLimitExceeded",
                      "Job has reached the specified backoff limit")
        else:
            # The failed pod stays, as on a cluster; tick() starts the
            # retry since no pod of this Job is unfinished any more.
            self.store.put("jobs", job, "MODIFIED")

    def owner(self, pod):
        for r in pod["metadata"].get("ownerReferences", []):
            if r.get("kind") == "Job":
                job = self.store.peek("jobs", pod["metadata"]["namespace"],
                                      r["name"])
                if job and job["metadata"]["uid"] == r["uid"]:
                    return job
        return None

    def fail(self, job, reason, message):
        for pod in self.pods_of(job):
            if pod["status"]["phase"] in ("Pending", "Running"):
                self.delete_pod(pod)
        st = job["status"]
        st["active"] = 0
        st["conditions"] = [_condition("FailureTarget", reason, message),
                            _condition("Failed", reason, message)]
        self.finished[job["metadata"]["uid"]] = time.time()
        self.store.put("jobs", job, "MODIFIED")

    def expire(self, job):
        ttl = job["spec"].get("ttlSecondsAfterFinished")
        done = self.finished.get(job["metadata"]["uid"], time.time())
        if ttl is not None and time.time() >= done + ttl:
            self.delete_job(job, "Background")

    def kill(self, ns, name):
        """The pod's process group, while it runs: its first process may
        have ended and left others writing to the log."""
        proc = self.procs.pop((ns, name), None)
        if proc is not None and os.path.exists(os.path.join(
                self.groups, str(proc.pid))):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def kill_all(self):
        """The node goes down: no pod outlives the double."""
        for ns, name in list(self.procs):
            self.kill(ns, name)

    def delete_pod(self, pod):
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        self.kill(ns, name)
        self.logs.pop((ns, name), None)
        shutil.rmtree(self.pod_dir(ns, name), ignore_errors=True)
        return self.store.remove("pods", ns, name)

    def delete_job(self, job, propagation):
        for pod in self.pods_of(job):
            if propagation == "Orphan":
                pod["metadata"].pop("ownerReferences", None)
                self.store.put("pods", pod, "MODIFIED")
            else:
                self.delete_pod(pod)
        md = job["metadata"]
        self.started.pop(md["uid"], None)
        self.finished.pop(md["uid"], None)
        self.refused.pop(md["uid"], None)
        return self.store.remove("jobs", md["namespace"], md["name"])
