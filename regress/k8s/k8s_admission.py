# SPDX-License-Identifier: ISC
"""Admission for the Kubernetes API double: object validation (422 Invalid)
and Pod Security admission at the baseline and restricted levels.

The checks follow the Pod Security Standards page
(https://kubernetes.io/docs/concepts/security/pod-security-standards/),
level "latest"; the violation texts follow the form the real admission
plugin prints: `CHECK (container "c" must set FIELD=VALUE)`, joined by
", " after `violates PodSecurity "restricted:latest": `.
"""

import re

# metadata.name of most objects: an RFC 1123 subdomain.
DNS_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Namespaces, and Jobs (whose name becomes a label value): an RFC 1123 label.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

# Restricted: the only volume types allowed.
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir",
                      "ephemeral", "persistentVolumeClaim", "projected",
                      "secret"}
# Baseline: the capabilities a container may add (the runtime's default set).
BASELINE_CAPS = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID",
                 "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID",
                 "SETPCAP", "SETUID", "SYS_CHROOT"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                "net.ipv4.ip_unprivileged_port_start",
                "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range"}
LEVELS = ("privileged", "baseline", "restricted")


class Invalid(Exception):
    """A 422: causes is a list of (field, reason, body).  As apimachinery
    builds it (field.Error, errors.NewInvalid): a cause's message is the
    body alone ("Required value: ..."), the field is beside it; the
    Status message joins "field: body" with ", ", in brackets when there
    are several.
    https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation
    https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#response-status-kind
    """

    def __init__(self, causes):
        parts = []
        for f, _, body in causes:
            if "%s: %s" % (f, body) not in parts:
                parts.append("%s: %s" % (f, body))
        text = ", ".join(parts)
        super().__init__(text if len(parts) == 1 else "[%s]" % text)
        self.causes = causes


def _containers(spec):
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            yield c


def _quoted(names):
    return ", ".join('"%s"' % n for n in names)


def _who(names):
    return "%s %s" % ("container" if len(names) == 1 else "containers",
                      _quoted(names))


def _baseline(spec, out):
    host = ["%s=true" % k for k in ("hostNetwork", "hostPID", "hostIPC")
            if spec.get(k)]
    if host:
        out.append("host namespaces (%s)" % ", ".join(host))
    priv = [c.get("name") for c in _containers(spec)
            if (c.get("securityContext") or {}).get("privileged")]
    if priv:
        out.append("privileged (%s must not set "
                   "securityContext.privileged=true)" % _who(priv))
    added = []
    for c in _containers(spec):
        caps = ((c.get("securityContext") or {}).get("capabilities")
                or {}).get("add") or []
        added += [(c.get("name"), a) for a in caps if a not in BASELINE_CAPS]
    if added:
        out.append("non-default capabilities (%s must not include %s in "
                   "securityContext.capabilities.add)" % (
                       _who(sorted({n for n, _ in added})),
                       _quoted(sorted({a for _, a in added}))))
    hp = [v.get("name") for v in spec.get("volumes") or [] if "hostPath" in v]
    if hp:
        out.append("hostPath volumes (%s %s)" % (
            "volume" if len(hp) == 1 else "volumes", _quoted(hp)))
    ports = [(c.get("name"), p["hostPort"]) for c in _containers(spec)
             for p in c.get("ports") or [] if p.get("hostPort")]
    if ports:
        out.append("hostPort (%s uses hostPort %s)" % (
            _who(sorted({n for n, _ in ports})),
            ", ".join(str(p) for _, p in ports)))
    pm = [c.get("name") for c in _containers(spec)
          if (c.get("securityContext") or {}).get("procMount",
                                                   "Default") != "Default"]
    if pm:
        out.append("procMount (%s must not set "
                   "securityContext.procMount)" % _who(pm))
    bad = [s.get("name") for s in
           (spec.get("securityContext") or {}).get("sysctls") or []
           if s.get("name") not in SAFE_SYSCTLS]
    if bad:
        out.append("forbidden sysctls (%s)" % ", ".join(bad))
    unconf = []
    if ((spec.get("securityContext") or {}).get("seccompProfile")
            or {}).get("type") == "Unconfined":
        unconf.append("pod")
    unconf += ['container "%s"' % c.get("name") for c in _containers(spec)
               if ((c.get("securityContext") or {}).get("seccompProfile")
                   or {}).get("type") == "Unconfined"]
    if unconf:
        out.append("seccompProfile (%s must not set "
                   "securityContext.seccompProfile.type to \"Unconfined\")"
                   % " and ".join(unconf))


def _pod_or_each(spec, field, ok):
    """Names of the containers where FIELD is not acceptable: a container
    value wins; an unset one falls back to the pod's."""
    pod = (spec.get("securityContext") or {}).get(field)
    bad = []
    for c in _containers(spec):
        v = (c.get("securityContext") or {}).get(field)
        if not ok(v if v is not None else pod):
            bad.append(c.get("name"))
    return bad


def _restricted(spec, out):
    vols = [(v.get("name"), k) for v in spec.get("volumes") or []
            for k in v if k != "name" and k not in RESTRICTED_VOLUMES]
    if vols:
        out.append("restricted volume types (%s)" % ", ".join(
            'volume "%s" uses restricted volume type "%s"' % nv
            for nv in vols))
    ape = [c.get("name") for c in _containers(spec)
           if (c.get("securityContext") or {}).get(
               "allowPrivilegeEscalation") is not False]
    if ape:
        out.append("allowPrivilegeEscalation != false (%s must set "
                   "securityContext.allowPrivilegeEscalation=false)"
                   % _who(ape))
    nodrop = [c.get("name") for c in _containers(spec)
              if "ALL" not in (((c.get("securityContext") or {})
                                .get("capabilities") or {}).get("drop")
                               or [])]
    adds = [(c.get("name"), a) for c in _containers(spec)
            for a in (((c.get("securityContext") or {}).get("capabilities")
                       or {}).get("add") or []) if a != "NET_BIND_SERVICE"]
    why = []
    if nodrop:
        why.append('%s must set securityContext.capabilities.drop=["ALL"]'
                   % _who(nodrop))
    if adds:
        why.append("%s must not include %s in "
                   "securityContext.capabilities.add" % (
                       _who(sorted({n for n, _ in adds})),
                       _quoted(sorted({a for _, a in adds}))))
    if why:
        out.append("unrestricted capabilities (%s)" % "; ".join(why))
    nonroot = _pod_or_each(spec, "runAsNonRoot", lambda v: v is True)
    if nonroot:
        out.append("runAsNonRoot != true (pod or %s must set "
                   "securityContext.runAsNonRoot=true)" % _who(nonroot))
    root = ["pod"] if (spec.get("securityContext") or {}).get(
        "runAsUser") == 0 else []
    root += ['container "%s"' % c.get("name") for c in _containers(spec)
             if (c.get("securityContext") or {}).get("runAsUser") == 0]
    if root:
        out.append("runAsUser=0 (%s must not set runAsUser=0)"
                   % " and ".join(root))
    seccomp = _pod_or_each(
        spec, "seccompProfile",
        lambda v: (v or {}).get("type") in ("RuntimeDefault", "Localhost"))
    if seccomp:
        out.append('seccompProfile (pod or %s must set '
                   'securityContext.seccompProfile.type to "RuntimeDefault" '
                   'or "Localhost")' % _who(seccomp))


def pod_security(spec, level):
    """The violations of LEVEL by a pod spec, in the documented order."""
    out = []
    if level in ("baseline", "restricted"):
        _baseline(spec, out)
    if level == "restricted":
        _restricted(spec, out)
    return out


def refusal(spec, ns_obj):
    """'PodSecurity "LEVEL:latest": ...' when the pod SPEC breaks its
    namespace's enforce level, else None."""
    level = namespace_level(ns_obj)
    bad = pod_security(spec, level)
    if not bad:
        return None
    return 'PodSecurity "%s:latest": %s' % (level, ", ".join(bad))


def namespace_level(ns_obj):
    labels = (ns_obj.get("metadata") or {}).get("labels") or {}
    level = labels.get("pod-security.kubernetes.io/enforce", "privileged")
    return level if level in LEVELS else "privileged"


def _name(obj, pattern, what):
    name = (obj.get("metadata") or {}).get("name") or ""
    if not name:
        return [("metadata.name", "FieldValueRequired",
                 "Required value: name or generateName is required")]
    if len(name) > 253 or not pattern.match(name):
        return [("metadata.name", "FieldValueInvalid",
                 'Invalid value: "%s": %s' % (name, what))]
    return []


SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case "
                 "alphanumeric characters, '-' or '.', and must start and "
                 "end with an alphanumeric character")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case "
             "alphanumeric characters or '-', and must start and end with "
             "an alphanumeric character")


def _pod_spec(spec, path):
    causes = []
    if not spec.get("containers"):
        causes.append((path + ".containers", "FieldValueRequired",
                       "Required value"))
    for i, c in enumerate(_containers(spec)):
        for field in ("name", "image"):
            if not c.get(field):
                f = "%s.containers[%d].%s" % (path, i, field)
                causes.append((f, "FieldValueRequired", "Required value"))
    vols = {v.get("name") for v in spec.get("volumes") or []}
    for i, c in enumerate(_containers(spec)):
        for j, m in enumerate(c.get("volumeMounts") or []):
            f = "%s.containers[%d].volumeMounts[%d]" % (path, i, j)
            if m.get("name") not in vols:
                causes.append((f + ".name", "FieldValueNotFound",
                               'Not found: "%s"' % m.get("name")))
            sub = m.get("subPath", "")
            if sub.startswith("/"):
                causes.append((f + ".subPath", "FieldValueInvalid",
                               'Invalid value: "%s": must be a relative '
                               'path' % sub))
            elif ".." in sub.split("/"):
                causes.append((f + ".subPath", "FieldValueInvalid",
                               "Invalid value: \"%s\": must not contain "
                               "'..'" % sub))
    causes += _privileged_escalation(spec, path)
    # Defaulting has made a missing restartPolicy "Always" by now.
    rp = spec.get("restartPolicy", "Always")
    if rp not in RESTART_POLICIES:
        causes.append((path + ".restartPolicy", "FieldValueNotSupported",
                       'Unsupported value: "%s": supported values: %s'
                       % (rp, _quoted(RESTART_POLICIES))))
    return causes


RESTART_POLICIES = ("Always", "OnFailure", "Never")
JOB_RESTART_POLICIES = ("OnFailure", "Never")


def _privileged_escalation(spec, path):
    """A container may not be privileged with allowPrivilegeEscalation
    false: object validation, before any admission plugin (Pod Security)
    sees the pod.  The real value is Go's dump of the SecurityContext
    (pointer addresses included), here "{...}".
    https://kubernetes.io/docs/tasks/configure-pod-container/security-context/
    """
    causes = []
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or []):
            sc = c.get("securityContext") or {}
            if sc.get("allowPrivilegeEscalation") is False and \
                    sc.get("privileged") is True:
                causes.append((
                    "%s.%s[%d].securityContext" % (path, key, i),
                    "FieldValueInvalid", "Invalid value: "
                    "core.SecurityContext{...}: cannot set "
                    "`allowPrivilegeEscalation` to false and `privileged` "
                    "to true"))
    return causes


def _job_restart_policy(tmpl):
    """batch/v1 takes OnFailure or Never; Always, which is also what an
    unset one defaults to, is "Required value".
    https://kubernetes.io/docs/concepts/workloads/controllers/job/#pod-template
    """
    f = "spec.template.spec.restartPolicy"
    rp = tmpl.get("restartPolicy", "Always")
    if rp == "Always":
        return [(f, "FieldValueRequired", "Required value: valid values: "
                 + _quoted(JOB_RESTART_POLICIES))]
    if rp not in JOB_RESTART_POLICIES:
        return [(f, "FieldValueNotSupported",
                 'Unsupported value: "%s": supported values: %s'
                 % (rp, _quoted(JOB_RESTART_POLICIES)))]
    return []


def validate(resource, obj):
    """Raise Invalid when OBJ cannot be stored as RESOURCE."""
    if resource == "namespaces" or resource == "jobs":
        causes = _name(obj, DNS_LABEL, LABEL_MSG)
    else:
        causes = _name(obj, DNS_SUBDOMAIN, SUBDOMAIN_MSG)
    spec = obj.get("spec") or {}
    version = (obj.get("apiVersion") or "").rpartition("/")[2]
    if resource == "jobs":
        tmpl = (spec.get("template") or {}).get("spec")
        if tmpl is None:
            causes.append(("spec.template", "FieldValueRequired",
                           "Required value"))
        else:
            causes += _pod_spec(tmpl, "spec.template.spec")
            causes += _job_restart_policy(tmpl)
        for f in ("activeDeadlineSeconds", "backoffLimit",
                  "ttlSecondsAfterFinished"):
            v = spec.get(f)
            if v is not None and (not isinstance(v, int) or v < 0 or
                                  (f == "activeDeadlineSeconds" and v == 0)):
                causes.append(("spec." + f, "FieldValueInvalid",
                               "Invalid value: %s: must be greater than%s "
                               "0" % (v, "" if f == "activeDeadlineSeconds"
                                      else " or equal to")))
    elif resource == "pods":
        causes += _pod_spec(spec, "spec")
    elif resource in ("rolebindings", "clusterrolebindings"):
        ref = obj.get("roleRef") or {}
        if ref.get("kind") not in ("Role", "ClusterRole") or \
                not ref.get("name"):
            causes.append(("roleRef", "FieldValueRequired",
                           "Required value: kind Role or ClusterRole "
                           "and a name"))
        for i, s in enumerate(obj.get("subjects") or []):
            if s.get("kind") == "ServiceAccount" and not s.get("namespace") \
                    and resource == "clusterrolebindings":
                f = "subjects[%d].namespace" % i
                causes.append((f, "FieldValueRequired", "Required value"))
    elif (resource, version) in CRD_SCHEMAS:
        causes += _schema(obj, CRD_SCHEMAS[resource, version], "")
    if causes:
        raise Invalid(causes)


# The part of agent-sandbox's v1beta1 CRD schemas (k8s/crds/ of the
# upstream snapshot of 2026-08-22, commit 2fd412d5, the last before
# v1.0.0 reachable here) that runnerd's requests and cluster/ touch:
# types, required fields and enums.  The API server checks a custom
# resource against its CRD's OpenAPI schema before storing it.
# https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation
# Checked against a 1.24 kube-apiserver with v0.5.6's CRDs: a missing
# field is FieldValueRequired "Required value"; a wrong type is
# FieldValueInvalid 'Invalid value: "T": F in body must be of type W: "T"';
# a value off an enum is FieldValueNotSupported (apimachinery's
# field.NotSupported wording; not checked against a server).
# Only the version whose schema is here is checked (a double serving
# v1alpha1 checks nothing).
_REF = {"type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"}}}
_POD_TEMPLATE = {"type": "object", "required": ["spec"],
                 "properties": {"metadata": {"type": "object"},
                                "spec": {"type": "object"}}}
CRD_SCHEMAS = {
    ("sandboxclaims", "v1beta1"): {
        "type": "object", "required": ["spec"], "properties": {
            "spec": {"type": "object", "required": ["warmPoolRef"],
                     "properties": {
                         "warmPoolRef": _REF,
                         "additionalPodMetadata": {"type": "object"},
                         "env": {"type": "array"},
                         "lifecycle": {"type": "object", "properties": {
                             "shutdownPolicy": {"type": "string", "enum": [
                                 "Delete", "DeleteForeground", "Retain"]},
                             "shutdownTime": {"type": "string"},
                             "ttlSecondsAfterFinished": {
                                 "type": "integer"}}}}}}},
    ("sandboxwarmpools", "v1beta1"): {
        "type": "object", "required": ["spec"], "properties": {
            "spec": {"type": "object", "required": ["sandboxTemplateRef"],
                     "properties": {
                         "replicas": {"type": "integer"},
                         "sandboxTemplateRef": _REF,
                         "updateStrategy": {"type": "object", "properties": {
                             "type": {"type": "string", "enum": [
                                 "Recreate", "OnReplenish"]}}}}}}},
    ("sandboxtemplates", "v1beta1"): {
        "type": "object", "required": ["spec"], "properties": {
            "spec": {"type": "object", "required": ["podTemplate"],
                     "properties": {
                         "podTemplate": _POD_TEMPLATE,
                         "service": {"type": "boolean"},
                         "networkPolicyManagement": {
                             "type": "string",
                             "enum": ["Managed", "Unmanaged"]},
                         "envVarsInjectionPolicy": {
                             "type": "string",
                             "enum": ["Allowed", "Overrides", "Disallowed"]},
                         "volumeClaimTemplatesPolicy": {
                             "type": "string",
                             "enum": ["Disallowed", "Allowed",
                                      "Overrides"]}}}}},
    ("sandboxes", "v1beta1"): {
        "type": "object", "required": ["spec"], "properties": {
            "spec": {"type": "object", "required": ["podTemplate"],
                     "properties": {
                         "podTemplate": _POD_TEMPLATE,
                         "operatingMode": {"type": "string",
                                           "enum": ["Running", "Suspended"]},
                         "service": {"type": "boolean"},
                         "shutdownPolicy": {"type": "string",
                                            "enum": ["Delete", "Retain"]},
                         "shutdownTime": {"type": "string"}}}}},
}

JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"),
              (str, "string"), (list, "array"), (dict, "object"))


def _json_type(v):
    return next((t for cls, t in JSON_TYPES if isinstance(v, cls)), "null")


def _schema(v, schema, field):
    """The causes of V against SCHEMA (type, required, properties)."""
    got = _json_type(v)
    if got != schema["type"]:
        return [(field, "FieldValueInvalid",
                 'Invalid value: "%s": %s in body must be of type %s: "%s"'
                 % (got, field, schema["type"], got))]
    if "enum" in schema and v not in schema["enum"]:
        return [(field, "FieldValueNotSupported",
                 'Unsupported value: "%s": supported values: %s'
                 % (v, _quoted(schema["enum"])))]
    causes = []
    for name, sub in schema.get("properties", {}).items():
        f = field + "." + name if field else name
        if name in v:
            causes += _schema(v[name], sub, f)
        elif name in schema.get("required", ()):
            causes.append((f, "FieldValueRequired", "Required value"))
    return causes
