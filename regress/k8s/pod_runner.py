#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A runner for k8s_double.py (--runner): runs the first container's
command and args on this machine, in the pod's volume directory, with
the container's literal env values, and exits with its status.  Each
volumeMount's mountPath is given as an environment variable
K8S_MOUNT_<VOLUME NAME> pointing at the volume's directory, since the
command runs unconfined and cannot see the pod's paths.

For tests only: the sandboxed backends run pods in gVisor instead.
"""

import json
import os
import subprocess
import sys


def main():
    pod = json.load(sys.stdin)
    c = pod["spec"]["containers"][0]
    argv = (c.get("command") or []) + (c.get("args") or [])
    if not argv:
        return 0
    vols = os.environ["K8S_DOUBLE_VOLUMES"]
    env = {"PATH": "/usr/bin:/bin", "HOME": vols}
    env.update({e["name"]: e.get("value", "") for e in c.get("env") or []})
    for m in c.get("volumeMounts") or []:
        key = "K8S_MOUNT_" + m["name"].upper().replace("-", "_")
        env[key] = os.path.join(vols, m["name"], m.get("subPath", ""))
    sys.stdout.flush()
    return subprocess.call(argv, env=env, cwd=vols, stdin=subprocess.DEVNULL)


if __name__ == "__main__":
    sys.exit(main())
