#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""The plan store's growth (helperlib/tfstore.c) over PLANS terraform_plan
calls through the whole suite, of a module that changes between them:
the demo module with 64 files of 64 KiB beside it, one of which is
rewritten before each plan.  Prints, after the plans, what the store
holds on disk (the working directory's state: blobs, snapshot trees,
manifests, saved plans) against what PLANS full copies would take.

usage: regress/runnerd/bench_tfstore.py BUILD_DIR [PLANS]     (as root)
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchsuite import TOP, Suite, bench_args, workdir  # noqa: E402
from bench_terraform import Mcp  # noqa: E402

FILES, SIZE = 64, 64 * 1024


def disk_bytes(top):
    """Bytes of the files under top, each inode once (hard links)."""
    seen, total = set(), 0
    for d, _, names in os.walk(top):
        for n in names:
            st = os.lstat(os.path.join(d, n))
            if st.st_ino not in seen:
                seen.add(st.st_ino)
                total += st.st_size
    return total


def main():
    build, plans = bench_args(__doc__, 50)
    with workdir("bench-tfstore") as w:
        module = f"{w}/tf/demo"
        shutil.copytree(f"{TOP}/terraform/demo", module)
        for i in range(FILES):
            with open(f"{module}/data{i}.bin", "wb") as f:
                f.write(os.urandom(SIZE))
        logical = sum(os.path.getsize(os.path.join(module, n))
                      for n in os.listdir(module)
                      if os.path.isfile(os.path.join(module, n)))
        daemons = Suite(build, w, runnerd="  timeout: 120s\n"
                        "  warm_pool: 0\n", brokerd="""\
  scopes:
    terraform: { engine: none, tools: [terraform_plan, terraform_apply] }
""")
        mcp = Mcp(f"{build}/bin/mcpd", daemons.conf)
        try:
            for i in range(plans):
                with open(f"{module}/data{i % FILES}.bin", "wb") as f:
                    f.write(os.urandom(SIZE))
                mcp.tool("terraform_plan", {"working_dir": "demo"})
            store = disk_bytes(f"{w}/var/runner/terraform")
        finally:
            mcp.close()
            daemons.close()
    mib = 1024 * 1024
    print(f"{plans} plans of a {logical / mib:.1f} MiB module, one 64 KiB "
          f"file changed before each: the store holds {store / mib:.1f} "
          f"MiB, {plans} full copies would be {plans * logical / mib:.1f} "
          f"MiB ({store / (plans * logical):.1%})")


if __name__ == "__main__":
    main()
