#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Every program has a manual, and every manual is well-formed mdoc.

atf_test_case lint
lint_head()
{
	atf_set "descr" "mandoc -T lint finds no warning in any manual"
	atf_set "require.progs" "mandoc"
}
lint_body()
{
	src=$(atf_config_get srcdir)
	for p in mcpd runnerd approvald brokerd auditd notifyd approvalctl auditctl \
	    runnerctl; do
		ls "$src"/*/"$p".[158] >/dev/null 2>&1 ||
		    atf_fail "no manual for $p"
	done
	for m in "$src"/*/*.[158]; do
		# STYLE notes (cross references to pages not installed
		# here) are not defects; warnings and errors are.
		mandoc -T lint -W warning "$m" > lint.out 2>&1 || {
			cat lint.out >&2
			atf_fail "$m"
		}
	done
}

atf_init_test_cases()
{
	atf_add_test_case lint
}
