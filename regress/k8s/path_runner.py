#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A runner for k8s_double.py (--runner) for runnerd's kubernetes backend:
runs the first container's command and args on this machine, like
pod_runner.py, but with each volumeMount's mountPath (/run/secrets, /tmp,
/work) rewritten to the volume's directory in every argument and env
value, and the working directory mapped the same way, so that a command
written for the pod's paths runs unchanged.  A mount's subPath is a
directory of its volume, made if missing, as the kubelet does.  Paths in one argument are
rewritten in one pass: a volume directory under /tmp is not rewritten
again.

With K8S_DOUBLE_IMAGE (a directory standing in for the image's root,
from the double's environment), an argument that is an absolute path
of a file there, outside the mounts, names that file.

With K8S_DOUBLE_EXEC (pods/exec: the command's argv as JSON) and
K8S_DOUBLE_POD_FILE (the pod), it runs that command instead, mapped the
same way, with the exec stream as its stdin and stdout.

For tests only: a real cluster runs the pod in gVisor or Kata.
"""

import json
import os
import re
import subprocess
import sys


def main():
    command = os.environ.get("K8S_DOUBLE_EXEC")
    if command is not None:
        with open(os.environ["K8S_DOUBLE_POD_FILE"]) as f:
            pod = json.load(f)
    else:
        pod = json.load(sys.stdin)
    c = pod["spec"]["containers"][0]
    argv = json.loads(command) if command is not None else \
        (c.get("command") or []) + (c.get("args") or [])
    if not argv:
        return 0
    vols = os.environ["K8S_DOUBLE_VOLUMES"]
    mounts = {m["mountPath"].rstrip("/"):
              os.path.normpath(os.path.join(vols, m["name"],
                                            m.get("subPath", "")))
              for m in c.get("volumeMounts") or []}
    for d in mounts.values():
        os.makedirs(d, exist_ok=True)
    # A mount path starts a path: not inside another one (/tmp/x/work).
    pat = re.compile("|".join(r"(?<![\w./-])" + re.escape(p) + r"(?=/|\b|$)"
                              for p in sorted(mounts, key=len, reverse=True)))

    image = os.environ.get("K8S_DOUBLE_IMAGE")

    def mapped(s):
        m = pat.sub(lambda m: mounts[m.group(0)], s) if mounts else s
        if image and m == s and s.startswith("/") and \
                os.path.isfile(image + s):
            return image + s
        return m

    env = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    env.update({e["name"]: mapped(e.get("value", ""))
                for e in c.get("env") or []})
    cwd = mapped(c.get("workingDir") or vols)
    sys.stdout.flush()
    if command is not None:
        os.chdir(cwd)
        os.execvpe(mapped(argv[0]), [mapped(a) for a in argv], env)
    return subprocess.call([mapped(a) for a in argv], env=env, cwd=cwd,
                           stdin=subprocess.DEVNULL)


if __name__ == "__main__":
    sys.exit(main())
