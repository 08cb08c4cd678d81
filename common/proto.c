/* SPDX-License-Identifier: ISC */
#include <stddef.h>
#include <stdio.h>

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
