#!/bin/sh
# SPDX-License-Identifier: ISC
# approvald's benchmark (not a kyua test): decisions per second, spends
# per second with full durability (WAL, synchronous=FULL, each spend
# acknowledged by the audit log before it commits), and approvald's CPU
# with WAITERS runnerd waits on pending approvals, asked about once a
# second (as runnerd did before waits were pushed), then subscribed.
#
#   regress/approvald/bench.sh [BUILD [DECISIONS [SPENDS [WAITERS]]]]
#
# Runs in a fresh directory under /var/tmp, on disk; uses the real
# auditd when it acknowledges events, else the stand-in audit_standin.py.
set -e

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin="$top/${1:-obj}/bin"
W=$(mktemp -d /var/tmp/approvald-bench.XXXXXX)
cd "$W"
client="python3 $here/asclient.py"
. "$here/../lib/bench.subr"
trap bench_cleanup EXIT INT TERM
bench_setup
bench_audit
"$bin/approvald" -d -f conf.yaml > approvald.log 2>&1 &
adpid=$!
pids="$pids $adpid"
bench_wait run/control.sock
$client bench run "${2:-20000}" "${3:-1000}"
$client waiters run "$adpid" "${4:-20000}" 5
