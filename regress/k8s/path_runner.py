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

Mounts are honoured as the kubelet and the container runtime make them,
in a mount namespace of the pod's own (as root; otherwise in a user
namespace too):

- readOnly: the volume's directory (with subPath, that directory of it)
  is bound read-only, so that a write fails with EROFS
  (https://kubernetes.io/docs/reference/kubernetes-api/config-and-
  storage-resources/volume/#volumes: VolumeMount.readOnly, "Mounted
  read-only if true"); a claim volume with readOnly makes every mount
  of it read-only (PersistentVolumeClaimVolumeSource.readOnly, "Will
  force the ReadOnly setting in VolumeMounts").
- subPath (https://kubernetes.io/docs/concepts/storage/volumes/
  #using-subpath): a missing one is made as a directory of the volume
  (kubernetes/kubernetes#43775); on a read-only claim volume it cannot
  be, and the container does not start ("failed to create subPath
  directory for volumeMount"): here the runner says so and exits 1.
- a mountPath under a directory the image lacks (/run/providers/...):
  the runtime makes the mount point in the image's root, read-only
  with readOnlyRootFilesystem; here that directory is a read-only
  directory of the pod's (.rootfs, a name no volume can have) with the
  mounts bound in it, and its path is rewritten like a mount's.  The
  image is this machine's root: a directory is missing from the image
  when it is missing here.

With K8S_DOUBLE_IMAGE (a directory standing in for the image's root,
from the double's environment), an argument that is an absolute path
of a file there, outside the mounts, names that file.

With K8S_DOUBLE_EXEC (pods/exec: the command's argv as JSON) and
K8S_DOUBLE_POD_FILE (the pod), it runs that command instead, mapped the
same way, with the exec stream as its stdin and stdout.

For tests only: a real cluster runs the pod in gVisor or Kata.
"""

import ctypes
import json
import os
import re
import subprocess
import sys

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, \
    1 << 18
LIBC = ctypes.CDLL(None, use_errno=True)


def _check(r, what):
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))


def mount(src, dst, flags):
    _check(LIBC.mount(src.encode() if src else None, dst.encode(), None,
                      flags, None), "mount " + dst)


def bind_ro(src, dst):
    mount(src, dst, MS_BIND)
    mount(None, dst, MS_BIND | MS_REMOUNT | MS_RDONLY)


def own_mount_ns():
    """A mount namespace of the pod's: the binds below stay in it."""
    if os.geteuid() == 0:
        _check(LIBC.unshare(CLONE_NEWNS), "unshare")
    else:
        uid, gid = os.getuid(), os.getgid()
        _check(LIBC.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
        for f, v in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid,
                     uid)), ("gid_map", "%d %d 1" % (gid, gid))):
            with open("/proc/self/" + f, "w") as fd:
                fd.write(v)
    mount(None, "/", MS_REC | MS_PRIVATE)


def image_dir(path, mounts):
    """The topmost directory above mount path PATH that the image (this
    machine) lacks and no mount holds; None when there is none."""
    d = "/"
    for part in path.strip("/").split("/")[:-1]:
        d = os.path.join(d, part)
        if d in mounts:
            return None
        if not os.path.lexists(d):
            return d
    return None


def set_up_mounts(pod, c, vols):
    """{mountPath: the directory that stands for it}, with the mounts
    made as the kubelet makes them (module docstring)."""
    ro_claims = {v["name"] for v in pod["spec"].get("volumes") or []
                 if (v.get("persistentVolumeClaim") or {}).get("readOnly")}
    mounts, readonly = {}, []
    for m in c.get("volumeMounts") or []:
        d = os.path.normpath(os.path.join(vols, m["name"],
                                          m.get("subPath", "")))
        if not os.path.isdir(d):
            if m["name"] in ro_claims:
                sys.stderr.write('failed to create subPath directory for '
                                 'volumeMount "%s" of container "%s"\n'
                                 % (m["name"], c["name"]))
                sys.exit(1)
            os.makedirs(d)
        mounts[m["mountPath"].rstrip("/")] = d
        if m.get("readOnly") or m["name"] in ro_claims:
            readonly.append(m["mountPath"].rstrip("/"))
    rootfs = os.path.join(vols, ".rootfs")
    nested = {p: image_dir(p, mounts) for p in mounts}
    nested = {p: top for p, top in nested.items() if top}
    if not readonly and not nested:
        return mounts
    own_mount_ns()
    for p in nested:
        os.makedirs(rootfs + p, exist_ok=True)
    if nested:
        bind_ro(rootfs, rootfs)
    for p in readonly:
        if p in nested:
            bind_ro(mounts[p], rootfs + p)
        else:
            bind_ro(mounts[p], mounts[p])
    for p, top in nested.items():
        if p not in readonly:
            mount(mounts[p], rootfs + p, MS_BIND)
        mounts[top] = rootfs + top
        del mounts[p]
    return mounts


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
    mounts = set_up_mounts(pod, c, vols)
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
