#!/bin/sh
# Prints every secret-shaped string in the files given (audit logs) and
# exits 1 if there is any; 0 when they are clean.  The shapes are those
# auditd's scrubber cuts (auditd/scrub.c), so a leak fails any test.
# Used by t_auditctl.sh and, over every test's log, after the full suite.
#   secret_grep.sh FILE...
b='(?<![A-Za-z0-9_.-])'
mixed='(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])(?=[A-Za-z0-9_-]*[0-9])'
jwt='eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{2,}\.'
vault="$b(hv[sbr]\\.[A-Za-z0-9_-]{20,}|[sbr]\\.[A-Za-z0-9_-]{24,})"
awsid='(?<![A-Za-z0-9])A(KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])'
# 40 base64 characters standing alone, mixing upper, lower and digits.
awskey='(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])'
pem='PRIVATE KEY-----|LS0tLS1CRUdJTi'
github="$b(gh[pousr]_[A-Za-z0-9_]{36,}|github_pat_[A-Za-z0-9_]{60,})"
vendor="$b(glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9_-]{20,}|[sr]k_(live|test)_[A-Za-z0-9_]{16,}|AIza[A-Za-z0-9_-]{35}|npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_]))"
llm="${b}sk-(ant-$mixed[A-Za-z0-9_-]{32,}|$mixed[A-Za-z0-9_-]{40,})"
# scheme://user:password@host, the password not already cut.
url='[A-Za-z][A-Za-z0-9+.-]*://[^:@/?#<"'"'"'\s]*:(?!<redacted)[^@/?#"'"'"'\s]+@'
# password=v, "token": "v", secret: v (JSON's quotes escaped or not).
keyed='(?i)(password|passwd|secret|token|api_?key|private_?key)\\?["'"'"']?\s*[=:]\s*\\?["'"'"']?(?!<redacted|null\b|true\b|false\b|[0-9]+\b)[A-Za-z0-9_+/-]{4,}'
if grep -HnoP "$jwt|$vault|$awsid|$awskey|$pem|$github|$vendor|$llm|$url|$keyed" "$@"; then
	exit 1
fi
exit 0
