/* SPDX-License-Identifier: ISC */
/*
 * Logging for every process of the suite: stderr in the foreground
 * (-d), syslog otherwise.  Modelled on the OpenBSD daemons' log.c.
 */
#ifndef AS_LOG_H
#define AS_LOG_H

#include <stdarg.h>

void	log_init(int foreground, int facility);
void	log_procinit(const char *procname);
void	log_setverbose(int verbose);
int	log_getverbose(void);
int	log_getforeground(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
