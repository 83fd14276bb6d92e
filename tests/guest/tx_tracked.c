/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * TX completion on a real PMD's ring: a TSQ-style sender on libsirq sends
 * tracked packets (sirq_tx_tracked()) through TX queue 0 of port 0, at
 * most --inflight in flight, and waits for every completion. Then it
 * stops sending: the last packets must still complete with no later
 * traffic to make the PMD clean its ring. On a PMD with
 * rte_eth_tx_done_cleanup() (igb, ixgbe, net_vhost...) the completions
 * come through the PMD's cleanup, which tx_done_cleanup_pkts counts;
 * without it, through the mbufs' reference counts alone.
 *
 *   tx_tracked EAL-ARGS -- [--pkts N] [--inflight K] [--wait-ms W]
 *
 * Two lcores: the main one waits, the second dispatches. The frames are
 * 64-byte broadcasts of an experimental EtherType (0x88b5): nothing
 * answers them. One JSON object on stdout:
 *   {"driver": ..., "way": "tx_done_cleanup"|"refcount", "sent": N,
 *    "completed": N, "tx_packets": ..., "tx_completions": ...,
 *    "tx_done_cleanup_calls": ..., "tx_done_cleanup_pkts": ...,
 *    "last_completion_ms": ..., "mbufs_in_use": 0}
 * last_completion_ms: from the last send to the last completion.
 * Exit 0 when every packet completed within --wait-ms and every mbuf
 * came back; 1 otherwise; 2 on bad usage.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <sirq.h>

#define PROG "tx_tracked"
#define PORT 0
#define NB_DESC 512
#define NB_MBUFS 4095
#define FRAME_LEN 64
#define ETHER_TYPE_LOCAL_EXP 0x88b5

struct sender {
	struct sirq_lcore *lc;
	unsigned int txq;
	struct rte_mempool *pool;
	struct sirq_tasklet tasklet;
	struct sirq_tx_tracker tracker;
	struct rte_ether_addr src;
	uint64_t total;
	uint64_t inflight_max;
	uint64_t sent;			/* written by the dispatcher */
	uint64_t last_send_ns;		/* written by the dispatcher */
	int error;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct rte_mbuf *
frame(struct sender *s)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->pool);
	struct rte_ether_hdr *eh;
	char *data;

	if (m == NULL)
		return NULL;
	data = rte_pktmbuf_append(m, FRAME_LEN);
	if (data == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(data, 0, FRAME_LEN);
	eh = (struct rte_ether_hdr *)data;
	memset(&eh->dst_addr, 0xff, sizeof(eh->dst_addr));
	rte_ether_addr_copy(&s->src, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(ETHER_TYPE_LOCAL_EXP);
	return m;
}

/* TCP small queues: send while under the cap; completions call us again. */
static void
sender_push(struct sirq_tasklet *t, void *arg)
{
	struct sender *s = arg;

	(void)t;
	while (s->tracker.inflight_pkts < s->inflight_max &&
	       s->sent < s->total) {
		struct rte_mbuf *m = frame(s);
		int ret;

		if (m == NULL)
			return;	/* the next completion frees some */
		ret = sirq_tx_tracked(s->lc, s->txq, m, &s->tracker);
		if (ret != 0) {
			rte_pktmbuf_free(m);
			__atomic_store_n(&s->error, ret, __ATOMIC_RELAXED);
			return;
		}
		__atomic_store_n(&s->last_send_ns, now_ns(), __ATOMIC_RELAXED);
		__atomic_store_n(&s->sent, s->sent + 1, __ATOMIC_RELEASE);
	}
}

static int
usage_error(const char *what, const char *value)
{
	fprintf(stderr, PROG ": %s '%s' (usage: EAL-ARGS -- [--pkts N] "
		"[--inflight K] [--wait-ms W])\n", what, value);
	return 2;
}

static int
parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' ||
	    x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

static int
port_start(struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	uint16_t nb_rxd = NB_DESC, nb_txd = NB_DESC;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(PORT, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_dev_adjust_nb_rx_tx_desc(PORT, &nb_rxd, &nb_txd);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(PORT, 0, nb_rxd,
					     rte_eth_dev_socket_id(PORT), NULL,
					     pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(PORT, 0, nb_txd,
					     rte_eth_dev_socket_id(PORT), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(PORT);
	return ret;
}

int
main(int argc, char **argv)
{
	struct sender s = { .total = 2000, .inflight_max = 8 };
	struct rte_eth_dev_info info;
	struct sirq_lcore_conf conf;
	struct sirq_lcore_stats st;
	uint64_t wait_ms = 5000, completed, last_done_ns = 0, deadline;
	unsigned int worker;
	int ret, i, rc = 0, way;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, PROG ": EAL: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	argc -= ret;
	argv += ret;
	for (i = 1; i < argc; i += 2) {
		uint64_t *dst = NULL, min = 1, max = 10000000;

		if (strcmp(argv[i], "--pkts") == 0)
			dst = &s.total;
		else if (strcmp(argv[i], "--inflight") == 0)
			dst = &s.inflight_max, max = SIRQ_TX_TRACK_MAX;
		else if (strcmp(argv[i], "--wait-ms") == 0)
			dst = &wait_ms;
		else
			return usage_error("unknown option", argv[i]);
		if (i + 1 >= argc)
			return usage_error("no value for", argv[i]);
		if (parse_u64(argv[i + 1], min, max, dst) != 0)
			return usage_error("bad value", argv[i + 1]);
	}
	worker = rte_get_next_lcore(-1, 1, 0);
	if (worker >= RTE_MAX_LCORE) {
		fprintf(stderr, PROG ": needs two lcores (-l A,B)\n");
		return 2;
	}
	if (rte_eth_dev_count_avail() < 1 ||
	    rte_eth_dev_info_get(PORT, &info) != 0) {
		fprintf(stderr, PROG ": no port %u\n", PORT);
		return 2;
	}
	s.pool = rte_pktmbuf_pool_create("tx_tracked", NB_MBUFS, 0, 0,
					 RTE_MBUF_DEFAULT_BUF_SIZE,
					 rte_socket_id());
	if (s.pool == NULL) {
		fprintf(stderr, PROG ": mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	ret = port_start(s.pool);
	if (ret != 0) {
		fprintf(stderr, PROG ": port %u start: %s\n", PORT,
			strerror(-ret));
		return 1;
	}
	rte_eth_macaddr_get(PORT, &s.src);

	sirq_lcore_conf_default(&conf);
	s.lc = sirq_lcore_create(worker, &conf);
	if (s.lc == NULL) {
		fprintf(stderr, PROG ": sirq_lcore_create(%u) failed\n", worker);
		return 1;
	}
	ret = sirq_lcore_add_tx_queue(s.lc, PORT, 0);
	if (ret < 0) {
		fprintf(stderr, PROG ": TX queue: %s\n", strerror(-ret));
		return 1;
	}
	s.txq = (unsigned int)ret;
	sirq_tasklet_init(&s.tasklet, sender_push, &s);
	s.tracker.tasklet = &s.tasklet;
	way = sirq_tx_queue_cleanup(PORT, 0);

	ret = rte_eal_remote_launch(sirq_lcore_main, s.lc, worker);
	if (ret != 0) {
		fprintf(stderr, PROG ": launch: %s\n", strerror(-ret));
		return 1;
	}
	sirq_tasklet_schedule(sirq_lcore_cpu(s.lc), &s.tasklet);

	/* Every packet sent, then every completion: the last ones with no
	 * traffic after them. */
	deadline = now_ns() + wait_ms * 1000000u;
	do {
		completed = __atomic_load_n(&s.tracker.completed_pkts,
					    __ATOMIC_ACQUIRE);
		if (completed >= s.total) {
			last_done_ns = now_ns();
			break;
		}
		usleep(100);
	} while (now_ns() < deadline &&
		 __atomic_load_n(&s.error, __ATOMIC_RELAXED) == 0);

	sirq_lcore_stop(s.lc);
	ret = rte_eal_wait_lcore(worker);
	sirq_lcore_stats_get(s.lc, &st);
	completed = s.tracker.completed_pkts;
	if (ret != 0 || s.error != 0 || completed != s.total)
		rc = 1;
	sirq_lcore_free(s.lc);
	rte_eth_dev_stop(PORT);
	rte_eth_dev_close(PORT);

	printf("{\"driver\": \"%s\", \"way\": \"%s\", \"sent\": %" PRIu64
	       ", \"completed\": %" PRIu64 ", \"error\": %d, "
	       "\"tx_packets\": %" PRIu64 ", \"tx_completions\": %" PRIu64
	       ", \"tx_done_cleanup_calls\": %" PRIu64
	       ", \"tx_done_cleanup_pkts\": %" PRIu64
	       ", \"last_completion_ms\": %.3f, \"mbufs_in_use\": %u}\n",
	       info.driver_name, way == 1 ? "tx_done_cleanup" : "refcount",
	       s.sent, completed, s.error, st.tx_packets, st.tx_completions,
	       st.tx_done_cleanup_calls, st.tx_done_cleanup_pkts,
	       last_done_ns != 0 ?
		       (double)(last_done_ns - s.last_send_ns) / 1e6 : -1.0,
	       rte_mempool_in_use_count(s.pool));
	if (rte_mempool_in_use_count(s.pool) != 0)
		rc = 1;
	rte_mempool_free(s.pool);
	rte_eal_cleanup();
	return rc;
}
