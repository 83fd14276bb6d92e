/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Stress of the engine's concurrent paths on real threads, for
 * ThreadSanitizer (Criterion's runner cannot start under TSan:
 * Snaipe/Criterion#274), and as a plain test everywhere else.
 *
 *  raise:    three raisers, the dispatcher (sirq_irq_exit, need_resched
 *            flipping), a worker thread, an application thread taking
 *            bh_disable/enable, and a reader of the counters, under each
 *            policy. No raise lost, no two handlers at once.
 *  tasklet:  two CPUs, each with a dispatcher and a worker; three threads
 *            schedule eight tasklets on either CPU and list, a fourth
 *            disables and enables one; then all are killed while the
 *            dispatchers run. Never concurrent with itself, nothing runs
 *            after kill, a killed tasklet refuses scheduling.
 *  wakeup:   rounds that each need one wake-up of an idle worker.
 *
 * The worker sleeps as sirqd does, on a token counter (a futex here).
 * Every wait is bounded; the exit status is 0 only if every check held.
 *
 *   sirq-stress [seconds per case (1)] [wake-up rounds (100000)]
 */

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sirq_engine.h"

#define NS_PER_SEC 1000000000ULL
#define RAISERS 3
#define TASKLETS 8
#define SCHEDULERS 3
#define CPUS 2
#define DRAIN_TIMEOUT_NS (10 * NS_PER_SEC)
#define RESCHED_FLIP_EVERY 64		/* dispatcher iterations */
#define BH_HOLD_SPINS 200		/* an application's short bh-off section */
#define VEC_FIRST SIRQ_NR_KERNEL_VECTORS

static unsigned int failures;

#define CHECK(cond, ...) do { \
		if (!(cond)) { \
			fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED); \
		} \
	} while (0)

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t
clock_op(void *ctx)
{
	(void)ctx;
	return now_ns();
}

static bool
flag(const uint32_t *f)
{
	return __atomic_load_n(f, __ATOMIC_ACQUIRE) != 0;
}

/* A CPU with a worker thread that sleeps on a futex token counter. */
struct cpu_ctx {
	struct sirq_cpu *cpu;
	pthread_t worker;
	pthread_t dispatcher;
	uint32_t tokens;
	uint32_t stop;
};

static void
wake_worker(void *ctx)
{
	struct cpu_ctx *c = ctx;

	__atomic_fetch_add(&c->tokens, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &c->tokens, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void
take_token(struct cpu_ctx *c)
{
	for (;;) {
		uint32_t n = __atomic_load_n(&c->tokens, __ATOMIC_SEQ_CST);

		if (n == 0) {
			syscall(SYS_futex, &c->tokens, FUTEX_WAIT_PRIVATE, 0,
				NULL, NULL, 0);
			continue;
		}
		if (__atomic_compare_exchange_n(&c->tokens, &n, n - 1, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			return;
	}
}

static void *
worker_main(void *arg)
{
	struct cpu_ctx *c = arg;

	for (;;) {
		switch (sirq_worker_run(c->cpu)) {
		case SIRQ_WORKER_SLEEP:
			take_token(c);
			break;
		case SIRQ_WORKER_YIELD:
		case SIRQ_WORKER_BUSY:
			sched_yield();
			break;
		case SIRQ_WORKER_EXIT:
		default:
			return NULL;
		}
	}
}

static void
cpu_start(struct cpu_ctx *c, enum sirq_policy_id policy, const char *name)
{
	struct sirq_cpu_conf conf = { .name = name };

	memset(c, 0, sizeof(*c));
	sirq_params_default(&conf.params);
	conf.params.policy = policy;
	conf.ops.clock_ns = clock_op;
	conf.ops.wake_worker = wake_worker;
	conf.ops.ctx = c;
	c->cpu = sirq_cpu_create(&conf);
	if (c->cpu == NULL || pthread_create(&c->worker, NULL, worker_main, c) != 0) {
		perror("cpu_start");
		exit(2);
	}
}

static void
cpu_stop(struct cpu_ctx *c)
{
	sirq_worker_park(c->cpu);
	wake_worker(c);
	pthread_join(c->worker, NULL);
	sirq_cpu_free(c->cpu);
}

/*
 * raise
 */

struct vec_state {
	uint64_t produced;
	uint64_t consumed;
	uint64_t runs;
	unsigned int vec;
} __attribute__((aligned(64)));

static struct {
	struct cpu_ctx c;
	struct vec_state v[RAISERS];
	uint32_t in_handler;
	uint32_t overlaps;
	uint32_t stop;
	uint64_t bh_sections;
	uint64_t stats_reads;
} rs;

static void
consume(struct sirq_cpu *cpu, void *arg)
{
	struct vec_state *v = arg;

	if (__atomic_exchange_n(&rs.in_handler, 1, __ATOMIC_ACQ_REL) != 0)
		__atomic_fetch_add(&rs.overlaps, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&v->consumed,
			 __atomic_load_n(&v->produced, __ATOMIC_SEQ_CST),
			 __ATOMIC_RELEASE);
	/* Every 4th run leaves work behind: passes end with work left. */
	if ((__atomic_add_fetch(&v->runs, 1, __ATOMIC_RELAXED) & 3) == 0)
		sirq_raise_irqoff(cpu, v->vec);
	__atomic_store_n(&rs.in_handler, 0, __ATOMIC_RELEASE);
}

static void *
raiser_main(void *arg)
{
	struct vec_state *v = arg;

	while (!flag(&rs.stop)) {
		__atomic_add_fetch(&v->produced, 1, __ATOMIC_SEQ_CST);
		sirq_raise(rs.c.cpu, v->vec);
		if ((v->produced & 15) == 0)
			sched_yield();
	}
	return NULL;
}

/* An application thread: short bh-off sections, whose enable runs work. */
static void *
bh_main(void *arg)
{
	(void)arg;
	while (!flag(&rs.stop)) {
		unsigned int i;

		sirq_bh_disable(rs.c.cpu);
		for (i = 0; i < BH_HOLD_SPINS; i++)
			__atomic_load_n(&rs.in_handler, __ATOMIC_RELAXED);
		if (sirq_bh_enable(rs.c.cpu) != 0)
			__atomic_fetch_add(&rs.overlaps, 1, __ATOMIC_RELAXED);
		rs.bh_sections++;
		sched_yield();
	}
	return NULL;
}

/* The telemetry thread: reads every counter while they change. */
static void *
stats_main(void *arg)
{
	struct sirq_stats *st = malloc(sizeof(*st));

	(void)arg;
	while (st != NULL && !flag(&rs.stop)) {
		sirq_stats_get(rs.c.cpu, st);
		(void)sirq_pending(rs.c.cpu);
		(void)sirq_worker_state(rs.c.cpu);
		rs.stats_reads++;
		sched_yield();
	}
	free(st);
	return NULL;
}

static bool
all_consumed(void)
{
	unsigned int i;

	for (i = 0; i < RAISERS; i++)
		if (__atomic_load_n(&rs.v[i].consumed, __ATOMIC_ACQUIRE) !=
		    __atomic_load_n(&rs.v[i].produced, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

static void
stress_raise(enum sirq_policy_id policy, uint64_t run_ns)
{
	pthread_t raisers[RAISERS], bh, stats;
	uint64_t end, produced = 0, iter = 0;
	unsigned int i;

	memset(&rs, 0, sizeof(rs));
	cpu_start(&rs.c, policy, "raise");
	for (i = 0; i < RAISERS; i++) {
		rs.v[i].vec = VEC_FIRST + i;
		sirq_register(rs.c.cpu, rs.v[i].vec, consume, &rs.v[i], NULL);
		pthread_create(&raisers[i], NULL, raiser_main, &rs.v[i]);
	}
	pthread_create(&bh, NULL, bh_main, NULL);
	pthread_create(&stats, NULL, stats_main, NULL);

	end = now_ns() + run_ns;
	while (now_ns() < end) {
		if (++iter % RESCHED_FLIP_EVERY == 0)
			sirq_set_need_resched(rs.c.cpu,
					      (iter / RESCHED_FLIP_EVERY) & 1);
		if (sirq_irq_exit(rs.c.cpu) != SIRQ_IRQ_EXIT_RAN)
			sched_yield();
	}
	__atomic_store_n(&rs.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < RAISERS; i++)
		pthread_join(raisers[i], NULL);
	pthread_join(bh, NULL);
	pthread_join(stats, NULL);

	/* Drain as a dispatcher does: whoever's turn it is must see all. */
	sirq_set_need_resched(rs.c.cpu, false);
	end = now_ns() + DRAIN_TIMEOUT_NS;
	while (!all_consumed() && now_ns() < end) {
		sirq_irq_exit(rs.c.cpu);
		sched_yield();
	}
	/*
	 * The worker may still be running a re-raised handler: stop it before
	 * reading what the handlers wrote (TSan saw that read race the last
	 * handler's store).
	 */
	cpu_stop(&rs.c);
	for (i = 0; i < RAISERS; i++) {
		CHECK(rs.v[i].consumed == rs.v[i].produced,
		      "%s: vector %u: raise lost (%llu produced, %llu seen)",
		      sirq_policy_name(policy), rs.v[i].vec,
		      (unsigned long long)rs.v[i].produced,
		      (unsigned long long)rs.v[i].consumed);
		produced += rs.v[i].produced;
	}
	CHECK(rs.overlaps == 0, "%s: handlers ran concurrently %u times",
	      sirq_policy_name(policy), rs.overlaps);
	printf("raise/%s: %llu raises, %llu bh sections, %llu counter reads\n",
	       sirq_policy_name(policy), (unsigned long long)produced,
	       (unsigned long long)rs.bh_sections,
	       (unsigned long long)rs.stats_reads);
}

/*
 * tasklet
 */

struct tl {
	struct sirq_tasklet t;
	uint32_t running;
	uint32_t killed;
	uint64_t runs;
	uint64_t overlaps;
	uint64_t after_kill;
};

static struct {
	struct cpu_ctx c[CPUS];
	struct tl tl[TASKLETS];
	uint32_t stop_scheduling;
	uint64_t scheduled;
} ts;

static void
tasklet_fn(struct sirq_tasklet *t, void *arg)
{
	struct tl *x = arg;

	(void)t;
	if (__atomic_exchange_n(&x->running, 1, __ATOMIC_ACQ_REL) != 0)
		__atomic_fetch_add(&x->overlaps, 1, __ATOMIC_RELAXED);
	if (flag(&x->killed))
		__atomic_fetch_add(&x->after_kill, 1, __ATOMIC_RELAXED);
	x->runs++;
	__atomic_store_n(&x->running, 0, __ATOMIC_RELEASE);
}

static void *
tasklet_dispatcher_main(void *arg)
{
	struct cpu_ctx *c = arg;

	while (!flag(&c->stop))
		if (sirq_irq_exit(c->cpu) != SIRQ_IRQ_EXIT_RAN)
			sched_yield();
	return NULL;
}

static void *
scheduler_main(void *arg)
{
	uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;

	while (!flag(&ts.stop_scheduling)) {
		struct tl *x;
		struct sirq_cpu *cpu;
		bool ok;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		x = &ts.tl[rng % TASKLETS];
		cpu = ts.c[(rng >> 8) % CPUS].cpu;
		ok = (rng >> 16) & 1 ? sirq_tasklet_hi_schedule(cpu, &x->t) :
			sirq_tasklet_schedule(cpu, &x->t);
		if (ok)
			__atomic_fetch_add(&ts.scheduled, 1, __ATOMIC_RELAXED);
		if ((rng & 7) == 0)
			sched_yield();
	}
	return NULL;
}

static void *
disabler_main(void *arg)
{
	(void)arg;
	while (!flag(&ts.stop_scheduling)) {
		sirq_tasklet_disable(&ts.tl[0].t);
		CHECK(!flag(&ts.tl[0].running), "disabled tasklet is running");
		sched_yield();
		sirq_tasklet_enable(&ts.tl[0].t);
		sched_yield();
	}
	return NULL;
}

static void
stress_tasklets(uint64_t run_ns)
{
	pthread_t sched[SCHEDULERS], disabler;
	uint64_t runs = 0;
	unsigned int i;

	memset(&ts, 0, sizeof(ts));
	for (i = 0; i < TASKLETS; i++)
		sirq_tasklet_init(&ts.tl[i].t, tasklet_fn, &ts.tl[i]);
	for (i = 0; i < CPUS; i++) {
		cpu_start(&ts.c[i], SIRQ_POLICY_KICINSKI, "tasklet");
		pthread_create(&ts.c[i].dispatcher, NULL,
			       tasklet_dispatcher_main, &ts.c[i]);
	}
	for (i = 0; i < SCHEDULERS; i++)
		pthread_create(&sched[i], NULL, scheduler_main,
			       (void *)(uintptr_t)(i + 1));
	pthread_create(&disabler, NULL, disabler_main, NULL);

	usleep((useconds_t)(run_ns / 1000));
	__atomic_store_n(&ts.stop_scheduling, 1, __ATOMIC_RELEASE);
	for (i = 0; i < SCHEDULERS; i++)
		pthread_join(sched[i], NULL);
	pthread_join(disabler, NULL);

	/* Kill while the dispatchers still run: each waits for its last run. */
	for (i = 0; i < TASKLETS; i++) {
		sirq_tasklet_kill(&ts.tl[i].t);
		__atomic_store_n(&ts.tl[i].killed, 1, __ATOMIC_RELEASE);
		CHECK(!sirq_tasklet_schedule(ts.c[0].cpu, &ts.tl[i].t),
		      "tasklet %u: scheduled after kill", i);
		CHECK(!sirq_tasklet_is_scheduled(&ts.tl[i].t),
		      "tasklet %u: still scheduled after kill", i);
	}
	usleep(10000);
	for (i = 0; i < CPUS; i++) {
		__atomic_store_n(&ts.c[i].stop, 1, __ATOMIC_RELEASE);
		pthread_join(ts.c[i].dispatcher, NULL);
		cpu_stop(&ts.c[i]);
	}
	for (i = 0; i < TASKLETS; i++) {
		CHECK(ts.tl[i].overlaps == 0, "tasklet %u ran concurrently with itself", i);
		CHECK(ts.tl[i].after_kill == 0, "tasklet %u ran after kill", i);
		runs += ts.tl[i].runs;
	}
	CHECK(runs == ts.scheduled, "%llu scheduled, %llu ran",
	      (unsigned long long)ts.scheduled, (unsigned long long)runs);
	printf("tasklet: %llu scheduled, %llu runs on %d CPUs\n",
	       (unsigned long long)ts.scheduled, (unsigned long long)runs, CPUS);
}

/*
 * wakeup
 */

static uint64_t rounds_run;

static void
count_round(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	__atomic_fetch_add(&rounds_run, 1, __ATOMIC_RELEASE);
}

static void
stress_wakeup(uint64_t rounds)
{
	struct cpu_ctx c;
	uint64_t r, deadline;

	cpu_start(&c, SIRQ_POLICY_DEFERRED, "wakeup");
	sirq_register(c.cpu, VEC_FIRST, count_round, NULL, "ROUND");
	for (r = 1; r <= rounds; r++) {
		deadline = now_ns() + DRAIN_TIMEOUT_NS;
		while (sirq_worker_state(c.cpu) != SIRQ_WORKER_IDLE &&
		       now_ns() < deadline)
			sched_yield();
		sirq_raise(c.cpu, VEC_FIRST);
		while (sirq_irq_exit(c.cpu) == SIRQ_IRQ_EXIT_BUSY)
			sched_yield();
		while (__atomic_load_n(&rounds_run, __ATOMIC_ACQUIRE) < r &&
		       now_ns() < deadline)
			sched_yield();
		if (__atomic_load_n(&rounds_run, __ATOMIC_ACQUIRE) < r) {
			CHECK(false, "round %llu: lost wake-up", (unsigned long long)r);
			break;
		}
	}
	printf("wakeup: %llu rounds\n", (unsigned long long)rounds_run);
	cpu_stop(&c);
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	uint64_t rounds = argc > 2 ? strtoull(argv[2], NULL, 10) : 100000;
	uint64_t run_ns = (uint64_t)(secs * (double)NS_PER_SEC);
	int p;

	for (p = 0; p < SIRQ_POLICY_MAX; p++)
		stress_raise((enum sirq_policy_id)p, run_ns);
	stress_tasklets(run_ns);
	stress_wakeup(rounds);
	printf("%u failure(s)\n", failures);
	return failures == 0 ? 0 : 1;
}
