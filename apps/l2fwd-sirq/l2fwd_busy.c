/* SPDX-License-Identifier: BSD-3-Clause */

/* --busy-poll: the epoll-like busy-polling application (l2fwd_busy.h). */

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_lcore.h>

#include "l2fwd_busy.h"

/* Longest sleep without a wake-up: the stop flag is read at least this often. */
#define BUSY_SLEEP_MS 100

static inline void
count(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

int
l2fwd_busy_init(struct l2fwd_busy *b, const struct l2fwd_busy_spec *spec,
		struct sirq_lcore *lc, unsigned int lcore_id)
{
	memset(b, 0, sizeof(*b));
	b->spec = *spec;
	b->lc = lc;
	b->lcore_id = lcore_id;
	b->fd = eventfd(0, EFD_CLOEXEC);
	if (b->fd < 0)
		return -errno;
	b->ready = true;
	return 0;
}

/* The thread's eventfd; EAGAIN: a wake-up is already pending. */
static void
busy_kick(struct l2fwd_busy *b)
{
	uint64_t one = 1;
	ssize_t r;

	r = write(b->fd, &one, sizeof(one));
	RTE_SET_USED(r);
}

void
l2fwd_busy_wake_slow(struct l2fwd_busy *b)
{
	if (__atomic_exchange_n(&b->sleeping, 0, __ATOMIC_ACQ_REL) != 0)
		busy_kick(b);
}

/*
 * One ep_busy_loop(): every queue of the lcore polled once per round,
 * rounds until one finds packets or poll_us pass (one round for 0).
 * Returns the packets.
 */
static unsigned int
busy_loop(struct l2fwd_busy *b, unsigned int nb_napi)
{
	uint64_t end = rte_get_timer_cycles() +
		rte_get_timer_hz() / 1000000 * b->spec.poll_us;
	unsigned int got = 0, id;

	do {
		for (id = 0; id < nb_napi; id++) {
			int r = sirq_napi_busy_poll(b->lc, id, b->spec.budget,
						    b->spec.prefer, 0);

			count(&b->polls, 1);
			if (r <= 0)
				continue;
			got += (unsigned int)r;
			count(&b->found, 1);
			/* ep_suspend_napi_irqs(): events, and prefer_busy_poll. */
			if (b->spec.prefer)
				sirq_napi_suspend_irqs(b->lc, id);
		}
	} while (got == 0 && rte_get_timer_cycles() < end &&
		 !__atomic_load_n(&b->stop, __ATOMIC_RELAXED));
	return got;
}

static void *
busy_main(void *arg)
{
	struct l2fwd_busy *b = arg;
	unsigned int nb_napi = sirq_napi_count(b->lc), id;
	rte_cpuset_t cpus = rte_lcore_cpuset(b->lcore_id);
	struct pollfd pfd = { .fd = b->fd, .events = POLLIN };
	uint64_t token;

	if (rte_thread_set_affinity(&cpus) != 0)
		fprintf(stderr, "l2fwd-sirq: busy/%u: cannot pin\n", b->lcore_id);
	while (!__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
		unsigned int got = busy_loop(b, nb_napi);

		if (got != 0) {
			count(&b->packets, got);
			continue;
		}
		/* ep_resume_napi_irqs(), then the wait for the socket. */
		if (b->spec.prefer)
			for (id = 0; id < nb_napi; id++)
				sirq_napi_resume_irqs(b->lc, id);
		__atomic_store_n(&b->sleeping, 1, __ATOMIC_SEQ_CST);
		count(&b->sleeps, 1);
		if (poll(&pfd, 1, BUSY_SLEEP_MS) == 1 &&
		    read(b->fd, &token, sizeof(token)) < 0 && errno != EAGAIN)
			fprintf(stderr, "l2fwd-sirq: busy/%u: read: %s\n",
				b->lcore_id, strerror(errno));
		__atomic_store_n(&b->sleeping, 0, __ATOMIC_RELAXED);
	}
	return NULL;
}

int
l2fwd_busy_start(struct l2fwd_busy *b)
{
	pthread_attr_t attr;
	char name[16];
	int ret;

	if (!b->spec.enabled)
		return 0;
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	ret = pthread_create(&b->thread, &attr, busy_main, b);
	pthread_attr_destroy(&attr);
	if (ret != 0) {
		fprintf(stderr, "l2fwd-sirq: lcore %u: busy-poll thread: %s\n",
			b->lcore_id, strerror(ret));
		return -ret;
	}
	snprintf(name, sizeof(name), "busy/%u", b->lcore_id);
	pthread_setname_np(b->thread, name);
	b->running = true;
	return 0;
}

void
l2fwd_busy_stop(struct l2fwd_busy *b)
{
	if (!b->running)
		return;
	__atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
	busy_kick(b);
	pthread_join(b->thread, NULL);
	b->running = false;
}

void
l2fwd_busy_free(struct l2fwd_busy *b)
{
	if (!b->ready)
		return;
	l2fwd_busy_stop(b);
	close(b->fd);
	b->fd = -1;
	b->ready = false;
}
