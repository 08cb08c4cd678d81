#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""mkjob.py NAME [MUTATION]...: a Job for namespace demo-app that
satisfies Pod Security "restricted" the way the kubernetes backend's Jobs
must (runAsNonRoot, uid 65534, allowPrivilegeEscalation false,
capabilities drop ALL, seccompProfile RuntimeDefault, read-only root,
no service account token, limits, deadline, no retries, TTL), printed as
JSON, with each MUTATION applied: one control removed or broken.
Environment: COMMAND (sh -c script for the container, default: none),
SECRET (a Secret mounted at /run/cred as volume "cred").
"""

import json
import os
import sys


def job(name):
    ctr = {"name": "main", "image": "agent-sandbox/runner:latest",
           "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}},
           "securityContext": {"allowPrivilegeEscalation": False,
                               "readOnlyRootFilesystem": True,
                               "capabilities": {"drop": ["ALL"]}}}
    if os.environ.get("COMMAND"):
        ctr["command"] = ["sh", "-c", os.environ["COMMAND"]]
    spec = {"restartPolicy": "Never", "runtimeClassName": "gvisor",
            "automountServiceAccountToken": False,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 65534,
                                "runAsGroup": 65534, "fsGroup": 65534,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [ctr]}
    if os.environ.get("SECRET"):
        spec["volumes"] = [{"name": "cred", "secret": {
            "secretName": os.environ["SECRET"]}}]
        ctr["volumeMounts"] = [{"name": "cred", "mountPath": "/run/cred",
                                "readOnly": True}]
    labels = {"agent-sandbox/request-id": "req-00000000000000%02x"
              % (sum(map(ord, name)) % 256)}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "demo-app",
                         "labels": labels},
            "spec": {"backoffLimit": 0, "activeDeadlineSeconds": 60,
                     "ttlSecondsAfterFinished": 300,
                     "template": {"metadata": {"labels": labels},
                                  "spec": spec}}}


def mutate(j, what):
    spec = j["spec"]["template"]["spec"]
    psc, ctr = spec["securityContext"], spec["containers"][0]
    csc = ctr["securityContext"]
    if what == "no-run-as-non-root":
        del psc["runAsNonRoot"]
    elif what == "no-allow-privilege-escalation":
        del csc["allowPrivilegeEscalation"]
    elif what == "no-drop-all":
        del csc["capabilities"]
    elif what == "no-seccomp":
        del psc["seccompProfile"]
    elif what == "privileged":
        csc["privileged"] = True
    elif what == "host-path":
        spec["volumes"] = [{"name": "host", "hostPath": {"path": "/"}}]
    elif what == "host-network":
        spec["hostNetwork"] = True
    elif what == "run-as-root":
        psc["runAsUser"] = 0
    elif what == "add-sys-admin":
        csc["capabilities"]["add"] = ["SYS_ADMIN"]
    elif what == "restart-always":
        spec["restartPolicy"] = "Always"
    elif what == "restart-sometimes":
        spec["restartPolicy"] = "Sometimes"
    elif what == "no-restart-policy":
        del spec["restartPolicy"]
    elif what == "privileged-escalation":
        csc["privileged"] = True
        del csc["allowPrivilegeEscalation"]
    elif what == "backoff-1":
        j["spec"]["backoffLimit"] = 1
    elif what.startswith("deadline-"):
        j["spec"]["activeDeadlineSeconds"] = int(what[9:])
    elif what.startswith("ttl-"):
        j["spec"]["ttlSecondsAfterFinished"] = int(what[4:])
    else:
        sys.exit("mkjob.py: unknown mutation %s" % what)


def main():
    j = job(sys.argv[1])
    for what in sys.argv[2:]:
        mutate(j, what)
    json.dump(j, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
