#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# The shapes issues 17 and 30 found logged verbatim, sent as a run_shell
# command through the running suite: the caller gets its output, the
# audit log holds none of them.

. "$(atf_get_srcdir)/../lib/suite.subr"

atf_test_case run_shell cleanup
run_shell_head()
{
	atf_set "descr" "secrets in a run_shell command never reach the log"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc python3"
	atf_set "timeout" "120"
}
run_shell_body()
{
	AS_RUNNERD_EXTRA="  sessions_max: 0
  warm_pool: 0"
	AS_BROKERD_EXTRA="  scopes:
    code: { engine: none, tools: [run_shell] }"
	as_conf
	as_start auditd approvald brokerd runnerd
	python3 -c '
import base64, json
pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq9Zx4Lm2\n" \
    "-----END RSA PRIVATE KEY-----\n"
cmd = ("echo ghp_HAZt9xslXTTIQrh6bpy0VAq3GZuO2R8UziJd"
    " gho_i0Y4mj4TIJZ9RnvIh4TOetAfG82EOMjRZA0G"
    " github_pat_uZudk7AfSXt1qQzEeIfIOp_oI9qKkZsdU4FLz0FoJAHOCe9DWnoEu0"
    "mxMb9VKKHBd51v9Lk79JoNuxlWnt"
    " xoxb-1234567890-2345678901234-Xq9hT2mLpR7vKc3nBw8sYz4d;"
    " echo password=Hunt3r2x postgres://app:Pg5ecret2026@db:5432/app;"
    " echo AIzaRQBgImbdo8MAmd6CdZp2hhyHITS1ZaRkeKP"
    " sk_live_yXHMW5jQJjkLI7uFZ34s97Ae;"
    " echo " + base64.b64encode(pem.encode()).decode() + " | base64 -d;"
    " printf \"%s\\n\" \x27{\"out\":\"done\\nghp_W3rQe9vTz1Lk7Hn2Jc5Xb8Ms4Pd6Fg0Ya9Ku\"}\x27;"
    " echo \x27mysql -uroot -pMyS3cretPw app\x27;"
    " echo \x27curl -u ops:Curl3dPw https://ci.example/\x27;"
    " echo export DB_PASS=DbPa55word")
print(json.dumps({"command": cmd}))' > args.json
	as_call run_shell "$(cat args.json)" > r.json
	as_field text < r.json > out.txt
	grep -q "^ghp_HAZt9x" out.txt && grep -q "PRIVATE KEY" out.txt &&
	    grep -q "DbPa55word" out.txt ||
	    atf_fail "the call did not run: $(cat r.json)"
	as_stop
	grep -q '"event":"tool.request"' var/audit.jsonl ||
	    atf_fail "no tool.request in the log"
	for s in ghp_HAZt9x gho_i0Y4 github_pat_uZud xoxb-1234 Hunt3r2x \
	    Pg5ecret2026 AIzaRQBg sk_live_yXHM LS0tLS1CRUdJTi ghp_W3rQe \
	    MyS3cretPw Curl3dPw DbPa55word; do
		! grep -q "$s" var/audit.jsonl || atf_fail "$s is in the log"
	done
	atf_check -o match:'password=<redacted:secret-value>' \
	    -o match:'postgres://app:<redacted:url-password>@db' \
	    -o match:'<redacted:github-token>' \
	    -o match:'<redacted:slack-token>' \
	    -o match:'<redacted:google-api-key>' \
	    -o match:'<redacted:stripe-key>' \
	    -o match:'<redacted:private-key>' \
	    -o match:'-p<redacted:secret-value> app' \
	    -o match:'-u ops:<redacted:secret-value> https' \
	    -o match:'DB_PASS=<redacted:secret-value>' cat var/audit.jsonl
	atf_check -o empty "$(atf_get_srcdir)/secret_grep.sh" var/audit.jsonl
}
run_shell_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case run_shell
}
