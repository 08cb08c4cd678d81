/* SPDX-License-Identifier: ISC */
/*
 * Who may open a socket or a file, said to the file system: the owner,
 * and each uid and gid of a peer ACL, as POSIX ACL entries; nobody else.
 * The daemons still check SO_PEERCRED on every connection: the file's
 * permissions are the first gate, not the only one.
 */
#ifndef AS_GRANT_H
#define AS_GRANT_H

#include "config.h"

#define GRANT_R		4
#define GRANT_W		2
#define GRANT_X		1

int	 grant_path(const char *, const struct peer_acl *, int);
int	 grant_fd(int, const struct peer_acl *, int, int);

#endif
