/* SPDX-License-Identifier: ISC */
/*
 * A small poll(2) loop: descriptors with callbacks, one-shot timers,
 * and signals through signalfd so handlers run in the loop, not in
 * signal context.
 */
#ifndef AS_EVENT_H
#define AS_EVENT_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>

typedef void	(*ev_fd_cb)(int, short, void *);
typedef void	(*ev_timer_cb)(void *);
typedef void	(*ev_signal_cb)(int, void *);

void		 ev_init(void);
int		 ev_add(int, short, ev_fd_cb, void *);
void		 ev_set(int, short);
void		 ev_del(int);
uint64_t	 ev_timer(long, ev_timer_cb, void *);
void		 ev_timer_cancel(uint64_t);
int		 ev_signals(const int *, ev_signal_cb, void *);
int		 ev_loop(void);
void		 ev_break(void);
int64_t		 ev_now_ms(void);
int64_t		 ev_wall_ms(void);

#endif
