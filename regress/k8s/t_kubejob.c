/* SPDX-License-Identifier: ISC */
/*
 * runnerd's Job and Secret builders (kube/job.c, linked in
 * here since the k8s area has no daemon of its own): every control the
 * kubernetes backend promises is in the JSON, and the API double's Pod
 * Security admission admits the Job but refuses it with any of the
 * "restricted" controls taken out.
 */
#include <atf-c.h>
#include <openssl/evp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube.h"
#include "launcher.h"

#define REQ_ID	0x0123456789abcdefULL

static struct as_config conf;

static void
setup(void)
{
	config_defaults(&conf);
	conf.runnerd.timeout = 42;
	conf.runnerd.memory = 256L * 1024 * 1024;
	conf.runnerd.cpu_percent = 50;
	strlcpy(conf.kubernetes.runtime_class, "kata",
	    sizeof(conf.kubernetes.runtime_class));
	strlcpy(conf.kubernetes.image, "runner:test",
	    sizeof(conf.kubernetes.image));
	conf.kubernetes.ttl_after_finished = 77;
}

/* The value at a dotted path; numbers index arrays. */
static json_t *
at(json_t *j, const char *path)
{
	char buf[256], *p, *part;

	strlcpy(buf, path, sizeof(buf));
	for (p = buf; j != NULL && (part = strsep(&p, ".")) != NULL; )
		j = json_is_array(j) ? json_array_get(j, strtoul(part, NULL,
		    10)) : json_object_get(j, part);
	return j;
}

static json_t *
build_job(int cred, int claim)
{
	json_t *argv, *job;

	setup();
	strlcpy(conf.kubernetes.pvc, "terraform", sizeof(conf.kubernetes.pvc));
	argv = json_pack("[s, s, s]", "/bin/sh", "-c", "echo hi");
	job = kube_job(&conf, REQ_ID, argv, NULL, (cred ? KUBE_JOB_CRED : 0) |
	    (claim ? KUBE_JOB_CLAIM : 0));
	json_decref(argv);
	ATF_REQUIRE(job != NULL);
	return job;
}

static json_t *
build(int cred)
{
	return build_job(cred, 0);
}

#define POD	"spec.template.spec."
#define CTR	POD "containers.0."

static void
expect_str(json_t *j, const char *path, const char *want)
{
	const char *v = json_string_value(at(j, path));

	ATF_CHECK_MSG(v != NULL && strcmp(v, want) == 0, "%s: %s, want %s",
	    path, v ? v : "(missing)", want);
}

static void
expect_int(json_t *j, const char *path, json_int_t want)
{
	json_t *v = at(j, path);

	ATF_CHECK_MSG(json_is_integer(v) && json_integer_value(v) == want,
	    "%s: want %lld", path, (long long)want);
}

static void
expect_bool(json_t *j, const char *path, int want)
{
	json_t *v = at(j, path);

	ATF_CHECK_MSG(json_is_boolean(v) && json_is_true(v) == want,
	    "%s: want %s", path, want ? "true" : "false");
}

ATF_TC_WITHOUT_HEAD(controls);
ATF_TC_BODY(controls, tc)
{
	json_t *job = build(1);

	expect_str(job, "metadata.name", "as-0123456789abcdef");
	expect_str(job, "metadata.namespace", "agent-sandbox");
	expect_str(job, "metadata.labels.agent-sandbox/request-id",
	    "req-0123456789abcdef");
	expect_str(job, "spec.template.metadata.labels.agent-sandbox/"
	    "request-id", "req-0123456789abcdef");
	expect_int(job, "spec.backoffLimit", 0);
	expect_int(job, "spec.activeDeadlineSeconds", 42);
	expect_int(job, "spec.ttlSecondsAfterFinished", 77);
	expect_str(job, POD "runtimeClassName", "kata");
	expect_str(job, POD "restartPolicy", "Never");
	expect_bool(job, POD "automountServiceAccountToken", 0);
	expect_bool(job, POD "securityContext.runAsNonRoot", 1);
	expect_int(job, POD "securityContext.runAsUser", 65534);
	expect_int(job, POD "securityContext.runAsGroup", 65534);
	expect_int(job, POD "securityContext.fsGroup", 65534);
	expect_str(job, POD "securityContext.seccompProfile.type",
	    "RuntimeDefault");
	expect_str(job, CTR "image", "runner:test");
	/*
	 * A shell that writes the end line after the command, under the
	 * gvisor backend's per-process limits.
	 */
	expect_str(job, CTR "command.0", "/bin/sh");
	expect_str(job, CTR "command.1", "-c");
	expect_str(job, CTR "command.3", "sh");
	expect_str(job, CTR "command.4", KUBE_END_MARK);
	expect_str(job, CTR "command.5", "/usr/bin/prlimit");
	expect_str(job, CTR "command.6", "--nofile=1024");
	expect_str(job, CTR "command.7", "--nproc=64");
	expect_str(job, CTR "command.8", "--core=0");
	expect_str(job, CTR "command.9", "--");
	expect_str(job, CTR "command.12", "echo hi");
	ATF_CHECK_EQ(json_array_size(at(job, CTR "command")), 13);
	expect_bool(job, CTR "securityContext.allowPrivilegeEscalation", 0);
	expect_bool(job, CTR "securityContext.readOnlyRootFilesystem", 1);
	expect_bool(job, CTR "securityContext.runAsNonRoot", 1);
	expect_int(job, CTR "securityContext.runAsUser", 65534);
	expect_str(job, CTR "securityContext.capabilities.drop.0", "ALL");
	ATF_CHECK_EQ(json_array_size(at(job, CTR
	    "securityContext.capabilities.drop")), 1);
	ATF_CHECK(at(job, CTR "securityContext.capabilities.add") == NULL);
	expect_str(job, CTR "securityContext.seccompProfile.type",
	    "RuntimeDefault");
	/* memory and gVisor's own 128 MiB. */
	expect_str(job, CTR "resources.limits.memory", "402653184");
	expect_str(job, CTR "resources.limits.cpu", "500m");
	/* The credential read-only at /run/secrets, /tmp and /work scratch. */
	expect_str(job, CTR "volumeMounts.2.mountPath", "/run/secrets");
	expect_bool(job, CTR "volumeMounts.2.readOnly", 1);
	expect_str(job, POD "volumes.2.secret.secretName",
	    "as-0123456789abcdef");
	expect_str(job, CTR "volumeMounts.0.mountPath", "/tmp");
	expect_str(job, CTR "volumeMounts.1.mountPath", "/work");
	/* Sized as under runsc: tmp_size (64M) and work_max (1G). */
	expect_str(job, POD "volumes.0.emptyDir.sizeLimit", "67108864");
	expect_str(job, POD "volumes.1.emptyDir.sizeLimit", "1073741824");
	expect_str(job, CTR "resources.limits.ephemeral-storage",
	    "1140850688");
	ATF_CHECK(at(job, POD "hostNetwork") == NULL);
	json_decref(job);
}

ATF_TC_WITHOUT_HEAD(no_credential);
ATF_TC_BODY(no_credential, tc)
{
	json_t *job = build(0);

	/* /tmp, /work and the empty HOME. */
	ATF_CHECK_EQ(json_array_size(at(job, POD "volumes")), 3);
	ATF_CHECK_EQ(json_array_size(at(job, CTR "volumeMounts")), 3);
	json_decref(job);
}

/* The agent's code gets the address-space cap too, as on gvisor. */
ATF_TC_WITHOUT_HEAD(agent_code);
ATF_TC_BODY(agent_code, tc)
{
	json_t *argv, *job;

	setup();
	argv = json_pack("[s]", "/bin/true");
	job = kube_job(&conf, REQ_ID, argv, NULL, KUBE_JOB_AGENT_CODE);
	/* Below the pod's limit: memory (256M), not address_space (2G). */
	expect_str(job, CTR "command.9", "--as=268435456");
	expect_str(job, CTR "command.10", "--");
	expect_str(job, CTR "command.11", "/bin/true");
	json_decref(job);
	json_decref(argv);
}

/* The policy's egress decides the label; anything but the API server fails. */
ATF_TC_WITHOUT_HEAD(egress);
ATF_TC_BODY(egress, tc)
{
	json_t *egress, *argv, *job;
	char why[256] = "";

	setup();
	ATF_CHECK_EQ(kube_egress(&conf, NULL, why, sizeof(why)), 0);
	egress = json_array();
	ATF_CHECK_EQ(kube_egress(&conf, egress, why, sizeof(why)), 0);
	json_array_append_new(egress, json_string("kubernetes.default.svc:443"));
	ATF_CHECK_EQ(kube_egress(&conf, egress, why, sizeof(why)),
	    KUBE_JOB_APISERVER);
	json_array_append_new(egress, json_string("example.com:443"));
	ATF_CHECK_EQ(kube_egress(&conf, egress, why, sizeof(why)), -1);
	ATF_CHECK_MSG(strstr(why, "egress to example.com:443") != NULL, "%s",
	    why);
	json_decref(egress);

	argv = json_pack("[s]", "/bin/true");
	job = kube_job(&conf, REQ_ID, argv, NULL, KUBE_JOB_APISERVER);
	expect_str(job, "spec.template.metadata.labels.agent-sandbox/egress",
	    "apiserver");
	json_decref(job);
	job = kube_job(&conf, REQ_ID, argv, NULL, 0);
	ATF_CHECK(at(job, "spec.template.metadata.labels.agent-sandbox/"
	    "egress") == NULL);
	ATF_CHECK(at(job, "metadata.labels.agent-sandbox/egress") == NULL);
	json_decref(job);
	json_decref(argv);
}

/*
 * The container's environment is sandbox_env's, in full and only it;
 * HOME is an emptyDir of the pod's, mounted read-only.
 */
ATF_TC_WITHOUT_HEAD(environment);
ATF_TC_BODY(environment, tc)
{
	json_t *job = build(1), *env, *e;
	size_t i, n;

	env = at(job, CTR "env");
	for (n = 0; sandbox_env[n].name != NULL; n++)
		;
	ATF_REQUIRE_EQ(json_array_size(env), n);
	json_array_foreach(env, i, e) {
		ATF_CHECK_STREQ(json_string_value(json_object_get(e, "name")),
		    sandbox_env[i].name);
		ATF_CHECK_STREQ(json_string_value(json_object_get(e,
		    "value")), sandbox_env[i].value);
	}
	ATF_CHECK_STREQ(sandbox_env[2].name, "HOME");
	ATF_CHECK_STREQ(sandbox_env[2].value, "/run/home");
	expect_str(job, CTR "volumeMounts.3.name", "home");
	expect_str(job, CTR "volumeMounts.3.mountPath", "/run/home");
	expect_bool(job, CTR "volumeMounts.3.readOnly", 1);
	expect_str(job, POD "volumes.3.name", "home");
	ATF_CHECK(json_is_object(at(job, POD "volumes.3.emptyDir")));
	json_decref(job);
}

ATF_TC_WITHOUT_HEAD(claim);
ATF_TC_BODY(claim, tc)
{
	json_t *job = build_job(0, 1);

	/* /work is the call's own directory on the claim, nothing more. */
	expect_str(job, POD "volumes.1.name", "work");
	expect_str(job, POD "volumes.1.persistentVolumeClaim.claimName",
	    "terraform");
	ATF_CHECK(at(job, POD "volumes.1.emptyDir") == NULL);
	expect_str(job, CTR "volumeMounts.1.name", "work");
	expect_str(job, CTR "volumeMounts.1.mountPath", "/work");
	expect_str(job, CTR "volumeMounts.1.subPath",
	    "calls/as-0123456789abcdef/work");
	ATF_CHECK(json_is_object(at(job, POD "volumes.0.emptyDir")));
	ATF_CHECK(at(job, CTR "volumeMounts.0.subPath") == NULL);
	/* A plan is mounted for an apply only. */
	ATF_CHECK(at(job, CTR "volumeMounts.3.mountPath") == NULL ||
	    strcmp(json_string_value(at(job, CTR "volumeMounts.3.mountPath")),
	    PLAN_MOUNT) != 0);
	json_decref(job);
}

ATF_TC_WITHOUT_HEAD(claim_plan);
ATF_TC_BODY(claim_plan, tc)
{
	json_t *argv, *job;

	setup();
	strlcpy(conf.kubernetes.pvc, "terraform", sizeof(conf.kubernetes.pvc));
	argv = json_pack("[s]", "/bin/true");
	job = kube_job(&conf, REQ_ID, argv, NULL,
	    KUBE_JOB_CLAIM | KUBE_JOB_PLAN);
	json_decref(argv);
	ATF_REQUIRE(job != NULL);
	/* The approved plan: root's plan/ beside work/, read-only. */
	expect_str(job, CTR "volumeMounts.2.name", "work");
	expect_str(job, CTR "volumeMounts.2.mountPath", PLAN_MOUNT);
	expect_str(job, CTR "volumeMounts.2.subPath",
	    "calls/as-0123456789abcdef/plan");
	expect_bool(job, CTR "volumeMounts.2.readOnly", 1);
	json_decref(job);
}

ATF_TC_WITHOUT_HEAD(secret);
ATF_TC_BODY(secret, tc)
{
	const char cred[] = "{\"token\":\"t0k3n\"}";
	unsigned char out[64];
	json_t *s;
	int n;

	setup();
	s = kube_secret(&conf, REQ_ID, "uid-1", cred, strlen(cred));
	ATF_REQUIRE(s != NULL);
	expect_str(s, "metadata.name", "as-0123456789abcdef");
	expect_str(s, "metadata.labels.agent-sandbox/request-id",
	    "req-0123456789abcdef");
	expect_str(s, "metadata.ownerReferences.0.kind", "Job");
	expect_str(s, "metadata.ownerReferences.0.uid", "uid-1");
	expect_bool(s, "immutable", 1);
	n = EVP_DecodeBlock(out, (const unsigned char *)json_string_value(
	    at(s, "data.credential")), (int)strlen(json_string_value(at(s,
	    "data.credential"))));
	ATF_REQUIRE(n >= (int)strlen(cred));
	ATF_CHECK(memcmp(out, cred, strlen(cred)) == 0);
	json_decref(s);
}

/* Removes a control wherever the builder set it: pod and container. */
static void
drop(json_t *job, const char *parent_pod, const char *parent_ctr,
    const char *key)
{
	if (parent_pod != NULL)
		json_object_del(at(job, parent_pod), key);
	if (parent_ctr != NULL)
		json_object_del(at(job, parent_ctr), key);
}

/* Each under its own name, so that none collides with another. */
static void
write_job(json_t *job, const char *file)
{
	char name[64];

	strlcpy(name, file, sizeof(name));
	name[strcspn(name, ".")] = '\0';
	json_object_set_new(at(job, "metadata"), "name", json_string(name));
	ATF_REQUIRE(json_dump_file(job, file, JSON_COMPACT) == 0);
	json_decref(job);
}

ATF_TC(admission);
ATF_TC_HEAD(admission, tc)
{
	atf_tc_set_md_var(tc, "descr", "the double's Pod Security admission "
	    "takes runnerd's Job, with or without the claim, warns that the "
	    "pods of one missing any restricted control would be refused, "
	    "and validation refuses a subPath out of its directory");
	atf_tc_set_md_var(tc, "timeout", "120");
	atf_tc_set_md_var(tc, "require.progs", "openssl python3");
}
ATF_TC_BODY(admission, tc)
{
	static const char *const want[] = {
		"full.json 201", "no-run-as-non-root.json 201 would-violate",
		"no-ape.json 201 would-violate",
		"no-drop-all.json 201 would-violate",
		"no-seccomp.json 201 would-violate", "claim.json 201",
		"claim-escape.json 422", NULL
	};
	char cmd[2048], line[256];
	const char *src;
	json_t *j;
	FILE *f;
	size_t i;

	src = atf_tc_get_config_var(tc, "srcdir");
	write_job(build(1), "full.json");
	j = build(1);
	drop(j, POD "securityContext", CTR "securityContext", "runAsNonRoot");
	write_job(j, "no-run-as-non-root.json");
	j = build(1);
	drop(j, NULL, CTR "securityContext", "allowPrivilegeEscalation");
	write_job(j, "no-ape.json");
	j = build(1);
	drop(j, NULL, CTR "securityContext.capabilities", "drop");
	write_job(j, "no-drop-all.json");
	j = build(1);
	drop(j, POD "securityContext", CTR "securityContext",
	    "seccompProfile");
	write_job(j, "no-seccomp.json");
	write_job(build_job(1, 1), "claim.json");
	j = build_job(1, 1);
	json_object_set_new(at(j, CTR "volumeMounts.1"), "subPath",
	    json_string("calls/../terraform"));
	write_job(j, "claim-escape.json");
	snprintf(cmd, sizeof(cmd), "sh %s/admit.sh full.json "
	    "no-run-as-non-root.json no-ape.json no-drop-all.json "
	    "no-seccomp.json claim.json claim-escape.json > codes "
	    "2>admit.err", src);
	ATF_REQUIRE_EQ_MSG(system(cmd), 0, "admit.sh failed");
	ATF_REQUIRE((f = fopen("codes", "r")) != NULL);
	for (i = 0; want[i] != NULL; i++) {
		ATF_REQUIRE(fgets(line, sizeof(line), f) != NULL);
		line[strcspn(line, "\n")] = '\0';
		ATF_CHECK_STREQ(line, want[i]);
	}
	fclose(f);
}

/*
 * With the mirror claim, a terraform Job mounts each allowed provider
 * that the mirror holds, read-only by subPath, from a read-only volume;
 * an allowed provider the mirror lacks, and every other Job, none.
 */
ATF_TC_WITHOUT_HEAD(provider_mirror);
ATF_TC_BODY(provider_mirror, tc)
{
	json_t *argv, *allowed, *job, *m, *v;
	int mirror_mounts = 0;
	size_t i;

	setup();
	ATF_REQUIRE(getcwd(conf.runnerd.terraform_mirror,
	    sizeof(conf.runnerd.terraform_mirror)) != NULL);
	ATF_REQUIRE(plugin_dir_make(conf.runnerd.terraform_mirror,
	    "registry.terraform.io/hashicorp/null") == 0);
	ATF_REQUIRE(plugin_dir_make(conf.runnerd.terraform_mirror,
	    "registry.terraform.io/hashicorp/random") == 0);
	strlcpy(conf.kubernetes.pvc, "terraform", sizeof(conf.kubernetes.pvc));
	strlcpy(conf.kubernetes.provider_mirror_pvc, "provider-mirror",
	    sizeof(conf.kubernetes.provider_mirror_pvc));
	argv = json_pack("[s]", "/bin/true");
	allowed = json_pack("[s, s]", "registry.terraform.io/hashicorp/random",
	    "registry.terraform.io/hashicorp/time");
	job = kube_job(&conf, REQ_ID, argv, allowed, KUBE_JOB_CLAIM);
	ATF_REQUIRE(job != NULL);
	json_array_foreach(at(job, CTR "volumeMounts"), i, m) {
		if (strcmp(json_string_value(json_object_get(m, "name")),
		    "mirror") != 0)
			continue;
		mirror_mounts++;
		ATF_CHECK_STREQ(json_string_value(json_object_get(m,
		    "mountPath")), PROVIDER_MOUNT
		    "/registry.terraform.io/hashicorp/random");
		ATF_CHECK_STREQ(json_string_value(json_object_get(m,
		    "subPath")), "registry.terraform.io/hashicorp/random");
		ATF_CHECK(json_is_true(json_object_get(m, "readOnly")));
	}
	ATF_CHECK_EQ(mirror_mounts, 1);
	json_array_foreach(at(job, POD "volumes"), i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")),
		    "mirror") == 0) {
			expect_str(v, "persistentVolumeClaim.claimName",
			    "provider-mirror");
			ATF_CHECK(json_is_true(at(v,
			    "persistentVolumeClaim.readOnly")));
			mirror_mounts++;
		}
	ATF_CHECK_EQ(mirror_mounts, 2);
	json_decref(job);

	/* A Job off the claim (not terraform's) gets no mirror at all. */
	job = kube_job(&conf, REQ_ID, argv, allowed, 0);
	json_array_foreach(at(job, POD "volumes"), i, v)
		ATF_CHECK(strcmp(json_string_value(json_object_get(v,
		    "name")), "mirror") != 0);
	json_decref(job);
	json_decref(allowed);
	json_decref(argv);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, controls);
	ATF_TP_ADD_TC(tp, no_credential);
	ATF_TP_ADD_TC(tp, egress);
	ATF_TP_ADD_TC(tp, agent_code);
	ATF_TP_ADD_TC(tp, environment);
	ATF_TP_ADD_TC(tp, claim);
	ATF_TP_ADD_TC(tp, claim_plan);
	ATF_TP_ADD_TC(tp, provider_mirror);
	ATF_TP_ADD_TC(tp, secret);
	ATF_TP_ADD_TC(tp, admission);
	return atf_no_error();
}
