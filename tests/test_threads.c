/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Real threads on a real clock (CLOCK_MONOTONIC): raises from several
 * threads at once are never lost, and handlers of one CPU never run at
 * the same time, whoever (dispatcher, worker) runs them.
 *
 * A raise is "seen" when a handler run starts after it: each raiser bumps
 * its vector's produced counter before raising, each handler run copies
 * produced into consumed. A lost raise leaves consumed behind produced.
 * Every loop is bounded in iterations and in time; nothing here asserts
 * from a thread other than the test's own.
 */

#include <sched.h>

#include "harness.h"

#define RAISERS 4
#define RAISES_PER_THREAD 50000		/* 200k raises per test at most */
#define RUN_TIME_NS SEC(4)		/* stop raising after this long */
#define SEEN_TIMEOUT_NS SEC(5)		/* a raise unseen for this long is lost */

struct vec_counters {
	uint64_t produced;
	uint64_t consumed;
	uint64_t runs;
	struct race *race;
	unsigned int vec;
} __attribute__((aligned(64)));

struct raiser {
	struct race *race;
	struct vec_counters *vc;
	pthread_t thread;
};

struct race {
	struct harness h;
	struct vec_counters vc[RAISERS];
	struct raiser raiser[RAISERS];
	bool lockstep;			/* wait until each raise is seen */
	uint64_t deadline;
	unsigned int raisers_done;
	unsigned int lost;		/* a lockstep raiser waited in vain */
	unsigned int in_handler;
	unsigned int overlaps;
};

static void
consume(struct sirq_cpu *cpu, void *arg)
{
	struct vec_counters *vc = arg;
	struct race *r = vc->race;
	unsigned int i;

	if (__atomic_exchange_n(&r->in_handler, 1, __ATOMIC_ACQ_REL) != 0)
		__atomic_fetch_add(&r->overlaps, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&vc->consumed,
			 __atomic_load_n(&vc->produced, __ATOMIC_SEQ_CST),
			 __ATOMIC_RELEASE);
	/* Every 4th run leaves work behind, so passes end with work left. */
	if ((__atomic_add_fetch(&vc->runs, 1, __ATOMIC_RELAXED) & 3) == 0)
		sirq_raise_irqoff(cpu, vc->vec);
	for (i = 0; i < 50; i++)	/* a little work: widen the window */
		__atomic_load_n(&r->in_handler, __ATOMIC_RELAXED);
	__atomic_store_n(&r->in_handler, 0, __ATOMIC_RELEASE);
}

static bool
wait_seen(const struct vec_counters *vc, uint64_t produced)
{
	uint64_t deadline = monotonic_ns() + SEEN_TIMEOUT_NS;

	while (__atomic_load_n(&vc->consumed, __ATOMIC_ACQUIRE) < produced) {
		if (monotonic_ns() >= deadline)
			return false;
		sched_yield();
	}
	return true;
}

static void *
raiser_main(void *arg)
{
	struct raiser *rs = arg;
	struct race *r = rs->race;
	unsigned int n;

	for (n = 0; n < RAISES_PER_THREAD; n++) {
		uint64_t p;

		if (monotonic_ns() >= r->deadline)
			break;
		p = __atomic_add_fetch(&rs->vc->produced, 1, __ATOMIC_SEQ_CST);
		sirq_raise(r->h.cpu, rs->vc->vec);
		if (r->lockstep && !wait_seen(rs->vc, p)) {
			__atomic_store_n(&r->lost, 1, __ATOMIC_RELEASE);
			break;
		}
	}
	__atomic_fetch_add(&r->raisers_done, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

static bool
all_seen(struct race *r)
{
	unsigned int i;

	for (i = 0; i < RAISERS; i++)
		if (__atomic_load_n(&r->vc[i].consumed, __ATOMIC_ACQUIRE) !=
		    __atomic_load_n(&r->vc[i].produced, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/*
 * Raise vectors VEC_APP0..VEC_APP3 from one thread each while this thread
 * dispatches; with @p worker, a worker thread takes what is deferred and
 * the dispatcher flips need_resched now and then to cause deferrals.
 */
static void
run_race(struct race *r, enum sirq_policy_id policy, bool worker, bool lockstep)
{
	struct sirq_params p = harness_params(policy);
	unsigned int i, iter = 0;
	uint64_t drain_deadline;

	harness_init_params(&r->h, &p, HARNESS_REAL_CLOCK |
			    (worker ? 0 : HARNESS_NO_WORKER));
	r->lockstep = lockstep;
	for (i = 0; i < RAISERS; i++) {
		r->vc[i].race = r;
		r->vc[i].vec = VEC_APP0 + i;
		cr_assert(eq(int, sirq_register(r->h.cpu, VEC_APP0 + i, consume,
						&r->vc[i], NULL), 0));
	}
	if (worker)
		harness_worker_start(&r->h);

	r->deadline = monotonic_ns() + RUN_TIME_NS;
	for (i = 0; i < RAISERS; i++) {
		r->raiser[i].race = r;
		r->raiser[i].vc = &r->vc[i];
		cr_assert(eq(int, pthread_create(&r->raiser[i].thread, NULL,
						 raiser_main, &r->raiser[i]), 0));
	}
	while (__atomic_load_n(&r->raisers_done, __ATOMIC_ACQUIRE) < RAISERS) {
		if (worker && (++iter & 63) == 0)
			sirq_set_need_resched(r->h.cpu, (iter & 64) != 0);
		if (sirq_irq_exit(r->h.cpu) != SIRQ_IRQ_EXIT_RAN)
			sched_yield();
	}
	for (i = 0; i < RAISERS; i++)
		cr_assert(eq(int, pthread_join(r->raiser[i].thread, NULL), 0));

	/* Final drain: whoever's turn it is must see every raise. */
	sirq_set_need_resched(r->h.cpu, false);
	drain_deadline = monotonic_ns() + SEEN_TIMEOUT_NS;
	while (!all_seen(r) && monotonic_ns() < drain_deadline) {
		sirq_irq_exit(r->h.cpu);
		sched_yield();
	}
	if (worker)
		harness_worker_stop(&r->h);
}

static void
assert_nothing_lost(struct race *r)
{
	uint64_t total = 0;
	unsigned int i;

	cr_assert(eq(uint, r->lost, 0), "a raise was never seen by a handler");
	for (i = 0; i < RAISERS; i++) {
		cr_assert(ne(u64, r->vc[i].produced, 0));
		cr_assert(eq(u64, r->vc[i].consumed, r->vc[i].produced),
			  "vector %u: raise lost", r->vc[i].vec);
		total += r->vc[i].produced;
	}
	cr_assert(eq(uint, r->overlaps, 0), "handlers ran concurrently");
	cr_log_info("%llu raises", (unsigned long long)total);
}

/* Both the dispatcher and the worker ran handlers: they really competed. */
static void
assert_both_contexts_ran(struct race *r)
{
	uint64_t ctx_runs[SIRQ_CTX_MAX] = { 0 };
	unsigned int i, c;

	stats(&r->h);
	for (i = 0; i < RAISERS; i++)
		for (c = 0; c < SIRQ_CTX_MAX; c++)
			ctx_runs[c] += r->h.st.runs[VEC_APP0 + i][c];
	cr_log_info("runs inline %llu, worker %llu",
		    (unsigned long long)ctx_runs[SIRQ_CTX_INLINE],
		    (unsigned long long)ctx_runs[SIRQ_CTX_WORKER]);
	cr_assert(ne(u64, ctx_runs[SIRQ_CTX_INLINE], 0));
	cr_assert(ne(u64, ctx_runs[SIRQ_CTX_WORKER], 0));
}

/*
 * Rounds: four threads each raise their own five vectors at the same
 * moment, into an empty mask, with no dispatcher running; then this
 * thread checks that all twenty bits are pending and that the mask was
 * found empty (ops.kick) exactly once, and runs them.
 */
#define BURST_THREADS 4
#define BURST_VECS 5			/* per thread: vectors 10..29 */
#define BURST_ROUNDS 20000		/* 400k raises at most */

struct burst {
	struct harness h;
	unsigned int round;		/* raisers raise once per round */
	unsigned int done;		/* raisers done with this round */
	unsigned int stop;
	uint64_t runs[SIRQ_MAX_VECTORS];
};

struct burst_raiser {
	struct burst *b;
	unsigned int first_vec;
	pthread_t thread;
};

static void
count_run(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(*(uint64_t *)arg)++;		/* only this test's thread runs them */
}

static void *
burst_raiser_main(void *arg)
{
	struct burst_raiser *br = arg;
	struct burst *b = br->b;
	unsigned int r, v;

	for (r = 1; ; r++) {
		while (__atomic_load_n(&b->round, __ATOMIC_ACQUIRE) < r &&
		       !__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE))
			sched_yield();
		if (__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE))
			return NULL;
		for (v = br->first_vec; v < br->first_vec + BURST_VECS; v++)
			sirq_raise(b->h.cpu, v);
		__atomic_fetch_add(&b->done, 1, __ATOMIC_ACQ_REL);
	}
}

Test(threads, simultaneous_raises_of_four_threads_into_one_mask_are_never_lost)
{
	static struct burst b;
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct burst_raiser br[BURST_THREADS];
	uint32_t all = 0, missing = 0;
	unsigned int i, v, r, lost_rounds = 0;
	uint64_t deadline;

	harness_init_params(&b.h, &p, HARNESS_REAL_CLOCK | HARNESS_NO_WORKER);
	for (i = 0; i < BURST_THREADS; i++) {
		br[i].b = &b;
		br[i].first_vec = SIRQ_NR_KERNEL_VECTORS + i * BURST_VECS;
		for (v = br[i].first_vec; v < br[i].first_vec + BURST_VECS; v++) {
			sirq_register(b.h.cpu, v, count_run, &b.runs[v], NULL);
			all |= SIRQ_BIT(v);
		}
		cr_assert(eq(int, pthread_create(&br[i].thread, NULL,
						 burst_raiser_main, &br[i]), 0));
	}

	deadline = monotonic_ns() + RUN_TIME_NS;
	for (r = 1; r <= BURST_ROUNDS; r++) {
		uint32_t pending;

		__atomic_store_n(&b.done, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b.round, r, __ATOMIC_RELEASE);
		while (__atomic_load_n(&b.done, __ATOMIC_ACQUIRE) < BURST_THREADS)
			sched_yield();
		pending = sirq_pending(b.h.cpu);
		if (pending != all) {
			missing |= all & ~pending;
			lost_rounds++;
		}
		sirq_irq_exit(b.h.cpu);
		if (monotonic_ns() >= deadline)
			break;
	}
	__atomic_store_n(&b.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < BURST_THREADS; i++)
		cr_assert(eq(int, pthread_join(br[i].thread, NULL), 0));
	if (r > BURST_ROUNDS)
		r = BURST_ROUNDS;

	cr_log_info("%u rounds", r);
	cr_assert(eq(uint, lost_rounds, 0), "raises lost in %u rounds, vectors %#x",
		  lost_rounds, missing);
	cr_assert(eq(uint, b.h.kicks, r), "the mask was found empty %u times in %u rounds",
		  b.h.kicks, r);
	for (v = SIRQ_NR_KERNEL_VECTORS; v < SIRQ_NR_KERNEL_VECTORS +
	     BURST_THREADS * BURST_VECS; v++)
		cr_assert(eq(u64, b.runs[v], r), "vector %u", v);
	harness_fini(&b.h);
}

Test(threads, raises_from_four_threads_at_once_are_never_lost)
{
	static struct race r;

	run_race(&r, SIRQ_POLICY_MAINLINE, false, true);
	assert_nothing_lost(&r);
	harness_fini(&r.h);
}

Test(threads, deferral_to_a_worker_thread_loses_no_raise_under_ksoftirqd)
{
	static struct race r;

	run_race(&r, SIRQ_POLICY_KSOFTIRQD, true, true);
	assert_nothing_lost(&r);
	assert_both_contexts_ran(&r);
	cr_assert(ne(u64, stats(&r.h)->deferred_to_worker, 0));
	harness_fini(&r.h);
}

Test(threads, deferral_to_a_worker_thread_loses_no_raise_under_kicinski)
{
	static struct race r;

	run_race(&r, SIRQ_POLICY_KICINSKI, true, true);
	assert_nothing_lost(&r);
	assert_both_contexts_ran(&r);
	harness_fini(&r.h);
}

Test(threads, handoff_to_a_worker_thread_loses_no_raise_under_deferred)
{
	static struct race r;
	unsigned int i;

	run_race(&r, SIRQ_POLICY_DEFERRED, true, true);
	assert_nothing_lost(&r);
	stats(&r.h);
	for (i = 0; i < RAISERS; i++) {
		cr_assert(eq(u64, r.h.st.runs[VEC_APP0 + i][SIRQ_CTX_INLINE], 0));
		cr_assert(ne(u64, r.h.st.runs[VEC_APP0 + i][SIRQ_CTX_WORKER], 0));
	}
	harness_fini(&r.h);
}

/*
 * Every run of a vector follows at least one raise since its last run,
 * so every run has exactly one raise-to-run sample: a raise that lands
 * between the loop taking the pending bits and the handler running is
 * neither lost (no sample for the run it causes) nor double-counted.
 */
static void
assert_one_sample_per_run(struct race *r)
{
	unsigned int i;

	stats(&r->h);
	for (i = 0; i < RAISERS; i++) {
		unsigned int v = VEC_APP0 + i;
		uint64_t runs = r->h.st.runs[v][SIRQ_CTX_INLINE] +
			r->h.st.runs[v][SIRQ_CTX_WORKER];

		cr_assert(ne(u64, runs, 0));
		cr_assert(eq(u64, r->h.st.latency[v].samples, runs),
			  "vector %u: %llu samples for %llu runs", v,
			  (unsigned long long)r->h.st.latency[v].samples,
			  (unsigned long long)runs);
	}
}

Test(threads, free_running_raisers_give_one_latency_sample_per_run)
{
	static struct race r;

	run_race(&r, SIRQ_POLICY_MAINLINE, false, false);
	assert_nothing_lost(&r);
	assert_one_sample_per_run(&r);
	harness_fini(&r.h);
}

Test(threads, free_running_raisers_with_a_worker_give_one_sample_per_run)
{
	static struct race r;

	run_race(&r, SIRQ_POLICY_KICINSKI, true, false);
	assert_nothing_lost(&r);
	assert_one_sample_per_run(&r);
	harness_fini(&r.h);
}
