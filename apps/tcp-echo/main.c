/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tcp-echo: a TCP echo server (RFC 862) on lwIP over libsirq.
 *
 * One lcore, one ethdev port (port 0). Its Rx queue is a NAPI context:
 * frames reach lwIP in NET_RX. lwIP's frames leave through sirq_tx() in
 * NET_TX, TCP segments tracked per connection (TCP small queues: a
 * connection's completion tasklet pushes its next batch). lwIP's
 * timeouts run from an rte_timer on TIMER. --app-load puts a "process"
 * beside the dispatcher, for the stall and flood scenarios.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>
#include <rte_timer.h>

#include <lwip/pbuf.h>

#include <sirq.h>

#include "app_load.h"
#include "app_main.h"
#include "app_opts.h"
#include "app_report.h"
#include "echo_stack.h"

#define PROG "tcp-echo"

#define ETH_PORT 0
#define RX_DESC 1024
#define TX_DESC 1024
#define MEMPOOL_CACHE 256
#define MIN_MBUFS 8192
/* A NAPI poll hands over at most --napi-weight frames: 256 at most. */
#define RX_BURST_MAX 256
/* Segments of one received frame; tap and most PMDs give one. */
#define MAX_RX_SEGS 8
/*
 * lwIP's timers are 250 ms (TCP) and 1 s (ARP) with 500 ms RTO ticks;
 * 10 ms keeps them within 4 % of their period and costs one TIMER run.
 */
#define LWIP_TICK_MS 10
#define CONTROL_PERIOD_MS 100		/* signals, --duration, --period */
#define STATS_PERIOD_DEFAULT 10
#define PREFIX_LEN_DEFAULT 24

struct echo_opts {
	char ip_text[APP_STR_LEN];	/* as given, for messages */
	uint32_t ip;			/* network order; 0: not given */
	uint32_t netmask;
	uint16_t port;
	uint32_t tsq_limit;
	uint32_t max_conns;
	uint32_t period_s;
};

/* "ADDR[/LEN]": a unicast IPv4 address and its prefix (24 if none). */
static int
parse_ip(void *conf, const char *value, char *err, size_t len)
{
	struct echo_opts *o = conf;
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(value, '/');
	unsigned long plen = PREFIX_LEN_DEFAULT;
	struct in_addr in;
	size_t alen = slash != NULL ? (size_t)(slash - value) : strlen(value);
	char *end;

	if (alen == 0 || alen >= sizeof(addr))
		goto bad;
	memcpy(addr, value, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1 || in.s_addr == INADDR_ANY ||
	    in.s_addr == INADDR_BROADCAST || IN_MULTICAST(ntohl(in.s_addr)))
		goto bad;
	if (slash != NULL) {
		errno = 0;
		plen = strtoul(slash + 1, &end, 10);
		if (errno != 0 || *end != '\0' || slash[1] == '\0' ||
		    plen < 1 || plen > 32)
			goto bad;
	}
	o->ip = in.s_addr;
	o->netmask = htonl(plen == 32 ? UINT32_MAX :
			   ~(UINT32_MAX >> plen));
	snprintf(o->ip_text, sizeof(o->ip_text), "%s", value);
	return 0;
bad:
	snprintf(err, len, "--ip: bad address '%s' (a unicast IPv4 ADDR[/LEN])",
		 value);
	return -1;
}

#define EO(field) offsetof(struct echo_opts, field)

static const struct app_opt echo_opts_table[] = {
	{ "ip", 0, "tcp-echo", APP_OPT_CUSTOM, 0, 0, 0, "ADDR[/LEN]",
	  "IPv4 address of the server, prefix length 24 if none (required)",
	  parse_ip, "none, required" },
	{ "port", 0, "tcp-echo", APP_OPT_U16, EO(port), 1, UINT16_MAX, "N",
	  "TCP port to echo on", NULL, NULL },
	{ "tsq-limit", 0, "tcp-echo", APP_OPT_U32, EO(tsq_limit), 1536,
	  64u << 20, "BYTES", "bytes of one connection handed to the NIC and not yet released (TCP small queues)",
	  NULL, NULL },
	{ "max-conns", 0, "tcp-echo", APP_OPT_U32, EO(max_conns), 1,
	  ECHO_MAX_CONNS, "N", "concurrent connections; more are reset",
	  NULL, NULL },
	{ "period", 'T', "tcp-echo", APP_OPT_U32, EO(period_s), 0, 86400, "S",
	  "statistics every S seconds, 0 to disable", NULL, NULL },
};

static struct app_common common;
static struct echo_opts opts;
static struct sirq_lcore *lcore;
static int txq;
static struct app_load load;
static struct rte_mempool *pool;
static struct rte_timer lwip_timer;
static struct rte_timer control_timer;
static uint64_t start_ns;
static uint64_t last_stats_ns;
static uint64_t tx_nombuf;

/* NET_RX's view of one burst, for the stack. Handlers only. */
static struct {
	struct echo_frame frames[RX_BURST_MAX];
	const void *seg_data[RX_BURST_MAX][MAX_RX_SEGS];
	uint16_t seg_len[RX_BURST_MAX][MAX_RX_SEGS];
	uint64_t rx;
	uint64_t rx_too_many_segs;
} rx;

static inline void
count(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/* NET_RX: a burst of frames into lwIP, copied; the mbufs go back. */
static void
echo_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	unsigned int nb = 0;
	uint16_t i;

	RTE_SET_USED(lc);
	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	RTE_SET_USED(arg);
	count(&rx.rx, n);
	for (i = 0; i < n; i++) {
		const struct rte_mbuf *seg = pkts[i];
		struct echo_frame *f = &rx.frames[nb];
		uint16_t s;

		if (unlikely(pkts[i]->nb_segs > MAX_RX_SEGS)) {
			count(&rx.rx_too_many_segs, 1);
			continue;
		}
		for (s = 0; seg != NULL; s++, seg = seg->next) {
			rx.seg_data[nb][s] = rte_pktmbuf_mtod(seg, const void *);
			rx.seg_len[nb][s] = rte_pktmbuf_data_len(seg);
		}
		f->len = rte_pktmbuf_pkt_len(pkts[i]);
		f->nb_segs = s;
		f->seg_data = rx.seg_data[nb];
		f->seg_len = rx.seg_len[nb];
		nb++;
	}
	echo_stack_input_burst(rx.frames, nb);
	rte_pktmbuf_free_bulk(pkts, n);
}

/*
 * lwIP's linkoutput: copy the frame into an mbuf and queue it for NET_TX,
 * accounted to its connection's tracker while the PMD holds it.
 */
static int
echo_xmit(void *arg, struct pbuf *p, struct sirq_tx_tracker *tracker)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	void *data;
	int ret;

	RTE_SET_USED(arg);
	if (unlikely(m == NULL)) {
		count(&tx_nombuf, 1);
		return -ENOMEM;
	}
	data = rte_pktmbuf_append(m, p->tot_len);
	if (unlikely(data == NULL)) {
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	pbuf_copy_partial(p, data, p->tot_len, 0);
	ret = tracker != NULL ?
		sirq_tx_tracked(lcore, (unsigned int)txq, m, tracker) : -ENOBUFS;
	/* Tracking slots of the queue all taken: send it untracked. */
	if (ret == -ENOBUFS)
		ret = sirq_tx(lcore, (unsigned int)txq, m);
	if (unlikely(ret != 0))
		rte_pktmbuf_free(m);
	return ret;
}

static void
lwip_tick(struct rte_timer *t, void *arg)
{
	RTE_SET_USED(t);
	RTE_SET_USED(arg);
	echo_stack_timeouts();
}

static void
print_stats(void)
{
	uint64_t now = app_now_ns();
	double secs = (double)(now - start_ns) / 1e9;
	struct echo_stats st;

	echo_stack_stats(&st);
	printf(PROG ": %.1f s: %u connections (%" PRIu64 " accepted, %" PRIu64
	       " closed, %" PRIu64 " reset, %" PRIu64 " refused), %.3f MB in, "
	       "%.3f MB echoed (%.2f Mbit/s), frames %" PRIu64 " in / %" PRIu64
	       " out, tx errors %" PRIu64 ", tsq throttled %" PRIu64 "\n",
	       secs, echo_stack_active_conns(), st.conns_accepted,
	       st.conns_closed, st.conns_reset, st.conns_refused,
	       (double)st.bytes_in / 1e6, (double)st.bytes_echoed / 1e6,
	       secs > 0 ? (double)st.bytes_echoed * 8 / secs / 1e6 : 0.0,
	       st.frames_in, st.frames_out, st.tx_errors, st.tsq_throttled);
	fflush(stdout);
	last_stats_ns = now;
}

static void
echo_json(FILE *f, const void *arg)
{
	struct echo_stats st;

	RTE_SET_USED(arg);
	echo_stack_stats(&st);
	fprintf(f, "{\"ip\": \"%s\", \"port\": %u, \"tsq_limit\": %u, "
		"\"max_conns\": %u, \"conns_active\": %u, "
		"\"conns_accepted\": %" PRIu64 ", \"conns_closed\": %" PRIu64
		", \"conns_reset\": %" PRIu64 ", \"conns_refused\": %" PRIu64
		", \"bytes_in\": %" PRIu64 ", \"bytes_echoed\": %" PRIu64
		", \"frames_in\": %" PRIu64 ", \"frames_out\": %" PRIu64
		", \"frames_runt\": %" PRIu64 ", \"frames_oversize\": %" PRIu64
		", \"frames_filtered\": %" PRIu64
		", \"frames_too_many_segs\": %" PRIu64
		", \"rx_nomem\": %" PRIu64 ", \"tx_errors\": %" PRIu64
		", \"tx_nombuf\": %" PRIu64 ", \"tsq_throttled\": %" PRIu64
		", \"tsq_tasklet_runs\": %" PRIu64 "}",
		opts.ip_text, opts.port, opts.tsq_limit, opts.max_conns,
		echo_stack_active_conns(), st.conns_accepted, st.conns_closed,
		st.conns_reset, st.conns_refused, st.bytes_in, st.bytes_echoed,
		st.frames_in, st.frames_out, st.frames_runt, st.frames_oversize,
		st.frames_filtered,
		__atomic_load_n(&rx.rx_too_many_segs, __ATOMIC_RELAXED),
		st.rx_nomem, st.tx_errors,
		__atomic_load_n(&tx_nombuf, __ATOMIC_RELAXED), st.tsq_throttled,
		st.tsq_tasklet_runs);
}

static int
write_report(void)
{
	struct report_ctx r = {
		.prog = PROG,
		.path = common.report_path,
		.start_ns = start_ns,
		.common = &common,
		.extra_name = "echo",
		.extra_json = echo_json,
	};
	struct echo_stats st;

	echo_stack_stats(&st);
	if (lcore != NULL) {
		r.lcores[0].lc = lcore;
		r.lcores[0].load = common.load.enabled ? &load : NULL;
		r.nb_lcores = 1;
	}
	r.nb_ports = 1;
	r.ports[0].port = ETH_PORT;
	r.ports[0].rx = __atomic_load_n(&rx.rx, __ATOMIC_RELAXED);
	r.ports[0].tx = st.frames_out;
	r.ports[0].runts = st.frames_runt;
	if (pool != NULL)
		r.mbufs_in_use = rte_mempool_in_use_count(pool);
	return report_write(&r);
}

/* SIGUSR1's report: its failure is said, the run goes on. */
static void
write_report_now(void)
{
	write_report();
}

/* TIMER: signals, --duration, --period. */
static void
control_tick(struct rte_timer *t, void *arg)
{
	RTE_SET_USED(t);
	RTE_SET_USED(arg);
	app_control(&common, start_ns, opts.period_s, last_stats_ns,
		    write_report_now, print_stats);
}

static void
opts_defaults(void)
{
	app_common_defaults(&common);
	memset(&opts, 0, sizeof(opts));
	opts.port = ECHO_DEFAULT_PORT;
	opts.tsq_limit = ECHO_DEFAULT_TSQ_LIMIT;
	opts.max_conns = ECHO_DEFAULT_MAX_CONNS;
	opts.period_s = STATS_PERIOD_DEFAULT;
}

static int
parse_app_args(int argc, char **argv)
{
	const struct app_opt_table tables[] = {
		{ echo_opts_table, RTE_DIM(echo_opts_table), &opts },
		{ app_common_opts, app_common_nb_opts, &common },
	};
	int ret;

	opts_defaults();
	ret = app_opts_parse(PROG, argc, argv, tables, RTE_DIM(tables));
	if (ret != 0)
		return ret;
	if (common.version) {
		app_print_version(PROG);
		exit(0);
	}
	if (common.help) {
		opts_defaults();
		app_opts_usage(PROG, "--ip ADDR[/LEN] [--port N] [options]",
			       tables, RTE_DIM(tables));
		exit(0);
	}
	if (opts.ip == 0) {
		fprintf(stderr, PROG ": --ip is required (there is no default address); see --help\n");
		return APP_EXIT_USAGE;
	}
	return app_common_check(PROG, &common);
}

static int
port_init(uint16_t port, unsigned int nb_mbufs, uint16_t *mtu)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t nb_rxd = RX_DESC, nb_txd = TX_DESC;
	int socket = rte_eth_dev_socket_id(port), ret;

	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return ret;
	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = common.lcore.mode == SIRQ_MODE_IRQ;
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (ret != 0)
		return ret;
	pool = rte_pktmbuf_pool_create("echo_mbufs", nb_mbufs, MEMPOOL_CACHE,
				       0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       socket < 0 ? 0 : socket);
	if (pool == NULL) {
		fprintf(stderr, PROG ": mbuf pool (%u mbufs): %s\n", nb_mbufs,
			rte_strerror(rte_errno));
		return -ENOMEM;
	}
	ret = rte_eth_rx_queue_setup(port, 0, nb_rxd, socket, NULL, pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, nb_txd, socket, NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret != 0)
		return ret;
	if (rte_eth_dev_get_mtu(port, mtu) != 0)
		*mtu = RTE_ETHER_MTU;
	/* Every frame lwIP sends is copied into one mbuf of the pool. */
	if (*mtu > RTE_MBUF_DEFAULT_DATAROOM - ECHO_LINK_HLEN_MAX)
		*mtu = RTE_MBUF_DEFAULT_DATAROOM - ECHO_LINK_HLEN_MAX;
	return 0;
}

static int
lcore_init(unsigned int lcore_id)
{
	struct sirq_lcore_conf conf = common.lcore;

	conf.worker_cpus = common.worker_cpus;
	if (common.load.enabled && conf.mode == SIRQ_MODE_POLL) {
		conf.app_fn = app_load_slice;
		conf.app_arg = &load;
	}
	lcore = sirq_lcore_create(lcore_id, &conf);
	if (lcore == NULL) {
		fprintf(stderr, PROG ": lcore %u: %s\n", lcore_id,
			rte_strerror(rte_errno));
		return -1;
	}
	if (app_thread_sched_apply(PROG, &common, lcore) != 0)
		return -1;
	app_load_init(&load, &common.load, sirq_lcore_cpu(lcore), lcore_id,
		      conf.mode);
	if (sirq_lcore_add_rx_queue(lcore, ETH_PORT, 0, echo_rx, NULL) != 0)
		return -1;
	txq = sirq_lcore_add_tx_queue(lcore, ETH_PORT, 0);
	return txq < 0 ? -1 : 0;
}

/* Handlers of the lcore excluded on this thread: run @fn, then NET_TX. */
static void
with_bh_disabled(void (*fn)(void))
{
	struct sirq_cpu *cpu = sirq_lcore_cpu(lcore);

	sirq_bh_disable(cpu);
	if (fn != NULL)
		fn();
	/* Completions too: what the PMD released goes back to the pool. */
	sirq_raise_irqoff(cpu, SIRQ_NET_TX);
	sirq_bh_enable(cpu);
}

static int
stack_init(uint16_t mtu)
{
	struct echo_stack_conf conf = {
		.ip = opts.ip,
		.netmask = opts.netmask,
		.port = opts.port,
		.mtu = mtu,
		.max_conns = opts.max_conns,
		.tsq_limit = opts.tsq_limit,
		.xmit = echo_xmit,
	};
	struct rte_ether_addr mac;
	int ret;

	rte_eth_macaddr_get(ETH_PORT, &mac);
	memcpy(conf.mac, mac.addr_bytes, sizeof(conf.mac));
	/* The gratuitous ARP of netif_set_up() goes out through NET_TX. */
	sirq_bh_disable(sirq_lcore_cpu(lcore));
	ret = echo_stack_init(&conf);
	sirq_bh_enable(sirq_lcore_cpu(lcore));
	if (ret != 0) {
		fprintf(stderr, PROG ": lwIP on %s port %u: %s\n", opts.ip_text,
			opts.port, strerror(-ret));
		return ret;
	}
	printf(PROG ": %s port %u, MAC " RTE_ETHER_ADDR_PRT_FMT ", MTU %u, "
	       "lcore %u under %s, %s mode, TSQ limit %u bytes\n",
	       opts.ip_text, opts.port, RTE_ETHER_ADDR_BYTES(&mac), mtu,
	       sirq_lcore_id(lcore),
	       sirq_policy_name(common.lcore.params.policy),
	       common.lcore.mode == SIRQ_MODE_IRQ ? "irq" : "poll",
	       opts.tsq_limit);
	fflush(stdout);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned int lcore_id, nb_mbufs;
	int ret, rc = 0;
	bool port_started = false;
	uint16_t mtu = RTE_ETHER_MTU;

	ret = app_start(PROG, argc, argv, parse_app_args);
	if (ret != 0)
		return ret;

	if (!rte_eth_dev_is_valid_port(ETH_PORT)) {
		fprintf(stderr, PROG ": no ethdev port %u (give a --vdev or a NIC)\n",
			ETH_PORT);
		rte_eal_cleanup();
		return APP_EXIT_USAGE;
	}
	lcore_id = rte_get_main_lcore();
	if (rte_lcore_count() > 1)
		printf(PROG ": lwIP is one locked stack: only lcore %u runs it, the others stay idle\n",
		       lcore_id);
	/* Rx ring and staging, TX ring and buffer, tracked packets, cache. */
	nb_mbufs = RTE_MAX((unsigned int)(RX_DESC + SIRQ_STAGE_SIZE + TX_DESC +
					  SIRQ_TX_BURST + SIRQ_TX_TRACK_MAX +
					  2 * MEMPOOL_CACHE),
			   (unsigned int)MIN_MBUFS);
	ret = port_init(ETH_PORT, nb_mbufs, &mtu);
	if (ret != 0) {
		fprintf(stderr, PROG ": port %u: %s\n", ETH_PORT, strerror(-ret));
		rc = 1;
		goto out;
	}
	port_started = true;
	if (lcore_init(lcore_id) != 0 || stack_init(mtu) != 0) {
		rc = 1;
		goto out;
	}
	rte_pdump_init();
	sirq_telemetry_register();

	start_ns = last_stats_ns = app_now_ns();
	rte_timer_init(&lwip_timer);
	rte_timer_reset(&lwip_timer, rte_get_timer_hz() / 1000 * LWIP_TICK_MS,
			PERIODICAL, lcore_id, lwip_tick, NULL);
	rte_timer_init(&control_timer);
	rte_timer_reset(&control_timer,
			rte_get_timer_hz() / 1000 * CONTROL_PERIOD_MS, PERIODICAL,
			lcore_id, control_tick, NULL);
	if (common.load.enabled && common.lcore.mode == SIRQ_MODE_IRQ &&
	    app_load_start(&load) != 0)
		rc = 1;
	if (rc == 0 && sirq_lcore_main(lcore) != 0) {
		fprintf(stderr, PROG ": lcore %u could not run (the line above says why)\n",
			lcore_id);
		rc = 1;
	}
	rte_timer_stop_sync(&lwip_timer);
	rte_timer_stop_sync(&control_timer);
	if (common.load.enabled && common.lcore.mode == SIRQ_MODE_IRQ)
		app_load_stop(&load);
	if (app_quit_signal != 0)
		printf(PROG ": signal %d, stopping\n", (int)app_quit_signal);
	if (opts.period_s != 0)
		print_stats();
	/* Connections still open get a RST; it leaves through NET_TX. */
	with_bh_disabled(echo_stack_shutdown);

out:
	if (port_started) {
		rte_eth_dev_stop(ETH_PORT);
		rte_eth_dev_close(ETH_PORT);
		/* The port let go of everything: complete what it held. */
		if (lcore != NULL)
			with_bh_disabled(NULL);
	}
	if (rc == 0 && write_report() != 0)
		rc = 1;
	sirq_lcore_free(lcore);
	lcore = NULL;
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return rc;
}
