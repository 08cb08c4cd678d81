/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: bytes from the client, through the line reader,
 * the JSON-RPC classifier and every MCP method mcpd serves.  runner.c
 * is replaced by the stubs below, so a tools/call that passes its
 * checks is "forwarded" to nowhere and cancelled after each input,
 * with any task it made.
 * Built and run by make fuzz (clang-14), without mcpd/runner.o.
 */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "../../mcpd/mcpd.h"
#include "tools.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
runner_ready(void)
{
	return 1;
}

int
runner_send(uint32_t type, uint64_t reqid, const void *data, size_t len)
{
	(void)type;
	(void)reqid;
	(void)data;
	(void)len;
	return 0;
}

int
runner_send_json(uint32_t type, uint64_t reqid, json_t *msg)
{
	(void)type;
	(void)reqid;
	json_decref(msg);
	return 0;
}

static void
setup(void)
{
	char err[256];

	config_defaults(&mcpd.conf);
	/* Small enough that the refusal of long lines is reached. */
	mcpd.conf.mcpd.max_line = 4096;
	mcpd.conf.mcpd.max_inflight = 4;
	if ((mcpd.out_fd = open("/dev/null", O_WRONLY)) == -1)
		fatal("/dev/null");
	if (tools_init(err, sizeof(err)) == -1)
		fatalx("%s", err);
	strlcpy(mcpd.owner, "mcp-fuzz", sizeof(mcpd.owner));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct linereader lr;
	size_t chunk, n;

	if (!ready) {
		setup();
		ready = 1;
	}
	mcpd.initialized = 0;
	lr_init(&lr, mcpd.conf.mcpd.max_line);
	/* The first byte picks the read size, as stdin may split anywhere. */
	chunk = size > 0 ? (size_t)data[0] % 64 + 1 : 1;
	while (size > 0) {
		n = size < chunk ? size : chunk;
		lr_feed(&lr, (const char *)data, n, mcp_line,
		    mcp_line_too_long, NULL);
		data += n;
		size -= n;
	}
	lr_free(&lr);
	tools_cancel_all();
	tasks_cancel_all();
	return 0;
}
