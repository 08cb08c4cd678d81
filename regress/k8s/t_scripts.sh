#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Every script is shellcheck-clean, and every manifest of cluster/ parses
# as YAML once rendered the way scripts/k8s-up renders it (k8s-lib.sh
# render); for scripts/k8s-*, which cannot run here (no container engine,
# no network), that is what can be checked.

atf_test_case shellcheck_clean
shellcheck_clean_head()
{
	atf_set "descr" "shellcheck is clean on the shell scripts of scripts/" \
	    "and images/, and the Python ones compile"
}
shellcheck_clean_body()
{
	command -v shellcheck >/dev/null || atf_skip "shellcheck not installed"
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
	python3 -c 'import yaml' 2>/dev/null || atf_skip "python3-yaml not installed"
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

atf_init_test_cases()
{
	atf_add_test_case shellcheck_clean
	atf_add_test_case templates_render
	atf_add_test_case render_refuses_missing_value
}
