/* SPDX-License-Identifier: ISC */
/*
 * brokerd live: the real daemon between a Vault double (HTTPS, a test CA
 * made with openssl) and an audit stand-in, driven over broker.sock the
 * way runnerd drives it.  The token values are recognisable so that the
 * leak test can look for them.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "sock.h"

#define VAULT_TOKEN	"hvs.AS-RECOGNISABLE-VAULT-TOKEN-7f3a9c"
#define SA_PREFIX	"AS-RECOGNISABLE-SA-TOKEN"
#define CALL_MS		20000

/* Paths and texts that do not fit fail the test, not silently shorten. */
#define FMT(buf, ...)	ATF_REQUIRE(snprintf(buf, sizeof(buf), __VA_ARGS__) < \
			    (int)sizeof(buf))

struct reply {
	uint32_t	 type;
	int		 code;		/* MSG_ERROR */
	char		 text[4096];
	int		 fd;
};

static char	 here[PATH_MAX];	/* this program's directory */
static char	 rundir[64];		/* sockets: short paths */
static pid_t	 broker_pid;
/* Long enough, where a test holds a request, that it cannot time out. */
static const char *request_timeout = "2s";

static void
slurp_into(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	buf[0] = '\0';
	if ((fd = open(path, O_RDONLY)) == -1)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

static char *
slurp(const char *path)
{
	static char buf[1024 * 1024];

	slurp_into(path, buf, sizeof(buf));
	return buf;
}

static int
count(const char *path, const char *needle)
{
	const char *p = slurp(path);
	int n = 0;

	while ((p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	return n;
}

static void
write_text(const char *path, const char *text)
{
	FILE *f;

	ATF_REQUIRE((f = fopen(path, "w")) != NULL);
	fputs(text, f);
	ATF_REQUIRE(fclose(f) == 0);
}

static pid_t
spawn(const char *log, char *const argv[])
{
	FILE *f;
	pid_t pid;
	int fd;

	ATF_REQUIRE((pid = fork()) != -1);
	if (pid == 0) {
		if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644)) ==
		    -1 || dup2(fd, 1) == -1 || dup2(fd, 2) == -1)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	ATF_REQUIRE((f = fopen("pids", "a")) != NULL);
	fprintf(f, "%d\n", (int)pid);
	fclose(f);
	return pid;
}

static void
wait_path(const char *path)
{
	struct stat st;
	int i;

	for (i = 0; i < 400; i++) {
		if (stat(path, &st) == 0)
			return;
		usleep(25000);
	}
	atf_tc_fail("%s did not appear", path);
}

static void
path_in_run(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", rundir, name);
}

static void	call(uint32_t, const char *, struct reply *);

/*
 * brokerd answers a PING once its loop runs: after it has read the
 * Vault token, which some tests change as soon as it is up.
 */
static void
start_brokerd(void)
{
	struct reply r;
	char bin[PATH_MAX], sock[PATH_MAX], conf[PATH_MAX];
	char *argv[] = { bin, "-d", "-v", "-f", conf, NULL };

	FMT(bin, "%s/../../bin/brokerd", here);
	ATF_REQUIRE(getcwd(conf, sizeof(conf)) != NULL);
	strlcat(conf, "/conf.yaml", sizeof(conf));
	path_in_run(sock, sizeof(sock), "broker.sock");
	unlink(sock);
	broker_pid = spawn("brokerd.log", argv);
	wait_path(sock);
	call(MSG_PING, "", &r);
	ATF_REQUIRE_EQ(r.type, MSG_PONG);
}

/*
 * How events are recorded: by the real auditd, or raw as brokerd sent
 * them by the stand-in, for the leak test (auditd scrubs what it writes,
 * which would hide a leak from brokerd).
 */
enum audit_kind { AUDIT_REAL, AUDIT_RAW };

static pid_t	 audit_pid;

/* The double, auditd or its stand-in, and brokerd trusting ca (in .). */
static void
suite_start(const char *ca, enum audit_kind audit)
{
	char cmd[PATH_MAX * 2], dbl[PATH_MAX], aud[PATH_MAX], sock[PATH_MAX];
	char port[32], conf[4096], cwd[PATH_MAX];
	char *dargv[] = { "python3", dbl, "--cert", "server.pem", "--key",
	    "server.key", "--token-file", "token", "--state", "dbl",
	    "--sa-token-prefix", SA_PREFIX, NULL };
	char *sargv[] = { "python3", aud, sock, "audit.jsonl", NULL };
	char *aargv[] = { aud, "-d", "-f", cmd, NULL };
	FILE *f;

	ATF_REQUIRE(readlink("/proc/self/exe", here, sizeof(here) - 1) > 0);
	strlcpy(here, dirname(here), sizeof(here));
	strlcpy(rundir, "/tmp/asbrk.XXXXXX", sizeof(rundir));
	ATF_REQUIRE(mkdtemp(rundir) != NULL);
	ATF_REQUIRE((f = fopen("rundir", "w")) != NULL);
	fprintf(f, "%s\n", rundir);
	fclose(f);
	ATF_REQUIRE(mkdir("var", 0700) == 0 && mkdir("dbl", 0700) == 0);
	FMT(cmd, "sh %s/mkcerts.sh .", here);
	ATF_REQUIRE_EQ(system(cmd), 0);
	write_text("token", VAULT_TOKEN "\n");
	FMT(dbl, "%s/vault_double.py", here);
	path_in_run(sock, sizeof(sock), "audit.sock");
	spawn("double.log", dargv);
	wait_path("dbl/port");
	slurp_into("dbl/port", port, sizeof(port));
	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	FMT(conf,
	    "runtime_dir: %s\n"
	    "seccomp: enforce\n"
	    /* Vault's 60 s of the held issues: runnerd would wait longer. */
	    "runnerd:\n"
	    "  peer_timeout: 10m\n"
	    "auditd:\n"
	    "  user: \"\"\n"
	    "  peers: { users: [%u] }\n"
	    "  log: %s/audit.jsonl\n"
	    "  key: %s/ckpt/checkpoint.key\n"
	    "  pubkey: %s/checkpoint.pub\n"
	    "  checkpoint_file: %s/ckpt/checkpoint.json\n"
	    "brokerd:\n"
	    "  user: \"\"\n"
	    "  peers: { users: [%u] }\n"
	    "  journal: %s/var/leases.journal\n"
	    "  vault:\n"
	    "    addr: https://127.0.0.1:%d\n"
	    "    ca_file: %s/%s\n"
	    "    token_file: %s/token\n"
	    "    connect_timeout: 2s\n"
	    "    request_timeout: %s\n"
	    "    retries: 1\n"
	    "  scopes:\n"
	    "    pod-reader:\n"
	    "      engine: kubernetes\n"
	    "      tools: [k8s_get_pod_status]\n"
	    "      mount: kubernetes\n"
	    "      role: pod-reader\n"
	    "      namespaces: [demo, staging]\n"
	    "      target_arg: namespace\n"
	    "      kube_server: https://127.0.0.1:6443\n"
	    "      kube_ca_file: %s/ca.pem\n"
	    "    terraform:\n"
	    "      engine: none\n"
	    "      tools: [terraform_plan]\n"
	    "    cloud:\n"
	    "      engine: aws\n"
	    "      tools: [aws_list_buckets]\n",
	    rundir, (unsigned)getuid(), cwd, cwd, cwd, cwd,
	    (unsigned)getuid(), cwd, atoi(port), cwd, ca, cwd, request_timeout,
	    cwd);
	write_text("conf.yaml", conf);
	if (audit == AUDIT_REAL) {
		FMT(aud, "%s/../../bin/auditd", here);
		FMT(cmd, "%s/conf.yaml", cwd);
		audit_pid = spawn("auditd.log", aargv);
	} else {
		FMT(aud, "%s/../lib/audit_standin.py", here);
		audit_pid = spawn("standin.log", sargv);
	}
	wait_path(sock);
	start_brokerd();
}

static void
suite_cleanup(void)
{
	char line[PATH_MAX], cmd[PATH_MAX + 16];
	FILE *f;

	if ((f = fopen("pids", "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			kill(atoi(line), SIGKILL);
		fclose(f);
	}
	slurp_into("rundir", line, sizeof(line));
	if (strncmp(line, "/tmp/asbrk.", 11) == 0) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(cmd, sizeof(cmd), "rm -rf %s", line);
		(void)system(cmd);
	}
}

/*
 * A connection to broker.sock.  The socket's file appears at bind(),
 * a moment before listen(): until then a connection is refused.
 */
static int
broker_connect(struct channel *ch)
{
	char sock[PATH_MAX];
	int fd, i;

	path_in_run(sock, sizeof(sock), "broker.sock");
	for (i = 0; i < 100; i++) {
		if ((fd = sock_connect(sock)) != -1 || errno != ECONNREFUSED)
			break;
		usleep(20000);
	}
	ATF_REQUIRE_MSG(fd != -1, "%s: %s", sock, strerror(errno));
	channel_init(ch, fd);
	return fd;
}

static void
send_request(struct channel *ch, uint32_t type, uint64_t reqid,
    const char *json)
{
	ATF_REQUIRE(channel_send_sync(ch, type, reqid, -1, json, strlen(json),
	    CALL_MS) == 0);
}

/* The next answer on ch, whichever request it is for: its reqid. */
static uint64_t
recv_reply(struct channel *ch, struct reply *r)
{
	const struct msg_error *e;
	struct msg m;

	memset(r, 0, sizeof(*r));
	ATF_REQUIRE_MSG(channel_recv_sync(ch, &m, CALL_MS) == 0,
	    "no answer from brokerd: %s", strerror(errno));
	r->type = m.hdr.type;
	r->fd = m.fd;
	if (m.hdr.type == MSG_ERROR) {
		ATF_REQUIRE_EQ(m.len, sizeof(*e));
		e = (const struct msg_error *)m.data;
		r->code = e->code;
		strlcpy(r->text, e->text, sizeof(r->text));
	} else {
		ATF_REQUIRE(m.len < sizeof(r->text));
		memcpy(r->text, m.data, m.len);
	}
	return m.hdr.reqid;
}

/* One request on a fresh connection, as runnerd would send it. */
static void
call(uint32_t type, const char *json, struct reply *r)
{
	struct channel ch;
	int fd;

	fd = broker_connect(&ch);
	send_request(&ch, type, 0x42, json);
	ATF_CHECK_EQ(recv_reply(&ch, r), 0x42);
	channel_clear(&ch);
	close(fd);
}

#define POD_STATUS(ns)	"{\"tool\":\"k8s_get_pod_status\"," \
			    "\"arguments\":{\"namespace\":\"" ns "\"}}"

static void
issue(const char *tool, const char *args, struct reply *r)
{
	char json[1024];

	snprintf(json, sizeof(json), "{\"tool\":\"%s\",\"arguments\":%s}",
	    tool, args);
	call(MSG_CRED_ISSUE, json, r);
}

/* The lease id out of a CRED_ISSUED payload. */
static void
lease_of(const struct reply *r, char *id, size_t len)
{
	const char *p = strstr(r->text, "\"lease_id\":\"");

	ATF_REQUIRE_MSG(p != NULL, "no lease id in %s", r->text);
	p += strlen("\"lease_id\":\"");
	ATF_REQUIRE(strcspn(p, "\"") < len);
	strlcpy(id, p, strcspn(p, "\"") + 1);
}

static void
revoke_lease(const char *id, struct reply *r)
{
	char json[512];

	snprintf(json, sizeof(json), "{\"lease_id\":\"%s\"}", id);
	call(MSG_CRED_REVOKE, json, r);
}

static void
expect_error(const struct reply *r, int code, const char *text)
{
	ATF_REQUIRE_EQ_MSG(r->type, MSG_ERROR, "got %u: %s", r->type,
	    r->text);
	ATF_CHECK_EQ_MSG(r->code, code, "code %d: %s", r->code, r->text);
	ATF_CHECK_MSG(strstr(r->text, text) != NULL, "\"%s\" lacks \"%s\"",
	    r->text, text);
	ATF_CHECK_EQ(r->fd, -1);
}

static void
expect_nothing_issued(void)
{
	ATF_CHECK_EQ(count("audit.jsonl", "credential.issued"), 0);
	ATF_CHECK_EQ(count("var/leases.journal", "+"), 0);
}

#define LIVE_TC(name, descr)						\
	ATF_TC_WITH_CLEANUP(name);					\
	ATF_TC_HEAD(name, tc)						\
	{								\
		atf_tc_set_md_var(tc, "descr", descr);			\
		atf_tc_set_md_var(tc, "timeout", "120");		\
	}								\
	ATF_TC_CLEANUP(name, tc)					\
	{								\
		(void)tc;						\
		suite_cleanup();					\
	}								\
	ATF_TC_BODY(name, tc)

LIVE_TC(issue_revoke, "a kubernetes lease in a sealed memfd, then revoked")
{
	struct reply r, rv;
	char id[256], file[4096];
	ssize_t n;
	int seals;

	suite_start("ca.pem", AUDIT_REAL);
	issue("k8s_get_pod_status", "{\"namespace\":\"demo\"}", &r);
	ATF_REQUIRE_EQ_MSG(r.type, MSG_CRED_ISSUED, "%s", r.text);
	ATF_CHECK(strstr(r.text, "\"scope\":\"pod-reader\"") != NULL);
	ATF_CHECK(strstr(r.text, "\"namespace\":\"demo\"") != NULL);
	ATF_CHECK(strstr(r.text, "\"ttl\":600") != NULL);
	ATF_CHECK(strstr(r.text, SA_PREFIX) == NULL);
	lease_of(&r, id, sizeof(id));

	/* The secret: in a memfd nobody can change, and nowhere else. */
	ATF_REQUIRE(r.fd != -1);
	seals = fcntl(r.fd, F_GET_SEALS);
	ATF_CHECK_EQ(seals, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE);
	n = pread(r.fd, file, sizeof(file) - 1, 0);
	ATF_REQUIRE(n > 0);
	file[n] = '\0';
	ATF_CHECK_MSG(strstr(file, "\"token\":\"" SA_PREFIX) != NULL, "%s",
	    file);
	ATF_CHECK(strstr(file, "\"namespace\":\"demo\"") != NULL);
	ATF_CHECK(strstr(file, "\"server\":\"https://127.0.0.1:6443\"") !=
	    NULL);
	ATF_CHECK(strstr(file, "BEGIN CERTIFICATE") != NULL);
	ATF_CHECK(pwrite(r.fd, "x", 1, 0) == -1 && errno == EPERM);
	ATF_CHECK(ftruncate(r.fd, 0) == -1 && errno == EPERM);
	close(r.fd);

	ATF_CHECK_EQ(count("var/leases.journal", id), 1);
	ATF_CHECK_EQ(count("audit.jsonl", "credential.issued"), 1);
	ATF_CHECK_EQ(count("audit.jsonl", id), 1);

	revoke_lease(id, &rv);
	ATF_REQUIRE_EQ_MSG(rv.type, MSG_CRED_REVOKED, "%s", rv.text);
	ATF_CHECK(strstr(rv.text, id) != NULL);
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "\"op\": \"mint\""), 1);
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "\"op\": \"revoke\""), 1);
	ATF_CHECK_EQ(count("dbl/leases.jsonl", id), 2);
	ATF_CHECK_EQ(count("audit.jsonl", "credential.revoked"), 1);
	/* Nothing outstanding: the journal starts over. */
	ATF_CHECK_EQ(count("var/leases.journal", id), 0);

	/* Revoked once: a second revoke is refused, not replayed. */
	revoke_lease(id, &rv);
	expect_error(&rv, ERR_DENIED, "not outstanding");
}

LIVE_TC(scope_none, "a tool whose scope needs no credential")
{
	struct reply r;

	suite_start("ca.pem", AUDIT_REAL);
	issue("terraform_plan", "{\"working_dir\":\"demo\"}", &r);
	ATF_REQUIRE_EQ_MSG(r.type, MSG_CRED_ISSUED, "%s", r.text);
	ATF_CHECK(strstr(r.text, "\"engine\":\"none\"") != NULL);
	ATF_CHECK(strstr(r.text, "\"lease_id\":null") != NULL);
	ATF_CHECK_EQ(r.fd, -1);
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "mint"), 0);
	ATF_CHECK_EQ(count("audit.jsonl", "credential.issued"), 1);
}

LIVE_TC(unmapped_tool, "deny by default: a tool with no scope gets nothing")
{
	struct reply r;

	suite_start("ca.pem", AUDIT_REAL);
	issue("run_shell", "{\"command\":\"id\"}", &r);
	expect_error(&r, ERR_DENIED, "has no credential scope");
	expect_nothing_issued();
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "mint"), 0);
}

LIVE_TC(wrong_namespace, "only the action's target, and only if allowed")
{
	struct reply r;

	suite_start("ca.pem", AUDIT_REAL);
	issue("k8s_get_pod_status", "{\"namespace\":\"kube-system\"}", &r);
	expect_error(&r, ERR_DENIED, "outside scope pod-reader");
	call(MSG_CRED_ISSUE, "{\"tool\":\"k8s_get_pod_status\","
	    "\"arguments\":{\"namespace\":\"demo\"},\"namespace\":\"staging\"}",
	    &r);
	expect_error(&r, ERR_DENIED, "not the action's target");
	issue("k8s_get_pod_status", "{\"namespace\":\"Demo;x\"}", &r);
	expect_error(&r, ERR_DENIED, "must name a namespace");
	issue("k8s_get_pod_status", "{}", &r);
	expect_error(&r, ERR_DENIED, "must name a namespace");
	expect_nothing_issued();
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "mint"), 0);
}

LIVE_TC(aws_unavailable, "an aws scope nobody configured is unavailable")
{
	struct reply r;

	suite_start("ca.pem", AUDIT_REAL);
	issue("aws_list_buckets", "{}", &r);
	expect_error(&r, ERR_UNAVAIL, "unavailable");
	expect_nothing_issued();
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "mint"), 0);
}

static void
vault_fault(const char *fault, const char *text)
{
	struct reply r;

	suite_start("ca.pem", AUDIT_REAL);
	write_text("dbl/fault", fault);
	issue("k8s_get_pod_status", "{\"namespace\":\"demo\"}", &r);
	expect_error(&r, ERR_UNAVAIL, text);
	expect_nothing_issued();
}

LIVE_TC(vault_down, "Vault drops the connection: a clear error")
{
	vault_fault("down", "vault: https://127.0.0.1:");
}

LIVE_TC(vault_403, "Vault refuses the token: its message, verbatim")
{
	vault_fault("403", "vault: HTTP 403: permission denied");
}

LIVE_TC(vault_500, "Vault fails: retried, then its message, verbatim")
{
	vault_fault("500", "vault: HTTP 500: 1 error occurred");
	ATF_CHECK_EQ(count("brokerd.log",
	    "POST kubernetes/creds/pod-reader: HTTP 500 (attempt"), 2);
}

LIVE_TC(vault_slow, "Vault slower than request_timeout: timed out")
{
	vault_fault("slow 5", "imed out");
}

LIVE_TC(tls_other_ca, "a Vault whose certificate our CA did not sign")
{
	struct reply r;

	suite_start("other-ca.pem", AUDIT_REAL);
	issue("k8s_get_pod_status", "{\"namespace\":\"demo\"}", &r);
	expect_error(&r, ERR_UNAVAIL, "certificate");
	expect_nothing_issued();
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "mint"), 0);
}

LIVE_TC(audit_fail_closed, "no audit record, no credential: minted, revoked")
{
	struct reply r;

	suite_start("ca.pem", AUDIT_REAL);
	ATF_REQUIRE(kill(audit_pid, SIGKILL) == 0);
	ATF_REQUIRE(waitpid(audit_pid, NULL, 0) == audit_pid);
	issue("k8s_get_pod_status", "{\"namespace\":\"demo\"}", &r);
	expect_error(&r, ERR_UNAVAIL, "audit unavailable");
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "\"op\": \"mint\""), 1);
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "\"op\": \"revoke\""), 1);
	ATF_CHECK_EQ(count("var/leases.journal", "kubernetes/creds"), 0);
}

static int
revoked_by_double(const char *id)
{
	char line[512];

	snprintf(line, sizeof(line), "\"op\": \"revoke\", \"lease_id\": "
	    "\"%s\"", id);
	return count("dbl/leases.jsonl", line);
}

LIVE_TC(crash_replay, "kill -9 with leases out: revoked after restart")
{
	struct reply r1, r2;
	char id1[256], id2[256];
	int i;

	suite_start("ca.pem", AUDIT_REAL);
	issue("k8s_get_pod_status", "{\"namespace\":\"demo\"}", &r1);
	issue("k8s_get_pod_status", "{\"namespace\":\"staging\"}", &r2);
	ATF_REQUIRE_EQ(r1.type, MSG_CRED_ISSUED);
	ATF_REQUIRE_EQ(r2.type, MSG_CRED_ISSUED);
	close(r1.fd);
	close(r2.fd);
	lease_of(&r1, id1, sizeof(id1));
	lease_of(&r2, id2, sizeof(id2));
	ATF_REQUIRE(kill(broker_pid, SIGKILL) == 0);
	ATF_REQUIRE(waitpid(broker_pid, NULL, 0) == broker_pid);
	ATF_CHECK_EQ(count("var/leases.journal", id1), 1);
	ATF_CHECK_EQ(count("var/leases.journal", id2), 1);
	ATF_CHECK_EQ(revoked_by_double(id1) + revoked_by_double(id2), 0);

	start_brokerd();
	/* The revocation reaches Vault before its record reaches the log. */
	for (i = 0; i < 200 && (revoked_by_double(id1) == 0 ||
	    revoked_by_double(id2) == 0 ||
	    count("audit.jsonl", "left outstanding") < 2); i++)
		usleep(50000);
	ATF_CHECK_EQ(revoked_by_double(id1), 1);
	ATF_CHECK_EQ(revoked_by_double(id2), 1);
	ATF_CHECK_EQ(count("audit.jsonl", "left outstanding"), 2);
	for (i = 0; i < 100 && count("var/leases.journal", "+") != 0; i++)
		usleep(50000);
	ATF_CHECK_EQ(count("var/leases.journal", "+"), 0);
}

/*
 * Requests on one connection, the first of them held by the double
 * until the test has the later answers: had brokerd served them one at
 * a time, the first answer would come first (or never).  Vault's
 * time-out is long enough that the held request cannot run into it.
 */
static int
held_issue(struct channel *ch)
{
	int fd;

	write_text("dbl/hold", "demo\n");
	fd = broker_connect(ch);
	send_request(ch, MSG_CRED_ISSUE, 1, POD_STATUS("demo"));
	return fd;
}

static void
release_issue(struct channel *ch, int fd)
{
	struct reply r;
	char id[256];

	ATF_REQUIRE(unlink("dbl/hold") == 0);
	ATF_REQUIRE_EQ(recv_reply(ch, &r), 1);
	ATF_REQUIRE_EQ_MSG(r.type, MSG_CRED_ISSUED, "%s", r.text);
	ATF_CHECK(strstr(r.text, "\"namespace\":\"demo\"") != NULL);
	close(r.fd);
	lease_of(&r, id, sizeof(id));
	ATF_CHECK_EQ(count("var/leases.journal", id), 1);
	channel_clear(ch);
	close(fd);
}

LIVE_TC(concurrent_issues, "a held issue holds up no other; answers by reqid")
{
	struct channel ch;
	struct reply r;
	char id[256];
	int fd;

	request_timeout = "60s";
	suite_start("ca.pem", AUDIT_REAL);
	fd = held_issue(&ch);
	send_request(&ch, MSG_CRED_ISSUE, 2, POD_STATUS("staging"));
	ATF_REQUIRE_EQ(recv_reply(&ch, &r), 2);
	ATF_REQUIRE_EQ_MSG(r.type, MSG_CRED_ISSUED, "%s", r.text);
	ATF_CHECK(strstr(r.text, "\"namespace\":\"staging\"") != NULL);
	ATF_CHECK(r.fd != -1);
	close(r.fd);
	lease_of(&r, id, sizeof(id));
	ATF_CHECK_EQ(count("var/leases.journal", id), 1);
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "mint"), 1);
	release_issue(&ch, fd);
	ATF_CHECK_EQ(count("audit.jsonl", "credential.issued"), 2);
}

LIVE_TC(revoke_past_issue, "a revoke is not held up behind a slow issue")
{
	struct channel ch;
	struct reply r;
	char id[256], json[512];
	int fd;

	request_timeout = "60s";
	suite_start("ca.pem", AUDIT_REAL);
	issue("k8s_get_pod_status", "{\"namespace\":\"staging\"}", &r);
	ATF_REQUIRE_EQ_MSG(r.type, MSG_CRED_ISSUED, "%s", r.text);
	close(r.fd);
	lease_of(&r, id, sizeof(id));

	fd = held_issue(&ch);
	FMT(json, "{\"lease_id\":\"%s\"}", id);
	send_request(&ch, MSG_CRED_REVOKE, 2, json);
	ATF_REQUIRE_EQ(recv_reply(&ch, &r), 2);
	ATF_REQUIRE_EQ_MSG(r.type, MSG_CRED_REVOKED, "%s", r.text);
	ATF_CHECK_EQ(revoked_by_double(id), 1);
	ATF_CHECK_EQ(count("audit.jsonl", "credential.revoked"), 1);
	release_issue(&ch, fd);
}

LIVE_TC(requester_gone, "a lease minted after runnerd left goes back")
{
	struct channel ch;
	struct reply r;
	int fd, i;

	request_timeout = "60s";
	suite_start("ca.pem", AUDIT_REAL);
	fd = held_issue(&ch);
	/*
	 * The double has the request, and brokerd has seen the hang-up
	 * once it answers a PING on a new connection: a poll that wakes
	 * for that sees the older hang-up too.
	 */
	wait_path("dbl/held");
	channel_clear(&ch);
	close(fd);
	call(MSG_PING, "", &r);
	ATF_REQUIRE_EQ(r.type, MSG_PONG);
	ATF_REQUIRE(unlink("dbl/hold") == 0);
	/* The record comes before the journal forgets the lease. */
	for (i = 0; i < 200 && (count("audit.jsonl", "not handed over") == 0 ||
	    count("var/leases.journal", "+") != 0); i++)
		usleep(50000);
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "\"op\": \"mint\""), 1);
	ATF_CHECK_EQ(count("dbl/leases.jsonl", "\"op\": \"revoke\""), 1);
	ATF_CHECK_EQ(count("audit.jsonl", "not handed over"), 1);
	ATF_CHECK_EQ(count("audit.jsonl", "credential.issued"), 0);
	ATF_CHECK_EQ(count("var/leases.journal", "+"), 0);
}

LIVE_TC(token_reload, "SIGHUP re-reads a rotated Vault token")
{
	struct reply r;
	int i;

	suite_start("ca.pem", AUDIT_REAL);
	write_text("token", VAULT_TOKEN "-rotated\n");
	issue("k8s_get_pod_status", "{\"namespace\":\"demo\"}", &r);
	expect_error(&r, ERR_UNAVAIL, "permission denied");
	ATF_REQUIRE(kill(broker_pid, SIGHUP) == 0);
	for (i = 0; i < 100 && count("brokerd.log", "token reloaded") == 0;
	    i++)
		usleep(50000);
	issue("k8s_get_pod_status", "{\"namespace\":\"demo\"}", &r);
	ATF_REQUIRE_EQ_MSG(r.type, MSG_CRED_ISSUED, "%s", r.text);
	close(r.fd);
}

LIVE_TC(no_leak, "neither token reaches brokerd's log, audit or argv/env")
{
	struct reply r, rv;
	char id[256], path[64];
	const char *files[] = { "brokerd.log", "audit.jsonl",
	    "var/leases.journal", path, NULL };
	int i, k;

	suite_start("ca.pem", AUDIT_RAW);
	for (k = 0; k < 3; k++) {
		issue("k8s_get_pod_status", "{\"namespace\":\"demo\"}", &r);
		ATF_REQUIRE_EQ_MSG(r.type, MSG_CRED_ISSUED, "%s", r.text);
		ATF_CHECK(strstr(r.text, SA_PREFIX) == NULL);
		close(r.fd);
		lease_of(&r, id, sizeof(id));
		revoke_lease(id, &rv);
		ATF_CHECK_EQ(rv.type, MSG_CRED_REVOKED);
	}
	write_text("dbl/fault", "403");
	issue("k8s_get_pod_status", "{\"namespace\":\"demo\"}", &r);
	ATF_CHECK(strstr(r.text, SA_PREFIX) == NULL);
	ATF_CHECK(strstr(r.text, "AS-RECOGNISABLE") == NULL);
	/* The double saw the token: the test is not vacuous. */
	ATF_CHECK(count("dbl/leases.jsonl", "mint") == 3);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)broker_pid,
		    i ? "cmdline" : "environ");
		for (k = 0; files[k] != NULL; k++) {
			ATF_CHECK_EQ_MSG(count(files[k], "AS-RECOGNISABLE"), 0,
			    "a token in %s", files[k]);
		}
	}
	ATF_CHECK(count("brokerd.log", "issued") >= 3);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, issue_revoke);
	ATF_TP_ADD_TC(tp, scope_none);
	ATF_TP_ADD_TC(tp, unmapped_tool);
	ATF_TP_ADD_TC(tp, wrong_namespace);
	ATF_TP_ADD_TC(tp, aws_unavailable);
	ATF_TP_ADD_TC(tp, vault_down);
	ATF_TP_ADD_TC(tp, vault_403);
	ATF_TP_ADD_TC(tp, vault_500);
	ATF_TP_ADD_TC(tp, vault_slow);
	ATF_TP_ADD_TC(tp, tls_other_ca);
	ATF_TP_ADD_TC(tp, audit_fail_closed);
	ATF_TP_ADD_TC(tp, crash_replay);
	ATF_TP_ADD_TC(tp, concurrent_issues);
	ATF_TP_ADD_TC(tp, revoke_past_issue);
	ATF_TP_ADD_TC(tp, requester_gone);
	ATF_TP_ADD_TC(tp, token_reload);
	ATF_TP_ADD_TC(tp, no_leak);
	return atf_no_error();
}
