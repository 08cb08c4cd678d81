/* SPDX-License-Identifier: ISC */
/*
 * The audit client against a real auditd: every event is acknowledged
 * only once it is in the file; with auditd gone, or refusing, the
 * client says so (-1) and the caller must not proceed (fail closed);
 * concurrent writers share fsyncs and still form one whole chain; an
 * event sent again (same writer and seq) is recorded once, also across
 * a restart of auditd and when its first ack came too late.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "cjson.h"
#include "config.h"
#include "frame.h"
#include "sock.h"

#define WRITERS		16
#define PER_WRITER	100

static void
write_conf(int writer, int reader)
{
	char cwd[PATH_MAX];
	FILE *f;

	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	ATF_REQUIRE(mkdir("run", 0755) == 0 && mkdir("var", 0755) == 0);
	ATF_REQUIRE((f = fopen("conf.yaml", "w")) != NULL);
	fprintf(f, "runtime_dir: %s/run\nauditd:\n  user: \"\"\n"
	    "  peers: { users: [%u] }\n  readers: { users: [%u] }\n"
	    "  log: %s/var/audit.jsonl\n"
	    "  key: %s/ckpt/checkpoint.key\n  pubkey: %s/checkpoint.pub\n"
	    "  checkpoint_file: %s/ckpt/checkpoint.json\n", cwd,
	    writer ? (unsigned)getuid() : 4242u,
	    reader ? (unsigned)getuid() : 4242u, cwd, cwd, cwd, cwd);
	fclose(f);
}

static pid_t
start_auditd(const atf_tc_t *tc)
{
	char bin[PATH_MAX];
	struct stat st;
	pid_t pid;
	int i;

	snprintf(bin, sizeof(bin), "%s/auditd",
	    atf_tc_get_config_var(tc, "bindir"));
	ATF_REQUIRE((pid = fork()) != -1);
	if (pid == 0) {
		freopen("auditd.log", "a", stderr);
		execl(bin, "auditd", "-d", "-f", "conf.yaml", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 200 && stat("run/audit.sock", &st) == -1; i++)
		usleep(25000);
	ATF_REQUIRE_MSG(i < 200, "auditd did not start (see auditd.log)");
	return pid;
}

static void
stop_auditd(pid_t pid)
{
	int status;

	ATF_REQUIRE(kill(pid, SIGTERM) == 0);
	ATF_REQUIRE(waitpid(pid, &status, 0) == pid);
	ATF_REQUIRE_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "auditd exited with status %#x", status);
}

static void
client_init(const char *proc)
{
	struct as_config conf;
	char err[1024];

	ATF_REQUIRE_MSG(config_load("conf.yaml", &conf, err, sizeof(err)) ==
	    0, "%s", err);
	ATF_REQUIRE(audit_init(&conf, proc) == 0);
}

static size_t
count_lines(const char *path, const char *needle)
{
	char line[8192];
	size_t n = 0;
	FILE *f;

	ATF_REQUIRE((f = fopen(path, "r")) != NULL);
	while (fgets(line, sizeof(line), f) != NULL)
		if (needle == NULL || strstr(line, needle) != NULL)
			n++;
	fclose(f);
	return n;
}

/* Runs an auditctl command; returns its exit status, output in out. */
static int
auditctl(const atf_tc_t *tc, const char *args, char *out, size_t outlen)
{
	char cmd[PATH_MAX * 2];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/auditctl -f conf.yaml %s",
	    atf_tc_get_config_var(tc, "bindir"), args);
	ATF_REQUIRE((p = popen(cmd, "r")) != NULL);
	n = fread(out, 1, outlen - 1, p);
	out[n] = '\0';
	return WEXITSTATUS(pclose(p));
}

/*
 * Sends payload on a connection of its own; returns auditd's ack, or
 * NULL when it refused the event as want says it must.
 */
static json_t *
send_payload(const char *payload, uint64_t reqid, int want)
{
	struct channel ch;
	struct msg m;
	json_t *ack;
	int fd;

	ATF_REQUIRE((fd = sock_connect("run/audit.sock")) != -1);
	channel_init(&ch, fd);
	ATF_REQUIRE(channel_send_sync(&ch, MSG_AUDIT_EVENT, reqid, -1,
	    payload, strlen(payload), 5000) == 0);
	ATF_REQUIRE(channel_recv_sync(&ch, &m, 5000) == 0);
	ATF_REQUIRE_EQ(audit_ack_check(&m, reqid), want);
	ack = want == 0 ? cjson_parse(m.data, m.len, NULL, 0) : NULL;
	ATF_REQUIRE(want != 0 || ack != NULL);
	channel_clear(&ch);
	close(fd);
	return ack;
}

static long long
ack_seq(const json_t *ack)
{
	return json_integer_value(json_object_get(ack, "seq"));
}

/* The counter auditctl stats shows under key. */
static long long
stat_of(const atf_tc_t *tc, const char *key)
{
	char out[4096], err[256];
	long long v;
	json_t *j;

	ATF_REQUIRE_EQ(auditctl(tc, "-j stats", out, sizeof(out)), 0);
	ATF_REQUIRE_MSG((j = cjson_parse(out, strlen(out), err,
	    sizeof(err))) != NULL, "%s: %s", out, err);
	v = json_integer_value(json_object_get(j, key));
	json_decref(j);
	return v;
}

ATF_TC(acked_and_written);
ATF_TC_HEAD(acked_and_written, tc)
{
	atf_tc_set_md_var(tc, "require.config", "bindir");
}
ATF_TC_BODY(acked_and_written, tc)
{
	pid_t pid;

	write_conf(1, 1);
	pid = start_auditd(tc);
	client_init("runnerd");
	ATF_REQUIRE(audit_emit("tool.request", 0x1234, json_pack("{s:s, s:s}",
	    "tool", "k8s_get_pod_status", "token", "hunter2")) == 0);
	/* Acknowledged means already in the file, after the log's origin. */
	ATF_CHECK_EQ(count_lines("var/audit.jsonl",
	    "\"daemon\":\"runnerd\",\"event\":\"tool.request\","
	    "\"fields\":{\"token\":\"<redacted>\",\"tool\":"
	    "\"k8s_get_pod_status\"}"), 1);
	ATF_CHECK_EQ(count_lines("var/audit.jsonl",
	    "\"request_id\":\"req-0000000000001234\",\"seq\":2,"), 1);
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", "hunter2"), 0);
	stop_auditd(pid);
}

ATF_TC(fail_closed);
ATF_TC_HEAD(fail_closed, tc)
{
	atf_tc_set_md_var(tc, "require.config", "bindir");
}
ATF_TC_BODY(fail_closed, tc)
{
	pid_t pid;

	write_conf(1, 1);
	client_init("runnerd");
	/* Never started. */
	ATF_CHECK_EQ(audit_emit("tool.request", 1, NULL), -1);
	pid = start_auditd(tc);
	ATF_CHECK_EQ(audit_emit("tool.request", 2, NULL), 0);
	stop_auditd(pid);
	/* Gone while we held a connection: the reconnect fails too. */
	ATF_CHECK_EQ(audit_emit("sandbox.started", 3, NULL), -1);
	/* The one event; auditd's own checkpoint at its stop besides. */
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", "\"daemon\":\"runnerd\""),
	    1);
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", "sandbox.started"), 0);
}

/* A refused event is a failure to record, not a silent drop. */
ATF_TC(refused);
ATF_TC_HEAD(refused, tc)
{
	atf_tc_set_md_var(tc, "require.config", "bindir");
}
ATF_TC_BODY(refused, tc)
{
	pid_t pid;

	write_conf(1, 1);
	pid = start_auditd(tc);
	client_init("runnerd");
	ATF_CHECK_EQ(audit_emit("audit.rotated", 1, NULL), -1);
	ATF_CHECK_EQ(audit_emit("Bad Name", 1, NULL), -1);
	ATF_CHECK_EQ(audit_emit("tool.request", 1, json_pack("[i]", 1)), -1);
	/* A writer comes with its seq, and names itself plainly. */
	(void)send_payload("{\"event\":\"tool.request\",\"daemon\":\"runnerd\","
	    "\"request_id\":\"req-0000000000000001\",\"writer\":\"r:1:2\"}",
	    1, -2);
	(void)send_payload("{\"event\":\"tool.request\",\"daemon\":\"runnerd\","
	    "\"request_id\":\"req-0000000000000001\",\"writer\":\"R\\n\","
	    "\"seq\":1}", 1, -2);
	ATF_CHECK_EQ(audit_emit("tool.request", 1, NULL), 0);
	/* The log's audit.origin and the one event. */
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", NULL), 2);
	stop_auditd(pid);
}

/* A peer on the readers list only may not write. */
ATF_TC(reader_cannot_write);
ATF_TC_HEAD(reader_cannot_write, tc)
{
	atf_tc_set_md_var(tc, "require.config", "bindir");
}
ATF_TC_BODY(reader_cannot_write, tc)
{
	pid_t pid;

	write_conf(0, 1);
	pid = start_auditd(tc);
	client_init("runnerd");
	ATF_CHECK_EQ(audit_emit("tool.request", 1, NULL), -1);
	/* The log's audit.origin alone. */
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", NULL), 1);
	stop_auditd(pid);
}

ATF_TC(group_commit);
ATF_TC_HEAD(group_commit, tc)
{
	atf_tc_set_md_var(tc, "require.config", "bindir");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(group_commit, tc)
{
	char out[4096], err[256];
	json_t *stats;
	pid_t pid, kids[WRITERS];
	int i, j, status, failed = 0;

	write_conf(1, 1);
	pid = start_auditd(tc);
	for (i = 0; i < WRITERS; i++) {
		ATF_REQUIRE((kids[i] = fork()) != -1);
		if (kids[i] == 0) {
			client_init("runnerd");
			for (j = 0; j < PER_WRITER; j++)
				if (audit_emit("tool.request",
				    (uint64_t)(i + 1) << 32 | (uint64_t)j,
				    json_pack("{s:i, s:i}", "writer", i, "n",
				    j)) == -1)
					_exit(1);
			_exit(0);
		}
	}
	for (i = 0; i < WRITERS; i++) {
		ATF_REQUIRE(waitpid(kids[i], &status, 0) == kids[i]);
		failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	ATF_CHECK_EQ(failed, 0);
	/*
	 * Every event, and the log's origin and the checkpoints auditd
	 * signs among them.
	 */
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", "\"daemon\":\"runnerd\""),
	    WRITERS * PER_WRITER);
	ATF_CHECK_EQ(auditctl(tc, "verify", out, sizeof(out)), 0);
	ATF_REQUIRE_EQ(auditctl(tc, "-j stats", out, sizeof(out)), 0);
	stats = cjson_parse(out, strlen(out), err, sizeof(err));
	ATF_REQUIRE_MSG(stats != NULL, "%s: %s", out, err);
	ATF_CHECK_EQ(json_integer_value(json_object_get(stats, "events")),
	    WRITERS * PER_WRITER + 1 + (long long)count_lines(
	    "var/audit.jsonl", "\"event\":\"log.checkpoint\""));
	/* Fewer syncs than events: events did share a commit. */
	ATF_CHECK_MSG(json_integer_value(json_object_get(stats, "batches")) <
	    WRITERS * PER_WRITER, "%s", out);
	ATF_CHECK_MSG(json_integer_value(json_object_get(stats,
	    "max_batch")) > 1, "%s", out);
	json_decref(stats);
	stop_auditd(pid);
}

/*
 * A full disk is said as one: auditd refuses with ERR_NOSPACE and the
 * client's errno is ENOSPC, not "Operation not permitted".  The log is
 * on a small tmpfs of the test's, filled up once auditd has opened it.
 */
ATF_TC_WITH_CLEANUP(disk_full);
ATF_TC_HEAD(disk_full, tc)
{
	atf_tc_set_md_var(tc, "require.config", "bindir");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(disk_full, tc)
{
	char buf[4096], pad[8192];
	pid_t pid;
	int fd;

	write_conf(1, 1);
	ATF_REQUIRE_MSG(mount("tmpfs", "var", "tmpfs", 0, "size=64k") == 0,
	    "mount tmpfs: %s", strerror(errno));
	pid = start_auditd(tc);
	client_init("runnerd");
	ATF_REQUIRE(audit_emit("tool.request", 1, NULL) == 0);
	ATF_REQUIRE((fd = open("var/filler", O_WRONLY | O_CREAT, 0600)) != -1);
	memset(buf, 'x', sizeof(buf));
	while (write(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	/* More than the page the log's last record may have left. */
	memset(pad, 'y', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	errno = 0;
	ATF_CHECK_EQ(audit_emit("tool.request", 2, json_pack("{s:s}", "pad",
	    pad)), -1);
	ATF_CHECK_MSG(errno == ENOSPC, "errno %d (%s), not ENOSPC", errno,
	    strerror(errno));
	/* Space again: auditd goes on, the chain whole. */
	ATF_REQUIRE(unlink("var/filler") == 0);
	ATF_CHECK_EQ(audit_emit("tool.request", 3, NULL), 0);
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", NULL), 3);
	stop_auditd(pid);
}
ATF_TC_CLEANUP(disk_full, tc)
{
	(void)tc;
	(void)umount2("var", MNT_DETACH);
}

/* The same payload twice: written once, the second ack says so. */
ATF_TC(duplicate_dropped);
ATF_TC_HEAD(duplicate_dropped, tc)
{
	atf_tc_set_md_var(tc, "require.config", "bindir");
}
ATF_TC_BODY(duplicate_dropped, tc)
{
	char out[4096], needle[128];
	json_t *a1, *a2;
	char *payload;
	pid_t pid;

	write_conf(1, 1);
	pid = start_auditd(tc);
	client_init("runnerd");
	ATF_REQUIRE((payload = audit_payload("sandbox.completed", 0x77,
	    json_pack("{s:i}", "exit", 0))) != NULL);
	a1 = send_payload(payload, 0x77, 0);
	a2 = send_payload(payload, 0x77, 0);
	ATF_CHECK(json_object_get(a1, "duplicate") == NULL);
	ATF_CHECK(json_is_true(json_object_get(a2, "duplicate")));
	ATF_CHECK_EQ(ack_seq(a2), ack_seq(a1));
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", "sandbox.completed"), 1);
	/* The record keeps who wrote it and the writer's own seq. */
	snprintf(needle, sizeof(needle), "\"writer\":\"runnerd:%d:",
	    (int)getpid());
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", needle), 1);
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", "\"writer_seq\":1}"), 1);
	/* The writer's next event is a new one. */
	ATF_CHECK_EQ(audit_emit("tool.result", 0x77, NULL), 0);
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", "\"writer_seq\":2}"), 1);
	ATF_CHECK_EQ(stat_of(tc, "duplicates"), 1);
	ATF_CHECK_EQ(auditctl(tc, "verify", out, sizeof(out)), 0);
	free(payload);
	json_decref(a1);
	json_decref(a2);
	stop_auditd(pid);
}

/* auditd learns the writers' last events from its file at start. */
ATF_TC(duplicate_after_restart);
ATF_TC_HEAD(duplicate_after_restart, tc)
{
	atf_tc_set_md_var(tc, "require.config", "bindir");
}
ATF_TC_BODY(duplicate_after_restart, tc)
{
	json_t *a1, *a2;
	char *payload;
	pid_t pid;

	write_conf(1, 1);
	pid = start_auditd(tc);
	client_init("brokerd");
	ATF_REQUIRE((payload = audit_payload("credential.revoked", 0x78,
	    NULL)) != NULL);
	a1 = send_payload(payload, 0x78, 0);
	stop_auditd(pid);
	ATF_REQUIRE(unlink("run/audit.sock") == 0 || errno == ENOENT);
	pid = start_auditd(tc);
	a2 = send_payload(payload, 0x78, 0);
	ATF_CHECK(json_is_true(json_object_get(a2, "duplicate")));
	ATF_CHECK_EQ(ack_seq(a2), ack_seq(a1));
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", "credential.revoked"), 1);
	free(payload);
	json_decref(a1);
	json_decref(a2);
	stop_auditd(pid);
}

/* auditd answers within 1 s unless stopped; SIGCONT after ms. */
static pid_t
stall_auditd(const atf_tc_t *tc, int ms)
{
	pid_t pid, kid;
	FILE *f;

	ATF_REQUIRE((f = fopen("conf.yaml", "a")) != NULL);
	fprintf(f, "  ack_timeout: 1\n");
	fclose(f);
	pid = start_auditd(tc);
	client_init("runnerd");
	ATF_REQUIRE(kill(pid, SIGSTOP) == 0);
	ATF_REQUIRE((kid = fork()) != -1);
	if (kid == 0) {
		usleep(ms * 1000);
		kill(pid, SIGCONT);
		_exit(0);
	}
	return pid;
}

/*
 * The ack comes after the client's timeout: the client sends the event
 * again, auditd writes it once and acks the copy.
 */
ATF_TC(ack_late);
ATF_TC_HEAD(ack_late, tc)
{
	atf_tc_set_md_var(tc, "require.config", "bindir");
}
ATF_TC_BODY(ack_late, tc)
{
	pid_t pid;

	write_conf(1, 1);
	pid = stall_auditd(tc, 1500);
	ATF_CHECK_EQ(audit_emit("sandbox.completed", 0x79, NULL), 0);
	ATF_REQUIRE(wait(NULL) != -1);
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", "sandbox.completed"), 1);
	ATF_CHECK_EQ(stat_of(tc, "duplicates"), 1);
	stop_auditd(pid);
}

/* No ack at all in time: the client says the event's fate is unknown. */
ATF_TC(ack_never);
ATF_TC_HEAD(ack_never, tc)
{
	atf_tc_set_md_var(tc, "require.config", "bindir");
}
ATF_TC_BODY(ack_never, tc)
{
	pid_t pid;

	write_conf(1, 1);
	pid = stall_auditd(tc, 3000);
	errno = 0;
	ATF_CHECK_EQ(audit_emit("sandbox.completed", 0x7a, NULL), -1);
	ATF_CHECK_MSG(errno == ETIMEDOUT, "errno %d (%s), not ETIMEDOUT",
	    errno, strerror(errno));
	ATF_REQUIRE(wait(NULL) != -1);
	/* Both copies reach auditd once it runs: one record. */
	ATF_CHECK_EQ(stat_of(tc, "duplicates"), 1);
	ATF_CHECK_EQ(count_lines("var/audit.jsonl", "sandbox.completed"), 1);
	stop_auditd(pid);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, disk_full);
	ATF_TP_ADD_TC(tp, acked_and_written);
	ATF_TP_ADD_TC(tp, fail_closed);
	ATF_TP_ADD_TC(tp, refused);
	ATF_TP_ADD_TC(tp, reader_cannot_write);
	ATF_TP_ADD_TC(tp, group_commit);
	ATF_TP_ADD_TC(tp, duplicate_dropped);
	ATF_TP_ADD_TC(tp, duplicate_after_restart);
	ATF_TP_ADD_TC(tp, ack_late);
	ATF_TP_ADD_TC(tp, ack_never);
	return atf_no_error();
}
