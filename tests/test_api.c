/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The API's contracts: registration, raising, ops.kick, parameters,
 * policy names, CPU creation.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Registration */

static void
never_called(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	cr_fail("a handler that must not run ran");
}

Test(api, register_refuses_hi_and_tasklet_with_ebusy)
{
	struct harness h;
	struct tprobe tp;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(int, sirq_register(h.cpu, SIRQ_HI, never_called, NULL,
					NULL), -EBUSY));
	cr_assert(eq(int, sirq_register(h.cpu, SIRQ_TASKLET, never_called, NULL,
					NULL), -EBUSY));

	/* The tasklet machinery still owns both. */
	tprobe_init(&tp, &h, 100);
	sirq_tasklet_hi_schedule(h.cpu, &tp.t);
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, tp.runs, 1));
	sirq_tasklet_schedule(h.cpu, &tp.t);
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, tp.runs, 2));
	harness_fini(&h);
}

Test(api, register_refuses_vector_32_and_a_null_handler_with_einval)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(int, sirq_register(h.cpu, SIRQ_MAX_VECTORS, never_called,
					NULL, NULL), -EINVAL));
	cr_assert(eq(int, sirq_register(h.cpu, SIRQ_NET_RX, NULL, NULL, NULL),
		     -EINVAL));
	cr_assert(eq(int, sirq_raise(h.cpu, SIRQ_NET_RX), -EINVAL));
	harness_fini(&h);
}

Test(api, every_vector_but_hi_and_tasklet_can_be_registered_and_run)
{
	struct harness h;
	unsigned int v;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	for (v = 0; v < SIRQ_MAX_VECTORS; v++) {
		if (v == SIRQ_HI || v == SIRQ_TASKLET)
			continue;
		probe_register(&h, v);
		cr_assert(eq(int, sirq_raise(h.cpu, v), 0));
	}
	sirq_irq_exit(h.cpu);

	stats(&h);
	for (v = 0; v < SIRQ_MAX_VECTORS; v++) {
		if (v == SIRQ_HI || v == SIRQ_TASKLET)
			continue;
		cr_assert(eq(u64, h.st.runs[v][SIRQ_CTX_INLINE], 1), "vector %u", v);
	}
	cr_assert(eq(uint, h.nlog, SIRQ_MAX_VECTORS - 2));
	harness_fini(&h);
}

Test(api, raise_of_an_unregistered_vector_returns_einval_and_marks_nothing)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(int, sirq_raise(h.cpu, SIRQ_NET_RX), -EINVAL));
	cr_assert(eq(int, sirq_raise_irqoff(h.cpu, SIRQ_NET_RX), -EINVAL));
	cr_assert(eq(int, sirq_raise(h.cpu, SIRQ_MAX_VECTORS), -EINVAL));
	cr_assert(eq(u32, sirq_pending(h.cpu), 0));
	cr_assert(eq(uint, h.kicks, 0));

	/* Not even the raise time: latency counts from the first valid raise. */
	probe_register(&h, SIRQ_NET_RX);
	clock_set(&h, T0 + MS(5));
	sirq_raise(h.cpu, SIRQ_NET_RX);
	clock_set(&h, T0 + MS(6));
	sirq_irq_exit(h.cpu);
	cr_assert(eq(u64, stats(&h)->latency[SIRQ_NET_RX].sum_ns, MS(1)));
	harness_fini(&h);
}

Test(api, vector_names_are_the_kernels_or_the_registered_ones)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, SIRQ_HI), "HI"));
	cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, SIRQ_NET_RX), "NET_RX"));
	cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, SIRQ_RCU), "RCU"));
	cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, VEC_APP2), "V12"));
	cr_assert(eq(ptr, (void *)sirq_vector_name(h.cpu, SIRQ_MAX_VECTORS), NULL));

	sirq_register(h.cpu, VEC_APP0, never_called, NULL,
		      "a-name-longer-than-fifteen");
	sirq_register(h.cpu, SIRQ_TIMER, never_called, NULL, NULL);
	cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, VEC_APP0),
		     "a-name-longer-t"));
	cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, SIRQ_TIMER), "TIMER"));
	harness_fini(&h);
}

/* ops.kick */

Test(api, raise_into_an_empty_mask_kicks_the_dispatcher)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(uint, h.kicks, 1));

	sirq_irq_exit(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);		/* empty again */
	cr_assert(eq(uint, h.kicks, 2));
	harness_fini(&h);
}

Test(api, raise_with_bits_already_pending_does_not_kick)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);
	probe_register(&h, SIRQ_NET_TX);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_raise(h.cpu, SIRQ_NET_TX);
	cr_assert(eq(uint, h.kicks, 1));
	harness_fini(&h);
}

Test(api, raise_irqoff_never_kicks)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);

	cr_assert(eq(int, sirq_raise_irqoff(h.cpu, SIRQ_NET_RX), 0));
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_NET_RX)));
	cr_assert(eq(uint, h.kicks, 0));
	harness_fini(&h);
}

/* Parameters and policies */

Test(api, params_default_are_the_kernels_values)
{
	struct sirq_params p;

	memset(&p, 0xa5, sizeof(p));
	sirq_params_default(&p);
	cr_assert(lt(int, p.policy, SIRQ_POLICY_MAX));
	cr_assert(eq(uint, p.max_restart, 10));
	cr_assert(eq(u64, p.max_time_ns, MS(2)));
	cr_assert(eq(u64, p.defer_window_ns, MS(2)));
	cr_assert(eq(u64, p.overload_window_ns, MS(100)));
	cr_assert(eq(u32, p.expedited_mask,
		     SIRQ_BIT(SIRQ_HI) | SIRQ_BIT(SIRQ_TASKLET)));
	cr_assert(eq(u32, p.tick_hz, SIRQ_TICK_HZ_DEFAULT));
	cr_assert(eq(u64, p.stall_threshold_ns, MS(8)));
	cr_assert(eq(int, sirq_params_check(&p), 0));
}

/* The engine's fields of the range table, by name. */
static bool
engine_field_set(struct sirq_params *p, const char *name, uint64_t v)
{
	if (strcmp(name, "max_restart") == 0)
		p->max_restart = (unsigned int)v;
	else if (strcmp(name, "max_time_ns") == 0)
		p->max_time_ns = v;
	else if (strcmp(name, "defer_window_ns") == 0)
		p->defer_window_ns = v;
	else if (strcmp(name, "overload_window_ns") == 0)
		p->overload_window_ns = v;
	else if (strcmp(name, "expedited_mask") == 0)
		p->expedited_mask = (uint32_t)v;
	else if (strcmp(name, "tick_hz") == 0)
		p->tick_hz = (uint32_t)v;
	else if (strcmp(name, "stall_threshold_ns") == 0)
		p->stall_threshold_ns = v;
	else
		return false;
	return true;
}

/* The largest value the field can hold, for "one past the range". */
static uint64_t
engine_field_limit(const char *name)
{
	if (strcmp(name, "max_restart") == 0)
		return UINT_MAX;
	if (strcmp(name, "expedited_mask") == 0 ||
	    strcmp(name, "tick_hz") == 0)
		return UINT32_MAX;
	return UINT64_MAX;
}

Test(api, the_range_table_has_every_tunable_once_with_its_message)
{
	static const char *const names[] = {
		"max_restart", "max_time_ns", "defer_window_ns",
		"overload_window_ns", "expedited_mask", "tick_hz",
		"stall_threshold_ns", "napi_weight", "netdev_budget",
		"netdev_budget_us", "thread_slice_us", "thread_runtime_us",
		"thread_period_us",
	};
	const struct sirq_param_range *all;
	unsigned int nb, i;

	all = sirq_param_ranges(&nb);
	cr_assert(eq(uint, nb, sizeof(names) / sizeof(names[0])));
	for (i = 0; i < nb; i++) {
		const struct sirq_param_range *r = sirq_param_range(names[i]);
		char want[160];

		cr_assert(ne(ptr, (void *)r, NULL), "%s", names[i]);
		cr_assert(r >= all && r < all + nb);
		cr_assert(r->min <= r->max, "%s", names[i]);
		snprintf(want, sizeof(want), "%s must be in %s", r->name,
			 r->range);
		cr_assert(eq(str, (char *)r->why, want));
		/* Where 0 is accepted, the table says what it means. */
		cr_assert(eq(int, r->min == 0, r->zero != NULL), "%s", r->name);
	}
	cr_assert(eq(ptr, (void *)sirq_param_range("max_time"), NULL));
	cr_assert(eq(ptr, (void *)sirq_param_range(NULL), NULL));
}

/*
 * The kernel's values sit well inside the caps: 2 ms and 10 restarts,
 * netdev_budget 300 in 2 ms.
 */
Test(api, the_kernels_defaults_are_inside_their_ranges)
{
	struct sirq_params p;

	sirq_params_default(&p);
	cr_assert(eq(ptr, (void *)sirq_params_why_invalid(&p), NULL));
	cr_assert(sirq_param_range("max_restart")->max >= 100 * p.max_restart);
	cr_assert(sirq_param_range("max_time_ns")->max >= 100 * p.max_time_ns);
	cr_assert(sirq_param_range("netdev_budget")->max >= 300);
	cr_assert(sirq_param_range("netdev_budget_us")->max >= 2000);
}

Test(api, params_check_accepts_each_fields_smallest_and_largest_value)
{
	const struct sirq_param_range *all;
	unsigned int nb, i, n = 0;
	struct sirq_params p;

	all = sirq_param_ranges(&nb);
	for (i = 0; i < nb; i++) {
		sirq_params_default(&p);
		if (!engine_field_set(&p, all[i].name, all[i].min))
			continue;	/* the binding's NAPI limits */
		cr_assert(eq(ptr, (void *)sirq_params_why_invalid(&p), NULL),
			  "%s = %" PRIu64, all[i].name, all[i].min);
		engine_field_set(&p, all[i].name, all[i].max);
		cr_assert(eq(int, sirq_params_check(&p), 0), "%s = %" PRIu64,
			  all[i].name, all[i].max);
		n++;
	}
	cr_assert(eq(uint, n, 7));
}

Test(api, params_check_refuses_each_value_outside_its_range_with_the_range)
{
	const struct sirq_param_range *all;
	unsigned int nb, i, refused = 0;
	struct sirq_params p;

	all = sirq_param_ranges(&nb);
	for (i = 0; i < nb; i++) {
		const struct sirq_param_range *r = &all[i];

		sirq_params_default(&p);
		if (r->min > 0 && engine_field_set(&p, r->name, r->min - 1)) {
			cr_assert(eq(str, (char *)sirq_params_why_invalid(&p),
				     (char *)r->why), "%s below", r->name);
			cr_assert(eq(int, sirq_params_check(&p), -EINVAL));
			refused++;
		}
		sirq_params_default(&p);
		if (r->max < engine_field_limit(r->name) &&
		    engine_field_set(&p, r->name, r->max + 1)) {
			cr_assert(eq(str, (char *)sirq_params_why_invalid(&p),
				     (char *)r->why), "%s above", r->name);
			refused++;
		}
		/* The field's own extreme: UINT64_MAX wrapped the deadline. */
		sirq_params_default(&p);
		if (r->max < engine_field_limit(r->name) &&
		    engine_field_set(&p, r->name, engine_field_limit(r->name)))
			cr_assert(eq(str, (char *)sirq_params_why_invalid(&p),
				     (char *)r->why), "%s at its type's max",
				  r->name);
	}
	/* Below: max_restart, max_time, stall; above: all but the mask. */
	cr_assert(eq(uint, refused, 3 + 6));

	cr_assert(eq(int, sirq_params_check(NULL), -EINVAL));
	sirq_params_default(&p);
	p.policy = SIRQ_POLICY_MAX;
	cr_assert(eq(int, sirq_params_check(&p), -EINVAL), "policy");
	sirq_params_default(&p);
	p.policy = (enum sirq_policy_id)-1;
	cr_assert(eq(int, sirq_params_check(&p), -EINVAL), "negative policy");
}

/* SOFTIRQ_NOW_MASK names vectors: a bit without a handler is refused. */
Test(api, an_expedited_mask_names_only_vectors_with_a_handler)
{
	struct sirq_params p;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	p = sirq_cpu_conf(h.cpu)->params;
	p.expedited_mask = SIRQ_BIT(SIRQ_HI) | SIRQ_BIT(VEC_APP0);
	cr_assert(eq(str, (char *)sirq_cpu_params_why_invalid(h.cpu, &p),
		     (char *)sirq_param_range("expedited_mask")->why));
	cr_assert(eq(int, sirq_cpu_set_params(h.cpu, &p), -EINVAL));
	cr_assert(eq(u32, sirq_cpu_conf(h.cpu)->params.expedited_mask,
		     SIRQ_NOW_MASK_DEFAULT), "nothing changed");
	probe_register(&h, VEC_APP0);
	cr_assert(eq(ptr, (void *)sirq_cpu_params_why_invalid(h.cpu, &p), NULL));
	cr_assert(eq(int, sirq_cpu_set_params(h.cpu, &p), 0));
	cr_assert(eq(str, (char *)sirq_cpu_params_why_invalid(NULL, &p),
		     "no CPU (NULL)"));
	harness_fini(&h);
}

Test(api, policy_names_round_trip)
{
	static const char *const names[SIRQ_POLICY_MAX] = {
		[SIRQ_POLICY_MAINLINE] = "mainline",
		[SIRQ_POLICY_KSOFTIRQD] = "ksoftirqd",
		[SIRQ_POLICY_KICINSKI] = "kicinski",
		[SIRQ_POLICY_DEFERRED] = "deferred",
		[SIRQ_POLICY_RT] = "rt",
		[SIRQ_POLICY_PUSHDOWN] = "pushdown",
		[SIRQ_POLICY_PUSHDOWN_LOCKED] = "pushdown-locked",
	};
	int id;

	for (id = 0; id < SIRQ_POLICY_MAX; id++) {
		cr_assert(eq(str, (char *)sirq_policy_name(id), (char *)names[id]));
		cr_assert(eq(int, sirq_policy_from_name(names[id]), id));
	}
}

Test(api, unknown_policy_names_and_ids_are_rejected)
{
	cr_assert(eq(int, sirq_policy_from_name(NULL), -EINVAL));
	cr_assert(eq(int, sirq_policy_from_name(NULL), -EINVAL));
	cr_assert(eq(int, sirq_policy_from_name("Mainline"), -EINVAL));
	cr_assert(eq(int, sirq_policy_from_name("kicinski "), -EINVAL));
	cr_assert(eq(int, sirq_policy_from_name("napi"), -EINVAL));
	cr_assert(eq(int, sirq_policy_from_name("threaded"), SIRQ_POLICY_DEFERRED),
		  "the old name of deferred");
	cr_assert(eq(ptr, (void *)sirq_policy_name(SIRQ_POLICY_MAX), NULL));
}

Test(api, enum_names_are_defined_and_out_of_range_is_null)
{
	cr_assert(eq(str, (char *)sirq_exit_name(SIRQ_EXIT_RESTART), "restart_limit"));
	cr_assert(eq(str, (char *)sirq_wake_name(SIRQ_WAKE_HANDOFF), "handoff"));
	cr_assert(eq(str, (char *)sirq_wake_name(SIRQ_WAKE_RECHECK), "recheck"));
	cr_assert(eq(str, (char *)sirq_wake_name(SIRQ_WAKE_RUN), "run"));
	cr_assert(eq(str, (char *)sirq_window_name(SIRQ_WINDOW_OVERLOAD), "overload"));
	cr_assert(eq(str, (char *)sirq_ctx_name(SIRQ_CTX_WORKER), "worker"));
	cr_assert(eq(ptr, (void *)sirq_exit_name(SIRQ_EXIT_MAX), NULL));
	cr_assert(eq(ptr, (void *)sirq_wake_name(SIRQ_WAKE_MAX), NULL));
	cr_assert(eq(ptr, (void *)sirq_window_name(SIRQ_WINDOW_MAX), NULL));
	cr_assert(eq(ptr, (void *)sirq_ctx_name(SIRQ_CTX_MAX), NULL));
}

/* CPU creation */

static uint64_t
zero_clock(void *ctx)
{
	(void)ctx;
	return 0;
}

Test(api, cpu_create_without_a_clock_fails_with_einval)
{
	struct sirq_cpu_conf conf = { 0 };

	sirq_params_default(&conf.params);
	errno = 0;
	cr_assert(eq(ptr, sirq_cpu_create(&conf), NULL));
	cr_assert(eq(int, errno, EINVAL));
}

Test(api, cpu_create_with_invalid_params_fails_with_einval)
{
	struct sirq_cpu_conf conf = { 0 };

	sirq_params_default(&conf.params);
	conf.params.max_restart = 0;
	conf.ops.clock_ns = zero_clock;
	errno = 0;
	cr_assert(eq(ptr, sirq_cpu_create(&conf), NULL));
	cr_assert(eq(int, errno, EINVAL));
}

Test(api, cpu_init_uses_aligned_caller_memory_and_refuses_misaligned)
{
	struct sirq_cpu_conf conf = { 0 };
	size_t size = sirq_cpu_memsize();
	char *mem;

	sirq_params_default(&conf.params);
	conf.ops.clock_ns = zero_clock;
	mem = aligned_alloc(64, (size + 64 + 63) / 64 * 64);
	cr_assert(ne(ptr, mem, NULL));

	cr_assert(eq(ptr, (void *)sirq_cpu_init(mem, &conf), mem));
	errno = 0;
	cr_assert(eq(ptr, sirq_cpu_init(mem + 8, &conf), NULL));
	cr_assert(eq(int, errno, EINVAL));
	free(mem);
}

Test(api, cpu_conf_keeps_a_copy_of_the_name)
{
	struct sirq_cpu_conf conf = { 0 };
	struct sirq_cpu *cpu;
	char name[16] = "lcore3";

	sirq_params_default(&conf.params);
	conf.ops.clock_ns = zero_clock;
	conf.name = name;
	conf.id = 3;
	cpu = sirq_cpu_create(&conf);
	cr_assert(ne(ptr, cpu, NULL));
	name[0] = 'X';
	cr_assert(eq(str, (char *)sirq_cpu_conf(cpu)->name, "lcore3"));
	cr_assert(eq(uint, sirq_cpu_conf(cpu)->id, 3));
	sirq_cpu_free(cpu);

	conf.name = NULL;
	cpu = sirq_cpu_create(&conf);
	cr_assert(ne(ptr, cpu, NULL));
	cr_assert(eq(str, (char *)sirq_cpu_conf(cpu)->name, "cpu3"));
	sirq_cpu_free(cpu);
}

Test(api, set_params_switches_the_policy_of_a_live_cpu)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_KSOFTIRQD);
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_worker_wakeup(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);

	cr_assert(eq(int, sirq_cpu_set_params(h.cpu, &p), 0));
	cr_assert(eq(int, sirq_cpu_conf(h.cpu)->params.policy, SIRQ_POLICY_KSOFTIRQD));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, rx->runs, 0));
	harness_fini(&h);
}

Test(api, set_params_refuses_invalid_params_and_changes_nothing)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_KSOFTIRQD);
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_worker_wakeup(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);

	p.max_time_ns = 0;
	cr_assert(eq(int, sirq_cpu_set_params(h.cpu, &p), -EINVAL));
	cr_assert(eq(int, sirq_cpu_conf(h.cpu)->params.policy, SIRQ_POLICY_MAINLINE));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	harness_fini(&h);
}

/*
 * Every public engine function takes NULL without crashing: the ones
 * that return a status say -EINVAL (or NULL / false / 0), the void ones
 * do nothing.
 */
Test(api, every_function_refuses_null_arguments)
{
	struct sirq_cpu_conf conf = { .name = "null" };
	struct sirq_tasklet t;
	struct sirq_stats st;

	conf.params = harness_params(SIRQ_POLICY_MAINLINE);
	errno = 0;
	cr_assert(eq(ptr, sirq_cpu_create(NULL), NULL));
	cr_assert(eq(int, errno, EINVAL));
	errno = 0;
	cr_assert(eq(ptr, sirq_cpu_init(NULL, &conf), NULL));
	cr_assert(eq(int, errno, EINVAL));
	sirq_params_default(NULL);
	cr_assert(eq(int, sirq_params_check(NULL), -EINVAL));
	cr_assert(ne(ptr, (void *)sirq_params_why_invalid(NULL), NULL));
	cr_assert(eq(ptr, (void *)sirq_cpu_conf(NULL), NULL));
	cr_assert(eq(int, sirq_cpu_set_params(NULL, &conf.params), -EINVAL));
	cr_assert(eq(int, sirq_register(NULL, VEC_APP0, never_called, NULL,
					NULL), -EINVAL));
	cr_assert(eq(int, sirq_vector_alloc(NULL, never_called, NULL, NULL),
		     -EINVAL));
	cr_assert(eq(ptr, (void *)sirq_vector_name(NULL, 0), NULL));
	cr_assert(eq(int, sirq_policy_from_name(NULL), -EINVAL));
	cr_assert(eq(int, sirq_raise(NULL, VEC_APP0), -EINVAL));
	cr_assert(eq(int, sirq_raise_irqoff(NULL, VEC_APP0), -EINVAL));
	cr_assert(eq(u32, sirq_pending(NULL), 0));
	sirq_set_need_resched(NULL, true);
	cr_assert(not(sirq_need_resched(NULL)));
	cr_assert(not(sirq_irq_enter(NULL)));
	cr_assert(eq(int, sirq_irq_exit(NULL), SIRQ_IRQ_EXIT_IDLE));
	cr_assert(eq(int, sirq_worker_run(NULL), SIRQ_WORKER_EXIT));
	sirq_worker_wakeup(NULL);
	sirq_worker_park(NULL);
	sirq_worker_unpark(NULL);
	cr_assert(eq(int, sirq_worker_state(NULL), SIRQ_WORKER_PARKED));
	sirq_bh_disable(NULL);
	cr_assert(eq(int, sirq_bh_enable(NULL), -EINVAL));
	st.lock_busy = 7;
	sirq_stats_get(NULL, &st);
	cr_assert(eq(u64, st.lock_busy, 0));
	sirq_stats_reset(NULL);
	cr_assert(eq(u64, sirq_latency_quantile(NULL, 0.5), 0));
	sirq_tasklet_init(NULL, NULL, NULL);
	sirq_tasklet_init(&t, NULL, NULL);
	cr_assert(not(sirq_tasklet_schedule(NULL, &t)));
	cr_assert(not(sirq_tasklet_hi_schedule(NULL, NULL)));
	sirq_tasklet_disable(NULL);
	sirq_tasklet_disable_nosync(NULL);
	cr_assert(eq(int, sirq_tasklet_enable(NULL), -EINVAL));
	sirq_tasklet_kill(NULL);
	cr_assert(not(sirq_tasklet_is_scheduled(NULL)));
	sirq_tasklet_set_bh_safe(NULL, true);
	cr_assert(eq(int, sirq_register_flags(NULL, VEC_APP0, never_called,
					      NULL, NULL, 0), -EINVAL));
	cr_assert(eq(int, sirq_thread_ops_set(NULL, NULL), -EINVAL));
	cr_assert(eq(u32, sirq_threads_wanted(NULL), 0));
	cr_assert(eq(int, sirq_thread_of(NULL, 0), -EINVAL));
	cr_assert(eq(int, sirq_thread_attach(NULL, 0), -EINVAL));
	cr_assert(eq(int, sirq_thread_detach(NULL, 0), -EINVAL));
	cr_assert(eq(int, sirq_thread_run(NULL, 0), SIRQ_WORKER_EXIT));
	cr_assert(eq(int, sirq_thread_state(NULL, 0), SIRQ_WORKER_PARKED));
	sirq_cpu_free(NULL);
}

Test(api, a_tasklet_without_a_function_is_not_scheduled)
{
	struct sirq_tasklet t;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	sirq_tasklet_init(&t, NULL, NULL);
	cr_assert(not(sirq_tasklet_schedule(h.cpu, &t)));
	cr_assert(eq(u32, sirq_pending(h.cpu), 0));
	harness_fini(&h);
}

Test(api, vector_alloc_hands_out_each_free_application_vector_once)
{
	struct harness h;
	unsigned int n = 0;
	int v, prev = -1;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	/* One taken by hand first: alloc skips it. */
	cr_assert(eq(int, sirq_register(h.cpu, VEC_APP0, never_called, NULL,
					NULL), 0));
	while ((v = sirq_vector_alloc(h.cpu, never_called, NULL, "mine")) >= 0) {
		cr_assert(v >= (int)SIRQ_NR_KERNEL_VECTORS && v != VEC_APP0 &&
			  v > prev, "vector %d", v);
		cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, (unsigned int)v),
			     "mine"));
		prev = v;
		n++;
	}
	cr_assert(eq(int, v, -ENOSPC));
	cr_assert(eq(uint, n, SIRQ_MAX_VECTORS - SIRQ_NR_KERNEL_VECTORS - 1));
	cr_assert(eq(int, sirq_vector_alloc(h.cpu, NULL, NULL, NULL), -EINVAL));
	harness_fini(&h);
}

/* Vectors you can see and give back. */

static void
count_run(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(*(unsigned int *)arg)++;
}

Test(api, a_second_register_on_a_vector_is_refused_and_keeps_the_first)
{
	unsigned int first = 0, second = 0;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(int, sirq_register(h.cpu, VEC_APP0, count_run, &first,
					"first"), 0));
	cr_assert(eq(int, sirq_register(h.cpu, VEC_APP0, count_run, &second,
					"second"), -EBUSY));
	cr_assert(eq(int, sirq_register_flags(h.cpu, VEC_APP0, count_run,
					      &second, NULL, SIRQ_VEC_BH_SAFE),
		     -EBUSY));
	cr_assert(eq(int, sirq_register(h.cpu, SIRQ_BLOCK, count_run, &first,
					NULL), 0));
	cr_assert(eq(int, sirq_register(h.cpu, SIRQ_BLOCK, count_run, &second,
					NULL), -EBUSY), "a kernel vector too");
	cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, VEC_APP0), "first"));
	sirq_raise(h.cpu, VEC_APP0);
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, first, 1));
	cr_assert(eq(uint, second, 0));
	harness_fini(&h);
}

Test(api, unregister_gives_the_vector_back_and_its_raise_then_fails)
{
	unsigned int runs = 0, again = 0;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(int, sirq_register(h.cpu, VEC_APP0, count_run, &runs,
					"mine"), 0));
	cr_assert(eq(int, sirq_unregister(h.cpu, VEC_APP0), 0));
	cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, VEC_APP0), "V10"));
	cr_assert(eq(int, sirq_raise(h.cpu, VEC_APP0), -EINVAL));
	cr_assert(eq(int, sirq_unregister(h.cpu, VEC_APP0), -ENOENT));
	cr_assert(eq(int, sirq_register(h.cpu, VEC_APP0, count_run, &again,
					NULL), 0));
	sirq_raise(h.cpu, VEC_APP0);
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, runs, 0));
	cr_assert(eq(uint, again, 1));

	/* A kernel vector gets its kernel name back. */
	cr_assert(eq(int, sirq_register(h.cpu, SIRQ_BLOCK, count_run, &runs,
					"blk"), 0));
	cr_assert(eq(int, sirq_unregister(h.cpu, SIRQ_BLOCK), 0));
	cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, SIRQ_BLOCK), "BLOCK"));
	harness_fini(&h);
}

Test(api, unregister_refuses_a_pending_vector_and_the_tasklets)
{
	unsigned int runs = 0;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(int, sirq_register(h.cpu, VEC_APP0, count_run, &runs,
					NULL), 0));
	cr_assert(eq(int, sirq_raise(h.cpu, VEC_APP0), 0));
	cr_assert(eq(int, sirq_unregister(h.cpu, VEC_APP0), -EBUSY));
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, runs, 1), "the pending run is not lost");
	cr_assert(eq(int, sirq_unregister(h.cpu, VEC_APP0), 0));

	cr_assert(eq(int, sirq_unregister(h.cpu, SIRQ_HI), -EBUSY));
	cr_assert(eq(int, sirq_unregister(h.cpu, SIRQ_TASKLET), -EBUSY));
	cr_assert(eq(int, sirq_unregister(h.cpu, SIRQ_MAX_VECTORS), -EINVAL));
	cr_assert(eq(int, sirq_unregister(NULL, VEC_APP0), -EINVAL));
	harness_fini(&h);
}

/* From inside a pass the running vector is unknown: refused, no wait. */
static void
unregister_self(struct probe *p)
{
	cr_assert(eq(int, sirq_unregister(p->h->cpu, p->vec), -EBUSY));
}

Test(api, unregister_from_a_handler_is_refused_without_waiting)
{
	struct harness h;
	struct probe *p;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	p = probe_register(&h, VEC_APP0);
	p->hook = unregister_self;
	sirq_raise(h.cpu, VEC_APP0);
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, p->runs, 1));
	harness_fini(&h);
}

Test(api, vector_free_gives_an_allocated_vector_to_the_next_alloc)
{
	unsigned int runs = 0;
	struct harness h;
	int v, w;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	v = sirq_vector_alloc(h.cpu, count_run, &runs, "a");
	cr_assert(v >= (int)SIRQ_NR_KERNEL_VECTORS);
	while (sirq_vector_alloc(h.cpu, count_run, &runs, NULL) >= 0)
		;
	cr_assert(eq(int, sirq_vector_alloc(h.cpu, count_run, &runs, NULL),
		     -ENOSPC));
	cr_assert(eq(int, sirq_vector_free(h.cpu, (unsigned int)v), 0));
	w = sirq_vector_alloc(h.cpu, count_run, &runs, "b");
	cr_assert(eq(int, w, v));
	cr_assert(eq(str, (char *)sirq_vector_name(h.cpu, (unsigned int)w), "b"));
	cr_assert(eq(int, sirq_vector_free(h.cpu, SIRQ_NET_RX), -EINVAL),
		  "not an application vector");
	cr_assert(eq(int, sirq_vector_free(h.cpu, SIRQ_MAX_VECTORS), -EINVAL));
	harness_fini(&h);
}

Test(api, vector_alloc_flags_refuses_an_unknown_flag)
{
	unsigned int runs = 0;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(int, sirq_vector_alloc_flags(h.cpu, count_run, &runs,
						  NULL, 2), -EINVAL));
	cr_assert(eq(int, sirq_vector_alloc_flags(h.cpu, NULL, &runs, NULL,
						  0), -EINVAL));
	cr_assert(eq(int, sirq_vector_alloc_flags(NULL, count_run, &runs,
						  NULL, 0), -EINVAL));
	harness_fini(&h);
}

/*
 * While the CPU runs, a thread on another CPU (ops.remote_caller
 * -EXDEV) changes no registration; before the launch (1) and on the
 * CPU's own threads (0) it may.
 */
Test(api, registration_from_another_cpus_thread_while_it_runs_is_refused)
{
	unsigned int runs = 0;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(int, sirq_register(h.cpu, VEC_APP0, count_run, &runs,
					NULL), 0));
	h.remote_caller = -EXDEV;
	cr_assert(eq(int, sirq_register(h.cpu, VEC_APP1, count_run, &runs,
					NULL), -EBUSY));
	cr_assert(eq(int, sirq_vector_alloc(h.cpu, count_run, &runs, NULL),
		     -EBUSY));
	cr_assert(eq(int, sirq_vector_alloc_flags(h.cpu, count_run, &runs,
						  NULL, SIRQ_VEC_BH_SAFE),
		     -EBUSY));
	cr_assert(eq(int, sirq_unregister(h.cpu, VEC_APP0), -EBUSY));
	cr_assert(eq(int, sirq_vector_free(h.cpu, VEC_APP0), -EBUSY));
	cr_assert(eq(int, sirq_raise(h.cpu, VEC_APP1), -EINVAL), "not registered");
	h.remote_caller = 1;
	cr_assert(eq(int, sirq_register(h.cpu, VEC_APP1, count_run, &runs,
					NULL), 0));
	h.remote_caller = 0;
	cr_assert(eq(int, sirq_unregister(h.cpu, VEC_APP0), 0));
	sirq_raise(h.cpu, VEC_APP1);
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, runs, 1));
	harness_fini(&h);
}

/* The release the library was built from, the one meson.build names. */
Test(api, version_is_the_projects)
{
	const char *want = getenv("SIRQ_PROJECT_VERSION");

	cr_assert(want != NULL, "SIRQ_PROJECT_VERSION unset: run from meson test");
	cr_assert_str_eq(sirq_version(), want);
}
