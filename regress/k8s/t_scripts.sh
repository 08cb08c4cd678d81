#! /usr/bin/env atf-sh
# Every script is shellcheck-clean; for scripts/k8s-*, which cannot run
# here (no container engine, no network), that is what can be checked.

atf_test_case shellcheck_clean
shellcheck_clean_head()
{
	atf_set "descr" "shellcheck scripts/* is clean"
}
shellcheck_clean_body()
{
	command -v shellcheck >/dev/null || atf_skip "shellcheck not installed"
	cd "$(atf_config_get srcdir)" || atf_fail "no source tree"
	atf_check -x "shellcheck -x scripts/*"
}

atf_init_test_cases()
{
	atf_add_test_case shellcheck_clean
}
