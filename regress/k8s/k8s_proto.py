# SPDX-License-Identifier: ISC
"""Just enough of the Kubernetes protobuf encoding for kubectl's typed
requests to the double: kubectl sends TokenRequest (`kubectl create
token`), DeleteOptions (`kubectl delete`), SelfSubjectAccessReview
(`kubectl auth can-i`), Secret, Namespace and ServiceAccount (`kubectl
create secret|namespace|serviceaccount`) as protobuf and does not fall
back to JSON.  Objects from files (`kubectl create -f`) travel as JSON.

The envelope is the 4-byte magic "k8s\\0" and a runtime.Unknown message
(1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4
contentType); field numbers are those of k8s.io/api generated.proto.
https://kubernetes.io/docs/reference/using-api/api-concepts/#protobuf-encoding
"""

import base64

MAGIC = b"k8s\x00"


def _varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def fields(buf):
    """{field number: [values]}: ints for varints, bytes otherwise."""
    out, i = {}, 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            v, i = bytes(buf[i:i + n]), i + n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            v, i = int.from_bytes(buf[i:i + n], "little"), i + n
        else:
            raise ValueError("unsupported protobuf wire type %d" % wire)
        out.setdefault(num, []).append(v)
    return out


def _str(f, n):
    return f[n][-1].decode() if n in f else None


def _msg(f, n):
    return fields(f[n][-1]) if n in f else {}


def _map(f, n):
    entries = [fields(e) for e in f.get(n, [])]
    return {_str(e, 1): e[2][-1] if 2 in e else b"" for e in entries}


def _meta(f):
    m = _msg(f, 1)
    out = {k: _str(m, n) for n, k in ((1, "name"), (2, "generateName"),
                                        (3, "namespace")) if _str(m, n)}
    for n, k in ((11, "labels"), (12, "annotations")):
        if n in m:
            out[k] = {a: b.decode() for a, b in _map(m, n).items()}
    return out


def _plain(kind):
    return lambda f: {"kind": kind, "metadata": _meta(f)}


def _secret(f):
    out = {"kind": "Secret", "metadata": _meta(f),
           "data": {k: base64.b64encode(v).decode()
                    for k, v in _map(f, 2).items()}}
    if 3 in f:
        out["type"] = _str(f, 3)
    return out


def _token_request(f):
    spec = _msg(f, 2)
    out = {"audiences": [a.decode() for a in spec.get(1, [])]}
    if 4 in spec:
        out["expirationSeconds"] = spec[4][-1]
    return {"kind": "TokenRequest", "spec": out}


def _delete_options(f):
    out = {}
    if 3 in f:
        out["orphanDependents"] = bool(f[3][-1])
    if 4 in f:
        out["propagationPolicy"] = _str(f, 4)
    if 5 in f:
        out["dryRun"] = [v.decode() for v in f[5]]
    return out


def _access_review(f):
    ra = _msg(_msg(f, 2), 1)
    names = {1: "namespace", 2: "verb", 3: "group", 4: "version",
             5: "resource", 6: "subresource", 7: "name"}
    return {"kind": "SelfSubjectAccessReview", "spec": {
        "resourceAttributes": {k: _str(ra, n) or "" for n, k in
                               names.items()}}}


DECODERS = {"Namespace": _plain("Namespace"),
            "ServiceAccount": _plain("ServiceAccount"),
            "Secret": _secret,
            "TokenRequest": _token_request,
            "DeleteOptions": _delete_options,
            "SelfSubjectAccessReview": _access_review}


def decode(raw):
    """The JSON-shaped dict of a protobuf body, for the kinds above."""
    if not raw.startswith(MAGIC):
        raise ValueError("no protobuf envelope")
    unknown = fields(raw[len(MAGIC):])
    kind = _str(_msg(unknown, 1), 2)
    if kind not in DECODERS:
        raise ValueError("protobuf %s is not served" % kind)
    return DECODERS[kind](fields(unknown.get(2, [b""])[-1]))
