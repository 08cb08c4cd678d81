/* SPDX-License-Identifier: ISC */
/*
 * Signed checkpoints of the audit chain: auditd signs (origin, seq,
 * head) with its Ed25519 key as a C2SP signed note; auditctl and auditd
 * check them with the public key.  Shared so that both sides build one
 * canonical message.  The first form (v1: seq, head, time, JSON) is
 * still read and checked.
 */
#ifndef AS_CKPT_H
#define AS_CKPT_H

#include <stdint.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "cjson.h"

#define CKPT_EVENT	"log.checkpoint"
#define CKPT_KEYID_LEN	16	/* hex digits of SHA-256(public key) */
#define CKPT_SIG_LEN	88	/* base64 of a 64-byte Ed25519 signature */
/* A log's name: "agent-sandbox/audit/<key id>/<32 random hex digits>". */
#define CKPT_ORIGIN_PREFIX	"agent-sandbox/audit/"
#define CKPT_ORIGIN_LEN	\
	    (sizeof(CKPT_ORIGIN_PREFIX) - 1 + CKPT_KEYID_LEN + 1 + 32)
#define CKPT_NOTE_MAX	512	/* our note, with our signature alone */

struct ckpt {
	uint64_t	seq;		/* the last record it covers */
	char		head[SHA256_HEX_LEN + 1];	/* that record's digest */
	char		origin[CKPT_ORIGIN_LEN + 1];	/* "" in the v1 form */
	char		time[40];	/* signed in v1 only */
	char		key_id[CKPT_KEYID_LEN + 1];
	char		sig[CKPT_SIG_LEN + 1];
	int		has_key_hash;	/* the note's key ID, in key_hash */
	unsigned char	key_hash[4];
};

EVP_PKEY *ckpt_pubkey_load(const char *);
int	 ckpt_key_id(EVP_PKEY *, char [CKPT_KEYID_LEN + 1]);
int	 ckpt_origin_new(EVP_PKEY *, char [CKPT_ORIGIN_LEN + 1]);
int	 ckpt_origin_ok(const char *);
const char *ckpt_record_origin(const json_t *);
int	 ckpt_sign(EVP_PKEY *, struct ckpt *);
int	 ckpt_verify(EVP_PKEY *, const struct ckpt *);
int	 ckpt_note(const struct ckpt *, char *, size_t);
json_t	*ckpt_json(const struct ckpt *);
int	 ckpt_parse(const json_t *, struct ckpt *);
int	 ckpt_file_read(const char *, struct ckpt *);

#endif
