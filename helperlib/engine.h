/* SPDX-License-Identifier: ISC */
/*
 * A helper's end of the channel to the engine (engine.c), the same for
 * the launcher and the kubernetes helper: one loop, one table of what
 * the engine may send, and a role's handlers for each.
 */
#ifndef RUNNERD_ENGINE_H
#define RUNNERD_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct engine_role {
	const char	*name;		/* for the log */
	/* LMSG_RUN: the request, and the credential's fd or -1 (taken). */
	void		(*run)(uint64_t, const uint8_t *, size_t, int);
	void		(*kill)(uint64_t);
	/* LMSG_SESSION_*: the type, the session's key, the payload. */
	void		(*session)(uint32_t, uint64_t, const uint8_t *, size_t);
	/* LMSG_JOURNAL_DONE; NULL: this role keeps no journal. */
	void		(*journal_done)(void);
	/* The engine is gone: end what runs, then leave the loop. */
	void		(*gone)(void);
};

void	 engine_start(const struct engine_role *, int);
int	 engine_forward(uint32_t, uint64_t, const void *, size_t);
int	 engine_send(uint32_t, uint64_t, json_t *);
void	 engine_done(uint64_t, json_t *);
void	 engine_swept(json_t *, json_t *);
void	 engine_forget(void);
void	 engine_flush(void);

#endif
