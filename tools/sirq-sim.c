/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * sirq-sim: the overload policies on simulated time, deterministic.
 *
 * The real engine (sirq_core.c, sirq_policy.c) runs one CPU on a simulated
 * clock read through ops.clock_ns. Nothing sleeps and there are no
 * threads: seconds of simulated time take milliseconds, every run with the
 * same options prints the same numbers, and any packet rate can be played,
 * 100 Gb/s line rate included. Time is kept in picoseconds so that
 * per-packet costs below a nanosecond stay exact.
 *
 * What shares the CPU (irq mode of DESIGN.md, "Two dispatcher modes"):
 *
 *  - the NIC: steady arrivals at a rate (pps, or Gb/s of a packet size)
 *    plus optional trains (size and gap from a fixed-seed PRNG) into an
 *    Rx ring; what finds the ring full is dropped. Arrivals are a function
 *    of time only, so every policy sees the same traffic.
 *  - the dispatcher, a hardirq that preempts every task: every irq tick
 *    (and, optionally, on an Rx interrupt with NAPI's re-arm rule) it
 *    schedules the ring's NAPI context if the ring holds packets (which
 *    raises NET_RX unless it was scheduled) and calls sirq_irq_exit().
 *    Its inline work is charged to no task, as with IRQ time accounting.
 *  - NET_RX, net_rx_action(): the engine's own (sirq_napi_core.c, the
 *    one the DPDK binding runs), with the Rx ring as its NAPI context:
 *    weight 64, netdev budget 300, 2 ms. The ring is polled once per
 *    run; a full poll re-raises NET_RX, a short one completes the
 *    context and re-arms the Rx interrupt. Each packet costs --cost-ns
 *    and is forwarded into a TX buffer that is flushed every 32 packets,
 *    as sirq_tx() does; NET_TX flushes the rest.
 *  - tasks under a fair-share scheduler, EEVDF as in Linux >= 6.6:
 *    vruntime weighted by nice, eligibility against the weighted average,
 *    earliest virtual deadline first, a base slice checked at the
 *    scheduler tick (--sched-hz), lag kept across sleep, RUN_TO_PARITY
 *    against wake-up preemption, sched_yield() pushing the deadline one
 *    slice on. The tasks are the application's threads and the worker.
 *  - the application: --app-threads threads; each wakes every
 *    --app-period (gaps drawn in [0, 2 period] with --app-random) and
 *    wants --app-hold of CPU, as apps/common/app_load.c does on the real
 *    scheduler. need_resched is "one of them is runnable". hold = period
 *    makes a steady load.
 *  - the worker: the kernel's ksoftirqd by default (passes charged as fair
 *    time; cond_resched(), which only switches when the scheduler asked),
 *    or libsirq's sirqd with --worker sirqd (each pass boosted above the
 *    fair class, so it does not move its vruntime and the fair class
 *    keeps its lag; sched_yield() between passes).
 *
 * Latency is counted per packet from its arrival on the ring to the start
 * of its processing (NET_RX), and from its hand-over to the TX buffer to
 * the flush (NET_TX); stalls are the engine's NET_RX raise-to-run >= 8 ms,
 * as l2fwd-sirq and the patch author's tracker count them. Everything else
 * comes from the engine's counters.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sirq.h>

#include "sirq_napi_core.h"

#define PS_PER_NS	UINT64_C(1000)
#define PS_PER_US	(1000 * PS_PER_NS)
#define PS_PER_MS	(1000 * PS_PER_US)
#define PS_PER_S	(1000 * PS_PER_MS)
#define NS_PER_US	UINT64_C(1000)
#define NS_PER_MS	(1000 * NS_PER_US)
#define TIME_NEVER	UINT64_MAX

/* Time starts here, not at 0: the engine reads a raise stamp of 0 as "none". */
#define SIM_EPOCH_PS	PS_PER_S

/* Ethernet on the wire: 8 B preamble and SFD, 12 B inter-frame gap. */
#define ETH_WIRE_OVERHEAD	20
#define ETH_MIN_FRAME		64
#define ETH_MAX_FRAME		9216	/* jumbo */
#define BITS_PER_BYTE		8

/* A common NIC ring size (the ethtool -g maximum of ixgbe and i40e). */
#define RX_RING_DEFAULT		4096
#define RX_RING_MAX		(1u << 20)

/* EEVDF (kernel/sched/fair.c): NICE_0_LOAD and the nice-to-weight table. */
#define NICE_0_WEIGHT		1024
#define NICE_MIN		(-20)
#define NICE_MAX		19
/*
 * sysctl_sched_base_slice: 0.75 ms times 1 + ilog2(CPUs), capped at 8
 * CPUs, so 3 ms on the servers the patch was measured on.
 */
#define SCHED_SLICE_US_DEFAULT	3000
/* CONFIG_HZ of Debian's kernels: slices end at a 4 ms tick. */
#define SCHED_HZ_DEFAULT	250
#define SCHED_HZ_MAX		10000

/* Application progress: one unit per microsecond of its CPU time. */
#define APP_WORK_UNIT_PS	PS_PER_US
#define APP_MAX_THREADS		16

#define DURATION_MS_DEFAULT	10000
/* Ten simulated minutes still run in seconds at moderate rates. */
#define DURATION_MS_MAX		600000
#define SEED_DEFAULT		1
/* Second PRNG stream family (the application), independent of the NIC's. */
#define APP_SEED_SALT		UINT64_C(0x5eed5eed5eed5eed)
/* --tick-hz values in one run: 0, 100, 250 and 1000 and a spare. */
#define MAX_TICK_HZ		5

/*
 * Latency histogram: 16 sub-buckets per power of two (6 % resolution),
 * values below 16 ns exact, up to 2^44 ns (4.9 hours).
 */
#define HIST_SUB_BITS		4
#define HIST_SUB		(1u << HIST_SUB_BITS)
#define HIST_OCTAVES		40
#define HIST_BUCKETS		(HIST_SUB + HIST_OCTAVES * HIST_SUB)

/* Percentiles reported, and their JSON names. */
static const struct {
	double q;
	const char *key;
} quantiles[] = {
	{ 0.50, "p50_us" },
	{ 0.99, "p99_us" },
	{ 0.999, "p999_us" },
};
#define NB_QUANTILES (sizeof(quantiles) / sizeof(quantiles[0]))

/* A uniform draw in [min, max]. */
struct range {
	uint64_t min;
	uint64_t max;
};

enum worker_model {
	WORKER_SIRQD = 0,	/* boosted passes, sched_yield() */
	WORKER_KERNEL,		/* fair-class passes, cond_resched() */
};

/* Everything one run depends on. */
struct sim_conf {
	const char *scenario;
	enum sirq_policy_id policy;
	uint32_t tick_hz;
	uint64_t duration_ps;
	uint64_t seed;
	/* traffic */
	uint64_t rate_pps;
	uint32_t pkt_size;
	struct range train_pkts;	/* max 0: no trains */
	struct range train_gap_ps;
	uint64_t cost_ps;		/* NET_RX per packet, forwarding included */
	uint64_t poll_cost_ps;		/* per NAPI poll and per NET_TX run */
	uint32_t ring;
	/* dispatcher */
	uint64_t irq_tick_ps;
	uint64_t rx_irq_ps;		/* Rx interrupt delay; 0: tick only */
	/* scheduler and tasks */
	uint32_t sched_hz;
	uint64_t slice_ps;
	enum worker_model worker;
	int worker_nice;
	uint32_t app_threads;
	uint64_t app_hold_ps;
	uint64_t app_period_ps;
	bool app_random;
	int app_nice;
};

/* splitmix64 (Steele, Lea, Flood 2014): any seed works, 0 included. */
static uint64_t
prng_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t
range_draw(uint64_t *state, struct range r)
{
	if (r.max <= r.min)
		return r.min;
	return r.min + prng_next(state) % (r.max - r.min + 1);
}

static uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * Latency histogram in nanoseconds, fed in picoseconds.
 */
struct hist {
	uint64_t count[HIST_BUCKETS];
	uint64_t samples;
	uint64_t max_ns;
	double sum_ns;
};

static unsigned int
hist_bucket(uint64_t ns)
{
	unsigned int e, b;

	if (ns < HIST_SUB)
		return (unsigned int)ns;
	e = 63 - (unsigned int)__builtin_clzll(ns);
	b = HIST_SUB + (e - HIST_SUB_BITS) * HIST_SUB +
		(unsigned int)((ns >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
	return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

/* Lowest value of bucket @b, in ns. */
static uint64_t
hist_lower(unsigned int b)
{
	unsigned int e;

	if (b < HIST_SUB)
		return b;
	e = (b - HIST_SUB) / HIST_SUB + HIST_SUB_BITS;
	return (uint64_t)(HIST_SUB + (b - HIST_SUB) % HIST_SUB) <<
		(e - HIST_SUB_BITS);
}

/* One past the highest value of bucket @b, in ns. */
static uint64_t
hist_upper(unsigned int b)
{
	return b + 1 < HIST_BUCKETS ? hist_lower(b + 1) : UINT64_MAX;
}

/*
 * Add @n samples l0, l0 + slope, ..., in ps: packets that arrived at a
 * steady pace and are served at another steady pace. Walks buckets, not
 * packets, so 100 Gb/s costs no more than 1 Gb/s.
 */
static void
hist_add_linear(struct hist *h, uint64_t l0, int64_t slope, uint64_t n)
{
	uint64_t k = 0, last;

	if (n == 0)
		return;
	last = (uint64_t)((int64_t)l0 + slope * (int64_t)(n - 1));
	while (k < n) {
		uint64_t v = (uint64_t)((int64_t)l0 + slope * (int64_t)k);
		unsigned int b = hist_bucket(v / PS_PER_NS);
		uint64_t cnt;

		if (slope == 0) {
			cnt = n - k;
		} else if (slope > 0) {
			uint64_t hi = hist_upper(b);

			cnt = hi == UINT64_MAX ? n - k :
				(hi * PS_PER_NS - 1 - v) / (uint64_t)slope + 1;
		} else {
			cnt = (v - hist_lower(b) * PS_PER_NS) /
				(uint64_t)(-slope) + 1;
		}
		cnt = min_u64(cnt, n - k);
		h->count[b] += cnt;
		k += cnt;
	}
	h->samples += n;
	h->sum_ns += ((double)l0 + (double)last) / 2 * (double)n / PS_PER_NS;
	if (l0 / PS_PER_NS > h->max_ns)
		h->max_ns = l0 / PS_PER_NS;
	if (last / PS_PER_NS > h->max_ns)
		h->max_ns = last / PS_PER_NS;
}

/* Upper bound of the bucket holding quantile @q, capped at the maximum. */
static uint64_t
hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;
	unsigned int b;

	if (h->samples == 0)
		return 0;
	rank = (uint64_t)ceil(q * (double)h->samples);
	if (rank == 0)
		rank = 1;
	for (b = 0; b < HIST_BUCKETS; b++) {
		seen += h->count[b];
		if (seen >= rank)
			return min_u64(hist_upper(b) - 1, h->max_ns);
	}
	return h->max_ns;
}

/*
 * A FIFO of packets as runs of steady spacing: {first time, spacing,
 * count}, in ps. At most @limit packets; what does not fit is dropped.
 */
struct seg {
	uint64_t t0;
	uint64_t dt;
	uint64_t n;
};

struct pktq {
	struct seg *seg;
	uint32_t cap;		/* segments */
	uint32_t head;
	uint32_t nb;
	uint64_t pkts;
	uint64_t limit;
};

static int
pktq_init(struct pktq *q, uint64_t limit)
{
	memset(q, 0, sizeof(*q));
	q->limit = limit;
	/* Every segment holds a packet: limit + 1 segments always fit. */
	q->cap = (uint32_t)limit + 1;
	q->seg = calloc(q->cap, sizeof(*q->seg));
	return q->seg == NULL ? -ENOMEM : 0;
}

static void
pktq_fini(struct pktq *q)
{
	free(q->seg);
	q->seg = NULL;
}

/* Append up to @n packets arriving at t0, t0 + dt, ...; returns the dropped. */
static uint64_t
pktq_push(struct pktq *q, uint64_t t0, uint64_t dt, uint64_t n)
{
	uint64_t room = q->limit - q->pkts, keep = min_u64(n, room);
	struct seg *last;

	if (keep == 0)
		return n;
	last = q->nb == 0 ? NULL : &q->seg[(q->head + q->nb - 1) % q->cap];
	if (last != NULL && last->dt == dt && last->t0 + last->n * dt == t0) {
		last->n += keep;
	} else {
		struct seg *s = &q->seg[(q->head + q->nb) % q->cap];

		s->t0 = t0;
		s->dt = dt;
		s->n = keep;
		q->nb++;
	}
	q->pkts += keep;
	return n - keep;
}

/* Arrival time of the @k-th packet from the head (k < pkts). */
static uint64_t
pktq_time_of(const struct pktq *q, uint64_t k)
{
	uint32_t i;

	for (i = 0; i < q->nb; i++) {
		const struct seg *s = &q->seg[(q->head + i) % q->cap];

		if (k < s->n)
			return s->t0 + k * s->dt;
		k -= s->n;
	}
	return TIME_NEVER;
}

/*
 * Serve @n head packets, the k-th at t + k * cost, into @h. If @out is
 * given, each is handed to it when its service ends.
 */
static void
pktq_pop(struct pktq *q, uint64_t n, uint64_t t, uint64_t cost,
	 struct hist *h, struct pktq *out, uint64_t *out_dropped)
{
	while (n > 0 && q->nb > 0) {
		struct seg *s = &q->seg[q->head];
		uint64_t m = min_u64(n, s->n);

		hist_add_linear(h, t - s->t0, (int64_t)cost - (int64_t)s->dt, m);
		if (out != NULL)
			*out_dropped += pktq_push(out, t + cost, cost, m);
		s->t0 += m * s->dt;
		s->n -= m;
		q->pkts -= m;
		n -= m;
		t += m * cost;
		if (s->n == 0) {
			q->head = (q->head + 1) % q->cap;
			q->nb--;
		}
	}
}

/*
 * The scheduler's view of a task.
 */
struct task {
	const char *name;
	uint32_t weight;
	bool runnable;
	int64_t vruntime;	/* weighted ps */
	int64_t deadline;
	int64_t vlag;		/* kept across sleep */
	bool protect;		/* RUN_TO_PARITY: its current slice is running */
	uint64_t exec_ps;
};

/* One application thread (apps/common/app_load.c, irq mode). */
struct app_thread {
	uint64_t prng;
	uint64_t next_wake;	/* the schedule it sleeps to */
	uint64_t left_ps;	/* CPU time its burst still wants */
	uint64_t bursts;
};

struct nic {
	uint16_t napi;		/* its NAPI context */
	uint64_t prng;
	uint64_t steady_next;	/* index of the next steady packet */
	uint64_t dt_ps;		/* steady spacing */
	uint64_t next_train;
	struct pktq ring;
	uint64_t arrived;
	uint64_t dropped;
	bool irq_armed;
	uint64_t irq_at;
};

/* Task slots: application threads first, the worker last. */
#define TASK_WORKER APP_MAX_THREADS
#define NB_TASKS (APP_MAX_THREADS + 1)
#define TASK_IDLE (-1)

struct sim {
	const struct sim_conf *c;
	struct sirq_cpu *cpu;
	uint64_t now;
	uint64_t start;
	uint64_t end;

	struct nic nic;
	struct sirq_softnet softnet;
	struct pktq txbuf;
	uint64_t tx_flushed;
	uint64_t tx_dropped;
	uint64_t rx_processed;
	uint64_t time_squeeze;
	/* Never, with one context whose weight is below the budget. */
	uint64_t budget_exhausted;
	struct hist lat_rx;
	struct hist lat_tx;

	uint64_t next_irq_tick;
	uint64_t next_sched_tick;
	uint64_t irq_ps;
	uint64_t idle_ps;

	struct task task[NB_TASKS];
	struct app_thread app[APP_MAX_THREADS];
	uint32_t app_runnable;
	int curr;
	bool resched;
	int64_t last_avg;	/* avg_vruntime of the last non-empty queue */
};

/* sched_prio_to_weight[] of kernel/sched/core.c, nice -20 .. 19. */
static const uint32_t nice_to_weight[NICE_MAX - NICE_MIN + 1] = {
	88761, 71755, 56483, 46273, 36291,
	29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906,
	3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423,
	335, 272, 215, 172, 137,
	110, 87, 70, 56, 45,
	36, 29, 23, 18, 15,
};

static int64_t
calc_delta_fair(uint64_t ps, const struct task *t)
{
	return (int64_t)((unsigned __int128)ps * NICE_0_WEIGHT / t->weight);
}

static bool
task_valid(const struct sim *s, int i)
{
	return i == TASK_WORKER || (i >= 0 && (uint32_t)i < s->c->app_threads);
}

/* avg_vruntime(): the load-weighted mean vruntime of the runnable tasks. */
static int64_t
avg_vruntime(struct sim *s)
{
	__int128 sum = 0;
	int64_t load = 0;
	int i;

	for (i = 0; i < NB_TASKS; i++) {
		if (!task_valid(s, i) || !s->task[i].runnable)
			continue;
		sum += (__int128)s->task[i].vruntime * s->task[i].weight;
		load += s->task[i].weight;
	}
	if (load == 0)
		return s->last_avg;
	s->last_avg = (int64_t)(sum / load);
	return s->last_avg;
}

static bool
eligible(const struct task *t, int64_t avg)
{
	return t->vruntime <= avg;
}

/* pick_eevdf(): the eligible runnable task with the earliest deadline. */
static int
pick_eevdf(struct sim *s)
{
	int64_t avg = avg_vruntime(s);
	int i, best = TASK_IDLE;

	if (s->curr != TASK_IDLE && s->task[s->curr].runnable &&
	    s->task[s->curr].protect && eligible(&s->task[s->curr], avg))
		return s->curr;
	for (i = 0; i < NB_TASKS; i++) {
		const struct task *t = &s->task[i];

		if (!task_valid(s, i) || !t->runnable || !eligible(t, avg))
			continue;
		if (best == TASK_IDLE || t->deadline < s->task[best].deadline)
			best = i;
	}
	/* Rounding can leave nobody eligible: the least vruntime then. */
	for (i = 0; best == TASK_IDLE && i < NB_TASKS; i++)
		if (task_valid(s, i) && s->task[i].runnable)
			best = i;
	return best;
}

static void
schedule(struct sim *s)
{
	int next = pick_eevdf(s);

	s->resched = false;
	if (next == s->curr)
		return;
	s->curr = next;
	if (next != TASK_IDLE)
		s->task[next].protect = true;
}

/* CPU time of a task; fair-class time also moves its vruntime. */
static void
charge(struct sim *s, int i, uint64_t ps, bool fair)
{
	struct task *t = &s->task[i];

	t->exec_ps += ps;
	if (fair)
		t->vruntime += calc_delta_fair(ps, t);
}

/*
 * update_deadline(), from update_curr(): the current task has used its
 * slice, give it the next one and reschedule. The kernel looks at the
 * scheduler tick and when tasks wake or sleep, not at every interrupt.
 */
static void
update_deadline(struct sim *s)
{
	struct task *t;

	if (s->curr == TASK_IDLE)
		return;
	t = &s->task[s->curr];
	if (t->vruntime < t->deadline)
		return;
	t->deadline = t->vruntime + calc_delta_fair(s->c->slice_ps, t);
	t->protect = false;
	s->resched = true;
}

/*
 * place_entity() with PLACE_LAG: a waking task comes back at the average
 * minus the lag it left with (clamped, inflated by the load it joins),
 * with a full slice to its deadline. A waking task that the current one
 * no longer protects against, and that pick_eevdf() prefers, preempts.
 */
static void
task_wake(struct sim *s, int i)
{
	struct task *t = &s->task[i];
	int64_t avg, load = 0, lag = t->vlag;
	int j;

	update_deadline(s);
	avg = avg_vruntime(s);
	for (j = 0; j < NB_TASKS; j++)
		if (task_valid(s, j) && s->task[j].runnable)
			load += s->task[j].weight;
	if (load > 0)
		lag = lag * (load + t->weight) / load;
	t->vruntime = avg - lag;
	t->deadline = t->vruntime + calc_delta_fair(s->c->slice_ps, t);
	t->runnable = true;
	t->protect = false;
	if (s->curr == TASK_IDLE || pick_eevdf(s) == i)
		s->resched = true;
}

static void
task_sleep(struct sim *s, int i)
{
	struct task *t = &s->task[i];
	int64_t avg = avg_vruntime(s);
	/* The kernel's limit: two slices, at least a tick. */
	int64_t limit = calc_delta_fair(s->c->slice_ps * 2 > PS_PER_S /
					s->c->sched_hz ? s->c->slice_ps * 2 :
					PS_PER_S / s->c->sched_hz, t);

	t->vlag = avg - t->vruntime;
	if (t->vlag > limit)
		t->vlag = limit;
	if (t->vlag < -limit)
		t->vlag = -limit;
	t->runnable = false;
	t->protect = false;
	if (i == s->curr)
		s->resched = true;
}

/* sched_yield(): yield_task_fair() moves the deadline one slice on. */
static void
task_yield(struct sim *s, int i)
{
	struct task *t = &s->task[i];

	t->deadline += calc_delta_fair(s->c->slice_ps, t);
	t->protect = false;
	s->resched = true;
}

/*
 * The NIC.
 */
static uint64_t
steady_time(const struct sim *s, uint64_t i)
{
	return s->start + (uint64_t)(((unsigned __int128)i * PS_PER_S +
				      s->c->rate_pps - 1) / s->c->rate_pps);
}

/* Index of the first steady packet arriving after @t. */
static uint64_t
steady_after(const struct sim *s, uint64_t t)
{
	return (uint64_t)((unsigned __int128)(t - s->start) * s->c->rate_pps /
			  PS_PER_S) + 1;
}

static void
nic_add_steady(struct sim *s, uint64_t upto)
{
	struct nic *nic = &s->nic;
	uint64_t last, n;

	if (s->c->rate_pps == 0)
		return;
	last = steady_after(s, upto);
	if (last <= nic->steady_next)
		return;
	n = last - nic->steady_next;
	nic->arrived += n;
	nic->dropped += pktq_push(&nic->ring, steady_time(s, nic->steady_next),
				  nic->dt_ps, n);
	nic->steady_next = last;
}

/* Everything that arrived up to now, in arrival order. */
static void
nic_sync(struct sim *s)
{
	struct nic *nic = &s->nic;

	while (s->c->train_pkts.max != 0 && nic->next_train <= s->now) {
		uint64_t n = range_draw(&nic->prng, s->c->train_pkts);

		nic_add_steady(s, nic->next_train);
		nic->arrived += n;
		nic->dropped += pktq_push(&nic->ring, nic->next_train, 0, n);
		nic->next_train += range_draw(&nic->prng, s->c->train_gap_ps);
	}
	nic_add_steady(s, s->now);
}

static uint64_t
nic_next_arrival(const struct sim *s)
{
	uint64_t t = TIME_NEVER;

	if (s->c->rate_pps != 0)
		t = steady_time(s, s->nic.steady_next);
	if (s->c->train_pkts.max != 0)
		t = min_u64(t, s->nic.next_train);
	return t;
}

/* napi_complete_done(): interrupts on again; one fires for what waits. */
static void
nic_arm_irq(struct sim *s)
{
	uint64_t first;

	if (s->c->rx_irq_ps == 0)
		return;
	first = s->nic.ring.pkts > 0 ? s->now : nic_next_arrival(s);
	s->nic.irq_armed = true;
	s->nic.irq_at = first == TIME_NEVER ? TIME_NEVER :
		first + s->c->rx_irq_ps;
}

/*
 * The handlers.
 */
static void
tx_flush_full_bursts(struct sim *s)
{
	while (s->txbuf.pkts >= SIRQ_TX_BURST) {
		uint64_t t = pktq_time_of(&s->txbuf, SIRQ_TX_BURST - 1);

		pktq_pop(&s->txbuf, SIRQ_TX_BURST, t, 0, &s->lat_tx, NULL, NULL);
		s->tx_flushed += SIRQ_TX_BURST;
	}
}

/*
 * The driver's NAPI poll of the Rx ring, for the engine's net_rx_action():
 * up to @weight packets; a short poll completes the context, which turns
 * the Rx interrupt on again.
 */
static unsigned int
nic_napi_poll(void *ctx, uint16_t idx, uint16_t weight)
{
	struct sim *s = ctx;
	uint64_t n;

	(void)idx;
	nic_sync(s);
	n = min_u64(s->nic.ring.pkts, weight);
	s->now += s->c->poll_cost_ps;
	pktq_pop(&s->nic.ring, n, s->now, s->c->cost_ps, &s->lat_rx,
		 &s->txbuf, &s->tx_dropped);
	s->now += n * s->c->cost_ps;
	s->rx_processed += n;
	tx_flush_full_bursts(s);
	if (n < weight)
		nic_arm_irq(s);
	return (unsigned int)n;
}

static void
net_rx_action(struct sirq_cpu *cpu, void *arg)
{
	struct sim *s = arg;

	sirq_softnet_rx_action(&s->softnet);
	if (s->txbuf.pkts > 0)
		sirq_raise_irqoff(cpu, SIRQ_NET_TX);
}

/* NET_TX: flush what the last NET_RX runs left in the TX buffer. */
static void
net_tx_action(struct sirq_cpu *cpu, void *arg)
{
	struct sim *s = arg;
	uint64_t n = s->txbuf.pkts;

	(void)cpu;
	s->now += s->c->poll_cost_ps;
	pktq_pop(&s->txbuf, n, s->now, 0, &s->lat_tx, NULL, NULL);
	s->tx_flushed += n;
}

/*
 * The engine's environment.
 */
static uint64_t
sim_clock_ns(void *ctx)
{
	return ((const struct sim *)ctx)->now / PS_PER_NS;
}

static void
sim_wake_worker(void *ctx)
{
	struct sim *s = ctx;

	task_wake(s, TASK_WORKER);
}

static bool
sim_need_resched(void *ctx)
{
	return ((const struct sim *)ctx)->app_runnable > 0;
}

/*
 * The dispatcher: a hardirq on top of whatever runs, then irq_exit().
 */
static uint64_t
next_irq(const struct sim *s)
{
	uint64_t t = s->next_irq_tick;

	if (s->nic.irq_armed)
		t = min_u64(t, s->nic.irq_at);
	return t;
}

static void
dispatcher_irq(struct sim *s)
{
	uint64_t t0 = s->now;

	if (s->nic.irq_armed && s->nic.irq_at <= s->now)
		s->nic.irq_armed = false;	/* NAPI masks it until complete */
	nic_sync(s);
	/* A scheduled context is NET_RX's: its "interrupt" is masked. */
	if (s->nic.ring.pkts > 0)
		sirq_napi_schedule(&s->softnet, s->nic.napi);
	sirq_irq_exit(s->cpu);
	s->irq_ps += s->now - t0;
	if (s->next_irq_tick <= s->now)
		s->next_irq_tick = s->now + s->c->irq_tick_ps;
}

/*
 * The application's threads.
 */
static uint64_t
app_gap(struct sim *s, struct app_thread *a)
{
	if (!s->c->app_random)
		return s->c->app_period_ps;
	return prng_next(&a->prng) % (2 * s->c->app_period_ps + 1);
}

static bool
app_steady(const struct sim *s)
{
	return s->c->app_hold_ps >= s->c->app_period_ps;
}

static void
app_wake_due(struct sim *s)
{
	uint32_t i;

	for (i = 0; i < s->c->app_threads; i++) {
		struct app_thread *a = &s->app[i];

		if (s->task[i].runnable || a->next_wake > s->now)
			continue;
		a->left_ps = app_steady(s) ? TIME_NEVER : s->c->app_hold_ps;
		a->bursts++;
		s->app_runnable++;
		task_wake(s, (int)i);
	}
}

static uint64_t
app_next_wake(const struct sim *s)
{
	uint64_t t = TIME_NEVER;
	uint32_t i;

	for (i = 0; i < s->c->app_threads; i++)
		if (!s->task[i].runnable)
			t = min_u64(t, s->app[i].next_wake);
	return t;
}

/* Its burst is done: sleep to the next point of its schedule. */
static void
app_burst_done(struct sim *s, int i)
{
	struct app_thread *a = &s->app[i];

	if (a->next_wake < s->now)
		a->next_wake = s->now;
	a->next_wake += app_gap(s, a);
	s->app_runnable--;
	task_sleep(s, i);
}

/*
 * The loop: events in time order. Hardirqs first, then the scheduler
 * tick, then the current task until the next event.
 */
static uint64_t
next_event(const struct sim *s)
{
	uint64_t t = min_u64(next_irq(s), s->next_sched_tick);

	t = min_u64(t, app_next_wake(s));
	return min_u64(t, s->end);
}

static void
run_app(struct sim *s, int i)
{
	struct app_thread *a = &s->app[i];
	uint64_t q = next_event(s) - s->now;

	q = min_u64(q, a->left_ps);
	s->now += q;
	charge(s, i, q, true);
	if (a->left_ps != TIME_NEVER)
		a->left_ps -= q;
	if (a->left_ps == 0)
		app_burst_done(s, i);
}

/*
 * One call of sirq_worker_run() on the CPU. sirqd runs the pass boosted
 * to SCHED_FIFO: the fair class dequeues it (keeping its lag) and places
 * it again afterwards, and the pass does not move its vruntime; then it
 * calls sched_yield(). The kernel's ksoftirqd runs the pass as fair time
 * and calls cond_resched(), which switches only if the scheduler asked.
 */
static void
run_worker(struct sim *s)
{
	bool sirqd = s->c->worker == WORKER_SIRQD;
	enum sirq_worker_status st;
	uint64_t t0 = s->now;

	if (sirqd)
		task_sleep(s, TASK_WORKER);
	st = sirq_worker_run(s->cpu);
	charge(s, TASK_WORKER, s->now - t0, !sirqd);
	if (st == SIRQ_WORKER_SLEEP || st == SIRQ_WORKER_EXIT) {
		if (!sirqd)
			task_sleep(s, TASK_WORKER);
	} else if (sirqd) {
		task_wake(s, TASK_WORKER);
		task_yield(s, TASK_WORKER);
	}
}

static void
sim_run(struct sim *s)
{
	while (s->now < s->end) {
		app_wake_due(s);
		if (s->now >= next_irq(s)) {
			dispatcher_irq(s);
			continue;
		}
		if (s->now >= s->next_sched_tick) {
			update_deadline(s);	/* scheduler_tick() */
			s->next_sched_tick += PS_PER_S / s->c->sched_hz;
			continue;
		}
		if (s->resched || s->curr == TASK_IDLE)
			schedule(s);
		if (s->curr == TASK_IDLE) {
			uint64_t t = next_event(s);

			s->idle_ps += t - s->now;
			s->now = t;
		} else if (s->curr == TASK_WORKER) {
			run_worker(s);
		} else {
			run_app(s, s->curr);
		}
	}
}

static int
sim_init(struct sim *s, const struct sim_conf *c)
{
	struct sirq_cpu_conf conf = { .name = "sim" };
	struct sirq_softnet_conf sdc = {
		.budget = SIRQ_NETDEV_BUDGET_DEFAULT,
		.budget_usecs = SIRQ_NETDEV_BUDGET_US_DEFAULT,
		.poll = nic_napi_poll,
		.poll_ctx = s,
		.time_squeeze = &s->time_squeeze,
		.budget_exhausted = &s->budget_exhausted,
	};
	uint32_t i;
	int napi;

	memset(s, 0, sizeof(*s));
	s->c = c;
	s->start = SIM_EPOCH_PS;
	s->now = s->start;
	s->end = s->start + c->duration_ps;
	s->next_irq_tick = s->start;
	s->next_sched_tick = s->start;
	s->curr = TASK_IDLE;

	s->nic.prng = c->seed;
	s->nic.dt_ps = c->rate_pps == 0 ? 0 :
		(PS_PER_S + c->rate_pps / 2) / c->rate_pps;
	s->nic.next_train = s->start + range_draw(&s->nic.prng, c->train_gap_ps);
	if (pktq_init(&s->nic.ring, c->ring) != 0 ||
	    pktq_init(&s->txbuf, (uint64_t)c->ring + SIRQ_TX_BURST) != 0)
		return -ENOMEM;

	for (i = 0; i < NB_TASKS; i++)
		s->task[i].weight = nice_to_weight[c->app_nice - NICE_MIN];
	s->task[TASK_WORKER].weight = nice_to_weight[c->worker_nice - NICE_MIN];
	s->task[TASK_WORKER].name = "worker";
	for (i = 0; i < c->app_threads; i++) {
		struct app_thread *a = &s->app[i];

		s->task[i].name = "app";
		/* One stream per thread, the same on every run. */
		a->prng = (c->seed ^ APP_SEED_SALT) + i;
		/* A steady load wants the CPU from the start. */
		a->next_wake = s->start +
			(app_steady(s) ? 0 : app_gap(s, a));
	}

	sirq_params_default(&conf.params);
	conf.params.policy = c->policy;
	conf.params.tick_hz = c->tick_hz;
	conf.ops.clock_ns = sim_clock_ns;
	conf.ops.wake_worker = sim_wake_worker;
	conf.ops.need_resched = sim_need_resched;
	conf.ops.ctx = s;
	s->cpu = sirq_cpu_create(&conf);
	if (s->cpu == NULL)
		return -errno;
	if (sirq_register(s->cpu, SIRQ_NET_RX, net_rx_action, s, NULL) != 0 ||
	    sirq_register(s->cpu, SIRQ_NET_TX, net_tx_action, s, NULL) != 0)
		return -EINVAL;
	sdc.cpu = s->cpu;
	if (sirq_softnet_init(&s->softnet, &sdc) != 0)
		return -EINVAL;
	napi = sirq_napi_add(&s->softnet, SIRQ_NAPI_WEIGHT_DEFAULT);
	if (napi < 0)
		return napi;
	s->nic.napi = (uint16_t)napi;
	nic_arm_irq(s);
	return 0;
}

static void
sim_fini(struct sim *s)
{
	if (s->cpu != NULL) {
		sirq_worker_park(s->cpu);
		sirq_cpu_free(s->cpu);
	}
	pktq_fini(&s->nic.ring);
	pktq_fini(&s->txbuf);
}

/*
 * Results: one JSON object per run (the format bench/policy_plots.py
 * reads, documented there), and a table row set per (scenario, tick_hz).
 */
struct result {
	const struct sim_conf *c;
	struct sirq_stats st;
	struct hist lat_rx;
	struct hist lat_tx;
	double seconds;
	uint64_t arrived, processed, dropped, tx_flushed, tx_dropped;
	uint64_t time_squeeze;
	uint64_t app_ps, worker_ps, irq_ps, idle_ps;
	uint64_t app_bursts;
};

static void
collect(struct result *r, const struct sim *s)
{
	uint32_t i;

	memset(r, 0, sizeof(*r));
	r->c = s->c;
	sirq_stats_get(s->cpu, &r->st);
	r->lat_rx = s->lat_rx;
	r->lat_tx = s->lat_tx;
	r->seconds = (double)s->c->duration_ps / PS_PER_S;
	r->arrived = s->nic.arrived;
	r->processed = s->rx_processed;
	r->dropped = s->nic.dropped;
	r->tx_flushed = s->tx_flushed;
	r->tx_dropped = s->tx_dropped;
	r->time_squeeze = s->time_squeeze;
	for (i = 0; i < s->c->app_threads; i++) {
		r->app_ps += s->task[i].exec_ps;
		r->app_bursts += s->app[i].bursts;
	}
	r->worker_ps = s->task[TASK_WORKER].exec_ps;
	r->irq_ps = s->irq_ps;
	r->idle_ps = s->idle_ps;
}

static double
share(const struct result *r, uint64_t ps)
{
	return (double)ps / (double)r->c->duration_ps;
}

static double
us(uint64_t ns)
{
	return (double)ns / NS_PER_US;
}

static const char *const worker_names[] = {
	[WORKER_SIRQD] = "sirqd",
	[WORKER_KERNEL] = "kernel",
};

static void
json_latency(FILE *f, const char *name, const struct hist *h, bool more)
{
	unsigned int q, b;
	bool first = true;

	fprintf(f, "\"%s\": {\"samples\": %" PRIu64, name, h->samples);
	for (q = 0; q < NB_QUANTILES; q++)
		fprintf(f, ", \"%s\": %.3f", quantiles[q].key,
			us(hist_quantile(h, quantiles[q].q)));
	fprintf(f, ", \"max_us\": %.3f, \"mean_us\": %.3f, \"hist_ns\": [",
		us(h->max_ns), h->samples ? h->sum_ns / (double)h->samples /
		NS_PER_US : 0.0);
	for (b = 0; b < HIST_BUCKETS; b++) {
		if (h->count[b] == 0)
			continue;
		fprintf(f, "%s[%" PRIu64 ", %" PRIu64 "]", first ? "" : ", ",
			min_u64(hist_upper(b) - 1, h->max_ns), h->count[b]);
		first = false;
	}
	fprintf(f, "]}%s", more ? ", " : "");
}

static void
json_run(FILE *f, const struct result *r, bool more)
{
	const struct sim_conf *c = r->c;
	const struct sirq_stats *st = &r->st;
	unsigned int k;

	fprintf(f, "  {\"scenario\": \"%s\", \"policy\": \"%s\", \"tick_hz\": %u"
		", \"duration_s\": %.3f,\n", c->scenario,
		sirq_policy_name(c->policy), c->tick_hz, r->seconds);
	fprintf(f, "   \"stalls\": %" PRIu64 ", \"stalls_per_s\": %.3f"
		", \"net_rx_raise_to_run_max_us\": %.3f,\n",
		st->latency[SIRQ_NET_RX].stalls,
		(double)st->latency[SIRQ_NET_RX].stalls / r->seconds,
		us(st->latency[SIRQ_NET_RX].max_ns));
	fprintf(f, "   \"latency\": {");
	json_latency(f, "NET_RX", &r->lat_rx, true);
	json_latency(f, "NET_TX", &r->lat_tx, false);
	fprintf(f, "},\n");
	fprintf(f, "   \"app\": {\"cpu_share\": %.5f, \"work_units\": %" PRIu64
		", \"work_units_per_s\": %.1f, \"bursts\": %" PRIu64 "},\n",
		share(r, r->app_ps), r->app_ps / APP_WORK_UNIT_PS,
		(double)(r->app_ps / APP_WORK_UNIT_PS) / r->seconds,
		r->app_bursts);
	fprintf(f, "   \"cpu\": {\"app\": %.5f, \"worker\": %.5f, \"inline\": %.5f"
		", \"idle\": %.5f},\n", share(r, r->app_ps),
		share(r, r->worker_ps), share(r, r->irq_ps), share(r, r->idle_ps));
	fprintf(f, "   \"packets\": {\"arrived\": %" PRIu64 ", \"processed\": %"
		PRIu64 ", \"dropped\": %" PRIu64 ", \"tx_flushed\": %" PRIu64
		", \"tx_dropped\": %" PRIu64 ", \"time_squeeze\": %" PRIu64
		"}, \"mpps\": %.4f,\n", r->arrived, r->processed, r->dropped,
		r->tx_flushed, r->tx_dropped, r->time_squeeze,
		(double)r->processed / r->seconds / 1e6);
	fprintf(f, "   \"wakeups\": {");
	for (k = 0; k < SIRQ_WAKE_MAX; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "",
			sirq_wake_name(k), st->wakeups[k]);
	fprintf(f, "},\n   \"windows\": {");
	for (k = 0; k < SIRQ_WINDOW_MAX; k++)
		fprintf(f, "\"opened_%s\": %" PRIu64 ", ", sirq_window_name(k),
			st->windows_opened[k]);
	fprintf(f, "\"overrides\": %" PRIu64 ", \"stale_ignored\": %" PRIu64
		", \"closed_idle\": %" PRIu64 "},\n", st->window_overrides,
		st->stale_windows_ignored, st->windows_closed_idle);
	fprintf(f, "   \"deferred_to_worker\": %" PRIu64 ", \"pass_exit\": {",
		st->deferred_to_worker);
	for (k = 0; k < SIRQ_EXIT_MAX; k++)
		fprintf(f, "%s\"%s\": [%" PRIu64 ", %" PRIu64 "]", k ? ", " : "",
			sirq_exit_name(k), st->pass_exit[k][SIRQ_CTX_INLINE],
			st->pass_exit[k][SIRQ_CTX_WORKER]);
	fprintf(f, "}}%s\n", more ? "," : "");
}

static void
json_conf(FILE *f, const struct sim_conf *c)
{
	fprintf(f, "{\"rate_pps\": %" PRIu64 ", \"pkt_size\": %u"
		", \"offered_gbps\": %.3f, \"train_pkts\": [%" PRIu64 ", %" PRIu64
		"], \"train_gap_us\": [%.1f, %.1f], \"cost_ns\": %.3f"
		", \"poll_cost_ns\": %.3f, \"ring\": %u, \"irq_tick_us\": %.1f"
		", \"rx_irq_us\": %.1f, \"sched_hz\": %u, \"slice_us\": %.1f"
		", \"worker\": \"%s\", \"worker_nice\": %d, \"app_threads\": %u"
		", \"app_hold_us\": %.1f, \"app_period_us\": %.1f"
		", \"app_random\": %s, \"app_nice\": %d, \"seed\": %" PRIu64 "}",
		c->rate_pps, c->pkt_size,
		(double)c->rate_pps * (c->pkt_size + ETH_WIRE_OVERHEAD) *
		BITS_PER_BYTE / 1e9, c->train_pkts.min, c->train_pkts.max,
		(double)c->train_gap_ps.min / PS_PER_US,
		(double)c->train_gap_ps.max / PS_PER_US,
		(double)c->cost_ps / PS_PER_NS,
		(double)c->poll_cost_ps / PS_PER_NS, c->ring,
		(double)c->irq_tick_ps / PS_PER_US,
		(double)c->rx_irq_ps / PS_PER_US, c->sched_hz,
		(double)c->slice_ps / PS_PER_US, worker_names[c->worker],
		c->worker_nice, c->app_threads,
		(double)c->app_hold_ps / PS_PER_US,
		(double)c->app_period_ps / PS_PER_US,
		c->app_random ? "true" : "false", c->app_nice, c->seed);
}

/* One table: a row per metric, a column per policy. */
static void
print_table(const struct result *const *res, unsigned int n)
{
	static const char *const rows[] = {
		"stalls/s (>= 8 ms)", "NET_RX p50 us", "NET_RX p99 us",
		"NET_RX p99.9 us", "NET_RX max us", "NET_TX p99 us",
		"NET_TX max us", "app CPU %", "app units/s (M)", "worker CPU %",
		"inline CPU %", "Mpps processed", "dropped %",
		"wake need_resched", "wake restart_limit", "wake time_limit",
		"wake handoff", "windows defer", "windows overload",
		"window overrides", "stale windows",
	};
	unsigned int r, i;

	printf("%-20s", "");
	for (i = 0; i < n; i++)
		printf(" %11s", sirq_policy_name(res[i]->c->policy));
	printf("\n");
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		printf("%-20s", rows[r]);
		for (i = 0; i < n; i++) {
			const struct result *x = res[i];
			const struct sirq_stats *st = &x->st;
			double v[] = {
				(double)st->latency[SIRQ_NET_RX].stalls / x->seconds,
				us(hist_quantile(&x->lat_rx, 0.5)),
				us(hist_quantile(&x->lat_rx, 0.99)),
				us(hist_quantile(&x->lat_rx, 0.999)),
				us(x->lat_rx.max_ns),
				us(hist_quantile(&x->lat_tx, 0.99)),
				us(x->lat_tx.max_ns),
				100 * share(x, x->app_ps),
				(double)(x->app_ps / APP_WORK_UNIT_PS) /
					x->seconds / 1e6,
				100 * share(x, x->worker_ps),
				100 * share(x, x->irq_ps),
				(double)x->processed / x->seconds / 1e6,
				x->arrived ? 100.0 * (double)x->dropped /
					(double)x->arrived : 0.0,
				(double)st->wakeups[SIRQ_WAKE_NEED_RESCHED],
				(double)st->wakeups[SIRQ_WAKE_RESTART],
				(double)st->wakeups[SIRQ_WAKE_TIME],
				(double)st->wakeups[SIRQ_WAKE_HANDOFF],
				(double)st->windows_opened[SIRQ_WINDOW_DEFER],
				(double)st->windows_opened[SIRQ_WINDOW_OVERLOAD],
				(double)st->window_overrides,
				(double)st->stale_windows_ignored,
			};

			printf(" %11.*f", r == 0 || (r >= 7 && r <= 12) ? 2 :
			       r < 7 ? 1 : 0, v[r]);
		}
		printf("\n");
	}
	printf("\n");
}

/*
 * Command line.
 */
enum scenario_id {
	SC_STALL = 0,
	SC_FLOOD,
	SC_MAX,
};

static const char *const scenario_names[SC_MAX] = {
	[SC_STALL] = "stall",
	[SC_FLOOD] = "flood",
};

static const char *const scenario_summary[SC_MAX] = {
	[SC_STALL] = "moderate traffic with trains; application threads that "
		"wake often and want the CPU for 10 ms at a time",
	[SC_FLOOD] = "input twice what the CPU can process; a steady "
		"application",
};

/*
 * The two scenarios of DESIGN.md at the kernel's per-packet cost (about
 * 1 us from driver to socket):
 *  - stall: 100 kpps steady plus trains of 64-256 packets every
 *    0.5-3 ms (about 20 % of the CPU), and three threads that each want
 *    10 ms every 50 ms on average (random gaps): the l2fwd-sirq demo's
 *    --app-load on the real scheduler.
 *  - flood: 2 Mpps, twice what 1 us a packet allows, and one thread that
 *    always wants the CPU.
 */
static const struct range stall_train_pkts = { 64, 256 };
static const struct range stall_train_gap_ps = { 500 * PS_PER_US, 3 * PS_PER_MS };

static void
scenario_defaults(struct sim_conf *c, enum scenario_id sc)
{
	c->scenario = scenario_names[sc];
	c->cost_ps = 1 * PS_PER_US;
	c->ring = RX_RING_DEFAULT;
	c->pkt_size = ETH_MIN_FRAME;
	if (sc == SC_STALL) {
		c->rate_pps = 100000;
		c->train_pkts = stall_train_pkts;
		c->train_gap_ps = stall_train_gap_ps;
		c->app_threads = 3;
		c->app_hold_ps = 10 * PS_PER_MS;
		c->app_period_ps = 50 * PS_PER_MS;
		c->app_random = true;
	} else {
		c->rate_pps = 2000000;
		c->train_pkts = (struct range){ 0, 0 };
		c->train_gap_ps = (struct range){ 0, 0 };
		c->app_threads = 1;
		c->app_hold_ps = 10 * PS_PER_MS;
		c->app_period_ps = 10 * PS_PER_MS;
		c->app_random = false;
	}
}

/* Options that override the scenario's defaults; 0/negative: not given. */
struct overrides {
	uint64_t rate_pps;
	double rate_gbps;
	int64_t pkt_size;
	double cost_ns;
	double poll_cost_ns;
	int trains;		/* -1 not given, 0 off, 1 on */
	int64_t ring;
	int64_t app_threads;
	int64_t app_hold_us;
	int64_t app_period_us;
	int app_random;		/* -1 not given */
};

struct args {
	bool scenario[SC_MAX];
	bool policy[SIRQ_POLICY_MAX];
	uint32_t tick_hz[MAX_TICK_HZ];
	unsigned int nb_tick_hz;
	uint64_t duration_ms;
	uint64_t seed;
	const char *json;
	bool quiet;
	struct overrides o;
	struct sim_conf base;	/* scenario-independent settings */
};

static void
usage(FILE *out, const char *prog)
{
	fprintf(out,
		"usage: %s [options]\n"
		"Deterministic simulation of the softirq engine on one CPU: NIC,\n"
		"dispatcher (hardirq), NET_RX/NET_TX, application threads and the\n"
		"worker under an EEVDF-like scheduler. Prints a table per scenario\n"
		"and tick_hz, a column per policy.\n"
		"  --scenario LIST     stall, flood or all (default all)\n"
		"  --policy LIST       mainline,ksoftirqd,kicinski,deferred or all (default all)\n"
		"  --tick-hz LIST      engine jiffies: 0 (exact TSC), 100, 250, 1000;\n"
		"                      up to %u values (default 0)\n"
		"  --duration-ms N     simulated time per run, 1..%u (default %u)\n"
		"  --seed N            PRNG seed of trains and app gaps (default %u)\n"
		"  --json FILE         write every run as JSON (bench/policy_plots.py)\n"
		"  --quiet             no tables\n"
		"traffic (default: the scenario's):\n"
		"  --rate-pps N        steady arrivals (stall 100000, flood 2000000)\n"
		"  --rate-gbps X       steady arrivals as line rate of --pkt-size frames\n"
		"  --pkt-size B        frame size, %u..%u (default %u)\n"
		"  --trains on|off     packet trains (stall: 64-256 pkts every 0.5-3 ms)\n"
		"  --cost-ns X         NET_RX cost per packet, ps precision (default 1000)\n"
		"  --poll-cost-ns X    cost per NAPI poll and NET_TX run (default: --cost-ns)\n"
		"  --ring N            Rx ring size (default %u)\n"
		"dispatcher:\n"
		"  --irq-tick-us N     irq-mode tick (default %u)\n"
		"  --rx-irq-us N       Rx interrupt N us after a packet while NAPI is\n"
		"                      idle; 0: tick only, as on the vdevs (default 0)\n"
		"scheduler and tasks:\n"
		"  --sched-hz N        scheduler tick (default %u)\n"
		"  --sched-slice-us N  base slice (default %u)\n"
		"  --worker kernel|sirqd  kernel: ksoftirqd, passes in the fair class,\n"
		"                      cond_resched(); sirqd: passes boosted to SCHED_FIFO,\n"
		"                      sched_yield() between them (default kernel)\n"
		"  --worker-nice N     (default 0)\n"
		"  --app-threads N     0..%u (stall 3, flood 1)\n"
		"  --app-hold-us N     CPU wanted per wake-up (default 10000)\n"
		"  --app-period-us N   mean time between wake-ups; hold >= period is\n"
		"                      a steady load (stall 50000, flood 10000)\n"
		"  --app-random on|off gaps uniform in [0, 2 period] (stall on, flood off)\n"
		"  --app-nice N        (default 0)\n"
		"  --help              this text\n",
		prog, MAX_TICK_HZ, DURATION_MS_MAX, DURATION_MS_DEFAULT,
		SEED_DEFAULT, ETH_MIN_FRAME, ETH_MAX_FRAME, ETH_MIN_FRAME,
		RX_RING_DEFAULT, SIRQ_IRQ_TICK_US_DEFAULT, SCHED_HZ_DEFAULT,
		SCHED_SLICE_US_DEFAULT, APP_MAX_THREADS);
}

static bool
parse_i64(const char *opt, const char *arg, int64_t min, int64_t max,
	  int64_t *out)
{
	long long v;
	char *end;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (end == arg || *end != '\0' || errno != 0 || v < min || v > max) {
		fprintf(stderr, "sirq-sim: invalid %s '%s' (want %" PRId64
			"..%" PRId64 ")\n", opt, arg, min, max);
		return false;
	}
	*out = v;
	return true;
}

static bool
parse_double(const char *opt, const char *arg, double min, double max,
	     double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end != '\0' || errno != 0 || !(v >= min) ||
	    !(v <= max)) {
		fprintf(stderr, "sirq-sim: invalid %s '%s' (want %g..%g)\n",
			opt, arg, min, max);
		return false;
	}
	*out = v;
	return true;
}

static bool
parse_onoff(const char *opt, const char *arg, int *out)
{
	if (strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0) {
		*out = arg[1] == 'n';
		return true;
	}
	fprintf(stderr, "sirq-sim: invalid %s '%s' (want on or off)\n", opt, arg);
	return false;
}

/* "a,b,c" or "all" over @names; sets @sel. */
static bool
parse_names(const char *opt, const char *arg, const char *const *names,
	    unsigned int n, bool *sel)
{
	char buf[128], *item, *save = NULL;
	unsigned int i;

	if (strcmp(arg, "all") == 0) {
		for (i = 0; i < n; i++)
			sel[i] = true;
		return true;
	}
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		goto bad;
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n; i++)
			if (strcmp(item, names[i]) == 0)
				break;
		if (i == n)
			goto bad;
		sel[i] = true;
	}
	return true;
bad:
	fprintf(stderr, "sirq-sim: invalid %s '%s'\n", opt, arg);
	return false;
}

static bool
parse_tick_hz(const char *arg, struct args *a)
{
	char buf[128], *item, *save = NULL;
	int64_t v;

	a->nb_tick_hz = 0;
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return false;
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		if (a->nb_tick_hz == MAX_TICK_HZ) {
			fprintf(stderr, "sirq-sim: at most %u --tick-hz values\n",
				MAX_TICK_HZ);
			return false;
		}
		if (!parse_i64("--tick-hz", item, 0, SCHED_HZ_MAX, &v))
			return false;
		a->tick_hz[a->nb_tick_hz++] = (uint32_t)v;
	}
	return a->nb_tick_hz > 0;
}

enum {
	OPT_SCENARIO = 256, OPT_POLICY, OPT_TICK_HZ, OPT_DURATION, OPT_SEED,
	OPT_JSON, OPT_QUIET, OPT_RATE_PPS, OPT_RATE_GBPS, OPT_PKT_SIZE,
	OPT_TRAINS, OPT_COST, OPT_POLL_COST, OPT_RING, OPT_IRQ_TICK,
	OPT_RX_IRQ, OPT_SCHED_HZ, OPT_SLICE, OPT_WORKER, OPT_WORKER_NICE,
	OPT_APP_THREADS, OPT_APP_HOLD, OPT_APP_PERIOD, OPT_APP_RANDOM,
	OPT_APP_NICE, OPT_HELP,
};

static bool
parse_opt(int c, const char *arg, struct args *a)
{
	const char *policy_names[SIRQ_POLICY_MAX];
	struct overrides *o = &a->o;
	int64_t v = 0;
	unsigned int i;

	for (i = 0; i < SIRQ_POLICY_MAX; i++)
		policy_names[i] = sirq_policy_name(i);
	switch (c) {
	case OPT_SCENARIO:
		memset(a->scenario, 0, sizeof(a->scenario));
		return parse_names("--scenario", arg, scenario_names, SC_MAX,
				   a->scenario);
	case OPT_POLICY:
		memset(a->policy, 0, sizeof(a->policy));
		return parse_names("--policy", arg, policy_names,
				   SIRQ_POLICY_MAX, a->policy);
	case OPT_TICK_HZ:
		return parse_tick_hz(arg, a);
	case OPT_DURATION:
		if (!parse_i64("--duration-ms", arg, 1, DURATION_MS_MAX, &v))
			return false;
		a->duration_ms = (uint64_t)v;
		return true;
	case OPT_SEED:
		if (!parse_i64("--seed", arg, 0, INT64_MAX, &v))
			return false;
		a->seed = (uint64_t)v;
		return true;
	case OPT_JSON:
		a->json = arg;
		return true;
	case OPT_QUIET:
		a->quiet = true;
		return true;
	case OPT_RATE_PPS:
		/* 10 Gpps: beyond any NIC, still exact in ps. */
		if (!parse_i64("--rate-pps", arg, 1, 10000000000LL, &v))
			return false;
		o->rate_pps = (uint64_t)v;
		return true;
	case OPT_RATE_GBPS:
		return parse_double("--rate-gbps", arg, 0.001, 1600, &o->rate_gbps);
	case OPT_PKT_SIZE:
		return parse_i64("--pkt-size", arg, ETH_MIN_FRAME, ETH_MAX_FRAME,
				 &o->pkt_size);
	case OPT_TRAINS:
		return parse_onoff("--trains", arg, &o->trains);
	case OPT_COST:
		return parse_double("--cost-ns", arg, 0.001, 1e9, &o->cost_ns);
	case OPT_POLL_COST:
		return parse_double("--poll-cost-ns", arg, 0, 1e9, &o->poll_cost_ns);
	case OPT_RING:
		return parse_i64("--ring", arg, 1, RX_RING_MAX, &o->ring);
	case OPT_IRQ_TICK:
		if (!parse_i64("--irq-tick-us", arg, 1, 1000000, &v))
			return false;
		a->base.irq_tick_ps = (uint64_t)v * PS_PER_US;
		return true;
	case OPT_RX_IRQ:
		if (!parse_i64("--rx-irq-us", arg, 0, 1000000, &v))
			return false;
		a->base.rx_irq_ps = (uint64_t)v * PS_PER_US;
		return true;
	case OPT_SCHED_HZ:
		if (!parse_i64("--sched-hz", arg, 1, SCHED_HZ_MAX, &v))
			return false;
		a->base.sched_hz = (uint32_t)v;
		return true;
	case OPT_SLICE:
		if (!parse_i64("--sched-slice-us", arg, 1, 1000000, &v))
			return false;
		a->base.slice_ps = (uint64_t)v * PS_PER_US;
		return true;
	case OPT_WORKER:
		if (strcmp(arg, "sirqd") == 0 || strcmp(arg, "kernel") == 0) {
			a->base.worker = arg[0] == 's' ? WORKER_SIRQD : WORKER_KERNEL;
			return true;
		}
		fprintf(stderr, "sirq-sim: invalid --worker '%s'\n", arg);
		return false;
	case OPT_WORKER_NICE:
		if (!parse_i64("--worker-nice", arg, NICE_MIN, NICE_MAX, &v))
			return false;
		a->base.worker_nice = (int)v;
		return true;
	case OPT_APP_THREADS:
		return parse_i64("--app-threads", arg, 0, APP_MAX_THREADS,
				 &o->app_threads);
	case OPT_APP_HOLD:
		return parse_i64("--app-hold-us", arg, 1, 10000000, &o->app_hold_us);
	case OPT_APP_PERIOD:
		return parse_i64("--app-period-us", arg, 1, 10000000,
				 &o->app_period_us);
	case OPT_APP_RANDOM:
		return parse_onoff("--app-random", arg, &o->app_random);
	case OPT_APP_NICE:
		if (!parse_i64("--app-nice", arg, NICE_MIN, NICE_MAX, &v))
			return false;
		a->base.app_nice = (int)v;
		return true;
	default:
		return false;
	}
}

/* 0: run; 1: --help was given; 2: bad command line. */
static int
parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "scenario", required_argument, NULL, OPT_SCENARIO },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "tick-hz", required_argument, NULL, OPT_TICK_HZ },
		{ "duration-ms", required_argument, NULL, OPT_DURATION },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "rate-pps", required_argument, NULL, OPT_RATE_PPS },
		{ "rate-gbps", required_argument, NULL, OPT_RATE_GBPS },
		{ "pkt-size", required_argument, NULL, OPT_PKT_SIZE },
		{ "trains", required_argument, NULL, OPT_TRAINS },
		{ "cost-ns", required_argument, NULL, OPT_COST },
		{ "poll-cost-ns", required_argument, NULL, OPT_POLL_COST },
		{ "ring", required_argument, NULL, OPT_RING },
		{ "irq-tick-us", required_argument, NULL, OPT_IRQ_TICK },
		{ "rx-irq-us", required_argument, NULL, OPT_RX_IRQ },
		{ "sched-hz", required_argument, NULL, OPT_SCHED_HZ },
		{ "sched-slice-us", required_argument, NULL, OPT_SLICE },
		{ "worker", required_argument, NULL, OPT_WORKER },
		{ "worker-nice", required_argument, NULL, OPT_WORKER_NICE },
		{ "app-threads", required_argument, NULL, OPT_APP_THREADS },
		{ "app-hold-us", required_argument, NULL, OPT_APP_HOLD },
		{ "app-period-us", required_argument, NULL, OPT_APP_PERIOD },
		{ "app-random", required_argument, NULL, OPT_APP_RANDOM },
		{ "app-nice", required_argument, NULL, OPT_APP_NICE },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == OPT_HELP) {
			usage(stdout, argv[0]);
			return 1;
		}
		if (c == '?' || !parse_opt(c, optarg, a)) {
			if (c == '?')
				usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sirq-sim: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (a->o.rate_pps != 0 && a->o.rate_gbps > 0) {
		fprintf(stderr, "sirq-sim: give --rate-pps or --rate-gbps, not both\n");
		return 2;
	}
	return 0;
}

/* The configuration of one scenario: its defaults, then the options. */
static bool
make_conf(struct sim_conf *c, const struct args *a, enum scenario_id sc)
{
	const struct overrides *o = &a->o;

	*c = a->base;
	scenario_defaults(c, sc);
	c->duration_ps = a->duration_ms * PS_PER_MS;
	c->seed = a->seed;
	if (o->pkt_size > 0)
		c->pkt_size = (uint32_t)o->pkt_size;
	if (o->rate_pps != 0)
		c->rate_pps = o->rate_pps;
	if (o->rate_gbps > 0)
		c->rate_pps = (uint64_t)llround(o->rate_gbps * 1e9 /
			((double)(c->pkt_size + ETH_WIRE_OVERHEAD) * BITS_PER_BYTE));
	if (o->trains == 0)
		c->train_pkts.max = 0;
	if (o->trains == 1) {
		c->train_pkts = stall_train_pkts;
		c->train_gap_ps = stall_train_gap_ps;
	}
	if (o->cost_ns > 0)
		c->cost_ps = (uint64_t)llround(o->cost_ns * PS_PER_NS);
	c->poll_cost_ps = o->poll_cost_ns >= 0 ?
		(uint64_t)llround(o->poll_cost_ns * PS_PER_NS) : c->cost_ps;
	if (o->ring > 0)
		c->ring = (uint32_t)o->ring;
	if (o->app_threads >= 0)
		c->app_threads = (uint32_t)o->app_threads;
	if (o->app_hold_us > 0)
		c->app_hold_ps = (uint64_t)o->app_hold_us * PS_PER_US;
	if (o->app_period_us > 0)
		c->app_period_ps = (uint64_t)o->app_period_us * PS_PER_US;
	if (o->app_random >= 0)
		c->app_random = o->app_random;
	if (c->cost_ps == 0) {
		fprintf(stderr, "sirq-sim: --cost-ns below 1 ps\n");
		return false;
	}
	return true;
}

static int
run_one(const struct sim_conf *c, struct result *r)
{
	/* static: the histograms make it large for the stack. */
	static struct sim s;
	int ret;

	ret = sim_init(&s, c);
	if (ret != 0) {
		fprintf(stderr, "sirq-sim: set-up of %s/%s failed: %s\n",
			c->scenario, sirq_policy_name(c->policy), strerror(-ret));
		sim_fini(&s);
		return ret;
	}
	sim_run(&s);
	collect(r, &s);
	sim_fini(&s);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct sim_conf confs[SC_MAX][MAX_TICK_HZ][SIRQ_POLICY_MAX];
	static struct result res[SC_MAX][MAX_TICK_HZ][SIRQ_POLICY_MAX];
	struct args a = {
		.duration_ms = DURATION_MS_DEFAULT,
		.seed = SEED_DEFAULT,
		.nb_tick_hz = 1,
		.o = { .trains = -1, .app_threads = -1, .app_random = -1,
		       .poll_cost_ns = -1 },
		.base = {
			.irq_tick_ps = SIRQ_IRQ_TICK_US_DEFAULT * PS_PER_US,
			.sched_hz = SCHED_HZ_DEFAULT,
			.slice_ps = SCHED_SLICE_US_DEFAULT * PS_PER_US,
			.worker = WORKER_KERNEL,
		},
	};
	unsigned int sc, t, p, n, nb_runs = 0, done = 0;
	FILE *json = NULL;
	int rc;

	for (sc = 0; sc < SC_MAX; sc++)
		a.scenario[sc] = true;
	for (p = 0; p < SIRQ_POLICY_MAX; p++)
		a.policy[p] = true;
	rc = parse_args(argc, argv, &a);
	if (rc != 0)
		return rc == 1 ? 0 : rc;

	for (sc = 0; sc < SC_MAX; sc++) {
		if (!a.scenario[sc])
			continue;
		for (t = 0; t < a.nb_tick_hz; t++) {
			for (p = 0; p < SIRQ_POLICY_MAX; p++) {
				struct sim_conf *c = &confs[sc][t][p];

				if (!make_conf(c, &a, sc))
					return 2;
				c->policy = p;
				c->tick_hz = a.tick_hz[t];
				if (a.policy[p])
					nb_runs++;
			}
		}
	}
	if (a.json != NULL) {
		json = fopen(a.json, "w");
		if (json == NULL) {
			fprintf(stderr, "sirq-sim: cannot write --json '%s': %s\n",
				a.json, strerror(errno));
			return 2;
		}
		fprintf(json, "{\"source\": \"sirq-sim\", \"format\": 1"
			", \"stall_threshold_ms\": %.3f, \"duration_ms\": %" PRIu64
			", \"seed\": %" PRIu64 ",\n \"scenarios\": {",
			(double)SIRQ_STALL_THRESHOLD_NS_DEFAULT / NS_PER_MS,
			a.duration_ms, a.seed);
		for (sc = 0, n = 0; sc < SC_MAX; sc++) {
			if (!a.scenario[sc])
				continue;
			fprintf(json, "%s\n  \"%s\": ", n++ ? "," : "",
				scenario_names[sc]);
			json_conf(json, &confs[sc][0][0]);
		}
		fprintf(json, "},\n \"runs\": [\n");
	}

	for (sc = 0; sc < SC_MAX; sc++) {
		if (!a.scenario[sc])
			continue;
		for (t = 0; t < a.nb_tick_hz; t++) {
			const struct result *row[SIRQ_POLICY_MAX];

			for (p = 0, n = 0; p < SIRQ_POLICY_MAX; p++) {
				if (!a.policy[p])
					continue;
				if (run_one(&confs[sc][t][p], &res[sc][t][p]) != 0)
					return 1;
				row[n++] = &res[sc][t][p];
				if (json != NULL)
					json_run(json, &res[sc][t][p],
						 ++done < nb_runs);
			}
			if (a.quiet)
				continue;
			printf("== %s, tick_hz %u: %s\n   ", scenario_names[sc],
			       a.tick_hz[t], scenario_summary[sc]);
			json_conf(stdout, &confs[sc][t][0]);
			printf("\n");
			print_table(row, n);
		}
	}
	if (json == NULL)
		return 0;
	fprintf(json, " ]}\n");
	if (fclose(json) != 0) {
		fprintf(stderr, "sirq-sim: writing '%s' failed: %s\n",
			a.json, strerror(errno));
		return 1;
	}
	return 0;
}
