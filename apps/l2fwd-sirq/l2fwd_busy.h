/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef L2FWD_BUSY_H
#define L2FWD_BUSY_H

/*
 * --busy-poll: an application thread on each forwarding lcore's CPU
 * that busy-polls the lcore's Rx queues (sirq_napi_busy_poll()) the way
 * epoll_wait() does with busy_poll_usecs, prefer_busy_poll and
 * busy_poll_budget set (fs/eventpoll.c, ep_poll()): it polls until a
 * poll finds packets or busy_poll_us pass; when it found some it
 * suspends the queues' interrupts (napi_suspend_irqs(): only with
 * irq_suspend_timeout set) and polls again at once, as an application
 * that handled its events calls epoll_wait() again; when it found none
 * it resumes them (napi_resume_irqs()) and sleeps until NET_RX delivers
 * a packet (the socket's wake-up: l2fwd_busy_wake()).
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <sirq.h>

struct l2fwd_busy_spec {
	bool enabled;		/* --busy-poll: the thread runs */
	uint32_t poll_us;	/* busy_poll_usecs: spin this long, then sleep */
	uint16_t budget;	/* packets per poll */
	bool prefer;		/* prefer_busy_poll */
};

struct l2fwd_busy {
	struct sirq_lcore *lc;
	unsigned int lcore_id;
	struct l2fwd_busy_spec spec;
	pthread_t thread;
	bool ready;		/* l2fwd_busy_init() succeeded */
	bool running;
	int fd;			/* eventfd: the socket's wake-up */
	uint32_t sleeping;	/* set before it sleeps, read by NET_RX */
	uint32_t stop;
	/* Written by the thread, read by anyone. */
	uint64_t polls;		/* sirq_napi_busy_poll() calls */
	uint64_t found;		/* ... that took packets */
	uint64_t packets;
	uint64_t sleeps;
};

/* 0, or -errno (the eventfd). */
int l2fwd_busy_init(struct l2fwd_busy *b, const struct l2fwd_busy_spec *spec,
		    struct sirq_lcore *lc, unsigned int lcore_id);
/* Starts the thread "busy/<lcore>" on the lcore's CPUs: 0 or -errno. */
int l2fwd_busy_start(struct l2fwd_busy *b);
/* Stops and joins it; idempotent. */
void l2fwd_busy_stop(struct l2fwd_busy *b);
/* Stops it and closes the eventfd; nothing for one never initialised. */
void l2fwd_busy_free(struct l2fwd_busy *b);

void l2fwd_busy_wake_slow(struct l2fwd_busy *b);

/* NET_RX delivered packets: wake the thread if it sleeps. Any thread. */
static inline void
l2fwd_busy_wake(struct l2fwd_busy *b)
{
	if (__atomic_load_n(&b->sleeping, __ATOMIC_ACQUIRE) != 0)
		l2fwd_busy_wake_slow(b);
}

#endif /* L2FWD_BUSY_H */
