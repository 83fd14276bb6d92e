/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The smallest dataplane on libsirq: every port's Rx queue 0 is a NAPI
 * context of one lcore's dispatcher; NET_RX counts and frees what arrives.
 * Built outside the tree against the installed library:
 *
 *   cc -O2 -o minimal minimal.c $(pkg-config --cflags --libs libsirq libdpdk)
 *   ./minimal -l 0 --no-huge -m 256 --no-pci --vdev=net_null0 -- 2
 *
 * The argument after "--" is how many seconds to run (default 5);
 * SIGINT/SIGTERM stop it earlier. At exit it prints the JSON report.
 */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <sirq_lcore.h>

#define NB_MBUF 8191
#define RING_SIZE 1024
#define DEFAULT_SECONDS 5

static uint64_t packets;

static void
count_and_free(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	       struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	(void)lc;
	(void)port;
	(void)queue;
	(void)arg;
	packets += n;
	rte_pktmbuf_free_bulk(pkts, n);
}

static void
on_signal(int sig)
{
	(void)sig;
	sirq_lcore_stop_all();
}

static int
port_init(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port, 0, RING_SIZE,
					     rte_eth_dev_socket_id(port), NULL,
					     pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, RING_SIZE,
					     rte_eth_dev_socket_id(port), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	return ret;
}

/* On the main lcore: stop the dispatcher after @seconds. */
static int
stop_after(void *arg)
{
	unsigned int left = *(unsigned int *)arg;

	while (left-- > 0)
		sleep(1);
	sirq_lcore_stop_all();
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned int seconds = DEFAULT_SECONDS, lcore;
	struct sirq_lcore_conf conf;
	struct rte_mempool *pool;
	struct sirq_lcore *lc;
	uint16_t port;
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "minimal: EAL init failed\n");
		return 1;
	}
	if (argc - ret > 1) {
		char *end;

		seconds = (unsigned int)strtoul(argv[ret + 1], &end, 10);
		if (*end != '\0' || seconds == 0) {
			fprintf(stderr, "minimal: bad seconds '%s'\n",
				argv[ret + 1]);
			return 2;
		}
	}
	if (rte_eth_dev_count_avail() == 0) {
		fprintf(stderr, "minimal: no ports (try --vdev=net_null0)\n");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	pool = rte_pktmbuf_pool_create("pool", NB_MBUF, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, "minimal: mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}

	/* The dispatcher takes the first worker lcore, or the main one. */
	lcore = rte_get_next_lcore(-1, 1, 0);
	if (lcore >= RTE_MAX_LCORE)
		lcore = rte_get_main_lcore();
	sirq_lcore_conf_default(&conf);
	lc = sirq_lcore_create(lcore, &conf);
	if (lc == NULL) {
		fprintf(stderr, "minimal: lcore %u: %s\n", lcore,
			rte_strerror(rte_errno));
		return 1;
	}
	RTE_ETH_FOREACH_DEV(port) {
		ret = port_init(port, pool);
		if (ret == 0)
			ret = sirq_lcore_add_rx_queue(lc, port, 0,
						      count_and_free, NULL);
		if (ret != 0) {
			fprintf(stderr, "minimal: port %u: %s\n", port,
				strerror(-ret));
			return 1;
		}
	}
	sirq_telemetry_register();

	if (lcore == rte_get_main_lcore()) {
		alarm(seconds);
		signal(SIGALRM, on_signal);
		ret = sirq_lcore_main(lc);
	} else {
		rte_eal_remote_launch(sirq_lcore_main, lc, lcore);
		stop_after(&seconds);
		ret = rte_eal_wait_lcore(lcore);
	}

	printf("minimal: %lu packets on lcore %u under %s\n",
	       (unsigned long)packets, lcore,
	       sirq_policy_name(conf.params.policy));
	sirq_stats_json(stdout);
	sirq_lcore_free(lc);
	RTE_ETH_FOREACH_DEV(port) {
		rte_eth_dev_stop(port);
		rte_eth_dev_close(port);
	}
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return ret == 0 && packets > 0 ? 0 : 1;
}
