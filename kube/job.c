/* SPDX-License-Identifier: ISC */
/*
 * The Job and the Secret of one call, as JSON for the API.  Every
 * control of Pod Security "restricted" is set explicitly, at pod and
 * container level, so the Job runs in a namespace that enforces it and
 * the request says what it means even where a default would do.
 */
#include <openssl/evp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "kube.h"
#include "launcher.h"

void
kube_name(uint64_t id, char name[KUBE_NAME_LEN])
{
	snprintf(name, KUBE_NAME_LEN, "as-%016llx", (unsigned long long)id);
}

/*
 * What ties an object to its call, and all of them to this runnerd;
 * flags KUBE_JOB_APISERVER: the label cluster/networkpolicy-apiserver
 * .yaml.in selects, the one way out of the namespace's default-deny.
 */
static json_t *
labels(uint64_t id, int flags)
{
	char rid[REQID_STR_LEN];
	json_t *l;

	reqid_format(id, rid);
	l = json_pack("{s:s, s:s}", "app.kubernetes.io/managed-by",
	    KUBE_MANAGED_BY, KUBE_REQID_LABEL, rid);
	if (flags & KUBE_JOB_APISERVER)
		json_object_set_new(l, KUBE_EGRESS_LABEL,
		    json_string("apiserver"));
	return l;
}

/*
 * The Job flags the policy's egress list asks for: KUBE_JOB_APISERVER
 * when it names the API server as the pods reach it (kubernetes.
 * apiserver), 0 when it is empty or absent; -1 with why for any other
 * entry, which cluster/'s NetworkPolicies do not open (they select
 * addresses, not host names), rather than a Job that cannot connect.
 */
int
kube_egress(const struct as_config *conf, json_t *egress, char *why,
    size_t whylen)
{
	json_t *e;
	size_t i;
	int flags = 0;

	json_array_foreach(egress, i, e) {
		if (json_is_string(e) && strcmp(json_string_value(e),
		    conf->kubernetes.apiserver) == 0) {
			flags |= KUBE_JOB_APISERVER;
			continue;
		}
		snprintf(why, whylen, "egress to %s: on the kubernetes backend "
		    "a Job may reach only the API server (kubernetes."
		    "apiserver %s, cluster/networkpolicy-apiserver.yaml.in)",
		    json_is_string(e) ? json_string_value(e) : "(not a string)",
		    conf->kubernetes.apiserver);
		return -1;
	}
	return flags;
}

static json_t *
quantity(long v, const char *unit)
{
	char s[32];

	snprintf(s, sizeof(s), "%ld%s", v, unit);
	return json_string(s);
}

/*
 * argv under the gvisor backend's per-process limits (launcher/
 * bundle.c): prlimit(1) sets them and execs it, so that every process
 * of the call inherits them.  gVisor applies RLIMIT_NPROC to the tasks
 * of the sandbox's user in the sandbox alone (a fork past it fails with
 * EAGAIN), as Kata's own kernel does; under runc it would count every
 * process of uid 65534 on the node.  The agent's code gets at most
 * memory of address space, below the pod's limit (container()), so
 * that an allocation past it fails in its process rather than the
 * kernel ending gVisor's whole sandbox.
 *
 * Round it, a shell joins its stderr to stdout in the child that
 * execs it (the pod's log then keeps their order; the shell's own
 * stderr goes nowhere, or dash would add "Terminated" to the log where
 * gvisor shows nothing) and, once it has returned, writes its exit
 * status after KUBE_END_MARK on a line of its own, the end kube/run.c
 * takes from the log rather than wait for the kubelet to notice; that
 * status is the container's too.
 */
static json_t *
limited(const struct as_config *conf, json_t *argv, int flags)
{
	static const char end_line[] = "m=$1; shift; exec 2>/dev/null; "
	    "/bin/sh -c 'exec 2>&1; exec \"$@\"' sh \"$@\"; s=$?; "
	    "printf '\\n%s%d\\n' \"$m\" $s; exit $s";
	const struct runnerd_conf *r = &conf->runnerd;
	char nproc[32], as[40];
	json_t *cmd;

	snprintf(nproc, sizeof(nproc), "--nproc=%ld", r->pids);
	snprintf(as, sizeof(as), "--as=%ld", r->address_space < r->memory ?
	    r->address_space : r->memory);
	cmd = json_pack("[s, s, s, s, s, s, s, s]", "/bin/sh", "-c", end_line,
	    "sh", KUBE_END_MARK, KUBE_PRLIMIT, "--nofile=1024", nproc);
	json_array_append_new(cmd, json_string("--core=0"));
	if (flags & KUBE_JOB_AGENT_CODE)
		json_array_append_new(cmd, json_string(as));
	json_array_append_new(cmd, json_string("--"));
	json_array_extend(cmd, argv);
	return cmd;
}

/* One read-only mount of the mirror claim: the provider's directory. */
static int
provider_mount(const char *name, const char *src, void *mounts)
{
	char dst[PATH_MAX];

	(void)src;
	if (pathf(dst, sizeof(dst), PROVIDER_MOUNT "/%s", name) == -1)
		return -1;
	return json_array_append_new(mounts, json_pack("{s:s, s:s, s:s, s:b}",
	    "name", "mirror", "mountPath", dst, "subPath", name,
	    "readOnly", 1));
}

/*
 * Terraform's plugin directory, as on gvisor (launcher/bundle.c): each
 * allowed provider that the mirror holds, read-only, and nothing else.
 * The runtime makes the directories above the mount points in the
 * image's root, which is read-only.  Only what runnerd sees in the
 * mirror (runnerd.terraform_mirror) is mounted: a missing subPath on a
 * read-only volume would keep the container from starting, where
 * terraform init would have named the provider.
 */
static int
mounts_add_providers(const struct as_config *conf, const json_t *providers,
    json_t *mounts)
{
	if (conf->kubernetes.provider_mirror_pvc[0] == '\0')
		return 0;
	return providers_each(conf, providers, provider_mount, mounts);
}

static json_t *
container(const struct as_config *conf, uint64_t id, json_t *argv,
    const json_t *providers, int flags)
{
	const struct runnerd_conf *r = &conf->runnerd;
	char sub[64];
	json_t *c, *mounts, *env;
	size_t i;

	mounts = json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "tmp",
	    "mountPath", "/tmp", "name", "work", "mountPath", "/work");
	if ((flags & KUBE_JOB_CLAIM) &&
	    claim_call_path(NULL, id, "work", sub, sizeof(sub)) == 0)
		json_object_set_new(json_array_get(mounts, 1), "subPath",
		    json_string(sub));
	/* An apply's approved plan, root's, beside its work/ (claim.c). */
	if ((flags & KUBE_JOB_CLAIM) && (flags & KUBE_JOB_PLAN) &&
	    claim_call_path(NULL, id, PLAN_DIR, sub, sizeof(sub)) == 0)
		json_array_append_new(mounts, json_pack("{s:s, s:s, s:s, s:b}",
		    "name", "work", "mountPath", PLAN_MOUNT, "subPath", sub,
		    "readOnly", 1));
	if ((flags & KUBE_JOB_CLAIM) &&
	    mounts_add_providers(conf, providers, mounts) == -1) {
		json_decref(mounts);
		return NULL;
	}
	if (flags & KUBE_JOB_CRED)
		json_array_append_new(mounts, json_pack("{s:s, s:s, s:b}",
		    "name", "secrets", "mountPath", KUBE_SECRETS_DIR,
		    "readOnly", 1));
	/* HOME: the pod's own empty directory, read-only (sandbox_env.c). */
	json_array_append_new(mounts, json_pack("{s:s, s:s, s:b}", "name",
	    "home", "mountPath", HOME_MOUNT, "readOnly", 1));
	env = json_array();
	for (i = 0; sandbox_env[i].name != NULL; i++)
		json_array_append_new(env, json_pack("{s:s, s:s}", "name",
		    sandbox_env[i].name, "value", sandbox_env[i].value));
	c = json_pack("{s:s, s:s, s:o, s:s, s:o, s:o,"
	    " s:{s:b, s:b, s:b, s:i, s:i, s:{s:[s]}, s:{s:s}},"
	    " s:{s:{s:o, s:o, s:o}}}",
	    "name", KUBE_CONTAINER, "image", conf->kubernetes.image,
	    "command", limited(conf, argv, flags), "workingDir", "/work",
	    "env", env,
	    "volumeMounts", mounts,
	    "securityContext", "allowPrivilegeEscalation", 0,
	    "readOnlyRootFilesystem", 1, "runAsNonRoot", 1,
	    "runAsUser", SANDBOX_UID, "runAsGroup", SANDBOX_GID,
	    "capabilities", "drop", "ALL",
	    "seccompProfile", "type", "RuntimeDefault",
	    "resources", "limits", "memory", quantity(r->memory +
	    KUBE_MEMORY_RUNTIME, ""),
	    "cpu", quantity(r->cpu_percent * 10, "m"),
	    "ephemeral-storage", quantity(r->tmp_size + r->work_max, ""));
	return c;
}

/*
 * /work: an emptyDir, or with claim the call's own directory on
 * terraform's claim (kube/claim.c), so that the pod reaches no other.
 */
static json_t *
work_volume(const struct as_config *conf, int claim)
{
	if (!claim)
		return json_pack("{s:s, s:{s:o}}", "name", "work", "emptyDir",
		    "sizeLimit", quantity(conf->runnerd.work_max, ""));
	return json_pack("{s:s, s:{s:s}}", "name", "work",
	    "persistentVolumeClaim", "claimName", conf->kubernetes.pvc);
}

/*
 * The Job of call id running argv, with flags KUBE_JOB_*; with
 * KUBE_JOB_CLAIM, terraform's, the policy's allowed providers of the
 * mirror too.  NULL when it cannot be made.
 */
json_t *
kube_job(const struct as_config *conf, uint64_t id, json_t *argv,
    const json_t *providers, int flags)
{
	char name[KUBE_NAME_LEN];
	json_t *vols, *c;

	kube_name(id, name);
	if ((c = container(conf, id, argv, providers, flags)) == NULL)
		return NULL;
	vols = json_pack("[{s:s, s:{s:o}}, o]",
	    "name", "tmp", "emptyDir", "sizeLimit",
	    quantity(conf->runnerd.tmp_size, ""), work_volume(conf,
	    flags & KUBE_JOB_CLAIM));
	if (flags & KUBE_JOB_CRED)
		json_array_append_new(vols, json_pack("{s:s, s:{s:s, s:i}}",
		    "name", "secrets", "secret", "secretName", name,
		    "defaultMode", 0440));
	json_array_append_new(vols, json_pack("{s:s, s:{s:s}}", "name", "home",
	    "emptyDir", "sizeLimit", "4Ki"));
	/* readOnly here too: the kubelet mounts the whole volume read-only. */
	if ((flags & KUBE_JOB_CLAIM) &&
	    conf->kubernetes.provider_mirror_pvc[0] != '\0')
		json_array_append_new(vols, json_pack("{s:s, s:{s:s, s:b}}",
		    "name", "mirror", "persistentVolumeClaim", "claimName",
		    conf->kubernetes.provider_mirror_pvc, "readOnly", 1));
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:o},"
	    " s:{s:i, s:i, s:i, s:{s:{s:o}, s:{s:s, s:s, s:b, s:b,"
	    " s:{s:b, s:i, s:i, s:i, s:{s:s}}, s:[o], s:o}}}}",
	    "apiVersion", "batch/v1", "kind", "Job",
	    "metadata", "name", name, "namespace", conf->kubernetes.namespace,
	    "labels", labels(id, flags),
	    "spec", "backoffLimit", 0,
	    "activeDeadlineSeconds", (int)conf->runnerd.timeout,
	    "ttlSecondsAfterFinished", (int)conf->kubernetes.ttl_after_finished,
	    "template", "metadata", "labels", labels(id, flags),
	    "spec", "restartPolicy", "Never",
	    "runtimeClassName", conf->kubernetes.runtime_class,
	    "automountServiceAccountToken", 0, "enableServiceLinks", 0,
	    "securityContext", "runAsNonRoot", 1, "runAsUser", SANDBOX_UID,
	    "runAsGroup", SANDBOX_GID, "fsGroup", SANDBOX_GID,
	    "seccompProfile", "type", "RuntimeDefault",
	    "containers", c,
	    "volumes", vols);
}

/*
 * The credential as a Secret owned by the Job (jobuid), so that the
 * cluster's garbage collector removes it with the Job should runnerd
 * not get to it.
 */
json_t *
kube_secret(const struct as_config *conf, uint64_t id, const char *jobuid,
    const void *cred, size_t len)
{
	char name[KUBE_NAME_LEN], *b64;
	json_t *s;

	kube_name(id, name);
	if (len > 1024 * 1024 || (b64 = malloc(4 * ((len + 2) / 3) + 1)) ==
	    NULL)
		return NULL;
	EVP_EncodeBlock((unsigned char *)b64, cred, (int)len);
	s = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:o, s:[{s:s, s:s, s:s,"
	    " s:s, s:b}]}, s:b, s:{s:s}}",
	    "apiVersion", "v1", "kind", "Secret", "type", "Opaque",
	    "metadata", "name", name, "namespace", conf->kubernetes.namespace,
	    "labels", labels(id, 0), "ownerReferences", "apiVersion", "batch/v1",
	    "kind", "Job", "name", name, "uid", jobuid, "blockOwnerDeletion",
	    0, "immutable", 1, "data", "credential", b64);
	explicit_bzero(b64, strlen(b64));
	free(b64);
	return s;
}
