/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"

static int	 log_foreground = 1;
static int	 log_verbose;
static const char *log_procname = "agent-sandbox";

void
log_init(int foreground, int facility)
{
	log_foreground = foreground;
	if (!foreground)
		openlog(log_procname, LOG_PID | LOG_NDELAY, facility);
	tzset();
}

void
log_procinit(const char *procname)
{
	if (procname != NULL)
		log_procname = procname;
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

int
log_getverbose(void)
{
	return log_verbose;
}

int
log_getforeground(void)
{
	return log_foreground;
}

static void
vlog(int pri, const char *fmt, va_list ap)
{
	if (log_foreground) {
		fprintf(stderr, "%s: ", log_procname);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		fflush(stderr);
	} else
		vsyslog(pri, fmt, ap);
}

static void
logit(int pri, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(pri, fmt, ap);
	va_end(ap);
}

/* Append strerror(saved errno) the way warn(3) does. */
static void
vlog_errno(int pri, int saved, const char *fmt, va_list ap)
{
	char msg[1024];

	if (fmt == NULL) {
		logit(pri, "%s", strerror(saved));
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	logit(pri, "%s: %s", msg, strerror(saved));
}

void
log_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog_errno(LOG_ERR, saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

static void
vfatalc(int saved, const char *fmt, va_list ap)
{
	char msg[1024];

	if (fmt != NULL)
		vsnprintf(msg, sizeof(msg), fmt, ap);
	else
		msg[0] = '\0';
	if (saved && fmt != NULL)
		logit(LOG_CRIT, "fatal in %s: %s: %s", log_procname, msg,
		    strerror(saved));
	else if (saved)
		logit(LOG_CRIT, "fatal in %s: %s", log_procname, strerror(saved));
	else
		logit(LOG_CRIT, "fatal in %s: %s", log_procname, msg);
}

void
fatal(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vfatalc(saved, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfatalc(0, fmt, ap);
	va_end(ap);
	exit(1);
}
