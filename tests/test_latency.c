/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Raise-to-run latency: from the first raise since the vector last ran to
 * the start of its handler; a log2 histogram (bucket b holds [2^b,
 * 2^(b+1)) ns, bucket 0 also holds 0), the maximum, and stalls at or
 * above stall_threshold_ns.
 */

#include <string.h>

#include "harness.h"

/* Raise @p vec at the current fake time and run it @p delay_ns later. */
static void
raise_and_run_after(struct harness *h, unsigned int vec, uint64_t delay_ns)
{
	cr_assert(eq(int, sirq_raise(h->cpu, vec), 0));
	clock_advance(h, delay_ns);
	cr_assert(eq(int, sirq_irq_exit(h->cpu), SIRQ_IRQ_EXIT_RAN));
}

static uint64_t
hist_total(const struct sirq_latency *lat)
{
	uint64_t n = 0;
	unsigned int b;

	for (b = 0; b < SIRQ_LAT_BUCKETS; b++)
		n += lat->hist[b];
	return n;
}

Test(latency, run_records_one_sample_of_the_time_since_the_raise)
{
	const struct sirq_latency *lat;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);

	raise_and_run_after(&h, SIRQ_NET_RX, 1500);	/* T0 -> T0 + 1.5 us */

	lat = &stats(&h)->latency[SIRQ_NET_RX];
	cr_assert(eq(u64, lat->samples, 1));
	cr_assert(eq(u64, lat->sum_ns, 1500));
	cr_assert(eq(u64, lat->max_ns, 1500));
	cr_assert(eq(u64, lat->hist[10], 1));		/* [1024, 2048) */
	cr_assert(eq(u64, hist_total(lat), 1));
	cr_assert(eq(u64, lat->stalls, 0));
	cr_assert(eq(u64, h.st.latency[SIRQ_NET_TX].samples, 0));
	harness_fini(&h);
}

Test(latency, second_raise_before_the_run_keeps_the_first_raise_time)
{
	const struct sirq_latency *lat;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);

	sirq_raise(h.cpu, SIRQ_NET_RX);			/* T0 */
	clock_set(&h, T0 + MS(1));
	sirq_raise(h.cpu, SIRQ_NET_RX);			/* T0 + 1 ms */
	clock_set(&h, T0 + MS(3));
	sirq_irq_exit(h.cpu);				/* runs at T0 + 3 ms */

	lat = &stats(&h)->latency[SIRQ_NET_RX];
	cr_assert(eq(u64, lat->samples, 1));
	cr_assert(eq(u64, lat->sum_ns, MS(3)));
	harness_fini(&h);
}

Test(latency, raise_after_a_run_starts_a_new_measurement)
{
	const struct sirq_latency *lat;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);

	raise_and_run_after(&h, SIRQ_NET_RX, MS(3));	/* T0 -> T0 + 3 ms */
	clock_advance(&h, MS(2));
	raise_and_run_after(&h, SIRQ_NET_RX, 100);	/* T0 + 5 ms -> +100 ns */

	lat = &stats(&h)->latency[SIRQ_NET_RX];
	cr_assert(eq(u64, lat->samples, 2));
	cr_assert(eq(u64, lat->sum_ns, MS(3) + 100));
	cr_assert(eq(u64, lat->max_ns, MS(3)));
	harness_fini(&h);
}

Test(latency, bucket_b_holds_2_pow_b_up_to_2_pow_b_plus_1_and_bucket_0_holds_0_and_1)
{
	static const struct {
		uint64_t ns;
		unsigned int bucket;
	} cases[] = {
		{ 0, 0 }, { 1, 0 }, { 2, 1 }, { 3, 1 }, { 4, 2 },
		{ 1023, 9 }, { 1024, 10 }, { MS(8) - 1, 22 }, { MS(8), 22 },
		{ (UINT64_C(1) << 39) - 1, 38 }, { UINT64_C(1) << 39, 39 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sirq_latency *lat;
		struct harness h;

		harness_init(&h, SIRQ_POLICY_MAINLINE);
		probe_register(&h, SIRQ_NET_RX);
		raise_and_run_after(&h, SIRQ_NET_RX, cases[i].ns);

		lat = &stats(&h)->latency[SIRQ_NET_RX];
		cr_assert(eq(u64, lat->hist[cases[i].bucket], 1),
			  "%llu ns not in bucket %u",
			  (unsigned long long)cases[i].ns, cases[i].bucket);
		cr_assert(eq(u64, hist_total(lat), 1));
		harness_fini(&h);
	}
}

Test(latency, latencies_beyond_the_last_bucket_land_in_the_open_ended_bucket)
{
	const struct sirq_latency *lat;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);

	raise_and_run_after(&h, SIRQ_NET_RX, UINT64_C(1) << 40);
	raise_and_run_after(&h, SIRQ_NET_RX, UINT64_C(1) << 45);

	lat = &stats(&h)->latency[SIRQ_NET_RX];
	cr_assert(eq(u64, lat->hist[SIRQ_LAT_BUCKETS - 1], 2));
	cr_assert(eq(u64, hist_total(lat), 2));
	cr_assert(eq(u64, lat->max_ns, UINT64_C(1) << 45));
	harness_fini(&h);
}

Test(latency, latency_just_below_the_8ms_stall_threshold_is_not_a_stall)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);

	raise_and_run_after(&h, SIRQ_NET_RX, MS(8) - 1);	/* 7.999999 ms */
	cr_assert(eq(u64, stats(&h)->latency[SIRQ_NET_RX].samples, 1));
	cr_assert(eq(u64, h.st.latency[SIRQ_NET_RX].stalls, 0));
	harness_fini(&h);
}

Test(latency, latency_of_exactly_8ms_is_a_stall)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);

	raise_and_run_after(&h, SIRQ_NET_RX, MS(8));
	cr_assert(eq(u64, stats(&h)->latency[SIRQ_NET_RX].stalls, 1));
	harness_fini(&h);
}

Test(latency, configured_stall_threshold_is_used)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct harness h;

	p.stall_threshold_ns = MS(1);
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	probe_register(&h, SIRQ_NET_RX);

	raise_and_run_after(&h, SIRQ_NET_RX, MS(1) - 1);
	cr_assert(eq(u64, stats(&h)->latency[SIRQ_NET_RX].stalls, 0));
	raise_and_run_after(&h, SIRQ_NET_RX, MS(1));
	cr_assert(eq(u64, stats(&h)->latency[SIRQ_NET_RX].stalls, 1));
	harness_fini(&h);
}

Test(latency, latency_ends_where_the_handler_starts_not_where_it_ends)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->work_ns = MS(5);

	raise_and_run_after(&h, SIRQ_NET_RX, 100);
	cr_assert(eq(u64, stats(&h)->latency[SIRQ_NET_RX].sum_ns, 100));
	cr_assert(eq(u64, clock_now(&h), T0 + 100 + MS(5)));
	harness_fini(&h);
}

Test(latency, vector_behind_a_slow_handler_waits_for_it)
{
	struct harness h;
	struct probe *tx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tx = probe_register(&h, SIRQ_NET_TX);
	probe_register(&h, SIRQ_NET_RX);
	tx->work_ns = MS(1);

	/* Both raised at T0 and the pass starts at T0; NET_TX goes first. */
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_raise(h.cpu, SIRQ_NET_TX);
	sirq_irq_exit(h.cpu);

	stats(&h);
	cr_assert(eq(u64, h.st.latency[SIRQ_NET_TX].sum_ns, 0));
	cr_assert(eq(u64, h.st.latency[SIRQ_NET_TX].hist[0], 1));
	cr_assert(eq(u64, h.st.latency[SIRQ_NET_RX].sum_ns, MS(1)));
	harness_fini(&h);
}

Test(latency, deferred_work_waits_until_the_worker_runs_it)
{
	const struct sirq_latency *lat;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	probe_register(&h, SIRQ_NET_RX);
	sirq_worker_wakeup(h.cpu);

	sirq_raise(h.cpu, SIRQ_NET_RX);			/* T0 */
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	clock_set(&h, T0 + MS(10));			/* the worker gets the CPU */
	worker_run_until_sleep(&h, 10);

	lat = &stats(&h)->latency[SIRQ_NET_RX];
	cr_assert(eq(u64, lat->samples, 1));
	cr_assert(eq(u64, lat->max_ns, MS(10)));
	cr_assert(eq(u64, lat->stalls, 1));
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 1));
	harness_fini(&h);
}

Test(latency, quantile_without_samples_is_zero)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	cr_assert(eq(u64, sirq_latency_quantile(&stats(&h)->latency[SIRQ_NET_RX], 0.5), 0));
	harness_fini(&h);
}

Test(latency, quantile_is_the_upper_bound_of_the_bucket_that_holds_it)
{
	const struct sirq_latency *lat;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);
	raise_and_run_after(&h, SIRQ_NET_RX, 100);	/* bucket 6: [64, 128) */
	raise_and_run_after(&h, SIRQ_NET_RX, 1000);	/* bucket 9: [512, 1024) */
	raise_and_run_after(&h, SIRQ_NET_RX, 5000);	/* bucket 12: [4096, 8192) */

	lat = &stats(&h)->latency[SIRQ_NET_RX];
	cr_assert(eq(u64, sirq_latency_quantile(lat, 0.0), 127));
	cr_assert(eq(u64, sirq_latency_quantile(lat, 0.5), 1023));
	/* The top bucket's bound is past the maximum: the maximum. */
	cr_assert(eq(u64, sirq_latency_quantile(lat, 1.0), 5000));
	cr_assert(eq(u64, sirq_latency_quantile(lat, 0.99), 5000));
	/* Out of [0, 1]: clamped. */
	cr_assert(eq(u64, sirq_latency_quantile(lat, -1.0), 127));
	cr_assert(eq(u64, sirq_latency_quantile(lat, 2.0), 5000));
	harness_fini(&h);
}

Test(latency, quantile_in_the_open_ended_bucket_is_the_maximum)
{
	const struct sirq_latency *lat;
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);
	raise_and_run_after(&h, SIRQ_NET_RX, UINT64_C(1) << 50);

	lat = &stats(&h)->latency[SIRQ_NET_RX];
	cr_assert(eq(u64, sirq_latency_quantile(lat, 0.5), UINT64_C(1) << 50));
	harness_fini(&h);
}

Test(latency, raise_at_clock_zero_still_records_its_latency)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_NET_RX);
	clock_set(&h, 0);

	raise_and_run_after(&h, SIRQ_NET_RX, US(3));
	cr_assert(eq(u64, stats(&h)->latency[SIRQ_NET_RX].samples, 1));
	/* The engine may stamp 1 ns: 0 is its "no raise recorded". */
	cr_assert(h.st.latency[SIRQ_NET_RX].max_ns >= US(3) - 1 &&
		  h.st.latency[SIRQ_NET_RX].max_ns <= US(3),
		  "max_ns %llu", (unsigned long long)h.st.latency[SIRQ_NET_RX].max_ns);
	harness_fini(&h);
}

Test(latency, stats_reset_zeroes_every_counter)
{
	static const struct sirq_stats zero;
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	raise_and_run_after(&h, SIRQ_NET_RX, MS(9));
	cr_assert(eq(u64, stats(&h)->latency[SIRQ_NET_RX].stalls, 1));

	sirq_stats_reset(h.cpu);
	cr_assert(eq(int, memcmp(stats(&h), &zero, sizeof(zero)), 0));
	harness_fini(&h);
}
