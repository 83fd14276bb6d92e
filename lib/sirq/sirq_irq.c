/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The dispatcher's "interrupt line": the kick eventfd that wakes it, and
 * in irq mode its SCHED_FIFO priority and the epoll set it sleeps on (the
 * kick and the Rx interrupts where the PMD has them, net_tap), so that
 * sirqd and the application's threads on this CPU only run while it
 * sleeps, as ksoftirqd and user tasks do beside a hardirq. What the
 * dispatcher looks at, and how long it sleeps, is its own (sirq_lcore.c):
 * this file only sleeps and wakes.
 */

#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_rcu_qsbr.h>

#include "sirq_dpdk.h"
#include "sirq_irq.h"

/* Epoll events taken per sleep. */
#define IRQ_MAX_EVENTS	16
/* Epoll data of the kick eventfd; Rx queues use their NAPI index. */
#define IRQ_KICK_TAG	UINT32_MAX

int
sirq_irq_init(struct sirq_irq *irq, unsigned int lcore_id, bool fifo,
	      struct rte_rcu_qsbr *qsbr, unsigned int qsbr_id)
{
	irq->epoll_fd = -1;
	irq->lcore_id = lcore_id;
	irq->fifo = fifo;
	irq->qsbr = qsbr;
	irq->qsbr_id = qsbr_id;
	irq->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (irq->kick_fd < 0) {
		SIRQ_LOG(ERR, "lcore %u: eventfd: %s", lcore_id,
			 strerror(errno));
		return -errno;
	}
	return 0;
}

void
sirq_irq_fini(struct sirq_irq *irq)
{
	if (irq->kick_fd >= 0)
		close(irq->kick_fd);
	irq->kick_fd = -1;
}

/* Async-signal-safe: sirq_lcore_stop() calls it. */
void
sirq_irq_kick(struct sirq_irq *irq)
{
	uint64_t one = 1;
	ssize_t r;

	if (irq->kick_fd < 0)
		return;
	/* EAGAIN: the counter is already non-zero, a wake-up is pending. */
	r = write(irq->kick_fd, &one, sizeof(one));
	RTE_SET_USED(r);
}

/* Wait for a kick, at most @timeout_ns; a kick already there returns at once. */
void
sirq_irq_wait_kick(struct sirq_irq *irq, uint64_t timeout_ns)
{
	struct pollfd pfd = { .fd = irq->kick_fd, .events = POLLIN };
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / SIRQ_NS_PER_SEC),
		.tv_nsec = (long)(timeout_ns % SIRQ_NS_PER_SEC),
	};
	uint64_t token;

	if (ppoll(&pfd, 1, &ts, NULL) == 1 &&
	    read(irq->kick_fd, &token, sizeof(token)) < 0 && errno != EAGAIN)
		SIRQ_LOG(ERR, "kick read: %s", strerror(errno));
}

/*
 * irq mode: the epoll set, with the kick in it. The calling dispatcher's
 * scheduling is kept for sirq_irq_teardown(), which undoes this even if
 * it fails.
 */
int
sirq_irq_setup(struct sirq_irq *irq)
{
	struct epoll_event ev = { .events = EPOLLIN };

	pthread_getschedparam(pthread_self(), &irq->saved_policy,
			      &irq->saved_param);
	irq->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (irq->epoll_fd < 0)
		return -errno;
	ev.data.u32 = IRQ_KICK_TAG;
	if (epoll_ctl(irq->epoll_fd, EPOLL_CTL_ADD, irq->kick_fd, &ev) != 0)
		return -errno;
	return 0;
}

/* An Rx interrupt's fd (edge-triggered), @tag its queue's NAPI index. */
int
sirq_irq_watch(struct sirq_irq *irq, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };

	ev.data.u32 = tag;
	if (epoll_ctl(irq->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0)
		return -errno;
	return 0;
}

/* The calling dispatcher to SCHED_FIFO @priority; a refusal is logged. */
void
sirq_irq_fifo(struct sirq_irq *irq, int priority)
{
	struct sched_param sp = { .sched_priority = priority };
	int ret;

	ret = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (ret != 0)
		SIRQ_LOG(WARNING,
			 "lcore %u: SCHED_FIFO %d refused (%s): the dispatcher will not preempt like a hardirq",
			 irq->lcore_id, priority, strerror(ret));
}

/* irq mode is over: the scheduling of before, the epoll set closed. */
void
sirq_irq_teardown(struct sirq_irq *irq)
{
	pthread_setschedparam(pthread_self(), irq->saved_policy,
			      &irq->saved_param);
	if (irq->epoll_fd >= 0) {
		close(irq->epoll_fd);
		irq->epoll_fd = -1;
	}
}

/*
 * A thread other than the dispatcher (sirqd, a NAPI thread, a busy
 * poller) may have armed a NAPI timer of @sd: a dispatcher asleep past
 * it is woken, to sleep again until the timer. Cheap when nothing is
 * armed or the dispatcher is awake.
 */
void
sirq_irq_napi_timer(struct sirq_irq *irq, const struct sirq_softnet *sd)
{
	uint64_t until, next;

	/* None armed, by this thread either: nothing to wake for, no fence. */
	if (likely(__atomic_load_n(&sd->timers_armed, __ATOMIC_RELAXED) == 0))
		return;
	/* The timer, then the wake-up: pairs with sirq_irq_sleep_begin(). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	until = __atomic_load_n(&irq->sleep_until, __ATOMIC_RELAXED);
	if (until == 0)
		return;
	next = sirq_softnet_next_timer(sd);
	if (next != 0 && next < until &&
	    __atomic_exchange_n(&irq->sleep_until, 0, __ATOMIC_RELAXED) != 0)
		sirq_irq_kick(irq);
}

/*
 * A NAPI thread or busy poller just let go of @cpu's lock, and takes it
 * back at once for its next poll: if the dispatcher found it busy, or a
 * thread waits for it, give way. An irq-mode dispatcher sleeping after a
 * busy look is kicked: at SCHED_FIFO it preempts the caller at once and
 * gets the lock while it is free. A yield is for a fair-class waiter (a
 * poll-mode dispatcher, a thread in sirq_bh_disable()); it also lets the
 * CPU's other fair threads ahead, which the kick does not (measured: a
 * yield at every kick took threaded NAPI under the stall load from 2.3 to
 * 9 ms p99 at 100 krequests/s).
 */
void
sirq_irq_lock_handback(struct sirq_irq *irq, const struct sirq_cpu *cpu)
{
	bool wanted = __atomic_load_n(&irq->lock_wanted, __ATOMIC_RELAXED) != 0;
	bool yield = sirq_exec_lock_contended(cpu);

	if (likely(!wanted && !yield))
		return;
	if (wanted) {
		__atomic_store_n(&irq->lock_wanted, 0, __ATOMIC_RELAXED);
		if (irq->fifo)
			sirq_irq_kick(irq);
		else
			yield = true;
	}
	if (yield)
		sched_yield();
}

/*
 * irq mode: the dispatcher will sleep until @until (ns) at the latest.
 * The wake-up, then the timers: it reads the NAPI timers after this;
 * pairs with sirq_irq_napi_timer().
 */
void
sirq_irq_sleep_begin(struct sirq_irq *irq, uint64_t until)
{
	__atomic_store_n(&irq->sleep_until, until, __ATOMIC_SEQ_CST);
}

/*
 * Sleep @sleep_ns at most, after sirq_irq_sleep_begin(): until an Rx
 * interrupt or a kick. Sets in @rx_fired the tag (the NAPI index, below
 * 64) of each Rx interrupt seen: edge-triggered, an fd comes once a
 * wait. True if an fd woke it.
 */
bool
sirq_irq_sleep(struct sirq_irq *irq, uint64_t sleep_ns, uint64_t *rx_fired)
{
	struct epoll_event ev[IRQ_MAX_EVENTS];
	struct timespec ts = {
		.tv_sec = (time_t)(sleep_ns / SIRQ_NS_PER_SEC),
		.tv_nsec = (long)(sleep_ns % SIRQ_NS_PER_SEC),
	};
	int i, n;

	if (irq->qsbr != NULL)
		rte_rcu_qsbr_thread_offline(irq->qsbr, irq->qsbr_id);
	n = epoll_pwait2(irq->epoll_fd, ev, IRQ_MAX_EVENTS, &ts, NULL);
	__atomic_store_n(&irq->sleep_until, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&irq->tick_sleep, 0, __ATOMIC_RELAXED);
	if (irq->qsbr != NULL)
		rte_rcu_qsbr_thread_online(irq->qsbr, irq->qsbr_id);
	for (i = 0; i < n; i++) {
		uint64_t token;

		if (ev[i].data.u32 != IRQ_KICK_TAG) {
			*rx_fired |= UINT64_C(1) << (ev[i].data.u32 & 63);
			continue;
		}
		if (read(irq->kick_fd, &token, sizeof(token)) < 0 &&
		    errno != EAGAIN)
			SIRQ_LOG(ERR, "lcore %u: kick read: %s", irq->lcore_id,
				 strerror(errno));
	}
	return n > 0;
}
