#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Every daemon: starts, answers PING, admits only its peers, survives bad
# frames, leaks nothing, and goes away cleanly on SIGTERM.

. "$(atf_get_srcdir)/../lib/suite.subr"

SERVERS="auditd approvald brokerd runnerd"
SOCKETS="audit.sock approval.sock control.sock broker.sock runner.sock"

# Whether every listener refuses descriptors in the kernel (SO_PASSRIGHTS).
kernel_refuses_fds()
{
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1])
from asframe import kernel_refuses_fds
sys.exit(0 if kernel_refuses_fds() else 1)' "$(atf_get_srcdir)/../lib"
}

# Each daemon's open descriptors now, and a check that they are as many.
fds_count()
{
	while read -r pid d; do
		echo "$pid $(ls /proc/$pid/fd | wc -l)" >> before
	done < pids
}

fds_check()
{
	while read -r pid n; do
		now=$(ls /proc/$pid/fd | wc -l)
		[ "$now" -eq "$n" ] ||
		    atf_fail "pid $pid had $n descriptors, now $now"
	done < before
}

atf_test_case start_ping_stop cleanup
start_ping_stop_head()
{
	atf_set "descr" "each daemon answers PING on each socket, then exits on SIGTERM"
}
start_ping_stop_body()
{
	as_conf
	as_start $SERVERS
	for s in $SOCKETS; do
		atf_check -o match:"^PONG " "$FRAMETOOL" ping "$AS_RUN/$s"
	done
	atf_check -o inline:"PONG runnerd\n" "$FRAMETOOL" ping "$AS_RUN/runner.sock"
	as_stop
	for s in $SOCKETS; do
		[ ! -e "$AS_RUN/$s" ] || atf_fail "$s left behind"
	done
	# No daemon, and no child of one, outlives SIGTERM.
	if pgrep -f "$(pwd)/conf.yaml" >/dev/null; then
		atf_fail "processes left: $(pgrep -af "$(pwd)/conf.yaml")"
	fi
}
start_ping_stop_cleanup()
{
	as_kill_all
}

atf_test_case config_check
config_check_head()
{
	atf_set "descr" "-n accepts a good configuration and names the line of a bad one"
}
config_check_body()
{
	as_conf
	for d in mcpd $SERVERS; do
		atf_check -e inline:"configuration OK\n" \
		    "$(as_bin $d)" -n -f conf.yaml
	done
	sed 's/^  journal:/  jornal:/' conf.yaml > bad.yaml
	line=$(grep -n '^  jornal:' bad.yaml | cut -d: -f1)
	for d in mcpd $SERVERS; do
		atf_check -s exit:1 \
		    -e inline:"bad.yaml:$line: unknown key \"jornal\"\n" \
		    "$(as_bin $d)" -n -f bad.yaml
	done
	atf_check -s exit:1 -e match:"No such file" \
	    "$(as_bin auditd)" -n -f missing.yaml
	# approvald -n also loads the policy the configuration names.
	printf 'tools:\n  x: { tier: medium }\n' > policy.yaml
	atf_check -s exit:1 -e match:"policy.yaml:2: tier" \
	    "$(as_bin approvald)" -n -f conf.yaml
	# -nv prints a normalized configuration that loads again.
	"$(as_bin auditd)" -nv -f conf.yaml > printed.yaml 2>/dev/null
	atf_check -e inline:"configuration OK\n" \
	    "$(as_bin runnerd)" -n -f printed.yaml
}

atf_test_case peer_auth cleanup
peer_auth_head()
{
	atf_set "descr" "a client running as another uid is refused on every socket"
	atf_set "require.user" "root"
}
peer_auth_body()
{
	# The first gate is the socket's file: its ACL admits only the
	# configured peers.
	AS_RUNTIME_DIR=$(mktemp -d /tmp/as-peer.XXXXXX)
	echo "$AS_RUNTIME_DIR" > rundir
	chmod 755 "$AS_RUNTIME_DIR"
	as_conf
	as_start $SERVERS
	for s in $SOCKETS; do
		atf_check -s not-exit:0 -e match:"Permission denied" \
		    setpriv --reuid=65534 --regid=65534 --clear-groups \
		    "$FRAMETOOL" ping "$AS_RUN/$s"
	done
	# With the file open to all, the daemon still refuses: the
	# refusal we see next is SO_PEERCRED's.
	chmod 666 "$AS_RUN"/*.sock
	for s in $SOCKETS; do
		atf_check -s exit:2 -o match:"uid 65534 is not allowed" \
		    setpriv --reuid=65534 --regid=65534 --clear-groups \
		    "$FRAMETOOL" ping "$AS_RUN/$s"
		atf_check -o match:"^PONG " "$FRAMETOOL" ping "$AS_RUN/$s"
	done
	grep -q "refused uid 65534" auditd.log || atf_fail "refusal not logged"
	as_stop
}
peer_auth_cleanup()
{
	as_kill_all
	[ -f rundir ] && rm -rf "$(cat rundir)"
}

atf_test_case garbled_frames cleanup
garbled_frames_head()
{
	atf_set "descr" "a garbled or oversized frame drops that connection only"
}
garbled_frames_body()
{
	as_conf
	as_start $SERVERS
	# The sockets side by side, each in a subshell that records what
	# went wrong in bad.<socket>: one hold at a time would wait out five.
	# (A bare wait would wait for the daemons too.)
	checkers=
	for s in $SOCKETS; do
		(
			"$FRAMETOOL" hold "$AS_RUN/$s" 3 > "hold.$s" &
			holder=$!
			for bad in garbage oversize badversion; do
				"$FRAMETOOL" $bad "$AS_RUN/$s" >/dev/null ||
				    echo "$bad was not dropped" >> "bad.$s"
			done
			"$FRAMETOOL" ping "$AS_RUN/$s" | grep -q "^PONG " ||
			    echo "no PONG after the bad frames" >> "bad.$s"
			wait $holder && grep -q "^PONG " "hold.$s" ||
			    echo "the idle client was hurt" >> "bad.$s"
		) &
		checkers="$checkers $!"
	done
	for p in $checkers; do
		wait "$p"
	done
	for s in $SOCKETS; do
		[ ! -e "bad.$s" ] || atf_fail "$s: $(tr '\n' ' ' < "bad.$s")"
	done
	while read -r pid d; do
		kill -0 "$pid" || atf_fail "$d died"
	done < pids
	grep -q "oversized frame, dropped" runnerd.log ||
	    atf_fail "runnerd did not log the oversized frame"
	as_stop
}
garbled_frames_cleanup()
{
	as_kill_all
}

atf_test_case no_fd_leaks cleanup
no_fd_leaks_head()
{
	atf_set "descr" "connections that come and go leave no descriptor behind"
}
no_fd_leaks_body()
{
	as_conf
	as_start $SERVERS
	fds_count
	for s in $SOCKETS; do
		i=0
		while [ $i -lt 40 ]; do
			"$FRAMETOOL" ping "$AS_RUN/$s" >/dev/null
			"$FRAMETOOL" garbage "$AS_RUN/$s" >/dev/null
			i=$((i + 1))
		done
	done
	sleep 0.2
	fds_check
	as_stop
}
no_fd_leaks_cleanup()
{
	as_kill_all
}

atf_test_case inherited_fds cleanup
inherited_fds_head()
{
	atf_set "descr" "a descriptor the parent left open is closed at start"
}
inherited_fds_body()
{
	as_conf
	as_start $SERVERS 7<conf.yaml 8>>inherited
	while read -r pid d; do
		ls -l /proc/$pid/fd/ > fds
		! grep -q -e conf.yaml -e inherited fds ||
		    atf_fail "$d kept an inherited descriptor"
	done < pids
	as_stop
}
inherited_fds_cleanup()
{
	as_kill_all
}

atf_test_case fd_frames cleanup
fd_frames_head()
{
	atf_set "descr" "a descriptor on a frame that may carry none is refused by the kernel, or closed and its connection dropped"
}
fd_frames_body()
{
	AS_RUNNERD_EXTRA="  operators: { users: [$(id -u)] }"
	as_conf
	as_start $SERVERS
	fds_count
	# PING everywhere, and each socket's own first request type.
	for st in audit.sock:500 approval.sock:200 control.sock:300 \
	    broker.sock:400 runner.sock:100 runner-control.sock:600; do
		s=${st%:*}
		for t in 1 ${st#*:}; do
			echo "$s $t $("$FRAMETOOL" fds "$AS_RUN/$s" $t 200)" \
			    >> sent
		done
		atf_check -o match:"^PONG " "$FRAMETOOL" ping "$AS_RUN/$s"
	done
	fds_check
	# A frame sent before the daemon accepted its connection brings its
	# descriptor in even where the listener refuses them from then on.
	kernel_refuses_fds && refusing=1 || refusing=0
	awk -v refusing=$refusing '$4 != 0 || $6 + $8 != 200 ||
	    (!refusing && $8 != 0) { print; bad = 1 } END { exit bad }' \
	    sent || atf_fail "a connection survived a descriptor"
	grep -q "descriptor on a frame" auditd.log ||
	    atf_fail "auditd did not log the descriptor"
	as_stop
}
fd_frames_cleanup()
{
	as_kill_all
}

atf_test_case lingering_fds cleanup
lingering_fds_head()
{
	atf_set "descr" "a peer's socket set to linger, handed to every listener, never holds the daemon's loop"
	atf_set "timeout" "120"
}
lingering_fds_body()
{
	AS_RUNNERD_EXTRA="  operators: { users: [$(id -u)] }"
	as_conf
	as_start $SERVERS
	pid() { awk -v d="$1" '$2 == d { print $1 }' pids; }
	atf_check -o match:"runner-control.sock: slowest PING" \
	    python3 "$(atf_get_srcdir)/linger.py" "$AS_RUN" \
	    audit.sock:"$(pid auditd)" approval.sock:"$(pid approvald)" \
	    control.sock:"$(pid approvald)" broker.sock:"$(pid brokerd)" \
	    runner.sock:"$(pid runnerd)" \
	    runner-control.sock:"$(pid runnerd)"
	as_stop
}
lingering_fds_cleanup()
{
	as_kill_all
}

atf_test_case listener_rules cleanup
listener_rules_head()
{
	atf_set "descr" "an unlisted type, a wrong payload and an unexpected descriptor are answered ERR_BADMSG; the connection stays"
}
listener_rules_body()
{
	AS_RUNNERD_EXTRA="  operators: { users: [$(id -u)] }"
	as_conf
	as_start $SERVERS
	fds_count
	atf_check python3 "$(atf_get_srcdir)/badmsg.py" "$AS_RUN"
	# The descriptors that came with refused frames were closed.
	fds_check
	as_stop
}
listener_rules_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case start_ping_stop
	atf_add_test_case config_check
	atf_add_test_case peer_auth
	atf_add_test_case garbled_frames
	atf_add_test_case no_fd_leaks
	atf_add_test_case inherited_fds
	atf_add_test_case fd_frames
	atf_add_test_case lingering_fds
	atf_add_test_case listener_rules
}
