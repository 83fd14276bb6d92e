/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * irq mode: the dispatcher runs at SCHED_FIFO and sleeps between
 * "interrupts", so sirqd and the application's threads on this CPU only
 * run while it sleeps, as ksoftirqd and user tasks do beside a hardirq.
 * It wakes for an Rx interrupt where the PMD has them (net_tap), a kick
 * (a raise from another thread), the tick, or the next rte_timer.
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
#include <rte_ethdev.h>
#include <rte_rcu_qsbr.h>

#include "sirq_lcore.h"

/* Epoll events taken per sleep. */
#define IRQ_MAX_EVENTS	16
/* Epoll data of the kick eventfd; Rx queues use their NAPI index. */
#define IRQ_KICK_TAG	UINT32_MAX

int
sirq_irq_init(struct sirq_irq *irq, unsigned int lcore_id)
{
	irq->epoll_fd = -1;
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

static int
irq_setup(struct sirq_lcore *lc)
{
	struct sched_param sp = { .sched_priority = lc->conf.irq_priority };
	struct epoll_event ev = { .events = EPOLLIN };
	struct sirq_irq *irq = &lc->irq;
	uint16_t i;
	int ret;

	irq->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (irq->epoll_fd < 0)
		return -errno;
	ev.data.u32 = IRQ_KICK_TAG;
	if (epoll_ctl(irq->epoll_fd, EPOLL_CTL_ADD, irq->kick_fd, &ev) != 0)
		return -errno;

	/* Rx interrupts where the PMD has them (sirq_rx_intr_start()). */
	for (i = 0; i < lc->rx.nb_napi; i++) {
		const struct sirq_napi *n = &lc->rx.napi[i];

		if (n->intr_fd < 0)
			continue;
		ev.events = EPOLLIN | EPOLLET;
		ev.data.u32 = i;
		if (epoll_ctl(irq->epoll_fd, EPOLL_CTL_ADD, n->intr_fd, &ev) != 0)
			return -errno;
	}

	ret = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (ret != 0)
		SIRQ_LOG(WARNING,
			 "lcore %u: SCHED_FIFO %d refused (%s): the dispatcher will not preempt like a hardirq",
			 lc->lcore_id, lc->conf.irq_priority, strerror(ret));
	SIRQ_LOG(INFO, "lcore %u: irq mode, %u Rx interrupt(s), tick %u us",
		 lc->lcore_id, lc->rx.nb_intr, lc->conf.irq_tick_us);
	return 0;
}

/*
 * Would a look find anything that no "interrupt" brings? Not when every
 * queue of the lcore either has its Rx interrupt armed (the PMD's event
 * wakes the dispatcher, as l3fwd-power sleeps on it) or is masked, its
 * NAPI context scheduled, with the work at sirqd, which the policy
 * leaves it to; and no transmitted packet is tracked, whose completion
 * only a look sees. Then the dispatcher sleeps until the next tick, a
 * timer, a kick or an Rx interrupt: a kernel whose NIC is masked while
 * ksoftirqd polls it spends nothing in irq_exit() until the tick either.
 * When the policy would run the work itself (mainline, kicinski past its
 * window), the looks go on: they are what lends a preempted sirqd the
 * CPU (sirqd_lock_busy()). A queue whose thread or busy poller has it,
 * or whose deferred interrupt waits for its timer (irq_sleep() wakes
 * for that, and whoever arms one sooner kicks: sirq_irq_napi_timer()),
 * needs no look either.
 */
static bool
irq_looks_idle(struct sirq_lcore *lc)
{
	uint64_t sched = __atomic_load_n(&lc->rx.sd.sched, __ATOMIC_ACQUIRE);
	uint64_t irq_off = __atomic_load_n(&lc->rx.sd.irq_off, __ATOMIC_RELAXED);
	uint64_t threaded = __atomic_load_n(&lc->rx.sd.threaded,
					    __ATOMIC_RELAXED);
	uint64_t busy = __atomic_load_n(&lc->rx.sd.in_busy_poll,
					__ATOMIC_RELAXED);
	bool masked = false;
	uint16_t i;

	if (lc->rx.nb_napi == 0 || sirq_tx_tracking(&lc->tx))
		return false;
	for (i = 0; i < lc->rx.nb_napi; i++) {
		const struct sirq_napi *n = &lc->rx.napi[i];
		uint64_t bit = UINT64_C(1) << i;

		/* Its thread or a busy poller has it; or its timer will. */
		if (sched & bit)
			masked |= ((threaded | busy) & bit) == 0;
		else if (irq_off & bit)
			continue;
		else if (n->intr_fd < 0 || (n->intr_ctl &&
			 !__atomic_load_n(&n->intr_on, __ATOMIC_RELAXED)))
			return false;
	}
	return !masked ||
		(sirq_worker_state(lc->cpu) == SIRQ_WORKER_RUNNABLE &&
		 !sirq_inline_wanted(lc->cpu));
}

/*
 * How long to sleep: until the next look (irq_tick_us), or, when no look
 * is needed, until the next tick (@next_tick; 0 with tick_hz 0, where
 * every look is a tick). sirqd wakes it sooner if a queue it gives back
 * needs looks again, or it goes idle (sirq_irq_worker_ran()).
 */
static uint64_t
irq_sleep_ns(struct sirq_lcore *lc, uint64_t next_tick)
{
	uint64_t look_ns = (uint64_t)__atomic_load_n(&lc->conf.irq_tick_us,
						    __ATOMIC_RELAXED) * SIRQ_NS_PER_US;
	uint64_t now;

	if (next_tick == 0 || !irq_looks_idle(lc))
		return look_ns;
	/* The flag, then the look again: pairs with sirq_irq_worker_ran(). */
	__atomic_store_n(&lc->irq_tick_sleep, 1, __ATOMIC_SEQ_CST);
	now = sirq_now_ns();
	if (!irq_looks_idle(lc) || next_tick <= now + look_ns) {
		__atomic_store_n(&lc->irq_tick_sleep, 0, __ATOMIC_RELAXED);
		return look_ns;
	}
	sirq_stat_add(&lc->stats.irq_tick_sleeps, 1);
	return next_tick - now;
}

/*
 * A thread other than the dispatcher (sirqd, a NAPI thread, a busy
 * poller) may have armed a NAPI timer: a dispatcher asleep past it is
 * woken, to sleep again until the timer. Cheap when nothing is armed or
 * the dispatcher is awake.
 */
void
sirq_irq_napi_timer(struct sirq_lcore *lc)
{
	uint64_t until, next;

	/* None armed, by this thread either: nothing to wake for, no fence. */
	if (likely(__atomic_load_n(&lc->rx.sd.timers_armed,
				   __ATOMIC_RELAXED) == 0))
		return;
	/* The timer, then the wake-up: pairs with irq_sleep(). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	until = __atomic_load_n(&lc->irq.sleep_until, __ATOMIC_RELAXED);
	if (until == 0)
		return;
	next = sirq_softnet_next_timer(&lc->rx.sd);
	if (next != 0 && next < until &&
	    __atomic_exchange_n(&lc->irq.sleep_until, 0, __ATOMIC_RELAXED) != 0)
		sirq_irq_kick(&lc->irq);
}

/*
 * A NAPI thread or busy poller just let go of the lock, and takes it back
 * at once for its next poll: if the dispatcher found it busy, or a thread
 * waits for it, give way. An irq-mode dispatcher sleeping after a busy
 * look is kicked: at SCHED_FIFO it preempts the caller at once and gets
 * the lock while it is free. A yield is for a fair-class waiter (a
 * poll-mode dispatcher, a thread in sirq_bh_disable()); it also lets the
 * CPU's other fair threads ahead, which the kick does not (measured: a
 * yield at every kick took threaded NAPI under the stall load from 2.3 to
 * 9 ms p99 at 100 krequests/s).
 */
void
sirq_irq_lock_handback(struct sirq_lcore *lc)
{
	bool wanted = __atomic_load_n(&lc->lock_wanted, __ATOMIC_RELAXED) != 0;
	bool yield = sirq_exec_lock_contended(lc->cpu);

	if (likely(!wanted && !yield))
		return;
	if (wanted) {
		__atomic_store_n(&lc->lock_wanted, 0, __ATOMIC_RELAXED);
		if (lc->conf.mode == SIRQ_MODE_IRQ)
			sirq_irq_kick(&lc->irq);
		else
			yield = true;
	}
	if (yield)
		sched_yield();
}

/*
 * sirqd, after each of its runs, in irq mode: a dispatcher sleeping until
 * the tick is woken once a look is needed again (a queue given back
 * without an Rx interrupt to bring its next packet, a tracked packet
 * sent) or sirqd went idle.
 */
void
sirq_irq_worker_ran(void *arg)
{
	struct sirq_lcore *lc = arg;

	sirq_irq_napi_timer(lc);
	/* sirqd's run, then the flag: pairs with irq_sleep_ns(). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&lc->irq_tick_sleep, __ATOMIC_RELAXED) == 0 ||
	    irq_looks_idle(lc))
		return;
	if (__atomic_exchange_n(&lc->irq_tick_sleep, 0, __ATOMIC_RELAXED) != 0)
		sirq_irq_kick(&lc->irq);
}

/*
 * Sleep @sleep_ns at most: until an Rx interrupt, a kick, the next
 * timer as the last "hardirq" read it (none when sirqd held the lock:
 * sirqd looks at the timers itself before each pass), or the next NAPI
 * timer. True if an fd woke it.
 */
static bool
irq_sleep(struct sirq_lcore *lc, uint64_t sleep_ns)
{
	struct epoll_event ev[IRQ_MAX_EVENTS];
	struct timespec ts;
	int i, n;
	uint64_t napi_timer, now = sirq_now_ns();

	if (lc->timer_ticks > 0)
		sleep_ns = RTE_MIN(sleep_ns,
				   sirq_tsc_to_ns((uint64_t)lc->timer_ticks));
	/* The wake-up, then the timers: pairs with sirq_irq_napi_timer(). */
	__atomic_store_n(&lc->irq.sleep_until, now + sleep_ns, __ATOMIC_SEQ_CST);
	napi_timer = sirq_softnet_next_timer(&lc->rx.sd);
	/*
	 * A deferred NAPI's re-poll (napi_watchdog()'s hrtimer). One already
	 * due is the next look's, unless the lock was busy: sirqd fires it
	 * before its next pass, and a FIFO dispatcher that did not sleep for
	 * it would keep sirqd off the CPU.
	 */
	if (napi_timer != 0) {
		if (napi_timer > now)
			sleep_ns = RTE_MIN(sleep_ns, napi_timer - now);
		else if (!lc->look_busy)
			sleep_ns = 0;
	}
	ts.tv_sec = (time_t)(sleep_ns / SIRQ_NS_PER_SEC);
	ts.tv_nsec = (long)(sleep_ns % SIRQ_NS_PER_SEC);
	sirq_stat_add(&lc->stats.irq_sleeps, 1);
	if (lc->conf.qsbr != NULL)
		rte_rcu_qsbr_thread_offline(lc->conf.qsbr,
					    lc->conf.qsbr_dispatcher_id);
	n = epoll_pwait2(lc->irq.epoll_fd, ev, IRQ_MAX_EVENTS, &ts, NULL);
	__atomic_store_n(&lc->irq.sleep_until, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&lc->irq_tick_sleep, 0, __ATOMIC_RELAXED);
	if (lc->conf.qsbr != NULL)
		rte_rcu_qsbr_thread_online(lc->conf.qsbr,
					   lc->conf.qsbr_dispatcher_id);
	for (i = 0; i < n; i++) {
		uint64_t token;

		if (ev[i].data.u32 != IRQ_KICK_TAG) {
			sirq_stat_add(&lc->stats.irq_rx_events, 1);
			continue;
		}
		if (read(lc->irq.kick_fd, &token, sizeof(token)) < 0 &&
		    errno != EAGAIN)
			SIRQ_LOG(ERR, "lcore %u: kick read: %s", lc->lcore_id,
				 strerror(errno));
	}
	return n > 0;
}

/*
 * The scheduler tick: every 1/tick_hz s the dispatcher decides again
 * whether or not a queue interrupted (the kernel's irq_exit() after the
 * tick, with the NIC masked while its NAPI is scheduled). tick_hz 0:
 * every look decides.
 */
static bool
irq_tick_due(struct sirq_lcore *lc, uint64_t *next_tick)
{
	uint32_t hz = sirq_cpu_conf(lc->cpu)->params.tick_hz;
	uint64_t now, period;

	if (hz == 0)
		return true;
	period = SIRQ_NS_PER_SEC / hz;
	now = sirq_now_ns();
	if (now < *next_tick && *next_tick - now <= period)
		return false;
	/* On the tick's grid; ticks missed while busy are not made up. */
	*next_tick = now - now % period + period;
	sirq_stat_add(&lc->stats.irq_ticks, 1);
	return true;
}

/*
 * Work is still found by fetching where the PMD has no descriptor
 * status, and interrupts are edge-triggered, so every wake-up looks at
 * every idle queue before sleeping again.
 */
static void
irq_loop(struct sirq_lcore *lc)
{
	enum sirq_irq_exit_result res;
	uint64_t next_tick = 0;
	bool woken = true;

	while (!sirq_lcore_should_stop(lc)) {
		bool tick = irq_tick_due(lc, &next_tick);

		res = sirq_lcore_look(lc, woken || tick);
		woken = false;
		/*
		 * Loop at once only for work of our own: pending again, or a
		 * timer that was due and ran here, whose next deadline the
		 * next "hardirq" reads. Work left to sirqd, or a lock held by
		 * sirqd or a bh-disabled thread, needs them to run, which a
		 * SCHED_FIFO loop would prevent.
		 */
		if (res != SIRQ_IRQ_EXIT_RAN ||
		    sirq_worker_state(lc->cpu) == SIRQ_WORKER_RUNNABLE ||
		    (sirq_pending(lc->cpu) == 0 && lc->timer_ticks != 0))
			woken = irq_sleep(lc, irq_sleep_ns(lc, next_tick));
	}
}

int
sirq_irq_run(struct sirq_lcore *lc)
{
	struct sched_param saved_param;
	int saved_policy, ret;

	pthread_getschedparam(pthread_self(), &saved_policy, &saved_param);
	ret = irq_setup(lc);
	if (ret == 0)
		irq_loop(lc);
	else
		SIRQ_LOG(ERR, "lcore %u: irq mode set-up: %s", lc->lcore_id,
			 strerror(-ret));
	pthread_setschedparam(pthread_self(), saved_policy, &saved_param);
	if (lc->irq.epoll_fd >= 0) {
		close(lc->irq.epoll_fd);
		lc->irq.epoll_fd = -1;
	}
	return ret;
}
