#!/bin/sh
# SPDX-License-Identifier: ISC
# admit.sh FILE...: starts the Kubernetes API double in the current
# directory, creates the namespace agent-sandbox enforcing Pod Security
# "restricted" (as cluster/namespaces.yaml does), POSTs each FILE (a Job)
# to it as the admin and prints "FILE CODE" per file, with
# " would-violate" when the answer warns that Pod Security would refuse
# the Job's pods, then stops the double.  For t_kubejob, which drives
# runnerd's own Job builder.
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/../brokerd/mkcerts.sh" "$(pwd)" || exit 1
openssl rand -hex 24 > admin.token
mkdir -p state
PYTHONDONTWRITEBYTECODE=1 python3 "$here/k8s_double.py" \
    --cert server.pem --key server.key --state state \
    --admin-token-file admin.token >double.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
i=0
while [ ! -s state/port ]; do
	i=$((i + 1))
	if [ $i -gt 200 ] || ! kill -0 $pid 2>/dev/null; then
		cat double.log >&2
		exit 1
	fi
	sleep 0.05
done
req() {
	python3 "$here/k8s_req.py" -t "$(cat admin.token)" "$@"
}
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"agent-sandbox","labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}' \
    > ns.json
[ "$(req POST /api/v1/namespaces ns.json | head -n 1)" = 201 ] || exit 1
for f in "$@"; do
	code=$(req POST /apis/batch/v1/namespaces/agent-sandbox/jobs "$f" \
	    2>warning | head -n 1)
	if grep -q 'would violate PodSecurity' warning; then
		code="$code would-violate"
	fi
	echo "$f $code"
done
