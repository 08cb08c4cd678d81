/* SPDX-License-Identifier: ISC */
/*
 * Checkpoints anchor the chain outside the log: auditd signs its head
 * with a key no writer of the log file holds, appends the signature to
 * the chain, keeps the latest in a file of its own and may send it to a
 * witness (syslog).  At start-up the log must still reach that latest
 * checkpoint, with the same digest.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/pem.h>

#include "auditd.h"
#include "io.h"
#include "log.h"
#include "sandbox.h"

static EVP_PKEY			*sign_key;
static struct forward		 witness;

static int
key_generate(const char *path)
{
	EVP_PKEY *k;
	FILE *f;
	int fd, ok;

	/* O_EXCL: never overwrite a key that signed earlier checkpoints. */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400)) ==
	    -1)
		return -1;
	if ((k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")) == NULL ||
	    (f = fdopen(fd, "w")) == NULL) {
		EVP_PKEY_free(k);
		close(fd);
		(void)unlink(path);
		errno = EIO;
		return -1;
	}
	ok = PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) == 1 &&
	    fflush(f) == 0 && fsync(fileno(f)) == 0;
	fclose(f);
	EVP_PKEY_free(k);
	if (!ok) {
		(void)unlink(path);
		errno = EIO;
		return -1;
	}
	log_info("%s: new checkpoint key", path);
	return 0;
}

/* Whether path holds exactly buf. */
static int
file_equals(const char *path, const char *buf, size_t len)
{
	char have[1024];
	ssize_t n;
	int fd;

	if (len > sizeof(have) || (fd = open(path, O_RDONLY | O_CLOEXEC)) ==
	    -1)
		return 0;
	n = read(fd, have, sizeof(have));
	close(fd);
	return n == (ssize_t)len && memcmp(have, buf, len) == 0;
}

/* tmp, fsync, rename, fsync the directory: readers never see half. */
static int
write_atomic(const char *path, const char *buf, size_t len)
{
	char tmp[PATH_MAX + 8];
	int fd, ok;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ok = (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) != -1 && write_full(fd, buf, len) == 0 &&
	    fchmod(fd, 0644) == 0 && fsync(fd) == 0;
	if (fd != -1)
		close(fd);
	if (!ok || rename(tmp, path) == -1) {
		(void)unlink(tmp);
		return -1;
	}
	return alog_sync_dir(path);
}

/* Rewritten only when it differs. */
static int
pubkey_write(const char *path)
{
	char *pem;
	BIO *b;
	long len;
	int r;

	if ((b = BIO_new(BIO_s_mem())) == NULL ||
	    PEM_write_bio_PUBKEY(b, sign_key) != 1) {
		BIO_free(b);
		errno = EIO;
		return -1;
	}
	len = BIO_get_mem_data(b, &pem);
	if (file_equals(path, pem, (size_t)len)) {
		BIO_free(b);
		return 0;
	}
	if ((r = write_atomic(path, pem, (size_t)len)) == 0)
		log_info("%s: checkpoint public key written", path);
	BIO_free(b);
	return r;
}

/*
 * Before privileges are dropped: the key is read (made at first start)
 * and kept in memory, the public key written beside the configuration.
 */
void
ckpt_setup(const struct auditd_conf *ac)
{
	FILE *f;

	if (access(ac->key, F_OK) == -1 && key_generate(ac->key) == -1)
		fatal("%s: cannot make the checkpoint key", ac->key);
	if ((f = fopen(ac->key, "re")) == NULL)
		fatal("%s", ac->key);
	sign_key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (sign_key == NULL || EVP_PKEY_get_id(sign_key) != EVP_PKEY_ED25519)
		fatalx("%s: not an Ed25519 private key", ac->key);
	if (priv_give(ac->key, ac->user) == -1)
		fatal("%s", ac->key);
	/*
	 * make install writes it; where the configuration's directory is
	 * read-only to us (systemd's ProtectSystem=strict) a missing one is
	 * said, not fatal: the log is signed all the same.
	 */
	if (pubkey_write(ac->pubkey) == -1)
		log_warn("%s: cannot write the checkpoint public key; "
		    "auditctl verify -k needs it", ac->pubkey);
	if (forward_open(&witness, ac->checkpoint_syslog) == -1)
		fatal("checkpoint_syslog %s", ac->checkpoint_syslog);
}

/* A checkpoint of the head as it is now, signed. */
int
ckpt_make(const struct auditlog *l, struct ckpt *c)
{
	struct timespec ts;
	struct tm tm;

	memset(c, 0, sizeof(*c));
	c->seq = l->seq;
	memcpy(c->head, l->head, sizeof(c->head));
	memcpy(c->origin, l->origin, sizeof(c->origin));
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(c->time, sizeof(c->time), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return ckpt_sign(sign_key, c);
}

/*
 * After the checkpoint record is durable: the note to the file, then
 * to the witness, which may cosign it.
 */
void
ckpt_publish(const struct ckpt *c)
{
	const char *path = auditd_conf.auditd.checkpoint_file;
	char note[CKPT_NOTE_MAX];
	int n;

	if ((n = ckpt_note(c, note, sizeof(note))) == -1) {
		log_warnx("checkpoint of seq %" PRIu64 ": no note", c->seq);
		return;
	}
	if (write_atomic(path, note, (size_t)n) == -1)
		log_warn("%s: checkpoint of seq %" PRIu64 " not written", path,
		    c->seq);
	forward_send(&witness, "checkpoint", c->time, note, (size_t)n);
}

/* The digest of the record at seq in the current file; 0 when absent. */
struct find {
	uint64_t	seq;
	char		digest[SHA256_HEX_LEN + 1];
	int		found;
};

static int
find_cb(const char *line, size_t len, void *arg)
{
	struct find *f = arg;
	json_t *j, *s;

	if ((j = cjson_parse_nul(line, len, NULL, 0)) == NULL)
		return 1;
	s = json_object_get(j, "seq");
	if (json_is_integer(s) && (uint64_t)json_integer_value(s) == f->seq) {
		sha256_hex(line, len, f->digest);
		f->found = 1;
	}
	json_decref(j);
	return 1;
}

/*
 * Compares the log just opened with the latest checkpoint.  On a
 * mismatch, *note gets the evidence and *event log.truncated or
 * log.rewritten; the head then continues from the checkpoint.
 */
int
ckpt_check(struct auditlog *l, struct ckpt *cp, const char **event,
    json_t **note)
{
	struct ckpt c;
	struct find f = { 0 };
	off_t off;

	*note = NULL;
	if (ckpt_file_read(auditd_conf.auditd.checkpoint_file, &c) == -1) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s", auditd_conf.auditd.checkpoint_file);
		return -1;
	}
	if (ckpt_verify(sign_key, &c) == -1) {
		log_warnx("%s: not signed by our key",
		    auditd_conf.auditd.checkpoint_file);
		errno = EINVAL;
		return -1;
	}
	*cp = c;
	f.seq = c.seq;
	if (c.origin[0] != '\0' && l->origin[0] != '\0' &&
	    strcmp(c.origin, l->origin) != 0) {
		/* The file is another log than the one auditd signed. */
		log_warnx("%s: names log %s, the checkpoint is of log %s",
		    l->path, l->origin, c.origin);
		*event = "log.rewritten";
	} else if (c.seq > l->seq)
		*event = "log.truncated";
	else {
		/* The checkpoint is usually within the last few lines. */
		if (alog_tail_offset(l, (size_t)(l->seq - c.seq + 1), &off) ==
		    -1 || alog_scan(l, off, find_cb, &f) == -1)
			return -1;
		/* Covered by a rotated file: nothing here to compare. */
		if (!f.found || strcmp(f.digest, c.head) == 0) {
			if (l->origin[0] == '\0')
				memcpy(l->origin, c.origin, sizeof(l->origin));
			return 0;
		}
		*event = "log.rewritten";
	}
	log_warnx("%s: %s: checkpoint signed seq %" PRIu64 " (%s), the log "
	    "ends at seq %" PRIu64, l->path, *event, c.seq, c.head, l->seq);
	*note = json_pack("{s:I, s:I, s:s*, s:s*, s:s*, s:o}", "seq_expected",
	    (json_int_t)c.seq, "seq_found", (json_int_t)l->seq,
	    "digest_found", f.found ? f.digest : NULL, "origin_found",
	    l->origin[0] != '\0' ? l->origin : NULL, "origin",
	    c.origin[0] != '\0' ? c.origin : NULL, "checkpoint",
	    ckpt_json(&c));
	/* The new segment goes on with the checkpoint's log. */
	memcpy(l->origin, c.origin, sizeof(l->origin));
	return 0;
}

static int
origin_cb(const char *line, size_t len, void *arg)
{
	struct auditlog *l = arg;
	const char *o;
	json_t *j;

	if (memmem(line, len, "\"origin\":", 9) == NULL ||
	    (j = cjson_parse_nul(line, len, NULL, 0)) == NULL)
		return 0;
	if ((o = ckpt_record_origin(j)) != NULL && ckpt_origin_ok(o))
		strlcpy(l->origin, o, sizeof(l->origin));
	json_decref(j);
	return l->origin[0] != '\0';
}

/*
 * The origin the current file names: in its first record when auditd
 * made the file (audit.origin, audit.rotated, log.truncated ...), in a
 * later audit.origin for a log from before origins.  1 when named.
 */
int
ckpt_origin_find(struct auditlog *l)
{
	l->origin[0] = '\0';
	if (alog_scan(l, 0, origin_cb, l) == -1)
		return -1;
	return l->origin[0] != '\0';
}

/*
 * For a file that names no origin: the one the checkpoint gave, else a
 * new one (a new log, or one from before origins), in an audit.origin
 * record with the key that signs the log's checkpoints.
 */
int
ckpt_origin_record(struct auditlog *l)
{
	char id[CKPT_KEYID_LEN + 1];

	if ((l->origin[0] == '\0' && ckpt_origin_new(sign_key, l->origin) ==
	    -1) || ckpt_key_id(sign_key, id) == -1)
		return -1;
	log_info("%s: log %s", l->path, l->origin);
	return writer_own_event("audit.origin", json_pack("{s:s, s:s}",
	    "origin", l->origin, "key_id", id));
}
