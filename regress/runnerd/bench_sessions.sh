#!/bin/sh
# SPDX-License-Identifier: ISC
# Session benchmark (not a test).  Side by side: the first call of a new
# session when it claims a warm-pool sandbox and when it cold-starts one
# (two runnerds, warm_pool 1 and 0, with rd.subr's stand-in peers); then
# run_python("1+1") latency in a warm session through mcpd, with the
# real approvald, brokerd and auditd (etc/policy.yaml).  Root, runsc.
#
#   regress/runnerd/bench_sessions.sh [BUILD] [ROUNDS] [CALLS]
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
RD_BIN="$top/${1:-obj}/bin"
RD_LIB="$top/regress/runnerd"
. "$RD_LIB/rd.subr"
agent="  session_agent: $top/sandbox-init/session-agent.py"

# The whole suite but mcpd, in $1 (mcpd is the benchmark's child).
suite_start()
{
	mkdir -p "$1/run" "$1/var"
	cp "$top/etc/policy.yaml" "$1/"
	cat > "$1/conf.yaml" <<CONF
runtime_dir: $1/run
mcpd:
  user: ""
runnerd:
  user: ""
  peers: { users: [$(id -u)] }
  state_dir: $1/var/runner
$agent
  warm_pool: 1
approvald:
  user: ""
  peers: { users: [$(id -u)] }
  operators: { users: [$(id -u)] }
  policy: $1/policy.yaml
  database: $1/var/approvals.db
brokerd:
  user: ""
  peers: { users: [$(id -u)] }
  journal: $1/var/leases.journal
auditd:
  user: ""
  peers: { users: [$(id -u)] }
  readers: { users: [$(id -u)] }
  log: $1/var/audit.jsonl
  key: $1/var/ckpt/checkpoint.key
  pubkey: $1/var/audit-checkpoint.pub
  checkpoint_file: $1/var/ckpt/checkpoint.json
CONF
	for d in auditd approvald brokerd runnerd; do
		"$RD_BIN/$d" -d -f "$1/conf.yaml" > "$1/$d.log" 2>&1 &
		# runnerd's own file: rd_stop waits for it, and so for its
		# launcher's clean-up, before the directory is removed.
		if [ $d = runnerd ]; then
			echo $! > "$1/rd.runnerd"
		else
			echo $! >> "$1/rd.pids"
		fi
		s=$(case $d in auditd) echo audit;; approvald) echo approval;;
		    brokerd) echo broker;; runnerd) echo runner;; esac)
		(cd "$1" && rd_wait_file "run/$s.sock")
	done
}

work=$(mktemp -d /tmp/bench-sessions.XXXXXX)
trap 'for d in warm cold suite; do [ -d "$work/$d" ] && (cd "$work/$d" && rd_stop); done; cd /; rm -rf "$work"' EXIT
for pool in 1 0; do
	d=$([ $pool = 1 ] && echo warm || echo cold)
	mkdir "$work/$d"
	(cd "$work/$d" && RD_SESSIONS_MAX=16 RD_EXTRA="$agent
  warm_pool: $pool" rd_start)
done
suite_start "$work/suite"
python3 "$RD_LIB/bench_sessions.py" "$work/warm" "$work/cold" \
    "$work/suite" "$RD_BIN/mcpd" "${2:-10}" "${3:-500}"
