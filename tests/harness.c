/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "harness.h"

/*
 * Criterion reports a test before its worker process exits, so the
 * LeakSanitizer report at exit fails nothing (nor do abort_on_error,
 * exitcode, CRITERION_NO_EARLY_EXIT or a .fini assertion change that).
 * Check for leaks at the end of every test instead. The scan is
 * conservative: a leaked pointer still lying in a live stack frame hides
 * the leak in that test, but not in all of them.
 */
#if defined(__SANITIZE_ADDRESS__)
#define HARNESS_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HARNESS_LSAN 1
#endif
#endif
#ifdef HARNESS_LSAN
#include <sanitizer/lsan_interface.h>
#endif

uint64_t
monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC(1) + (uint64_t)ts.tv_nsec;
}

static uint64_t
fake_clock_ns(void *ctx)
{
	struct harness *h = ctx;
	void (*hook)(struct harness *) = h->on_next_clock_read;

	__atomic_fetch_add(&h->clock_reads, 1, __ATOMIC_RELAXED);
	if (hook != NULL) {
		h->on_next_clock_read = NULL;
		hook(h);
	}
	return __atomic_load_n(&h->now, __ATOMIC_ACQUIRE);
}

static uint64_t
real_clock_ns(void *ctx)
{
	struct harness *h = ctx;

	__atomic_fetch_add(&h->clock_reads, 1, __ATOMIC_RELAXED);
	return monotonic_ns();
}

static void
count_wake(void *ctx)
{
	struct harness *h = ctx;

	__atomic_fetch_add(&h->wakes, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&h->worker_started, __ATOMIC_ACQUIRE))
		sem_post(&h->worker_sem);
}

static void
count_hardirq_look(void *ctx)
{
	struct harness *h = ctx;

	h->hardirq_looks++;
	if (h->on_hardirq_look != NULL)
		h->on_hardirq_look(h);
}

static void
count_kick(void *ctx)
{
	struct harness *h = ctx;

	__atomic_fetch_add(&h->kicks, 1, __ATOMIC_SEQ_CST);
}

static bool
app_need_resched(void *ctx)
{
	const struct harness *h = ctx;

	return __atomic_load_n(&h->app_wants_cpu, __ATOMIC_RELAXED);
}

static bool
sched_marks_worker(void *ctx)
{
	const struct harness *h = ctx;

	return __atomic_load_n(&h->sched_marks_worker, __ATOMIC_RELAXED);
}

static bool
caller_in_task(void *ctx)
{
	const struct harness *h = ctx;

	return __atomic_load_n(&h->in_task, __ATOMIC_RELAXED);
}

static int
caller_remote(void *ctx)
{
	const struct harness *h = ctx;

	return __atomic_load_n(&h->remote_caller, __ATOMIC_RELAXED);
}

void
clock_set(struct harness *h, uint64_t ns)
{
	__atomic_store_n(&h->now, ns, __ATOMIC_RELEASE);
}

void
clock_advance(struct harness *h, uint64_t ns)
{
	__atomic_fetch_add(&h->now, ns, __ATOMIC_ACQ_REL);
}

uint64_t
clock_now(const struct harness *h)
{
	return __atomic_load_n(&h->now, __ATOMIC_ACQUIRE);
}

struct sirq_params
harness_params(enum sirq_policy_id policy)
{
	struct sirq_params p;

	sirq_params_default(&p);
	p.policy = policy;
	/* Exact time: the tests of jiffies set tick_hz themselves. */
	p.tick_hz = 0;
	return p;
}

void
harness_init_params(struct harness *h, const struct sirq_params *p,
		    unsigned int flags)
{
	struct sirq_cpu_conf conf;

	memset(h, 0, sizeof(*h));
	h->now = T0;

	memset(&conf, 0, sizeof(conf));
	conf.name = "test";
	conf.params = *p;
	conf.ops.clock_ns = (flags & HARNESS_REAL_CLOCK) ?
		real_clock_ns : fake_clock_ns;
	conf.ops.wake_worker = (flags & HARNESS_NO_WORKER) ? NULL : count_wake;
	conf.ops.need_resched = app_need_resched;
	conf.ops.worker_need_resched = sched_marks_worker;
	conf.ops.in_task = caller_in_task;
	conf.ops.remote_caller = caller_remote;
	conf.ops.kick = count_kick;
	conf.ops.worker_hardirq = count_hardirq_look;
	conf.ops.ctx = h;

	h->cpu = sirq_cpu_create(&conf);
	cr_assert(ne(ptr, h->cpu, NULL), "sirq_cpu_create: errno %d", errno);
}

void
harness_init(struct harness *h, enum sirq_policy_id policy)
{
	struct sirq_params p = harness_params(policy);

	harness_init_params(h, &p, HARNESS_FAKE_CLOCK);
}

void
harness_fini(struct harness *h)
{
	if (h->worker_started)
		harness_worker_stop(h);
	else
		sirq_worker_park(h->cpu);
	sirq_cpu_free(h->cpu);
	h->cpu = NULL;
#ifdef HARNESS_LSAN
	cr_assert(eq(int, __lsan_do_recoverable_leak_check(), 0),
		  "LeakSanitizer found leaks (report above)");
#endif
}

void
harness_log(struct harness *h, unsigned int id)
{
	cr_assert(lt(uint, h->nlog, HARNESS_LOG_LEN), "run log overflow");
	h->log[h->nlog++] = id;
}

static void
probe_handler(struct sirq_cpu *cpu, void *arg)
{
	struct probe *p = arg;
	uint32_t once = p->raise_once;

	cr_assert(eq(ptr, cpu, p->h->cpu));
	p->runs++;
	harness_log(p->h, p->vec);
	if (p->work_ns != 0)
		clock_advance(p->h, p->work_ns);

	p->raise_once = 0;
	while (once != 0) {
		unsigned int v = (unsigned int)__builtin_ctz(once);

		once &= once - 1;
		cr_assert(eq(int, sirq_raise(cpu, v), 0));
	}
	if (p->reraise != 0) {
		if (p->reraise != PROBE_FOREVER)
			p->reraise--;
		cr_assert(eq(int, sirq_raise(cpu, p->vec), 0));
	}
	if (p->hook != NULL)
		p->hook(p);
}

struct probe *
probe_register_flags(struct harness *h, unsigned int vec, uint32_t flags)
{
	struct probe *p = &h->probe[vec];

	memset(p, 0, sizeof(*p));
	p->h = h;
	p->vec = vec;
	cr_assert(eq(int, sirq_register_flags(h->cpu, vec, probe_handler, p,
					      NULL, flags), 0));
	return p;
}

struct probe *
probe_register(struct harness *h, unsigned int vec)
{
	return probe_register_flags(h, vec, 0);
}

static void
tprobe_fn(struct sirq_tasklet *t, void *arg)
{
	struct tprobe *tp = arg;

	cr_assert(eq(ptr, t, &tp->t));
	tp->runs++;
	harness_log(tp->h, tp->id);
	if (tp->reschedule != 0) {
		if (tp->reschedule != PROBE_FOREVER)
			tp->reschedule--;
		tp->resched_ret = tp->hi ?
			sirq_tasklet_hi_schedule(tp->h->cpu, t) :
			sirq_tasklet_schedule(tp->h->cpu, t);
	}
}

void
tprobe_init(struct tprobe *tp, struct harness *h, unsigned int id)
{
	memset(tp, 0, sizeof(*tp));
	tp->h = h;
	tp->id = id;
	sirq_tasklet_init(&tp->t, tprobe_fn, tp);
}

const struct sirq_stats *
stats(struct harness *h)
{
	sirq_stats_get(h->cpu, &h->st);
	return &h->st;
}

unsigned int
worker_run_until_sleep(struct harness *h, unsigned int max_calls)
{
	struct sirq_stats st;
	uint64_t before = 0, after = 0;
	unsigned int i, why;

	sirq_stats_get(h->cpu, &st);
	for (why = 0; why < SIRQ_EXIT_MAX; why++)
		before += st.pass_exit[why][SIRQ_CTX_WORKER];
	for (i = 0; i < max_calls; i++) {
		enum sirq_worker_status ws = sirq_worker_run(h->cpu);

		if (ws == SIRQ_WORKER_SLEEP)
			break;
		cr_assert(eq(int, ws, SIRQ_WORKER_YIELD),
			  "sirq_worker_run returned %d", ws);
	}
	if (i == max_calls)
		cr_fatal("worker still busy after %u calls", max_calls);
	sirq_stats_get(h->cpu, &st);
	for (why = 0; why < SIRQ_EXIT_MAX; why++)
		after += st.pass_exit[why][SIRQ_CTX_WORKER];
	return (unsigned int)(after - before);
}

bool
wait_flag(const unsigned int *flag, uint64_t timeout_ns)
{
	uint64_t deadline = monotonic_ns() + timeout_ns;

	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
		if (monotonic_ns() >= deadline)
			return false;
		sched_yield();
	}
	return true;
}

static void *
worker_main(void *arg)
{
	struct harness *h = arg;

	for (;;) {
		while (sem_wait(&h->worker_sem) != 0)
			;
		for (;;) {
			enum sirq_worker_status st = sirq_worker_run(h->cpu);

			if (st == SIRQ_WORKER_SLEEP)
				break;
			if (st == SIRQ_WORKER_EXIT)
				return NULL;
			sched_yield();	/* YIELD or BUSY: cond_resched() */
		}
	}
}

void
harness_worker_start(struct harness *h)
{
	cr_assert(eq(int, sem_init(&h->worker_sem, 0, 0), 0));
	__atomic_store_n(&h->worker_started, true, __ATOMIC_RELEASE);
	cr_assert(eq(int, pthread_create(&h->worker_thread, NULL,
					 worker_main, h), 0));
}

void
harness_worker_stop(struct harness *h)
{
	sirq_worker_park(h->cpu);
	sem_post(&h->worker_sem);
	cr_assert(eq(int, pthread_join(h->worker_thread, NULL), 0));
	__atomic_store_n(&h->worker_started, false, __ATOMIC_RELEASE);
	sem_destroy(&h->worker_sem);
}
