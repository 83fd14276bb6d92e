/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * l2fwd-sirq: DPDK's l2fwd on libsirq.
 *
 * Ports are paired 0<->1, 2<->3 (or --portmap); what arrives on one
 * leaves on the other, with the MAC addresses rewritten (destination
 * 02:00:00:00:00:<dst port>, source the port's own) unless
 * --no-mac-updating. Each forwarding lcore runs a libsirq dispatcher: its
 * Rx queues are NAPI contexts, forwarding happens in NET_RX, transmission
 * in NET_TX, statistics in an rte_timer on TIMER. --app-load puts a
 * "process" beside each dispatcher, for the stall and flood scenarios;
 * --receiver makes NET_RX deliver to a socket that threads on the
 * lcore's CPU read, instead of forwarding (the flood of 4cd13c21b207);
 * --probe adds a periodic timer and a periodic tasklet on each lcore,
 * whose raise-to-run latency the report's TIMER and TASKLET vectors give
 * (the mixed scenario, l2fwd_probe.h).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_pdump.h>
#include <rte_timer.h>

#include <sirq.h>

#include "app_cpu.h"
#include "app_load.h"
#include "app_main.h"
#include "app_opts.h"
#include "app_report.h"
#include "l2fwd.h"

#define PROG L2FWD_PROG

#define RX_DESC 1024			/* as l2fwd */
#define TX_DESC 1024
#define MEMPOOL_CACHE 256
#define MIN_MBUFS 8192
#define MAX_RX_PER_LCORE L2FWD_MAX_RX_PER_LCORE
#define CONTROL_PERIOD_MS 100		/* signals, --duration, -T */
/*
 * Mempool ops when lcores share CPUs. With the default MP/MC ring a
 * thread preempted between moving a ring's head and its tail makes every
 * other thread on the ring spin until it runs again: on shared CPUs that
 * is a time slice, and for a SCHED_FIFO spinner on the preempted thread's
 * CPU as long as RT throttling allows (950 ms a second). RTS (relaxed tail sync) lets the others go on
 * and leaves the tail to the last one out, up to a head-tail distance of
 * an eighth of the ring; HTS serialises every operation, so a preempted
 * holder still stops all of them. DPDK's mempool guide names both for
 * "overcommitted scenarios"; RTS is the one that does not wait for the
 * preempted thread.
 */
#define SHARED_CPU_POOL_OPS "ring_mt_rts"

struct fwd_lcore {
	unsigned int lcore_id;
	struct sirq_lcore *lc;
	uint16_t nb_rx;
	uint16_t rx_port[MAX_RX_PER_LCORE];
	uint16_t rx_queue[MAX_RX_PER_LCORE];
	int tx_queue[RTE_MAX_ETHPORTS];		/* -1: does not send there */
	struct l2fwd_path path;
	struct app_load load;
	struct l2fwd_receiver rcv;	/* --receiver */
	struct l2fwd_busy busy;		/* --busy-poll */
	struct l2fwd_probe probe;	/* --probe */
	struct app_cpu cpu;		/* its threads' CPU time */
	struct app_cpu_split last_cpu;	/* at the last statistics */
};

static struct app_common common;
static struct l2fwd_opts opts;
static struct l2fwd_port ports[RTE_MAX_ETHPORTS];
static struct fwd_lcore fwd[RTE_MAX_LCORE];
static unsigned int nb_fwd;
static uint16_t nb_txq[RTE_MAX_ETHPORTS];	/* per port */
static struct rte_mempool *pools[RTE_MAX_NUMA_NODES];
static const char *pool_ops;
static struct rte_timer control_timer;
static uint64_t start_ns;
static uint64_t last_stats_ns;
/* The PMD's counters as the port closed, for the report after it. */
static struct rte_eth_stats closed_stats[RTE_MAX_ETHPORTS];
static bool closed[RTE_MAX_ETHPORTS];
/* Each port's counters at the last statistics, for the rate since. */
static struct l2fwd_counters last_port[RTE_MAX_ETHPORTS];

/* The --vdev arguments before EAL took them: a PMD that failed to probe. */
#define MAX_VDEVS 32
static char vdev_names[MAX_VDEVS][RTE_ETH_NAME_MAX_LEN];
static unsigned int nb_vdevs;

/* Every "--vdev NAME[,args]" (or "--vdev=...") before "--". */
static void
note_vdevs(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *v = NULL;

		if (strncmp(argv[i], "--vdev=", 7) == 0)
			v = argv[i] + 7;
		else if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc)
			v = argv[++i];
		if (v == NULL || nb_vdevs == MAX_VDEVS)
			continue;
		snprintf(vdev_names[nb_vdevs], sizeof(vdev_names[0]), "%.*s",
			 (int)strcspn(v, ","), v);
		nb_vdevs++;
	}
}

/*
 * What EAL found, for a portmask that names a port it did not: each port
 * with its device, and each --vdev that did not become one (EAL's lines
 * above say why: a missing iface=, no CAP_NET_RAW, ...).
 */
static void
print_ports_found(void)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t port, found = 0;
	unsigned int i;

	RTE_ETH_FOREACH_DEV(port) {
		if (rte_eth_dev_get_name_by_port(port, name) != 0)
			snprintf(name, sizeof(name), "?");
		fprintf(stderr, PROG ": port %u: %s\n", port, name);
		found++;
	}
	fprintf(stderr, PROG ": EAL found %u port(s): -p 0x%" PRIx64
		" names them all\n", found,
		found >= 64 ? UINT64_MAX : (UINT64_C(1) << found) - 1);
	for (i = 0; i < nb_vdevs; i++)
		if (rte_eth_dev_get_port_by_name(vdev_names[i], &port) != 0)
			fprintf(stderr, PROG ": --vdev %s did not probe: no port "
				"(EAL's messages above say why)\n",
				vdev_names[i]);
}

/* Enabled ports and their pairs, checked against what EAL found. */
static int
setup_port_pairs(void)
{
	uint16_t port, last = RTE_MAX_ETHPORTS, n = 0;

	/* As l2fwd: a bit without a port is an error, not a port ignored. */
	for (port = 0; port < 64; port++)
		if ((opts.portmask & (1ULL << port)) != 0 &&
		    !rte_eth_dev_is_valid_port(port)) {
			fprintf(stderr, PROG ": -p 0x%" PRIx64 ": port %u is not a port\n",
				opts.portmask, port);
			print_ports_found();
			return -EINVAL;
		}
	if (opts.portmap[0] != '\0') {
		if (l2fwd_parse_portmap(opts.portmap, ports) != 0)
			return -EINVAL;
	} else {
		RTE_ETH_FOREACH_DEV(port) {
			if ((opts.portmask & (1ULL << port)) == 0)
				continue;
			ports[port].enabled = true;
			if (last == RTE_MAX_ETHPORTS) {
				last = port;
			} else {
				ports[last].dst = port;
				ports[port].dst = last;
				last = RTE_MAX_ETHPORTS;
			}
			n++;
		}
		if (n == 0 || last != RTE_MAX_ETHPORTS) {
			fprintf(stderr, PROG ": -p 0x%" PRIx64 ": %u ports enabled, "
				"need an even number >= 2\n", opts.portmask, n);
			print_ports_found();
			return -EINVAL;
		}
	}
	for (port = 0; port < RTE_MAX_ETHPORTS; port++) {
		if (!ports[port].enabled)
			continue;
		if (!rte_eth_dev_is_valid_port(port) ||
		    (opts.portmask & (1ULL << port)) == 0) {
			fprintf(stderr, PROG ": --portmap: port %u is %s\n", port,
				rte_eth_dev_is_valid_port(port) ?
				"not in the portmask (-p)" : "not a port");
			print_ports_found();
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Rx queues to lcores in lcore order, -q per lcore, as l2fwd assigns
 * ports; the main lcore forwards too. Without -q the queues are spread
 * evenly over every enabled lcore, so that a single "-l 1" just works.
 */
static int
assign_lcores(unsigned int nb_queues)
{
	unsigned int per = opts.queues_per_lcore, lcore = RTE_MAX_LCORE, q;
	uint16_t port;

	if (per == 0)
		per = (nb_queues + rte_lcore_count() - 1) / rte_lcore_count();
	if (per > MAX_RX_PER_LCORE) {
		fprintf(stderr, PROG ": %u Rx queue(s) on %u lcore(s): more than %u per lcore; use more lcores (-l)\n",
			nb_queues, rte_lcore_count(), MAX_RX_PER_LCORE);
		return -EINVAL;
	}
	for (port = 0; port < RTE_MAX_ETHPORTS; port++) {
		if (!ports[port].enabled)
			continue;
		for (q = 0; q < opts.rxq_per_port; q++) {
			struct fwd_lcore *f = nb_fwd ? &fwd[nb_fwd - 1] : NULL;

			if (f == NULL || f->nb_rx == per) {
				lcore = rte_get_next_lcore(lcore == RTE_MAX_LCORE ?
							   (unsigned int)-1 : lcore,
							   0, 0);
				if (lcore >= RTE_MAX_LCORE) {
					fprintf(stderr, PROG ": %u Rx queue(s) (--rxq %u on %u port(s)) at %u per lcore%s need %u lcore(s); EAL has %u (-l)\n",
						nb_queues, opts.rxq_per_port,
						nb_queues / opts.rxq_per_port, per,
						opts.queues_per_lcore ? " (-q)" : "",
						(nb_queues + per - 1) / per,
						rte_lcore_count());
					return -EINVAL;
				}
				f = &fwd[nb_fwd++];
				f->lcore_id = lcore;
			}
			f->rx_port[f->nb_rx] = port;
			f->rx_queue[f->nb_rx] = (uint16_t)q;
			f->nb_rx++;
		}
	}
	return 0;
}

/*
 * TX queues as l2fwd has them: a port gets one per lcore that transmits
 * to it (one that polls an Rx queue of its pair), numbered in lcore
 * order, and each such lcore sends there on its own queue. No TX queue
 * is shared, so a flush needs no lock.
 */
static void
assign_tx_queues(void)
{
	unsigned int i, r;
	uint16_t port;

	for (i = 0; i < nb_fwd; i++) {
		struct fwd_lcore *f = &fwd[i];

		for (port = 0; port < RTE_MAX_ETHPORTS; port++)
			f->tx_queue[port] = -1;
		for (r = 0; r < f->nb_rx; r++) {
			uint16_t dst = ports[f->rx_port[r]].dst;

			if (f->tx_queue[dst] < 0)
				f->tx_queue[dst] = nb_txq[dst]++;
		}
	}
}

/*
 * Every port has the queues the lcores need, checked before any port is
 * configured. A PMD with fewer TX queues than lcores sending to the port
 * is refused rather than shared: a shared queue would need a lock around
 * each flush, taken by threads that can be preempted holding it.
 */
/* The flows --rxq spreads: what the PMD hashes of these. */
#define L2FWD_RSS_HF (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP)

static int
check_port_queues(void)
{
	struct rte_eth_dev_info info;
	uint16_t port;
	int ret;

	for (port = 0; port < RTE_MAX_ETHPORTS; port++) {
		if (!ports[port].enabled)
			continue;
		ret = rte_eth_dev_info_get(port, &info);
		if (ret != 0) {
			fprintf(stderr, PROG ": port %u: device info: %s\n", port,
				strerror(-ret));
			return ret;
		}
		if (opts.rxq_per_port > info.max_rx_queues) {
			fprintf(stderr, PROG ": port %u has %u Rx queue(s), --rxq %u wanted\n",
				port, info.max_rx_queues, opts.rxq_per_port);
			return -EINVAL;
		}
		if (nb_txq[port] > info.max_tx_queues && opts.rxq_per_port > 1) {
			fprintf(stderr, PROG ": port %u has %u TX queue(s) and %u lcores "
				"transmit to it, one queue each: use -q %u (one lcore "
				"polls each port) or fewer lcores\n", port,
				info.max_tx_queues, nb_txq[port], opts.rxq_per_port);
			return -EINVAL;
		}
		if (nb_txq[port] > info.max_tx_queues) {
			fprintf(stderr, PROG ": port %u has %u TX queue(s) and %u lcores "
				"transmit to it, one queue each: use fewer lcores\n",
				port, info.max_tx_queues, nb_txq[port]);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Two forwarding lcores whose CPUs overlap, so that one can be preempted
 * in the middle of a mempool operation by the other. Lcores that forward
 * nothing never touch the pool; an lcore and its own sirqd take turns
 * under the execution lock (docs/design.md). --worker-cpus puts every sirqd on
 * the same CPUs.
 */
static bool
lcores_share_cpus(char *why, size_t len)
{
	unsigned int i, j;

	for (i = 0; i < nb_fwd; i++)
		for (j = i + 1; j < nb_fwd; j++) {
			rte_cpuset_t a = rte_lcore_cpuset(fwd[i].lcore_id);
			rte_cpuset_t b = rte_lcore_cpuset(fwd[j].lcore_id);
			rte_cpuset_t both;

			CPU_AND(&both, &a, &b);
			if (CPU_COUNT(&both) != 0) {
				snprintf(why, len, "lcores %u and %u share CPUs",
					 fwd[i].lcore_id, fwd[j].lcore_id);
				return true;
			}
		}
	if (common.worker_cpus[0] != '\0' && nb_fwd > 1) {
		snprintf(why, len, "--worker-cpus puts %u sirqd threads on the same CPUs",
			 nb_fwd);
		return true;
	}
	return false;
}

/*
 * The mbuf pool's ops: EAL's --mbuf-pool-ops-name if given (what a DPDK
 * user sets for any application), SHARED_CPU_POOL_OPS where lcores share
 * CPUs, DPDK's best ops (ring_mp_mc) otherwise.
 */
static const char *
choose_pool_ops(void)
{
	const char *ops = rte_mbuf_user_mempool_ops();
	char why[96];

	if (ops != NULL)
		snprintf(why, sizeof(why), "EAL --mbuf-pool-ops-name");
	else if (lcores_share_cpus(why, sizeof(why)))
		ops = SHARED_CPU_POOL_OPS;
	else if (opts.receiver.enabled) {
		/* Readers free mbufs to the pool on the lcores' CPUs. */
		snprintf(why, sizeof(why), "--receiver threads share the lcores' CPUs");
		ops = SHARED_CPU_POOL_OPS;
	} else {
		ops = rte_mbuf_best_mempool_ops();
		snprintf(why, sizeof(why), "default: no two lcores share a CPU");
	}
	printf(PROG ": mbuf pool ops %s (%s)\n", ops, why);
	return ops;
}

static struct rte_mempool *
pool_for_socket(int socket, unsigned int nb_mbufs)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned int s = socket < 0 ? 0 : (unsigned int)socket;

	if (s >= RTE_MAX_NUMA_NODES)
		s = 0;
	if (pools[s] != NULL)
		return pools[s];
	snprintf(name, sizeof(name), "mbufs_%u", s);
	pools[s] = rte_pktmbuf_pool_create_by_ops(name, nb_mbufs, MEMPOOL_CACHE,
						  0, RTE_MBUF_DEFAULT_BUF_SIZE,
						  (int)s, pool_ops);
	if (pools[s] == NULL)
		fprintf(stderr, PROG ": mbuf pool on socket %u (%u mbufs, ops %s): %s\n",
			s, nb_mbufs, pool_ops, rte_strerror(rte_errno));
	return pools[s];
}

/*
 * Link state, from an LSC event where the PMD sends them and from the
 * control timer's poll everywhere (memif sends none): a forwarding lcore
 * does not transmit to a port whose peer has gone.
 */
static void
update_link(uint16_t port)
{
	struct rte_eth_link link;
	bool up;

	if (rte_eth_link_get_nowait(port, &link) != 0)
		return;
	up = link.link_status != RTE_ETH_LINK_DOWN;
	if (__atomic_exchange_n(&ports[port].link_up, up, __ATOMIC_RELAXED) != up) {
		printf(PROG ": port %u link %s\n", port, up ? "up" : "down");
		fflush(stdout);
	}
}

static int
on_link_event(uint16_t port, enum rte_eth_event_type type, void *arg,
	      void *ret_param)
{
	RTE_SET_USED(type);
	RTE_SET_USED(arg);
	RTE_SET_USED(ret_param);
	update_link(port);
	return 0;
}

/*
 * PMDs whose LSC interrupt cannot be relied on for more than the first
 * change. With LSC on, ethdev answers link queries from its cache, which
 * only the interrupt updates, so a lost one leaves the port "down" (or
 * "up") for good. Their links are polled on the control timer instead.
 * net_e1000_em (82574L, DPDK 22.11): in MSI-X mode (VFIO's default) it
 * never clears ICR (no EIAC, no write), so the device raises no second
 * "other" interrupt (QEMU's model, traced: the link went down and up,
 * no MSI-X message after the first two); with --vfio-intr msi or legacy
 * it cannot take LSC at all ("lsc won't enable because of no intr
 * multiplex") yet still flags it.
 */
static const char *const lsc_unreliable_drivers[] = {
	"net_e1000_em",
};

static bool
lsc_reliable(const struct rte_eth_dev_info *info)
{
	unsigned int i;

	if ((*info->dev_flags & RTE_ETH_DEV_INTR_LSC) == 0)
		return false;
	for (i = 0; i < RTE_DIM(lsc_unreliable_drivers); i++)
		if (strcmp(info->driver_name, lsc_unreliable_drivers[i]) == 0)
			return false;
	return true;
}

static int
port_init(uint16_t port, unsigned int nb_mbufs)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	struct rte_eth_link link;
	struct rte_mempool *pool;
	uint16_t q, nb_rxd = RX_DESC, nb_txd = TX_DESC;
	uint16_t nb_tx = RTE_MAX(nb_txq[port], 1);
	int socket = rte_eth_dev_socket_id(port), ret;

	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return ret;
	memset(&conf, 0, sizeof(conf));
	/*
	 * RSS only where the PMD hashes flows: asking one that does not
	 * fails the configure (and took the EAL down with it, virtio in irq
	 * mode, DPDK 22.11). Its queues are then filled as the device
	 * chooses: a multi-queue tap by flow, net_pcap one file each.
	 */
	if (opts.rxq_per_port > 1 &&
	    (info.flow_type_rss_offloads & L2FWD_RSS_HF) != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads &
			L2FWD_RSS_HF;
	} else if (opts.rxq_per_port > 1) {
		printf(PROG ": port %u (%s) hashes no flows (RSS): its %u Rx "
		       "queues are filled as the device chooses\n", port,
		       info.driver_name, opts.rxq_per_port);
	}
	conf.intr_conf.rxq = common.lcore.mode == SIRQ_MODE_IRQ;
	conf.intr_conf.lsc = lsc_reliable(&info);
	ret = rte_eth_dev_configure(port, opts.rxq_per_port, nb_tx, &conf);
	if (ret == 0)
		ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (ret != 0)
		return ret;

	pool = pool_for_socket(socket, nb_mbufs);
	if (pool == NULL)
		return -ENOMEM;
	for (q = 0; q < opts.rxq_per_port && ret == 0; q++)
		ret = rte_eth_rx_queue_setup(port, q, nb_rxd, socket, NULL, pool);
	for (q = 0; q < nb_tx && ret == 0; q++)
		ret = rte_eth_tx_queue_setup(port, q, nb_txd, socket, NULL);
	if (ret != 0)
		return ret;
	if (conf.intr_conf.lsc)
		rte_eth_dev_callback_register(port, RTE_ETH_EVENT_INTR_LSC,
					      on_link_event, NULL);
	ret = rte_eth_dev_start(port);
	if (ret != 0)
		return ret;
	ret = rte_eth_promiscuous_enable(port);
	if (ret != 0 && ret != -ENOTSUP)
		fprintf(stderr, PROG ": port %u: promiscuous mode: %s\n", port,
			strerror(-ret));
	rte_eth_macaddr_get(port, &ports[port].mac);
	if (rte_eth_link_get_nowait(port, &link) == 0)
		ports[port].link_up = link.link_status != RTE_ETH_LINK_DOWN;
	return 0;
}

/*
 * Rx queue 0's interrupt fd, without ethdev's "Rx Intr handle unset"
 * error where there is none: the lcore asks again when it starts, and
 * one line is enough.
 */
static int
rx_intr_fd_quiet(uint16_t port)
{
	int type = rte_log_register("lib.ethdev");
	int level = type >= 0 ? rte_log_get_level(type) : -1;
	int fd;

	if (level >= 0)
		rte_log_set_level(type, RTE_LOG_CRIT);
	fd = rte_eth_dev_rx_intr_ctl_q_get_fd(port, 0);
	if (level >= 0)
		rte_log_set_level(type, (uint32_t)level);
	return fd;
}

/*
 * At start, one line a port: what its PMD gives libsirq, and the
 * fallback where it gives nothing (docs/l2fwd-sirq.md, "What each PMD
 * gives libsirq"). Queue 0 stands for the port's queues: one PMD serves
 * them all. Before the lcores launch: the TX probe calls
 * rte_eth_tx_done_cleanup() on a queue no one transmits on yet.
 */
static void
print_port_paths(uint16_t port)
{
	struct rte_eth_dev_info info;
	const char *intr, *link;
	char rss[64];
	int work, cleanup;

	if (rte_eth_dev_info_get(port, &info) != 0)
		return;
	work = sirq_rx_queue_work(port, 0);
	cleanup = sirq_tx_queue_cleanup(port, 0);
	if (common.lcore.mode != SIRQ_MODE_IRQ)
		intr = "not asked (poll mode)";
	else if (rx_intr_fd_quiet(port) < 0)
		intr = "none (the fallback: irq mode wakes on its tick)";
	else if (rte_eth_dev_rx_intr_enable(port, 0) == 0) {
		intr = "yes, one per queue";
		rte_eth_dev_rx_intr_disable(port, 0);	/* the lcore arms it */
	} else {
		/* An event fd the PMD cannot arm: net_tap's fires anyway,
		 * the igb VF's never does. */
		intr = "an event fd per queue, without enable (it may never "
		       "fire: irq mode also wakes on its tick)";
	}
	if (lsc_reliable(&info))
		link = "LSC interrupt";
	else if ((*info.dev_flags & RTE_ETH_DEV_INTR_LSC) != 0)
		link = "polled (the fallback: this PMD's LSC interrupt is unreliable)";
	else
		link = "polled (the fallback: no LSC interrupt)";
	if ((info.flow_type_rss_offloads & L2FWD_RSS_HF) == 0)
		snprintf(rss, sizeof(rss), "no");
	else if (opts.rxq_per_port > 1)
		snprintf(rss, sizeof(rss), "over %u queues", opts.rxq_per_port);
	else
		snprintf(rss, sizeof(rss), "not used (one queue; --rxq)");
	printf(PROG ": port %u (%s): Rx work: %s%s; Rx interrupts: %s; "
	       "TX done: %s; link: %s; RSS: %s\n", port, info.driver_name,
	       sirq_rx_work_name(work),
	       work == SIRQ_RX_WORK_FETCH ? " (the fallback: no descriptor "
	       "status, queue count or exact monitor condition)" : "",
	       intr,
	       cleanup > 0 ? "tx_done_cleanup" :
	       "refcount (the fallback: no tx_done_cleanup)",
	       link, rss);
}

/*
 * At start, as l2fwd and testpmd print them: each port's device, MAC,
 * link and the port it forwards to.
 */
static void
print_ports_started(void)
{
	char name[RTE_ETH_NAME_MAX_LEN], mac[RTE_ETHER_ADDR_FMT_SIZE];
	char link[RTE_ETH_LINK_MAX_STR_LEN];
	struct rte_eth_link el;
	uint16_t port;

	for (port = 0; port < RTE_MAX_ETHPORTS; port++) {
		if (!ports[port].enabled)
			continue;
		if (rte_eth_dev_get_name_by_port(port, name) != 0)
			snprintf(name, sizeof(name), "?");
		rte_ether_format_addr(mac, sizeof(mac), &ports[port].mac);
		if (rte_eth_link_get_nowait(port, &el) != 0 ||
		    rte_eth_link_to_str(link, sizeof(link), &el) < 0)
			snprintf(link, sizeof(link), "link unknown");
		printf(PROG ": port %u (%s): MAC %s, %s; forwards to port %u\n",
		       port, name, mac, link, ports[port].dst);
		print_port_paths(port);
	}
}


/* A port's counters summed over the forwarding lcores. Any thread. */
static struct l2fwd_counters
port_totals(uint16_t port)
{
	struct l2fwd_counters t = { 0 };
	unsigned int i;

	for (i = 0; i < nb_fwd; i++) {
		const struct l2fwd_counters *c = &fwd[i].path.port[port];

		t.rx += __atomic_load_n(&c->rx, __ATOMIC_RELAXED);
		t.tx += __atomic_load_n(&c->tx, __ATOMIC_RELAXED);
		t.runts += __atomic_load_n(&c->runts, __ATOMIC_RELAXED);
		t.link_down_drops += __atomic_load_n(&c->link_down_drops,
						     __ATOMIC_RELAXED);
	}
	return t;
}

/* A rate as a person reads it: "0 pps", "812 pps", "12.4 kpps", "1.523 Mpps". */
static void
rate_text(char *buf, size_t len, uint64_t n, uint64_t ns)
{
	double pps = ns != 0 ? (double)n * 1e9 / (double)ns : 0;

	if (pps >= 1e6)
		snprintf(buf, len, "%.3f Mpps", pps / 1e6);
	else if (pps >= 1e3)
		snprintf(buf, len, "%.1f kpps", pps / 1e3);
	else
		snprintf(buf, len, "%.0f pps", pps);
}

/* One port's line: link, counts and the rate since the last line. */
static void
print_port(uint16_t port, const struct l2fwd_counters *p, uint64_t window_ns)
{
	const struct l2fwd_counters *l = &last_port[port];
	char link[RTE_ETH_LINK_MAX_STR_LEN] = "link unknown", rx[24], tx[24];
	struct rte_eth_stats es;
	struct rte_eth_link el;

	if (rte_eth_link_get_nowait(port, &el) == 0)
		rte_eth_link_to_str(link, sizeof(link), &el);
	if (rte_eth_stats_get(port, &es) != 0)
		memset(&es, 0, sizeof(es));
	rate_text(rx, sizeof(rx), p->rx - l->rx, window_ns);
	rate_text(tx, sizeof(tx), p->tx - l->tx, window_ns);
	printf("port %2u: %s\n"
	       "         rx %12" PRIu64 " (%s)  tx %12" PRIu64 " (%s)\n"
	       "         imissed %" PRIu64 " ierrors %" PRIu64 " rx_nombuf %"
	       PRIu64 " runts %" PRIu64 " link-down drops %" PRIu64 "\n",
	       port, link, p->rx, rx, p->tx, tx, es.imissed, es.ierrors,
	       es.rx_nombuf, p->runts, p->link_down_drops);
}

/*
 * One lcore's line: the policy in force (telemetry may have changed it)
 * and where its CPU went since the last line.
 */
static void
print_lcore(struct fwd_lcore *f, uint64_t window_ns, bool stopped)
{
	struct sirq_lcore_params lp;
	struct app_cpu_split now, *l = &f->last_cpu;

	sirq_lcore_get_params(f->lc, &lp);
	/* Its threads are gone, with what they used since the last sample. */
	if (stopped) {
		printf("lcore %2u: %s; stopped\n", f->lcore_id,
		       sirq_policy_name(lp.engine.policy));
		return;
	}
	app_cpu_sample(&f->cpu, &now);
	printf("lcore %2u: %s; CPU since the last line: dispatcher %.0f%%, "
	       "sirqd %.0f%%, softirq threads %.0f%%, NAPI threads %.0f%%\n",
	       f->lcore_id, sirq_policy_name(lp.engine.policy),
	       app_cpu_percent(now.dispatcher_ns - l->dispatcher_ns, window_ns),
	       app_cpu_percent(now.sirqd_ns - l->sirqd_ns, window_ns),
	       app_cpu_percent(now.softirq_ns - l->softirq_ns, window_ns),
	       app_cpu_percent(now.napi_ns - l->napi_ns, window_ns));
	*l = now;
}

/*
 * The -T statistics: each port and lcore, the rates since the last
 * statistics (testpmd's "since last show"), the totals' average since
 * the start. From the control timer, and once at the end.
 */
static void
print_stats_when(bool stopped)
{
	uint64_t now = app_now_ns(), window = now - last_stats_ns;
	uint64_t rx = 0, tx = 0, drop = 0, rx_now = 0, tx_now = 0;
	char r_now[24], t_now[24], r_avg[24];
	unsigned int i;
	uint16_t port;

	printf("\nStatistics after %.1f s, rates over the last %.1f s ====================\n",
	       (double)(now - start_ns) / 1e9, (double)window / 1e9);
	for (port = 0; port < RTE_MAX_ETHPORTS; port++) {
		struct l2fwd_counters p;

		if (!ports[port].enabled)
			continue;
		p = port_totals(port);
		print_port(port, &p, window);
		rx += p.rx;
		tx += p.tx;
		rx_now += p.rx - last_port[port].rx;
		tx_now += p.tx - last_port[port].tx;
		drop += p.runts + p.link_down_drops;
		last_port[port] = p;
	}
	rate_text(r_now, sizeof(r_now), rx_now, window);
	rate_text(t_now, sizeof(t_now), tx_now, window);
	rate_text(r_avg, sizeof(r_avg), rx, now - start_ns);
	printf("total:   rx %12" PRIu64 " (%s, %s on average)  tx %12" PRIu64
	       " (%s)  dropped %" PRIu64 "\n", rx, r_now, r_avg, tx, t_now,
	       drop);
	for (i = 0; i < nb_fwd; i++)
		print_lcore(&fwd[i], window, stopped);
	if (opts.receiver.enabled) {
		for (i = 0; i < nb_fwd; i++)
			l2fwd_receiver_print(stdout, &fwd[i].rcv, now - start_ns);
	}
	fflush(stdout);
	last_stats_ns = now;
}

/* The control timer's: the lcores run. */
static void
print_stats(void)
{
	print_stats_when(false);
}

static int write_report(void);
static void write_report_now(void);

/* TIMER on the first forwarding lcore: signals, --duration, -T. */
static void
control_tick(struct rte_timer *t, void *arg)
{
	uint16_t port;

	RTE_SET_USED(t);
	RTE_SET_USED(arg);
	for (port = 0; port < RTE_MAX_ETHPORTS; port++)
		if (ports[port].enabled)
			update_link(port);
	if (opts.receiver.enabled) {
		unsigned int i;

		for (i = 0; i < nb_fwd; i++)
			l2fwd_receiver_sample_cpu(&fwd[i].rcv);
	}
	app_control(&common, start_ns, opts.period_s, last_stats_ns,
		    write_report_now, print_stats);
}

/* NET_RX under --receiver: the port's count, then the socket. */
static void
receiver_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	    struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct fwd_lcore *f = arg;
	uint64_t *rx = &f->path.port[port].rx;

	__atomic_store_n(rx, __atomic_load_n(rx, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
	l2fwd_receiver_rx(lc, port, queue, pkts, n, &f->rcv);
}

/* The dispatcher of an lcore, as rte_eal_remote_launch() starts it. */
static int
lcore_main(void *arg)
{
	struct fwd_lcore *f = arg;

	int ret;

	app_cpu_dispatcher_started(&f->cpu);
	if (opts.receiver.enabled)
		l2fwd_receiver_dispatcher_started(&f->rcv);
	ret = sirq_lcore_main(f->lc);
	if (ret != 0) {
		/* One lcore down ends the run: a supervisor sees exit 1. */
		fprintf(stderr, PROG ": lcore %u could not run (the line above says why): %s; stopping\n",
			f->lcore_id, strerror(-ret));
		sirq_lcore_stop_all();
	}
	return ret;
}

static struct sirq_lcore *
create_lcore(struct fwd_lcore *f)
{
	struct sirq_lcore_conf conf = common.lcore;
	uint16_t port, i;

	conf.worker_cpus = common.worker_cpus;
	app_cpu_init(&f->cpu, f->lcore_id);
	f->path.ports = ports;
	f->path.mac_updating = opts.mac_updating;
	if (common.load.enabled && conf.mode == SIRQ_MODE_POLL) {
		conf.app_fn = app_load_slice;
		conf.app_arg = &f->load;
	}
	f->lc = sirq_lcore_create(f->lcore_id, &conf);
	if (f->lc == NULL) {
		fprintf(stderr, PROG ": lcore %u: %s\n", f->lcore_id,
			rte_strerror(rte_errno));
		return NULL;
	}
	if (app_thread_sched_apply(PROG, &common, f->lc) != 0)
		return NULL;
	app_load_init(&f->load, &common.load, sirq_lcore_cpu(f->lc),
		      f->lcore_id, conf.mode);
	if (opts.busy.enabled) {
		if (l2fwd_busy_init(&f->busy, &opts.busy, f->lc,
				    f->lcore_id) != 0) {
			fprintf(stderr, PROG ": lcore %u: --busy-poll: %s\n",
				f->lcore_id, strerror(errno));
			return NULL;
		}
		f->path.busy = &f->busy;
	}
	if (opts.probe.enabled)
		l2fwd_probe_init(&f->probe, &opts.probe, f->lc, f->lcore_id);
	if (opts.receiver.enabled &&
	    l2fwd_receiver_init(&f->rcv, &opts.receiver, f->lcore_id,
				(int)rte_lcore_to_socket_id(f->lcore_id)) != 0)
		return NULL;
	for (i = 0; i < f->nb_rx; i++)
		if (sirq_lcore_add_rx_queue(f->lc, f->rx_port[i], f->rx_queue[i],
					    opts.receiver.enabled ? receiver_rx :
					    l2fwd_rx,
					    opts.receiver.enabled ? (void *)f :
					    (void *)&f->path) != 0)
			return NULL;
	/* Its own queue on each port it transmits to (assign_tx_queues()). */
	for (port = 0; port < RTE_MAX_ETHPORTS; port++) {
		f->path.txq_of_port[port] = -1;
		if (f->tx_queue[port] < 0)
			continue;
		f->path.txq_of_port[port] =
			sirq_lcore_add_tx_queue(f->lc, port,
						(uint16_t)f->tx_queue[port]);
		if (f->path.txq_of_port[port] < 0)
			return NULL;
	}
	return f->lc;
}

/* "receiver": one object per forwarding lcore. */
static void
receiver_json(FILE *f, const void *arg)
{
	uint64_t elapsed = app_now_ns() - start_ns;
	unsigned int i;

	RTE_SET_USED(arg);
	fprintf(f, "[");
	for (i = 0; i < nb_fwd; i++) {
		fprintf(f, "%s", i ? ",\n  " : "");
		l2fwd_receiver_json(f, &fwd[i].rcv, elapsed);
	}
	fprintf(f, "]");
}

/* "probe": one object per forwarding lcore. */
static void
probe_json(FILE *f, const void *arg)
{
	unsigned int i;

	RTE_SET_USED(arg);
	fprintf(f, "[");
	for (i = 0; i < nb_fwd; i++) {
		fprintf(f, "%s", i ? ",\n  " : "");
		l2fwd_probe_json(f, &fwd[i].probe);
	}
	fprintf(f, "]");
}

static int
write_report(void)
{
	struct report_ctx r = {
		.prog = PROG,
		.path = common.report_path,
		.start_ns = start_ns,
		.common = &common,
	};
	unsigned int i;
	uint16_t port;

	if (opts.receiver.enabled) {
		r.extra_name = "receiver";
		r.extra_json = receiver_json;
	}
	if (opts.probe.enabled) {
		r.extra2_name = "probe";
		r.extra2_json = probe_json;
	}
	for (i = 0; i < nb_fwd; i++) {
		r.lcores[r.nb_lcores].lc = fwd[i].lc;
		r.lcores[r.nb_lcores].load = common.load.enabled ? &fwd[i].load : NULL;
		r.nb_lcores++;
	}
	for (port = 0; port < RTE_MAX_ETHPORTS; port++) {
		struct report_port *rp;
		struct l2fwd_counters t;
		struct rte_eth_stats es;

		if (!ports[port].enabled)
			continue;
		t = port_totals(port);
		rp = &r.ports[r.nb_ports++];
		rp->port = port;
		rp->rx = t.rx;
		rp->tx = t.tx;
		rp->runts = t.runts;
		rp->link_down_drops = t.link_down_drops;
		if (closed[port])
			es = closed_stats[port];
		else if (rte_eth_stats_get(port, &es) != 0)
			memset(&es, 0, sizeof(es));
		rp->imissed = es.imissed;
		rp->ierrors = es.ierrors;
		rp->rx_nombuf = es.rx_nombuf;
	}
	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (pools[i] != NULL)
			r.mbufs_in_use += rte_mempool_in_use_count(pools[i]);
	return report_write(&r);
}

/*
 * After the ports closed: mbufs still out of the pools are a leak, said
 * at exit with its cause where it is known. net_af_xdp (DPDK 22.11 to
 * 25.11) never frees what it put into its fill rings, one ring of
 * libxdp's default size an Rx queue, nor its last unreaped TX burst.
 */
#define AF_XDP_FILL_RING 2048	/* XSK_RING_PROD__DEFAULT_NUM_DESCS */

static void
print_mbufs_out(unsigned int af_xdp_rxq)
{
	unsigned int i, n = 0;

	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (pools[i] != NULL)
			n += rte_mempool_in_use_count(pools[i]);
	if (n == 0)
		return;
	if (af_xdp_rxq > 0)
		printf(PROG ": %u mbufs not back in the pool after the ports "
		       "closed: net_af_xdp keeps those of its fill rings "
		       "(%u an Rx queue: %u) and its last TX burst\n", n,
		       AF_XDP_FILL_RING, AF_XDP_FILL_RING * af_xdp_rxq);
	else
		printf(PROG ": %u mbufs not back in the pool after the ports "
		       "closed (a leak)\n", n);
}

/* SIGUSR1's report: its failure is said, the run goes on. */
static void
write_report_now(void)
{
	write_report();
}

static int
parse_app_args(int argc, char **argv)
{
	const struct app_opt_table tables[] = {
		{ l2fwd_opts_table, l2fwd_nb_opts, &opts },
		{ app_common_opts, app_common_nb_opts, &common },
	};
	int ret;

	app_common_defaults(&common);
	l2fwd_opts_defaults(&opts);
	ret = app_opts_parse(PROG, argc, argv, tables, RTE_DIM(tables));
	if (ret != 0)
		return ret;
	if (common.version) {
		app_print_version(PROG);
		exit(0);
	}
	if (common.help) {
		/* The defaults, not what was parsed. */
		app_common_defaults(&common);
		l2fwd_opts_defaults(&opts);
		app_opts_usage(PROG, "[-p PORTMASK] [-q N] [-T S] [options]",
			       tables, RTE_DIM(tables));
		exit(0);
	}
	return app_common_check(PROG, &common);
}

int
main(int argc, char **argv)
{
	unsigned int i, nb_mbufs, nb_rxq = 0, nb_txq_all = 0;
	unsigned int af_xdp_rxq = 0;	/* Rx queues of net_af_xdp ports */
	int ret, rc = 0;
	uint16_t port;

	note_vdevs(argc, argv);
	ret = app_start(PROG, argc, argv, parse_app_args);
	if (ret != 0)
		return ret;

	if (setup_port_pairs() != 0) {
		rte_eal_cleanup();
		return APP_EXIT_USAGE;
	}
	for (port = 0; port < RTE_MAX_ETHPORTS; port++)
		if (ports[port].enabled)
			nb_rxq += opts.rxq_per_port;
	if (assign_lcores(nb_rxq) != 0) {
		rte_eal_cleanup();
		return APP_EXIT_USAGE;
	}
	assign_tx_queues();
	ret = check_port_queues();
	if (ret != 0) {
		rte_eal_cleanup();
		return ret == -EINVAL ? APP_EXIT_USAGE : 1;
	}
	for (port = 0; port < RTE_MAX_ETHPORTS; port++)
		nb_txq_all += nb_txq[port];
	pool_ops = choose_pool_ops();
	/*
	 * Rx rings and staging, TX rings and their lcores' buffers, and one
	 * mempool cache per lcore (sirqd runs as its lcore and shares it), which
	 * holds up to 1.5 times its size before it flushes.
	 */
	nb_mbufs = RTE_MAX(nb_rxq * (RX_DESC + SIRQ_STAGE_SIZE) +
			   nb_txq_all * (TX_DESC + SIRQ_TX_BURST) +
			   nb_fwd * (MEMPOOL_CACHE * 3 / 2),
			   (unsigned int)MIN_MBUFS);
	/* --receiver: the sockets, and what each reader holds. */
	if (opts.receiver.enabled)
		nb_mbufs += nb_fwd * (opts.receiver.rcvbuf +
				      opts.receiver.threads * L2FWD_RCV_BATCH);
	for (port = 0; port < RTE_MAX_ETHPORTS; port++) {
		if (!ports[port].enabled)
			continue;
		ret = port_init(port, nb_mbufs);
		if (ret != 0) {
			fprintf(stderr, PROG ": port %u: %s\n", port,
				strerror(-ret));
			rc = 1;
			goto out;
		}
	}
	for (i = 0; i < nb_fwd; i++)
		if (create_lcore(&fwd[i]) == NULL) {
			rc = 1;
			goto out;
		}
	rte_pdump_init();
	sirq_telemetry_register();

	start_ns = last_stats_ns = app_now_ns();
	rte_timer_init(&control_timer);
	rte_timer_reset(&control_timer,
			rte_get_timer_hz() / 1000 * CONTROL_PERIOD_MS, PERIODICAL,
			fwd[0].lcore_id, control_tick, NULL);
	for (i = 0; i < nb_fwd && opts.probe.enabled; i++) {
		ret = l2fwd_probe_start(&fwd[i].probe);
		if (ret != 0) {
			fprintf(stderr, PROG ": lcore %u: --probe timers: %s\n",
				fwd[i].lcore_id, strerror(-ret));
			rc = 1;
			goto out;
		}
		printf(PROG ": lcore %u: probe: timer every %" PRIu64
		       " us, tasklet every %" PRIu64 " us (0: none)\n",
		       fwd[i].lcore_id, opts.probe.timer_ns / 1000,
		       opts.probe.tasklet_ns / 1000);
	}
	print_ports_started();
	for (i = 0; i < nb_fwd; i++) {
		unsigned int q;

		printf(PROG ": lcore %u %s %u queue(s) under %s, %s mode:",
		       fwd[i].lcore_id,
		       opts.receiver.enabled ? "receives on" : "forwards",
		       fwd[i].nb_rx, sirq_policy_name(common.lcore.params.policy),
		       common.lcore.mode == SIRQ_MODE_IRQ ? "irq" : "poll");
		for (q = 0; q < fwd[i].nb_rx; q++) {
			uint16_t rxp = fwd[i].rx_port[q], dst = ports[rxp].dst;

			if (opts.receiver.enabled)
				printf("%s port %u rxq %u", q ? "," : "", rxp,
				       fwd[i].rx_queue[q]);
			else
				printf("%s port %u rxq %u -> port %u txq %d",
				       q ? "," : "", rxp, fwd[i].rx_queue[q], dst,
				       fwd[i].tx_queue[dst]);
		}
		printf("\n");
		if (opts.receiver.enabled)
			printf(PROG ": lcore %u: socket of %u packets, %u reader(s), "
			       "proto %" PRIu64 " ns, app %" PRIu64 " ns a packet\n",
			       fwd[i].lcore_id, opts.receiver.rcvbuf,
			       opts.receiver.threads, opts.receiver.proto_ns,
			       opts.receiver.app_ns);
		if (fwd[i].lcore_id != rte_get_main_lcore())
			rte_eal_remote_launch(lcore_main, &fwd[i],
					      fwd[i].lcore_id);
	}
	/* Seen at once where stdout is a pipe or a file: "it is up". */
	fflush(stdout);
	if (common.load.enabled && common.lcore.mode == SIRQ_MODE_IRQ)
		for (i = 0; i < nb_fwd; i++)
			if (app_load_start(&fwd[i].load) != 0) {
				sirq_lcore_stop_all();
				rc = 1;
			}
	if (opts.receiver.enabled)
		for (i = 0; i < nb_fwd; i++)
			if (l2fwd_receiver_start(&fwd[i].rcv) != 0) {
				sirq_lcore_stop_all();
				rc = 1;
			}
	if (opts.busy.enabled)
		for (i = 0; i < nb_fwd; i++)
			if (l2fwd_busy_start(&fwd[i].busy) != 0) {
				sirq_lcore_stop_all();
				rc = 1;
			}
	for (i = 0; i < nb_fwd; i++)
		if (fwd[i].lcore_id == rte_get_main_lcore() &&
		    lcore_main(&fwd[i]) != 0)
			rc = 1;
	for (i = 0; i < nb_fwd; i++)
		if (fwd[i].lcore_id != rte_get_main_lcore() &&
		    rte_eal_wait_lcore(fwd[i].lcore_id) != 0)
			rc = 1;
	rte_eal_mp_wait_lcore();
	rte_timer_stop_sync(&control_timer);
	/* Their polls were refused (-EAGAIN) since their lcore stopped. */
	if (opts.busy.enabled)
		for (i = 0; i < nb_fwd; i++)
			l2fwd_busy_stop(&fwd[i].busy);
	if (common.load.enabled && common.lcore.mode == SIRQ_MODE_IRQ)
		for (i = 0; i < nb_fwd; i++)
			app_load_stop(&fwd[i].load);
	/* The readers stop; what they left in the sockets is freed. */
	if (opts.receiver.enabled)
		for (i = 0; i < nb_fwd; i++)
			l2fwd_receiver_stop(&fwd[i].rcv);
	if (app_quit_signal != 0)
		printf(PROG ": signal %d, stopping\n", (int)app_quit_signal);
	if (opts.period_s != 0)
		print_stats_when(true);

out:
	/*
	 * The dispatchers drained their queues when they returned; closing
	 * the ports frees the rings. What is still out of a pool now, less
	 * what the lcores hold in flight, is a leak: the report says it.
	 */
	for (i = 0; i < nb_fwd; i++)
		l2fwd_probe_stop(&fwd[i].probe);	/* if armed */
	for (port = 0; port < RTE_MAX_ETHPORTS; port++)
		if (ports[port].enabled && rte_eth_dev_is_valid_port(port)) {
			struct rte_eth_dev_info info;

			if (rte_eth_stats_get(port, &closed_stats[port]) != 0)
				memset(&closed_stats[port], 0,
				       sizeof(closed_stats[port]));
			if (rte_eth_dev_info_get(port, &info) == 0 &&
			    strcmp(info.driver_name, "net_af_xdp") == 0)
				af_xdp_rxq += info.nb_rx_queues;
			closed[port] = true;
			rte_eth_dev_stop(port);
			rte_eth_dev_close(port);
		}
	print_mbufs_out(af_xdp_rxq);
	if (rc == 0 && write_report() != 0)
		rc = 1;
	for (i = 0; i < nb_fwd; i++) {
		if (opts.busy.enabled)
			l2fwd_busy_free(&fwd[i].busy);
		sirq_lcore_free(fwd[i].lc);
		fwd[i].lc = NULL;
		if (opts.receiver.enabled) {
			l2fwd_receiver_stop(&fwd[i].rcv);
			l2fwd_receiver_free(&fwd[i].rcv);
		}
	}
	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		rte_mempool_free(pools[i]);
	rte_eal_cleanup();
	return rc;
}
