#!/bin/sh
# Prints every JWT-, Vault-, AWS- or PEM-shaped string in the files
# given (audit logs) and exits 1 if there is any; 0 when they are clean.
# Used by t_auditctl.sh and, over every test's log, after the full suite.
#   secret_grep.sh FILE...
jwt='eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{2,}\.'
vault='(?<![A-Za-z0-9_.-])(hv[sbr]\.[A-Za-z0-9_-]{20,}|[sbr]\.[A-Za-z0-9_-]{24,})'
awsid='(?<![A-Za-z0-9])A(KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])'
# 40 base64 characters standing alone, mixing upper, lower and digits.
awskey='(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])'
pem='PRIVATE KEY-----'
if grep -HnoP "$jwt|$vault|$awsid|$awskey|$pem" "$@"; then
	exit 1
fi
exit 0
