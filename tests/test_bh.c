/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Bottom-half disabling (local_bh_disable/enable): holds the execution
 * lock for the calling thread, nests, and the outermost enable runs what
 * is pending through the policy.
 */

#include <errno.h>

#include "harness.h"
#include "sirq_private.h"

Test(bh, irq_exit_while_disabled_returns_bh_disabled_and_runs_nothing)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);

	sirq_bh_disable(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_BH_DISABLED));
	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_NET_RX)));
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	harness_fini(&h);
}

Test(bh, outermost_enable_runs_pending_work_inline_under_mainline)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);

	sirq_bh_disable(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));

	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u32, sirq_pending(h.cpu), 0));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(bh, disable_nests_and_only_the_outermost_enable_runs_work)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);

	sirq_bh_disable(h.cpu);
	sirq_bh_disable(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);

	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_BH_DISABLED));

	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_assert(eq(uint, rx->runs, 1));
	harness_fini(&h);
}

Test(bh, outermost_enable_defers_to_a_runnable_worker_under_ksoftirqd)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_worker_wakeup(h.cpu);

	sirq_bh_disable(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));

	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_NET_RX)));
	cr_assert(eq(uint, worker_run_until_sleep(&h, 10), 1));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 1));
	harness_fini(&h);
}

Test(bh, enable_without_disable_returns_eperm)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(int, sirq_bh_enable(h.cpu), -EPERM));

	sirq_bh_disable(h.cpu);
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_assert(eq(int, sirq_bh_enable(h.cpu), -EPERM));
	harness_fini(&h);
}

struct bh_thread {
	struct sirq_cpu *cpu;
	bool disable;			/* disable first, enable on release */
	unsigned int held;
	unsigned int release;
	int enable_ret;
};

static void *
bh_thread_main(void *arg)
{
	struct bh_thread *bt = arg;

	if (bt->disable)
		sirq_bh_disable(bt->cpu);
	__atomic_store_n(&bt->held, 1, __ATOMIC_RELEASE);
	wait_flag(&bt->release, SEC(10));
	bt->enable_ret = sirq_bh_enable(bt->cpu);
	return NULL;
}

Test(bh, disabled_on_another_thread_makes_irq_exit_busy)
{
	struct bh_thread bt = { .disable = true };
	struct harness h;
	struct probe *rx;
	pthread_t thr;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	bt.cpu = h.cpu;
	cr_assert(eq(int, pthread_create(&thr, NULL, bh_thread_main, &bt), 0));
	cr_assert(wait_flag(&bt.held, SEC(10)));

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_BUSY));
	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(u64, stats(&h)->lock_busy, 1));
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_NET_RX)));

	/* That thread's outermost enable runs the work, on that thread. */
	__atomic_store_n(&bt.release, 1, __ATOMIC_RELEASE);
	cr_assert(eq(int, pthread_join(thr, NULL), 0));
	cr_assert(eq(int, bt.enable_ret, 0));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_IDLE));
	harness_fini(&h);
}

/* Another thread's "interrupt" on the CPU: what its irq_exit() says. */
static void *
irq_exit_thread(void *arg)
{
	struct harness *h = arg;

	return (void *)(intptr_t)sirq_irq_exit(h->cpu);
}

static int
irq_exit_elsewhere(struct harness *h)
{
	pthread_t thr;
	void *ret;

	cr_assert(eq(int, pthread_create(&thr, NULL, irq_exit_thread, h), 0));
	cr_assert(eq(int, pthread_join(thr, &ret), 0));
	return (int)(intptr_t)ret;
}

/*
 * A section inside a "hardirq" (a remote call the dispatcher runs):
 * the kernel's local_bh_enable() runs no softirq in interrupt context,
 * and the lock stays the interrupt's until its irq_exit(). An enable
 * that let go of it let sirqd in beside the dispatcher, both as the
 * lcore: a 65th call got into a queue of 64 under ASan.
 */
Test(bh, a_section_inside_an_irq_leaves_the_lock_and_the_work_to_irq_exit)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);

	cr_assert(sirq_irq_enter(h.cpu));
	cr_assert(eq(int, sirq_bh_disable(h.cpu), 0));
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_assert(eq(uint, rx->runs, 0), "ran in the interrupt, at the enable");
	cr_assert(sirq_exec_lock_is_mine(h.cpu), "the interrupt's lock let go");
	cr_assert(eq(int, irq_exit_elsewhere(&h), SIRQ_IRQ_EXIT_BUSY));
	cr_assert(eq(uint, rx->runs, 0));

	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 1));
	cr_assert(not(sirq_exec_lock_is_mine(h.cpu)));
	cr_assert(eq(int, sirq_bh_enable(h.cpu), -EPERM));
	harness_fini(&h);
}

/* The same inside a thread that holds the lock (an unsafe tasklet's). */
Test(bh, a_section_inside_a_lock_holder_leaves_the_lock_to_it)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);

	sirq_exec_lock(h.cpu);
	cr_assert(eq(int, sirq_bh_disable(h.cpu), 0));
	cr_assert(eq(int, sirq_bh_disable(h.cpu), 0));
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_assert(eq(int, sirq_bh_enable(h.cpu), -EPERM));
	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(sirq_exec_lock_is_mine(h.cpu));
	cr_assert(eq(int, irq_exit_elsewhere(&h), SIRQ_IRQ_EXIT_BUSY));
	sirq_exec_unlock(h.cpu);

	/* Let go: the next interrupt runs it; a section takes the lock again. */
	cr_assert(eq(int, irq_exit_elsewhere(&h), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(int, sirq_bh_disable(h.cpu), 0));
	cr_assert(sirq_exec_lock_is_mine(h.cpu));
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_assert(not(sirq_exec_lock_is_mine(h.cpu)));
	harness_fini(&h);
}

Test(bh, enable_on_a_thread_that_did_not_disable_returns_eperm)
{
	struct bh_thread bt = { .disable = false, .release = 1 };
	struct harness h;
	struct probe *rx;
	pthread_t thr;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	bt.cpu = h.cpu;

	sirq_bh_disable(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, pthread_create(&thr, NULL, bh_thread_main, &bt), 0));
	cr_assert(eq(int, pthread_join(thr, NULL), 0));
	cr_assert(eq(int, bt.enable_ret, -EPERM));
	cr_assert(eq(uint, rx->runs, 0));

	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_assert(eq(uint, rx->runs, 1));
	harness_fini(&h);
}

/* What a handler saw when it disabled and re-enabled bottom halves. */
struct nested_bh {
	int enable_ret;
	enum sirq_irq_exit_result irq_exit_ret;
	unsigned int log_len_after_enable;
};

static void
disable_raise_enable(struct probe *p)
{
	struct nested_bh *n = p->hook_arg;
	struct sirq_cpu *cpu = p->h->cpu;

	sirq_bh_disable(cpu);
	sirq_raise(cpu, SIRQ_NET_RX);
	n->enable_ret = sirq_bh_enable(cpu);
	n->log_len_after_enable = p->h->nlog;
}

Test(bh, disable_and_enable_inside_a_handler_run_nothing_recursively)
{
	struct nested_bh n = { .enable_ret = -1 };
	struct harness h;
	struct probe *tx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tx = probe_register(&h, SIRQ_NET_TX);
	probe_register(&h, SIRQ_NET_RX);
	tx->hook = disable_raise_enable;
	tx->hook_arg = &n;

	sirq_raise(h.cpu, SIRQ_NET_TX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));

	cr_assert(eq(int, n.enable_ret, 0));
	cr_assert(eq(uint, n.log_len_after_enable, 1));	/* only NET_TX */
	/* NET_RX ran afterwards, in the next sweep of the same pass. */
	cr_assert(eq(uint, h.nlog, 2));
	cr_assert(eq(uint, h.log[1], SIRQ_NET_RX));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_INLINE], 1));

	/* The lock was released at the end of the pass, as usual. */
	sirq_bh_disable(h.cpu);
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_assert(eq(int, sirq_bh_enable(h.cpu), -EPERM));
	harness_fini(&h);
}

static void
raise_then_irq_exit(struct probe *p)
{
	struct nested_bh *n = p->hook_arg;

	sirq_raise(p->h->cpu, SIRQ_NET_RX);
	n->irq_exit_ret = sirq_irq_exit(p->h->cpu);
	n->log_len_after_enable = p->h->nlog;
}

Test(bh, irq_exit_from_inside_a_handler_returns_bh_disabled)
{
	struct nested_bh n = { .irq_exit_ret = SIRQ_IRQ_EXIT_IDLE };
	struct harness h;
	struct probe *tx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tx = probe_register(&h, SIRQ_NET_TX);
	probe_register(&h, SIRQ_NET_RX);
	tx->hook = raise_then_irq_exit;
	tx->hook_arg = &n;

	sirq_raise(h.cpu, SIRQ_NET_TX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(int, n.irq_exit_ret, SIRQ_IRQ_EXIT_BH_DISABLED));
	cr_assert(eq(uint, n.log_len_after_enable, 1));
	cr_assert(eq(uint, h.nlog, 2));
	harness_fini(&h);
}

static void
enable_without_disable(struct probe *p)
{
	struct nested_bh *n = p->hook_arg;

	n->enable_ret = sirq_bh_enable(p->h->cpu);
}

Test(bh, enable_inside_a_handler_without_disable_returns_eperm)
{
	struct nested_bh n = { .enable_ret = 0 };
	struct harness h;
	struct probe *tx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tx = probe_register(&h, SIRQ_NET_TX);
	tx->hook = enable_without_disable;
	tx->hook_arg = &n;

	sirq_raise(h.cpu, SIRQ_NET_TX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(int, n.enable_ret, -EPERM));
	harness_fini(&h);
}

Test(bh, unmatched_enable_inside_a_handler_leaves_bh_disable_working)
{
	struct nested_bh n = { .enable_ret = 0 };
	struct harness h;
	struct probe *tx, *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tx = probe_register(&h, SIRQ_NET_TX);
	rx = probe_register(&h, SIRQ_NET_RX);
	tx->hook = enable_without_disable;
	tx->hook_arg = &n;
	sirq_raise(h.cpu, SIRQ_NET_TX);
	sirq_irq_exit(h.cpu);

	sirq_bh_disable(h.cpu);
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	harness_fini(&h);
}

/*
 * Only a CPU's own tasks take its bottom halves. A thread on another CPU
 * while the CPU runs (ops.remote_caller: -EXDEV) gets nothing, and the
 * dispatcher runs on as if it had not asked.
 */
Test(bh, another_cpus_thread_is_refused_while_the_cpu_runs)
{
	struct sirq_params p;
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	h.remote_caller = -EXDEV;

	cr_assert(eq(int, sirq_bh_disable(h.cpu), -EXDEV));
	cr_assert(eq(int, sirq_bh_enable(h.cpu), -EPERM), "nothing to enable");
	p = harness_params(SIRQ_POLICY_KSOFTIRQD);
	cr_assert(eq(int, sirq_cpu_set_params(h.cpu, &p), -EXDEV));
	cr_assert(eq(int, sirq_cpu_conf(h.cpu)->params.policy,
		     SIRQ_POLICY_MAINLINE), "changed all the same");
	cr_assert(eq(u64, stats(&h)->remote_refused, 2));

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u64, stats(&h)->remote_hold.samples, 0));
	harness_fini(&h);
}

/*
 * A thread on another CPU that took the lock while the CPU was not
 * running (ops.remote_caller: 1) and keeps it: the dispatcher's looks
 * find the lock busy from 0 ms, at 3 ms and 5 ms, and get it at 5 ms
 * once the thread let go. remote_hold records one episode of exactly
 * 5 ms; a holder of the CPU's own records none.
 */
Test(bh, a_remote_holder_is_counted_from_the_first_busy_look_to_the_lock_at_5ms)
{
	struct bh_thread bt = { .disable = true };
	struct harness h;
	pthread_t thr;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);
	h.remote_caller = 1;
	bt.cpu = h.cpu;
	cr_assert(eq(int, pthread_create(&thr, NULL, bh_thread_main, &bt), 0));
	cr_assert(wait_flag(&bt.held, SEC(10)));
	h.remote_caller = 0;

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_BUSY));
	clock_advance(&h, MS(3));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_BUSY));
	clock_advance(&h, MS(2));
	__atomic_store_n(&bt.release, 1, __ATOMIC_RELEASE);
	cr_assert(eq(int, pthread_join(thr, NULL), 0));
	cr_assert(eq(int, bt.enable_ret, 0));
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));

	stats(&h);
	cr_assert(eq(u64, h.st.remote_hold.samples, 1));
	cr_assert(eq(u64, h.st.remote_hold.max_ns, MS(5)));
	cr_assert(eq(u64, h.st.remote_hold.sum_ns, MS(5)));
	cr_assert(eq(u64, h.st.remote_refused, 0));

	/* The CPU's own holder: busy, not counted. */
	bt = (struct bh_thread){ .disable = true, .cpu = h.cpu };
	cr_assert(eq(int, pthread_create(&thr, NULL, bh_thread_main, &bt), 0));
	cr_assert(wait_flag(&bt.held, SEC(10)));
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_BUSY));
	clock_advance(&h, MS(20));
	__atomic_store_n(&bt.release, 1, __ATOMIC_RELEASE);
	cr_assert(eq(int, pthread_join(thr, NULL), 0));
	sirq_irq_exit(h.cpu);
	cr_assert(eq(u64, stats(&h)->remote_hold.samples, 1));
	cr_assert(eq(u64, h.st.remote_hold.max_ns, MS(5)));
	harness_fini(&h);
}
