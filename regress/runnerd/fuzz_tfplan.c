/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the plan summary: the plan JSON comes out of a
 * sandbox the agent's module ran in.  The input is the plan JSON and also
 * the plan text, with the signals on, so both readings run on every input.
 *
 * Built and run by make fuzz (clang-14).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tfplan.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *patterns;
	struct tfplan_signals sig;
	char err[256], *text;
	json_t *s;

	if (patterns == NULL &&
	    (patterns = json_pack("[s, s]", "must be replaced", "delete")) ==
	    NULL)
		abort();
	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	sig.patterns = patterns;
	sig.delete_actions = 1;
	sig.code = 1;
	s = tfplan_summary(text, size, text, &sig, err, sizeof(err));
	/* Either a summary or a reason, never neither. */
	if (s == NULL && err[0] == '\0')
		abort();
	json_decref(s);
	free(text);
	return 0;
}
