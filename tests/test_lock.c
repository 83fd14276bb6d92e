/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The execution lock hands itself over: a thread waiting in
 * sirq_bh_disable() gets it when the holder next drops it, as a task
 * blocked on PREEMPT_RT's per-CPU BH lock does. A pass drops it at the
 * next vector boundary once somebody waits, and the dispatcher and the
 * worker, which only try the lock, leave it to a waiter.
 *
 * The waiter is a real thread. The fake clock tells the test the moment
 * it waits: exec_lock() reads the clock once it is counted as a waiter,
 * and the harness's on_next_clock_read hook runs in that read, on the
 * waiter's thread, while the test thread is the only other one and
 * reads no clock meanwhile.
 */

#include <string.h>

#include "harness.h"

struct waiter {
	struct harness *h;
	struct probe *other;		/* a vector the waiter looks at */
	pthread_t thread;
	unsigned int counted;		/* it is counted as a waiter */
	unsigned int hold;		/* keep it inside its wait until cleared */
	unsigned int got;		/* it holds the lock */
	unsigned int other_runs_at_lock;
	int enable_ret;
};

static struct waiter *the_waiter;

/* In the waiter's first clock read inside its wait. */
static void
waiter_counted(struct harness *h)
{
	struct waiter *w = the_waiter;

	(void)h;
	__atomic_store_n(&w->counted, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&w->hold, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void *
waiter_main(void *arg)
{
	struct waiter *w = arg;

	sirq_bh_disable(w->h->cpu);
	__atomic_store_n(&w->got, 1, __ATOMIC_RELEASE);
	if (w->other != NULL)
		w->other_runs_at_lock = w->other->runs;
	w->enable_ret = sirq_bh_enable(w->h->cpu);
	return NULL;
}

/* Start the waiter and return once it waits for the lock the test holds. */
static void
waiter_start(struct waiter *w, struct harness *h, struct probe *other,
	     bool hold)
{
	memset(w, 0, sizeof(*w));
	w->h = h;
	w->other = other;
	w->hold = hold;
	the_waiter = w;
	h->on_next_clock_read = waiter_counted;
	cr_assert(eq(int, pthread_create(&w->thread, NULL, waiter_main, w), 0));
	cr_assert(wait_flag(&w->counted, SEC(10)), "the waiter never waited");
}

static void
waiter_join(struct waiter *w)
{
	cr_assert(eq(int, pthread_join(w->thread, NULL), 0));
	cr_assert(eq(int, w->enable_ret, 0));
}

/* Probe hook of the vector that runs while a waiter arrives. */
static void
waiter_arrives(struct probe *p)
{
	waiter_start(p->hook_arg, p->h, &p->h->probe[VEC_APP1], false);
}

Test(lock, a_waiter_gets_the_lock_at_the_next_vector_boundary_of_a_pass)
{
	struct harness h;
	struct probe *a, *b;
	struct waiter w;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	a = probe_register(&h, VEC_APP0);
	b = probe_register(&h, VEC_APP1);
	a->hook = waiter_arrives;
	a->hook_arg = &w;

	/* A and B pending; the waiter arrives while A runs. */
	sirq_raise(h.cpu, VEC_APP0);
	sirq_raise(h.cpu, VEC_APP1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));

	/* The pass ended after A: B waits, pending, for the lock's next owner. */
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_LOCK_WAITER][SIRQ_CTX_INLINE], 1));
	waiter_join(&w);
	cr_assert(eq(uint, w.other_runs_at_lock, 0),
		  "B ran before the waiter got the lock");
	/* The waiter's outermost enable ran B, on the waiter (mainline). */
	cr_assert(eq(uint, b->runs, 1));
	cr_assert(eq(uint, a->runs, 1));
	cr_assert(eq(u32, sirq_pending(h.cpu), 0));
	stats(&h);
	cr_assert(eq(u64, h.st.lock_wait.samples, 1));
	cr_assert(le(u64, h.st.lock_wait_runs_max, 1),
		  "the waiter saw no run end but A's");
	harness_fini(&h);
}

Test(lock, a_hand_over_opens_no_window_and_wakes_no_worker)
{
	struct harness h;
	struct probe *a;
	struct waiter w;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	a = probe_register(&h, VEC_APP0);
	probe_register(&h, VEC_APP1);
	a->hook = waiter_arrives;
	a->hook_arg = &w;

	sirq_raise(h.cpu, VEC_APP0);
	sirq_raise(h.cpu, VEC_APP1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	waiter_join(&w);

	stats(&h);
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_DEFER], 0));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_OVERLOAD], 0));
	cr_assert(eq(uint, h.wakes, 0));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_IDLE));
	harness_fini(&h);
}

Test(lock, the_handed_back_vectors_keep_their_first_raise_time)
{
	struct harness h;
	struct probe *a;
	struct waiter w;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	a = probe_register(&h, VEC_APP0);
	probe_register(&h, VEC_APP1);
	a->hook = waiter_arrives;
	a->hook_arg = &w;
	a->work_ns = US(300);

	/* B raised at T0, run by the waiter 300 us later: that is its latency. */
	sirq_raise(h.cpu, VEC_APP0);
	sirq_raise(h.cpu, VEC_APP1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	waiter_join(&w);

	stats(&h);
	cr_assert(eq(u64, h.st.latency[VEC_APP1].samples, 1));
	cr_assert(eq(u64, h.st.latency[VEC_APP1].max_ns, US(300)));
	harness_fini(&h);
}

Test(lock, the_dispatcher_leaves_a_free_lock_to_a_waiter)
{
	struct harness h;
	struct probe *rx;
	struct waiter w;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);

	/* The test holds the lock; the waiter is held inside its wait. */
	sirq_bh_disable(h.cpu);
	waiter_start(&w, &h, rx, true);
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));

	/* Free, but wanted: neither the dispatcher nor the worker takes it. */
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_BUSY));
	cr_assert(not(sirq_irq_enter(h.cpu)));
	sirq_worker_wakeup(h.cpu);
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_BUSY));
	cr_assert(eq(uint, rx->runs, 0));

	__atomic_store_n(&w.hold, 0, __ATOMIC_RELEASE);
	waiter_join(&w);
	cr_assert(eq(uint, w.other_runs_at_lock, 0));
	cr_assert(eq(uint, rx->runs, 1), "the waiter's enable ran NET_RX");
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_IDLE));
	harness_fini(&h);
}

Test(lock, a_thread_taking_bottom_halves_again_queues_behind_a_waiter)
{
	struct harness h;
	struct waiter w;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	sirq_bh_disable(h.cpu);
	waiter_start(&w, &h, NULL, true);
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));

	/*
	 * The test thread's own next sirq_bh_disable() waits too: it does
	 * not get the lock back before the waiter has had it.
	 */
	__atomic_store_n(&w.hold, 0, __ATOMIC_RELEASE);
	sirq_bh_disable(h.cpu);
	cr_assert(eq(uint, __atomic_load_n(&w.got, __ATOMIC_ACQUIRE), 1));
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	waiter_join(&w);
	harness_fini(&h);
}

/* A worker pass, for the waiter to arrive in. */
Test(lock, the_worker_hands_the_lock_over_at_a_vector_boundary)
{
	struct harness h;
	struct probe *a, *b;
	struct waiter w;

	harness_init(&h, SIRQ_POLICY_DEFERRED);
	a = probe_register(&h, VEC_APP0);
	b = probe_register(&h, VEC_APP1);
	a->hook = waiter_arrives;
	a->hook_arg = &w;

	sirq_raise(h.cpu, VEC_APP0);
	sirq_raise(h.cpu, VEC_APP1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	/* The worker's pass ends after A; it goes on later, not now. */
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_YIELD));
	waiter_join(&w);
	cr_assert(eq(uint, w.other_runs_at_lock, 0));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_LOCK_WAITER][SIRQ_CTX_WORKER], 1));
	/* deferred: the waiter's enable left B to the worker, which runs it. */
	cr_assert(eq(uint, b->runs, 0));
	worker_run_until_sleep(&h, 10);
	cr_assert(eq(uint, b->runs, 1));
	harness_fini(&h);
}
