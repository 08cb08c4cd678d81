#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Writers that flood: a batch that reaches its byte bound while a
# checkpoint is due is committed once, with the checkpoint in it, and
# auditd acknowledges every event and keeps serving.

. "$(atf_get_srcdir)/../lib/suite.subr"

BURST="$(atf_get_srcdir)/burst.py"
MiB=1048576
# common/proto.h MSG_MAX_PAYLOAD
FRAME_MAX=$((16 * MiB))

# auditd with a checkpoint due after every record, one event already in.
flood_start()
{
	AS_AUDITD_EXTRA="  checkpoint_every: 1"
	as_conf
	as_start auditd
	atf_check -o inline:"1\n" python3 "$BURST" "$AS_RUN/audit.sock" -c 1 \
	    -s 200
}

auditd_pid()
{
	awk '$2 == "auditd" { print $1 }' pids
}

# auditd still answers, stops cleanly, and the whole log verifies
# against its checkpoints.
flood_check()
{
	atf_check -o inline:"1\n" python3 "$BURST" "$AS_RUN/audit.sock" -c 1 \
	    -s 200
	as_stop
	atf_check -o ignore "$(as_bin auditctl)" -f conf.yaml verify \
	    -f var/audit.jsonl
	# A checkpoint was made beside the flood, not skipped.
	atf_check -o match:"^[2-9]|^[1-9][0-9]" -x \
	    "grep -c '\"event\":\"log.checkpoint\"' var/audit.jsonl"
}

atf_test_case big_event cleanup
big_event_head()
{
	atf_set "descr" "one 9 MiB event with a checkpoint due is acknowledged"
	atf_set "timeout" "120"
}
big_event_body()
{
	flood_start
	atf_check -o inline:"1\n" python3 "$BURST" "$AS_RUN/audit.sock" -c 1 \
	    -s $((9 * MiB))
	flood_check
}
big_event_cleanup()
{
	as_kill_all
}

atf_test_case three_writers cleanup
three_writers_head()
{
	atf_set "descr" "three connections' 3 MiB events in one turn, a checkpoint due"
	atf_set "timeout" "120"
}
three_writers_body()
{
	flood_start
	atf_check -o inline:"3\n" python3 "$BURST" "$AS_RUN/audit.sock" -c 3 \
	    -s $((3 * MiB)) --stopped "$(auditd_pid)"
	flood_check
}
three_writers_cleanup()
{
	as_kill_all
}

atf_test_case thirty_writers cleanup
thirty_writers_head()
{
	atf_set "descr" "thirty connections' 3 MiB events in one turn, a checkpoint due"
	atf_set "timeout" "300"
}
thirty_writers_body()
{
	flood_start
	atf_check -o inline:"30\n" python3 "$BURST" "$AS_RUN/audit.sock" \
	    -c 30 -s $((3 * MiB)) --stopped "$(auditd_pid)"
	flood_check
}
thirty_writers_cleanup()
{
	as_kill_all
}

atf_test_case frame_limit cleanup
frame_limit_head()
{
	atf_set "descr" "events exactly at the frame limit are acknowledged; one byte more is refused and auditd serves on"
	atf_set "timeout" "300"
}
frame_limit_body()
{
	flood_start
	atf_check -o inline:"2\n" python3 "$BURST" "$AS_RUN/audit.sock" -c 2 \
	    -s $FRAME_MAX
	atf_check -s exit:1 -e match:"closed|Broken pipe|reset" python3 "$BURST" \
	    "$AS_RUN/audit.sock" -c 1 -s $((FRAME_MAX + 1))
	flood_check
}
frame_limit_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case big_event
	atf_add_test_case three_writers
	atf_add_test_case thirty_writers
	atf_add_test_case frame_limit
}
