/* SPDX-License-Identifier: ISC */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "proto.h"

const char *
msg_type_name(uint32_t type)
{
	static char unknown[32];

	switch (type) {
#define MSG_NAME(sym, num, fd, name)	case sym: return name;
	MSG_TYPES(MSG_NAME)
#undef MSG_NAME
	}
	snprintf(unknown, sizeof(unknown), "type %u", type);
	return unknown;
}

/* The types proto.h marks: only these may carry a descriptor. */
int
msg_carries_fd(uint32_t type)
{
	switch (type) {
#define MSG_FD(sym, num, fd, name)	case sym: return fd;
	MSG_TYPES(MSG_FD)
#undef MSG_FD
	}
	return 0;
}

/* Whether id has the shape mcpd gives a task's id (TASK_ID_LEN). */
int
task_id_valid(const char *id)
{
	size_t i, n = sizeof(TASK_ID_PREFIX) - 1;

	if (id == NULL || strncmp(id, TASK_ID_PREFIX, n) != 0 ||
	    strlen(id) != TASK_ID_LEN - 1)
		return 0;
	for (i = n; id[i] != '\0'; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return 1;
}
