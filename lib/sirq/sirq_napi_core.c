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
 * Since then the kernel has given each context settings of its own
 * (netdev-genl's napi-set, 6.13), all 0 by default, which is v6.1:
 *   - napi_defer_hard_irqs and gro_flush_timeout (5.11): a completion
 *     leaves the interrupt masked and arms the context's hrtimer, which
 *     schedules it again (napi_watchdog()), up to defer_hard_irqs empty
 *     polls in a row; the completion after those turns it back on;
 *   - threaded (5.12): scheduling wakes the context's own thread, which
 *     polls it with bottom halves off, instead of NET_RX; threaded
 *     busy-poll (6.19, c18d4b190a46): that thread holds the context
 *     busy polling (NAPI_STATE_IN_BUSY_POLL), so no poll completes it
 *     and its interrupt stays off while the mode is on;
 *   - busy polling with prefer_busy_poll (5.11): an application takes
 *     the context and polls it itself; NET_RX stands aside;
 *   - irq_suspend_timeout (6.13): while the application's busy poll
 *     finds events, the interrupt stays masked for that long past each
 *     find; when it finds none, deferral takes over.
 * The code below follows napi_complete_done(), __napi_poll(),
 * napi_watchdog(), napi_busy_loop(), busy_poll_stop() and
 * napi_suspend_irqs()/napi_resume_irqs() of 6.13; GRO has no part here
 * (libsirq has none), so gro_flush_timeout only times the deferral.
 *
 * What a poll does is the caller's: the DPDK binding bursts an Rx queue,
 * sirq-sim serves its simulated ring. No DPDK here.
 */

#include <errno.h>
#include <string.h>

#include "sirq_napi_core.h"

#define NSEC_PER_USEC 1000ULL

/* netdev-genl's spelling of enum netdev_napi_threaded. */
static const char *const napi_threaded_names[SIRQ_NAPI_THREADED_MAX] = {
	[SIRQ_NAPI_THREADED_DISABLED] = "disabled",
	[SIRQ_NAPI_THREADED_ENABLED] = "enabled",
	[SIRQ_NAPI_THREADED_BUSY_POLL] = "busy-poll",
};

const char *
sirq_napi_threaded_name(enum sirq_napi_threaded t)
{
	if ((unsigned int)t >= SIRQ_NAPI_THREADED_MAX)
		return NULL;
	return napi_threaded_names[t];
}

int
sirq_napi_threaded_from_name(const char *name)
{
	/* The values as numbers, and the boolean's spellings. */
	static const struct {
		const char *name;
		enum sirq_napi_threaded t;
	} aliases[] = {
		{ "0", SIRQ_NAPI_THREADED_DISABLED },
		{ "1", SIRQ_NAPI_THREADED_ENABLED },
		{ "2", SIRQ_NAPI_THREADED_BUSY_POLL },
		{ "false", SIRQ_NAPI_THREADED_DISABLED },
		{ "true", SIRQ_NAPI_THREADED_ENABLED },
		{ "no", SIRQ_NAPI_THREADED_DISABLED },
		{ "yes", SIRQ_NAPI_THREADED_ENABLED },
	};
	unsigned int i;

	if (name == NULL)
		return -EINVAL;
	for (i = 0; i < SIRQ_NAPI_THREADED_MAX; i++)
		if (strcmp(name, napi_threaded_names[i]) == 0)
			return (int)i;
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(name, aliases[i].name) == 0)
			return (int)aliases[i].t;
	return -EINVAL;
}

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
	sd->wake_thread = conf->wake_thread;
	sd->poll_ctx = conf->poll_ctx;
	sd->budget = (int)conf->budget;
	sd->budget_ns = (uint64_t)conf->budget_usecs * NSEC_PER_USEC;
	sd->time_squeeze = conf->time_squeeze;
	sd->budget_exhausted = conf->budget_exhausted;
	return 0;
}

int
sirq_softnet_set_limits(struct sirq_softnet *sd, unsigned int budget,
			unsigned int budget_usecs, uint16_t weight)
{
	unsigned int i;

	if (budget == 0 || budget > INT32_MAX || budget_usecs == 0 ||
	    weight == 0)
		return -EINVAL;
	sd->budget = (int)budget;
	sd->budget_ns = (uint64_t)budget_usecs * NSEC_PER_USEC;
	for (i = 0; i < sd->nb_napi; i++)
		sd->weight[i] = weight;
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

/*
 * ____napi_schedule(), NAPI_STATE_SCHED taken: a threaded context's
 * thread is woken; any other goes onto sd->poll_list and NET_RX is
 * raised.
 */
static inline void
napi_schedule_taken(struct sirq_softnet *sd, uint16_t idx)
{
	uint64_t bit = UINT64_C(1) << idx;

	if (sirq_unlikely(__atomic_load_n(&sd->threaded, __ATOMIC_RELAXED) &
			  bit)) {
		sd->wake_thread(sd->poll_ctx, idx);
		return;
	}
	__atomic_fetch_or(&sd->ready, bit, __ATOMIC_RELEASE);
	sirq_raise_irqoff(sd->cpu, SIRQ_NET_RX);
}

bool
sirq_napi_schedule(struct sirq_softnet *sd, uint16_t idx)
{
	if (!napi_schedule_prep(sd, UINT64_C(1) << idx))
		return false;
	napi_schedule_taken(sd, idx);
	return true;
}

static inline void
napi_timer_start(struct sirq_softnet *sd, uint16_t idx, uint64_t timeout_ns)
{
	/* hrtimer_start(): a timer already armed is moved. */
	__atomic_store_n(&sd->timer[idx], sirq_now(sd->cpu) + timeout_ns,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&sd->timers_armed,
			 sd->timers_armed | (UINT64_C(1) << idx),
			 __ATOMIC_RELAXED);
}

/*
 * napi_complete_done() of 6.13: NAPI_STATE_SCHED (and
 * NAPI_STATE_PREFER_BUSY_POLL) cleared; false if the interrupt stays
 * masked. A poll that found work restarts the deferral count. A context
 * a busy poller prefers stays masked for irq_suspend_timeout; else each
 * of defer_hard_irqs completions in a row keeps it masked for
 * gro_flush_timeout. Either way its timer schedules it again. A busy
 * poller's context is not completed at all (NAPI_STATE_IN_BUSY_POLL).
 */
static bool
napi_complete_done(struct sirq_softnet *sd, uint16_t idx, unsigned int work)
{
	const struct sirq_napi_params *c = &sd->cfg[idx];
	uint64_t bit = UINT64_C(1) << idx;
	uint64_t prefer, off, timeout = 0;
	bool ret = true;

	if (sirq_unlikely(__atomic_load_n(&sd->in_busy_poll,
					  __ATOMIC_RELAXED) & bit))
		return false;
	if (work != 0)
		sd->defer_count[idx] = c->defer_hard_irqs;
	prefer = __atomic_load_n(&sd->prefer_busy_poll, __ATOMIC_RELAXED) & bit;
	if (sirq_unlikely(prefer != 0)) {
		timeout = c->irq_suspend_timeout_ns;
		if (timeout != 0)
			ret = false;
	}
	if (ret && sd->defer_count[idx] > 0) {
		sd->defer_count[idx]--;
		timeout = c->gro_flush_timeout_ns;
		if (timeout != 0)
			ret = false;
	}
	/* Only what changes is written: v6.1's path writes SCHED alone. */
	off = __atomic_load_n(&sd->irq_off, __ATOMIC_RELAXED) & bit;
	if (!ret) {
		if (off == 0)
			__atomic_fetch_or(&sd->irq_off, bit, __ATOMIC_RELAXED);
		sd->counters[idx].deferred++;
	} else {
		if (sirq_unlikely(off != 0))
			__atomic_fetch_and(&sd->irq_off, ~bit,
					   __ATOMIC_RELAXED);
		sd->counters[idx].irq_unmasks++;
	}
	if (sirq_unlikely(prefer != 0))
		__atomic_fetch_and(&sd->prefer_busy_poll, ~bit, __ATOMIC_RELAXED);
	__atomic_fetch_and(&sd->sched, ~bit, __ATOMIC_RELEASE);
	if (timeout != 0)
		napi_timer_start(sd, idx, timeout);
	return ret;
}

/*
 * The driver's side of a completion: its interrupt on again, and work
 * that came while it was off scheduled now (virtnet_poll()).
 */
static inline void
napi_complete_rearm(struct sirq_softnet *sd, uint16_t idx, unsigned int work)
{
	if (napi_complete_done(sd, idx, work) && sd->rearm != NULL &&
	    sd->rearm(sd->poll_ctx, idx))
		sirq_napi_schedule(sd, idx);
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

/* Is @idx on the poll list? By the execution lock's holder. */
static bool
poll_list_has(const struct sirq_softnet *sd, uint16_t idx)
{
	unsigned int i;

	for (i = 0; i < sd->poll_len; i++)
		if (sd->poll_list[(sd->poll_head + i) % SIRQ_NAPI_MAX] == idx)
			return true;
	return false;
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
 * __napi_poll(): one poll up to the weight. A context that did not use
 * all of it is completed, and its interrupt re-armed unless deferred:
 * work that came in while it was off is scheduled now, for this run's
 * tail or the next run, as virtqueue_napi_schedule() after
 * napi_complete_done() does. One that used all of it must be polled
 * again (true), unless a busy poller prefers it: then it is completed
 * as if it were done, and scheduled again only if that turned its
 * interrupt back on.
 */
static inline bool
napi_poll_one(struct sirq_softnet *sd, uint16_t idx, unsigned int *work)
{
	uint16_t weight = sd->weight[idx];

	*work = sd->poll(sd->poll_ctx, idx, weight);
	sd->counters[idx].units += *work;
	if (sirq_likely(*work < weight)) {
		napi_complete_rearm(sd, idx, *work);
		return false;
	}
	if (sirq_unlikely(__atomic_load_n(&sd->prefer_busy_poll,
					  __ATOMIC_RELAXED) &
			  (UINT64_C(1) << idx))) {
		if (napi_complete_done(sd, idx, *work))
			sirq_napi_schedule(sd, idx);
		return false;
	}
	return true;
}

/* napi_poll(): a context that must be polled again goes on @repoll. */
static inline unsigned int
napi_poll(struct sirq_softnet *sd, uint16_t idx, uint16_t *repoll,
	  unsigned int *nb_repoll)
{
	unsigned int work;

	if (napi_poll_one(sd, idx, &work))
		repoll[(*nb_repoll)++] = idx;
	return work;
}

/*
 * The time limit is netdev_budget_usecs on the CPU's exact clock, not in
 * jiffies: the kernel's jiffies + usecs_to_jiffies(2000) is one jiffy at
 * HZ=100 or 250, so a run may last anything up to 10 or 4 ms, depending
 * on where in the tick it started. The engine's tick_hz models that for
 * the softirq loop's own limits; NET_RX keeps the 2 ms it is given.

 *
 * A thread whose CPU time is bounded (a SCHED_DEADLINE softirq thread,
 * sirq_round_limit) also stops before a poll that would end past its
 * round's end, judged by the last poll's time: the kernel would throttle
 * it there, mid-poll, holding the lock. Counted as a time_squeeze.
 */
void
sirq_softnet_rx_action(struct sirq_softnet *sd)
{
	struct sirq_cpu *cpu = sd->cpu;
	uint64_t now = sirq_now(cpu), polled;
	uint64_t time_limit = now + sd->budget_ns;
	/* A thread's bounded round (sirq_round_limit): no poll past its end. */
	uint64_t round_end = sirq_round_limit.end_ns;
	uint16_t repoll[SIRQ_NAPI_MAX];
	unsigned int nb_repoll = 0, i;
	int budget = sd->budget;
	uint16_t idx;

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
		idx = poll_list_pop(sd);
		/* napi-set made it threaded while it was on the list. */
		if (sirq_unlikely(__atomic_load_n(&sd->threaded,
						  __ATOMIC_RELAXED) &
				  (UINT64_C(1) << idx))) {
			sd->wake_thread(sd->poll_ctx, idx);
			continue;
		}
		budget -= (int)napi_poll(sd, idx, repoll, &nb_repoll);
		polled = sirq_now(cpu);
		if (sirq_unlikely(round_end != 0)) {
			uint64_t step = polled - now;

			sirq_round_limit.step_ns = step;
			now = polled;
			if (polled + step > round_end) {
				sirq_stat_add(sd->time_squeeze, 1);
				break;
			}
		}
		if (sirq_unlikely(budget <= 0 || polled >= time_limit)) {
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

int
sirq_napi_set_cfg(struct sirq_softnet *sd, uint16_t idx,
		  const struct sirq_napi_params *cfg)
{
	uint64_t bit = UINT64_C(1) << idx;
	bool was_threaded;

	if (idx >= sd->nb_napi || cfg == NULL ||
	    cfg->threaded >= SIRQ_NAPI_THREADED_MAX ||
	    (cfg->threaded && sd->wake_thread == NULL))
		return -EINVAL;
	was_threaded = (sd->threaded & bit) != 0;
	sd->cfg[idx] = *cfg;
	if ((cfg->threaded != 0) == was_threaded)
		return 0;
	if (cfg->threaded) {
		/*
		 * To a thread. Scheduled, the context is NET_RX's (on its
		 * list or its ready mask): NET_RX hands it to the thread
		 * when it comes to it (sirq_softnet_rx_action()), as the
		 * kernel's switch waits for the next schedule, which a
		 * context under a constant flood never reaches. Idle, its
		 * next schedule wakes the thread.
		 */
		__atomic_fetch_or(&sd->threaded, bit, __ATOMIC_RELAXED);
		return 0;
	}
	__atomic_fetch_and(&sd->threaded, ~bit, __ATOMIC_RELAXED);
	/*
	 * To NET_RX. A context its thread holds (woken, or busy polling)
	 * is handed over as it is, scheduled: the thread polls only under
	 * the execution lock, which the caller holds, and its next poll
	 * finds it not its own. One still on NET_RX's list (made threaded
	 * and back before NET_RX came to it) stays there, once. One an
	 * application's busy poller holds goes to NET_RX when that poller
	 * lets it go.
	 */
	if (sirq_napi_is_scheduled(sd, idx) && !poll_list_has(sd, idx) &&
	    (__atomic_load_n(&sd->in_busy_poll, __ATOMIC_RELAXED) & bit &
	     ~__atomic_load_n(&sd->thread_busy, __ATOMIC_RELAXED)) == 0) {
		__atomic_fetch_and(&sd->thread_busy, ~bit, __ATOMIC_RELAXED);
		__atomic_fetch_and(&sd->in_busy_poll, ~bit, __ATOMIC_RELAXED);
		napi_schedule_taken(sd, idx);
	}
	return 0;
}

/*
 * napi_watchdog(): the relaxed napi_schedule_prep() (no MISSED: no
 * device interrupt came), PREFER_BUSY_POLL cleared, then the schedule.
 * The interrupt stays masked: the completion that follows decides.
 */
unsigned int
sirq_softnet_timers(struct sirq_softnet *sd)
{
	uint64_t armed = sd->timers_armed, now;
	unsigned int fired = 0;

	if (sirq_likely(armed == 0))
		return 0;
	now = sirq_now(sd->cpu);
	while (armed != 0) {
		uint16_t idx = (uint16_t)__builtin_ctzll(armed);
		uint64_t bit = UINT64_C(1) << idx;

		armed &= armed - 1;
		if (sd->timer[idx] > now)
			continue;
		__atomic_store_n(&sd->timers_armed, sd->timers_armed & ~bit,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&sd->timer[idx], 0, __ATOMIC_RELAXED);
		fired++;
		if (napi_schedule_prep(sd, bit)) {
			__atomic_fetch_and(&sd->prefer_busy_poll, ~bit,
					   __ATOMIC_RELAXED);
			sd->counters[idx].watchdog++;
			napi_schedule_taken(sd, idx);
		}
	}
	return fired;
}

uint64_t
sirq_softnet_next_timer(const struct sirq_softnet *sd)
{
	uint64_t armed = __atomic_load_n(&sd->timers_armed, __ATOMIC_RELAXED);
	uint64_t next = 0;

	while (armed != 0) {
		uint16_t idx = (uint16_t)__builtin_ctzll(armed);
		uint64_t t = __atomic_load_n(&sd->timer[idx], __ATOMIC_RELAXED);

		armed &= armed - 1;
		if (t != 0 && (next == 0 || t < next))
			next = t;
	}
	return next;
}

void
sirq_softnet_count_irqs(struct sirq_softnet *sd, uint64_t fired)
{
	while (fired != 0) {
		struct sirq_napi_counters *c =
			&sd->counters[__builtin_ctzll(fired)];

		fired &= fired - 1;
		__atomic_store_n(&c->irqs, c->irqs + 1, __ATOMIC_RELAXED);
	}
}

/*
 * napi_threaded_poll() of 6.19: each round reads whether busy polling
 * is wanted and sets NAPI_STATE_IN_BUSY_POLL to match, then polls:
 *	want_busy_poll = val & NAPIF_STATE_THREADED_BUSY_POLL;
 *	in_busy_poll = val & NAPIF_STATE_IN_BUSY_POLL;
 *	if (want_busy_poll != in_busy_poll)
 *		assign_bit(NAPI_STATE_IN_BUSY_POLL, &napi->state, want_busy_poll);
 *	napi_threaded_poll_loop(napi, want_busy_poll);
 * With IN_BUSY_POLL, napi_complete_done() returns false: the context
 * stays scheduled (the thread's), its interrupt off, and
 * napi_thread_wait() finds it scheduled again at once.
 */
bool
sirq_napi_threaded_poll(struct sirq_softnet *sd, uint16_t idx)
{
	uint64_t bit = UINT64_C(1) << idx;
	unsigned int work;
	bool busy;

	/*
	 * Scheduled for the thread: NAPI_STATE_SCHED_THREADED. A context
	 * that is not threaded (any more) is NET_RX's; one that an
	 * application's busy poller took is that poller's.
	 */
	if (!sirq_napi_is_scheduled(sd, idx) ||
	    (__atomic_load_n(&sd->threaded, __ATOMIC_RELAXED) & bit) == 0 ||
	    (__atomic_load_n(&sd->in_busy_poll, __ATOMIC_RELAXED) & bit &
	     ~__atomic_load_n(&sd->thread_busy, __ATOMIC_RELAXED)) != 0)
		return false;
	/*
	 * Made threaded while NET_RX held it: still NET_RX's until NET_RX
	 * hands it over, whatever woke the thread.
	 */
	if (sirq_unlikely((__atomic_load_n(&sd->ready, __ATOMIC_RELAXED) &
			   bit) != 0 || poll_list_has(sd, idx)))
		return false;
	busy = sd->cfg[idx].threaded == SIRQ_NAPI_THREADED_BUSY_POLL;
	if (sirq_unlikely(busy != sirq_napi_thread_busy(sd, idx))) {
		if (busy) {
			__atomic_fetch_or(&sd->thread_busy, bit,
					  __ATOMIC_RELAXED);
			__atomic_fetch_or(&sd->in_busy_poll, bit,
					  __ATOMIC_RELAXED);
		} else {
			__atomic_fetch_and(&sd->in_busy_poll, ~bit,
					   __ATOMIC_RELAXED);
			__atomic_fetch_and(&sd->thread_busy, ~bit,
					   __ATOMIC_RELAXED);
		}
	}
	sd->counters[idx].thread_polls++;
	if (busy)
		sd->counters[idx].thread_busy_polls++;
	return napi_poll_one(sd, idx, &work) || busy;
}

bool
sirq_napi_busy_poll_start(struct sirq_softnet *sd, uint16_t idx, bool prefer)
{
	uint64_t bit = UINT64_C(1) << idx;

	/* Held by NET_RX, its thread, a timer's schedule or another poller. */
	if (!napi_schedule_prep(sd, bit)) {
		if (prefer)
			__atomic_fetch_or(&sd->prefer_busy_poll, bit,
					  __ATOMIC_RELAXED);
		return false;
	}
	/* A successful take marks nothing more (__napi_busy_loop()). */
	__atomic_fetch_or(&sd->in_busy_poll, bit, __ATOMIC_RELAXED);
	return true;
}

unsigned int
sirq_napi_busy_poll_once(struct sirq_softnet *sd, uint16_t idx,
			 uint16_t budget)
{
	unsigned int work = sd->poll(sd->poll_ctx, idx, budget);

	sd->counters[idx].busy_polls++;
	sd->counters[idx].busy_packets += work;
	sd->counters[idx].units += work;
	return work;
}

unsigned int
sirq_napi_busy_poll_stop(struct sirq_softnet *sd, uint16_t idx, bool prefer,
			 uint16_t budget)
{
	const struct sirq_napi_params *c = &sd->cfg[idx];
	uint64_t bit = UINT64_C(1) << idx;
	bool skip_schedule = false;
	unsigned int work;
	uint64_t timeout;

	__atomic_fetch_and(&sd->in_busy_poll, ~bit, __ATOMIC_RELAXED);
	if (prefer) {
		timeout = c->irq_suspend_timeout_ns;
		if (timeout == 0) {
			sd->defer_count[idx] = c->defer_hard_irqs;
			timeout = sd->defer_count[idx] != 0 ?
				c->gro_flush_timeout_ns : 0;
		}
		if (timeout != 0) {
			napi_timer_start(sd, idx, timeout);
			skip_schedule = true;
		}
	}
	/* "All we really want here is to re-enable device interrupts." */
	work = sirq_napi_busy_poll_once(sd, idx, budget);
	if (work < budget) {
		napi_complete_rearm(sd, idx, work);
	} else if (skip_schedule) {
		__atomic_fetch_or(&sd->irq_off, bit, __ATOMIC_RELAXED);
		__atomic_fetch_and(&sd->sched, ~bit, __ATOMIC_RELEASE);
	} else {
		napi_schedule_taken(sd, idx);
	}
	return work;
}

void
sirq_softnet_suspend_irqs(struct sirq_softnet *sd, uint16_t idx)
{
	uint64_t timeout = sd->cfg[idx].irq_suspend_timeout_ns;

	if (timeout != 0)
		napi_timer_start(sd, idx, timeout);
}

void
sirq_softnet_resume_irqs(struct sirq_softnet *sd, uint16_t idx)
{
	if (sd->cfg[idx].irq_suspend_timeout_ns != 0)
		sirq_napi_schedule(sd, idx);
}

void
sirq_softnet_reset(struct sirq_softnet *sd)
{
	__atomic_store_n(&sd->ready, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sd->sched, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sd->irq_off, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sd->in_busy_poll, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sd->thread_busy, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sd->prefer_busy_poll, 0, __ATOMIC_RELAXED);
	sd->timers_armed = 0;
	memset(sd->timer, 0, sizeof(sd->timer));
	memset(sd->defer_count, 0, sizeof(sd->defer_count));
	sd->poll_head = 0;
	sd->poll_len = 0;
}
