/* SPDX-License-Identifier: ISC */
/*
 * bench_scrub: what auditd's scrubber costs per record, for a typical
 * tool.request, a 4 KiB shell output of ordinary text, a 4 KiB one
 * dense with near-misses (prefixes of every shape, key=value pairs,
 * URLs) that make each matcher look further, and 4 KiB of JSON-escaped
 * log lines with URL escapes, which are matched a second time decoded.
 *
 *	bench_scrub [-n records]
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../auditd/auditd.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A 4 KiB string of word repeated. */
static json_t *
filled(const char *word)
{
	char buf[4097];
	size_t n = 0, w = strlen(word);

	while (n + w < sizeof(buf)) {
		memcpy(buf + n, word, w);
		n += w;
	}
	return json_pack("{s:s, s:{s:s#}}", "tool", "run_shell", "result",
	    "stdout", buf, (int)n);
}

static void
measure(const char *what, json_t *rec, long n)
{
	json_t *out;
	double t0;
	long i;

	if (rec == NULL)
		errx(1, "json_pack");
	t0 = now();
	for (i = 0; i < n; i++) {
		if ((out = scrub_value(rec)) == NULL)
			errx(1, "scrub_value");
		json_decref(out);
	}
	printf("  %-34s %8.0f ns per record\n", what, (now() - t0) / n * 1e9);
	json_decref(rec);
}

int
main(int argc, char *argv[])
{
	const char *errstr;
	long n = 20000;
	int c;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		switch (c) {
		case 'n':
			n = strtonum(optarg, 1, 100000000, &errstr);
			if (errstr != NULL)
				errx(1, "-n %s: %s", optarg, errstr);
			break;
		default:
			fprintf(stderr, "usage: bench_scrub [-n records]\n");
			return 1;
		}
	}
	measure("tool.request, 8 fields", json_pack("{s:s, s:s, s:s, "
	    "s:{s:s, s:i}, s:s, s:i}", "tool", "run_shell", "request_id",
	    "req-0123456789abcdef", "session", "ses-00ff00ff00ff00ff",
	    "arguments", "command", "cd /workspace && make test 2>&1 | "
	    "tail -20", "timeout", 60, "digest", "9f4c6b51ff487c32d9aa740540"
	    "e50d1b2ec0fbaa82e01d5ba3021e91cfa7b617", "n", 1), n);
	measure("4 KiB of shell output", filled("drwxr-xr-x 2 root root "
	    "4096 Dec  1 03:39 workspace/src\n"), n / 10);
	measure("4 KiB dense with near-misses", filled("sk-learn ghp_x "
	    "s.a AKIA1 eyJhbGci.x token_ttl=60 http://h:80/ "
	    "-----BEGIN CERT LS0t AIza "), n / 10);
	measure("4 KiB of escaped JSON lines", filled("{\\\"level\\\":"
	    "\\\"info\\\",\\\"msg\\\":\\\"GET /api/v1/pods?limit=500"
	    "%26watch%3D0 200\\\"}\\n"), n / 10);
	return 0;
}
