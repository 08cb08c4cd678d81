/* SPDX-License-Identifier: ISC */
/*
 * Linked into the programs of sanitizer builds only.  A daemon's seccomp
 * filter forbids the ptrace and prctl calls of LeakSanitizer's check at
 * exit, so that check is off for the programs; the unit tests, which run
 * unfiltered, keep it.
 */
const char	*__asan_default_options(void);

const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}
