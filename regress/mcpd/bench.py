#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""mcpd benchmark (not a test): tools/list round trips per second and
ping latency through mcpd's stdio, one request at a time, plus the
round trip of a tools/call through a stand-in runnerd.

Usage: regress/mcpd/bench.py MCPD_BINARY [SECONDS]
Runs in a temporary directory; bounded by SECONDS per measurement.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mcp_check import Mcpd  # noqa: E402


def pct(sorted_vals, p):
    return sorted_vals[min(len(sorted_vals) - 1, int(len(sorted_vals) * p))]


def latencies(m, method, params, secs, limit):
    out = []
    end = time.time() + secs
    while time.time() < end and len(out) < limit:
        t0 = time.perf_counter()
        r = m.call(method, params)
        out.append(time.perf_counter() - t0)
        if "result" not in r:
            raise SystemExit("%s failed: %r" % (method, r))
    return sorted(out)


def main():
    binary = os.path.abspath(sys.argv[1])
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 5
    work = tempfile.mkdtemp(prefix="mcpd-bench.")
    os.chdir(work)
    os.mkdir("run")
    with open("conf.yaml", "w") as f:
        f.write("runtime_dir: %s/run\nmcpd:\n  user: \"\"\n" % work)
    runner = subprocess.Popen([sys.executable,
                               os.path.join(HERE, "fake_runnerd.py"),
                               "run/runner.sock"])
    try:
        while not os.path.exists("run/runner.sock"):
            time.sleep(0.05)
        m = Mcpd(binary, os.path.join(work, "conf.yaml"))
        m.initialize()
        lat = latencies(m, "tools/list", None, secs, 200000)
        print("tools/list: %d round trips in %.2fs: %.0f/s (p50 %.0f us)"
              % (len(lat), sum(lat), len(lat) / sum(lat),
                 pct(lat, 0.5) * 1e6))
        lat = latencies(m, "ping", None, secs, 200000)
        print("ping: %d round trips: p50 %.0f us, p99 %.0f us, max %.0f us"
              % (len(lat), pct(lat, 0.5) * 1e6, pct(lat, 0.99) * 1e6,
                 lat[-1] * 1e6))
        lat = latencies(m, "tools/call",
                        {"name": "k8s_get_pod_status",
                         "arguments": {"namespace": "default"}},
                        secs, 5000)
        print("tools/call via stand-in runnerd: %d calls: p50 %.0f us, "
              "p99 %.0f us" % (len(lat), pct(lat, 0.5) * 1e6,
                               pct(lat, 0.99) * 1e6))
        m.close()
    finally:
        runner.kill()
        runner.wait()
        os.chdir("/")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
