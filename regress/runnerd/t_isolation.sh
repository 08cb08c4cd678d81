#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# The isolation claims of the gvisor backend (issue 6), each a test; the
# same checks make scripts/verify-local.

rd_case()
{
	atf_test_case "$1" cleanup
	eval "$1_head() {
		atf_set descr '$2'
		atf_set require.user root
		atf_set require.progs runsc python3
		atf_set timeout ${3:-120}
	}
	$1_body() {
		RD_BIN=\$(atf_config_get bindir)
		RD_LIB=\$(atf_get_srcdir)
		. \"\$RD_LIB/rd.subr\"
		check_$1 2>err || atf_fail \"\$(tr '\\n' ' ' < err)\"
		rd_stop
	}
	$1_cleanup() {
		RD_LIB=\$(atf_get_srcdir)
		. \"\$RD_LIB/rd.subr\"
		rd_stop
	}"
}

rd_case kernel "the kernel inside is gVisor, not the host kernel"
rd_case network "no network: only lo; TCP and DNS to the host fail"
rd_case egress "an allowlisted loopback server answers, another port not"
rd_case egress_fanout "400 relays at once: proxy processes within pids" 180
rd_case egress_idle "an idle relay is closed after egress_idle, 3 s here"
rd_case filesystem "read-only root, uid 65534, no capabilities"
rd_case threads "threads, thread pools, posix_spawn and subprocess work"
rd_case coreutils "ls, stat, cp -a, du, find, id, awk, cc and pipelines work as on the host"
rd_case userns "unshare -U, clone and clone3 with CLONE_NEWUSER are refused"
rd_case userns_init "with sandbox_init: always, the same refused and threads work"
rd_case credential "clean environment; credential file read-only, then gone"
rd_case memory "an allocation past the memory limit fails: memory_limit"
rd_case pids "the pids limit stops a bounded fork loop"
rd_case deadline "the deadline kills sleep 1000"
rd_case output "the output cap ends the sandbox on either stream"
rd_case bigresult "a result too large without its output copies: a short error"
rd_case bigoutput "output six times its size as JSON is cut to fit, not lost"
rd_case nuloutput "NUL and non-UTF-8 output returned whole: text and base64"
rd_case leftovers "nothing left behind after 200 calls" 600
rd_case helper_exec "the launcher is runnerd executed again: its own descriptors and memory layout"

atf_init_test_cases()
{
	for t in kernel network egress egress_fanout egress_idle filesystem \
	    threads coreutils userns userns_init credential memory pids deadline output bigresult bigoutput \
	    nuloutput leftovers helper_exec; do
		atf_add_test_case "$t"
	done
}
