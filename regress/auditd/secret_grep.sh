#!/bin/sh
# SPDX-License-Identifier: ISC
# Prints every secret-shaped string in the files given (audit logs) and
# exits 1 if there is any; 0 when they are clean.  The shapes are those
# auditd's scrubber cuts (common/scrub_shape.c), so a leak fails any test:
# a token with a prefix of its own wherever it stands (after a JSON
# escape such as \n, glued to a word), the others standing alone.
# Used by t_auditctl.sh and, over every test's log, after the full suite.
#   secret_grep.sh FILE...
b='(?<![A-Za-z0-9_.-])'
mixed='(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])(?=[A-Za-z0-9_-]*[0-9])'
jwt='eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{2,}\.'
vault="(hv[sbr]\\.[A-Za-z0-9_-]{20,}|$b[sbr]\\.[A-Za-z0-9_-]{24,})"
awsid='A(KIA|SIA)[A-Z0-9]{16}(?![A-Z0-9])'
# 40 base64 characters standing alone, mixing upper, lower and digits.
awskey='(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])'
pem='PRIVATE KEY-----|LS0tLS1CRUdJTi'
github="(gh[pousr]_[A-Za-z0-9_]{36,}|github_pat_[A-Za-z0-9_]{60,})"
vendor="(glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9_-]{20,}|[sr]k_(live|test)_[A-Za-z0-9_]{16,}|AIza[A-Za-z0-9_-]{35}|npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_]))"
llm="sk-ant-$mixed[A-Za-z0-9_-]{32,}|${b}sk-$mixed[A-Za-z0-9_-]{40,}"
# scheme://user:password@host, the password not already cut.
url='[A-Za-z][A-Za-z0-9+.-]*://[^:@/?#<"'"'"'\s]*:(?!<redacted)[^@/?#"'"'"'\s]+@'
# password=v, "token": "v", secret: v (JSON's quotes escaped or not).
keyed='(?i)(password|passwd|_pass|secret|token|api_?key|private_?key)\\?["'"'"']?\s*[=:]\s*\\?["'"'"']?(?!<redacted|null\b|true\b|false\b|[0-9]+\b)[A-Za-z0-9_+/-]{4,}'
if grep -HnoP "$jwt|$vault|$awsid|$awskey|$pem|$github|$vendor|$llm|$url|$keyed" "$@"; then
	exit 1
fi
exit 0
