/* SPDX-License-Identifier: BSD-3-Clause */

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "eal_harness.h"

#define EAL_MEMORY_MB "256"
#define MAX_EAL_ARGS 32

static char prefix[64];
static char prefix_arg[96];
static struct rte_mempool *pool;

/* Leave no /var/run/dpdk/<prefix> behind (the test's process exits here). */
static void
remove_runtime_dir(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rte_eal_get_runtime_dir());
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", rte_eal_get_runtime_dir());
}

void
eal_start(const char *const *vdevs)
{
	char *argv[MAX_EAL_ARGS];
	char vdev_args[8][160];
	int argc = 0, i, ret;

	snprintf(prefix, sizeof(prefix), "sirqtest%d", getpid());
	argv[argc++] = (char *)"sirq-test";
	argv[argc++] = (char *)"-l";
	argv[argc++] = (char *)"0,1";
	argv[argc++] = (char *)"--no-huge";
	argv[argc++] = (char *)"-m";
	argv[argc++] = (char *)EAL_MEMORY_MB;
	argv[argc++] = (char *)"--no-pci";
	argv[argc++] = (char *)"--log-level=lib.eal:warning";
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	argv[argc++] = prefix_arg;
	for (i = 0; vdevs != NULL && vdevs[i] != NULL && i < 8; i++) {
		snprintf(vdev_args[i], sizeof(vdev_args[i]), "--vdev=%s",
			 vdevs[i]);
		argv[argc++] = vdev_args[i];
	}

	ret = rte_eal_init(argc, argv);
	cr_assert(ret >= 0, "rte_eal_init failed: %s", rte_strerror(rte_errno));
	atexit(remove_runtime_dir);
	cr_assert(rte_lcore_is_enabled(TEST_LCORE), "lcore %d missing",
		  TEST_LCORE);
	pool = rte_pktmbuf_pool_create("test_pool", TEST_POOL_SIZE, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	cr_assert(pool != NULL, "mbuf pool: %s", rte_strerror(rte_errno));
}

const char *
eal_prefix(void)
{
	return prefix;
}

struct rte_mempool *
test_pool(void)
{
	return pool;
}

void
port_start(uint16_t port, uint16_t nb_queues, bool rx_intr)
{
	struct rte_eth_conf conf;
	uint16_t q;
	int ret;

	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = rx_intr ? 1 : 0;
	ret = rte_eth_dev_configure(port, nb_queues, nb_queues, &conf);
	cr_assert(ret == 0, "configure port %u: %s", port, strerror(-ret));
	for (q = 0; q < nb_queues; q++) {
		ret = rte_eth_rx_queue_setup(port, q, TEST_RING_SIZE,
					     rte_eth_dev_socket_id(port), NULL,
					     pool);
		cr_assert(ret == 0, "rx queue %u: %s", q, strerror(-ret));
		ret = rte_eth_tx_queue_setup(port, q, TEST_RING_SIZE,
					     rte_eth_dev_socket_id(port), NULL);
		cr_assert(ret == 0, "tx queue %u: %s", q, strerror(-ret));
	}
	ret = rte_eth_dev_start(port);
	cr_assert(ret == 0, "start port %u: %s", port, strerror(-ret));
}

void
dispatcher_launch(struct sirq_lcore *lc)
{
	int ret = rte_eal_remote_launch(sirq_lcore_main, lc, TEST_LCORE);

	cr_assert(ret == 0, "remote launch: %s", strerror(-ret));
}

void
dispatcher_wait_running(struct sirq_lcore *lc)
{
	struct sirq_lcore_stats st;
	uint64_t end = now_ns() + 10ull * 1000 * 1000 * 1000;

	do {
		sirq_lcore_stats_get(lc, &st);
		if (st.iterations > 0)
			return;
		usleep(100);
	} while (now_ns() < end);
	cr_assert_fail("the dispatcher never iterated in 10 s");
}

int
on_test_lcore(int (*fn)(void *), void *arg)
{
	int ret = rte_eal_remote_launch(fn, arg, TEST_LCORE);

	cr_assert(ret == 0, "remote launch: %s", strerror(-ret));
	return rte_eal_wait_lcore(TEST_LCORE);
}

void
dispatcher_join(struct sirq_lcore *lc)
{
	int ret;

	sirq_lcore_stop(lc);
	ret = rte_eal_wait_lcore(TEST_LCORE);
	cr_assert(ret == 0, "dispatcher returned %d", ret);
}

void
rx_free_all(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	    struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	(void)lc;
	(void)port;
	(void)queue;
	rte_pktmbuf_free_bulk(pkts, n);
	if (arg != NULL)
		__atomic_fetch_add((uint64_t *)arg, n, __ATOMIC_RELEASE);
}

uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void
hold_lock(struct sirq_cpu *cpu, void *arg)
{
	struct lock_hold *h = arg;
	uint64_t end = now_ns() + (uint64_t)h->ms * 1000000ULL;

	(void)cpu;
	__atomic_store_n(&h->holding, 1, __ATOMIC_SEQ_CST);
	while (now_ns() < end)
		;
	__atomic_store_n(&h->holding, 0, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&h->runs, 1, __ATOMIC_RELEASE);
}

bool
wait_for(const volatile uint64_t *counter, uint64_t want,
	 unsigned int timeout_ms)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ULL;

	while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < want) {
		if (now_ns() >= end)
			return false;
		usleep(1000);
	}
	return true;
}

unsigned int
pool_in_use(void)
{
	return rte_mempool_in_use_count(pool);
}

pid_t
thread_tid_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t tid = 0;

	cr_assert(d != NULL);
	while (tid == 0 && (e = readdir(d)) != NULL) {
		char path[64], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.16s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL)
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		if (strcmp(comm, name) == 0)
			tid = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return tid;
}

void
telemetry(const char *cmd, char *out, size_t len)
{
	char line[512];
	FILE *p;
	size_t got;

	snprintf(line, sizeof(line), "echo '%s' | dpdk-telemetry.py -f %s", cmd,
		 eal_prefix());
	p = popen(line, "r");
	cr_assert(p != NULL);
	got = fread(out, 1, len - 1, p);
	out[got] = '\0';
	cr_assert(pclose(p) == 0, "%s failed: %s", line, out);
}

int64_t
json_i64(const char *json, const char *key)
{
	char pat[128];
	const char *at;
	int64_t v;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	at = strstr(json, pat);
	cr_assert(at != NULL, "no %s in %s", key, json);
	cr_assert(sscanf(at + strlen(pat), "%" SCNd64, &v) == 1, "%s", json);
	return v;
}
