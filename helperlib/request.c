/* SPDX-License-Identifier: ISC */
/*
 * What both helpers, the launcher and the kubernetes helper, check and
 * write of the engine's request: its shape, the workspace's file names,
 * files_in and the credential file, each a new file of the sandbox
 * user's that never follows a link; and the paths and container ids
 * they name things by.
 */
#include <sys/types.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "launcher.h"

#define CRED_MAX	(1024 * 1024)

/*
 * A sandbox's name, for runsc and its cgroup: random, never the call's
 * id, so that no two sandboxes on the host share one, whichever runnerd
 * or call they are of; -1 (errno) when there is no randomness.
 */
int
container_id_new(char out[CONTAINER_ID_LEN])
{
	uint64_t rnd;

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -1;
	snprintf(out, CONTAINER_ID_LEN, CONTAINER_PREFIX "%016" PRIx64, rnd);
	return 0;
}

/* snprintf for paths: -1 (ENAMETOOLONG) rather than a cut path. */
int
pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* A workspace file name: one plain component, so never a way out. */
int
workspace_name_ok(const char *name)
{
	size_t n;

	if (name == NULL || name[0] == '\0' || name[0] == '.' ||
	    (n = strlen(name)) > 255)
		return 0;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") == n;
}

/* A provider as HOSTNAME/NAMESPACE/TYPE, three plain components. */
static int
provider_name_ok(const char *name)
{
	char buf[3 * 256], *part, *rest;
	int n = 0;

	if (name == NULL || strlcpy(buf, name, sizeof(buf)) >= sizeof(buf))
		return 0;
	for (rest = buf; (part = strsep(&rest, "/")) != NULL; n++)
		if (!workspace_name_ok(part))
			return 0;
	return n == 3;
}

/* The launcher trusts the engine no further than the shape of a request. */
int
request_ok(json_t *req)
{
	json_t *argv, *v;
	const char *k;
	size_t i;

	argv = json_object_get(req, "argv");
	if (!json_is_array(argv) || json_array_size(argv) == 0)
		return 0;
	/*
	 * Only the launcher makes session bundles (launcher/session.c)
	 * and pooled ones (launcher/tfpool.c).
	 */
	if (json_object_get(req, "session") != NULL ||
	    json_object_get(req, "pooled") != NULL)
		return 0;
	json_array_foreach(argv, i, v)
		if (!json_is_string(v))
			return 0;
	if ((v = json_object_get(req, "agent_code")) != NULL &&
	    !json_is_boolean(v))
		return 0;
	json_array_foreach(json_object_get(req, "egress"), i, v)
		if (!json_is_string(v))
			return 0;
	json_array_foreach(json_object_get(req, "providers"), i, v)
		if (!provider_name_ok(json_string_value(v)))
			return 0;
	json_array_foreach(json_object_get(req, "files_out"), i, v)
		if (!workspace_name_ok(json_string_value(v)))
			return 0;
	json_object_foreach(json_object_get(req, "files_in"), k, v)
		if (!workspace_name_ok(k) || !json_is_string(v))
			return 0;
	return 1;
}

/* A new file owned by the sandbox user; never follows a link. */
static int
file_create(const char *path, mode_t mode, const void *buf, size_t len)
{
	int fd, r;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    mode);
	if (fd == -1)
		return -1;
	r = write_full(fd, buf, len);
	if (r == 0)
		r = fchown(fd, SANDBOX_UID, SANDBOX_GID);
	close(fd);
	return r;
}

/* files_in: {"name": "text"}, each a new file of the sandbox user's. */
int
files_write(const char *work, json_t *files)
{
	char path[PATH_MAX];
	const char *name;
	json_t *v;

	json_object_foreach(files, name, v) {
		if (pathf(path, sizeof(path), "%s/%s", work, name) == -1 ||
		    file_create(path, 0644, json_string_value(v),
		    json_string_length(v)) == -1)
			return -1;
	}
	return 0;
}

/*
 * The credential memfd brokerd sealed, all of it and less than max
 * bytes, read by position so that its offset is no one's concern.
 */
int
credential_read(int fd, char *buf, size_t max, size_t *len)
{
	ssize_t n;

	*len = 0;
	while ((n = pread(fd, buf + *len, max - *len, *len)) > 0)
		*len += n;
	return n == 0 && *len < max ? 0 : -1;
}

/* The credential as a new file at path, readable by the sandbox user. */
int
credential_write(const char *path, int credfd)
{
	char *buf;
	size_t len;
	int r;

	if ((buf = malloc(CRED_MAX)) == NULL)
		return -1;
	r = credential_read(credfd, buf, CRED_MAX, &len) == -1 ? -1 :
	    file_create(path, 0400, buf, len);
	explicit_bzero(buf, len);
	free(buf);
	return r;
}
