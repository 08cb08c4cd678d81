/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the reading of a module's files for its module
 * calls (helperlib/tfsource.c): every byte of them is the agent's.  The
 * first byte chooses HCL or JSON; the rest is the file.  Either it
 * passes or it is refused with a reason, never neither.
 *
 * Built and run by make fuzz (clang-14).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tfsource.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tf_facts facts = { 0, "" };
	char why[512];

	if (size == 0)
		return 0;
	why[0] = '\0';
	if (!tf_sources_ok(data[0] & 1 ? "m/main.tf.json" : "m/main.tf",
	    (const char *)data + 1, size - 1, &facts, why, sizeof(why)) &&
	    why[0] == '\0')
		abort();
	return 0;
}
