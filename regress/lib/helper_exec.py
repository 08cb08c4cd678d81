# SPDX-License-Identifier: ISC
"""runnerd's helper is runnerd re-executed (runnerd(8) "Processes").

    python3 helper_exec.py ENGINE_PID ROLE FD=WHAT...

ENGINE_PID's one child must run `runnerd ROLE`, have open exactly the
descriptors FD=WHAT name, and have runnerd's image mapped elsewhere than
the engine has.  WHAT is a path, or what /proc shows without the inode:
socket, pipe, anon_inode:[signalfd].  A helper still starting may open
more: the check is repeated for a few seconds before it fails, saying
what it saw.  Exits 0 when all holds, else 1.
"""

import os
import re
import sys
import time


def child(engine):
    with open("/proc/%s/task/%s/children" % (engine, engine)) as f:
        kids = f.read().split()
    if len(kids) != 1:
        raise ValueError("the engine has children %s, not one" % kids)
    return kids[0]


def descriptors(pid):
    fds = {}
    for fd in os.listdir("/proc/%s/fd" % pid):
        what = os.readlink("/proc/%s/fd/%s" % (pid, fd))
        fds[int(fd)] = re.sub(r"^(socket|pipe):\[\d+\]$", r"\1", what)
    return fds


def image_start(pid):
    """Where the first mapping of the process's executable begins."""
    exe = os.readlink("/proc/%s/exe" % pid)
    with open("/proc/%s/maps" % pid) as f:
        for line in f:
            if line.rstrip("\n").endswith(" " + exe):
                return line.split("-", 1)[0]
    raise ValueError("%s is not mapped in %s" % (exe, pid))


def check(engine, role, want):
    helper = child(engine)
    with open("/proc/%s/cmdline" % helper) as f:
        argv = f.read().split("\0")
    if argv[:2] != ["runnerd", role]:
        return "the helper runs %s, not runnerd %s" % (argv, role)
    fds = descriptors(helper)
    if fds != want:
        return "the helper's descriptors are %s, not %s" % (
            sorted(fds.items()), sorted(want.items()))
    if image_start(helper) == image_start(engine):
        return "the helper has the engine's layout: runnerd at %s in both" % (
            image_start(engine))
    return None


def main():
    engine, role = sys.argv[1], sys.argv[2]
    want = {}
    for arg in sys.argv[3:]:
        fd, what = arg.split("=", 1)
        want[int(fd)] = what
    why = None
    for _ in range(50):
        try:
            why = check(engine, role, want)
        except (OSError, ValueError) as e:
            why = str(e)
        if why is None:
            return 0
        time.sleep(0.1)
    print(why, file=sys.stderr)
    return 1


sys.exit(main())
