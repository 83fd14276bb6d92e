/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * No thread on another CPU can stop an lcore.
 *
 * The user's program: a control thread on CPU 0 at nice 19, beside a
 * nice-0 busy loop on CPU 0, takes lcore 1's bottom halves every 10 ms
 * for a ~20 us table update while lcore 1 forwards a net_null flood.
 * When such a thread could wait for or hold the execution lock, lcore 1
 * forwarded nothing for 4.0 s under pushdown (the waiter runnable, not
 * running) and 239-337 ms under the policies. Now its sirq_bh_disable()
 * is refused (-EXDEV) and it does the update through the remote call,
 * which the lcore runs between two handlers.
 *
 * The bound is asserted on the library's counter, not on wall-clock
 * time: stats.remote_hold, the time the lcore's work waited behind a
 * lock held or reserved by another CPU's thread, at most 10 ms at a
 * time, under every policy and model, in poll and in irq mode. The
 * longest wall-clock gap between two NET_RX runs is logged beside a
 * baseline run without the control thread (docs/reliability.md).
 *
 * A second case stops the control thread (ptrace's group-stop of that
 * one thread, as SIGSTOP stops a process) for 100 ms where it would hold
 * the lock, then again with its remote call queued: the lcore goes on,
 * and the call runs while its caller is stopped.
 *
 * REMOTE_SECONDS (default 1) lengthens each run.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "eal_harness.h"
#include "sirq.h"
#include "sirq_private.h"

#define CONTROL_CPU 0
#define PERIOD_MS 10
#define SECTION_US 20
#define STOP_MS 100
/* The bound: the lcore waits for another CPU 10 ms at a time at most. */
#define REMOTE_HOLD_MAX_NS (10 * 1000000ULL)
#define TABLE_SIZE 256

/* What the control thread updates: read by the lcore's Rx function. */
struct table {
	uint64_t generation;
	uint16_t port_of[TABLE_SIZE];
};

struct run {
	struct sirq_lcore *lc;
	struct table table;
	uint64_t stop_ns;
	/* The control thread's tries and what became of them. */
	uint64_t tries;
	uint64_t sections;	/* sirq_bh_disable() gave it the lock */
	uint64_t refused;	/* -EXDEV */
	uint64_t calls_done;	/* updates through sirq_lcore_call() */
	uint64_t call_errors;
	/* The stop case: where the thread is, and the tracer's handshake. */
	int tid;
	uint32_t at_stop_point;	/* 1: after sirq_bh_disable(); 2: call queued */
	uint32_t resume;
	bool stop_case;
	/* The lcore's side. */
	uint64_t packets;
	uint64_t last_rx_tsc;
	uint64_t max_gap_tsc;
	uint32_t busy_stop;
};

static uint64_t
tsc_to_us(uint64_t tsc)
{
	return tsc * 1000000ULL / rte_get_tsc_hz();
}

/* NET_RX's receive function: the table read, the gap since the last run. */
static void
rx_read_table(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	      struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct run *r = arg;
	uint64_t now = rte_rdtsc();
	uint16_t i;

	(void)lc;
	(void)port;
	(void)queue;
	if (r->last_rx_tsc != 0 && now - r->last_rx_tsc > r->max_gap_tsc)
		r->max_gap_tsc = now - r->last_rx_tsc;
	r->last_rx_tsc = now;
	for (i = 0; i < n; i++)
		pkts[i]->port = r->table.port_of[pkts[i]->pkt_len % TABLE_SIZE];
	rte_pktmbuf_free_bulk(pkts, n);
	r->packets += n;
}

/* ~20 us of work on the table, as the user's update did. */
static void
update_table(struct table *t)
{
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() * SECTION_US / 1000000;
	unsigned int i;

	t->generation++;
	do {
		for (i = 0; i < TABLE_SIZE; i++)
			t->port_of[i] = (uint16_t)((t->generation + i) & 1);
	} while (rte_rdtsc() < end);
}

static int
update_on_lcore(struct sirq_lcore *lc, void *arg)
{
	struct run *r = arg;

	(void)lc;
	update_table(&r->table);
	return 0;
}

static void
pin_self(unsigned int cpu, int nice)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	cr_assert(pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0);
	cr_assert(setpriority(PRIO_PROCESS, (id_t)gettid(), nice) == 0);
}

static void *
busy_loop(void *arg)
{
	struct run *r = arg;

	pin_self(CONTROL_CPU, 0);
	while (!__atomic_load_n(&r->busy_stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/* Where a stopped thread is held: the tracer releases it. */
static void
stop_point(struct run *r, uint32_t where)
{
	if (!r->stop_case)
		return;
	__atomic_store_n(&r->at_stop_point, where, __ATOMIC_RELEASE);
	while (__atomic_load_n(&r->resume, __ATOMIC_ACQUIRE) != where)
		sched_yield();
}

/*
 * The user's control thread, as they wrote it: bottom halves off around
 * the update; refused, the same update through the remote call, in its
 * waiting form and in its returning form by turns.
 */
static void *
control(void *arg)
{
	struct run *r = arg;
	struct sirq_cpu *cpu = sirq_lcore_cpu(r->lc);
	struct timespec period = { 0, PERIOD_MS * 1000000L };
	struct sirq_call c;
	int ret;

	pin_self(CONTROL_CPU, 19);
	__atomic_store_n(&r->tid, (int)gettid(), __ATOMIC_RELEASE);
	while (now_ns() < r->stop_ns) {
		r->tries++;
		ret = sirq_bh_disable(cpu);
		stop_point(r, 1);
		if (ret == 0) {
			r->sections++;
			update_table(&r->table);
			sirq_bh_enable(cpu);
		} else if (ret == -EXDEV && (r->tries & 1) == 0 && !r->stop_case) {
			/* Every other update, the waiting form. */
			r->refused++;
			ret = sirq_lcore_call(r->lc, update_on_lcore, r);
			if (ret == 0)
				r->calls_done++;
			else
				r->call_errors++;
		} else if (ret == -EXDEV) {
			r->refused++;
			ret = sirq_lcore_call_async(r->lc, &c, update_on_lcore, r);
			if (ret == 0) {
				stop_point(r, 2);
				ret = sirq_call_wait(&c);
			}
			if (ret == 0)
				r->calls_done++;
			else
				r->call_errors++;
		}
		if (r->stop_case && r->tries == 1)
			break;
		nanosleep(&period, NULL);
	}
	return NULL;
}

/*
 * Stop thread @tid of this process where it is, as SIGSTOP stops a
 * process: a tracer seizes it with ptrace and interrupts it (the thread
 * alone enters a stop), keeps it stopped STOP_MS at least and until the
 * test has seen what it waits for (release), then lets it go. The
 * tracer is another process (ptrace refuses a thread of one's own) that
 * shares this one's memory (CLONE_VM): a fork() would mark every page
 * copy-on-write, and the lcore's first writes after it fault, a 100 ms
 * gap of their own.
 */
struct tracer {
	int tid;
	uint32_t stopped;		/* the thread is in its stop */
	uint32_t release;		/* the test is done looking */
	pid_t pid;
};

#define TRACER_STACK (64 * 1024)
#define TRACER_MAX_MS 10000

static int
tracer_main(void *arg)
{
	struct tracer *t = arg;
	struct timespec ms = { 0, 1000000L };
	unsigned int waited;
	int status;

	if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL) != 0 ||
	    ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) != 0 ||
	    waitpid(t->tid, &status, __WALL) != t->tid)
		return 1;
	__atomic_store_n(&t->stopped, 1, __ATOMIC_RELEASE);
	for (waited = 0; waited < TRACER_MAX_MS; waited++) {
		if (waited >= STOP_MS &&
		    __atomic_load_n(&t->release, __ATOMIC_ACQUIRE))
			break;
		nanosleep(&ms, NULL);
	}
	return ptrace(PTRACE_DETACH, t->tid, NULL, NULL) == 0 ? 0 : 2;
}

static void
stop_thread(struct tracer *t, int tid)
{
	static char stack[TRACER_STACK] __attribute__((aligned(16)));
	uint64_t end = now_ns() + TRACER_MAX_MS * 1000000ULL;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = clone(tracer_main, stack + sizeof(stack), CLONE_VM | SIGCHLD, t);
	cr_assert(t->pid > 0, "clone: %s", strerror(errno));
	while (!__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE)) {
		cr_assert(now_ns() < end, "the tracer never stopped thread %d", tid);
		usleep(100);
	}
}

static void
resume_thread(struct tracer *t)
{
	int status;

	__atomic_store_n(&t->release, 1, __ATOMIC_RELEASE);
	cr_assert(waitpid(t->pid, &status, 0) == t->pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the tracer could not stop and release thread %d (exit %d)",
		  t->tid, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/*
 * While the thread is stopped: until @counter passes @above, at most
 * TRACER_MAX_MS (the tracer lets the thread go then). True if it did.
 */
static bool
seen_while_stopped(const struct tracer *t, const uint64_t *counter,
		   uint64_t above)
{
	while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) <= above) {
		if (__atomic_load_n(&t->release, __ATOMIC_RELAXED) ||
		    kill(t->pid, 0) != 0)
			return false;
		usleep(100);
	}
	return true;
}

static unsigned int
run_seconds(void)
{
	const char *s = getenv("REMOTE_SECONDS");
	int v = s != NULL ? atoi(s) : 0;

	return v > 0 ? (unsigned int)v : 1;
}

struct mode_case {
	enum sirq_policy_id policy;
	enum sirq_mode mode;
};

static struct run run;

static struct sirq_lcore *
flood_lcore(const struct mode_case *mc)
{
	static const char *const vdevs[] = { "net_null0", NULL };
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	eal_start(vdevs);
	port_start(0, 1, false);
	sirq_lcore_conf_default(&conf);
	conf.mode = mc->mode;
	conf.params.policy = mc->policy;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_lcore_add_rx_queue(lc, 0, 0, rx_read_table, &run) == 0);
	memset(&run, 0, sizeof(run));
	run.lc = lc;
	return lc;
}

static const char *
mode_name(enum sirq_mode mode)
{
	return mode == SIRQ_MODE_IRQ ? "irq" : "poll";
}

/*
 * One flood of run_seconds(), with or without the control thread and
 * its busy neighbour; the counters at the end in @st.
 */
static void
flood(const struct mode_case *mc, bool with_control, struct sirq_stats *st)
{
	struct sirq_lcore *lc = flood_lcore(mc);
	pthread_t ctl, busy;

	dispatcher_launch(lc);
	cr_assert(wait_for(&run.packets, 1, 5000), "no flood");
	run.stop_ns = now_ns() + run_seconds() * 1000000000ULL;
	if (with_control) {
		cr_assert(pthread_create(&busy, NULL, busy_loop, &run) == 0);
		cr_assert(pthread_create(&ctl, NULL, control, &run) == 0);
		cr_assert(pthread_join(ctl, NULL) == 0);
		__atomic_store_n(&run.busy_stop, 1, __ATOMIC_RELAXED);
		cr_assert(pthread_join(busy, NULL) == 0);
	} else {
		while (now_ns() < run.stop_ns)
			usleep(10000);
	}
	dispatcher_join(lc);
	sirq_stats_get(sirq_lcore_cpu(lc), st);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "mbufs leaked");
}

static void
control_never_stops_the_lcore(const struct mode_case *mc)
{
	struct sirq_stats st;

	flood(mc, true, &st);
	cr_log_info("remote policy=%s mode=%s tries=%" PRIu64 " refused=%" PRIu64
		    " calls=%" PRIu64 " packets=%" PRIu64 " net_rx_gap_max_us=%" PRIu64
		    " remote_hold_episodes=%" PRIu64 " remote_hold_max_us=%" PRIu64,
		    sirq_policy_name(mc->policy), mode_name(mc->mode), run.tries,
		    run.refused, run.calls_done, run.packets,
		    tsc_to_us(run.max_gap_tsc), st.remote_hold.samples,
		    st.remote_hold.max_ns / 1000);

	cr_assert_gt(run.tries, 0, "the control thread never ran: nothing was tested");
	/* Its section is refused, every time, and counted. */
	cr_expect_eq(run.sections, 0, "a thread on CPU %d took lcore %d's bottom halves",
		     CONTROL_CPU, TEST_LCORE);
	cr_expect_eq(run.refused, run.tries);
	cr_expect_eq(st.remote_refused, run.tries);
	/* The waiter gets in once it runs: every update was made. */
	cr_expect_eq(run.calls_done, run.tries, "%" PRIu64 " of %" PRIu64
		     " remote updates done (%" PRIu64 " errors)", run.calls_done,
		     run.tries, run.call_errors);
	cr_expect_eq(run.table.generation, run.tries);
	/* The bound, on the library's counter. */
	cr_expect_leq(st.remote_hold.max_ns, REMOTE_HOLD_MAX_NS,
		      "lcore %d waited %" PRIu64 " us behind CPU %d's thread",
		      TEST_LCORE, st.remote_hold.max_ns / 1000, CONTROL_CPU);
	cr_expect_gt(st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE] +
		     st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 0, "no NET_RX run");
}

static struct mode_case all_modes[] = {
	{ SIRQ_POLICY_MAINLINE, SIRQ_MODE_POLL },
	{ SIRQ_POLICY_KSOFTIRQD, SIRQ_MODE_POLL },
	{ SIRQ_POLICY_KICINSKI, SIRQ_MODE_POLL },
	{ SIRQ_POLICY_DEFERRED, SIRQ_MODE_POLL },
	{ SIRQ_POLICY_RT, SIRQ_MODE_POLL },
	{ SIRQ_POLICY_PUSHDOWN, SIRQ_MODE_POLL },
	{ SIRQ_POLICY_PUSHDOWN_LOCKED, SIRQ_MODE_POLL },
	{ SIRQ_POLICY_MAINLINE, SIRQ_MODE_IRQ },
	{ SIRQ_POLICY_KSOFTIRQD, SIRQ_MODE_IRQ },
	{ SIRQ_POLICY_KICINSKI, SIRQ_MODE_IRQ },
	{ SIRQ_POLICY_DEFERRED, SIRQ_MODE_IRQ },
	{ SIRQ_POLICY_RT, SIRQ_MODE_IRQ },
	{ SIRQ_POLICY_PUSHDOWN, SIRQ_MODE_IRQ },
	{ SIRQ_POLICY_PUSHDOWN_LOCKED, SIRQ_MODE_IRQ },
};

ParameterizedTestParameters(lcore_remote, a_nice_19_thread_on_another_cpu_never_stops_the_lcore)
{
	return cr_make_param_array(struct mode_case, all_modes,
				   sizeof(all_modes) / sizeof(all_modes[0]));
}

ParameterizedTest(struct mode_case *mc, lcore_remote,
		  a_nice_19_thread_on_another_cpu_never_stops_the_lcore,
		  .timeout = 60)
{
	control_never_stops_the_lcore(mc);
}

/* The baseline of the gap: the same flood with no control thread. */
ParameterizedTestParameters(lcore_remote, baseline_without_a_control_thread)
{
	return cr_make_param_array(struct mode_case, all_modes,
				   sizeof(all_modes) / sizeof(all_modes[0]));
}

ParameterizedTest(struct mode_case *mc, lcore_remote,
		  baseline_without_a_control_thread, .timeout = 60)
{
	struct sirq_stats st;

	flood(mc, false, &st);
	cr_log_info("remote-baseline policy=%s mode=%s packets=%" PRIu64
		    " net_rx_gap_max_us=%" PRIu64, sirq_policy_name(mc->policy),
		    mode_name(mc->mode), run.packets, tsc_to_us(run.max_gap_tsc));
	cr_expect_eq(st.remote_hold.samples, 0);
	cr_expect_eq(st.remote_refused, 0);
}

/* Wait until the control thread is at stop point @where. */
static void
wait_stop_point(uint32_t where)
{
	uint64_t end = now_ns() + 10000000000ULL;

	while (__atomic_load_n(&run.at_stop_point, __ATOMIC_ACQUIRE) != where) {
		cr_assert(now_ns() < end, "the control thread never reached stop point %u",
			  where);
		usleep(100);
	}
}

/*
 * Stopped (100 ms at least) right after its sirq_bh_disable(), where a
 * thread that got the lock would hold it, then again with its update
 * queued: the lcore forwards on, and runs the update meanwhile.
 */
static void
stopped_control_thread(const struct mode_case *mc)
{
	struct sirq_lcore *lc = flood_lcore(mc);
	bool forwarded, updated;
	struct sirq_stats st;
	uint64_t before, during;
	struct tracer tr;
	pthread_t ctl, busy;
	int tid;

	run.stop_case = true;
	run.stop_ns = UINT64_MAX;
	dispatcher_launch(lc);
	cr_assert(wait_for(&run.packets, 1, 5000), "no flood");
	cr_assert(pthread_create(&busy, NULL, busy_loop, &run) == 0);
	cr_assert(pthread_create(&ctl, NULL, control, &run) == 0);

	/*
	 * Not a window of time: the lcore must go on forwarding, and run
	 * the queued update, while the thread is stopped, however long
	 * that takes (the tracer gives up after TRACER_MAX_MS).
	 */
	wait_stop_point(1);
	tid = __atomic_load_n(&run.tid, __ATOMIC_ACQUIRE);
	stop_thread(&tr, tid);
	before = __atomic_load_n(&run.packets, __ATOMIC_RELAXED);
	forwarded = seen_while_stopped(&tr, &run.packets, before);
	resume_thread(&tr);
	during = __atomic_load_n(&run.packets, __ATOMIC_RELAXED) - before;
	__atomic_store_n(&run.resume, 1, __ATOMIC_RELEASE);

	wait_stop_point(2);
	/* Its update is queued: the lcore runs it while its caller is stopped. */
	stop_thread(&tr, tid);
	updated = seen_while_stopped(&tr, &run.table.generation, 0);
	resume_thread(&tr);
	cr_expect(updated, "the queued update did not run while its caller was stopped");
	__atomic_store_n(&run.resume, 2, __ATOMIC_RELEASE);
	cr_assert(pthread_join(ctl, NULL) == 0);
	__atomic_store_n(&run.busy_stop, 1, __ATOMIC_RELAXED);
	cr_assert(pthread_join(busy, NULL) == 0);

	dispatcher_join(lc);
	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	cr_log_info("remote-stopped policy=%s mode=%s packets_while_stopped=%" PRIu64
		    " net_rx_gap_max_us=%" PRIu64 " remote_hold_max_us=%" PRIu64,
		    sirq_policy_name(mc->policy), mode_name(mc->mode), during,
		    tsc_to_us(run.max_gap_tsc), st.remote_hold.max_ns / 1000);
	cr_expect_eq(run.refused, 1);
	cr_expect_eq(run.calls_done, 1);
	cr_expect(forwarded, "lcore %d forwarded nothing while CPU %d's thread was stopped",
		  TEST_LCORE, CONTROL_CPU);
	cr_expect_leq(st.remote_hold.max_ns, REMOTE_HOLD_MAX_NS,
		      "lcore %d waited %" PRIu64 " us behind a stopped thread",
		      TEST_LCORE, st.remote_hold.max_ns / 1000);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "mbufs leaked");
}

static struct mode_case stop_modes[] = {
	{ SIRQ_POLICY_KICINSKI, SIRQ_MODE_POLL },
	{ SIRQ_POLICY_MAINLINE, SIRQ_MODE_POLL },
	{ SIRQ_POLICY_PUSHDOWN, SIRQ_MODE_POLL },
	{ SIRQ_POLICY_KICINSKI, SIRQ_MODE_IRQ },
	{ SIRQ_POLICY_PUSHDOWN, SIRQ_MODE_IRQ },
};

ParameterizedTestParameters(lcore_remote, a_control_thread_stopped_in_its_section)
{
	return cr_make_param_array(struct mode_case, stop_modes,
				   sizeof(stop_modes) / sizeof(stop_modes[0]));
}

ParameterizedTest(struct mode_case *mc, lcore_remote,
		  a_control_thread_stopped_in_its_section, .timeout = 60)
{
	stopped_control_thread(mc);
}

/*
 * The remote call itself.
 */

struct probe {
	int tid;			/* the thread fn ran on */
	unsigned int lcore;		/* rte_lcore_id() there */
	bool locked;			/* with the lcore's execution lock, */
					/* kept across a section of its own */
	uint64_t runs;
	uint32_t hold;			/* fn spins while set */
	uint32_t holding;		/* ... and says so */
};

static struct probe probe;

static int
probe_fn(struct sirq_lcore *lc, void *arg)
{
	struct probe *p = &probe;

	p->tid = (int)gettid();
	p->lcore = rte_lcore_id();
	p->locked = sirq_bh_disable(sirq_lcore_cpu(lc)) == 0 &&
		sirq_bh_enable(sirq_lcore_cpu(lc)) == 0 &&
		sirq_exec_lock_is_mine(sirq_lcore_cpu(lc));
	p->runs++;
	__atomic_store_n(&p->holding, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&p->hold, __ATOMIC_ACQUIRE))
		rte_pause();
	return (int)(uintptr_t)arg;
}

static struct sirq_lcore *
idle_lcore(enum sirq_mode mode)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.mode = mode;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	memset(&probe, 0, sizeof(probe));
	return lc;
}

Test(lcore_remote, before_the_launch_and_after_the_return_a_call_runs_on_its_caller,
     .timeout = 30)
{
	struct sirq_lcore *lc = idle_lcore(SIRQ_MODE_POLL);
	struct sirq_lcore_stats ls;

	cr_expect_eq(sirq_lcore_call(lc, probe_fn, (void *)7), 7);
	cr_expect_eq(probe.tid, (int)gettid(), "not run on the caller");
	cr_expect_eq(probe.lcore, TEST_LCORE, "not run as the lcore");
	cr_expect_eq(rte_lcore_id(), 0, "the caller's lcore id not given back");
	cr_expect(probe.locked, "not run with the lcore's lock");

	dispatcher_launch(lc);
	dispatcher_join(lc);
	cr_expect_eq(sirq_lcore_call(lc, probe_fn, (void *)9), 9);
	cr_expect_eq(probe.tid, (int)gettid());
	sirq_lcore_stats_get(lc, &ls);
	cr_expect_eq(ls.remote_calls, 2);
	sirq_lcore_free(lc);
}

static void
runs_on_the_lcore_while_it_runs(enum sirq_mode mode)
{
	struct sirq_lcore *lc = idle_lcore(mode);
	struct sirq_call c;

	dispatcher_launch(lc);
	dispatcher_wait_running(lc);
	/* The waiting form. */
	cr_expect_eq(sirq_lcore_call(lc, probe_fn, (void *)3), 3);
	cr_expect_neq(probe.tid, (int)gettid(), "ran on the caller");
	cr_expect_eq(probe.lcore, TEST_LCORE);
	cr_expect(probe.locked, "not run with the lcore's lock, or let go of it");
	/* The returning form, polled. */
	cr_assert_eq(sirq_lcore_call_async(lc, &c, probe_fn, (void *)4), 0);
	while (!sirq_call_done(&c))
		usleep(100);
	cr_expect_eq(sirq_call_wait(&c), 4);
	cr_expect_eq(probe.runs, 2);
	dispatcher_join(lc);
	sirq_lcore_free(lc);
}

Test(lcore_remote, a_call_runs_on_the_lcore_in_poll_mode, .timeout = 30)
{
	runs_on_the_lcore_while_it_runs(SIRQ_MODE_POLL);
}

/* An idle irq-mode dispatcher sleeps for its tick: the call kicks it. */
Test(lcore_remote, a_call_wakes_a_sleeping_irq_mode_dispatcher, .timeout = 30)
{
	runs_on_the_lcore_while_it_runs(SIRQ_MODE_IRQ);
}

/* From a handler of the lcore: at once, on that handler's thread. */
struct inline_case {
	struct sirq_lcore *lc;
	int async_ret, async_result, wait_ret;
	bool async_done;
	int handler_tid;
	uint64_t ran;
};

static struct inline_case ic;

static void
calling_handler(struct sirq_cpu *cpu, void *arg)
{
	struct sirq_call c;

	(void)cpu;
	(void)arg;
	ic.handler_tid = (int)gettid();
	ic.async_ret = sirq_lcore_call_async(ic.lc, &c, probe_fn, (void *)5);
	ic.async_done = sirq_call_done(&c);
	ic.async_result = sirq_call_wait(&c);
	ic.wait_ret = sirq_lcore_call(ic.lc, probe_fn, (void *)6);
	__atomic_store_n(&ic.ran, 1, __ATOMIC_RELEASE);
}

Test(lcore_remote, from_a_handler_of_the_lcore_a_call_runs_inline, .timeout = 30)
{
	struct sirq_lcore *lc = idle_lcore(SIRQ_MODE_POLL);
	int vec = sirq_vector_alloc(sirq_lcore_cpu(lc), calling_handler, NULL,
				    "CALLER");

	cr_assert_geq(vec, 0);
	memset(&ic, 0, sizeof(ic));
	ic.lc = lc;
	dispatcher_launch(lc);
	sirq_raise(sirq_lcore_cpu(lc), (unsigned int)vec);
	cr_assert(wait_for(&ic.ran, 1, 5000), "the handler never ran");
	cr_expect_eq(ic.async_ret, 0);
	cr_expect(ic.async_done, "queued instead of run at once");
	cr_expect_eq(ic.async_result, 5);
	cr_expect_eq(ic.wait_ret, 6);
	cr_expect_eq(probe.tid, ic.handler_tid, "not run on the handler's thread");
	dispatcher_join(lc);
	sirq_lcore_free(lc);
}

/*
 * Waiting from another lcore's own thread, or with its bottom halves
 * off, is refused: the two could wait for each other. The test's thread
 * is lcore 0, made an lcore of libsirq's (never launched).
 */
Test(lcore_remote, waiting_from_another_lcore_is_edeadlk, .timeout = 30)
{
	struct sirq_lcore *lc = idle_lcore(SIRQ_MODE_POLL);
	struct sirq_lcore_conf conf;
	struct sirq_lcore *other;
	struct sirq_call c;

	sirq_lcore_conf_default(&conf);
	other = sirq_lcore_create(rte_lcore_id(), &conf);
	cr_assert(other != NULL);
	dispatcher_launch(lc);
	dispatcher_wait_running(lc);
	cr_expect_eq(sirq_lcore_call(lc, probe_fn, NULL), -EDEADLK);
	cr_expect_eq(probe.runs, 0, "queued all the same");
	/* The returning form is allowed; waiting on it is not. */
	__atomic_store_n(&probe.hold, 1, __ATOMIC_RELEASE);
	cr_assert_eq(sirq_lcore_call_async(lc, &c, probe_fn, (void *)8), 0);
	cr_expect_eq(sirq_call_wait(&c), -EDEADLK);
	__atomic_store_n(&probe.hold, 0, __ATOMIC_RELEASE);
	while (!sirq_call_done(&c))
		usleep(100);
	cr_expect_eq(sirq_call_wait(&c), 8, "done: the result, whoever asks");
	/* With another lcore's bottom halves off. */
	cr_assert_eq(sirq_bh_disable(sirq_lcore_cpu(other)), 0);
	cr_expect_eq(sirq_lcore_call(lc, probe_fn, NULL), -EDEADLK);
	cr_expect_eq(sirq_bh_enable(sirq_lcore_cpu(other)), 0);
	dispatcher_join(lc);
	sirq_lcore_free(other);
	sirq_lcore_free(lc);
}

/*
 * The queue holds SIRQ_LCORE_CALLS_MAX calls: with the lcore inside a
 * call that holds it, one more is refused, and all run once it lets go.
 * Stopped meanwhile, the dispatcher runs them before it returns, and a
 * thread waiting for one is woken.
 */
static struct sirq_call queued[SIRQ_LCORE_CALLS_MAX + 1];

static void *
wait_last(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)sirq_call_wait(&queued[SIRQ_LCORE_CALLS_MAX]);
}

static void
full_queue(bool stop_first)
{
	struct sirq_lcore *lc = idle_lcore(SIRQ_MODE_POLL);
	struct sirq_call extra, blocker;
	unsigned int i;
	pthread_t waiter;
	void *waited;

	dispatcher_launch(lc);
	dispatcher_wait_running(lc);
	__atomic_store_n(&probe.hold, 1, __ATOMIC_RELEASE);
	cr_assert_eq(sirq_lcore_call_async(lc, &blocker, probe_fn, NULL), 0);
	cr_assert(wait_for((uint64_t *)&probe.runs, 1, 5000), "the lcore never ran the call");
	/* Its section ended: the lcore's lock is the call's still, nobody
	 * else runs as the lcore, and only the call's lcore dequeues. */
	cr_expect(probe.locked, "the call's own section let go of the lcore's lock");
	for (i = 1; i <= SIRQ_LCORE_CALLS_MAX; i++)
		cr_assert_eq(sirq_lcore_call_async(lc, &queued[i], probe_fn,
						   (void *)(uintptr_t)i), 0,
			     "call %u refused", i);
	cr_expect_eq(sirq_lcore_call_async(lc, &extra, probe_fn, NULL), -ENOSPC);
	cr_expect(!sirq_call_done(&extra));
	cr_assert(pthread_create(&waiter, NULL, wait_last, NULL) == 0);
	if (stop_first)
		sirq_lcore_stop(lc);
	__atomic_store_n(&probe.hold, 0, __ATOMIC_RELEASE);
	cr_assert(pthread_join(waiter, &waited) == 0);
	cr_expect_eq((intptr_t)waited, SIRQ_LCORE_CALLS_MAX);
	dispatcher_join(lc);
	for (i = 1; i <= SIRQ_LCORE_CALLS_MAX; i++) {
		cr_expect(sirq_call_done(&queued[i]));
		cr_expect_eq(sirq_call_wait(&queued[i]), (int)i);
	}
	cr_expect_eq(probe.runs, SIRQ_LCORE_CALLS_MAX + 1);
	sirq_lcore_free(lc);
}

Test(lcore_remote, a_full_queue_refuses_the_next_call, .timeout = 30)
{
	full_queue(false);
}

Test(lcore_remote, calls_queued_at_the_stop_run_before_the_dispatcher_returns,
     .timeout = 30)
{
	full_queue(true);
}

/* Bad calls: an error, nothing run. */
Test(lcore_remote, bad_arguments_are_refused, .timeout = 30)
{
	struct sirq_lcore *lc = idle_lcore(SIRQ_MODE_POLL);
	struct sirq_call c;

	cr_expect_eq(sirq_lcore_call(NULL, probe_fn, NULL), -EINVAL);
	cr_expect_eq(sirq_lcore_call(lc, NULL, NULL), -EINVAL);
	cr_expect_eq(sirq_lcore_call_async(lc, NULL, probe_fn, NULL), -EINVAL);
	cr_expect_eq(sirq_lcore_call_async(NULL, &c, probe_fn, NULL), -EINVAL);
	cr_expect_eq(sirq_call_wait(NULL), -EINVAL);
	cr_expect(!sirq_call_done(NULL));
	memset(&c, 0, sizeof(c));
	cr_expect_eq(sirq_call_wait(&c), -EINVAL, "a call never given");
	cr_expect_eq(probe.runs, 0);
	sirq_lcore_free(lc);
}
