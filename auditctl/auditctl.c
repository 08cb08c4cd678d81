/* SPDX-License-Identifier: ISC */
/*
 * auditctl: the operator's view of the audit log.  tail, show, stats
 * and rotate ask auditd over audit.sock (readers only); verify reads
 * the files itself and needs no daemon.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "audit.h"
#include "auditctl.h"
#include "cjson.h"
#include "ctl.h"
#include "log.h"
#include "sock.h"

#define VERIFY_MAXFILES	256

struct ctx {
	const char		*conffile;
	const struct output	*out;
	struct as_config	 conf;
	struct channel		 ch;
};

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: auditctl [-j] [-f config] command\n"
	    "commands:\n"
	    "\tping\n"
	    "\ttail [-f] [-n count]\n"
	    "\tshow --request-id id [--json]\n"
	    "\tverify [-k pubkey] [-c checkpoint] [-f logfile ...]\n"
	    "\texport [--format jsonl|ocsf] [--since time] [--request-id id]\n"
	    "\t       [-f logfile ...]\n"
	    "\tstats\n"
	    "\trotate\n");
	exit(2);
}

/*
 * One request, then MSG_AUDIT_RECORDs printed as they come until
 * MSG_AUDIT_END (or forever, for tail -f).  Returns the records seen,
 * or -1.
 */
static long
stream(struct ctx *x, uint32_t type, json_t *req, int forever,
    void (*print)(const json_t *))
{
	char *payload = NULL, err[128];
	struct msg m;
	json_t *j;
	long n = 0;

	if (req != NULL && (payload = cjson_dump(req)) == NULL)
		fatalx("out of memory");
	json_decref(req);
	ctl_open(&x->ch, x->conffile, "audit.sock", &x->conf);
	if (ctl_request(&x->ch, type, payload, payload ? strlen(payload) : 0,
	    &m) == -1) {
		free(payload);
		return -1;
	}
	free(payload);
	for (;;) {
		if (m.hdr.type == MSG_AUDIT_END)
			return n;
		if (ctl_error(&m))
			return -1;
		if (m.hdr.type != MSG_AUDIT_RECORD) {
			log_warnx("unexpected %s reply",
			    msg_type_name(m.hdr.type));
			return -1;
		}
		if ((j = cjson_parse_nul(m.data, m.len, err, sizeof(err))) ==
		    NULL) {
			log_warnx("bad record from auditd: %s", err);
			return -1;
		}
		print(j);
		json_decref(j);
		n++;
		if (channel_recv_sync(&x->ch, &m, forever ? -1 :
		    CTL_TIMEOUT_MS) == -1) {
			log_warn("audit.sock");
			return -1;
		}
	}
}

static int
cmd_ping(struct ctx *x, int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		usage();
	ctl_open(&x->ch, x->conffile, "audit.sock", &x->conf);
	return ctl_ping(&x->ch);
}

static int
cmd_tail(struct ctx *x, int argc, char **argv)
{
	const char *errstr;
	long long count = 10;
	int c, follow = 0;

	while ((c = getopt(argc, argv, "fn:")) != -1) {
		switch (c) {
		case 'f':
			follow = 1;
			break;
		case 'n':
			count = strtonum(optarg, 0, 10000, &errstr);
			if (errstr != NULL)
				fatalx("count %s: %s", optarg, errstr);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	return stream(x, MSG_AUDIT_TAIL, json_pack("{s:I, s:b}", "count",
	    (json_int_t)count, "follow", follow), follow, x->out->record) ==
	    -1;
}

static int
cmd_show(struct ctx *x, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "request-id", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	const char *rid = NULL;
	uint64_t id;
	long n;
	int c;

	while ((c = getopt_long(argc, argv, "jr:", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			x->out = &output_json;
			break;
		case 'r':
			rid = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || rid == NULL)
		usage();
	if (reqid_parse(rid, &id) == -1)
		fatalx("%s: not a request id (req-<16 hex digits>)", rid);
	n = stream(x, MSG_AUDIT_SHOW, json_pack("{s:s}", "request_id", rid), 0,
	    x->out->record);
	if (n == 0)
		log_warnx("no records for %s", rid);
	return n <= 0;
}

static int
cmd_object(struct ctx *x, int argc, uint32_t type)
{
	if (argc != 1)
		usage();
	return stream(x, type, NULL, 0, x->out->object) == -1;
}

static int
cmd_stats(struct ctx *x, int argc, char **argv)
{
	(void)argv;
	return cmd_object(x, argc, MSG_AUDIT_STATS);
}

static int
cmd_rotate(struct ctx *x, int argc, char **argv)
{
	(void)argv;
	return cmd_object(x, argc, MSG_AUDIT_ROTATE);
}

/* auditd's head of the chain, or 0 when it cannot be asked. */
static int
daemon_head(struct ctx *x, uint64_t *seq, char head[SHA256_HEX_LEN + 1])
{
	char path[PATH_MAX];
	struct channel ch;
	struct msg m;
	json_t *j = NULL;
	int fd, r = 0;

	if (config_socket_path(&x->conf, "audit.sock", path, sizeof(path)) ==
	    -1 || (fd = sock_connect(path)) == -1)
		return 0;
	channel_init(&ch, fd);
	if (channel_send_sync(&ch, MSG_AUDIT_STATS, 0, -1, NULL, 0,
	    CTL_TIMEOUT_MS) == 0 &&
	    channel_recv_sync(&ch, &m, CTL_TIMEOUT_MS) == 0 &&
	    m.hdr.type == MSG_AUDIT_RECORD &&
	    (j = cjson_parse(m.data, m.len, NULL, 0)) != NULL &&
	    json_is_integer(json_object_get(j, "seq")) &&
	    json_is_string(json_object_get(j, "head"))) {
		*seq = (uint64_t)json_integer_value(json_object_get(j, "seq"));
		strlcpy(head, json_string_value(json_object_get(j, "head")),
		    SHA256_HEX_LEN + 1);
		r = 1;
	}
	json_decref(j);
	close(fd);
	channel_clear(&ch);
	return r;
}

/*
 * The last record has no successor to vouch for it, and a cut tail
 * leaves a whole chain.  When auditd runs, its head settles both: asked
 * before the file is read (the file may only have grown since) and
 * after (at the same seq the digests must be equal).
 */
static int
verify_live(struct ctx *x, char *file, const struct verify_anchor *a,
    struct verify_sum *sum, struct verify_fail *f)
{
	char head[SHA256_HEX_LEN + 1];
	uint64_t before, after;
	int r;

	if (!daemon_head(x, &before, head))
		return verify_files(&file, 1, a, sum, f);
	if ((r = verify_files(&file, 1, a, sum, f)) != 0)
		return r;
	f->kind = VERIFY_TAMPERED;
	f->file = file;
	f->line = sum->records;
	f->seq = sum->last_seq;
	if (sum->last_seq < before) {
		snprintf(f->what, sizeof(f->what), "truncated: records after "
		    "this one are missing: auditd wrote up to seq %llu",
		    (unsigned long long)before);
		f->kind = VERIFY_TRUNCATED;
		return 1;
	}
	if (!daemon_head(x, &after, head))
		return 0;
	if (sum->last_seq > after) {
		snprintf(f->what, sizeof(f->what), "not written by auditd, "
		    "whose last record is seq %llu", (unsigned long long)after);
		return 1;
	}
	if (sum->records > 0 && sum->last_seq == after &&
	    strcmp(head, sum->head) != 0) {
		snprintf(f->what, sizeof(f->what), "altered: its digest is not "
		    "auditd's head %s", head);
		return 1;
	}
	sum->daemon_checked = sum->records > 0 && sum->last_seq == after;
	return 0;
}

/*
 * The public key and the latest checkpoint: given, else configured.
 * Without a key the chain is still walked, but the result cannot be
 * "intact": nothing anchors it.  Without a configuration nothing is
 * guessed: the defaults may name another suite's checkpoint.
 */
static void
verify_anchor(struct ctx *x, const char *keyfile, const char *ckfile,
    int noconf, struct ckpt *latest, struct verify_anchor *a)
{
	const char *kf = keyfile ? keyfile : x->conf.auditd.pubkey;
	const char *cf = ckfile ? ckfile : x->conf.auditd.checkpoint_file;

	memset(a, 0, sizeof(*a));
	if ((keyfile != NULL || !noconf) &&
	    (a->key = ckpt_pubkey_load(kf)) == NULL && keyfile != NULL)
		fatal("%s: not an Ed25519 public key", kf);
	if (a->key != NULL && ckpt_key_id(a->key, a->key_id) == -1)
		fatalx("%s: cannot read the key", kf);
	if ((ckfile != NULL || !noconf) && ckpt_file_read(cf, latest) == 0)
		a->latest = latest;
	else if (ckfile != NULL)
		fatal("%s: not a checkpoint", cf);
	if (noconf && keyfile == NULL)
		log_warnx("no configuration (%s): the chain alone is checked; "
		    "give -k and -c to compare a checkpoint", x->conffile);
	else if (a->key == NULL)
		log_warn("no public key to check checkpoints with (%s); give "
		    "-k, or install auditd's", kf);
}

/* -f FILE, for verify and export: the files in chain order. */
static void
file_arg(char **files, size_t *n, char *file)
{
	if (*n == VERIFY_MAXFILES)
		fatalx("at most %d files", VERIFY_MAXFILES);
	files[(*n)++] = file;
}

/* Exit 0 only when every file given, in order, forms one whole chain. */
static int
cmd_verify(struct ctx *x, int argc, char **argv)
{
	char *files[VERIFY_MAXFILES], err[1024];
	const char *keyfile = NULL, *ckfile = NULL;
	struct verify_anchor a;
	struct verify_sum sum;
	struct verify_fail f;
	struct ckpt latest;
	size_t n = 0;
	int c, r, noconf = 0;

	while ((c = getopt(argc, argv, "c:f:k:")) != -1) {
		switch (c) {
		case 'c':
			ckfile = optarg;
			break;
		case 'f':
			file_arg(files, &n, optarg);
			break;
		case 'k':
			keyfile = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	/* Offline, on a copy, there may be no configuration: defaults. */
	if (config_load(x->conffile, &x->conf, err, sizeof(err)) == -1) {
		if (n == 0 || errno != ENOENT)
			fatalx("%s", err);
		config_defaults(&x->conf);
		noconf = 1;
	}
	verify_anchor(x, keyfile, ckfile, noconf, &latest, &a);
	if (n == 0)
		r = verify_live(x, x->conf.auditd.log, &a, &sum, &f);
	else
		r = verify_files(files, n, &a, &sum, &f);
	EVP_PKEY_free(a.key);
	if (r == -1)
		f.kind = VERIFY_ERROR;
	if (r != 0) {
		x->out->broken(&f);
		return f.kind;
	}
	x->out->verified(&sum);
	return a.key != NULL ? VERIFY_INTACT : VERIFY_ERROR;
}

/* Records for a SIEM, from the files: as they are, or as OCSF events. */
static int
cmd_export(struct ctx *x, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "since", required_argument, NULL, 's' },
		{ "request-id", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	char *files[VERIFY_MAXFILES], err[1024];
	const char *rid = NULL, *format = "jsonl";
	time_t since = -1;
	uint64_t id;
	size_t n = 0, skipped;
	long written;
	int c;

	while ((c = getopt_long(argc, argv, "F:f:r:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			format = optarg;
			break;
		case 'f':
			file_arg(files, &n, optarg);
			break;
		case 'r':
			rid = optarg;
			if (reqid_parse(rid, &id) == -1)
				fatalx("%s: not a request id (req-<16 hex "
				    "digits>)", rid);
			break;
		case 's':
			if ((since = export_time(optarg)) == -1)
				fatalx("%s: not a time (YYYY-MM-DDTHH:MM:SSZ)",
				    optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || (strcmp(format, "jsonl") != 0 &&
	    strcmp(format, "ocsf") != 0))
		usage();
	if (n == 0) {
		if (config_load(x->conffile, &x->conf, err, sizeof(err)) == -1)
			fatalx("%s", err);
		files[n++] = x->conf.auditd.log;
	}
	if ((written = export_files(files, n, strcmp(format, "ocsf") == 0,
	    since, rid, stdout, &skipped)) == -1)
		fatal("export");
	if (skipped > 0)
		log_warnx("%zu lines that are not records were left out",
		    skipped);
	return 0;
}

static const struct command {
	const char	*name;
	int		(*run)(struct ctx *, int, char **);
} commands[] = {
	{ "ping", cmd_ping },
	{ "tail", cmd_tail },
	{ "show", cmd_show },
	{ "verify", cmd_verify },
	{ "export", cmd_export },
	{ "stats", cmd_stats },
	{ "rotate", cmd_rotate },
};

int
main(int argc, char *argv[])
{
	struct ctx x;
	size_t i;
	int json = 0, first;

	memset(&x, 0, sizeof(x));
	x.conffile = CONF_DEFAULT;
	log_procinit("auditctl");
	log_init(1, LOG_USER);
	if ((first = ctl_options(argc, argv, &x.conffile, &json)) == -1)
		usage();
	x.out = json ? &output_json : &output_text;
	argc -= first;
	argv += first;
	if (argc < 1)
		usage();
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[0], commands[i].name) == 0) {
			optind = 1;
			return commands[i].run(&x, argc, argv);
		}
	usage();
}
