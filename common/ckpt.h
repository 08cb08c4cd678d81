/*
 * Signed checkpoints of the audit chain: auditd signs (seq, head, time)
 * with its Ed25519 key; auditctl and auditd check them with the public
 * key.  Shared so that both sides build one canonical message.
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

struct ckpt {
	uint64_t	seq;		/* the last record it covers */
	char		head[SHA256_HEX_LEN + 1];	/* that record's digest */
	char		time[40];
	char		key_id[CKPT_KEYID_LEN + 1];
	char		sig[CKPT_SIG_LEN + 1];
};

EVP_PKEY *ckpt_pubkey_load(const char *);
int	 ckpt_key_id(EVP_PKEY *, char [CKPT_KEYID_LEN + 1]);
int	 ckpt_sign(EVP_PKEY *, struct ckpt *);
int	 ckpt_verify(EVP_PKEY *, const struct ckpt *);
json_t	*ckpt_json(const struct ckpt *);
int	 ckpt_parse(const json_t *, struct ckpt *);
int	 ckpt_file_read(const char *, struct ckpt *);

#endif
