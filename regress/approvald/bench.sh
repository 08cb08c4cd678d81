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
mkdir -p run var tf/demo tf/k8s-demo
touch tf/demo/main.tf tf/k8s-demo/main.tf
sed -e "s#@ROOT@#$W/tf#" -e "s#@TTL@#30m#" "$here/policy.fixture" > policy.yaml
uid=$(id -u)
cat > conf.yaml <<CONF
runtime_dir: $W/run
approvald:
  user: ""
  peers: { users: [$uid] }
  operators: { users: [$uid] }
  policy: $W/policy.yaml
  database: $W/var/approvals.db
auditd:
  user: ""
  peers: { users: [$uid] }
  readers: { users: [$uid] }
  log: $W/var/audit.jsonl
  key: $W/var/ckpt/checkpoint.key
  pubkey: $W/var/audit-checkpoint.pub
  checkpoint_file: $W/var/ckpt/checkpoint.json
CONF

pids=""
cleanup()
{
	for p in $pids; do kill "$p" 2>/dev/null || :; done
	wait 2>/dev/null || :
	cd / && rm -rf "$W"
}
trap cleanup EXIT INT TERM

wait_socket()
{
	i=0
	while [ ! -S "$1" ]; do
		i=$((i + 1)); [ $i -gt 100 ] && return 1; sleep 0.05
	done
}

client="python3 $here/asclient.py"
"$bin/auditd" -d -f conf.yaml > auditd.log 2>&1 &
apid=$!
if wait_socket run/audit.sock && $client call run/audit.sock AUDIT_EVENT \
    '{"event":"bench.probe","request_id":"req-0000000000000001","daemon":"bench","fields":{}}' |
    grep -q '^AUDIT_ACK'; then
	pids="$apid"
	echo "audit: the real auditd"
else
	kill $apid 2>/dev/null || :
	rm -f run/audit.sock
	python3 "$here/../lib/audit_standin.py" "$W/run/audit.sock" \
	    var/audit.jsonl &
	pids="$!"
	wait_socket run/audit.sock
	echo "audit: the stand-in audit_standin.py"
fi
"$bin/approvald" -d -f conf.yaml > approvald.log 2>&1 &
adpid=$!
pids="$pids $adpid"
wait_socket run/control.sock
$client bench run "${2:-20000}" "${3:-1000}"
$client waiters run "$adpid" "${4:-20000}" 5
