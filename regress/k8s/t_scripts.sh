#! /usr/bin/env atf-sh
# scripts/k8s-* cannot run here (no container engine, no network); what
# can be checked here is: they are shellcheck-clean.

atf_test_case shellcheck_clean
shellcheck_clean_head()
{
	atf_set "descr" "scripts/k8s-* are shellcheck-clean"
}
shellcheck_clean_body()
{
	command -v shellcheck >/dev/null || atf_skip "shellcheck not installed"
	cd "$(atf_config_get srcdir)" || atf_fail "no source tree"
	atf_check shellcheck -x scripts/k8s-up scripts/k8s-down \
	    scripts/k8s-verify scripts/k8s-demo scripts/k8s-lib.sh
}

atf_init_test_cases()
{
	atf_add_test_case shellcheck_clean
}
