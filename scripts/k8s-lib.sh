# SPDX-License-Identifier: ISC
# Sourced by scripts/k8s-*: names, paths and helpers for the kind cluster.
# shellcheck shell=sh
# The names below are used by the scripts that source this file.
# shellcheck disable=SC2034

CLUSTER=agent-sandbox
TOP=$(cd "$(dirname "$0")/.." && pwd)
STATE="$TOP/var/k8s"			# tokens, CAs, kubeconfigs (0700)
KUBECONFIG="$STATE/kind.kubeconfig"	# the cluster admin's
CLAIM_DIR="$STATE/claim"		# terraform's claim (kubernetes.pvc_path)
CLAIM_NODE_PATH=/var/lib/agent-sandbox/claim	# the same in each node
export KUBECONFIG
RUNNER_IMAGE=agent-sandbox/runner:0.1
AGNHOST=registry.k8s.io/e2e-test-images/agnhost:2.52
GVISOR_RELEASE=20250106.0
SESSION_IMAGE=agent-sandbox/session:0.1	# cluster/session-template.yaml's
# kubernetes-sigs/agent-sandbox: the controller of Sandboxes, claims and
# warm pools (tag v0.5.6, commit 211b7579cabed9460c1a692eb687084ff4c5879d),
# its all-in-one release manifest, pinned by its SHA-256.  The digest is
# the release asset's: take it from the release (sha256sum of the file
# downloaded over a trusted path) when moving the version; k8s-up
# applies nothing unverified.
AGENT_SANDBOX_VERSION=v0.5.6
AGENT_SANDBOX_URL="https://github.com/kubernetes-sigs/agent-sandbox/releases/download/$AGENT_SANDBOX_VERSION/sandbox-with-extensions.yaml"
AGENT_SANDBOX_SHA256=${AGENT_SANDBOX_SHA256:-}

say()
{
	printf '%s: %s\n' "$(basename "$0")" "$*" >&2
}

die()
{
	say "$*"
	exit 1
}

need()
{
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || die "needs $c in PATH"
	done
}

# render TEMPLATE NAME=VALUE...: TEMPLATE with each @NAME@ replaced by its
# VALUE.  A placeholder alone on its line is replaced by the whole value, a
# block of lines; comment lines are copied as they are, so that a comment
# may name a placeholder; a placeholder with no value is an error.
render()
{
	render_template=$1
	shift
	render_names=""
	for render_arg in "$@"; do
		render_names="$render_names ${render_arg%%=*}"
	done
	# shellcheck disable=SC2016 # $1 and $0 are awk's
	env "$@" awk -v names="$render_names" '
	BEGIN {
		n = split(names, k, " ")
		for (i = 1; i <= n; i++)
			val[k[i]] = ENVIRON[k[i]]
	}
	/^[ \t]*#/ { print; next }
	/^[ \t]*@[A-Z_]+@[ \t]*$/ {
		name = $1
		gsub("@", "", name)
		if (!(name in val)) {
			missing = name
			exit 1
		}
		v = val[name]
		sub(/\n$/, "", v)
		print v
		next
	}
	{
		line = $0
		done = ""
		while (match(line, /@[A-Z_]+@/)) {
			name = substr(line, RSTART + 1, RLENGTH - 2)
			if (!(name in val)) {
				missing = name
				exit 1
			}
			done = done substr(line, 1, RSTART - 1) val[name]
			line = substr(line, RSTART + RLENGTH)
		}
		print done line
	}
	END {
		if (missing != "") {
			printf "%s: no value for @%s@\n", FILENAME, missing \
			    > "/dev/stderr"
			exit 1
		}
	}' "$render_template"
}

# ipblocks IP...: the NetworkPolicy peers (one ipBlock /32 each) that
# cluster/networkpolicy-apiserver.yaml.in takes as @APISERVER_IPBLOCKS@.
ipblocks()
{
	for ip in "$@"; do
		printf '    - ipBlock: {cidr: %s/32}\n' "$ip"
	done
}

cluster_exists()
{
	kind get clusters 2>/dev/null | grep -qx "$CLUSTER"
}

# vault ARGS: the vault CLI inside the dev server's pod.
vault()
{
	kubectl exec -i -n vault deploy/vault -- vault "$@"
}

# json_field KEY...: a field of the JSON on stdin (python3: no jq needed).
json_field()
{
	python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1:]:
    v = v[k]
print(v)' "$@"
}

# restricted_job NAME IMAGE RUNTIMECLASS LABELS ARGS...: a Job (JSON)
# whose pod passes Pod Security "restricted", as runnerd builds them;
# RUNTIMECLASS may be empty, LABELS is JSON members ("k": "v", ...).
restricted_job()
{
	name=$1 image=$2 labels=$4
	rcfield=""
	[ -z "$3" ] || rcfield="\"runtimeClassName\": \"$3\","
	shift 4
	args=$(printf '"%s",' "$@")
	cat <<JOB
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "$name", "labels": {$labels}},
 "spec": {"backoffLimit": 0, "activeDeadlineSeconds": 120,
  "ttlSecondsAfterFinished": 600,
  "template": {"metadata": {"labels": {$labels}},
   "spec": {"restartPolicy": "Never", $rcfield
    "automountServiceAccountToken": false,
    "securityContext": {"runAsNonRoot": true, "runAsUser": 65534,
     "runAsGroup": 65534, "fsGroup": 65534,
     "seccompProfile": {"type": "RuntimeDefault"}},
    "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}],
    "containers": [{"name": "main", "image": "$image",
     "args": [${args%,}],
     "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
     "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}},
     "securityContext": {"allowPrivilegeEscalation": false,
      "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}}}]}}}}
JOB
}

# kc ARGS...: kubectl, whose failure ends the script (or, inside $(...),
# the subshell: follow it with || exit) with kubectl's own message.
kc()
{
	kc_err=$(mktemp) || die "mktemp failed"
	if kubectl "$@" 2>"$kc_err"; then
		rm -f "$kc_err"
		return 0
	fi
	say "kubectl $*: $(cat "$kc_err")"
	rm -f "$kc_err"
	exit 1
}

# run_job NS FILE: creates the Job, waits for it to finish; its exit
# status is the Job's (0 complete, 1 failed or not done in 150 s); the
# log goes to stdout.  A kubectl that fails ends the script: a Job that
# was never made must not read as a probe that could not connect.
# Call it outside $(...), so that it can.
run_job()
{
	name=$(json_field metadata name < "$2") || die "$2: no metadata.name"
	kc delete job "$name" -n "$1" --ignore-not-found --wait=true >/dev/null
	kc create -n "$1" -f "$2" >/dev/null
	i=0
	while :; do
		s=$(kc get job "$name" -n "$1" -o \
		    jsonpath='{.status.succeeded}/{.status.failed}') || exit 1
		case $s in
		1/*) rc=0; break ;;
		*/1) rc=1; break ;;
		esac
		i=$((i + 1))
		[ $i -le 150 ] || { rc=1; break; }
		sleep 1
	done
	kubectl logs -n "$1" "job/$name" 2>/dev/null || :
	kc delete job "$name" -n "$1" --cascade=background --wait=false \
	    >/dev/null
	return "$rc"
}
