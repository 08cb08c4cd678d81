/*
 * mcpd: the MCP server on stdio.  It parses untrusted input, holds
 * nothing, and forwards validated calls to runnerd.
 */
#ifndef MCPD_H
#define MCPD_H

#include "config.h"
#include "frame.h"

struct mcpd {
	struct as_config	 conf;
	struct channel		 runner;	/* runner.sock */
};

extern struct mcpd	 mcpd;

#endif
