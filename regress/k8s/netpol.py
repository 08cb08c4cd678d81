#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""netpol.py: which destinations a pod may reach, and who may reach it,
under a set of NetworkPolicies, decided by the rules of the Kubernetes
documentation ("Network Policies",
https://kubernetes.io/docs/concepts/services-networking/network-policies/,
and the NetworkPolicy API reference,
https://kubernetes.io/docs/reference/kubernetes-api/policy-resources/network-policy-v1/):

- a policy selects the pods of its own namespace whose labels match its
  podSelector (an empty selector selects them all);
- its policyTypes say which directions it isolates; left out, they are
  Ingress, plus Egress when the policy has an egress section;
- a pod selected by no policy of a direction is not isolated in it: all
  of that direction is allowed;
- an isolated pod is allowed what the rules of its selecting policies
  allow, their union: policies do not conflict, they add up;
- a rule with no `to` (`from`) matches every peer, one with no `ports`
  every port; a peer is an ipBlock (cidr, less its except list), a
  podSelector (pods of the policy's namespace), a namespaceSelector
  (pods of the namespaces it selects), or both selectors in one peer
  (those pods of those namespaces); a port's protocol defaults to TCP,
  and endPort makes it a range;
- a connection between two pods needs both the source's egress and the
  destination's ingress to allow it.

Selectors have matchLabels and matchExpressions (In, NotIn, Exists,
DoesNotExist).  Named ports and SCTP are not needed here and refused.

Usage: netpol.py WORLD.json POLICY.yaml... -- POD.json...
WORLD: {"namespaces": {NAME: {labels}}, "destinations": [{"name", "ip",
"port", "protocol"?, and for a pod "namespace" and "labels"}], "pod_ip",
"pod_port"} (the address of the pods evaluated, and a port they would
be reached on).
A POD file (JSON or YAML, one or more documents) holds Pods (as the
API server got them) or objects with a pod template (spec.template or
spec.podTemplate: a Job, a SandboxTemplate), taken in the object's
namespace; other documents are skipped.  For each pod, one line per
destination, "POD DEST allow|deny", then "POD ingress allow|deny" for a
connection from any of the pod destinations that are not it.
"""

import ipaddress
import json
import sys

import yaml


def selects(selector, labels):
    """Whether a label selector matches labels; None matches nothing."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        op, key, values = e["operator"], e["key"], e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise ValueError("selector operator %s" % op)
    return True


def policy_types(policy):
    spec = policy.get("spec") or {}
    if "policyTypes" in spec:
        return spec["policyTypes"]
    return ["Ingress"] + (["Egress"] if "egress" in spec else [])


def peer_matches(peer, policy_ns, end, world):
    """Whether one to/from peer of a policy in policy_ns matches end."""
    if "ipBlock" in peer:
        ip = ipaddress.ip_address(end["ip"])
        block = peer["ipBlock"]
        return ip in ipaddress.ip_network(block["cidr"]) and not any(
            ip in ipaddress.ip_network(x) for x in block.get("except") or [])
    if "namespace" not in end:
        return False        # selectors name pods, and end is none
    if "namespaceSelector" in peer:
        ns_labels = world["namespaces"].get(end["namespace"], {})
        if not selects(peer["namespaceSelector"], ns_labels):
            return False
    elif end["namespace"] != policy_ns:
        return False
    return "podSelector" not in peer or selects(peer["podSelector"],
                                                end.get("labels") or {})


def port_matches(port, end):
    proto = port.get("protocol", "TCP")
    if proto not in ("TCP", "UDP"):
        raise ValueError("protocol %s" % proto)
    if proto != end.get("protocol", "TCP"):
        return False
    if "port" not in port:
        return True
    if not isinstance(port["port"], int):
        raise ValueError("named port %s" % port["port"])
    return port["port"] <= end["port"] <= port.get("endPort", port["port"])


def allowed(policies, pod, direction, other, world):
    """Whether pod may send (Egress) to, or take (Ingress) from, other."""
    key, peers_key = ("egress", "to") if direction == "Egress" else \
        ("ingress", "from")
    isolated = False
    for p in policies:
        md = p["metadata"]
        if md.get("namespace") != pod["namespace"] or \
                direction not in policy_types(p) or \
                not selects(p["spec"].get("podSelector"), pod["labels"]):
            continue
        isolated = True
        for rule in p["spec"].get(key) or []:
            peers = rule.get(peers_key)
            ports = rule.get("ports")
            # The port is the destination's: other's on egress, pod's in.
            dest = other if direction == "Egress" else pod
            if (not peers or any(peer_matches(x, md["namespace"], other,
                                              world) for x in peers)) and \
                    (not ports or any(port_matches(x, dest) for x in ports)):
                return True
    return not isolated


def pod_of(obj):
    """name, namespace and labels of a Pod or of an object's template."""
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    tmpl = spec.get("template") or spec.get("podTemplate")
    labels = (tmpl.get("metadata") or {}).get("labels") if tmpl else \
        md.get("labels")
    return {"name": md.get("name"), "namespace": md.get("namespace"),
            "labels": labels or {}}


def load_policies(paths):
    out = []
    for path in paths:
        with open(path) as f:
            out += [d for d in yaml.safe_load_all(f)
                    if d and d.get("kind") == "NetworkPolicy"]
    return out


def main(argv):
    if "--" not in argv or len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    cut = argv.index("--")
    with open(argv[1]) as f:
        world = json.load(f)
    policies = load_policies(argv[2:cut])
    pods = [d for d in world["destinations"] if "namespace" in d]
    for path in argv[cut + 1:]:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d and (
                d.get("kind") == "Pod" or "template" in d.get("spec", {}) or
                "podTemplate" in d.get("spec", {}))]
        for pod in map(pod_of, docs):
            evaluate(policies, world, pods, pod)
    return 0


def evaluate(policies, world, pods, pod):
    # As an end: the address and the port a connection to it takes.
    pod.update(ip=world["pod_ip"], port=world["pod_port"])
    for d in world["destinations"]:
        ok = allowed(policies, pod, "Egress", d, world) and (
            "namespace" not in d or
            allowed(policies, d, "Ingress", pod, world))
        print(pod["name"], d["name"], "allow" if ok else "deny")
    ok = any(allowed(policies, d, "Egress", pod, world) and
             allowed(policies, pod, "Ingress", d, world) for d in pods)
    print(pod["name"], "ingress", "allow" if ok else "deny")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
