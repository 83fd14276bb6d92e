/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The range table on a live lcore: every tunable outside its range is
 * refused through the API and telemetry with the library's range in the
 * message (the applications' CLI and INI file: tests/l2fwd/test_cli.c);
 * every extreme inside its range is harmless under a flood; a stop cuts
 * through a pass that could last a second.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_log.h>

#include "eal_harness.h"

static uint64_t received;

/* The tunables of struct sirq_lcore_params that the table covers. */
static bool
field_set(struct sirq_lcore_params *p, const char *name, uint64_t v)
{
	if (strcmp(name, "max_restart") == 0)
		p->engine.max_restart = (unsigned int)v;
	else if (strcmp(name, "max_time_ns") == 0)
		p->engine.max_time_ns = v;
	else if (strcmp(name, "defer_window_ns") == 0)
		p->engine.defer_window_ns = v;
	else if (strcmp(name, "overload_window_ns") == 0)
		p->engine.overload_window_ns = v;
	else if (strcmp(name, "expedited_mask") == 0)
		p->engine.expedited_mask = (uint32_t)v;
	else if (strcmp(name, "tick_hz") == 0)
		p->engine.tick_hz = (uint32_t)v;
	else if (strcmp(name, "stall_threshold_ns") == 0)
		p->engine.stall_threshold_ns = v;
	else if (strcmp(name, "napi_weight") == 0)
		p->napi_weight = (uint16_t)v;
	else if (strcmp(name, "netdev_budget") == 0)
		p->netdev_budget = (uint16_t)v;
	else if (strcmp(name, "netdev_budget_us") == 0)
		p->netdev_budget_us = (uint32_t)v;
	else
		cr_assert_fail("no field %s", name);
	return true;
}

/* The largest value the field holds: one past a range may not fit. */
static uint64_t
field_limit(const char *name)
{
	if (strcmp(name, "napi_weight") == 0 ||
	    strcmp(name, "netdev_budget") == 0)
		return UINT16_MAX;
	if (strcmp(name, "max_restart") == 0 ||
	    strcmp(name, "expedited_mask") == 0 ||
	    strcmp(name, "tick_hz") == 0 ||
	    strcmp(name, "netdev_budget_us") == 0)
		return UINT32_MAX;
	return UINT64_MAX;
}

/*
 * A row of the range table that is a field of sirq_lcore_params: the
 * thread_* rows are a softirq thread's attributes (sirq_lcore_thread_attr(),
 * checked by lcore_thread_attr and l2fwd_ranges).
 */
static bool
is_lcore_param(const char *name)
{
	return strncmp(name, "thread_", 7) != 0;
}

/* The library's log, kept in a file the test reads back. */
static FILE *log_file;

static void
log_capture(void)
{
	log_file = tmpfile();
	cr_assert(log_file != NULL);
	cr_assert(rte_openlog_stream(log_file) == 0);
}

/* Does the log written since the last call contain @want? */
static bool
log_says(const char *want)
{
	static char text[65536];
	size_t got;

	fflush(log_file);
	rewind(log_file);
	got = fread(text, 1, sizeof(text) - 1, log_file);
	text[got] = '\0';
	cr_assert(ftruncate(fileno(log_file), 0) == 0);
	rewind(log_file);
	return strstr(text, want) != NULL;
}

static struct sirq_lcore *
flooded_lcore(void)
{
	static const char *const vdevs[] = { "net_null0", NULL };
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	eal_start(vdevs);
	port_start(0, 1, false);
	sirq_lcore_conf_default(&conf);
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_lcore_add_rx_queue(lc, 0, 0, rx_free_all,
					  &received) == 0);
	return lc;
}

static void
params_get(struct sirq_lcore *lc, struct sirq_lcore_params *p)
{
	memset(p, 0, sizeof(*p));	/* memcmp() sees the padding too */
	cr_assert(sirq_lcore_get_params(lc, p) == 0);
}

/* One value out of range through the API; queued for telemetry. */
static unsigned int
refuse(struct sirq_lcore *lc, const struct sirq_param_range *r, uint64_t v,
       char *batch, size_t len, size_t *at)
{
	struct sirq_lcore_params before, p, after;

	params_get(lc, &before);
	p = before;
	field_set(&p, r->name, v);
	cr_expect(sirq_lcore_set_params(lc, &p) == -EINVAL, "%s = %" PRIu64,
		  r->name, v);
	cr_expect(log_says(r->why), "API, %s = %" PRIu64 ": no '%s' in the log",
		  r->name, v, r->why);
	params_get(lc, &after);
	cr_expect(memcmp(&before, &after, sizeof(after)) == 0,
		  "%s = %" PRIu64 " changed something", r->name, v);
	*at += (size_t)snprintf(batch + *at, len - *at,
				"/sirq/params_set,%d,%s=%" PRIu64 "\n",
				TEST_LCORE, r->name, v);
	return 1;
}

/* dpdk-telemetry.py with one command per line of @cmds. */
static void
telemetry_batch(const char *cmds, char *out, size_t len)
{
	char path[] = "/tmp/sirq-params-XXXXXX", line[256];
	FILE *p;
	size_t got;
	int fd;

	fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert(write(fd, cmds, strlen(cmds)) == (ssize_t)strlen(cmds));
	close(fd);
	snprintf(line, sizeof(line), "dpdk-telemetry.py -f %s < %s",
		 eal_prefix(), path);
	p = popen(line, "r");
	cr_assert(p != NULL);
	got = fread(out, 1, len - 1, p);
	out[got] = '\0';
	cr_assert(pclose(p) == 0, "%s failed: %s", line, out);
	unlink(path);
}

Test(lcore_params, every_value_outside_its_range_is_refused_with_the_range,
     .timeout = 120)
{
	static char batch[8192], out[65536];
	const struct sirq_param_range *all;
	struct sirq_lcore_params before, after;
	struct sirq_lcore *lc;
	unsigned int nb, i, n = 0;
	size_t at = 0;
	char want[256];

	lc = flooded_lcore();
	cr_assert(sirq_telemetry_register() == 0);
	dispatcher_launch(lc);
	cr_assert(wait_for(&received, 1, 10000), "no packet forwarded");
	log_capture();
	params_get(lc, &before);

	all = sirq_param_ranges(&nb);
	for (i = 0; i < nb; i++) {
		const struct sirq_param_range *r = &all[i];

		if (!is_lcore_param(r->name))
			continue;
		if (r->min > 0)
			n += refuse(lc, r, r->min - 1, batch, sizeof(batch), &at);
		if (r->max < field_limit(r->name))
			n += refuse(lc, r, r->max + 1, batch, sizeof(batch), &at);
	}
	/*
	 * The mask's range is the vectors with a handler: 0x80 is SCHED,
	 * which nothing runs on a DPDK lcore.
	 */
	n += refuse(lc, sirq_param_range("expedited_mask"), 0x80, batch,
		    sizeof(batch), &at);
	/* 1 below (6 fields) + 1 above (all 10 but the mask's) + SCHED. */
	cr_assert_eq(n, 6 + 9 + 1);

	/* One dpdk-telemetry.py for them all: a command per line. */
	telemetry_batch(batch, out, sizeof(out));
	for (i = 0; i < nb; i++) {
		const struct sirq_param_range *r = &all[i];

		if (!is_lcore_param(r->name))
			continue;
		if (r->min > 0) {
			snprintf(want, sizeof(want), "bad value '%" PRIu64
				 "' for %s: %s", r->min - 1, r->name, r->why);
			cr_expect(strstr(out, want) != NULL, "no '%s' in %s",
				  want, out);
		}
		if (r->max < field_limit(r->name)) {
			snprintf(want, sizeof(want), "bad value '%" PRIu64
				 "' for %s: %s", r->max + 1, r->name, r->why);
			cr_expect(strstr(out, want) != NULL, "no '%s' in %s",
				  want, out);
		}
	}
	cr_expect(strstr(out, sirq_param_range("expedited_mask")->why) != NULL,
		  "%s", out);
	params_get(lc, &after);
	cr_expect(memcmp(&before, &after, sizeof(after)) == 0,
		  "a refused value changed something");
	/* NULL is named as what it is. */
	cr_expect(sirq_lcore_set_params(lc, NULL) == -EINVAL);
	cr_expect(log_says("sirq_lcore_set_params: no parameters (NULL)"));
	cr_expect(sirq_lcore_set_params(NULL, &after) == -EINVAL);
	cr_expect(log_says("sirq_lcore_set_params: no lcore (NULL)"));

	dispatcher_join(lc);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "mbufs leaked");
}

/* What a run of @ms under the current parameters gives. */
struct sample {
	double mpps;
	double time_exits_per_s;
};

static uint64_t
time_exits(struct sirq_lcore *lc)
{
	struct sirq_stats st;

	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	return st.pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_INLINE] +
		st.pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_WORKER];
}

static struct sample
measure(struct sirq_lcore *lc, unsigned int ms)
{
	uint64_t p0 = __atomic_load_n(&received, __ATOMIC_ACQUIRE);
	uint64_t x0 = time_exits(lc), t0 = now_ns(), t1;
	struct sample s;

	usleep(ms * 1000);
	t1 = now_ns();
	s.mpps = (double)(__atomic_load_n(&received, __ATOMIC_ACQUIRE) - p0) *
		1e3 / (double)(t1 - t0);
	s.time_exits_per_s = (double)(time_exits(lc) - x0) * 1e9 /
		(double)(t1 - t0);
	return s;
}

/*
 * The best of up to three samples, until one reaches @floor_mpps: a
 * 100 ms gap of this VM's host, or another process taking the lcore's
 * CPU for a while, in one of them is not the parameter's doing
 * (docs/reliability.md). A parameter that halves the rate does so in
 * every sample.
 */
#define MEASURE_TRIES 3

static struct sample
measure_best(struct sirq_lcore *lc, unsigned int ms, double floor_mpps)
{
	struct sample best = measure(lc, ms), b;
	unsigned int i;

	for (i = 1; i < MEASURE_TRIES && best.mpps < floor_mpps; i++) {
		b = measure(lc, ms);
		if (b.mpps > best.mpps)
			best = b;
	}
	return best;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * An extreme below half the defaults' rate, in every one of its
 * samples: the defaults' sample may have been the lucky one, when
 * another process on the CPU left it the whole CPU for 300 ms (37.9
 * against the 22-32 Mpps of its neighbours' samples, beside a
 * busy-polling process). Two more samples of the defaults, their median
 * the rate to halve; then the extreme's again, the best of all kept. A
 * parameter that halves the rate still fails.
 */
static void
again_beside_the_defaults(struct sirq_lcore *lc,
			  const struct sirq_lcore_params *def,
			  const struct sirq_lcore_params *extreme,
			  struct sample *base, struct sample *s)
{
	struct sirq_lcore_params p = *def;
	double rates[3] = { base->mpps };
	struct sample b;
	unsigned int i;

	cr_assert(sirq_lcore_set_params(lc, &p) == 0);
	for (i = 1; i < 3; i++)
		rates[i] = measure(lc, 300).mpps;
	qsort(rates, 3, sizeof(rates[0]), cmp_double);
	base->mpps = rates[1];
	p = *extreme;
	cr_assert(sirq_lcore_set_params(lc, &p) == 0);
	b = measure_best(lc, 300, base->mpps / 2);
	if (b.mpps > s->mpps)
		*s = b;
}

/*
 * Under ASan every call costs several times its price, so a poll's fixed
 * cost dominates a small weight (napi_weight 8: 10.5 against 26.9 Mpps,
 * where the optimized build forwarded 77 against 43): the rate is a
 * property of the build users run, asserted there; the exits and the
 * stop are asserted in every build.
 */
#if defined(__SANITIZE_ADDRESS__)
#define RATE_ASSERTED false
#else
#define RATE_ASSERTED true
#endif

/*
 * Each extreme inside its range, alone, on a flooded lcore: it forwards
 * at least half the defaults' rate, its passes end on time_limit no more
 * often than with the defaults (plus one a second, for a count of 0),
 * and it stops within 1 s.
 */
Test(lcore_params, every_extreme_inside_its_range_is_harmless, .timeout = 240)
{
	const struct sirq_param_range *all;
	struct sirq_lcore_params def, p;
	struct sirq_lcore *lc;
	struct sample base, s;
	unsigned int nb, i, e;
	uint64_t t0, stop_ns, worst_stop = 0;
	double exits_bar = 0;

	lc = flooded_lcore();
	params_get(lc, &def);
	/*
	 * The exits' bar: the most the defaults make in a sample. Three
	 * samples first, as one can be halved by another process on the
	 * CPU (137 against 250 beside a busy-polling process, which then
	 * failed the first extreme at its usual 233).
	 */
	p = def;
	cr_assert(sirq_lcore_set_params(lc, &p) == 0);
	dispatcher_launch(lc);
	cr_assert(wait_for(&received, 1, 10000));
	for (e = 0; e < MEASURE_TRIES; e++) {
		s = measure(lc, 300);
		if (s.time_exits_per_s > exits_bar)
			exits_bar = s.time_exits_per_s;
	}
	dispatcher_join(lc);
	all = sirq_param_ranges(&nb);
	for (i = 0; i < nb; i++) {
		for (e = 0; e < 2 && is_lcore_param(all[i].name); e++) {
			const struct sirq_param_range *r = &all[i];
			uint64_t v = e == 0 ? r->min : r->max;

			/* The mask's largest: every vector the lcore has. */
			if (strcmp(r->name, "expedited_mask") == 0 && e == 1)
				v = SIRQ_BIT(SIRQ_HI) | SIRQ_BIT(SIRQ_TIMER) |
					SIRQ_BIT(SIRQ_NET_TX) |
					SIRQ_BIT(SIRQ_NET_RX) |
					SIRQ_BIT(SIRQ_TASKLET);
			p = def;
			cr_assert(sirq_lcore_set_params(lc, &p) == 0);
			dispatcher_launch(lc);
			cr_assert(wait_for(&received, 1, 10000));
			base = measure(lc, 300);
			field_set(&p, r->name, v);
			cr_assert(sirq_lcore_set_params(lc, &p) == 0,
				  "%s = %" PRIu64, r->name, v);
			s = measure_best(lc, 300, base.mpps / 2);
			if (s.mpps < base.mpps / 2)
				again_beside_the_defaults(lc, &def, &p, &base,
							  &s);
			/*
			 * The defaults' exits are ~250/s; a VM gap in their
			 * sample halved them once (123): the largest seen is
			 * the bar, and an extreme above it is measured again.
			 */
			if (base.time_exits_per_s > exits_bar)
				exits_bar = base.time_exits_per_s;
			if (s.time_exits_per_s > exits_bar * 1.5 + 1) {
				struct sample again = measure(lc, 300);

				if (again.time_exits_per_s < s.time_exits_per_s)
					s.time_exits_per_s = again.time_exits_per_s;
			}
			t0 = now_ns();
			dispatcher_join(lc);
			stop_ns = now_ns() - t0;
			if (stop_ns > worst_stop)
				worst_stop = stop_ns;
			cr_log_info("%s = %" PRIu64 ": %.2f Mpps (defaults %.2f), %.0f time_limit exits/s (defaults %.0f), stopped in %.1f ms",
				    r->name, v, s.mpps, base.mpps,
				    s.time_exits_per_s, base.time_exits_per_s,
				    (double)stop_ns / 1e6);
			cr_expect(!RATE_ASSERTED || s.mpps >= base.mpps / 2,
				  "%s = %" PRIu64 ": %.2f Mpps against %.2f",
				  r->name, v, s.mpps, base.mpps);
			cr_expect(s.time_exits_per_s <= exits_bar * 1.5 + 1,
				  "%s = %" PRIu64 ": %.0f time_limit exits/s against %.0f",
				  r->name, v, s.time_exits_per_s, exits_bar);
			cr_expect(stop_ns < 1000000000ull,
				  "%s = %" PRIu64 ": stopped in %" PRIu64 " ns",
				  r->name, v, stop_ns);
		}
	}
	cr_log_info("slowest stop: %.1f ms", (double)worst_stop / 1e6);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "mbufs leaked");
}

/*
 * A handler that raises itself again and runs 1 ms, under the largest
 * max_time_ns (1 s) and max_restart (1000): a pass would last 1 s. A
 * stop ends it at the next vector boundary. Counted from the stop, the
 * handler starts at most four times: once if the stop's store and the
 * pass's check cross, and once in each of the three bottom-half
 * sections the dispatcher opens on its way out (the remote calls'
 * close, the drain's two), whose passes are cut after one run too.
 * Without the cut: up to 900 more, the rest of the 1 s pass.
 */
static volatile bool stop_asked;
static uint64_t runs_total, runs_after_stop;

static void
busy_1ms(struct sirq_cpu *cpu, void *arg)
{
	uint64_t end = now_ns() + 1000000;
	unsigned int vec = (unsigned int)(uintptr_t)arg;

	__atomic_fetch_add(&runs_total, 1, __ATOMIC_RELEASE);
	if (stop_asked)
		__atomic_fetch_add(&runs_after_stop, 1, __ATOMIC_RELEASE);
	while (now_ns() < end)
		;
	sirq_raise(cpu, vec);
}

Test(lcore_params, a_stop_cuts_a_one_second_pass_after_the_handler_run,
     .timeout = 60)
{
	struct sirq_lcore_params p;
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	struct sirq_stats st;
	uint64_t t0, stop_ns;
	int vec;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	vec = sirq_vector_alloc(sirq_lcore_cpu(lc), busy_1ms, NULL, "busy");
	cr_assert(vec >= (int)SIRQ_NR_KERNEL_VECTORS);
	/* The handler's argument is its vector: register it again. */
	cr_assert_eq(sirq_vector_free(sirq_lcore_cpu(lc), (unsigned int)vec), 0);
	cr_assert_eq(sirq_register(sirq_lcore_cpu(lc), (unsigned int)vec,
				   busy_1ms, (void *)(uintptr_t)vec, "busy"), 0);
	cr_assert(sirq_lcore_get_params(lc, &p) == 0);
	p.engine.max_time_ns = sirq_param_range("max_time_ns")->max;
	p.engine.max_restart =
		(unsigned int)sirq_param_range("max_restart")->max;
	cr_assert(sirq_lcore_set_params(lc, &p) == 0);
	dispatcher_launch(lc);
	cr_assert_eq(sirq_raise(sirq_lcore_cpu(lc), (unsigned int)vec), 0);
	/* Well inside the first pass: 100 runs of its 1000. */
	cr_assert(wait_for(&runs_total, 100, 10000));
	t0 = now_ns();
	sirq_lcore_stop(lc);
	stop_asked = true;
	dispatcher_join(lc);
	stop_ns = now_ns() - t0;
	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	cr_log_info("stopped after %" PRIu64 " runs in %.1f ms (%" PRIu64 " runs before)",
		    runs_after_stop, (double)stop_ns / 1e6,
		    runs_total - runs_after_stop);
	cr_expect_leq(runs_after_stop, 4, "%" PRIu64 " handler runs after the stop",
		      runs_after_stop);
	cr_expect_geq(st.pass_exit[SIRQ_EXIT_STOP][SIRQ_CTX_INLINE] +
		      st.pass_exit[SIRQ_EXIT_STOP][SIRQ_CTX_WORKER], 1);
	sirq_lcore_free(lc);
}
