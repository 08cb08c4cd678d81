#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# The suite as `make install` lays it out, with one user per daemon:
# installed into a temporary prefix (the users and groups are real, made
# by scripts/create-users if missing), each daemon started as its
# systemd unit starts it, and the demo story told by an unprivileged
# agent, operator and reader.

. "$(atf_get_srcdir)/../lib/suite.subr"

# The people of the story: their groups are those of the example
# configuration (runnerd.peers, approvald.operators, auditd.readers).
AGENT=_astest_agent
OPERATOR=_astest_op
OPERATOR2=_astest_op2		# a second reviewer (two_person_rule)
AGENT_OPERATOR=_astest_agop	# an agent's user who is also an operator
STRANGER=_astest_none
DAEMONS="auditd approvald brokerd runnerd"

# The tests run side by side: a useradd that loses the race to another
# test's (the user is there, or /etc/passwd is locked) tries again.
user_ensure()
{
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		getent passwd "$1" >/dev/null && return 0
		useradd --system --no-create-home --home-dir /nonexistent \
		    --shell /usr/sbin/nologin ${2:+-G "$2"} "$1" || sleep 0.5
	done
	getent passwd "$1" >/dev/null || atf_fail "cannot create user $1"
}

# make install into $B (a fresh directory every reader may traverse),
# then the configuration moved under $B: sockets, state, log, modules.
install_suite()
{
	B=$(mktemp -d /tmp/as-install.XXXXXX)
	echo "$B" > base
	chmod 755 "$B"
	build=$(dirname "$(atf_config_get bindir)")
	set -- -s -C "$(as_src)" BUILD="$build" PREFIX="$B/usr" \
	    SYSCONFDIR="$B/etc" SYSTEMDDIR="$B/systemd" \
	    STATEDIR="$B/var/lib" LOGDIR="$B/var/log"
	make "$@" install > install.log 2>&1 ||
	    { cat install.log >&2; atf_fail "make install failed"; }
	echo "$*" > install.args
	user_ensure $AGENT _asagent
	user_ensure $OPERATOR _asoperator
	user_ensure $STRANGER
	sed -i -e "s|/run/agent-sandbox|$B/run|" "$B/etc/agent-sandbox.yaml"
	sed -i -e "s|^terraform_root:.*|terraform_root: $B/terraform|" \
	    "$B/etc/policy.yaml"
	# What the units' RuntimeDirectory=, StateDirectory= and
	# LogsDirectory= make: root's, mode 0755.
	mkdir -p "$B/run" "$B/var/lib" "$B/var/log" "$B/terraform"
	cp -R "$(as_src)/terraform/demo" "$B/terraform/"
	chown -R $AGENT "$B/terraform/demo"
	AS_RUN=$B/run
	# The people's socket client, where they may run it: the build tree
	# may sit in a directory only root can traverse.
	install -m 0755 "$FRAMETOOL" "$B/frametool"
	FRAMETOOL=$B/frametool
}

unit_start()
{
	pid=$(python3 "$(atf_get_srcdir)/unitrun.py" \
	    "$B/systemd/agent-sandbox-$1.service" "$1.log") ||
	    atf_fail "$1 did not start as its unit starts it"
	echo "$pid $1" >> pids
}

pid_of()
{
	awk -v d="$1" '$2 == d { p = $1 } END { print p }' pids
}

# The clients of the story, each as its person: the demo client calls
# these by name from the directory it is given.
wrappers()
{
	mkdir -p people
	printf '#!/bin/sh\nexec runuser -u %s -- %s "$@"\n' \
	    $AGENT "$B/usr/bin/mcpd" > people/mcpd
	printf '#!/bin/sh\nexec runuser -u %s -- %s "$@"\n' \
	    $OPERATOR "$B/usr/bin/approvalctl" > people/approvalctl
	printf '#!/bin/sh\nexec runuser -u %s -- %s "$@"\n' \
	    $OPERATOR "$B/usr/bin/as-auditctl" > people/auditctl
	chmod 755 people/*
}

suite_cleanup()
{
	as_kill_all
	if [ -f base ]; then
		pkill -KILL -f "$(cat base)/" 2>/dev/null || :
		# The sandboxes' /work tmpfs mounts, left by a killed runnerd
		# whose next start would sweep them.
		awk -v b="$(cat base)/" 'index($2, b) == 1 { print $2 }' \
		    /proc/mounts | xargs -r -n 1 umount -l
		rm -rf "$(cat base)"
	fi
}

atf_test_case demo_as_installed cleanup
demo_as_installed_head()
{
	atf_set "descr" "the demo story through the installed suite, each daemon as its own user and each person unprivileged"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc terraform node runuser useradd"
	atf_set "timeout" "300"
}
demo_as_installed_body()
{
	modules="$(dirname "$(atf_config_get bindir)")/node/node_modules"
	[ -d "$modules/@modelcontextprotocol/sdk" ] ||
	    atf_fail "the MCP SDK is not installed (make deps)"
	install_suite
	for d in $DAEMONS; do
		unit_start $d
	done
	wrappers
	NODE_PATH="$modules" node "$(as_src)/examples/demo-client.cjs" \
	    "$(pwd)/people" "$B/etc/agent-sandbox.yaml" "$B/terraform" \
	    > story.out 2>&1 || { cat story.out >&2; atf_fail "the story"; }
	grep -q "the gate held" story.out || atf_fail "the story did not end"

	# Each daemon as its own user, with no way back to more.
	for d in $DAEMONS; do
		pid=$(pid_of $d)
		case $d in
		auditd) u=_asaudit ;; approvald) u=_asapprove ;;
		brokerd) u=_asbroker ;; runnerd) u=_asrunner ;;
		esac
		uid=$(id -u $u)
		atf_check -o match:"^Uid:[[:space:]]+$uid[[:space:]]+$uid[[:space:]]+$uid[[:space:]]+$uid\$" \
		    grep '^Uid:' /proc/$pid/status
		atf_check -o match:'^Seccomp:[[:space:]]+2$' \
		    grep '^Seccomp:' /proc/$pid/status
		atf_check -o match:'^NoNewPrivs:[[:space:]]+1$' \
		    grep '^NoNewPrivs:' /proc/$pid/status
		# Its descriptors: stdio (its log here, the journal under
		# systemd), sockets, pipes, event fds and files under its
		# own state; nothing else stays open.
		for fd in /proc/$pid/fd/*; do
			t=$(readlink "$fd") || continue
			case ${fd##*/}:$t in
			[012]:"$(pwd)/$d.log"|*:/dev/null) ;;
			*:socket:*|*:pipe:*|*:anon_inode:*) ;;
			*:"$B/var/"*) ;;
			*) atf_fail "$d holds $t open (fd ${fd##*/})" ;;
			esac
		done
	done
	# The state belongs to the daemon that keeps it, and to no one else.
	atf_check -o inline:"_asapprove 700\n" \
	    stat -c '%U %a' "$B/var/lib/approvald"
	atf_check -o inline:"_asbroker 700\n" \
	    stat -c '%U %a' "$B/var/lib/brokerd"
	atf_check -o inline:"_asrunner 700\n" \
	    stat -c '%U %a' "$B/var/lib/runner"
	atf_check -o match:"^_asaudit " stat -c '%U %a' "$B/var/log/audit"
	atf_check -o inline:"_asapprove\n" \
	    stat -c '%U' "$B/var/lib/approvald/approvals.db"
	# The reader's view: tail, and verify of the installed log.
	atf_check -o match:"tool.result" \
	    runuser -u $OPERATOR -- "$B/usr/bin/as-auditctl" \
	    -f "$B/etc/agent-sandbox.yaml" tail -n 5
	atf_check -o match:"intact" \
	    runuser -u $OPERATOR -- "$B/usr/bin/as-auditctl" \
	    -f "$B/etc/agent-sandbox.yaml" verify
}
demo_as_installed_cleanup()
{
	suite_cleanup
}

atf_test_case sockets_admit_their_peers cleanup
sockets_admit_their_peers_head()
{
	atf_set "descr" "each socket admits exactly its configured peers: a stranger, and the agent on any socket but runner.sock, are refused"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc runuser useradd"
	atf_set "timeout" "120"
}
sockets_admit_their_peers_body()
{
	install_suite
	for d in $DAEMONS; do
		unit_start $d
	done
	for s in audit.sock approval.sock control.sock broker.sock \
	    runner.sock runner-control.sock; do
		[ "$(stat -c %U "$AS_RUN/$s")" != root ] ||
		    atf_fail "$s is root's, not its daemon's"
	done
	for s in audit.sock approval.sock control.sock broker.sock \
	    runner.sock runner-control.sock; do
		atf_check -s not-exit:0 -e match:"Permission denied" \
		    runuser -u $STRANGER -- "$FRAMETOOL" ping "$AS_RUN/$s"
	done
	for s in audit.sock approval.sock control.sock broker.sock \
	    runner-control.sock; do
		atf_check -s not-exit:0 -e match:"Permission denied" \
		    runuser -u $AGENT -- "$FRAMETOOL" ping "$AS_RUN/$s"
	done
	atf_check -o match:"^PONG runnerd" \
	    runuser -u $AGENT -- "$FRAMETOOL" ping "$AS_RUN/runner.sock"
	for s in control.sock audit.sock runner-control.sock; do
		atf_check -o match:"^PONG " \
		    runuser -u $OPERATOR -- "$FRAMETOOL" ping "$AS_RUN/$s"
	done
	# runnerd reaches approvald and brokerd as _asrunner; the reverse
	# is refused.
	atf_check -o match:"^PONG approvald" \
	    runuser -u _asrunner -- "$FRAMETOOL" ping "$AS_RUN/approval.sock"
	atf_check -o match:"^PONG brokerd" \
	    runuser -u _asrunner -- "$FRAMETOOL" ping "$AS_RUN/broker.sock"
	atf_check -s not-exit:0 -e match:"Permission denied" \
	    runuser -u _asapprove -- "$FRAMETOOL" ping "$AS_RUN/broker.sock"
}
sockets_admit_their_peers_cleanup()
{
	suite_cleanup
}

atf_test_case restart_picks_up cleanup
restart_picks_up_head()
{
	atf_set "descr" "a daemon killed with SIGKILL and started again by its unit picks up where it was"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc terraform runuser useradd"
	atf_set "timeout" "180"
}
restart_picks_up_body()
{
	install_suite
	for d in $DAEMONS; do
		unit_start $d
	done
	call='{"tool":"terraform_apply","arguments":{"working_dir":"demo"}}'
	runuser -u $AGENT -- "$FRAMETOOL" send "$AS_RUN/runner.sock" 100 \
	    "$call" > pending.out
	id=$(sed -n 's/.*"approval_id": *"\(apr-[^"]*\)".*/\1/p' pending.out |
	    head -n 1)
	[ -n "$id" ] || { cat pending.out >&2; atf_fail "no approval"; }
	# Restart=on-failure: a SIGKILLed daemon is started again.
	for d in approvald runnerd auditd; do
		kill -KILL "$(pid_of $d)"
		while kill -0 "$(pid_of $d)" 2>/dev/null; do sleep 0.05; done
		unit_start $d
	done
	atf_check -o match:"$id" runuser -u $OPERATOR -- \
	    "$B/usr/bin/approvalctl" -f "$B/etc/agent-sandbox.yaml" list
	atf_check -o match:'^TOOL_RESULT \{"isError":false' \
	    runuser -u $AGENT -- "$FRAMETOOL" send "$AS_RUN/runner.sock" 100 \
	    '{"tool":"terraform_plan","arguments":{"working_dir":"demo"}}'
	atf_check -o match:"intact" \
	    runuser -u $OPERATOR -- "$B/usr/bin/as-auditctl" \
	    -f "$B/etc/agent-sandbox.yaml" verify
}
restart_picks_up_cleanup()
{
	suite_cleanup
}

atf_test_case units_verify cleanup
units_verify_head()
{
	atf_set "descr" "systemd-analyze verify accepts the installed units; make install and create-users are idempotent; nothing shadows Linux Audit's auditd"
	atf_set "require.user" "root"
	atf_set "require.progs" "systemd-analyze useradd"
}
units_verify_body()
{
	install_suite
	MANPATH="$B/usr/share/man" atf_check systemd-analyze verify \
	    "$B"/systemd/agent-sandbox-*.service
	grep -q '^Type=notify$' "$B/systemd/agent-sandbox-auditd.service" ||
	    atf_fail "the units are not Type=notify"
	# A second install, and create-users again, change nothing.
	(cd "$B" && find . -type f -exec sha256sum {} + | sort) > first
	# shellcheck disable=SC2046
	make $(cat install.args) install > install2.log 2>&1 ||
	    { cat install2.log >&2; atf_fail "a second make install failed"; }
	(cd "$B" && find . -type f -exec sha256sum {} + | sort) > second
	# install_suite edited the configuration and the policy: a second
	# install keeps them as they are.
	atf_check diff first second
	atf_check -o ignore "$(as_src)/scripts/create-users"
	# Ours are out of PATH or renamed: Debian's auditd package keeps
	# auditd, auditctl and their manuals.
	for f in usr/bin/auditctl usr/sbin/auditd usr/sbin/auditctl \
	    usr/share/man/man8/auditd.8 usr/share/man/man8/auditctl.8; do
		[ ! -e "$B/$f" ] || atf_fail "make install put $f"
	done
	[ -x "$B/usr/bin/as-auditctl" ] || atf_fail "no as-auditctl"
}
units_verify_cleanup()
{
	suite_cleanup
}

atf_test_case two_person_rule cleanup
two_person_rule_head()
{
	atf_set "descr" "a two-person rule on terraform_apply as installed: an agent user who is also an operator cannot approve its own call, one approval of two leaves it pending, the second lets the apply run"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc terraform runuser useradd"
	atf_set "timeout" "240"
}
two_person_rule_body()
{
	install_suite
	# The agent's user is an operator too; two others review.
	user_ensure $AGENT_OPERATOR _asagent,_asoperator
	user_ensure $OPERATOR2 _asoperator
	python3 - "$B/etc/policy.yaml" <<'PY'
import sys
path = sys.argv[1]
lines = open(path).read().split("\n")
i = lines.index("  terraform_apply:")
lines[i + 1:i + 1] = ["    approvals: {required: 2, from: [_asoperator]}"]
open(path, "w").write("\n".join(lines))
PY
	for d in $DAEMONS; do
		unit_start $d
	done
	ctl="$B/usr/bin/approvalctl -f $B/etc/agent-sandbox.yaml"
	call='{"tool":"terraform_apply","arguments":{"working_dir":"demo"}}'
	runuser -u $AGENT_OPERATOR -- "$FRAMETOOL" send "$AS_RUN/runner.sock" \
	    100 "$call" > pending.out
	id=$(sed -n 's/.*"approval_id": *"\(apr-[^"]*\)".*/\1/p' pending.out |
	    head -n 1)
	[ -n "$id" ] || { cat pending.out >&2; atf_fail "no approval"; }
	atf_check -s exit:1 -e match:"that uid cannot approve it" \
	    runuser -u $AGENT_OPERATOR -- $ctl approve "$id"
	atf_check -o match:"$id pending" \
	    runuser -u $OPERATOR -- $ctl approve "$id" --any-client
	atf_check -o match:"^missing: +1 more from _asoperator$" \
	    runuser -u $OPERATOR2 -- $ctl show "$id"
	spend="{\"tool\":\"terraform_apply\",\"arguments\":{\"working_dir\":\"demo\",\"approval_id\":\"$id\"}}"
	atf_check -o match:"is pending, not approved" \
	    runuser -u $AGENT_OPERATOR -- "$FRAMETOOL" send \
	    "$AS_RUN/runner.sock" 100 "$spend"
	atf_check -o match:"$id approved" \
	    runuser -u $OPERATOR2 -- $ctl approve "$id" --reason "second pair of eyes"
	atf_check -o match:"^approved by: +$OPERATOR " \
	    -o match:"^approved by: +$OPERATOR2 .*: second pair of eyes$" \
	    runuser -u $OPERATOR -- $ctl show "$id"
	atf_check -o match:'^TOOL_RESULT \{"isError":false' \
	    runuser -u $AGENT_OPERATOR -- "$FRAMETOOL" send \
	    "$AS_RUN/runner.sock" 100 "$spend"
	atf_check -o match:"$id +spent" runuser -u $OPERATOR -- $ctl list --all
}
two_person_rule_cleanup()
{
	suite_cleanup
}

atf_init_test_cases()
{
	atf_add_test_case demo_as_installed
	atf_add_test_case sockets_admit_their_peers
	atf_add_test_case restart_picks_up
	atf_add_test_case two_person_rule
	atf_add_test_case units_verify
}
