/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_DPDK_H
#define SIRQ_DPDK_H

/*
 * Internal to libsirq: what every file of the DPDK binding shares, the
 * log type, the clock and the check that per-lcore DPDK state is touched
 * only by the holder of the lcore's execution lock. Not installed.
 */

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_debug.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "sirq_private.h"

extern int sirq_logtype;
#define SIRQ_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, sirq_logtype, "sirq: " fmt "\n", ##__VA_ARGS__)

#define SIRQ_NS_PER_US	1000ULL
#define SIRQ_NS_PER_SEC	1000000000ULL
/* ns = tsc * mult >> shift; 2^32 keeps the error under 1 ns per second. */
#define SIRQ_TSC_NS_SHIFT 32

extern uint64_t sirq_tsc_ns_mult;

static inline uint64_t
sirq_tsc_to_ns(uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * sirq_tsc_ns_mult) >>
			  SIRQ_TSC_NS_SHIFT);
}

static inline uint64_t
sirq_now_ns(void)
{
	return sirq_tsc_to_ns(rte_get_tsc_cycles());
}

/*
 * The lcore's DPDK state (its mempool cache, its rte_timer list, the
 * queues it polls) is used by the dispatcher and by sirqd alike, as the
 * lcore: only the execution lock keeps them apart, as local_bh_disable()
 * keeps process context and softirqs apart on a CPU. Every place that
 * uses that state checks that the lock is its own and that it runs as
 * that lcore; a caller that is not would corrupt a mempool cache or
 * manage another lcore's timers silently, so it stops the process.
 * Two thread-local loads and two compares, once per burst.
 */
#define SIRQ_ASSERT_EXCLUSIVE(cpu, lcore, what) do { \
		if (unlikely(!sirq_exec_lock_is_mine(cpu))) \
			rte_panic("sirq: %s of lcore %u without its execution lock\n", \
				  (what), (lcore)); \
		if (unlikely(rte_lcore_id() != (lcore))) \
			rte_panic("sirq: %s of lcore %u on lcore %u\n", \
				  (what), (lcore), rte_lcore_id()); \
	} while (0)

#endif /* SIRQ_DPDK_H */
