/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What the scheduler is told of a softirq thread beyond a class and a
 * priority (sirq_lcore_thread_attr()), on real threads of the pushdown:
 * ranges refused with their reason; an EEVDF slice read back from the
 * kernel at the thread's start and when changed; a SCHED_DEADLINE
 * reservation that the kernel throttles at its runtime; the kernel's
 * refusals (EPERM: a pinned thread while kernel.sched_rt_runtime_us >= 0;
 * EBUSY: a reservation beyond the deadline bandwidth) failing the launch;
 * a priority loan given back with the slice kept. The tests that need
 * kernel.sched_rt_runtime_us set it and restore it (.fini).
 */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_launch.h>
#include <rte_lcore.h>

#include "eal_harness.h"

#define VEC_A SIRQ_NR_KERNEL_VECTORS	/* holds the BH lock, spinning */
#define HOLD_MS 300
#define WAIT_MS 5000
#define RT_RUNTIME "/proc/sys/kernel/sched_rt_runtime_us"

/* <linux/sched/types.h>'s first version: glibc has no wrapper. */
struct attr_v0 {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

static struct attr_v0
attr_of(pid_t tid)
{
	struct attr_v0 a;

	memset(&a, 0, sizeof(a));
	cr_assert_eq(syscall(SYS_sched_getattr, tid, &a, sizeof(a), 0), 0,
		     "sched_getattr(%d): %s", (int)tid, strerror(errno));
	return a;
}

/*
 * No thread named @name, within WAIT_MS: a joined thread's /proc entry
 * may outlive pthread_join() by a moment (the TID futex is cleared
 * before the task is released).
 */
static bool
thread_gone(const char *name)
{
	for (int i = 0; i < WAIT_MS / 10; i++) {
		if (thread_tid_named(name) == 0)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

/* The TID of the thread named @name, waiting up to WAIT_MS for it. */
static pid_t
thread_tid(const char *name)
{
	for (int i = 0; i < WAIT_MS / 10; i++) {
		pid_t tid = thread_tid_named(name);

		if (tid != 0)
			return tid;
		usleep(10 * 1000);
	}
	return 0;
}

/* Nanoseconds thread @tid has run (schedstat's first field). */
static uint64_t
thread_ran_ns(pid_t tid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	f = fopen(path, "r");
	cr_assert(f != NULL, "%s: %s", path, strerror(errno));
	cr_assert_eq(fscanf(f, "%llu", &ns), 1);
	fclose(f);
	return ns;
}

/* kernel.sched_rt_runtime_us, saved by the first set and put back. */
static long rt_runtime_saved = LONG_MIN;

static long
rt_runtime_get(void)
{
	long v = 0;
	FILE *f = fopen(RT_RUNTIME, "r");

	cr_assert(f != NULL, RT_RUNTIME ": %s", strerror(errno));
	cr_assert_eq(fscanf(f, "%ld", &v), 1);
	fclose(f);
	return v;
}

/* 0, or the errno of the write (the kernel may refuse a value). */
static int
rt_runtime_write(long v)
{
	FILE *f = fopen(RT_RUNTIME, "w");
	int ret = 0;

	if (f == NULL)
		return errno;
	if (fprintf(f, "%ld\n", v) < 0)
		ret = errno;
	if (fclose(f) != 0 && ret == 0)
		ret = errno;
	return ret;
}

static void
rt_runtime_set(long v)
{
	int ret;

	if (rt_runtime_saved == LONG_MIN)
		rt_runtime_saved = rt_runtime_get();
	ret = rt_runtime_write(v);
	if (ret == EACCES || ret == EROFS || ret == EPERM)
		cr_skip_test("cannot write " RT_RUNTIME ": %s", strerror(ret));
	cr_assert_eq(ret, 0, "%s = %ld: %s", RT_RUNTIME, v, strerror(ret));
	cr_log_info("%s = %ld (was %ld)", RT_RUNTIME, v, rt_runtime_saved);
}

static void
rt_runtime_restore(void)
{
	if (rt_runtime_saved != LONG_MIN)
		rt_runtime_write(rt_runtime_saved);
}

static struct sirq_lcore *
pushdown_lcore(const char *const *vdevs, const char *worker_cpus)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	eal_start(vdevs);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = SIRQ_POLICY_PUSHDOWN;
	conf.worker_cpus = worker_cpus;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	return lc;
}

/*
 * A kernel before 6.12 takes a fair task's slice and ignores it: tried on
 * this thread, then its default slice back.
 */
static void
skip_without_slices(void)
{
	struct attr_v0 a = {
		.size = sizeof(a), .sched_policy = SCHED_OTHER,
		.sched_runtime = 300000,
	};
	bool has;

	cr_assert_eq(syscall(SYS_sched_setattr, 0, &a, 0), 0, "%s", strerror(errno));
	has = attr_of(0).sched_runtime == 300000;
	a.sched_runtime = 0;
	cr_assert_eq(syscall(SYS_sched_setattr, 0, &a, 0), 0, "%s", strerror(errno));
	if (!has)
		cr_skip_test("this kernel ignores a fair task's slice (6.12 or later has one)");
}

/* --- ranges ---------------------------------------------------------- */

struct bad_attr {
	struct sirq_thread_attr a;
	char why[80];			/* the start of sirq_thread_attr_check()'s */
};

Test(lcore_thread_attr, out_of_range_attributes_are_refused_with_their_reason,
     .timeout = 60)
{
	const struct bad_attr bad[] = {
		{ { .policy = 42 }, "scheduling class 42 is not" },
		{ { .policy = SCHED_OTHER, .slice_us = 99 }, "slice 99 us: thread_slice_us must be in 100..100000 us (100 us..100 ms)" },
		{ { .policy = SCHED_OTHER, .slice_us = 100001 }, "slice 100001 us: thread_slice_us must be in 100..100000 us" },
		{ { .policy = SCHED_OTHER, .priority = 3 }, "a fair class takes a slice only" },
		{ { .policy = -1, .slice_us = 200 }, "the default class (-1) takes nothing" },
		{ { .policy = SCHED_FIFO }, "priority 0 out of range (1..99" },
		{ { .policy = SCHED_RR, .priority = 100 }, "priority 100 out of range (1..99" },
		{ { .policy = SCHED_FIFO, .priority = 5, .slice_us = 200 }, "a real-time class takes a priority only" },
		{ { .policy = SCHED_DEADLINE, .period_us = 4000 }, "runtime 0 us: thread_runtime_us must be in 1..4194304 us" },
		{ { .policy = SCHED_DEADLINE, .runtime_us = 5000, .period_us = 4000 }, "runtime 5000 us longer than the period 4000 us" },
		{ { .policy = SCHED_DEADLINE, .runtime_us = 500, .period_us = 4000, .deadline_us = 400 }, "deadline 400 us out of range (runtime 500..period 4000 us)" },
		{ { .policy = SCHED_DEADLINE, .runtime_us = 500, .period_us = 4000, .deadline_us = 4001 }, "deadline 4001 us out of range" },
		{ { .policy = SCHED_DEADLINE, .runtime_us = 500, .period_us = 4000, .priority = 1 }, "SCHED_DEADLINE takes a runtime" },
	};
	const struct sirq_thread_attr good[] = {
		{ .policy = -1 },
		{ .policy = SCHED_OTHER },
		{ .policy = SCHED_OTHER, .slice_us = 100 },
		{ .policy = SCHED_OTHER, .slice_us = 100000 },
		{ .policy = SCHED_RR, .priority = 99 },
		{ .policy = SCHED_DEADLINE, .runtime_us = 1, .period_us = 4000 },
		{ .policy = SCHED_DEADLINE, .runtime_us = 500, .period_us = 4000, .deadline_us = 500 },
		{ .policy = SCHED_DEADLINE, .runtime_us = 4000, .period_us = 4000, .deadline_us = 4000 },
	};
	struct sirq_thread_attr a = { .policy = SCHED_DEADLINE, .runtime_us = 1 };
	struct sirq_lcore *lc = pushdown_lcore(NULL, NULL);
	unsigned long pmin = 0, pmax = 0;
	char why[256], want[160];
	FILE *f;

	for (size_t i = 0; i < RTE_DIM(bad); i++) {
		cr_expect_eq(sirq_thread_attr_check(&bad[i].a, why, sizeof(why)), -EINVAL,
			     "case %zu taken", i);
		cr_expect(strncmp(why, bad[i].why, strlen(bad[i].why)) == 0,
			  "case %zu: '%s', not '%s...'", i, why, bad[i].why);
		cr_expect_eq(sirq_lcore_thread_attr(lc, SIRQ_NET_RX, &bad[i].a), -EINVAL,
			     "case %zu taken by the lcore", i);
	}
	for (size_t i = 0; i < RTE_DIM(good); i++)
		cr_expect_eq(sirq_thread_attr_check(&good[i], why, sizeof(why)), 0,
			     "good case %zu refused: %s", i, why);

	/* The period's range is the kernel's, read from /proc. */
	f = fopen("/proc/sys/kernel/sched_deadline_period_min_us", "r");
	cr_assert(f != NULL);
	cr_assert_eq(fscanf(f, "%lu", &pmin), 1);
	fclose(f);
	f = fopen("/proc/sys/kernel/sched_deadline_period_max_us", "r");
	cr_assert(f != NULL);
	cr_assert_eq(fscanf(f, "%lu", &pmax), 1);
	fclose(f);
	/* The table's words where the kernel has its defaults. */
	if (pmin == sirq_param_range("thread_period_us")->min &&
	    pmax == sirq_param_range("thread_period_us")->max)
		snprintf(want, sizeof(want), "period %lu us: %s", pmin - 1,
			 sirq_param_range("thread_period_us")->why);
	else
		snprintf(want, sizeof(want), "period %lu us out of range (%lu..%lu us",
			 pmin - 1, pmin, pmax);
	a.period_us = (uint32_t)(pmin - 1);
	cr_expect_eq(sirq_thread_attr_check(&a, why, sizeof(why)), -EINVAL);
	cr_expect(strncmp(why, want, strlen(want)) == 0, "'%s', not '%s...'", why, want);
	a.period_us = (uint32_t)pmin;
	cr_expect_eq(sirq_thread_attr_check(&a, why, sizeof(why)), 0, "%s", why);
	if (pmax < UINT32_MAX) {
		a.period_us = (uint32_t)(pmax + 1);
		cr_expect_eq(sirq_thread_attr_check(&a, why, sizeof(why)), -EINVAL);
	}

	cr_expect_eq(sirq_lcore_thread_attr(NULL, SIRQ_NET_RX, &good[1]), -EINVAL);
	cr_expect_eq(sirq_lcore_thread_attr(lc, SIRQ_MAX_VECTORS, &good[1]), -EINVAL);
	cr_expect_eq(sirq_lcore_thread_attr(lc, SIRQ_NET_RX, NULL), -EINVAL);
	cr_expect_eq(sirq_thread_attr_check(NULL, why, sizeof(why)), -EINVAL);
	cr_expect_eq(sirq_lcore_thread_sched(lc, SIRQ_NET_RX, SCHED_DEADLINE, 0), -EINVAL);
	sirq_lcore_free(lc);
}

/* --- a slice ----------------------------------------------------------- */

Test(lcore_thread_attr, a_slice_is_read_back_at_the_start_and_when_changed,
     .timeout = 60)
{
	const struct sirq_thread_attr s300 = { .policy = SCHED_OTHER, .slice_us = 300 };
	const struct sirq_thread_attr s1500 = { .policy = SCHED_OTHER, .slice_us = 1500 };
	const struct sirq_thread_attr fifo3 = { .policy = SCHED_FIFO, .priority = 3 };
	const struct sirq_thread_attr s200 = { .policy = SCHED_OTHER, .slice_us = 200 };
	struct sirq_lcore *lc = pushdown_lcore(NULL, NULL);
	struct attr_v0 k;
	pid_t tid;

	skip_without_slices();
	/* Stored before the start: taken by the thread itself. */
	cr_assert_eq(sirq_lcore_thread_attr(lc, SIRQ_NET_RX, &s300), 0);
	dispatcher_launch(lc);
	tid = thread_tid("sirq-net_rx/1");
	cr_assert(tid != 0, "no sirq-net_rx/1");
	k = attr_of(tid);
	cr_expect_eq(k.sched_policy, SCHED_OTHER);
	cr_expect_eq(k.sched_runtime, 300000, "slice %lu ns",
		     (unsigned long)k.sched_runtime);

	/* A running thread, moved and read back. */
	cr_assert_eq(sirq_lcore_thread_attr(lc, SIRQ_NET_RX, &s1500), 0);
	k = attr_of(tid);
	cr_expect_eq(k.sched_policy, SCHED_OTHER);
	cr_expect_eq(k.sched_runtime, 1500000, "slice %lu ns",
		     (unsigned long)k.sched_runtime);
	cr_assert_eq(sirq_lcore_thread_attr(lc, SIRQ_NET_RX, &fifo3), 0);
	k = attr_of(tid);
	cr_expect_eq(k.sched_policy, SCHED_FIFO);
	cr_expect_eq(k.sched_priority, 3);
	cr_assert_eq(sirq_lcore_thread_attr(lc, SIRQ_NET_RX, &s200), 0);
	k = attr_of(tid);
	cr_expect_eq(k.sched_policy, SCHED_OTHER);
	cr_expect_eq(k.sched_runtime, 200000, "slice %lu ns",
		     (unsigned long)k.sched_runtime);
	dispatcher_join(lc);

	/* The next start takes the last setting. */
	dispatcher_launch(lc);
	tid = thread_tid("sirq-net_rx/1");
	cr_assert(tid != 0, "no sirq-net_rx/1 after a relaunch");
	k = attr_of(tid);
	cr_expect_eq(k.sched_runtime, 200000, "slice %lu ns after a relaunch",
		     (unsigned long)k.sched_runtime);
	dispatcher_join(lc);
	sirq_lcore_free(lc);
}

/* --- a loan ------------------------------------------------------------ */

static struct lock_hold hold_a = { .ms = HOLD_MS };


static int bh_ret = -1;

/* A SCHED_FIFO thread on the lcore's CPU that wants the BH lock. */
static void *
fifo_bh_section(void *arg)
{
	struct sirq_cpu *cpu = arg;

	bh_ret = sirq_bh_disable(cpu);
	if (bh_ret == 0)
		sirq_bh_enable(cpu);
	return NULL;
}

/*
 * Vector a's thread holds the BH lock for HOLD_MS; meanwhile a SCHED_FIFO 5
 * thread on the lcore's CPU takes a bottom-half section. 0, or
 * pthread_create()'s error (EPERM: no real-time class here).
 */
static int
fifo_waits_for_a(struct sirq_cpu *cpu)
{
	struct sched_param sp = { .sched_priority = 5 };
	pthread_attr_t pa;
	rte_cpuset_t cpus;
	pthread_t t;
	int ret;

	sirq_raise(cpu, VEC_A);
	for (int i = 0; i < WAIT_MS && !__atomic_load_n(&hold_a.holding, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	cr_assert(__atomic_load_n(&hold_a.holding, __ATOMIC_SEQ_CST), "a never ran");
	CPU_ZERO(&cpus);
	CPU_SET(rte_lcore_to_cpu_id(TEST_LCORE), &cpus);
	pthread_attr_init(&pa);
	pthread_attr_setinheritsched(&pa, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&pa, SCHED_FIFO);
	pthread_attr_setschedparam(&pa, &sp);
	pthread_attr_setaffinity_np(&pa, sizeof(cpus), &cpus);
	ret = pthread_create(&t, &pa, fifo_bh_section, cpu);
	pthread_attr_destroy(&pa);
	if (ret != 0)
		return ret;
	pthread_join(t, NULL);
	cr_expect_eq(bh_ret, 0, "sirq_bh_disable(): %s", strerror(-bh_ret));
	cr_assert(wait_for(&hold_a.runs, 1, WAIT_MS));
	return 0;
}

Test(lcore_thread_attr, a_loan_is_given_back_with_the_slice_kept,
     .timeout = 60)
{
	const struct sirq_thread_attr s300 = { .policy = SCHED_OTHER, .slice_us = 300 };
	struct sirq_lcore *lc = pushdown_lcore(NULL, NULL);
	struct sirq_cpu *cpu = sirq_lcore_cpu(lc);
	struct sirq_lcore_stats st;
	struct attr_v0 k;
	pid_t tid;
	int ret;

	skip_without_slices();
	cr_assert_eq(sirq_register(cpu, VEC_A, hold_lock, &hold_a, "a"), 0);
	cr_assert_eq(sirq_lcore_thread_attr(lc, VEC_A, &s300), 0);
	dispatcher_launch(lc);
	tid = thread_tid("sirq-a/1");
	cr_assert(tid != 0, "no thread for vector a");
	cr_expect_eq(attr_of(tid).sched_runtime, 300000);
	ret = fifo_waits_for_a(cpu);
	if (ret == EPERM) {
		dispatcher_join(lc);
		cr_skip_test("SCHED_FIFO not permitted here");
	}
	cr_assert_eq(ret, 0, "pthread_create: %s", strerror(ret));
	sirq_lcore_stats_get(lc, &st);
	cr_expect_gt(st.worker_pi_boosts, 0, "no loan made");
	/* Given back after the run that held the lock: wait for it. */
	for (int i = 0; i < WAIT_MS / 10 && attr_of(tid).sched_policy != SCHED_OTHER; i++)
		usleep(10 * 1000);
	k = attr_of(tid);
	cr_expect_eq(k.sched_policy, SCHED_OTHER, "still class %u", k.sched_policy);
	cr_expect_eq(k.sched_runtime, 300000, "slice %lu ns after the loan, not 300 us",
		     (unsigned long)k.sched_runtime);
	cr_log_info("%lu loan(s); after them class %u, slice %lu ns",
		    (unsigned long)st.worker_pi_boosts, k.sched_policy,
		    (unsigned long)k.sched_runtime);
	dispatcher_join(lc);
	sirq_lcore_free(lc);
}

/*
 * A reservation outranks every real-time priority: a SCHED_FIFO waiter
 * lends a deadline holder nothing, and the reservation stays.
 */
Test(lcore_thread_attr, a_deadline_holder_is_lent_nothing_and_keeps_its_reservation,
     .fini = rt_runtime_restore, .timeout = 60)
{
	const struct sirq_thread_attr dl = {
		.policy = SCHED_DEADLINE, .runtime_us = 2000, .period_us = 4000,
	};
	struct sirq_lcore *lc;
	struct sirq_cpu *cpu;
	struct sirq_lcore_stats st;
	struct attr_v0 k;
	pid_t tid;

	rt_runtime_set(-1);
	lc = pushdown_lcore(NULL, NULL);
	cpu = sirq_lcore_cpu(lc);
	cr_assert_eq(sirq_register(cpu, VEC_A, hold_lock, &hold_a, "a"), 0);
	cr_assert_eq(sirq_lcore_thread_attr(lc, VEC_A, &dl), 0);
	dispatcher_launch(lc);
	tid = thread_tid("sirq-a/1");
	cr_assert(tid != 0, "no thread for vector a");
	cr_assert_eq(fifo_waits_for_a(cpu), 0, "no SCHED_FIFO thread");
	sirq_lcore_stats_get(lc, &st);
	cr_expect_eq(st.worker_pi_boosts, 0, "%lu loan(s) to a deadline thread",
		     (unsigned long)st.worker_pi_boosts);
	k = attr_of(tid);
	cr_expect_eq(k.sched_policy, SCHED_DEADLINE, "class %u", k.sched_policy);
	cr_expect_eq(k.sched_runtime, 2000000);
	cr_expect_eq(k.sched_period, 4000000);
	dispatcher_join(lc);
	sirq_lcore_free(lc);
}

/* --- a reservation ----------------------------------------------------- */

static uint64_t received;

Test(lcore_thread_attr, a_deadline_thread_is_throttled_at_its_runtime,
     .fini = rt_runtime_restore, .timeout = 60)
{
	static const char *const vdevs[] = { "net_null0", NULL };
	const struct sirq_thread_attr dl = {
		.policy = SCHED_DEADLINE, .runtime_us = 500, .period_us = 4000,
	};
	struct sirq_lcore *lc;
	uint64_t ran0, ran1, t0, t1;
	struct attr_v0 k;
	double share;
	pid_t tid;

	/* A pinned deadline thread: no admission control. */
	rt_runtime_set(-1);
	lc = pushdown_lcore(vdevs, NULL);
	port_start(0, 1, false);
	cr_assert_eq(sirq_lcore_add_rx_queue(lc, 0, 0, rx_free_all, &received), 0);
	cr_assert_eq(sirq_lcore_thread_attr(lc, SIRQ_NET_RX, &dl), 0);
	dispatcher_launch(lc);
	tid = thread_tid("sirq-net_rx/1");
	cr_assert(tid != 0, "no sirq-net_rx/1");
	k = attr_of(tid);
	cr_expect_eq(k.sched_policy, SCHED_DEADLINE);
	cr_expect_eq(k.sched_runtime, 500000);
	cr_expect_eq(k.sched_period, 4000000);
	cr_expect_eq(k.sched_deadline, 4000000, "deadline 0 means the period");
	cr_assert(wait_for(&received, 100000, WAIT_MS), "the flood never came");

	/* Its share of the flood: at most runtime / period, the kernel's. */
	ran0 = thread_ran_ns(tid);
	t0 = now_ns();
	usleep(1000 * 1000);
	ran1 = thread_ran_ns(tid);
	t1 = now_ns();
	share = (double)(ran1 - ran0) / (double)(t1 - t0);
	cr_log_info("sirq-net_rx/1 at deadline:500/4000 ran %.1f ms of %.1f ms (%.1f %%), %lu packets",
		    (ran1 - ran0) / 1e6, (t1 - t0) / 1e6, 100 * share,
		    (unsigned long)__atomic_load_n(&received, __ATOMIC_RELAXED));
	cr_expect_gt(ran1, ran0, "the thread never ran");
	/* 12.5 %, plus one period's runtime of slack at the window's edges. */
	cr_expect_leq(share, 0.125 + 0.0005 * 2 / ((t1 - t0) / 1e9) + 0.01,
		      "%.1f %% of the CPU past a 12.5 %% reservation", 100 * share);
	dispatcher_join(lc);
	sirq_lcore_free(lc);
}

Test(lcore_thread_attr, a_pinned_deadline_thread_fails_the_launch_with_eperm,
     .fini = rt_runtime_restore, .timeout = 60)
{
	const struct sirq_thread_attr dl = {
		.policy = SCHED_DEADLINE, .runtime_us = 500, .period_us = 4000,
	};
	struct sirq_lcore *lc;
	int ret;

	/* Admission control on: the root domain rule applies. */
	rt_runtime_set(950000);
	lc = pushdown_lcore(NULL, NULL);
	cr_assert_eq(sirq_lcore_thread_attr(lc, SIRQ_NET_RX, &dl), 0, "stored");
	cr_assert_eq(rte_eal_remote_launch(sirq_lcore_main, lc, TEST_LCORE), 0);
	ret = rte_eal_wait_lcore(TEST_LCORE);
	cr_expect_eq(ret, -EPERM, "launch: %d (%s), not -EPERM", ret, strerror(-ret));
	cr_expect(thread_gone("sirq-net_rx/1"), "the thread runs anyway");
	sirq_lcore_free(lc);
}

static void
noop(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
}

Test(lcore_thread_attr, reservations_beyond_the_bandwidth_fail_with_ebusy,
     .fini = rt_runtime_restore, .timeout = 60)
{
	/* Each a whole CPU: one more of them than there are CPUs. */
	const struct sirq_thread_attr dl = {
		.policy = SCHED_DEADLINE, .runtime_us = 1000, .period_us = 1000,
	};
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	struct sirq_lcore *lc;
	struct sirq_cpu *cpu;
	char cpus[32], name[8];
	int ret;

	if (n + 1 > SIRQ_MAX_VECTORS - SIRQ_NR_KERNEL_VECTORS)
		cr_skip_test("%ld CPUs: more than one vector each", n);
	/*
	 * Admission control on (95 % of each CPU for real-time and deadline
	 * tasks), the threads free to run on every CPU so that the root
	 * domain rule holds: what is left is the bandwidth.
	 */
	rt_runtime_set(950000);
	snprintf(cpus, sizeof(cpus), "0-%ld", n - 1);
	lc = pushdown_lcore(NULL, cpus);
	cpu = sirq_lcore_cpu(lc);
	for (long i = 0; i <= n; i++) {
		unsigned int vec = VEC_A + (unsigned int)i;

		snprintf(name, sizeof(name), "dl%ld", i);
		cr_assert_eq(sirq_register(cpu, vec, noop, NULL, name), 0);
		cr_assert_eq(sirq_lcore_thread_attr(lc, vec, &dl), 0, "stored");
	}
	cr_assert_eq(rte_eal_remote_launch(sirq_lcore_main, lc, TEST_LCORE), 0);
	ret = rte_eal_wait_lcore(TEST_LCORE);
	cr_expect_eq(ret, -EBUSY, "launch: %d (%s), not -EBUSY", ret, strerror(-ret));
	cr_log_info("%ld reservations of a whole CPU on %ld CPUs: launch %s",
		    n + 1, n, strerror(-ret));
	sirq_lcore_free(lc);
}
