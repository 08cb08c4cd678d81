# SPDX-License-Identifier: ISC
"""Reading CPython's regrtest (python3 -m test -q) output, and the
exclusion file, for compat.py."""
import datetime
import re

HEADER = re.compile(r"^(FAIL|ERROR): (\S+) \(([^)\s]+)\)", re.M)
RULE = re.compile(r"^(={20,}|-{20,})$", re.M)
CRASH = re.compile(r"^(test \S+ crashed.*|Fatal Python error.*|"
                   r"\S+ timed out.*|Timeout \(.*)$", re.M)
ERRLINE = re.compile(r"^\w[\w.]*(Error|Exception|Exit|Interrupt)\b.*$", re.M)
# regrtest --timeout's stack dump, when a module ran out of time: the
# test running is the frame that unittest's _callTestMethod called.
HUNG = re.compile(r'^  File "[^"]*/test/([\w/]+)\.py", line (\d+) in (\w+)\n'
                  r'  File "[^"]*/unittest/case\.py", line \d+ in '
                  r'_callTestMethod$', re.M)


def first_failure(out):
    """(test id without the leading "test.", its error line), or
    (None, the first line that says how the module failed)."""
    m = HEADER.search(out)
    if m:
        test = m.group(3)
        if test.startswith("test."):
            test = test[5:]
        body = out[m.end():]
        # The header's own rule, then the traceback up to the next rule.
        first = RULE.search(body)
        if first:
            body = body[first.end():]
        nxt = RULE.search(body)
        if nxt:
            body = body[:nxt.start()]
        lines = [ln for ln in body.splitlines() if ln.strip()]
        return test, lines[-1].strip() if lines else m.group(1)
    m = CRASH.search(out)
    if m:
        hung = HUNG.search(out, m.end()) \
            if m.group(0).startswith("Timeout") else None
        if hung:
            # Its class is not in the dump: a pattern an exclusion can use.
            return ("%s.*.%s" % (hung.group(1).replace("/", "."),
                                 hung.group(3)),
                    "%s while at line %s" % (m.group(0), hung.group(2)))
        last = None
        for last in ERRLINE.finditer(out, m.end()):
            pass
        return None, (m.group(0) + (" / " + last.group(0) if last
                                    else "")).strip()[:400]
    lines = [ln for ln in out.splitlines() if ln.strip()]
    for ln in lines:
        if ERRLINE.match(ln):
            return None, ln.strip()[:400]
    return None, (lines[-1].strip()[:400] if lines else "no output")


def verdict(rc, out):
    """passed, skipped (the module as a whole), no-tests or failed."""
    if rc != 0:
        return "failed"
    if re.search(r"^\S+ skipped\b", out, re.M) and \
            "1 test skipped" in out:
        return "skipped"
    if "NO TESTS RAN" in out or re.search(r"\bRan 0 tests\b", out):
        return "no-tests"
    return "passed"


# The exclusion file: one entry a line,
#   NAME  CHECKED  KIND  REASON...
# NAME is a module (test_x) or a test in it (test_x.Class.test, fnmatch
# patterns allowed), or shell:NAME, a command of the shell set; CHECKED
# the date it was last seen to fail (ISO); KIND gvisor (REASON names a
# gVisor issue or document, by URL) or a product limit of runnerd(8):
# memory, pids, network, tmp_size, rootfs (the sandbox's root has the
# host's /usr and /etc/ssl, no other /etc).
KINDS = ("gvisor", "memory", "pids", "network", "tmp_size", "rootfs")


class Exclusion:
    def __init__(self, name, checked, kind, reason, lineno):
        self.name, self.checked, self.kind = name, checked, kind
        self.reason, self.lineno = reason, lineno
        self.module = name.split(".")[0]
        self.whole = "." not in name

    def pattern(self):
        """For regrtest's -i and -m: its test id, "test." first."""
        return "test." + self.name

    def as_dict(self):
        return {"name": self.name, "checked": self.checked,
                "kind": self.kind, "reason": self.reason}


def read_exclusions(path):
    """The entries, or raises ValueError naming path:line."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 3)
            where = "%s:%d" % (path, n)
            if len(parts) < 4:
                raise ValueError(where + ": want NAME CHECKED KIND REASON")
            name, checked, kind, reason = parts
            if not re.fullmatch(r"test_\w+(\.[\w*?\[\]]+)*|shell:\w+",
                                name):
                raise ValueError(where + ": bad name " + name)
            try:
                datetime.date.fromisoformat(checked)
            except ValueError:
                raise ValueError(where + ": bad date " + checked)
            if kind not in KINDS:
                raise ValueError(where + ": kind is one of " +
                                 ", ".join(KINDS))
            # A gVisor limit names where gVisor says so; a product limit
            # names the setting or the manual that documents it.
            if kind == "gvisor" and "gvisor" not in reason.lower():
                raise ValueError(where + ": a gvisor reason needs its "
                                 "gVisor issue or document")
            if kind != "gvisor" and "runnerd(8)" not in reason:
                raise ValueError(where + ": a product limit names "
                                 "runnerd(8)")
            out.append(Exclusion(name, checked, kind, reason, n))
    return out
