/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Dispatcher cost on a real lcore, then worker wake-up latency.
 *
 * First the empty iteration: a poll-mode dispatcher with no queue and
 * nothing pending, cycles per iteration over EMPTY_RUN_MS. Then
 * raise-to-handler inline: under `mainline` the dispatcher runs a vector
 * raised from another thread itself, so its latency is the dispatcher
 * noticing the raise plus the handler call.
 *
 * Worker wake-up latency on real threads: under `deferred` every handler
 * runs in sirqd, so the raise-to-run latency of a vector raised from
 * another thread is the dispatcher noticing the raise, the eventfd
 * wake-up of an idle sirqd, and its first pass. Measured for sirqd on
 * the dispatcher's CPU and on another one, in poll and irq mode, from
 * the engine's own latency histogram.
 *
 *   sirq-wakeup -l 0,1 --no-huge -m 256 --no-pci --file-prefix=wake [-- ROUNDS]
 *
 * The dispatcher runs on lcore 1; the raising thread is the main lcore.
 * Each round waits until sirqd is idle and then SETTLE_US more, so that
 * it is asleep in its eventfd read, before raising: every round is a
 * wake-up from sleep ("wakeups" counts them).
 */

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <sirq.h>

#define VEC_PING SIRQ_NR_KERNEL_VECTORS
#define DEFAULT_ROUNDS 20000
#define ROUND_TIMEOUT_S 1
#define SETTLE_US 50	/* from "idle" to blocked in read(): a few us */
#define EMPTY_RUN_MS 1000

static uint64_t pongs;

static void
pong(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	__atomic_fetch_add(&pongs, 1, __ATOMIC_RELEASE);
}

static int
empty_iteration(unsigned int lcore)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore_stats ls;
	struct sirq_lcore *lc;
	uint64_t t0, t1;

	sirq_lcore_conf_default(&conf);
	lc = sirq_lcore_create(lcore, &conf);
	if (lc == NULL)
		return -1;
	t0 = rte_get_tsc_cycles();
	rte_eal_remote_launch(sirq_lcore_main, lc, lcore);
	rte_delay_us_sleep(EMPTY_RUN_MS * 1000);
	sirq_lcore_stop(lc);
	rte_eal_wait_lcore(lcore);
	t1 = rte_get_tsc_cycles();
	sirq_lcore_stats_get(lc, &ls);
	printf("empty iteration (poll mode, no queue, nothing pending): %" PRIu64
	       " iterations in %.3f s: %.1f cycles, %.1f ns each\n",
	       ls.iterations, (double)(t1 - t0) / (double)rte_get_tsc_hz(),
	       (double)(t1 - t0) / (double)ls.iterations,
	       (double)(t1 - t0) / (double)ls.iterations * 1e9 /
	       (double)rte_get_tsc_hz());
	sirq_lcore_free(lc);
	return 0;
}

/*
 * @policy deferred: every round wakes sirqd from its sleep; mainline: the
 * dispatcher runs the handler inline.
 */
static int
measure(unsigned int lcore, enum sirq_policy_id policy, enum sirq_mode mode,
	const char *worker_cpus, unsigned int rounds)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	struct sirq_stats st;
	const struct sirq_latency *lat;
	double ghz = (double)rte_get_tsc_hz() / 1e9;
	unsigned int i;

	sirq_lcore_conf_default(&conf);
	conf.params.policy = policy;
	conf.mode = mode;
	conf.worker_cpus = worker_cpus;
	lc = sirq_lcore_create(lcore, &conf);
	if (lc == NULL || sirq_register(sirq_lcore_cpu(lc), VEC_PING, pong,
					NULL, "PING") != 0) {
		fprintf(stderr, "sirq-wakeup: set-up failed\n");
		return -1;
	}
	pongs = 0;
	rte_eal_remote_launch(sirq_lcore_main, lc, lcore);
	for (i = 1; i <= rounds; i++) {
		uint64_t deadline = rte_get_tsc_cycles() +
			ROUND_TIMEOUT_S * rte_get_tsc_hz();

		while (sirq_worker_state(sirq_lcore_cpu(lc)) != SIRQ_WORKER_IDLE)
			sched_yield();
		rte_delay_us_sleep(SETTLE_US);
		sirq_raise(sirq_lcore_cpu(lc), VEC_PING);
		while (__atomic_load_n(&pongs, __ATOMIC_ACQUIRE) < i) {
			if (rte_get_tsc_cycles() > deadline) {
				fprintf(stderr, "sirq-wakeup: round %u lost\n", i);
				sirq_lcore_stop(lc);
				rte_eal_wait_lcore(lcore);
				return -1;
			}
			sched_yield();
		}
	}
	sirq_lcore_stop(lc);
	rte_eal_wait_lcore(lcore);
	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	lat = &st.latency[VEC_PING];
	printf("%-9s %-5s %-15s %8" PRIu64 " %9.1f %9.1f %9.1f %9.1f %10.0f %8" PRIu64 "\n",
	       sirq_policy_name(policy), mode == SIRQ_MODE_IRQ ? "irq" : "poll",
	       policy == SIRQ_POLICY_DEFERRED ? worker_cpus : "-",
	       lat->samples, (double)lat->sum_ns / (double)lat->samples / 1e3,
	       sirq_latency_quantile(lat, 0.5) / 1e3,
	       sirq_latency_quantile(lat, 0.99) / 1e3, lat->max_ns / 1e3,
	       (double)lat->sum_ns / (double)lat->samples * ghz,
	       st.wakeups[SIRQ_WAKE_HANDOFF]);
	sirq_lcore_free(lc);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned int rounds = DEFAULT_ROUNDS, lcore, main_cpu, lcore_cpu;
	char same[16], other[16];
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		return 1;
	if (argc - ret > 1)
		rounds = (unsigned int)strtoul(argv[ret + 1], NULL, 10);
	lcore = rte_get_next_lcore(-1, 1, 0);
	if (lcore >= RTE_MAX_LCORE || rounds == 0) {
		fprintf(stderr, "sirq-wakeup: needs two lcores (-l 0,1) and rounds > 0\n");
		return 2;
	}
	lcore_cpu = rte_lcore_to_cpu_id((int)lcore);
	main_cpu = rte_lcore_to_cpu_id((int)rte_get_main_lcore());
	snprintf(same, sizeof(same), "%u", lcore_cpu);
	snprintf(other, sizeof(other), "%u", main_cpu);

	if (empty_iteration(lcore) != 0) {
		fprintf(stderr, "sirq-wakeup: set-up failed\n");
		return 1;
	}
	printf("raise (main lcore, CPU %u) -> handler, dispatcher on lcore %u (CPU %u), %u rounds, TSC %.3f GHz\n",
	       main_cpu, lcore, lcore_cpu, rounds, (double)rte_get_tsc_hz() / 1e9);
	printf("%-9s %-5s %-15s %8s %9s %9s %9s %9s %10s %8s\n", "policy",
	       "mode", "sirqd on CPU", "samples", "mean us", "p50 us", "p99 us",
	       "max us", "mean cyc", "wakeups");
	ret = measure(lcore, SIRQ_POLICY_MAINLINE, SIRQ_MODE_POLL, same, rounds) ||
		measure(lcore, SIRQ_POLICY_DEFERRED, SIRQ_MODE_POLL, same, rounds) ||
		measure(lcore, SIRQ_POLICY_DEFERRED, SIRQ_MODE_POLL, other, rounds) ||
		measure(lcore, SIRQ_POLICY_DEFERRED, SIRQ_MODE_IRQ, same, rounds) ||
		measure(lcore, SIRQ_POLICY_DEFERRED, SIRQ_MODE_IRQ, other, rounds);
	rte_eal_cleanup();
	return ret ? 1 : 0;
}
