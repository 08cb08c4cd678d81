#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# What one peer may hold of a daemon (README "Operating it",
# connections): output it does not read, half a frame, connections of
# its uid, and the descriptors a flood of connections would take.  Each
# on every kind of daemon socket that the attack fits.

. "$(atf_get_srcdir)/../lib/suite.subr"

BOUNDS="$(atf_get_srcdir)/bounds.py"
SERVERS="auditd approvald brokerd runnerd"

pid_of()
{
	awk -v d="$1" '$2 == d { print $1 }' pids
}

atf_test_case nonreader cleanup
nonreader_head()
{
	atf_set "descr" "a peer that sends and never reads is dropped at queued_max; the daemon's memory stays low"
	atf_set "timeout" "300"
}
nonreader_body()
{
	as_conf
	as_start $SERVERS
	for sd in audit.sock:auditd approval.sock:approvald \
	    broker.sock:brokerd runner.sock:runnerd; do
		atf_check -o match:"^dropped after" -o match:"peak RSS" \
		    python3 "$BOUNDS" nonreader "$AS_RUN/${sd%:*}" \
		    "$(pid_of "${sd#*:}")"
	done
	grep -q "reads nothing of" runnerd.log ||
	    atf_fail "runnerd did not say why it dropped the peer"
	as_stop
}
nonreader_cleanup()
{
	as_kill_all
}

atf_test_case halfframe cleanup
halfframe_head()
{
	atf_set "descr" "half a frame and silence: dropped after frame_time"
	atf_set "timeout" "120"
}
halfframe_body()
{
	echo "connections: { frame_time: 1s }" > conn.yaml
	as_conf
	cat conn.yaml >> conf.yaml
	as_start $SERVERS
	for s in audit.sock approval.sock control.sock broker.sock \
	    runner.sock; do
		atf_check -o match:"^dropped after" python3 "$BOUNDS" \
		    halfframe "$AS_RUN/$s" 10
	done
	grep -q "a frame not whole after 1 s" auditd.log ||
	    atf_fail "auditd did not say why it dropped the peer"
	as_stop
}
halfframe_cleanup()
{
	as_kill_all
}

atf_test_case per_uid cleanup
per_uid_head()
{
	atf_set "descr" "past connections.per_uid a uid's next connection is refused, and said why"
	atf_set "timeout" "60"
}
per_uid_body()
{
	as_conf
	echo "connections: { per_uid: 8 }" >> conf.yaml
	as_start approvald
	atf_check -o match:"too many connections of this uid" \
	    python3 "$BOUNDS" percap "$AS_RUN/control.sock" 8
	as_stop
}
per_uid_cleanup()
{
	as_kill_all
}

atf_test_case out_of_fds cleanup
out_of_fds_head()
{
	atf_set "descr" "connections past the daemon's descriptors are refused, without a spin, and it serves on"
	atf_set "timeout" "120"
}
out_of_fds_body()
{
	as_conf
	(ulimit -n 48 && as_start auditd)
	atf_check -o match:"refused for want of descriptors" \
	    python3 "$BOUNDS" flood "$AS_RUN/audit.sock" 100 \
	    "$(pid_of auditd)"
	n=$(grep -c "out of descriptors" auditd.log)
	[ "$n" -le 3 ] || atf_fail "auditd logged the flood $n times"
	as_stop
}
out_of_fds_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case nonreader
	atf_add_test_case halfframe
	atf_add_test_case per_uid
	atf_add_test_case out_of_fds
}
