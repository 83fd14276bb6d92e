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

struct sirq_softnet_conf {
	struct sirq_cpu *cpu;		/* NET_RX is raised on it */
	unsigned int budget;		/* netdev_budget: units per run */
	unsigned int budget_usecs;	/* netdev_budget_usecs */
	sirq_napi_poll_t poll;
	sirq_napi_rearm_t rearm;	/* optional */
	void *poll_ctx;			/* both callbacks' ctx */
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
 * Every context idle, the lists empty: at stop, once nothing runs NET_RX
 * and nothing schedules.
 */
void sirq_softnet_reset(struct sirq_softnet *sd);

#endif /* SIRQ_NAPI_CORE_H */
