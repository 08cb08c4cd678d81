/* SPDX-License-Identifier: ISC */
/*
 * Linked into the test programs of sanitizer builds only.  libatf-c
 * keeps its test-case lists until exit, which LeakSanitizer reports
 * as leaks of ours.
 */
const char	*__lsan_default_suppressions(void);

const char *
__lsan_default_suppressions(void)
{
	return "leak:libatf-c.so\n";
}

const char	*__lsan_default_options(void);

/* kyua takes any output of a test program's listing as breakage. */
const char *
__lsan_default_options(void)
{
	return "print_suppressions=0";
}
