#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# The quick part of the differential suite (issue 31; compat.py; the
# whole is make compat): the shell set and a few fast CPython modules,
# on the host as uid 65534 and through mcpd in a session and a one-shot
# sandbox.  No skip: without root, runsc or the daemons the suite
# cannot start, and that fails.

cp_run()
{
	python3 "$(atf_get_srcdir)/compat.py" \
	    --srcdir "$(atf_config_get srcdir)" "$@" \
	    "$(atf_config_get bindir)" out > compat.log 2>&1
	rc=$?
	cat compat.log
	[ $rc -eq 0 ] && return 0
	[ $rc -eq 2 ] && atf_fail "the suite did not start: $(grep '^compat:' \
	    compat.log | tr '\n' ' ')"
	atf_fail "$(grep -c '^FAIL:' compat.log) differences: $(grep \
	    '^FAIL:' compat.log | head -20 | tr '\n' ';')"
}

atf_test_case shell
shell_head()
{
	atf_set descr "The shell set: host against session and one-shot sandbox"
	atf_set timeout 600
}
shell_body()
{
	cp_run --no-python
}

atf_test_case python
python_head()
{
	atf_set descr "Fast CPython test modules: native against the sandboxes"
	atf_set timeout 600
}
python_body()
{
	cp_run --quick --no-shell
}

atf_test_case hung
hung_head()
{
	atf_set descr "A module out of time names the test it was running, from regrtest's --timeout stack dump, as a pattern the exclusion file takes"
}
hung_body()
{
	mkdir -p lib/test
	printf 'import time, unittest\nclass T(unittest.TestCase):\n    def test_fine(self):\n        pass\n\n    def test_waits(self):\n        time.sleep(60)\n' \
	    > lib/test/test_waits.py
	python3 -m test --testdir lib/test -q -W --timeout 2 test_waits > out 2>&1 &&
	    atf_fail "regrtest passed a test that hangs"
	atf_check -o inline:"test_waits.*.test_waits|Timeout (0:00:02)! while at line 7\n" \
	    python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import regrtest
print("|".join(regrtest.first_failure(open("out").read())))' "$(atf_get_srcdir)"
}

atf_init_test_cases()
{
	atf_add_test_case hung
	atf_add_test_case shell
	atf_add_test_case python
}
