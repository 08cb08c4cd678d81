/* SPDX-License-Identifier: ISC */
/*
 * auditctl verify: walks the chain straight from the files, with no
 * daemon.  Every line must be a canonical record whose seq follows the
 * one before and whose prev is the SHA-256 of the line before.  When a
 * link breaks, the next link tells which side changed: if it holds, the
 * earlier record was altered; if it breaks too, this one was.
 *
 * A chain rewritten from some record on is whole again; checkpoints
 * catch it: each log.checkpoint record must be signed by auditd's key
 * and name the digest of the record before it, and the log must reach
 * the latest checkpoint, kept outside it, with the same digest.
 *
 * A checkpoint names its log (origin); one of another log, or a log
 * signed by another key, is not compared but said so: a copy checked
 * with another suite's configuration is no tampering.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auditctl.h"
#include "cjson.h"

enum line_state { L_RECORD, L_NOTJSON, L_NOTRECORD, L_NONCANON };

struct line {
	enum line_state	 state;
	int		 is_ckpt;	/* auditd's log.checkpoint */
	int		 ckpt_ok;	/* its fields parse */
	struct ckpt	 ckpt;
	char		 origin[CKPT_ORIGIN_LEN + 1];	/* the log it names */
	uint64_t	 seq;
	char		 digest[SHA256_HEX_LEN + 1];
	char		 prev[SHA256_HEX_LEN + 1];
};

/* The last record of the files already walked. */
struct chain {
	const char	*file;
	size_t		 line;
	uint64_t	 seq;
	char		 digest[SHA256_HEX_LEN + 1];
	int		 any;
};

static char *
slurp(const char *path, size_t *len)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	char *buf;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || (buf = malloc((size_t)st.st_size + 1)) ==
	    NULL) {
		close(fd);
		return NULL;
	}
	while (got < (size_t)st.st_size &&
	    (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (got != (size_t)st.st_size) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	*len = got;
	return buf;
}

static void
line_read(struct line *l, const char *s, size_t len)
{
	json_t *j, *seq, *prev;
	const char *ev, *daemon, *o;
	char *canon;

	memset(l, 0, sizeof(*l));
	sha256_hex(s, len, l->digest);
	if ((j = cjson_parse_nul(s, len, NULL, 0)) == NULL) {
		l->state = L_NOTJSON;
		return;
	}
	seq = json_object_get(j, "seq");
	prev = json_object_get(j, "prev");
	l->state = L_NOTRECORD;
	if (json_is_integer(seq) && json_integer_value(seq) > 0 &&
	    json_is_string(prev) && json_string_length(prev) == SHA256_HEX_LEN) {
		l->seq = (uint64_t)json_integer_value(seq);
		strlcpy(l->prev, json_string_value(prev), sizeof(l->prev));
		canon = cjson_dump(j);
		l->state = canon != NULL && strlen(canon) == len &&
		    memcmp(canon, s, len) == 0 ? L_RECORD : L_NONCANON;
		free(canon);
		ev = json_string_value(json_object_get(j, "event"));
		daemon = json_string_value(json_object_get(j, "daemon"));
		l->is_ckpt = ev != NULL && daemon != NULL &&
		    strcmp(ev, CKPT_EVENT) == 0 && strcmp(daemon, "auditd") == 0;
		l->ckpt_ok = l->is_ckpt &&
		    ckpt_parse(json_object_get(j, "fields"), &l->ckpt) == 0;
		if ((o = ckpt_record_origin(j)) != NULL)
			strlcpy(l->origin, o, sizeof(l->origin));
	}
	json_decref(j);
}

static int
fail(struct verify_fail *f, const char *file, size_t line, uint64_t seq,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
fail(struct verify_fail *f, const char *file, size_t line, uint64_t seq,
    const char *fmt, ...)
{
	va_list ap;

	f->kind = VERIFY_TAMPERED;
	f->file = file;
	f->line = line;
	f->seq = seq;
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
	return 1;
}

/* lines[i]'s seq is not the one expected: reordered or missing? */
static int
seq_break(const char *file, const struct line *lines, size_t n, size_t i,
    uint64_t want, struct verify_fail *f)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (k != i && lines[k].state == L_RECORD &&
		    lines[k].seq == want)
			return fail(f, file, i + 1, lines[i].seq, "out of "
			    "order: seq %llu belongs here and is at line %zu",
			    (unsigned long long)want, k + 1);
	if (lines[i].seq == want + 1)
		return fail(f, file, i + 1, lines[i].seq, "record %llu is "
		    "missing before this line", (unsigned long long)want);
	if (lines[i].seq > want)
		return fail(f, file, i + 1, lines[i].seq, "records %llu..%llu "
		    "are missing before this line", (unsigned long long)want,
		    (unsigned long long)(lines[i].seq - 1));
	return fail(f, file, i + 1, lines[i].seq, "out of order or repeated: "
	    "seq %llu expected", (unsigned long long)want);
}

/* lines[i]'s prev is not the digest of the record before it. */
static int
link_break(const char *file, const struct line *lines, size_t n, size_t i,
    const struct chain *c, struct verify_fail *f)
{
	if (i + 1 < n && lines[i + 1].state == L_RECORD &&
	    strcmp(lines[i + 1].prev, lines[i].digest) == 0)
		return fail(f, c->file, c->line, c->seq, "altered: its digest "
		    "no longer matches the prev of seq %llu (%s:%zu)",
		    (unsigned long long)lines[i].seq, file, i + 1);
	if (i + 1 < n)
		return fail(f, file, i + 1, lines[i].seq, "altered: its prev "
		    "does not match seq %llu, nor its digest the next record",
		    (unsigned long long)c->seq);
	return fail(f, file, i + 1, lines[i].seq, "prev does not match the "
	    "digest of seq %llu (%s:%zu): one of the two was altered",
	    (unsigned long long)c->seq, c->file, c->line);
}

/* The first origin named is the log's; naming another is tampering. */
static int
follow_origin(const char *file, const struct line *l, size_t lineno,
    struct verify_sum *sum, struct verify_fail *f)
{
	if (l->origin[0] == '\0')
		return 0;
	if (!ckpt_origin_ok(l->origin))
		return fail(f, file, lineno, l->seq, "altered: %s is not a "
		    "log's name", l->origin);
	if (sum->origin[0] == '\0')
		strlcpy(sum->origin, l->origin, sizeof(sum->origin));
	else if (strcmp(sum->origin, l->origin) != 0)
		return fail(f, file, lineno, l->seq, "spliced: names log %s, "
		    "the records before are of log %s", l->origin,
		    sum->origin);
	return 0;
}

/*
 * A checkpoint record vouches for the record before it (c); the
 * checkpoint file's for the record at its seq, when it is of this log.
 */
static int
check_anchor(const char *file, const struct line *l, size_t lineno,
    const struct chain *c, const struct verify_anchor *a,
    struct verify_sum *sum, struct verify_fail *f)
{
	const struct ckpt *k = a->latest;

	if (k != NULL && k->seq == l->seq) {
		/* Which log it is, is known at the end. */
		if (k->origin[0] != '\0' && strcmp(k->origin, sum->origin) != 0)
			sum->latest_early = 1;
		else if (strcmp(k->head, l->digest) != 0)
			return fail(f, file, lineno, l->seq, "rewritten: "
			    "checkpoint at seq %llu does not match (the "
			    "checkpoint file's)", (unsigned long long)k->seq);
		else
			sum->latest_seq = k->seq;
	}
	if (!l->is_ckpt || a->key == NULL)
		return 0;
	if (!l->ckpt_ok)
		return fail(f, file, lineno, l->seq, "altered: a checkpoint "
		    "record without its fields");
	if (c->any && (l->ckpt.seq != c->seq ||
	    strcmp(l->ckpt.head, c->digest) != 0))
		return fail(f, file, lineno, l->seq, "rewritten: checkpoint "
		    "at seq %llu does not match", (unsigned long long)
		    l->ckpt.seq);
	/* Signed by the key its log names, not ours: not ours to check. */
	if (l->ckpt.origin[0] != '\0' &&
	    strcmp(l->ckpt.key_id, a->key_id) != 0 &&
	    strncmp(l->ckpt.origin + sizeof(CKPT_ORIGIN_PREFIX) - 1,
	    l->ckpt.key_id, CKPT_KEYID_LEN) == 0) {
		sum->foreign++;
		return 0;
	}
	if (ckpt_verify(a->key, &l->ckpt) == -1)
		return fail(f, file, lineno, l->seq, "forged: checkpoint at "
		    "seq %llu: bad signature (or key %s is not ours)",
		    (unsigned long long)l->ckpt.seq, l->ckpt.key_id);
	sum->checkpoints++;
	return 0;
}

static int
verify_lines(const char *file, const struct line *lines, size_t n,
    const struct verify_anchor *a, struct chain *c, struct verify_sum *sum,
    struct verify_fail *f)
{
	static const char *const what[] = { NULL, "not valid JSON: altered "
	    "or torn", "not a record (no seq or prev)", "altered: not in "
	    "canonical form" };
	uint64_t want;
	size_t i;

	for (i = 0; i < n; i++) {
		want = c->any ? c->seq + 1 : lines[i].seq;
		if (lines[i].state != L_RECORD)
			return fail(f, file, i + 1, lines[i].seq ? lines[i].seq :
			    want, "%s", what[lines[i].state]);
		if (lines[i].seq != want)
			return seq_break(file, lines, n, i, want, f);
		if (c->any && strcmp(lines[i].prev, c->digest) != 0)
			return link_break(file, lines, n, i, c, f);
		if (!c->any && lines[i].seq == 1 &&
		    strspn(lines[i].prev, "0") != SHA256_HEX_LEN)
			return fail(f, file, i + 1, 1, "the first record does "
			    "not start the chain (prev is not all zeroes)");
		if (follow_origin(file, &lines[i], i + 1, sum, f) ||
		    check_anchor(file, &lines[i], i + 1, c, a, sum, f))
			return 1;
		if (!c->any) {
			sum->first_seq = lines[i].seq;
			sum->anchored = lines[i].seq == 1;
		}
		c->file = file;
		c->line = i + 1;
		c->seq = lines[i].seq;
		memcpy(c->digest, lines[i].digest, sizeof(c->digest));
		c->any = 1;
		sum->records++;
	}
	return 0;
}

static int
verify_file(const char *file, const struct verify_anchor *a,
    struct chain *c, struct verify_sum *sum, struct verify_fail *f)
{
	struct line *lines = NULL;
	size_t len, n = 0, i, start;
	char *buf;
	int r;

	if ((buf = slurp(file, &len)) == NULL)
		return -1;
	for (i = 0; i < len; i++)
		n += buf[i] == '\n';
	if (n > 0 && (lines = calloc(n, sizeof(*lines))) == NULL) {
		free(buf);
		return -1;
	}
	for (i = start = n = 0; i < len; i++)
		if (buf[i] == '\n') {
			line_read(&lines[n++], buf + start, i - start);
			start = i + 1;
		}
	r = verify_lines(file, lines, n, a, c, sum, f);
	if (r == 0 && start < len)
		r = fail(f, file, n + 1, c->seq + 1, "torn: %zu bytes after the "
		    "last record (auditd cuts them at start-up)", len - start);
	free(lines);
	free(buf);
	return r;
}

/* Files in chain order: rotated ones first, the current one last. */
int
verify_files(char **files, size_t nfiles, const struct verify_anchor *a,
    struct verify_sum *sum, struct verify_fail *f)
{
	struct chain c;
	size_t i;
	int r;

	memset(&c, 0, sizeof(c));
	memset(sum, 0, sizeof(*sum));
	memset(f, 0, sizeof(*f));
	for (i = 0; i < nfiles; i++) {
		if ((r = verify_file(files[i], a, &c, sum, f)) != 0) {
			if (r == -1)
				fail(f, files[i], 0, 0, "%s", strerror(errno));
			return r;
		}
		sum->files++;
	}
	sum->last_seq = c.seq;
	strlcpy(sum->head, c.any ? c.digest : "", sizeof(sum->head));
	/* Not this log's checkpoint, or key: nothing compared. */
	if (a->latest != NULL && a->latest->origin[0] != '\0' &&
	    strcmp(a->latest->origin, sum->origin) != 0)
		fail(f, files[nfiles - 1], 0, c.seq, "checkpoint is of log %s; "
		    "this log is %s", a->latest->origin, sum->origin[0] !=
		    '\0' ? sum->origin : "unnamed");
	else if (sum->foreign > 0)
		fail(f, files[nfiles - 1], 0, c.seq, "this log is %s, signed "
		    "by key %.16s; the key given is %s", sum->origin,
		    sum->origin + sizeof(CKPT_ORIGIN_PREFIX) - 1, a->key_id);
	if (f->kind != 0) {
		f->kind = VERIFY_OTHERLOG;
		return 1;
	}
	if (a->latest == NULL)
		return 0;
	if (sum->latest_early)
		return fail(f, files[nfiles - 1], 0, a->latest->seq, "altered: "
		    "the log is named only after seq %llu, which its "
		    "checkpoint covers", (unsigned long long)a->latest->seq);
	if (a->key != NULL && ckpt_verify(a->key, a->latest) == -1)
		return fail(f, files[nfiles - 1], 0, a->latest->seq, "forged: "
		    "the checkpoint file's signature does not hold");
	if (c.seq < a->latest->seq) {
		fail(f, files[nfiles - 1], 0, c.seq, "truncated: the log ends "
		    "at seq %llu, a checkpoint signed seq %llu",
		    (unsigned long long)c.seq,
		    (unsigned long long)a->latest->seq);
		f->kind = VERIFY_TRUNCATED;
		return 1;
	}
	sum->compared = 1;
	return 0;
}
