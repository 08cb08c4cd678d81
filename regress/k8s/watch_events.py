#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""watch_events.py FILE: one line "TYPE KIND CODE CONDITIONS..." per
event of a watch saved by k8s_req.py (its first line is the HTTP code)."""

import json
import sys

with open(sys.argv[1]) as f:
    lines = f.read().split("\n")[1:]
for line in lines:
    if line:
        e = json.loads(line)
        o = e["object"]
        status = o.get("status") if o.get("kind") != "Status" else {}
        conds = [c["type"] for c in (status or {}).get("conditions") or []]
        print(e["type"], o.get("kind"), o.get("code", ""), *conds)
