/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What a PMD answers to the calls that libsirq's paths need, tried on
 * queue 0 of every port EAL creates. Each port gets one Rx and one TX
 * queue, Rx interrupts asked for at configure (intr_conf.rxq = 1, as
 * l2fwd-sirq does in irq mode), and is started. Then, per port:
 *
 *   rx_queue_count        rte_eth_rx_queue_count()
 *   rx_descriptor_status  rte_eth_rx_descriptor_status(offset 0)
 *   tx_descriptor_status  rte_eth_tx_descriptor_status(offset 0)
 *   tx_done_cleanup       rte_eth_tx_done_cleanup(free_cnt 0)
 *   monitor               rte_eth_get_monitor_addr()
 *   rx_intr_fd            rte_eth_dev_rx_intr_ctl_q_get_fd()
 *   rx_intr_enable        rte_eth_dev_rx_intr_enable()
 *
 * each the call's return value: >= 0 supported (rx_intr_fd: 0 for any
 * fd), a negative errno if not (-95 is -ENOTSUP). With --wait-ms N the calls are also tried with
 * traffic, which the peer must be sending: the queue is drained, then
 * for up to N ms the test waits for an Rx interrupt (epoll on the fd,
 * which is what libsirq's irq mode does) and looks at the monitor
 * condition taken before, and at descriptor status and queue count once
 * packets are there. rx_intr_fired, monitor_fired (the condition said
 * "work") and rx_desc_done_seen report what happened. Last, one packet
 * carrying an extra reference of ours is sent: tx_held_ms is how long
 * the PMD kept its reference, the delay a refcount-based TX completion
 * sees without tx_done_cleanup (-1: still held after the shorter of
 * --wait-ms and 500 ms).
 *
 * --attach DEVARGS hot-plugs a device once the others are started: a
 * net_virtio_user port can then connect to a net_vhost port of the same
 * process, whose socket appears only when that port starts.
 *
 * One JSON object per port on stdout, e.g.
 *   {"port": 0, "driver": "net_virtio_user", "rx_queue_count": -95, ...}
 *
 *   pmd_caps EAL-ARGS -- [--wait-ms N] [--attach DEVARGS]
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_power_intrinsics.h>

#define NB_DESC 256
#define NB_MBUFS 4095
#define BURST 32
#define FRAME_LEN 64
#define LOOK_STEP_US 100
/* A sent mbuf still held after this is held until the ring runs low. */
#define TX_HOLD_WAIT_MS 500u

struct caps {
	char driver[64];
	int rx_queue_count;
	int rx_descriptor_status;
	int tx_descriptor_status;
	int tx_done_cleanup;
	int monitor;
	int rx_intr_fd;
	int rx_intr_enable;
	/* with traffic */
	int rx_intr_fired;
	int monitor_fired;
	int rx_desc_done_seen;
	int rx_queue_count_seen;
	uint64_t rx_packets;
	long tx_held_ms;
	struct rte_power_monitor_cond pmc;
	uint64_t monitor_taken;		/* the word when pmc was taken */
};

static struct caps caps[RTE_MAX_ETHPORTS];
static struct rte_mempool *pool;

static uint64_t
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

static int
port_setup(uint16_t port)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = NB_DESC, nb_txd = NB_DESC;
	int ret;

	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = 1;
	ret = rte_eth_dev_info_get(port, &info);
	if (ret == 0)
		ret = rte_eth_dev_configure(port, 1, 1, &conf);
	/* vmxnet3 wants 512 TX descriptors or more. */
	if (ret == 0)
		ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port, 0, nb_rxd,
					     rte_eth_dev_socket_id(port), NULL,
					     pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, nb_txd,
					     rte_eth_dev_socket_id(port), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret != 0) {
		fprintf(stderr, "pmd_caps: port %u: %s\n", port, strerror(-ret));
		return ret;
	}
	snprintf(caps[port].driver, sizeof(caps[port].driver), "%s",
		 info.driver_name);
	return 0;
}

/* The word a monitor condition names, read as rte_power_monitor() does. */
static uint64_t
monitor_read(const struct rte_power_monitor_cond *pmc)
{
	switch (pmc->size) {
	case 1:
		return *(const volatile uint8_t *)pmc->addr;
	case 2:
		return *(const volatile uint16_t *)pmc->addr;
	case 4:
		return *(const volatile uint32_t *)pmc->addr;
	default:
		return *(const volatile uint64_t *)pmc->addr;
	}
}

/*
 * Work since the condition was taken (as libsirq's napi_monitor_fired()):
 * the word moved, or the PMD's test says so. The value counts because a
 * split virtqueue's test masks the used index by the ring size: a ring
 * that filled up completely in between reads as "no work".
 */
static bool
monitor_says_work(const struct caps *c)
{
	uint64_t v = monitor_read(&c->pmc);

	return v != c->monitor_taken ||
		(c->pmc.fn != NULL && c->pmc.fn(v, c->pmc.opaque) != 0);
}

static void
probe_calls(uint16_t port)
{
	struct caps *c = &caps[port];

	c->rx_queue_count = rte_eth_rx_queue_count(port, 0);
	c->rx_descriptor_status = rte_eth_rx_descriptor_status(port, 0, 0);
	c->tx_descriptor_status = rte_eth_tx_descriptor_status(port, 0, 0);
	c->tx_done_cleanup = rte_eth_tx_done_cleanup(port, 0, 0);
	c->monitor = rte_eth_get_monitor_addr(port, 0, &c->pmc);
	c->rx_intr_fd = rte_eth_dev_rx_intr_ctl_q_get_fd(port, 0);
	c->rx_intr_enable = rte_eth_dev_rx_intr_enable(port, 0);
	c->rx_intr_fired = c->monitor_fired = c->rx_desc_done_seen = -1;
	c->rx_queue_count_seen = -1;
	c->tx_held_ms = -1;
}

static uint64_t
drain(uint16_t port)
{
	struct rte_mbuf *pkts[BURST];
	uint64_t total = 0;
	uint16_t n;

	do {
		n = rte_eth_rx_burst(port, 0, pkts, BURST);
		rte_pktmbuf_free_bulk(pkts, n);
		total += n;
	} while (n != 0);
	return total;
}

/*
 * Drain every queue, take the monitor conditions, then wait for
 * interrupts and look at the conditions and descriptors until each port
 * has shown everything it can or @wait_ms passed.
 */
static void
try_rx(uint16_t nb_ports, unsigned int wait_ms)
{
	struct epoll_event ev, evs[8];
	uint64_t end = now_us() + (uint64_t)wait_ms * 1000, count;
	uint16_t port;
	int ep, n, i;

	ep = epoll_create1(EPOLL_CLOEXEC);
	for (port = 0; port < nb_ports; port++) {
		struct caps *c = &caps[port];

		drain(port);
		/*
		 * A count left from before the drain is not an interrupt. One
		 * that fired then may have left the vector masked (vmxnet3
		 * masks it on delivery until the driver enables it again):
		 * enabled again after the read, as a driver re-arms after each
		 * poll, so that the next packet interrupts. Seen in CI: the
		 * vmxnet3 port got 148 packets and no interrupt in 3 s. Then
		 * drained again, as a driver polls once more after re-arming:
		 * a ring filled before the enable would send no interrupt.
		 */
		if (c->rx_intr_fd >= 0) {
			(void)!read(c->rx_intr_fd, &count, sizeof(count));
			if (c->rx_intr_enable == 0)
				rte_eth_dev_rx_intr_enable(port, 0);
			drain(port);
		}
		c->rx_intr_fired = c->monitor_fired = c->rx_desc_done_seen = 0;
		c->rx_queue_count_seen = 0;
		if (c->monitor == 0 &&
		    rte_eth_get_monitor_addr(port, 0, &c->pmc) == 0)
			c->monitor_taken = monitor_read(&c->pmc);
		if (c->rx_intr_fd >= 0 && ep >= 0) {
			ev.events = EPOLLIN | EPOLLET;
			ev.data.u32 = port;
			epoll_ctl(ep, EPOLL_CTL_ADD, c->rx_intr_fd, &ev);
		}
	}
	while (now_us() < end) {
		bool all = true;

		n = ep >= 0 ? epoll_wait(ep, evs, RTE_DIM(evs), 1) : 0;
		for (i = 0; i < n; i++)
			if (evs[i].data.u32 < nb_ports)
				caps[evs[i].data.u32].rx_intr_fired = 1;
		for (port = 0; port < nb_ports; port++) {
			struct caps *c = &caps[port];

			if (c->monitor == 0 && monitor_says_work(c))
				c->monitor_fired = 1;
			if (rte_eth_rx_descriptor_status(port, 0, 0) ==
			    RTE_ETH_RX_DESC_DONE)
				c->rx_desc_done_seen = 1;
			if (rte_eth_rx_queue_count(port, 0) > 0)
				c->rx_queue_count_seen = 1;
			all = all && (c->rx_intr_fd < 0 || c->rx_intr_fired) &&
				(c->monitor != 0 || c->monitor_fired);
		}
		if (all)
			break;
	}
	for (port = 0; port < nb_ports; port++)
		caps[port].rx_packets = drain(port);
	if (ep >= 0)
		close(ep);
}

/* One frame with our extra reference: how long does the PMD keep it? */
static void
try_tx(uint16_t port, unsigned int wait_ms)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint64_t start, end;
	char *frame;

	if (m == NULL)
		return;
	frame = rte_pktmbuf_append(m, FRAME_LEN);
	memset(frame, 0, FRAME_LEN);
	memset(frame, 0xff, RTE_ETHER_ADDR_LEN);	/* broadcast */
	rte_mbuf_refcnt_update(m, 1);
	if (rte_eth_tx_burst(port, 0, &m, 1) != 1) {
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(m);
		return;
	}
	start = now_us();
	end = start + (uint64_t)RTE_MIN(wait_ms, TX_HOLD_WAIT_MS) * 1000;
	while (rte_mbuf_refcnt_read(m) != 1 && now_us() < end)
		usleep(LOOK_STEP_US);
	if (rte_mbuf_refcnt_read(m) == 1)
		caps[port].tx_held_ms = (long)((now_us() - start) / 1000);
	rte_pktmbuf_free(m);
}

static void
print_caps(uint16_t port)
{
	const struct caps *c = &caps[port];

	printf("{\"port\": %u, \"driver\": \"%s\", \"rx_queue_count\": %d, "
	       "\"rx_descriptor_status\": %d, \"tx_descriptor_status\": %d, "
	       "\"tx_done_cleanup\": %d, \"monitor\": %d, \"rx_intr_fd\": %d, "
	       "\"rx_intr_enable\": %d, \"rx_intr_fired\": %d, "
	       "\"monitor_fired\": %d, \"rx_desc_done_seen\": %d, "
	       "\"rx_queue_count_seen\": %d, \"rx_packets\": %" PRIu64
	       ", \"tx_held_ms\": %ld}\n",
	       port, c->driver, c->rx_queue_count, c->rx_descriptor_status,
	       c->tx_descriptor_status, c->tx_done_cleanup, c->monitor,
	       c->rx_intr_fd < 0 ? c->rx_intr_fd : 0, c->rx_intr_enable,
	       c->rx_intr_fired, c->monitor_fired, c->rx_desc_done_seen,
	       c->rx_queue_count_seen, c->rx_packets, c->tx_held_ms);
}

int
main(int argc, char **argv)
{
	const char *attach = NULL;
	unsigned int wait_ms = 0;
	uint16_t port, nb_ports;
	int ret, i;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "pmd_caps: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--wait-ms") == 0 && i + 1 < argc) {
			wait_ms = (unsigned int)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--attach") == 0 && i + 1 < argc) {
			attach = argv[++i];
		} else {
			fprintf(stderr, "usage: pmd_caps EAL-ARGS -- [--wait-ms N] [--attach DEVARGS]\n");
			return 2;
		}
	}
	nb_ports = rte_eth_dev_count_avail();
	if (nb_ports + (attach != NULL) == 0 || nb_ports >= RTE_DIM(caps)) {
		fprintf(stderr, "pmd_caps: %u ports\n", nb_ports);
		return 1;
	}
	pool = rte_pktmbuf_pool_create("pmd_caps", NB_MBUFS, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, "pmd_caps: mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	for (port = 0; port < nb_ports; port++) {
		if (port_setup(port) != 0)
			return 1;
		probe_calls(port);
	}
	if (attach != NULL) {
		ret = rte_dev_probe(attach);
		if (ret != 0 || rte_eth_dev_count_avail() != nb_ports + 1u) {
			fprintf(stderr, "pmd_caps: attach %s: %s\n", attach,
				strerror(-ret));
			return 1;
		}
		if (port_setup(nb_ports) != 0)
			return 1;
		probe_calls(nb_ports);
		nb_ports++;
	}
	if (wait_ms != 0) {
		try_rx(nb_ports, wait_ms);
		for (port = 0; port < nb_ports; port++)
			try_tx(port, wait_ms);
	}
	for (port = 0; port < nb_ports; port++)
		print_caps(port);
	fflush(stdout);
	/*
	 * virtio-user ports (attached last) first: a virtio-user port whose
	 * vhost-user peer has closed gets SIGPIPE when it stops.
	 */
	for (port = nb_ports; port-- > 0;) {
		rte_eth_dev_stop(port);
		rte_eth_dev_close(port);
	}
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}
