/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NAPI's accounting, as net/core/dev.c (v6.1) does it: napi_schedule()
 * masks a context's "interrupt" and hands it to NET_RX; net_rx_action()
 * polls each context on its list once, up to the context's weight,
 * within netdev_budget units and netdev_budget_usecs; a context that
 * used its whole weight goes on a repoll list that only the next run
 * sees, after the contexts the run did not reach and after those
 * scheduled meanwhile (commit d75b1ade567f, "net: less interrupt
 * masking in NAPI"; before it, one busy context went back to the tail
 * of the same list and was polled again and again until the budget or
 * the time was spent).
 *
 * What a poll does is the caller's: the DPDK binding bursts an Rx queue,
 * sirq-sim serves its simulated ring. No DPDK here.
 */

#include <errno.h>
#include <string.h>

#include "sirq_napi_core.h"

#define NSEC_PER_USEC 1000ULL

int
sirq_softnet_init(struct sirq_softnet *sd, const struct sirq_softnet_conf *conf)
{
	if (sd == NULL || conf == NULL || conf->cpu == NULL ||
	    conf->poll == NULL || conf->time_squeeze == NULL ||
	    conf->budget_exhausted == NULL || conf->budget == 0 ||
	    conf->budget > INT32_MAX || conf->budget_usecs == 0)
		return -EINVAL;
	memset(sd, 0, sizeof(*sd));
	sd->cpu = conf->cpu;
	sd->poll = conf->poll;
	sd->rearm = conf->rearm;
	sd->poll_ctx = conf->poll_ctx;
	sd->budget = (int)conf->budget;
	sd->budget_ns = (uint64_t)conf->budget_usecs * NSEC_PER_USEC;
	sd->time_squeeze = conf->time_squeeze;
	sd->budget_exhausted = conf->budget_exhausted;
	return 0;
}

int
sirq_napi_add(struct sirq_softnet *sd, uint16_t weight)
{
	if (weight == 0)
		return -EINVAL;
	if (sd->nb_napi >= SIRQ_NAPI_MAX)
		return -ENOSPC;
	sd->weight[sd->nb_napi] = weight;
	return sd->nb_napi++;
}

/*
 * napi_schedule_prep(): NAPI_STATE_SCHED, taken by one caller only (the
 * dispatcher's and sirqd's looks may race).
 */
static inline bool
napi_schedule_prep(struct sirq_softnet *sd, uint64_t bit)
{
	return (__atomic_fetch_or(&sd->sched, bit, __ATOMIC_ACQUIRE) & bit) == 0;
}

bool
sirq_napi_schedule(struct sirq_softnet *sd, uint16_t idx)
{
	uint64_t bit = UINT64_C(1) << idx;

	if (!napi_schedule_prep(sd, bit))
		return false;
	/* ____napi_schedule(): onto sd->poll_list, then the raise. */
	__atomic_fetch_or(&sd->ready, bit, __ATOMIC_RELEASE);
	sirq_raise_irqoff(sd->cpu, SIRQ_NET_RX);
	return true;
}

/* napi_complete_done(): the context's "interrupt" is on again. */
static inline void
napi_complete_done(struct sirq_softnet *sd, uint16_t idx)
{
	__atomic_fetch_and(&sd->sched, ~(UINT64_C(1) << idx), __ATOMIC_RELEASE);
}

static inline void
poll_list_add_tail(struct sirq_softnet *sd, uint16_t idx)
{
	sd->poll_list[(sd->poll_head + sd->poll_len) % SIRQ_NAPI_MAX] = idx;
	sd->poll_len++;
}

static inline uint16_t
poll_list_pop(struct sirq_softnet *sd)
{
	uint16_t idx = sd->poll_list[sd->poll_head];

	sd->poll_head = (sd->poll_head + 1) % SIRQ_NAPI_MAX;
	sd->poll_len--;
	return idx;
}

/*
 * list_splice_tail_init(&sd->poll_list, &list): what napi_schedule()
 * put on the mask goes to the tail of the list. The acquire pairs with
 * its release.
 */
static void
poll_list_splice_tail_ready(struct sirq_softnet *sd)
{
	uint64_t ready = __atomic_exchange_n(&sd->ready, 0, __ATOMIC_ACQUIRE);

	while (ready != 0) {
		poll_list_add_tail(sd, (uint16_t)__builtin_ctzll(ready));
		ready &= ready - 1;
	}
}

/*
 * napi_poll(): one poll up to the weight. A context that used all of it
 * stays scheduled and goes on @repoll; one that did not is completed,
 * and its interrupt re-armed: work that came in while it was off is
 * scheduled now, for this run's tail or the next run, as
 * virtqueue_napi_schedule() after napi_complete_done() does.
 */
static inline unsigned int
napi_poll(struct sirq_softnet *sd, uint16_t idx, uint16_t *repoll,
	  unsigned int *nb_repoll)
{
	uint16_t weight = sd->weight[idx];
	unsigned int work = sd->poll(sd->poll_ctx, idx, weight);

	if (sirq_likely(work < weight)) {
		napi_complete_done(sd, idx);
		if (sd->rearm != NULL && sd->rearm(sd->poll_ctx, idx))
			sirq_napi_schedule(sd, idx);
		return work;
	}
	repoll[(*nb_repoll)++] = idx;
	return work;
}

/*
 * The time limit is netdev_budget_usecs on the CPU's exact clock, not in
 * jiffies: the kernel's jiffies + usecs_to_jiffies(2000) is one jiffy at
 * HZ=100 or 250, so a run may last anything up to 10 or 4 ms, depending
 * on where in the tick it started. The engine's tick_hz models that for
 * the softirq loop's own limits; NET_RX keeps the 2 ms it is given.
 */
void
sirq_softnet_rx_action(struct sirq_softnet *sd)
{
	struct sirq_cpu *cpu = sd->cpu;
	uint64_t time_limit = sirq_now(cpu) + sd->budget_ns;
	uint16_t repoll[SIRQ_NAPI_MAX];
	unsigned int nb_repoll = 0, i;
	int budget = sd->budget;

	/* list_splice_init(&sd->poll_list, &list) */
	poll_list_splice_tail_ready(sd);

	for (;;) {
		if (sd->poll_len == 0) {
			/*
			 * Whatever was scheduled meanwhile raised NET_RX
			 * itself and is found by the next run.
			 */
			if (nb_repoll == 0)
				return;
			break;
		}
		budget -= (int)napi_poll(sd, poll_list_pop(sd), repoll,
					 &nb_repoll);
		if (sirq_unlikely(budget <= 0 || sirq_now(cpu) >= time_limit)) {
			sirq_stat_add(sd->time_squeeze, 1);
			if (budget <= 0)
				sirq_stat_add(sd->budget_exhausted, 1);
			break;
		}
	}

	/*
	 * What the run did not reach stays first; then what was scheduled
	 * meanwhile, then the repoll list:
	 *	list_splice_tail_init(&sd->poll_list, &list);
	 *	list_splice_tail(&repoll, &list);
	 *	list_splice(&list, &sd->poll_list);
	 */
	poll_list_splice_tail_ready(sd);
	for (i = 0; i < nb_repoll; i++)
		poll_list_add_tail(sd, repoll[i]);
	if (sd->poll_len != 0)
		sirq_raise_irqoff(cpu, SIRQ_NET_RX);
}

void
sirq_softnet_reset(struct sirq_softnet *sd)
{
	__atomic_store_n(&sd->ready, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sd->sched, 0, __ATOMIC_RELAXED);
	sd->poll_head = 0;
	sd->poll_len = 0;
}
