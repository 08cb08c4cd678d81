/* SPDX-License-Identifier: ISC */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grant.h"

/*
 * The kernel's binary form of a POSIX ACL (linux/posix_acl_xattr.h):
 * a version, then entries sorted by tag and, within a tag, by id.
 */
#define ACL_XATTR_VERSION	2
#define ACL_USER_OBJ		0x01
#define ACL_USER		0x02
#define ACL_GROUP_OBJ		0x04
#define ACL_GROUP		0x08
#define ACL_MASK		0x10
#define ACL_OTHER		0x20
#define ACL_UNDEFINED_ID	0xffffffffu

struct acl_entry {
	uint16_t	tag;
	uint16_t	perm;
	uint32_t	id;
} __attribute__((packed));

struct acl_blob {
	uint32_t		version;
	struct acl_entry	e[2 * ACL_MAX + 4];
} __attribute__((packed));

static int
cmp_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static size_t
add_ids(struct acl_blob *b, size_t n, uint16_t tag, const uint32_t *ids,
    size_t nids, int perm)
{
	uint32_t sorted[ACL_MAX];
	size_t i;

	memcpy(sorted, ids, nids * sizeof(*sorted));
	qsort(sorted, nids, sizeof(*sorted), cmp_id);
	for (i = 0; i < nids; i++) {
		if (i > 0 && sorted[i] == sorted[i - 1])
			continue;	/* the kernel refuses a repeated id */
		b->e[n].tag = tag;
		b->e[n].perm = (uint16_t)perm;
		b->e[n++].id = sorted[i];
	}
	return n;
}

static void
add_obj(struct acl_blob *b, size_t *n, uint16_t tag, int perm)
{
	b->e[*n].tag = tag;
	b->e[*n].perm = (uint16_t)perm;
	b->e[(*n)++].id = ACL_UNDEFINED_ID;
}

/* The owner keeps owner_perm; acl's uids and gids get perm. */
static size_t
acl_build(struct acl_blob *b, const struct peer_acl *acl, int owner_perm,
    int perm)
{
	size_t n = 0;

	memset(b, 0, sizeof(*b));
	b->version = ACL_XATTR_VERSION;
	add_obj(b, &n, ACL_USER_OBJ, owner_perm);
	n = add_ids(b, n, ACL_USER, acl->uids, acl->nuids, perm);
	add_obj(b, &n, ACL_GROUP_OBJ, 0);
	n = add_ids(b, n, ACL_GROUP, acl->gids, acl->ngids, perm);
	add_obj(b, &n, ACL_MASK, perm);
	add_obj(b, &n, ACL_OTHER, 0);
	return sizeof(b->version) + n * sizeof(b->e[0]);
}

/* A socket, by its path: it has no descriptor of its own to set it on. */
int
grant_path(const char *path, const struct peer_acl *acl, int perm)
{
	struct acl_blob b;
	size_t len;

	len = acl_build(&b, acl, GRANT_R | GRANT_W, perm);
	return lsetxattr(path, "system.posix_acl_access", &b, len, 0);
}

/*
 * A file or directory.  With inherit, a directory also passes perm on
 * to what is made in it later (rotated logs), through its default ACL.
 */
int
grant_fd(int fd, const struct peer_acl *acl, int perm, int inherit)
{
	struct acl_blob b;
	struct stat st;
	size_t len;
	int own;

	if (fstat(fd, &st) == -1)
		return -1;
	own = S_ISDIR(st.st_mode) ? GRANT_R | GRANT_W | GRANT_X :
	    GRANT_R | GRANT_W;
	len = acl_build(&b, acl, own, perm);
	if (fsetxattr(fd, "system.posix_acl_access", &b, len, 0) == -1)
		return -1;
	if (!inherit || !S_ISDIR(st.st_mode))
		return 0;
	/* The mode a file is made with still narrows what it inherits. */
	len = acl_build(&b, acl, own, perm);
	return fsetxattr(fd, "system.posix_acl_default", &b, len, 0);
}
