/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A program outside the tree, on the engine alone: built against the
 * installed libsirq through pkg-config, and once more with nothing but
 * the installed include directory (no DPDK include path): sirq_engine.h
 * needs no DPDK header. Raises a vector and checks that its handler ran.
 */

#include <stdio.h>
#include <time.h>

#include <sirq_engine.h>

static uint64_t
mono_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
count_run(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(*(unsigned int *)arg)++;
}

int
main(void)
{
	struct sirq_cpu_conf conf = { .name = "consumer" };
	struct sirq_cpu *cpu;
	unsigned int runs = 0;

	sirq_params_default(&conf.params);
	conf.ops.clock_ns = mono_ns;
	cpu = sirq_cpu_create(&conf);
	if (cpu == NULL) {
		perror("sirq_cpu_create");
		return 1;
	}
	if (sirq_register(cpu, SIRQ_NET_RX, count_run, &runs, NULL) != 0 ||
	    sirq_raise(cpu, SIRQ_NET_RX) != 0 ||
	    sirq_irq_exit(cpu) != SIRQ_IRQ_EXIT_RAN || runs != 1) {
		fprintf(stderr, "consumer: NET_RX ran %u times, want 1\n", runs);
		sirq_cpu_free(cpu);
		return 1;
	}
	printf("consumer: %s ran once under %s\n",
	       sirq_vector_name(cpu, SIRQ_NET_RX),
	       sirq_policy_name(conf.params.policy));
	sirq_cpu_free(cpu);
	return 0;
}
