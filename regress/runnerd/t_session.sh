#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Code-execution sessions (issue 10): state, the proof scenario, files,
# limits, isolation between sessions, ownership, caps, reaping, audit,
# the warm pool, and breakout attempts through the tools.  Each check
# is in session_check.py; runnerd runs with real runsc and the stand-in
# peers of rd.subr.

ss_case()
{
	atf_test_case "$1" cleanup
	eval "$1_head() {
		atf_set descr '$2'
		atf_set require.user root
		atf_set require.progs runsc python3
		atf_set timeout ${3:-120}
	}
	$1_body() { ss_run $1; }
	$1_cleanup() { ss_setup; rd_stop; }"
}

ss_setup()
{
	RD_BIN=$(atf_config_get bindir)
	RD_LIB=$(atf_get_srcdir)
	. "$RD_LIB/rd.subr"
}

# ss_start [config lines]: runnerd with sessions on, a small pool.  A
# call may take 60 s (SS_TIMEOUT): on a loaded machine with other tests
# beside it, a listing of /proc or a compiler ran past 3 s.
ss_start()
{
	RD_SESSIONS_MAX=${RD_SESSIONS_MAX:-16} RD_EXTRA="  session_agent: $(atf_config_get srcdir)/sandbox-init/session-agent.py
  warm_pool: ${SS_POOL:-1}
  timeout: ${SS_TIMEOUT:-60s}
  memory: 256M
  pids: 32
$*" rd_start || atf_fail "runnerd did not start: $(cat runnerd.log)"
}

ss_check()
{
	python3 "$RD_LIB/session_check.py" "$@" run/runner.sock \
	    ${SS_ARGS:-} 2>err || atf_fail "$(tr '\n' ' ' < err)"
}

ss_run()
{
	ss_setup
	case $1 in
	caps)
		rd_open_run
		RD_PEERS="$(id -u), 65534" RD_SESSIONS_MAX=4 \
		    ss_start "  sessions_per_user: 3
  sessions_per_client: 2" ;;
	reap)
		# The idle one must pass its 2 s before its lifetime, even
		# when a loaded machine takes seconds to open it.
		ss_start "  session_idle: 2s
  session_lifetime: 8s" ;;
	breakout)
		addr=$(python3 "$RD_LIB/hostnet.py" addr)
		rd_serve 0 UDP:0 || atf_fail "no test listeners"
		echo "host-only-canary" > host-file
		sleep 300 &
		echo $! >> rd.pids
		SS_ARGS="$(pwd)/host-file $! ${addr:-127.0.0.1} $(cat ports)"
		# Its 768 MiB pass memory + work_max + 128M: the cgroup's bound.
		ss_start "  work_max: 64M" ;;
	tmpfull)
		ss_start "  tmp_size: 8M" ;;
	limits)
		ss_start "  work_max: 64M" ;;
	timeout)
		# The calls it times out wait this long.
		SS_TIMEOUT=3s ss_start ;;
	*)
		ss_start ;;
	esac
	ss_check "$1"
	kill -0 "$(cat rd.runnerd)" || atf_fail "runnerd died: $(cat runnerd.log)"
	rd_stop
}

ss_case state "state persists; a crash loses only Python state; reset clears it"
ss_case primes "SHA-256 of the first 1000 primes: sandbox equals host"
ss_case files "binary-safe files under /work only; links and .. refused"
ss_case timeout "call timeout and output cap end the call, not the session"
ss_case limits "fork loop and 4 GiB: limit reports, the session lives on"
ss_case isolation "one session sees no files or processes of another"
ss_case threads "threads, thread pools, posix_spawn and subprocess work"
ss_case coreutils "ls, stat, cp -a, du, find, id, awk, cc and pipelines work as on the host"
ss_case userns "unshare -U, clone and clone3 with CLONE_NEWUSER are refused"
ss_case owner "another client cannot use a session; it ends with its client"
ss_case caps "sessions per client, per user (all its clients) and in total are capped"
ss_case reap "idle and over-age sessions are reaped"
ss_case audit "code, commands and outputs are in the audit log"
ss_case warm "new sessions claim warm sandboxes from the pool"
ss_case breakout "breakout attempts fail; host and other sessions unaffected" 300
ss_case bigout "a 1 MiB output of escapes fits its frame; the log says so" 300
ss_case workdir "chmod 000 /work, /work removed: an error, never two agents"
ss_case tmpfull "a full /tmp: an error; the session answers on"
ss_case nul "NUL and non-UTF-8 output returned whole; the session lives on"

atf_init_test_cases()
{
	for t in state primes files timeout limits isolation owner caps reap \
	    audit warm breakout bigout workdir tmpfull threads coreutils userns \
	    nul; do
		atf_add_test_case "$t"
	done
}
