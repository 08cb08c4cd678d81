#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Calls beyond runnerd.max_calls wait (issue 15): all are served, a full
# queue and a long wait refuse with one audit end, clients take turns,
# and a cancelled call or one of a client gone leaves the queue.  runnerd
# runs with max_calls 1, real runsc and the stand-in peers of rd.subr;
# each check is in queue_check.py.

rq_case()
{
	atf_test_case "$1" cleanup
	eval "$1_head() {
		atf_set descr '$2'
		atf_set require.user root
		atf_set require.progs runsc python3
		atf_set timeout 180
	}
	$1_body() { rq_run $1 '$3'; }
	$1_cleanup() { rq_setup; rd_stop; }"
}

rq_setup()
{
	RD_BIN=$(atf_config_get bindir)
	RD_LIB=$(atf_get_srcdir)
	. "$RD_LIB/rd.subr"
}

# rq_run CHECK CONFIG: the blocker is cancelled, never timed out.
rq_run()
{
	rq_setup
	RD_PEERS="$(id -u), 65534" RD_EXTRA="  max_calls: 1
  timeout: 10m
$2" rd_start || atf_fail "runnerd did not start: $(cat runnerd.log)"
	python3 "$RD_LIB/queue_check.py" "$1" run/runner.sock 2>err ||
	    atf_fail "$(tr '\n' ' ' < err)"
	kill -0 "$(cat rd.runnerd)" || atf_fail "runnerd died: $(cat runnerd.log)"
	rd_stop
}

rq_case all_served "calls of clients sending at once wait, and all run" \
    "  queue_wait: 10m"
rq_case full "a call finding the queue full is refused at once" \
    "  queue_max: 1
  queue_wait: 10m"
rq_case turns "clients take turns: one call of another client overtakes a flood" \
    "  queue_wait: 10m"
rq_case share "clients share the queue: a flood gives up places to a later client, and a client past its share is refused" \
    "  queue_max: 4
  queue_wait: 10m"
rq_case user_share "users share the queue: many clients of one uid cannot take the places of another" \
    "  queue_max: 6
  queue_wait: 10m"
rq_case user_inflight "calls in progress per user: all its clients together, other users apart" \
    "  inflight_per_user: 3
  queue_wait: 10m"
rq_case wait "a call that waited queue_wait is refused" "  queue_wait: 1s"
rq_case leave "a cancelled call and the call of a client gone leave the queue" \
    "  queue_wait: 10m"

atf_init_test_cases()
{
	for t in all_served full turns share user_share user_inflight wait \
	    leave; do
		atf_add_test_case "$t"
	done
}
