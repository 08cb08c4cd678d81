#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Every script is shellcheck-clean, and every manifest of cluster/ parses
# as YAML once rendered the way scripts/k8s-up renders it (k8s-lib.sh
# render); for scripts/k8s-*, which cannot run here (no container engine,
# no network), that is what can be checked, and run_job (k8s-lib.sh,
# the Jobs of k8s-verify and k8s-demo) against the API double.

. "$(atf_get_srcdir)/k8s.subr"

atf_test_case shellcheck_clean
shellcheck_clean_head()
{
	atf_set "descr" "shellcheck is clean on the shell scripts of scripts/" \
	    "and images/, and the Python ones compile"
}
shellcheck_clean_body()
{
	command -v shellcheck >/dev/null || atf_fail "shellcheck is not installed (make deps installs it)"
	cd "$(atf_config_get srcdir)" || atf_fail "no source tree"
	sh=$({ grep -l '^#!.*/sh' scripts/* images/*/*; ls scripts/*.sh; } |
	    sort -u | tr '\n' ' ')
	py=$(grep -l '^#!.*python3' scripts/* images/*/*)
	if [ -z "$sh" ] || [ -z "$py" ]; then
		atf_fail "no scripts found"
	fi
	atf_check -x "shellcheck -x $sh"
	for f in $py; do
		atf_check -x "python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' $f"
	done
}

# render_all: every file of cluster/, templates (*.in) and plain
# manifests alike, through render with the values k8s-up gives, into
# rendered/ under the same relative names.
render_all()
{
	top=$(atf_config_get srcdir)
	(
		# shellcheck source=/dev/null
		. "$top/scripts/k8s-lib.sh"
		cd "$top" || exit 1
		find cluster -type f | while read -r f; do
			mkdir -p "$OLDPWD/rendered/$(dirname "$f")"
			render "$f" APISERVER_IPBLOCKS="$(ipblocks 10.0.0.1 \
			    172.18.0.3)" APISERVER_PORT=6443 \
			    CLAIM_DIR=/var/k8s/claim \
			    > "$OLDPWD/rendered/${f%.in}" || exit 1
		done
	)
}

atf_test_case templates_render
templates_render_head()
{
	atf_set "descr" "every cluster/ file renders to YAML documents, each " \
	    "a mapping with apiVersion/kind; placeholders named in comments stay"
}
templates_render_body()
{
	python3 -c 'import yaml' 2>/dev/null || atf_fail "python3-yaml is not installed (make deps installs it)"
	ls "$(atf_config_get srcdir)"/cluster/*.in >/dev/null ||
	    atf_fail "no templates in cluster/"
	render_all || atf_fail "cluster/ does not render"
	atf_check -o inline:"ok\n" python3 - rendered <<'PY'
import os, sys, yaml
for d, _, names in os.walk(sys.argv[1]):
    for n in names:
        p = os.path.join(d, n)
        with open(p) as f:
            docs = [x for x in yaml.safe_load_all(f) if x is not None]
        assert docs, p
        for doc in docs:
            assert isinstance(doc, dict), (p, doc)
            if not n.endswith(".json"):     # a Vault role, not a manifest
                assert "apiVersion" in doc and "kind" in doc, (p, doc)
print("ok")
PY
	atf_check -o inline:'[{"ipBlock": {"cidr": "10.0.0.1/32"}}, {"ipBlock": {"cidr": "172.18.0.3/32"}}] [{"protocol": "TCP", "port": 6443}]\n' \
	    python3 -c 'import json, sys, yaml
e = yaml.safe_load(open(sys.argv[1]))["spec"]["egress"][0]
print(json.dumps(e["to"]), json.dumps(e["ports"]))' \
	    rendered/cluster/networkpolicy-apiserver.yaml
	atf_check -o match:'^# @APISERVER_IPBLOCKS@ and @APISERVER_PORT@; re-run' \
	    cat rendered/cluster/networkpolicy-apiserver.yaml
	atf_check -o inline:"/var/k8s/claim\n/var/k8s/claim\n" \
	    sed -n 's/.*hostPath: "\(.*\)"/\1/p' rendered/cluster/kind-config.yaml
}

atf_test_case render_refuses_missing_value
render_refuses_missing_value_head()
{
	atf_set "descr" "a placeholder with no value stops render with an error"
}
render_refuses_missing_value_body()
{
	top=$(atf_config_get srcdir)
	# shellcheck disable=SC2016 # expanded by the inner sh
	atf_check -s exit:1 -o ignore \
	    -e match:'networkpolicy-apiserver.yaml.in: no value for @APISERVER_IPBLOCKS@' \
	    sh -c '. "$1/scripts/k8s-lib.sh" && render "$1/cluster/networkpolicy-apiserver.yaml.in" APISERVER_PORT=1' \
	    sh "$top"
}

# rj NS FILE: run_job in a shell of k8s-lib.sh, on the double, whose
# kubectl creates with --validate=false (the double serves no OpenAPI).
rj()
{
	if [ ! -x bin/kubectl ]; then
		mkdir -p bin
		cat > bin/kubectl <<EOF
#! /bin/sh
[ "\$1" != create ] || { shift; set -- create --validate=false "\$@"; }
exec $(command -v kubectl) "\$@"
EOF
		chmod +x bin/kubectl
	fi
	# shellcheck disable=SC2016 # expanded by the inner sh
	PATH=$(pwd)/bin:$PATH sh -c '. "$1/scripts/k8s-lib.sh" &&
	    KUBECONFIG=$2 && run_job "$3" "$4"' \
	    sh "$(atf_config_get srcdir)" "$KUBECONFIG" "$@"
}

atf_test_case run_job cleanup
run_job_head()
{
	atf_set "descr" "run_job returns the Job outcome and its log; a kubectl that fails stops it with its message, not a Job read as failed"
	atf_set "timeout" "120"
}
run_job_body()
{
	k8s_need_kubectl
	k8s_start --runner "$K8S_SRC/pod_runner.py"
	k8s_namespaces
	# shellcheck disable=SC2016
	sh -c '. "$1/scripts/k8s-lib.sh" && restricted_job "$2" runner "" \
	    "\"probe\": \"x\"" sh -c "$3"' sh "$(atf_config_get srcdir)" \
	    done "echo finished" > done.json
	rj agent-sandbox done.json > out || atf_fail "the Job failed"
	atf_check -o inline:'finished\n' cat out
	sed 's/"name": "done"/"name": "fails"/; s/echo finished/exit 3/' \
	    done.json > fails.json
	rj agent-sandbox fails.json > out && atf_fail "a failed Job passed"
	atf_check -o empty cat out
	# No such namespace: kubectl's NotFound, at once, not 150 s of polls.
	start=$(date +%s)
	rj nosuch done.json > out 2> err && atf_fail "run_job did not fail"
	[ $(($(date +%s) - start)) -lt 20 ] || atf_fail "run_job polled on"
	atf_check -o match:'kubectl create -n nosuch -f .*not found' cat err
	atf_check -o empty cat out
}
run_job_cleanup()
{
	k8s_stop
}

atf_init_test_cases()
{
	atf_add_test_case shellcheck_clean
	atf_add_test_case templates_render
	atf_add_test_case render_refuses_missing_value
	atf_add_test_case run_job
}
