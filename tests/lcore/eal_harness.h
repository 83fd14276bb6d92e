/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_EAL_HARNESS_H
#define SIRQ_EAL_HARNESS_H

/*
 * Integration tests of the DPDK binding: every test is its own process
 * (Criterion forks) with its own EAL: --no-huge, --no-pci, its own
 * --file-prefix, lcores 0 (the test) and 1 (the dispatcher), and the
 * virtual devices the test names.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <criterion/criterion.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sirq.h"

/* The dispatcher's lcore; the test itself runs on the main lcore 0. */
#define TEST_LCORE 1
#define TEST_POOL_SIZE 8191
#define TEST_RING_SIZE 1024

/* EAL with @vdevs (NULL-terminated --vdev arguments); fails the test. */
void eal_start(const char *const *vdevs);

/* File prefix of this process's EAL, for dpdk-telemetry.py -f. */
const char *eal_prefix(void);

/* The test's mbuf pool (created by eal_start). */
struct rte_mempool *test_pool(void);

/* Configure and start @port with @nb_queues Rx/Tx queues. */
void port_start(uint16_t port, uint16_t nb_queues, bool rx_intr);

/* Launch sirq_lcore_main() on TEST_LCORE. */
void dispatcher_launch(struct sirq_lcore *lc);

/*
 * Wait until the launched dispatcher iterates (10 s at most): from then
 * on it is running, and a remote call is queued for it instead of run on
 * the caller, as before the launch. rte_eal_remote_launch() returns
 * before the lcore starts sirq_lcore_main(): a call right after it ran
 * on the caller once under ASan.
 */
void dispatcher_wait_running(struct sirq_lcore *lc);
/* Stop it, wait for it; fails the test if it returned an error. */
void dispatcher_join(struct sirq_lcore *lc);

/*
 * Run @fn(@arg) on TEST_LCORE, as the lcore whose state the handlers use
 * (bottom-half sections of that lcore belong there); its return value.
 */
int on_test_lcore(int (*fn)(void *), void *arg);

/*
 * One command through dpdk-telemetry.py -f eal_prefix(); its JSON line
 * in @out. Fails the test if the tool fails.
 */
void telemetry(const char *cmd, char *out, size_t len);

/* The integer after "key": in a JSON text; fails the test if absent. */
int64_t json_i64(const char *json, const char *key);

/*
 * An Rx function that frees what it gets: a sink for floods. @arg, if not
 * NULL, is a uint64_t counter of the packets, added to atomically.
 */
void rx_free_all(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
		 struct rte_mbuf **pkts, uint16_t n, void *arg);

/* Monotonic nanoseconds. */
uint64_t now_ns(void);

/* Wait until *@counter >= @want or @timeout_ms passes; true if reached. */
bool wait_for(const volatile uint64_t *counter, uint64_t want,
	      unsigned int timeout_ms);

/*
 * A handler that keeps the CPU, and so the BH lock, for @ms: holding is
 * 1 while it spins, runs counts its runs. Its argument is the struct.
 */
struct lock_hold {
	unsigned int ms;
	uint32_t holding;
	uint64_t runs;
};
struct sirq_cpu;
void hold_lock(struct sirq_cpu *cpu, void *arg);

/* Mbufs of the test pool not in the pool (nor its caches). */
unsigned int pool_in_use(void);

/*
 * The TID of this process's thread named @name (its comm, as
 * rte_thread_setname() or pthread_setname_np() set it) now; 0 if none.
 */
pid_t thread_tid_named(const char *name);

#endif /* SIRQ_EAL_HARNESS_H */
