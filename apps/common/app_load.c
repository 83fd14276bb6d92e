/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "app_load.h"
#include "app_random.h"
#include "app_opts.h"

#define NS_PER_US UINT64_C(1000)
#define NS_PER_MS UINT64_C(1000000)
#define NS_PER_SEC UINT64_C(1000000000)

#define LOAD_HOLD_DEFAULT (10 * NS_PER_MS)	/* the patch's >= 10 ms holds */
#define LOAD_PERIOD_DEFAULT (50 * NS_PER_MS)
/* A slice short next to the 2 ms budgets, long next to one iteration. */
#define LOAD_CHUNK_DEFAULT (50 * NS_PER_US)
#define LOAD_THREADS_DEFAULT 3	/* one hog is rescheduled within 1-2 ms */
#define LOAD_SEED_DEFAULT 1
/* One work unit: a few hundred ns of integer work the compiler keeps. */
#define WORK_UNIT_STEPS 256
/* The slices the library takes for its threads (6.12+): the same rule. */
#define APP_SLICE_MIN_NS ((uint64_t)SIRQ_THREAD_SLICE_MIN_US * NS_PER_US)
#define APP_SLICE_MAX_NS ((uint64_t)SIRQ_THREAD_SLICE_MAX_US * NS_PER_US)

/* <linux/sched/types.h>, which glibc does not wrap. */
struct app_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;	/* SCHED_OTHER: the slice, 6.12+ */
	uint64_t sched_deadline;
	uint64_t sched_period;
};

void
app_load_spec_default(struct app_load_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->hold_ns = LOAD_HOLD_DEFAULT;
	s->period_ns = LOAD_PERIOD_DEFAULT;
	s->chunk_ns = LOAD_CHUNK_DEFAULT;
	s->threads = LOAD_THREADS_DEFAULT;
	s->seed = LOAD_SEED_DEFAULT;
}

static int
load_item(void *spec, const char *key, const char *val, char *err, size_t len)
{
	struct app_load_spec *s = spec;
	char *end;
	long n;

	if (strcmp(key, "random") == 0 && val == NULL) {
		s->random = true;
		return 0;
	}
	if (strcmp(key, "fixed") == 0 && val == NULL) {
		s->random = false;
		return 0;
	}
	if (strcmp(key, "quiet") == 0 && val == NULL) {
		s->quiet = true;
		return 0;
	}
	if (val == NULL || *val == '\0')
		goto bad;
	if (strcmp(key, "hold") == 0)
		return app_parse_duration_ns(val, &s->hold_ns) == 0 &&
			s->hold_ns > 0 ? 0 : (snprintf(err, len,
			"--app-load: bad hold '%s'", val), -1);
	if (strcmp(key, "period") == 0)
		return app_parse_duration_ns(val, &s->period_ns) == 0 &&
			s->period_ns > 0 ? 0 : (snprintf(err, len,
			"--app-load: bad period '%s'", val), -1);
	if (strcmp(key, "slice") == 0)
		return app_parse_duration_ns(val, &s->slice_ns) == 0 &&
			s->slice_ns >= APP_SLICE_MIN_NS &&
			s->slice_ns <= APP_SLICE_MAX_NS ? 0 : (snprintf(err, len,
			"--app-load: bad slice '%s' (100us..100ms)", val), -1);
	if (strcmp(key, "chunk") == 0)
		return app_parse_duration_ns(val, &s->chunk_ns) == 0 &&
			s->chunk_ns > 0 ? 0 : (snprintf(err, len,
			"--app-load: bad chunk '%s'", val), -1);
	errno = 0;
	n = strtol(val, &end, 0);
	if (errno != 0 || *end != '\0')
		goto bad;
	if (strcmp(key, "threads") == 0 && n >= 1 &&
	    n <= APP_LOAD_MAX_THREADS) {
		s->threads = (uint32_t)n;
		return 0;
	}
	if (strcmp(key, "nice") == 0 && n >= -20 && n <= 19) {
		s->nice = (int)n;
		return 0;
	}
	if (strcmp(key, "seed") == 0 && n >= 0) {
		s->seed = (uint64_t)n;
		return 0;
	}
bad:
	snprintf(err, len, "--app-load: bad item '%s%s%s'", key,
		 val != NULL ? "=" : "", val != NULL ? val : "");
	return -1;
}

int
app_load_parse(const char *text, struct app_load_spec *s, char *err,
	       size_t len)
{
	int ret = app_spec_parse("--app-load", text, load_item, s, err, len);

	if (ret != 0) {
		if (ret > 0)
			s->enabled = false;
		return ret > 0 ? 0 : -1;
	}
	if (s->hold_ns > s->period_ns) {
		snprintf(err, len, "--app-load: hold %" PRIu64
			 " us longer than period %" PRIu64 " us",
			 s->hold_ns / NS_PER_US, s->period_ns / NS_PER_US);
		return -1;
	}
	s->enabled = true;
	return 0;
}

uint64_t
app_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t
next_gap(struct app_load *l)
{
	if (!l->spec.random)
		return l->spec.period_ns;
	return app_random(&l->rng) % (2 * l->spec.period_ns + 1);
}

/* Per thread: the irq-mode load threads would race on a shared one. */
static _Thread_local volatile uint64_t work_sink;

/* One unit of the application's progress. */
static void
work_unit(void)
{
	uint64_t x = work_sink;
	unsigned int i;

	for (i = 0; i < WORK_UNIT_STEPS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	work_sink = x;
}

/* Work for @ns of this thread's CPU time; returns the units done. */
static uint64_t
work_for(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns, units = 0;

	do {
		work_unit();
		units++;
	} while (thread_cpu_ns() < end);
	return units;
}

void
app_load_init(struct app_load *l, const struct app_load_spec *spec,
	      struct sirq_cpu *cpu, unsigned int lcore_id, enum sirq_mode mode)
{
	memset(l, 0, sizeof(*l));
	l->spec = *spec;
	l->cpu = cpu;
	l->lcore_id = lcore_id;
	l->mode = mode;
	l->rng = spec->seed ^ lcore_id;
	l->start_ns = app_now_ns();
	l->next_burst_ns = l->start_ns + next_gap(l);
}

static void
add_progress(struct app_load *l, uint64_t units, uint64_t ns)
{
	__atomic_fetch_add(&l->work_units, units, __ATOMIC_RELAXED);
	__atomic_fetch_add(&l->busy_ns, ns, __ATOMIC_RELAXED);
}

void
app_load_slice(struct sirq_lcore *lc, void *arg)
{
	struct app_load *l = arg;
	uint64_t now = app_now_ns(), t0, units;

	(void)lc;
	if (!l->wanting) {
		if (now < l->next_burst_ns)
			return;
		l->wanting = true;
		l->hold_until_ns = now + l->spec.hold_ns;
		__atomic_fetch_add(&l->bursts, 1, __ATOMIC_RELAXED);
		if (!l->spec.quiet)
			sirq_set_need_resched(l->cpu, true);
	}
	if (now >= l->hold_until_ns) {
		l->wanting = false;
		l->next_burst_ns = l->hold_until_ns - l->spec.hold_ns +
			next_gap(l);
		if (!l->spec.quiet)
			sirq_set_need_resched(l->cpu, false);
		return;
	}
	t0 = thread_cpu_ns();
	units = work_for(l->spec.chunk_ns);
	add_progress(l, units, thread_cpu_ns() - t0);
}

/*
 * A fair task's slice: how long EEVDF lets it run before a task of the
 * same weight with an earlier deadline takes the CPU. Kernels before
 * 6.12 ignore sched_runtime for SCHED_OTHER; read it back to tell.
 */
static uint64_t
set_slice(uint64_t slice_ns, int nice)
{
	struct app_sched_attr a = {
		.size = sizeof(a),
		.sched_policy = SCHED_OTHER,
		.sched_nice = nice,
		.sched_runtime = slice_ns,
	};

	if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) {
		fprintf(stderr, "app-load: slice %" PRIu64 " us refused: %s\n",
			slice_ns / NS_PER_US, strerror(errno));
		return 0;
	}
	memset(&a, 0, sizeof(a));
	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) != 0 ||
	    a.sched_runtime != slice_ns)
		fprintf(stderr, "app-load: slice %" PRIu64
			" us not taken (a kernel before 6.12 has no per-task slice)\n",
			slice_ns / NS_PER_US);
	return a.sched_runtime;
}

/* irq mode: threads in their burst from which one of them waits. */
#define APP_LOAD_WAITING 2

/* irq mode: one of the application's threads on the lcore's CPU. */
static void *
load_thread(void *arg)
{
	struct app_load *l = arg;
	/* Each thread its own stream, the same on every run. */
	uint64_t rng = l->spec.seed ^ ((uint64_t)l->lcore_id << 32) ^
		__atomic_fetch_add(&l->next_stream, 1, __ATOMIC_RELAXED);
	uint64_t next = app_now_ns();

	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), l->spec.nice) != 0)
		fprintf(stderr, "app-load: nice %d refused: %s\n", l->spec.nice,
			strerror(errno));
	if (l->spec.slice_ns != 0)
		__atomic_store_n(&l->slice_taken_ns,
				 set_slice(l->spec.slice_ns, l->spec.nice),
				 __ATOMIC_RELAXED);
	while (!__atomic_load_n(&l->stop, __ATOMIC_RELAXED)) {
		struct timespec ts;
		uint64_t gap = l->spec.random ?
			app_random(&rng) % (2 * l->spec.period_ns + 1) :
			l->spec.period_ns;

		next += gap;
		ts.tv_sec = (time_t)(next / NS_PER_SEC);
		ts.tv_nsec = (long)(next % NS_PER_SEC);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED))
			break;

		/*
		 * need_resched() of the task an interrupt lands on: another
		 * thread is runnable and waiting for the CPU. One thread in
		 * its burst is the one running; a second waits.
		 */
		if (__atomic_add_fetch(&l->in_burst, 1, __ATOMIC_ACQ_REL) ==
		    APP_LOAD_WAITING && !l->spec.quiet)
			sirq_set_need_resched(l->cpu, true);
		__atomic_fetch_add(&l->bursts, 1, __ATOMIC_RELAXED);
		add_progress(l, work_for(l->spec.hold_ns), l->spec.hold_ns);
		if (__atomic_fetch_sub(&l->in_burst, 1, __ATOMIC_ACQ_REL) ==
		    APP_LOAD_WAITING && !l->spec.quiet)
			sirq_set_need_resched(l->cpu, false);
		if (app_now_ns() > next)
			next = app_now_ns();
	}
	return NULL;
}

int
app_load_start(struct app_load *l)
{
	rte_cpuset_t cpus = rte_lcore_cpuset(l->lcore_id);
	uint32_t i;
	int ret;

	for (i = 0; i < l->spec.threads; i++) {
		ret = pthread_create(&l->thread[i], NULL, load_thread, l);
		if (ret != 0) {
			fprintf(stderr, "app-load: thread %u of lcore %u: %s\n",
				i, l->lcore_id, strerror(ret));
			app_load_stop(l);
			return -ret;
		}
		l->nb_threads++;
		pthread_setaffinity_np(l->thread[i], sizeof(cpus), &cpus);
		pthread_setname_np(l->thread[i], "app-load");
	}
	return 0;
}

void
app_load_stop(struct app_load *l)
{
	uint32_t i;

	__atomic_store_n(&l->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < l->nb_threads; i++)
		pthread_join(l->thread[i], NULL);
	l->nb_threads = 0;
	sirq_set_need_resched(l->cpu, false);
}

void
app_load_json(FILE *f, const struct app_load *l, uint64_t elapsed_ns)
{
	uint64_t units = __atomic_load_n(&l->work_units, __ATOMIC_RELAXED);
	uint64_t busy = __atomic_load_n(&l->busy_ns, __ATOMIC_RELAXED);
	double secs = (double)elapsed_ns / NS_PER_SEC;

	fprintf(f, "{\"lcore\": %u, \"mode\": \"%s\", \"hold_us\": %" PRIu64
		", \"period_us\": %" PRIu64 ", \"random\": %s, \"quiet\": %s, \"threads\": %u, \"slice_us\": %" PRIu64 ", \"slice_taken_us\": %" PRIu64
		", \"bursts\": %" PRIu64 ", \"work_units\": %" PRIu64
		", \"work_units_per_s\": %.1f, \"cpu_share\": %.4f}",
		l->lcore_id, l->mode == SIRQ_MODE_IRQ ? "irq" : "poll",
		l->spec.hold_ns / NS_PER_US, l->spec.period_ns / NS_PER_US,
		l->spec.random ? "true" : "false",
		l->spec.quiet ? "true" : "false",
		l->mode == SIRQ_MODE_IRQ ? l->spec.threads : 0,
		l->spec.slice_ns / NS_PER_US,
		__atomic_load_n(&l->slice_taken_ns, __ATOMIC_RELAXED) / NS_PER_US,
		__atomic_load_n(&l->bursts, __ATOMIC_RELAXED), units,
		secs > 0 ? (double)units / secs : 0.0,
		elapsed_ns ? (double)busy / (double)elapsed_ns : 0.0);
}
