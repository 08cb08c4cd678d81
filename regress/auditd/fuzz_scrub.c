/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer: any bytes through the scrubber, as a string and as a key.
 * The input is copied to a buffer of its exact size, so a matcher that
 * reads past the end is caught; a result must say its own length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../auditd/auditd.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, *t, *key;
	size_t len;

	if ((s = malloc(size ? size : 1)) == NULL ||
	    (key = malloc(size + 1)) == NULL)
		abort();
	memcpy(s, data, size);
	if ((t = scrub_text(s, size, &len)) != NULL &&
	    memchr(s, '\0', size) == NULL && strlen(t) != len)
		abort();
	free(t);
	memcpy(key, data, size);
	key[size] = '\0';
	(void)scrub_key_is_secret(key);
	free(key);
	free(s);
	return 0;
}
