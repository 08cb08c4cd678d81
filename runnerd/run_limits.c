/* SPDX-License-Identifier: ISC */
/*
 * Which of the sandbox's limits a command ran into, for the results of
 * run_python and run_shell (a session's or a one-shot's).  Inside
 * gVisor an allocation past the address-space limit fails with ENOMEM
 * (Python raises MemoryError) and a fork or a new thread past
 * RLIMIT_NPROC with EAGAIN; gVisor counts neither anywhere runnerd can
 * read, so what the failing command printed about those errors is the
 * evidence.
 */
#include <string.h>

#include "runnerd.h"

/*
 * strerror(ENOMEM), Python's exception, and dash's and bash's words;
 * coreutils' (gnulib's xalloc_die: dd, sort).
 */
static const char *const memory_signs[] = {
	"MemoryError", "Cannot allocate memory", "memory exhausted", NULL
};
/* strerror(EAGAIN), as fork's failure prints it; dash's and Python's. */
static const char *const pids_signs[] = {
	"Resource temporarily unavailable", "Cannot fork",
	"can't start new thread", NULL
};

/* Whether the text (a JSON string, NULs and all) holds one of signs. */
static int
shows(const json_t *text, const char *const *signs)
{
	const char *s = json_string_value(text);
	size_t i, len = json_string_length(text);

	for (i = 0; s != NULL && signs[i] != NULL; i++)
		if (memmem(s, len, signs[i], strlen(signs[i])) != NULL)
			return 1;
	return 0;
}

/*
 * Sets sc's memory_limit and pids_limit (a limit the outer cgroup
 * enforced is already in memory) from the stderr of a command that
 * failed; the note for a person, or NULL.
 */
const char *
run_limits(json_t *sc, const json_t *err, int failed, int memory)
{
	int pids;

	memory = memory || (failed && shows(err, memory_signs));
	pids = failed && shows(err, pids_signs);
	json_object_set_new(sc, "memory_limit", json_boolean(memory));
	json_object_set_new(sc, "pids_limit", json_boolean(pids));
	if (memory)
		return "the memory limit (runnerd.memory) was reached: an "
		    "allocation failed";
	if (pids)
		return "the process limit (runnerd.pids) was reached: a fork "
		    "failed";
	return NULL;
}
