#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""runnerd's benchmark (not a test): cold start of one sandbox through
runnerd against a bare `runsc do true` in the same run, and sandboxes
per second at 2 and 8 concurrent calls.

  bench.py RUNNER_SOCK RUNSC_ROOT [ROUNDS]
"""
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runcall  # noqa: E402


def timed(fn):
    t0 = time.monotonic()
    fn()
    return (time.monotonic() - t0) * 1000


def bare(root):
    subprocess.run(["runsc", "--root", root, "--network=none", "do", "true"],
                   check=True, stdout=subprocess.DEVNULL, cwd="/")


def via_runnerd(sock):
    r = runcall.call(sock, "true")
    if r.get("isError", True):
        raise RuntimeError(json.dumps(r))


def throughput(sock, n, c):
    out = subprocess.run([sys.executable, runcall.__file__, sock, "true",
                          "-n", str(n), "-c", str(c)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["per_second"]


def main():
    sock, root = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    bare_ms, runnerd_ms = [], []
    bare(root)
    via_runnerd(sock)
    # Interleaved so that both see the same machine load.
    for _ in range(rounds):
        bare_ms.append(timed(lambda: bare(root)))
        runnerd_ms.append(timed(lambda: via_runnerd(sock)))
    b, r = statistics.median(bare_ms), statistics.median(runnerd_ms)
    print("cold start, median of %d: bare runsc do true %.0f ms, "
          "runnerd run_shell true %.0f ms, ratio %.2f" % (rounds, b, r, r / b))
    for c in (2, 8):
        print("concurrency %d: %.2f sandboxes/s" %
              (c, throughput(sock, 10 * c, c)))


if __name__ == "__main__":
    main()
