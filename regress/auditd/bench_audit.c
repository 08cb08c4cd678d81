/* SPDX-License-Identifier: ISC */
/*
 * bench_audit: durable audit events per second with 1, 8 and 64
 * concurrent writers, each a process calling audit_emit() in a loop
 * (so every event counted was fsynced before its ack).  Starts its own
 * auditd with the log in dir, or in a scratch directory made (and
 * removed) in the current one: run it on the disk under test.
 *
 *	bench_audit [-t seconds] [-d dir] bindir
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "cjson.h"
#include "config.h"
#include "ctl.h"
#include "sock.h"

static const int rounds[] = { 1, 8, 64 };

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
join(char *buf, size_t len, const char *dir, const char *name)
{
	int n;

	n = snprintf(buf, len, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= len)
		errx(1, "%s: path too long", dir);
}

static void
write_conf(const char *dir)
{
	FILE *f;
	char path[PATH_MAX];

	join(path, sizeof(path), dir, "conf.yaml");
	if ((f = fopen(path, "w")) == NULL)
		err(1, "%s", path);
	fprintf(f, "runtime_dir: %s/run\nauditd:\n  user: \"\"\n"
	    "  peers: { users: [%u] }\n  readers: { users: [%u] }\n"
	    "  log: %s/audit.jsonl\n  rotate_size: 1G\n"
	    "  key: %s/ckpt/checkpoint.key\n  pubkey: %s/checkpoint.pub\n"
	    "  checkpoint_file: %s/ckpt/checkpoint.json\n", dir,
	    (unsigned)getuid(), (unsigned)getuid(), dir, dir, dir, dir);
	fclose(f);
}

static pid_t
start_auditd(const char *bindir, const char *dir)
{
	char bin[PATH_MAX], conf[PATH_MAX], sock[PATH_MAX];
	struct stat st;
	pid_t pid;
	int i;

	join(bin, sizeof(bin), bindir, "auditd");
	join(conf, sizeof(conf), dir, "conf.yaml");
	join(sock, sizeof(sock), dir, "run/audit.sock");
	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0) {
		execl(bin, "auditd", "-d", "-f", conf, (char *)NULL);
		err(127, "%s", bin);
	}
	for (i = 0; i < 200 && stat(sock, &st) == -1; i++)
		usleep(25000);
	if (i == 200)
		errx(1, "auditd did not start");
	return pid;
}

/* One writer: waits for the start, emits until the deadline. */
static void
writer(const struct as_config *conf, int id, int go, int out, double end)
{
	unsigned long n = 0;
	char c;

	if (audit_init(conf, "bench") == -1 ||
	    audit_emit("bench.ready", (uint64_t)id + 1, NULL) == -1)
		_exit(1);
	if (read(go, &c, 1) != 1)
		_exit(1);
	while (now() < end)
		if (audit_emit("tool.request", ((uint64_t)id + 1) << 32 | n,
		    json_pack("{s:s, s:i}", "tool", "bench", "n", (int)n)) == 0)
			n++;
		else
			_exit(1);
	if (write(out, &n, sizeof(n)) != sizeof(n))
		_exit(1);
	_exit(0);
}

/* auditd's own count of batches so far. */
static long long
batches(const struct as_config *conf)
{
	struct channel ch;
	struct msg m;
	char path[PATH_MAX];
	json_t *j;
	long long b = -1;
	int fd;

	if (config_socket_path(conf, "audit.sock", path, sizeof(path)) == -1 ||
	    (fd = sock_connect(path)) == -1)
		return -1;
	channel_init(&ch, fd);
	if (channel_send_sync(&ch, MSG_AUDIT_STATS, 0, -1, NULL, 0,
	    CTL_TIMEOUT_MS) == 0 &&
	    channel_recv_sync(&ch, &m, CTL_TIMEOUT_MS) == 0 &&
	    m.hdr.type == MSG_AUDIT_RECORD &&
	    (j = cjson_parse(m.data, m.len, NULL, 0)) != NULL) {
		b = json_integer_value(json_object_get(j, "batches"));
		json_decref(j);
	}
	close(fd);
	channel_clear(&ch);
	return b;
}

static void
run(const struct as_config *conf, int nwriters, double secs)
{
	int go[2], out[2], status, i, failed = 0;
	unsigned long n, total = 0;
	long long b0, b1;
	double t0, end;

	if (pipe(go) == -1 || pipe(out) == -1)
		err(1, "pipe");
	t0 = now() + 1.0;	/* time for every writer to connect */
	end = t0 + secs;
	for (i = 0; i < nwriters; i++) {
		switch (fork()) {
		case -1:
			err(1, "fork");
		case 0:
			close(go[1]);
			close(out[0]);
			writer(conf, i, go[0], out[1], end);
		}
	}
	close(go[0]);
	close(out[1]);
	while (now() < t0)
		usleep(1000);
	b0 = batches(conf);
	for (i = 0; i < nwriters; i++)
		if (write(go[1], "g", 1) != 1)
			err(1, "write");
	while (read(out[0], &n, sizeof(n)) == sizeof(n))
		total += n;
	t0 = now() - t0;
	for (i = 0; i < nwriters; i++) {
		if (wait(&status) == -1)
			err(1, "wait");
		failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	close(go[1]);
	close(out[0]);
	b1 = batches(conf);
	if (failed)
		errx(1, "%d writers failed to record", failed);
	printf("%3d writers: %8.0f durable events/s  (%lu events in %.1fs, "
	    "%.1f events per fsync)\n", nwriters, total / t0, total, t0,
	    b1 > b0 ? (double)total / (double)(b1 - b0) : 0.0);
	fflush(stdout);
}

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: bench_audit [-t seconds] [-d dir] bindir\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	char tmpl[] = "bench-audit.XXXXXX", path[PATH_MAX], file[PATH_MAX];
	char errbuf[1024];
	const char *dir = NULL;
	struct as_config conf;
	int scratch = 0;
	double secs = 3;
	size_t i;
	pid_t pid;
	int c;

	while ((c = getopt(argc, argv, "d:t:")) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 't':
			secs = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1 || secs <= 0)
		usage();
	if (dir == NULL) {
		if ((dir = mkdtemp(tmpl)) == NULL)
			err(1, "mkdtemp");
		scratch = 1;
	}
	if (realpath(dir, path) == NULL)
		err(1, "%s", dir);
	join(file, sizeof(file), path, "run");
	if (mkdir(file, 0755) == -1 && errno != EEXIST)
		err(1, "%s", file);
	write_conf(path);
	join(file, sizeof(file), path, "conf.yaml");
	if (config_load(file, &conf, errbuf, sizeof(errbuf)) == -1)
		errx(1, "%s", errbuf);
	signal(SIGPIPE, SIG_IGN);
	pid = start_auditd(argv[optind], path);
	printf("log: %s/audit.jsonl\n", path);
	for (i = 0; i < sizeof(rounds) / sizeof(rounds[0]); i++)
		run(&conf, rounds[i], secs);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	if (scratch) {
		static const char *const made[] = { "audit.jsonl",
		    "conf.yaml", "run", "ckpt/checkpoint.key",
		    "ckpt/checkpoint.json", "ckpt", "checkpoint.pub", "" };

		for (i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
			join(file, sizeof(file), path, made[i]);
			if (remove(file) == -1)
				warn("%s", file);
		}
	}
	return 0;
}
