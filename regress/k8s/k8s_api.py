# SPDX-License-Identifier: ISC
"""The verbs of the Kubernetes API double, without HTTP: routing, RBAC
checks, create / get / list / patch / delete / deletecollection,
TokenRequest, SelfSubjectAccessReview, pods/log and discovery.  Every answer is
(code, body, warning): body a dict sent as JSON or bytes sent as text;
every failure an ApiError carrying a Status.
"""

import base64
import calendar
import copy
import json
import time

import k8s_admission
import k8s_authz
import k8s_patch
from k8s_store import (RESOURCES, BadSelector, api_version, field_selector,
                       group_of, label_selector, new_meta, now_rfc3339,
                       pending_pod)

VERBS = {"POST": "create", "DELETE": "delete", "PUT": "update",
         "PATCH": "patch"}
JOB_ORPHAN_WARNING = ('299 - "child pods are preserved by default when jobs '
                      'are deleted; set propagationPolicy=Background to '
                      'remove them or set propagationPolicy=Orphan to '
                      'suppress this warning"')


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code, self.reason, self.details = code, reason, details

    def status(self):
        return status(self.code, self.reason, str(self), self.details)


def status(code, reason, message, details=None):
    """A Status; StatusDetails' fields are all omitempty, so an empty
    group (the core group) is left out, as a real server does, but the
    details themselves are there when the error carries them, if empty
    (a 1.24 kube-apiserver's 406, 415 and failed JSON patch: "details":
    {}).
    https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/status/
    """
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure" if code >= 300 else "Success",
            "message": message, "reason": reason, "code": code}
    if details is not None:
        body["details"] = {k: v for k, v in details.items() if v}
    return body


def qualified(resource):
    """pods, jobs.batch, roles.rbac.authorization.k8s.io: how messages
    name a resource."""
    base = resource.split("/")[0]
    g = group_of(base)
    return base + ("." + g if g else "")


def not_found(resource, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (
        qualified(resource), name), {"name": name,
                                     "group": group_of(resource),
                                     "kind": resource.split("/")[0]})


NO_SUCH_PATH = ("the server could not find the requested resource")


class Route:
    """Where a request goes: resource, namespace, name, subresource."""

    def __init__(self, group, version, parts):
        self.group, self.version = group, version
        self.ns = None
        if len(parts) >= 3 and parts[0] == "namespaces":
            self.ns, parts = parts[1], parts[2:]
        self.resource = parts[0] if parts else None
        self.name = parts[1] if len(parts) > 1 else None
        self.sub = parts[2] if len(parts) > 2 else None
        if not parts or len(parts) > 3 or not self.known():
            raise ApiError(404, "NotFound", NO_SUCH_PATH)

    def known(self):
        full = self.authz_resource
        if full not in RESOURCES or group_of(full) != self.group or \
                RESOURCES[self.resource][1] != self.version:
            return False
        if self.ns is not None and not RESOURCES[self.resource][3]:
            return False
        return not (self.sub and (self.name is None or self.ns is None))

    @property
    def authz_resource(self):
        return self.resource + ("/" + self.sub if self.sub else "")

    @property
    def kind(self):
        return RESOURCES[self.resource][2]


def route_of(path):
    """The Route of a resource path, or ("discovery", parts)."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) <= 2 or \
            parts[:1] == ["apis"] and len(parts) <= 3:
        return "discovery", parts
    if parts[:2] == ["api", "v1"]:
        return "resource", Route("", "v1", parts[2:])
    if parts[:1] == ["apis"]:
        return "resource", Route(parts[1], parts[2], parts[3:])
    raise ApiError(404, "NotFound", NO_SUCH_PATH)


def verb_of(method, route, query):
    if method == "GET":
        if route.name is not None:
            return "get"
        return "watch" if query.get("watch") in ("1", "true") else "list"
    if method == "DELETE" and route.name is None:
        return "deletecollection"
    creates = route.name is None or route.sub is not None
    if method == "PATCH" and not creates:
        return "patch"
    if method not in ("POST", "DELETE") or (method == "POST") != creates:
        raise ApiError(405, "MethodNotAllowed", "the server does not allow "
                       "this method on the requested resource")
    return VERBS[method]


def selector(query):
    try:
        lsel = label_selector(query.get("labelSelector"))
        fsel = field_selector(query.get("fieldSelector"))
    except BadSelector as e:
        raise ApiError(400, "BadRequest", str(e))
    return lambda o: lsel(o["metadata"].get("labels")) and fsel(o)


def out(resource, obj):
    """An object as served: with kind and apiVersion."""
    obj = copy.deepcopy(obj)
    obj["kind"] = RESOURCES[resource][2]
    obj["apiVersion"] = api_version(resource)
    return obj


class Api:
    def __init__(self, store, tokens, controller):
        self.store = store
        self.tokens = tokens
        self.controller = controller

    def authenticate(self, token):
        def sa_uid(ns, name):
            sa = self.store.peek("serviceaccounts", ns, name)
            return sa["metadata"]["uid"] if sa else None
        with self.store.lock:
            return self.tokens.authenticate(token, sa_uid)

    def authorize(self, user, verb, route, forced_deny=False):
        if route.resource == "selfsubjectaccessreviews" and not forced_deny:
            return      # system:basic-user lets everyone ask
        res = route.authz_resource
        if not forced_deny and k8s_authz.allowed(
                self.store, user, verb, group_of(res), res, route.ns,
                route.name):
            return
        raise ApiError(403, "Forbidden", k8s_authz.forbidden_message(
            user, verb, group_of(res), res, route.ns, route.name),
            {"name": route.name, "group": route.group,
             "kind": route.resource})

    def call(self, verb, user, route, query, body, fault):
        with self.store.lock:
            return getattr(self, "do_" + verb)(user, route, query, body,
                                               fault)

    # -- discovery --

    def discovery(self, parts, port):
        groups = {RESOURCES[r][0]: RESOURCES[r][1] for r in RESOURCES
                  if RESOURCES[r][0] and group_of(r) == RESOURCES[r][0]}
        if parts == ["api"]:
            return 200, {"kind": "APIVersions", "versions": ["v1"],
                         "serverAddressByClientCIDRs": [{
                             "clientCIDR": "0.0.0.0/0",
                             "serverAddress": "127.0.0.1:%d" % port}]}, None
        if parts == ["api", "v1"]:
            return 200, self.resource_list("", "v1"), None
        if parts == ["apis"]:
            return 200, {"kind": "APIGroupList", "apiVersion": "v1",
                         "groups": [api_group(g, v) for g, v in
                                    sorted(groups.items())]}, None
        if len(parts) == 2 and parts[1] in groups:
            return 200, dict(api_group(parts[1], groups[parts[1]]),
                             kind="APIGroup", apiVersion="v1"), None
        if len(parts) == 3 and groups.get(parts[1]) == parts[2]:
            return 200, self.resource_list(parts[1], parts[2]), None
        raise ApiError(404, "NotFound", NO_SUCH_PATH)

    def resource_list(self, group, version):
        res = []
        for r, (g, v, kind, namespaced, short, verbs) in RESOURCES.items():
            if group_of(r) != group:
                continue
            entry = {"name": r, "singularName": "" if "/" in r else
                     kind.lower(), "namespaced": namespaced, "kind": kind,
                     "verbs": verbs}
            if short:
                entry["shortNames"] = short
            if g != group:
                entry.update({"group": g, "version": v})
            res.append(entry)
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": "%s/%s" % (group, version) if group
                else version, "resources": res}

    # -- reads --

    def namespace_of(self, route):
        if route.ns is None:
            return None
        ns = self.store.peek("namespaces", None, route.ns)
        if ns is None:
            raise not_found("namespaces", route.ns)
        return ns

    def do_get(self, user, route, query, body, fault):
        obj = self.store.peek(route.resource, route.ns, route.name)
        if obj is None:
            raise not_found(route.resource, route.name)
        if route.sub == "log":
            return 200, self.pod_log(obj, query), None
        return 200, out(route.resource, obj), None

    def selected(self, route, query):
        match = selector(query)
        return [o for o in self.store.all(route.resource, route.ns)
                if match(o)]

    def do_list(self, user, route, query, body, fault):
        return 200, {
            "kind": route.kind + "List",
            "apiVersion": api_version(route.resource),
            "metadata": {"resourceVersion": str(self.store.rv)},
            "items": self.selected(route, query)}, None

    def pod_log(self, pod, query):
        names = [c["name"] for c in pod["spec"].get("containers", [])]
        c = query.get("container", names[0] if names else "")
        md = pod["metadata"]
        if c not in names:
            raise ApiError(400, "BadRequest", "container %s is not valid "
                           "for pod %s" % (c, md["name"]))
        if pod["status"]["phase"] == "Pending":
            raise ApiError(400, "BadRequest",
                           'container "%s" in pod "%s" is waiting to start: '
                           'ContainerCreating' % (c, md["name"]))
        logs = self.controller.logs.get((md["namespace"], md["name"]), b"")
        if "tailLines" in query:
            n = int(query["tailLines"])
            logs = b"".join(logs.splitlines(True)[-n:]) if n > 0 else b""
        if "limitBytes" in query:
            logs = logs[:int(query["limitBytes"])]
        return logs

    # -- create --

    def do_create(self, user, route, query, body, fault):
        if route.sub == "token":
            return self.token_request(route, body)
        if route.resource == "selfsubjectaccessreviews":
            return self.access_review(user, body)
        if body.get("kind", route.kind) != route.kind:
            raise ApiError(400, "BadRequest", "the object kind %s does not "
                           "match the resource %s" % (body.get("kind"),
                                                      route.resource))
        md = body.setdefault("metadata", {})
        if route.ns is not None and md.get("namespace", route.ns) != route.ns:
            raise ApiError(400, "BadRequest", "the namespace of the "
                           "provided object does not match the namespace "
                           "sent on the request")
        if route.resource == "secrets":
            decode_secret(route, body)
        ns_obj = self.namespace_of(route)
        new_meta(body, route.ns)
        name = md.get("name")
        if route.resource == "secrets":
            fold_string_data(body)
        validate(route, body)
        if fault[:1] == ["409"] or \
                self.store.peek(route.resource, route.ns, name) is not None:
            raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (
                qualified(route.resource), name), {
                    "name": name, "group": route.group,
                    "kind": route.resource})
        self.check_escalation(user, route, body)
        warning = self.admit_pod_security(route, body, ns_obj,
                                          fault[:1] == ["podsecurity"])
        defaults(route.resource, body)
        if dry_run(query, {}):
            return 201, out(route.resource, body), warning
        self.store.put(route.resource, body, "ADDED")
        if route.resource == "namespaces":
            # The ServiceAccount controller's part: every namespace has a
            # "default" ServiceAccount.
            sa = {"metadata": {"name": "default"}}
            new_meta(sa, name)
            self.store.put("serviceaccounts", sa, "ADDED")
        return 201, out(route.resource, body), warning

    def check_escalation(self, user, route, body):
        if route.resource in ("roles", "clusterroles"):
            rules, verb, res = body.get("rules") or [], "escalate", \
                route.resource
            name = body["metadata"]["name"]
        elif route.resource in ("rolebindings", "clusterrolebindings"):
            ref = body["roleRef"]
            res = "roles" if ref["kind"] == "Role" else "clusterroles"
            role = self.store.peek(res, route.ns if res == "roles" else None,
                                   ref["name"])
            rules, verb, name = (role or {}).get("rules") or [], "bind", \
                ref["name"]
        else:
            return
        if k8s_authz.covers(self.store, user, rules, route.ns) or \
                k8s_authz.allowed(self.store, user, verb,
                                  "rbac.authorization.k8s.io", res, route.ns,
                                  name):
            return
        raise ApiError(403, "Forbidden", '%s "%s" is forbidden: user "%s" '
                       'is attempting to grant RBAC permissions not '
                       'currently held' % (qualified(route.resource),
                                           body["metadata"]["name"],
                                           user.name))

    def admit_pod_security(self, route, body, ns_obj, forced=False):
        """Pod Security enforces on pods: a pod that violates its
        namespace's level is Forbidden; a Job whose template would is
        stored, with a Warning header (its pods are then refused, see
        Controller.spawn).
        https://kubernetes.io/docs/concepts/security/pod-security-admission/#workload-resources-and-pod-templates
        """
        if route.resource == "pods":
            spec = body.get("spec") or {}
        elif route.resource == "jobs":
            spec = body["spec"]["template"]["spec"]
        else:
            return None
        refusal = k8s_admission.refusal(spec, ns_obj) or (
            forced and 'PodSecurity "restricted:latest": (the podsecurity '
            'fault)') or None
        if refusal is None:
            return None
        if route.resource == "jobs":
            return '299 - "would violate %s"' % refusal.replace('"', '\\"')
        raise ApiError(403, "Forbidden", '%s "%s" is forbidden: violates %s'
                       % (qualified(route.resource),
                          body["metadata"]["name"], refusal))

    def token_request(self, route, body):
        sa = self.store.peek("serviceaccounts", route.ns, route.name)
        if sa is None:
            raise not_found("serviceaccounts", route.name)
        spec = body.get("spec") or {}
        secs = spec.get("expirationSeconds") or 3600
        if not isinstance(secs, int) or secs < 600:
            raise ApiError(422, "Invalid", 'TokenRequest.authentication.k8s.'
                           'io "%s" is invalid: spec.expirationSeconds: '
                           'Invalid value: %s: may not specify a duration '
                           'less than 10 minutes' % (route.name, secs),
                           {"name": route.name,
                            "group": "authentication.k8s.io",
                            "kind": "TokenRequest"})
        secs = min(secs, 48 * 3600)
        now = time.time()
        audiences = spec.get("audiences") or [self.tokens.audience]
        token, exp = self.tokens.mint(sa, audiences, secs, now)
        return 201, {
            "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": route.name, "namespace": route.ns,
                         "creationTimestamp": now_rfc3339(now)},
            "spec": {"audiences": audiences, "expirationSeconds": secs,
                     "boundObjectRef": spec.get("boundObjectRef")},
            "status": {"token": token,
                       "expirationTimestamp": now_rfc3339(exp)}}, None

    def access_review(self, user, body):
        ra = (body.get("spec") or {}).get("resourceAttributes") or {}
        res = ra.get("resource", "") + ("/" + ra["subresource"]
                                        if ra.get("subresource") else "")
        ok = k8s_authz.allowed(self.store, user, ra.get("verb", ""),
                               ra.get("group", ""), res,
                               ra.get("namespace") or None, ra.get("name"))
        body.update({"kind": "SelfSubjectAccessReview",
                     "apiVersion": "authorization.k8s.io/v1",
                     "status": {"allowed": ok}})
        return 201, body, None

    # -- patch --

    def do_patch(self, user, route, query, body, fault):
        """A merge, strategic merge or JSON patch (k8s_patch) applied to
        the object as served; then the update's checks: the name and a
        given resourceVersion must match, a Job's template, selector,
        completions and completionMode are immutable, and the result
        must validate.  Beyond Jobs' spec, the double patches only
        metadata.labels and metadata.annotations.
        https://kubernetes.io/docs/reference/using-api/api-concepts/#patch-and-apply
        https://kubernetes.io/docs/concepts/workloads/controllers/job/#suspending-a-job
        """
        if route.sub is not None:
            raise ApiError(405, "MethodNotAllowed", "the double does not "
                           "patch subresources")
        obj = self.store.peek(route.resource, route.ns, route.name)
        if obj is None:
            raise not_found(route.resource, route.name)
        old = out(route.resource, obj)
        try:
            new = k8s_patch.apply(body["type"], old, body["patch"])
        except k8s_patch.PatchError as e:
            # A JSON patch operation that does not apply is a 422 with
            # the generic wording and empty details (1.24, checked).
            raise ApiError(422, "Invalid", "the server rejected our request"
                           " due to an error in our request", {}) \
                if e.code == 422 else ApiError(400, "BadRequest", str(e))
        if not isinstance(new, dict) or \
                not isinstance(new.get("metadata"), dict):
            raise ApiError(400, "BadRequest", "the patched object is not "
                           "an object with metadata")
        md, omd = new["metadata"], old["metadata"]
        if md.get("name") != omd["name"]:
            raise ApiError(400, "BadRequest", "the name of the object (%s) "
                           "does not match the name on the URL (%s)" % (
                               md.get("name"), omd["name"]))
        if md.get("resourceVersion", omd["resourceVersion"]) != \
                omd["resourceVersion"]:
            raise ApiError(409, "Conflict", 'Operation cannot be fulfilled '
                           'on %s "%s": the object has been modified; '
                           'please apply your changes to the latest version '
                           'and try again' % (qualified(route.resource),
                                              route.name),
                           {"name": route.name, "group": route.group,
                            "kind": route.resource})
        self.check_patchable(route, old, new)
        validate(route, new)
        if dry_run(query, {}):
            return 200, new, None
        obj["metadata"]["labels"] = md.get("labels") or {}
        obj["metadata"]["annotations"] = md.get("annotations") or {}
        for k in ("labels", "annotations"):
            if not obj["metadata"][k]:
                del obj["metadata"][k]
        if route.resource == "jobs" and new.get("spec") != old.get("spec"):
            obj["spec"] = new["spec"]
            obj["metadata"]["generation"] += 1
        self.store.put(route.resource, obj, "MODIFIED")
        return 200, out(route.resource, obj), None

    def check_patchable(self, route, old, new):
        def without(o, keys):
            o = copy.deepcopy(o)
            for k in keys:
                o["metadata"].pop(k, None)
            return o
        meta = ("labels", "annotations", "resourceVersion")
        if route.resource == "jobs":
            for f in ("template", "selector", "completions",
                      "completionMode"):
                if (new.get("spec") or {}).get(f) != old["spec"].get(f):
                    raise invalid(route, route.name, [(
                        "spec." + f, "FieldValueInvalid",
                        "Invalid value: %s: field is immutable" % (
                            "core.PodTemplateSpec{...}" if f == "template"
                            else json.dumps((new.get("spec") or {})
                                            .get(f))))])
            old, new = dict(old, spec=None), dict(new, spec=None)
        if without(new, meta) != without(old, meta):
            raise ApiError(422, "Invalid", "the double patches only "
                           "metadata.labels, metadata.annotations and a "
                           "Job's mutable spec fields")

    # -- delete --

    def propagation(self, route, query, body):
        policy = query.get("propagationPolicy") or \
            body.get("propagationPolicy")
        if policy is None and body.get("orphanDependents") is not None:
            policy = "Orphan" if body["orphanDependents"] else "Background"
        if policy not in (None, "Orphan", "Background", "Foreground"):
            raise ApiError(400, "BadRequest", 'DeleteOptions.meta.k8s.io '
                           '"" is invalid: propagationPolicy: Unsupported '
                           'value: "%s"' % policy)
        # batch/v1 Jobs keep their pods unless told otherwise.
        if policy is None and route.resource == "jobs":
            return "Orphan", JOB_ORPHAN_WARNING
        return policy or "Background", None

    def remove(self, resource, obj, policy):
        md = obj["metadata"]
        if resource == "jobs":
            gone = self.controller.delete_job(obj, policy)
        elif resource == "pods":
            gone = self.controller.delete_pod(obj)
        else:
            if resource == "namespaces":
                for (r, ns, _), o in list(self.store.objs.items()):
                    if ns == md["name"]:
                        self.remove(r, o, "Background")
            gone = self.store.remove(resource, md.get("namespace"),
                                     md["name"])
        gone = out(resource, gone)
        gone["metadata"]["deletionTimestamp"] = now_rfc3339()
        return gone

    def do_delete(self, user, route, query, body, fault):
        obj = self.store.peek(route.resource, route.ns, route.name)
        if obj is None:
            raise not_found(route.resource, route.name)
        policy, warning = self.propagation(route, query, body)
        if dry_run(query, body):
            return 200, out(route.resource, obj), warning
        return 200, self.remove(route.resource, obj, policy), warning

    def do_deletecollection(self, user, route, query, body, fault):
        self.namespace_of(route)
        policy, warning = self.propagation(route, query, body)
        gone = [out(route.resource, o) if dry_run(query, body) else
                self.remove(route.resource, o, policy)
                for o in self.selected(route, query)]
        return 200, {"kind": route.kind + "List",
                     "apiVersion": api_version(route.resource),
                     "metadata": {"resourceVersion": str(self.store.rv)},
                     "items": gone}, warning


def dry_run(query, body):
    """dryRun=All: every check, no change (in the query, or in the
    DeleteOptions body)."""
    return query.get("dryRun") == "All" or "All" in (body.get("dryRun")
                                                      or [])


def invalid(route, name, causes):
    """The 422 of a failed validation (k8s_admission.Invalid)."""
    e = causes if isinstance(causes, k8s_admission.Invalid) else \
        k8s_admission.Invalid(causes)
    group = "." + route.group if route.group else ""
    return ApiError(422, "Invalid", '%s%s "%s" is invalid: %s' % (
        route.kind, group, name, e), {
            "name": name, "group": route.group, "kind": route.kind,
            "causes": [{"reason": r, "message": m, "field": f}
                       for f, r, m in e.causes]})


def api_group(group, version):
    """A group's discovery entry; the double serves one version a group
    (https://kubernetes.io/docs/reference/using-api/api-concepts/, "Discovery
    API": GET /apis/GROUP answers an APIGroup)."""
    gv = {"groupVersion": "%s/%s" % (group, version), "version": version}
    return {"name": group, "versions": [gv], "preferredVersion": gv}


def validate(route, body):
    try:
        k8s_admission.validate(route.resource, body)
    except k8s_admission.Invalid as e:
        raise invalid(route, body["metadata"].get("name"), e)


def go_base64_error(s):
    """Where Go's base64.StdEncoding stops on S (the CorruptInputError
    offset), or None when S decodes: an illegal byte is its own offset,
    a quantum cut short is where that quantum starts; CR and LF are
    skipped."""
    alphabet = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                   b"0123456789+/")
    src, si = s.encode(), 0
    while si < len(src):
        j = 0
        while j < 4:
            if si == len(src):
                return None if j == 0 else si - j
            c = src[si]
            si += 1
            if c in alphabet:
                j += 1
                continue
            if c in b"\r\n":
                continue
            if c != ord("=") or j < 2:
                return si - 1
            if j == 2:
                while si < len(src) and src[si] in b"\r\n":
                    si += 1
                if si == len(src):
                    return len(src)
                if src[si] != ord("="):
                    return si - 1
                si += 1
            while si < len(src) and src[si] in b"\r\n":
                si += 1
            return si if si < len(src) else None
    return None


def decode_secret(route, body):
    """A Secret's data is []byte: base64 is decoded with the body, before
    any other check (even the namespace's), and a failure is the 400 of
    the decoder, with no details.
    https://kubernetes.io/docs/reference/kubernetes-api/config-and-storage-resources/secret-v1/
    """
    for v in (body.get("data") or {}).values():
        if v is not None and not isinstance(v, str):
            why = "json: cannot unmarshal %s into Go struct field " \
                  "Secret.data of type []uint8" % (
                      "bool" if isinstance(v, bool) else "array"
                      if isinstance(v, list) else "object"
                      if isinstance(v, dict) else "number")
        else:
            at = go_base64_error(v or "")
            if at is None:
                continue
            why = "illegal base64 data at input byte %d" % at
        raise ApiError(400, "BadRequest", 'Secret in version "%s" cannot '
                       'be handled as a Secret: %s' % (route.version, why))


def fold_string_data(body):
    """stringData is write-only: merged into data, as the API server does."""
    data = body.setdefault("data", {})
    for k, v in (body.pop("stringData", None) or {}).items():
        data[k] = base64.b64encode(str(v).encode()).decode()
    body.setdefault("type", "Opaque")


def defaults(resource, body):
    if resource == "jobs":
        spec = body["spec"]
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completions", 1)
        spec.setdefault("parallelism", 1)
        spec.setdefault("completionMode", "NonIndexed")
        body["status"] = {}
    elif resource == "pods":
        pending_pod(body)
    elif resource == "persistentvolumeclaims":
        body.setdefault("spec", {})
        body["status"] = {"phase": "Pending"}
    elif resource == "namespaces":
        body["spec"] = {"finalizers": ["kubernetes"]}
        body["status"] = {"phase": "Active"}
        labels = body["metadata"].setdefault("labels", {})
        labels["kubernetes.io/metadata.name"] = body["metadata"]["name"]


# -- server-side printing (what `kubectl get` asks for with as=Table) --------

def age(obj):
    created = obj["metadata"].get("creationTimestamp")
    secs = int(time.time() - calendar.timegm(time.strptime(
        created, "%Y-%m-%dT%H:%M:%SZ"))) if created else 0
    if secs < 120:
        return "%ds" % secs
    if secs < 600:
        return "%dm%ds" % (secs // 60, secs % 60)
    return "%dm" % (secs // 60) if secs < 10800 else "%dh" % (secs // 3600)


def _pod_cells(o):
    cs = o["status"].get("containerStatuses") or []
    waiting = [c["state"]["waiting"].get("reason") for c in cs
               if "waiting" in c.get("state", {})]
    return ["%d/%d" % (sum(1 for c in cs if c.get("ready")), len(cs)),
            waiting[0] if waiting else {"Succeeded": "Completed"}.get(
                o["status"]["phase"], o["status"]["phase"]),
            sum(c.get("restartCount", 0) for c in cs)]


def _job_cells(o):
    conds = {c["type"] for c in o["status"].get("conditions", [])}
    state = "Complete" if "Complete" in conds else \
        "Failed" if "Failed" in conds else "Running"
    return [state, "%d/%d" % (o["status"].get("succeeded", 0),
                              o["spec"].get("completions", 1))]


COLUMNS = {
    "pods": (["Ready", "Status", "Restarts"], _pod_cells),
    "jobs": (["Status", "Completions"], _job_cells),
    "namespaces": (["Status"], lambda o: [o["status"].get("phase")]),
    "secrets": (["Type", "Data"],
                lambda o: [o.get("type"), len(o.get("data") or {})]),
}


def table(resource, answer):
    """A get or list answer as the Table kubectl asks for."""
    objs = answer.get("items", [answer])
    extra, cells = COLUMNS.get(resource, ([], lambda o: []))
    cols = ["Name"] + extra + ["Age"]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
            "metadata": answer["metadata"] if "items" in answer else {},
            "columnDefinitions": [
                {"name": c, "type": "string", "format": "name"
                 if c == "Name" else "", "description": c, "priority": 0}
                for c in cols],
            "rows": [{"cells": [o["metadata"]["name"]] + cells(o) +
                      [age(o)], "object": {
                          "kind": "PartialObjectMetadata",
                          "apiVersion": "meta.k8s.io/v1",
                          "metadata": o["metadata"]}} for o in objs]}
