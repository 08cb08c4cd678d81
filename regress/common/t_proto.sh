#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# proto.h's one list of message types against the copies outside C: the
# Python frames of the tests (regress/lib/asframe.py) and the session
# agent's own numbers (sandbox-init/session-agent.py).

. "$(atf_get_srcdir)/../lib/suite.subr"

LIB="$(atf_get_srcdir)/../lib"

atf_test_case asframe
asframe_head()
{
	atf_set "descr" "asframe.py names every type proto.h lists, with its number, and no other"
}
asframe_body()
{
	"$FRAMETOOL" types | sort > c.txt
	[ -s c.txt ] || atf_fail "frametool printed no types"
	PYTHONPATH="$LIB" python3 -c '
import asframe
for name, num in asframe.TYPES.items():
    print(asframe.symbol(name), num, name)' | sort > py.txt
	if ! diff -u c.txt py.txt >&2; then
		atf_fail "proto.h (-) and asframe.py (+) differ"
	fi
}

atf_test_case session_agent
session_agent_head()
{
	atf_set "descr" "the session agent's AGENT_* numbers are proto.h's"
}
session_agent_body()
{
	"$FRAMETOOL" types | awk '$1 ~ /^AGENT_/ { print $1, $2 }' |
	    sort > c.txt
	[ -s c.txt ] || atf_fail "proto.h lists no AGENT_ types"
	# Parsed, not run: the agent starts serving when run.
	python3 -c '
import ast, sys
for node in ast.parse(open(sys.argv[1]).read()).body:
    if not isinstance(node, ast.Assign):
        continue
    t = node.targets[0]
    names = [n.id for n in (t.elts if isinstance(t, ast.Tuple) else [t])
             if isinstance(n, ast.Name)]
    if not any(n.startswith("AGENT_") for n in names):
        continue
    values = ast.literal_eval(node.value)
    values = values if isinstance(values, tuple) else [values]
    for n, v in zip(names, values):
        print(n, v)' "$(as_src)/sandbox-init/session-agent.py" |
	    sort > py.txt
	if ! diff -u c.txt py.txt >&2; then
		atf_fail "proto.h (-) and session-agent.py (+) differ"
	fi
}

atf_init_test_cases()
{
	atf_add_test_case asframe
	atf_add_test_case session_agent
}
