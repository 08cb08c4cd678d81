#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""mcp_pods.py MCPD CONF NAMESPACE: one k8s_get_pod_status call through a
real mcpd over stdio (the client of regress/mcpd/mcp_check.py); prints
the tools/call result JSON."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "mcpd"))
from mcp_check import Mcpd  # noqa: E402


def main():
    m = Mcpd(sys.argv[1], sys.argv[2])
    m.initialize()
    r = m.call("tools/call", {"name": "k8s_get_pod_status",
                              "arguments": {"namespace": sys.argv[3]}},
               timeout=60)
    m.close()
    print(json.dumps(r.get("result", r)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
