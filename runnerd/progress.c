/* SPDX-License-Identifier: ISC */
/*
 * Progress, for a call whose client asked for it (MSG_TOOL_CALL's
 * "progress"): MSG_TOOL_PROGRESS to mcpd, which relays it as MCP's
 * notifications/progress.  Each report counts up by one, as MCP wants
 * progress to increase.  A one-shot sandbox reports its start and its
 * end, terraform its phases as the launcher sees them, and a session
 * call, whose agent says nothing until it is done, a heartbeat.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "event.h"
#include "log.h"
#include "runnerd.h"

#define BEAT_MS		5000

/* Terraform's phases as the launcher names them (launcher/phase.c). */
static const struct {
	const char	*phase;
	const char	*message;
} phases[] = {
	{ "init",	"terraform init" },
	{ "plan",	"terraform plan" },
	{ "render",	"rendering the plan outside the sandbox" },
	{ "apply",	"terraform apply" },
};

void
progress_send(struct call *k, const char *fmt, ...)
{
	struct conn *c;
	va_list ap;
	char msg[128];

	if (!k->progress || k->conn == 0 || (c = conn_find(k->conn)) == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (conn_send_json(c, MSG_TOOL_PROGRESS, k->id, -1, json_pack(
	    "{s:I, s:s}", "progress", (json_int_t)++k->steps, "message",
	    msg)) == -1)
		log_warn("progress for %016llx", (unsigned long long)k->id);
}

/* LMSG_PROGRESS: the launcher saw a phase of the call's sandbox start. */
void
progress_phase(uint64_t id, json_t *j)
{
	struct call *k;
	const char *phase;
	size_t i;

	if ((phase = json_string_value(json_object_get(j, "phase"))) == NULL)
		fatalx("launcher: LMSG_PROGRESS without a phase");
	for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		if (strcmp(phases[i].phase, phase) == 0)
			break;
	if (i == sizeof(phases) / sizeof(phases[0]))
		fatalx("launcher: unknown phase %.32s", phase);
	/* A call cancelled meanwhile has moved on; it reports no more. */
	if ((k = call_find(id)) != NULL && k->state == CALL_RUNNING)
		progress_send(k, "%s", phases[i].message);
}

static void
beat(void *arg)
{
	struct call *k = arg;

	k->beat = ev_timer(BEAT_MS, beat, k);
	progress_send(k, "running, %lld s",
	    (long long)((ev_now_ms() - k->beat_from + 500) / 1000));
}

/* A heartbeat every BEAT_MS from now until progress_stop(). */
void
progress_beat(struct call *k)
{
	if (!k->progress || k->beat != 0)
		return;
	k->beat_from = ev_now_ms();
	k->beat = ev_timer(BEAT_MS, beat, k);
}

void
progress_stop(struct call *k)
{
	if (k->beat != 0)
		ev_timer_cancel(k->beat);
	k->beat = 0;
}
