# SPDX-License-Identifier: ISC
"""Authentication and RBAC for the Kubernetes API double.

Tokens: the configured admin token (a member of system:masters, allowed
everything), and tokens minted by the TokenRequest API
(https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-request-v1/):
JWT-shaped, HMAC-signed with a per-run key, bound to the ServiceAccount's
uid.  A token stops working when it expires, when its audiences do not
include the API server's, or when its ServiceAccount is gone (deleted, or
recreated with another uid), as bound tokens do on a real cluster.

RBAC follows https://kubernetes.io/docs/reference/access-authn-authz/rbac/:
permissions are additive; a RoleBinding grants the rules of a Role (same
namespace) or a ClusterRole within its namespace; a ClusterRoleBinding
grants a ClusterRole everywhere; a rule with resourceNames never matches
create, list, watch or deletecollection.  Creating or updating a Role
needs every permission it grants (or the `escalate` verb), creating a
binding needs the permissions of the role it binds (or `bind`).
"""

import base64
import hashlib
import hmac
import json
import secrets
import time

MASTERS = "system:masters"


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class User:
    def __init__(self, name, groups, sa=None):
        self.name = name
        self.groups = groups
        self.sa = sa            # (namespace, name) for a ServiceAccount

    @property
    def admin(self):
        return MASTERS in self.groups


class Tokens:
    def __init__(self, admin_token, audience):
        self.admin_token = admin_token
        self.audience = audience
        self.key = secrets.token_bytes(32)

    def mint(self, sa, audiences, seconds, now):
        md = sa["metadata"]
        claims = {
            "aud": audiences or [self.audience],
            "exp": int(now + seconds), "iat": int(now), "nbf": int(now),
            "iss": self.audience,
            "sub": "system:serviceaccount:%s:%s" % (md["namespace"],
                                                    md["name"]),
            "jti": secrets.token_hex(16),
            "kubernetes.io": {"namespace": md["namespace"],
                              "serviceaccount": {"name": md["name"],
                                                 "uid": md["uid"]}},
        }
        head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        body = _b64(json.dumps(claims).encode())
        sig = hmac.new(self.key, ("%s.%s" % (head, body)).encode(),
                       hashlib.sha256).digest()
        return "%s.%s.%s" % (head, body, _b64(sig)), claims["exp"]

    def authenticate(self, token, sa_uid_of):
        """The User for TOKEN, or None (401).  sa_uid_of(ns, name) gives
        the uid of a ServiceAccount that exists now, or None."""
        if not token:
            return None
        if hmac.compare_digest(token, self.admin_token):
            return User("kubernetes-admin", [MASTERS, "system:authenticated"])
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            want = hmac.new(self.key, ("%s.%s" % (parts[0], parts[1]))
                            .encode(), hashlib.sha256).digest()
            if not hmac.compare_digest(want, _unb64(parts[2])):
                return None
            claims = json.loads(_unb64(parts[1]))
        except ValueError:
            return None
        if claims["exp"] <= time.time() or \
                self.audience not in claims["aud"]:
            return None
        k = claims["kubernetes.io"]
        ns, name = k["namespace"], k["serviceaccount"]["name"]
        if sa_uid_of(ns, name) != k["serviceaccount"]["uid"]:
            return None
        return User(claims["sub"],
                    ["system:serviceaccounts",
                     "system:serviceaccounts:" + ns, "system:authenticated"],
                    sa=(ns, name))


def _subject_matches(subject, user, binding_ns):
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        return user.sa == (subject.get("namespace") or binding_ns,
                           subject.get("name"))
    if kind == "User":
        return subject.get("name") == user.name
    if kind == "Group":
        return subject.get("name") in user.groups
    return False


def _rule_allows(rule, verb, group, resource, name):
    def has(key, value):
        return "*" in (rule.get(key) or []) or value in (rule.get(key) or [])
    if not (has("verbs", verb) and has("apiGroups", group) and
            has("resources", resource)):
        return False
    names = rule.get("resourceNames") or []
    if names:
        return verb not in ("create", "list", "watch", "deletecollection") \
            and name in names
    return True


def rules_for(store, user, namespace):
    """Every rule granted to USER in NAMESPACE (None: cluster scope)."""
    out = []
    for crb in store.all("clusterrolebindings"):
        if any(_subject_matches(s, user, None)
               for s in crb.get("subjects") or []):
            cr = store.peek("clusterroles", None, crb["roleRef"]["name"])
            out += (cr or {}).get("rules") or []
    if namespace is None:
        return out
    for rb in store.all("rolebindings", namespace):
        if not any(_subject_matches(s, user, namespace)
                   for s in rb.get("subjects") or []):
            continue
        ref = rb.get("roleRef") or {}
        if ref.get("kind") == "ClusterRole":
            role = store.peek("clusterroles", None, ref.get("name"))
        else:
            role = store.peek("roles", namespace, ref.get("name"))
        out += (role or {}).get("rules") or []
    return out


def allowed(store, user, verb, group, resource, namespace, name):
    if user.admin:
        return True
    return any(_rule_allows(r, verb, group, resource, name)
               for r in rules_for(store, user, namespace))


def _expand(rule):
    for verb in rule.get("verbs") or []:
        for group in rule.get("apiGroups") or [""]:
            for res in rule.get("resources") or []:
                for name in rule.get("resourceNames") or [None]:
                    yield verb, group, res, name


def covers(store, user, rules, namespace):
    """Whether USER already holds every permission in RULES (a literal
    "*" in RULES is only covered by a "*" the user holds)."""
    if user.admin:
        return True
    mine = rules_for(store, user, namespace)
    return all(any(_rule_allows(r, v, g, res, n) for r in mine)
               for rule in rules for v, g, res, n in _expand(rule))


def forbidden_message(user, verb, group, resource, namespace, name):
    """The API server's wording for an RBAC denial."""
    what = resource.split("/")[0] + ("." + group if group else "")
    if name:
        what += ' "%s"' % name
    where = ('in the namespace "%s"' % namespace if namespace
             else "at the cluster scope")
    return ('%s is forbidden: User "%s" cannot %s resource "%s" in API '
            'group "%s" %s' % (what, user.name, verb, resource, group,
                               where))
