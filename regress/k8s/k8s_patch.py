# SPDX-License-Identifier: ISC
"""PATCH for the Kubernetes API double: the three patch types the API
server takes on a JSON object, applied to the object as served.

  application/merge-patch+json             RFC 7386 JSON merge patch
  application/strategic-merge-patch+json   a merge patch whose lists of
      objects merge by their key (containers by name, ...), with the
      $patch: delete / replace directives
  application/json-patch+json              RFC 6902 JSON patch

https://kubernetes.io/docs/reference/using-api/api-concepts/#patch-and-apply
https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/
https://www.rfc-editor.org/rfc/rfc7386 and https://www.rfc-editor.org/rfc/rfc6902

Failures raise PatchError(code, message): 400 for a patch that is not
what its type says, 422 for a JSON patch operation that does not apply.
"""

import copy
import json

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
TYPES = (JSON_PATCH, MERGE, STRATEGIC, APPLY)

# The patchMergeKey of the list fields a Job or a Pod carries (their
# x-kubernetes-patch-merge-key in the API reference).
MERGE_KEYS = {"containers": "name", "initContainers": "name",
              "ephemeralContainers": "name", "volumes": "name",
              "env": "name", "volumeMounts": "mountPath",
              "ports": "containerPort", "imagePullSecrets": "name",
              "ownerReferences": "uid", "conditions": "type",
              "hostAliases": "ip"}


class PatchError(Exception):
    def __init__(self, code, message, details=None):
        super().__init__(message)
        self.code, self.details = code, details


def not_an_object(raw, doc):
    """A merge patch that is JSON but not an object: the API server
    reads the patched result's apiVersion and kind from it first, and
    fails that as a 422 on the field "patch" (1.24, checked by hand)."""
    cause = ('Invalid value: "%s": couldn\'t get version/kind; json parse '
             'error: json: cannot unmarshal %s into Go value of type '
             'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
             'Kind string "json:\\"kind,omitempty\\"" }'
             % (raw.decode("utf-8", "replace").strip(),
                # encoding/json's names for what it found
                "array" if isinstance(doc, list) else "string"
                if isinstance(doc, str) else "bool"
                if isinstance(doc, bool) else "number"))
    return PatchError(422, ' "" is invalid: patch: ' + cause, {"causes": [
        {"reason": "FieldValueInvalid", "message": cause, "field": "patch"}]})


def decode(ptype, raw):
    """The patch document of a body, as the API server reads it."""
    if not raw.strip():
        # Go's json.Unmarshal of nothing; evanphx/json-patch's merge
        # reports it as its own ErrBadJSONPatch.
        raise PatchError(400, "Invalid JSON Patch" if ptype == MERGE
                         else "unexpected end of JSON input")
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise PatchError(400, "Invalid JSON Patch" if ptype == MERGE else
                         "error decoding patch: %s" % e)
    if ptype == JSON_PATCH and not isinstance(doc, list):
        raise PatchError(400, "json: cannot unmarshal object into Go "
                         "value of type jsonpatch.Patch")
    if ptype == MERGE and not isinstance(doc, dict):
        raise not_an_object(raw, doc)
    if ptype != JSON_PATCH and not isinstance(doc, dict):
        raise PatchError(400, "json: cannot unmarshal array into Go value "
                         "of type map[string]interface {}")
    return doc


def apply(ptype, obj, doc):
    """OBJ (not changed) with the decoded patch DOC applied."""
    if ptype == MERGE:
        return merge(obj, doc)
    if ptype == STRATEGIC:
        return strategic(obj, doc, None)
    return json_patch(obj, doc)


def merge(target, patch):
    """RFC 7386: objects merge key by key, null removes, the rest
    replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def strategic(target, patch, key):
    if not isinstance(patch, dict):
        if isinstance(patch, list) and key in MERGE_KEYS and \
                isinstance(target, list):
            return _merge_list(target, patch, MERGE_KEYS[key])
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items()
                if k != "$patch"}
    if directive is not None or any(k.startswith("$") for k in patch):
        raise PatchError(400, "the double does not serve the strategic "
                         "merge patch directive in %s" % json.dumps(patch))
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = strategic(out.get(k), v, k)
    return out


def _merge_list(target, patch, mkey):
    out = copy.deepcopy(target)
    for item in patch:
        if not isinstance(item, dict) or mkey not in item:
            raise PatchError(400, "map: %s does not contain declared merge "
                             "key: %s" % (json.dumps(item), mkey))
        at = [i for i, o in enumerate(out) if isinstance(o, dict) and
              o.get(mkey) == item[mkey]]
        if item.get("$patch") == "delete":
            out = [o for i, o in enumerate(out) if i not in at]
        elif at:
            out[at[0]] = strategic(out[at[0]], item, None)
        else:
            out.append(strategic({}, item, None))
    return out


# -- RFC 6902 -----------------------------------------------------------------

def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(422, "JSON pointer must start with /: %s" % path)
    return [p.replace("~1", "/").replace("~0", "~")
            for p in path[1:].split("/")]


def _parent(doc, parts, op, path):
    """The container of PATH's last part, and that part (an int index
    for a list)."""
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise PatchError(422, "%s operation does not apply: doc is "
                             "missing path: %s" % (op, path))
    last = parts[-1]
    if isinstance(cur, list):
        if last == "-" and op in ("add", "move", "copy"):
            return cur, len(cur)
        if not last.isdigit():
            raise PatchError(422, "%s operation does not apply: doc is "
                             "missing path: %s" % (op, path))
        return cur, int(last)
    if not isinstance(cur, dict):
        raise PatchError(422, "%s operation does not apply: doc is missing "
                         "path: %s" % (op, path))
    return cur, last


def _get(doc, path, op):
    parts = _pointer(path)
    if not parts:
        return doc
    c, k = _parent(doc, parts, op, path)
    if (isinstance(c, list) and k >= len(c)) or \
            (isinstance(c, dict) and k not in c):
        raise PatchError(422, "%s operation does not apply: doc is missing "
                         "path: %s" % (op, path))
    return c[k]


def _remove(doc, path, op):
    parts = _pointer(path)
    value = _get(doc, path, op)
    c, k = _parent(doc, parts, op, path)
    del c[k]
    return value


def _add(doc, path, value, op):
    parts = _pointer(path)
    if not parts:
        raise PatchError(422, "the double does not replace a whole object")
    c, k = _parent(doc, parts, op, path)
    if isinstance(c, list):
        if k > len(c):
            raise PatchError(422, "%s operation does not apply: doc is "
                             "missing path: %s" % (op, path))
        c.insert(k, value)
    else:
        c[k] = value


def json_patch(obj, ops):
    doc = copy.deepcopy(obj)
    for o in ops:
        if not isinstance(o, dict) or not isinstance(o.get("path"), str):
            raise PatchError(400, "a JSON patch operation needs op and "
                             "path: %s" % json.dumps(o))
        op, path = o.get("op"), o["path"]
        if op in ("add", "replace", "test") and "value" not in o:
            raise PatchError(422, "missing value for %s at %s" % (op, path))
        if op == "add":
            _add(doc, path, copy.deepcopy(o["value"]), op)
        elif op == "remove":
            _remove(doc, path, op)
        elif op == "replace":
            _remove(doc, path, op)
            _add(doc, path, copy.deepcopy(o["value"]), op)
        elif op in ("move", "copy"):
            if not isinstance(o.get("from"), str):
                raise PatchError(422, "missing from for %s" % op)
            value = _remove(doc, o["from"], op) if op == "move" else \
                copy.deepcopy(_get(doc, o["from"], op))
            _add(doc, path, value, op)
        elif op == "test":
            if _get(doc, path, op) != o["value"]:
                raise PatchError(422, "testing value %s failed" % path)
        else:
            raise PatchError(400, "Unexpected kind: %s" % op)
    return doc
