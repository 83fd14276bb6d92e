/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_NAPI_CORE_H
#define SIRQ_NAPI_CORE_H

/*
 * Internal to libsirq: NAPI's accounting, the part of net/core/dev.c
 * that decides which context is polled, when, and for how much:
 * napi_schedule(), the poll list, napi_poll() and net_rx_action() (the
 * v6.1 order). No DPDK: the binding (sirq_napi.c, Rx queues) and sirq-sim
 * (its simulated NIC) run this one copy with their own poll function.
 * Not installed.
 *
 * Per CPU, as the kernel's softnet_data: what any thread may touch is
 * the NAPI_STATE_SCHED bits and the newly-scheduled mask; the poll list,
 * the weights and the counters belong to whoever runs NET_RX (the holder
 * of the CPU's execution lock).
 */

#include <stdbool.h>
#include <stdint.h>

#include "sirq_private.h"

/* NAPI contexts per CPU: one bit each in the 64-bit masks. */
#define SIRQ_NAPI_MAX 64

/*
 * The driver's poll: take up to @weight units of work from context @idx
 * and return how many it took. Less than @weight means it is done: the
 * context is completed (napi_complete_done(): NAPI_STATE_SCHED cleared,
 * its "interrupt" on again) right after the call returns, so whatever
 * must precede that (re-arming the interrupt's source) is done in here.
 * @weight or more keeps it scheduled, to be polled again on the next
 * run of NET_RX.
 */
typedef unsigned int (*sirq_napi_poll_t)(void *ctx, uint16_t idx,
					 uint16_t weight);

/*
 * After a context completed (NAPI_STATE_SCHED already clear): turn its
 * interrupt back on, then look at its source once more and return true
 * if work came in before the interrupt was on. The context is then
 * scheduled again, so that work does not wait for the next interrupt:
 * the device may have added it while the poll ran, when the interrupt
 * was off and will not fire for it (virtnet_poll():
 * virtqueue_enable_cb_prepare(), napi_complete_done(), virtqueue_poll(),
 * virtqueue_napi_schedule()). NULL where contexts have no interrupt of
 * their own to re-arm.
 */
typedef bool (*sirq_napi_rearm_t)(void *ctx, uint16_t idx);

/*
 * A threaded context was scheduled: wake its thread, which polls it with
 * sirq_napi_threaded_poll() (napi_threaded_poll()'s wake_up_process()).
 * Any thread that schedules calls it. NULL where no context is threaded.
 */
typedef void (*sirq_napi_wake_t)(void *ctx, uint16_t idx);

/* Per-context counters, by the execution lock's holder; read by anyone. */
struct sirq_napi_counters {
	uint64_t deferred;	/* completions that left the interrupt off */
	uint64_t watchdog;	/* timer expiries that scheduled the context */
	uint64_t busy_polls;	/* polls by a busy-polling application */
	uint64_t busy_packets;	/* ... units they took */
	uint64_t thread_polls;	/* polls by the context's thread */
	uint64_t thread_busy_polls;	/* ... of which in busy-poll mode */
	/* napi_complete_done() turned its interrupt back on (not deferred) */
	uint64_t irq_unmasks;
	uint64_t units;		/* taken by every poll: NET_RX, thread, busy */
	/* its queue's Rx interrupts that woke the dispatcher (its writer) */
	uint64_t irqs;
};

struct sirq_softnet_conf {
	struct sirq_cpu *cpu;		/* NET_RX is raised on it */
	unsigned int budget;		/* netdev_budget: units per run */
	unsigned int budget_usecs;	/* netdev_budget_usecs */
	sirq_napi_poll_t poll;
	sirq_napi_rearm_t rearm;	/* optional */
	sirq_napi_wake_t wake_thread;	/* optional */
	void *poll_ctx;			/* the callbacks' ctx */
	/* Counted by NET_RX's runner; one writer, read by anyone. */
	uint64_t *time_squeeze;		/* a run stopped with work left */
	uint64_t *budget_exhausted;	/* ... by the budget of units */
};

/* softnet_data's NAPI part. Embed it; initialise with sirq_softnet_init(). */
struct sirq_softnet {
	/* Any thread. */
	uint64_t sched;			/* NAPI_STATE_SCHED, a bit per context */
	/*
	 * Contexts scheduled since NET_RX last took them: the kernel's
	 * sd->poll_list as napi_schedule() appends to it, spliced by NET_RX
	 * with an exchange instead of irqs off. A mask keeps no order among
	 * them: they are taken lowest index first.
	 */
	uint64_t ready;
	/*
	 * Contexts whose interrupt stays masked while they are not
	 * scheduled: a completion deferred it (napi_defer_hard_irqs,
	 * irq_suspend_timeout) and only the context's timer brings it back
	 * (napi_watchdog()). A look at its source skips it, as a masked
	 * device raises nothing.
	 */
	uint64_t irq_off;
	/* NAPI_STATE_IN_BUSY_POLL: an application owns it (and it is SCHED). */
	uint64_t in_busy_poll;
	/* NAPI_STATE_PREFER_BUSY_POLL: NET_RX stands aside for a busy poller. */
	uint64_t prefer_busy_poll;
	/* NAPI_STATE_THREADED: scheduling wakes its thread, not NET_RX. */
	uint64_t threaded;
	/*
	 * Its thread holds it, busy polling (threaded busy-poll, 6.19): the
	 * thread set its IN_BUSY_POLL bit itself, so no poll completes it.
	 * Set and cleared by the thread, under the execution lock, and by
	 * a napi-set that hands it to NET_RX.
	 */
	uint64_t thread_busy;

	/* NET_RX's runner only (the execution lock holder). */
	struct sirq_cpu *cpu __attribute__((aligned(SIRQ_CACHE_LINE)));
	sirq_napi_poll_t poll;
	sirq_napi_rearm_t rearm;
	void *poll_ctx;
	int budget;
	uint64_t budget_ns;
	uint64_t *time_squeeze;
	uint64_t *budget_exhausted;
	/*
	 * Scheduled contexts that NET_RX has taken, in poll order: a ring of
	 * context indexes. Between runs: those a run did not reach, those
	 * scheduled while it ran, those it will poll again.
	 */
	uint16_t poll_head;
	uint16_t poll_len;
	uint16_t poll_list[SIRQ_NAPI_MAX];
	uint16_t nb_napi;
	uint16_t weight[SIRQ_NAPI_MAX];
	sirq_napi_wake_t wake_thread;
	/*
	 * Per context, the execution lock's holder only (NET_RX, a threaded
	 * or busy poll, the timers): its settings (sirq.h; all 0 is v6.1's
	 * NAPI), napi->defer_hard_irqs_count
	 * and its hrtimer (the deadline on the CPU's clock; 0: not armed).
	 */
	struct sirq_napi_params cfg[SIRQ_NAPI_MAX];
	uint32_t defer_count[SIRQ_NAPI_MAX];
	uint64_t timer[SIRQ_NAPI_MAX];
	uint64_t timers_armed;		/* a bit per armed timer */
	struct sirq_napi_counters counters[SIRQ_NAPI_MAX];
};

/**
 * Initialise @p sd with no NAPI context.
 *
 * @return 0, or -EINVAL (no CPU, poll function or counters, a budget
 *   of 0 units or 0 us).
 */
int sirq_softnet_init(struct sirq_softnet *sd,
		      const struct sirq_softnet_conf *conf);

/**
 * New netdev_budget, netdev_budget_usecs and, for every context, weight
 * (the sysctls and dev_weight). By the execution lock's holder: NET_RX
 * reads them on its next run.
 *
 * @return 0, or -EINVAL for a budget of 0 units or 0 us, or weight 0.
 */
int sirq_softnet_set_limits(struct sirq_softnet *sd, unsigned int budget,
			    unsigned int budget_usecs, uint16_t weight);

/**
 * netif_napi_add(): a NAPI context of @p weight, idle.
 *
 * Not while NET_RX may run.
 *
 * @return its index (0, 1, ...), -EINVAL for a weight of 0, -ENOSPC
 *   beyond SIRQ_NAPI_MAX.
 */
int sirq_napi_add(struct sirq_softnet *sd, uint16_t weight);

/**
 * napi_schedule(): if context @p idx is idle, mark it scheduled, put it
 * on the newly-scheduled mask and raise NET_RX (sirq_raise_irqoff(): no
 * kick, as from a hardirq). Any thread; the release on the mask
 * publishes what the caller wrote before to whichever thread runs NET_RX.
 *
 * @return true if this call scheduled it, false if it already was.
 */
bool sirq_napi_schedule(struct sirq_softnet *sd, uint16_t idx);

/** Is context @p idx scheduled (its "interrupt" masked)? Any thread. */
static inline bool
sirq_napi_is_scheduled(const struct sirq_softnet *sd, uint16_t idx)
{
	return (__atomic_load_n(&sd->sched, __ATOMIC_ACQUIRE) &
		(UINT64_C(1) << idx)) != 0;
}

/**
 * net_rx_action(): poll every context on the list once, in order, until
 * it is empty or the budget of units or time is spent (time_squeeze).
 * A context that completes is re-armed (conf.rearm) and scheduled again
 * if its source already has work.
 * Then the list is, in this order: the contexts not reached, those
 * scheduled meanwhile, those that used their whole weight; if it is not
 * empty NET_RX is raised again. Time is the CPU's exact clock
 * (sirq_now()), whatever its tick_hz: see sirq_napi_core.c.
 *
 * The holder of the CPU's execution lock only (NET_RX's handler).
 */
void sirq_softnet_rx_action(struct sirq_softnet *sd);

/**
 * napi-set: context @p idx's settings. By the execution lock's holder.
 * Never refused for being scheduled: a context under a constant flood
 * never stops being scheduled. Between enabled and busy-poll the poller
 * stays the thread, so that change is taken at the thread's next poll
 * (busy-poll starts at the context's next scheduling, as the kernel's;
 * the caller may schedule it). A scheduled context set to a thread is
 * handed to it by NET_RX when NET_RX comes to it on its list. One its
 * thread holds (woken, or busy polling) that is set to disabled is
 * handed to NET_RX at once: the thread lets it go
 * (NAPI_STATE_IN_BUSY_POLL cleared) and NET_RX is raised for it. One an
 * application's busy poller holds changes poller when that poller lets
 * it go.
 *
 * @return 0, or -EINVAL for an unknown context, a threaded value from
 *   SIRQ_NAPI_THREADED_MAX up or threaded without a wake_thread
 *   callback.
 */
int sirq_napi_set_cfg(struct sirq_softnet *sd, uint16_t idx,
		      const struct sirq_napi_params *cfg);

/**
 * The napi_watchdog() hrtimers: every context whose timer is due is
 * scheduled if it is not (NAPI_STATE_PREFER_BUSY_POLL cleared), as a
 * device interrupt would, with its interrupt still masked. By the
 * execution lock's holder, at each "hardirq".
 *
 * @return how many timers expired.
 */
unsigned int sirq_softnet_timers(struct sirq_softnet *sd);

/**
 * The earliest armed timer's deadline on the CPU's clock, 0 if none:
 * for a dispatcher's sleep. Any thread (a racy read: at worst a sleep
 * one timer too long or short, bounded by the caller's tick).
 */
uint64_t sirq_softnet_next_timer(const struct sirq_softnet *sd);

/**
 * The Rx interrupts of the contexts in @p fired (a bit each) woke the
 * dispatcher: their irqs counters, by the dispatcher alone.
 */
void sirq_softnet_count_irqs(struct sirq_softnet *sd, uint64_t fired);

/**
 * napi_threaded_poll()'s inner loop, once: if context @p idx is
 * scheduled for its thread (threaded, and no application's busy poller
 * holds it), poll it up to its weight; it completes as in NET_RX. In
 * threaded busy-poll mode (its cfg, read at each call, as
 * napi_threaded_poll() reads NAPI_STATE_THREADED_BUSY_POLL) the thread
 * takes NAPI_STATE_IN_BUSY_POLL first, so no poll completes it and its
 * interrupt is never turned back on; the first poll after the mode is
 * left lets it go again, and that poll completes it as usual.
 * By the execution lock's holder (the thread with bottom halves off).
 *
 * @return true if it must be polled again (after the thread's
 *   cond_resched()): it used its whole weight, or it is busy polled.
 */
bool sirq_napi_threaded_poll(struct sirq_softnet *sd, uint16_t idx);

/** Does context @p idx's thread hold it, busy polling? Any thread. */
static inline bool
sirq_napi_thread_busy(const struct sirq_softnet *sd, uint16_t idx)
{
	return (__atomic_load_n(&sd->thread_busy, __ATOMIC_RELAXED) &
		(UINT64_C(1) << idx)) != 0;
}

/**
 * napi_busy_loop()'s start: take context @p idx for a busy poller
 * (NAPI_STATE_SCHED | NAPI_STATE_IN_BUSY_POLL). A context that is
 * already scheduled is left to whoever has it; with @p prefer it is
 * marked NAPI_STATE_PREFER_BUSY_POLL, so that NET_RX completes it at its
 * next full poll instead of polling it again, and its completion keeps
 * the interrupt off for irq_suspend_timeout. By the execution lock's
 * holder.
 *
 * @return true if the caller owns it now.
 */
bool sirq_napi_busy_poll_start(struct sirq_softnet *sd, uint16_t idx,
			       bool prefer);

/**
 * One busy poll of an owned context, up to @p budget units; it is not
 * completed (napi_complete_done() returns false for IN_BUSY_POLL).
 *
 * @return the units it took.
 */
unsigned int sirq_napi_busy_poll_once(struct sirq_softnet *sd, uint16_t idx,
				      uint16_t budget);

/**
 * busy_poll_stop(): the owner lets context @p idx go. With @p prefer,
 * its interrupt stays masked under a timer: irq_suspend_timeout if set,
 * else gro_flush_timeout if defer_hard_irqs is; one more poll, which
 * completes it as any poll does, or, if it used the whole @p budget,
 * schedules it for NET_RX, or, under the timer, leaves it idle and
 * masked until the timer.
 *
 * @return the units that last poll took.
 */
unsigned int sirq_napi_busy_poll_stop(struct sirq_softnet *sd, uint16_t idx,
			      bool prefer, uint16_t budget);

/**
 * napi_suspend_irqs(): the application's busy poll found events; the
 * context's timer is pushed out to irq_suspend_timeout (if set), so its
 * interrupt and NET_RX stay off while the application keeps finding.
 * By the execution lock's holder.
 */
void sirq_softnet_suspend_irqs(struct sirq_softnet *sd, uint16_t idx);

/**
 * napi_resume_irqs(): the busy poll found nothing; with
 * irq_suspend_timeout set the context is scheduled now, and its
 * completion decides the interrupt as usual (deferral, if configured).
 */
void sirq_softnet_resume_irqs(struct sirq_softnet *sd, uint16_t idx);

/**
 * Every context idle, the lists empty: at stop, once nothing runs NET_RX
 * and nothing schedules.
 */
void sirq_softnet_reset(struct sirq_softnet *sd);

#endif /* SIRQ_NAPI_CORE_H */
