/* SPDX-License-Identifier: ISC */
/*
 * Canonical JSON and SHA-256: what approvals bind to and what the audit
 * chain links with.  Canonical form: object keys sorted by their UTF-8
 * bytes, no insignificant whitespace, strings as UTF-8 with only the
 * escapes JSON requires, integers in decimal.  Input with duplicate keys
 * is refused, so one text cannot mean two things.
 */
#ifndef AS_CJSON_H
#define AS_CJSON_H

#include <stddef.h>
#include <jansson.h>

#define SHA256_HEX_LEN	64

json_t	*cjson_parse(const void *, size_t, char *, size_t);
json_t	*cjson_parse_nul(const void *, size_t, char *, size_t);
char	*cjson_dump(const json_t *);
void	 sha256_preload(void);
void	 hex_encode(const void *, size_t, char *);
void	 sha256_hex(const void *, size_t, char [SHA256_HEX_LEN + 1]);
int	 cjson_digest(const json_t *, char [SHA256_HEX_LEN + 1]);
int	 sha256_file_hex(int, char [SHA256_HEX_LEN + 1]);
int	 sha256_hex_ok(const char *);
json_t	*content_summary(const char *, size_t, int);
char	*base64_encode(const void *, size_t);
unsigned char *base64_decode(const char *, size_t, size_t *);

#endif
