/* SPDX-License-Identifier: ISC */
/* libFuzzer: any configuration file; errors, never crashes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct as_config c;
	char err[1024];
	FILE *f;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz_config.%d.yaml",
		    (int)getpid());
	if ((f = fopen(path, "w")) == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	err[0] = '\0';
	if (config_load(path, &c, err, sizeof(err)) == -1 && err[0] == '\0')
		abort();	/* every refusal must say why */
	return 0;
}
