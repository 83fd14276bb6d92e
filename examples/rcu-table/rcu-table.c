/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rcu-table: change a table that handlers read, from another CPU, without
 * ever stopping the lcore.
 *
 * One lcore forwards what arrives on port 0 to port 1, as
 * examples/forwarder does; its receive function, in NET_RX, looks every
 * burst up in a forwarding table. A control thread on another CPU
 * replaces that table every 10 ms the way the kernel replaces what its
 * softirqs read:
 *  - build a new copy, publish it with a release store
 *    (rcu_assign_pointer()); readers load the pointer with acquire
 *    (rcu_dereference());
 *  - wait for a grace period (synchronize_rcu()): DPDK's rte_rcu_qsbr,
 *    which the lcore's dispatcher and sirqd report their quiescent
 *    states to through conf.qsbr;
 *  - free the old copy.
 * It never disables the lcore's bottom halves: a thread on another CPU
 * that did would stop every packet of the lcore for as long as the
 * scheduler kept that thread off its CPU, so libsirq refuses it with
 * -EXDEV while the lcore runs (shown once, at the start). State that
 * only the lcore may touch it reaches with a remote call,
 * sirq_lcore_call(), which runs a function on the lcore between two
 * handlers (the kernel's smp_call_function_single()), once a second.
 *
 * The control thread runs at nice 19 on the main lcore's CPU, beside a
 * thread that spins there at nice 0: the scheduler seldom runs it. That
 * delays its swaps, never the lcore; the receive function measures the
 * longest gap between two of its runs to show it.
 *
 * Built outside the tree against the installed library:
 *
 *   cc -O2 -Wall -o rcu-table rcu-table.c \
 *       $(pkg-config --cflags --libs libsirq libdpdk)
 *   ./rcu-table -l 0,1 --no-huge -m 256 --no-pci \
 *       --vdev net_null0 --vdev net_null1 -- --seconds 3
 */

/* pthread_attr_setaffinity_np(), CPU_SET(), gettid() */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include <sirq.h>

#define PROG "rcu-table"

/* Exit codes. */
#define EXIT_OK 0
#define EXIT_FAILURE_RUN 1	/* setup failed, a call refused, mbufs leaked */
#define EXIT_USAGE 2		/* a bad option or EAL argument */

#define RX_PORT 0
#define TX_PORT 1
#define RING_SIZE 1024
#define NB_MBUF 8191
#define MBUF_CACHE 256

#define DEFAULT_SECONDS 3
#define TABLE_SIZE 256			/* entries; a power of 2 */
#define SWAP_PERIOD_US (10 * 1000)	/* a new table every 10 ms */
#define CALL_PERIOD_S 1			/* a remote call every second */
#define CONTROL_NICE 19			/* the control thread, seldom run */

/* The threads that report to the QSBR variable: the lcore's two. */
#define QSBR_THREADS 2
#define QSBR_DISPATCHER_ID 0
#define QSBR_WORKER_ID 1

/* Options after "--". */
struct options {
	unsigned int seconds;
};

/*
 * One entry of the forwarding table. Every entry carries the generation
 * of its table, so that a reader can tell a whole table from one that
 * is being torn down: the writer poisons a table's entries after its
 * grace period, before freeing it, and a reader that still saw them
 * would count a torn lookup.
 */
struct fwd_entry {
	uint64_t generation;
	uint16_t txq;			/* sirq_tx_burst() index */
};

/*
 * The table. Readers never write it: a new one replaces it whole. Here
 * every entry sends to port 1's queue; a real table would pick the queue
 * (or the port) per flow.
 */
struct fwd_table {
	uint64_t generation;
	struct fwd_entry entry[TABLE_SIZE];
};

/*
 * What the receive function keeps. Only the lcore's handlers touch it,
 * one at a time (they hold the lcore's execution lock, on the dispatcher
 * or on sirqd): plain fields, no atomics. Other threads read it through
 * a remote call, which runs under the same lock, or after the lcore
 * stopped.
 */
struct rx_state {
	uint64_t packets;		/* handed to sirq_tx_burst() */
	uint64_t bursts;		/* receive function runs */
	uint64_t tx_errors;		/* sirq_tx_burst() refused a burst */
	uint64_t torn;			/* lookups that met a poisoned table */
	uint64_t last_tsc;		/* the previous run, rte_rdtsc() */
	uint64_t max_gap_tsc;		/* the longest gap between two runs */
};

/* A copy of struct rx_state taken on the lcore by a remote call. */
struct rx_snapshot {
	const struct rx_state *rx;	/* in: what to copy */
	struct rx_state copy;		/* out */
};

struct rcu_fwd {
	struct sirq_lcore *lc;
	struct sirq_cpu *cpu;
	struct rte_rcu_qsbr *qsbr;
	int txq;			/* sirq_tx_burst() index of port 1 */
	int socket;			/* the lcore's NUMA node */
	struct fwd_table *table;	/* RCU-protected: see table_rx() */
	bool running;			/* the receive function has run */
	struct rx_state rx;		/* the lcore's own */
};

/*
 * The control thread's results: main() reads them after pthread_join(),
 * and result also while the thread runs, to stop early on a failure.
 */
struct control {
	struct rcu_fwd *f;
	unsigned int cpu;		/* the CPU it is pinned to */
	int result;			/* 0, or the negative errno */
	bool bh_tried;			/* sirq_bh_disable() was tried ... */
	int bh_result;			/* ... and returned this */
	uint64_t swaps;			/* tables replaced and freed */
	uint64_t max_grace_tsc;		/* the longest synchronize */
	uint64_t calls;			/* remote calls that ran */
};

static struct rcu_fwd fwd;
static volatile sig_atomic_t quit_signal;	/* SIGINT or SIGTERM seen */
static bool stopping;				/* main() is stopping */
static bool spin_stop;				/* the spinner may end */

static bool
should_stop(void)
{
	return quit_signal != 0 || __atomic_load_n(&stopping, __ATOMIC_ACQUIRE);
}

static void
usage(void)
{
	printf("usage: " PROG " [EAL options] -- [options]\n"
	       "\n"
	       "Forwards port 0 to port 1 on the first worker lcore (EAL -l 0,1)\n"
	       "through a table that a control thread on the main lcore's CPU, at\n"
	       "nice %d beside a busy thread, replaces every %d ms with RCU\n"
	       "(rte_rcu_qsbr); once a second it reads the lcore's counters with a\n"
	       "remote call (sirq_lcore_call()).\n"
	       "\n"
	       "  -s, --seconds N   stop after N seconds (default %d; 0: at SIGINT/SIGTERM)\n"
	       "  -h, --help        this text\n"
	       "\n"
	       "Example: " PROG " -l 0,1 --no-huge -m 256 --no-pci --file-prefix rcu \\\n"
	       "           --vdev net_null0 --vdev net_null1 -- --seconds 3\n"
	       "\n"
	       "Exit status: 0 stopped cleanly; 1 a setup step or a call failed, a\n"
	       "lookup met a freed table, or mbufs leaked; 2 a bad option.\n",
	       CONTROL_NICE, SWAP_PERIOD_US / 1000, DEFAULT_SECONDS);
}

/* A number of seconds, or a message naming the bad value. */
static int
parse_seconds(const char *opt, const char *arg, unsigned int *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' ||
	    v > 86400) {
		fprintf(stderr, PROG ": %s '%s': want whole seconds, 0 to 86400\n",
			opt, arg);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

static int
parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->seconds = DEFAULT_SECONDS;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_seconds("--seconds", optarg, &o->seconds) != 0)
				return -EINVAL;
			break;
		case 'h':
			usage();
			exit(EXIT_OK);
		case ':':
			fprintf(stderr, PROG ": %s needs a value (--help)\n",
				argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(stderr, PROG ": unknown option '%s' (--help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s' (--help)\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* --help after "--" answers before EAL starts (which wants root). */
static bool
help_asked(int argc, char **argv)
{
	int i;
	bool after = false;

	for (i = 1; i < argc; i++) {
		if (!after) {
			after = strcmp(argv[i], "--") == 0;
			continue;
		}
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	}
	return false;
}

static inline uint64_t
tsc_to_us(uint64_t tsc)
{
	return (uint64_t)((double)tsc * 1e6 / (double)rte_get_tsc_hz());
}

/*
 * NET_RX: a burst from port 0's Rx queue, in handler context. The table
 * pointer is loaded once per burst with acquire, rcu_dereference(): the
 * table it points to stays valid until this thread's next quiescent
 * state, which the dispatcher reports after its iteration and sirqd
 * after its pass, so never while a handler runs.
 */
static void
table_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	 struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct rcu_fwd *f = arg;
	struct rx_state *rx = &f->rx;
	const struct fwd_table *t;
	const struct fwd_entry *e;
	uint64_t now = rte_rdtsc();
	int ret;

	(void)port;
	(void)queue;
	/* The lcore's NET_RX gap: how long nothing polled the queue. */
	if (likely(rx->last_tsc != 0)) {
		if (now - rx->last_tsc > rx->max_gap_tsc)
			rx->max_gap_tsc = now - rx->last_tsc;
	} else {
		/* The lcore runs: the control thread may start. */
		__atomic_store_n(&f->running, true, __ATOMIC_RELEASE);
	}
	rx->last_tsc = now;

	t = __atomic_load_n(&f->table, __ATOMIC_ACQUIRE);
	e = &t->entry[rx->bursts & (TABLE_SIZE - 1)];
	if (unlikely(e->generation != t->generation))
		rx->torn++;
	rx->bursts++;
	ret = sirq_tx_burst(lc, e->txq, pkts, n);
	if (unlikely(ret < 0)) {	/* cannot happen here: we are in NET_RX */
		rte_pktmbuf_free_bulk(pkts, n);
		rx->tx_errors++;
		return;
	}
	rx->packets += n;
}

/*
 * A remote call's function: runs on the lcore with its execution lock
 * held, between two handlers, so it may read the receive function's
 * plain counters as they are, without a torn or stale value.
 */
static int
rx_snapshot_call(struct sirq_lcore *lc, void *arg)
{
	struct rx_snapshot *s = arg;

	(void)lc;
	s->copy = *s->rx;
	return 0;
}

/* A table of @generation, every entry to port 1's queue; NULL: no memory. */
static struct fwd_table *
table_alloc(const struct rcu_fwd *f, uint64_t generation)
{
	struct fwd_table *t;
	unsigned int i;

	/* On the lcore's node: the lcore reads it for every burst. */
	t = rte_malloc_socket("rcu_table", sizeof(*t), RTE_CACHE_LINE_SIZE,
			      f->socket);
	if (t == NULL)
		return NULL;
	t->generation = generation;
	for (i = 0; i < TABLE_SIZE; i++) {
		t->entry[i].generation = generation;
		t->entry[i].txq = (uint16_t)f->txq;
	}
	return t;
}

/*
 * Free a table no reader can see any more. It is poisoned first: a
 * reader that still used it (a grace period that did not wait for it)
 * would find its entries at a generation that is not the table's.
 */
static void
table_free(struct fwd_table *t)
{
	unsigned int i;

	if (t == NULL)
		return;
	t->generation = 0;
	for (i = 0; i < TABLE_SIZE; i++)
		t->entry[i].generation = UINT64_MAX;
	rte_free(t);
}

/*
 * Replace the table: publish the new one, wait until neither of the
 * lcore's threads can still hold the old one, free it. Only this thread
 * writes fwd.table. The wait is for each of the lcore's threads to
 * report once more (the dispatcher after its iteration, sirqd after its
 * pass, both offline while they sleep), plus this thread's own turns on
 * its CPU; the lcore itself waits for nothing.
 */
static int
table_swap(struct control *c, uint64_t generation)
{
	struct rcu_fwd *f = c->f;
	struct fwd_table *new, *old;
	uint64_t t0, grace;

	new = table_alloc(f, generation);
	if (new == NULL)
		return -ENOMEM;
	old = __atomic_load_n(&f->table, __ATOMIC_RELAXED);
	/* rcu_assign_pointer(): the entries before the pointer. */
	__atomic_store_n(&f->table, new, __ATOMIC_RELEASE);
	/* synchronize_rcu(); this thread is no reader. */
	t0 = rte_rdtsc();
	rte_rcu_qsbr_synchronize(f->qsbr, RTE_QSBR_THRID_INVALID);
	grace = rte_rdtsc() - t0;
	if (grace > c->max_grace_tsc)
		c->max_grace_tsc = grace;
	table_free(old);
	c->swaps++;
	return 0;
}

static int
remote_snapshot(struct control *c, struct rx_snapshot *s)
{
	uint64_t before = s->copy.packets;
	int ret;

	/* Waits for the lcore's next look; the lcore waits for nothing. */
	ret = sirq_lcore_call(c->f->lc, rx_snapshot_call, s);
	if (ret != 0) {
		fprintf(stderr, PROG ": control thread: sirq_lcore_call: %s\n",
			strerror(-ret));
		return ret;
	}
	if (s->copy.packets < before) {
		fprintf(stderr, PROG ": control thread: the lcore's packet count went from %"
			PRIu64 " back to %" PRIu64 "\n", before, s->copy.packets);
		return -EPROTO;
	}
	c->calls++;
	return 0;
}

/*
 * The control thread: at nice 19 on another CPU than the lcore's, so the
 * scheduler may keep it waiting for a long time, in any of its steps.
 * None of them stops the lcore.
 */
static void *
control_main(void *arg)
{
	struct control *c = arg;
	struct rcu_fwd *f = c->f;
	struct rx_snapshot snap;
	uint64_t hz = rte_get_timer_hz();
	uint64_t generation = 1, next_call;
	int ret;

	if (setpriority(PRIO_PROCESS, (id_t)gettid(), CONTROL_NICE) != 0) {
		ret = -errno;
		fprintf(stderr, PROG ": control thread: setpriority(nice %d): %s\n",
			CONTROL_NICE, strerror(-ret));
		__atomic_store_n(&c->result, ret, __ATOMIC_RELAXED);
		return NULL;
	}
	/* sirq_lcore_main() runs once the receive function has. */
	while (!__atomic_load_n(&f->running, __ATOMIC_ACQUIRE)) {
		if (should_stop())
			return NULL;
		usleep(1000);
	}

	/*
	 * The wrong way, once: disabling the lcore's bottom halves from
	 * here would stop the lcore until this thread, at nice 19, ran
	 * again to enable them. While the lcore runs it is refused.
	 */
	c->bh_result = sirq_bh_disable(f->cpu);
	c->bh_tried = true;
	if (c->bh_result == 0)
		sirq_bh_enable(f->cpu);

	memset(&snap, 0, sizeof(snap));
	snap.rx = &f->rx;
	ret = remote_snapshot(c, &snap);
	next_call = rte_get_timer_cycles() + CALL_PERIOD_S * hz;
	while (ret == 0 && !should_stop()) {
		usleep(SWAP_PERIOD_US);
		ret = table_swap(c, ++generation);
		if (ret != 0) {
			fprintf(stderr, PROG ": control thread: table of generation %"
				PRIu64 ": %s\n", generation, strerror(-ret));
			break;
		}
		if (rte_get_timer_cycles() >= next_call) {
			ret = remote_snapshot(c, &snap);
			next_call = rte_get_timer_cycles() + CALL_PERIOD_S * hz;
		}
	}
	__atomic_store_n(&c->result, ret, __ATOMIC_RELAXED);
	return NULL;
}

/* Beside the control thread, at nice 0: keeps its CPU busy. */
static void *
spin_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&spin_stop, __ATOMIC_ACQUIRE))
		rte_pause();
	return NULL;
}

/* A thread on @cpu alone; 0 or the positive errno, as pthreads say. */
static int
thread_start_on(pthread_t *t, unsigned int cpu, void *(*fn)(void *),
		void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ret = pthread_attr_init(&attr);
	if (ret != 0)
		return ret;
	ret = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (ret == 0)
		ret = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return ret;
}

static void
on_signal(int sig)
{
	quit_signal = sig;
	sirq_lcore_stop_all();		/* async-signal-safe */
}

static int
port_init(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	int socket = rte_eth_dev_socket_id(port);
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port, 0, RING_SIZE, socket, NULL,
					     pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, RING_SIZE, socket, NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret != 0)
		fprintf(stderr, PROG ": port %u: %s\n", port, strerror(-ret));
	return ret;
}

/* The first CPU of @lcore, or -1 when it has none. */
static int
lcore_first_cpu(unsigned int lcore)
{
	rte_cpuset_t set = rte_lcore_cpuset(lcore);
	unsigned int cpu;

	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			return (int)cpu;
	return -1;
}

static bool
lcore_has_cpu(unsigned int lcore, unsigned int cpu)
{
	rte_cpuset_t set = rte_lcore_cpuset(lcore);

	return CPU_ISSET(cpu, &set);
}

/* The QSBR variable for the lcore's two threads, on the lcore's node. */
static struct rte_rcu_qsbr *
qsbr_create(int socket)
{
	struct rte_rcu_qsbr *v;
	size_t sz;
	int ret;

	sz = rte_rcu_qsbr_get_memsize(QSBR_THREADS);
	v = rte_zmalloc_socket("rcu_table_qsbr", sz, RTE_CACHE_LINE_SIZE,
			       socket);
	if (v == NULL) {
		fprintf(stderr, PROG ": QSBR variable: no memory for %zu bytes\n",
			sz);
		return NULL;
	}
	ret = rte_rcu_qsbr_init(v, QSBR_THREADS);
	if (ret == 0)
		ret = rte_rcu_qsbr_thread_register(v, QSBR_DISPATCHER_ID);
	if (ret == 0)
		ret = rte_rcu_qsbr_thread_register(v, QSBR_WORKER_ID);
	if (ret != 0) {
		fprintf(stderr, PROG ": QSBR variable: %s\n",
			rte_strerror(rte_errno));
		rte_free(v);
		return NULL;
	}
	return v;
}

/* The engine's counters: large, not on the stack. */
static struct sirq_stats eng;

int
main(int argc, char **argv)
{
	struct sirq_lcore_conf conf;
	struct options opts;
	struct control ctl;
	struct rte_mempool *pool;
	pthread_t control_thread, spin_thread;
	bool control_started = false, spin_started = false;
	unsigned int lcore, in_use;
	uint64_t hz, end;
	int ret, ctl_cpu, rc = EXIT_OK;

	if (help_asked(argc, argv)) {
		usage();
		return EXIT_OK;
	}

	/* 1. EAL, then the application's options after "--". */
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		/* EAL logged why; not every failure sets rte_errno. */
		fprintf(stderr, PROG ": EAL init failed: %s\n",
			rte_errno != 0 ? rte_strerror(rte_errno) :
			"see EAL's messages above");
		return rte_errno == EINVAL ? EXIT_USAGE : EXIT_FAILURE_RUN;
	}
	argc -= ret;
	argv += ret;
	if (parse_options(argc, argv, &opts) != 0) {
		rte_eal_cleanup();
		return EXIT_USAGE;
	}
	lcore = rte_get_next_lcore(-1, 1, 0);
	if (lcore >= RTE_MAX_LCORE) {
		fprintf(stderr, PROG ": no worker lcore for the dispatcher: "
			"give two lcores, e.g. -l 0,1\n");
		rte_eal_cleanup();
		return EXIT_USAGE;
	}
	/* The control thread's CPU: the main lcore's, not the dispatcher's. */
	ctl_cpu = lcore_first_cpu(rte_get_main_lcore());
	if (ctl_cpu < 0) {
		fprintf(stderr, PROG ": the main lcore %u has no CPU\n",
			rte_get_main_lcore());
		rte_eal_cleanup();
		return EXIT_USAGE;
	}
	if (lcore_has_cpu(lcore, (unsigned int)ctl_cpu)) {
		fprintf(stderr, PROG ": the main lcore %u and lcore %u share CPU %d: "
			"the control thread must run on another CPU than the "
			"dispatcher's (e.g. -l 0,1)\n",
			rte_get_main_lcore(), lcore, ctl_cpu);
		rte_eal_cleanup();
		return EXIT_USAGE;
	}
	if (!rte_eth_dev_is_valid_port(RX_PORT) ||
	    !rte_eth_dev_is_valid_port(TX_PORT)) {
		fprintf(stderr, PROG ": needs ports 0 and 1, found %u port(s): "
			"e.g. --vdev net_null0 --vdev net_null1\n",
			rte_eth_dev_count_avail());
		rte_eal_cleanup();
		return EXIT_USAGE;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fwd.socket = (int)rte_lcore_to_socket_id(lcore);

	/* 2. The mbuf pool and the two ports. */
	pool = rte_pktmbuf_pool_create("rcu_pool", NB_MBUF, MBUF_CACHE, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, fwd.socket);
	if (pool == NULL) {
		fprintf(stderr, PROG ": mbuf pool: %s\n", rte_strerror(rte_errno));
		rte_eal_cleanup();
		return EXIT_FAILURE_RUN;
	}
	if (port_init(RX_PORT, pool) != 0 || port_init(TX_PORT, pool) != 0) {
		rc = EXIT_FAILURE_RUN;
		goto close_ports;
	}

	/*
	 * 3. RCU: one QSBR variable, one id for the dispatcher and one for
	 * sirqd. With conf.qsbr set, every thread that runs the lcore's
	 * handlers reports to it.
	 */
	fwd.qsbr = qsbr_create(fwd.socket);
	if (fwd.qsbr == NULL) {
		rc = EXIT_FAILURE_RUN;
		goto close_ports;
	}

	/* 4. The lcore's dispatcher, reporting to the QSBR variable. */
	sirq_lcore_conf_default(&conf);
	conf.qsbr = fwd.qsbr;
	conf.qsbr_dispatcher_id = QSBR_DISPATCHER_ID;
	conf.qsbr_worker_id = QSBR_WORKER_ID;
	fwd.lc = sirq_lcore_create(lcore, &conf);
	if (fwd.lc == NULL) {
		fprintf(stderr, PROG ": sirq_lcore_create(lcore %u): %s\n",
			lcore, rte_strerror(rte_errno));
		rc = EXIT_FAILURE_RUN;
		goto free_qsbr;
	}
	fwd.cpu = sirq_lcore_cpu(fwd.lc);

	/* 5. Queues, and the first table, which the queue's handler reads. */
	fwd.txq = sirq_lcore_add_tx_queue(fwd.lc, TX_PORT, 0);
	if (fwd.txq < 0) {
		fprintf(stderr, PROG ": sirq_lcore_add_tx_queue(port %u): %s\n",
			TX_PORT, strerror(-fwd.txq));
		rc = EXIT_FAILURE_RUN;
		goto free_lcore;
	}
	fwd.table = table_alloc(&fwd, 1);
	if (fwd.table == NULL) {
		fprintf(stderr, PROG ": the first table: no memory for %zu bytes\n",
			sizeof(*fwd.table));
		rc = EXIT_FAILURE_RUN;
		goto free_lcore;
	}
	ret = sirq_lcore_add_rx_queue(fwd.lc, RX_PORT, 0, table_rx, &fwd);
	if (ret != 0) {
		fprintf(stderr, PROG ": sirq_lcore_add_rx_queue(port %u): %s\n",
			RX_PORT, strerror(-ret));
		rc = EXIT_FAILURE_RUN;
		goto free_lcore;
	}

	/*
	 * 6. Launch. sirq_lcore_main() puts the dispatcher's QSBR id online
	 * before its first look and offline when it returns; sirqd's is
	 * online while it is awake.
	 */
	printf(PROG ": lcore %u forwards port %u -> port %u under %s through a %u-entry table; "
	       "a control thread on CPU %d at nice %d, beside a busy thread, replaces it every %d ms\n",
	       lcore, RX_PORT, TX_PORT, sirq_policy_name(conf.params.policy),
	       TABLE_SIZE, ctl_cpu, CONTROL_NICE, SWAP_PERIOD_US / 1000);
	fflush(stdout);
	ret = rte_eal_remote_launch(sirq_lcore_main, fwd.lc, lcore);
	if (ret != 0) {
		fprintf(stderr, PROG ": launch on lcore %u: %s\n", lcore,
			strerror(-ret));
		rc = EXIT_FAILURE_RUN;
		goto free_lcore;
	}

	/* 7. The busy thread, then the control thread, on the same CPU. */
	memset(&ctl, 0, sizeof(ctl));
	ctl.f = &fwd;
	ctl.cpu = (unsigned int)ctl_cpu;
	ret = thread_start_on(&spin_thread, ctl.cpu, spin_main, NULL);
	if (ret != 0) {
		fprintf(stderr, PROG ": busy thread on CPU %u: %s\n", ctl.cpu,
			strerror(ret));
		rc = EXIT_FAILURE_RUN;
	} else {
		spin_started = true;
		ret = thread_start_on(&control_thread, ctl.cpu, control_main,
				      &ctl);
		if (ret != 0) {
			fprintf(stderr, PROG ": control thread on CPU %u: %s\n",
				ctl.cpu, strerror(ret));
			rc = EXIT_FAILURE_RUN;
		} else {
			control_started = true;
		}
	}

	/* 8. Run for --seconds, or until a signal or a failed control step. */
	hz = rte_get_timer_hz();
	end = rte_get_timer_cycles() + opts.seconds * hz;
	while (rc == EXIT_OK && quit_signal == 0 &&
	       (opts.seconds == 0 || rte_get_timer_cycles() < end) &&
	       __atomic_load_n(&ctl.result, __ATOMIC_RELAXED) == 0)
		usleep(10 * 1000);

	/* 9. Stop: the dispatcher returns once sirqd is joined and drained. */
	__atomic_store_n(&stopping, true, __ATOMIC_RELEASE);
	sirq_lcore_stop_all();
	ret = rte_eal_wait_lcore(lcore);
	if (ret != 0) {
		fprintf(stderr, PROG ": sirq_lcore_main: %s\n", strerror(-ret));
		rc = EXIT_FAILURE_RUN;
	}
	/* The busy thread first: beside it the control thread seldom runs. */
	__atomic_store_n(&spin_stop, true, __ATOMIC_RELEASE);
	if (spin_started)
		pthread_join(spin_thread, NULL);
	if (control_started) {
		pthread_join(control_thread, NULL);
		if (ctl.result != 0)
			rc = EXIT_FAILURE_RUN;
	}

	if (quit_signal != 0)
		printf(PROG ": signal %d, stopped\n", (int)quit_signal);
	if (ctl.bh_tried && ctl.bh_result == -EXDEV) {
		printf(PROG ": sirq_bh_disable() from CPU %u while lcore %u ran: -EXDEV, "
		       "refused (another CPU never stops the lcore)\n",
		       ctl.cpu, lcore);
	} else if (ctl.bh_tried) {
		fprintf(stderr, PROG ": sirq_bh_disable() from CPU %u while lcore %u ran "
			"returned %d (%s), not -EXDEV\n", ctl.cpu, lcore,
			ctl.bh_result, strerror(-ctl.bh_result));
		rc = EXIT_FAILURE_RUN;
	} else if (quit_signal == 0 && control_started) {
		fprintf(stderr, PROG ": the control thread never saw lcore %u run\n",
			lcore);
		rc = EXIT_FAILURE_RUN;
	}
	if (fwd.rx.torn != 0) {
		fprintf(stderr, PROG ": %" PRIu64 " lookup(s) met a table that was "
			"already freed: a grace period did not wait for the lcore\n",
			fwd.rx.torn);
		rc = EXIT_FAILURE_RUN;
	}
	if (fwd.rx.tx_errors != 0) {
		fprintf(stderr, PROG ": sirq_tx_burst refused %" PRIu64 " burst(s)\n",
			fwd.rx.tx_errors);
		rc = EXIT_FAILURE_RUN;
	}
	sirq_stats_get(fwd.cpu, &eng);
	printf(PROG ": forwarded %" PRIu64 " packets, %" PRIu64 " table swaps "
	       "(longest grace period %" PRIu64 " us), %" PRIu64 " remote calls, "
	       "longest NET_RX gap %" PRIu64 " us; remote_hold max_ns %" PRIu64
	       ", remote_refused %" PRIu64 "\n",
	       fwd.rx.packets, ctl.swaps, tsc_to_us(ctl.max_grace_tsc), ctl.calls,
	       tsc_to_us(fwd.rx.max_gap_tsc), eng.remote_hold.max_ns,
	       eng.remote_refused);

free_lcore:
	sirq_lcore_free(fwd.lc);
	/* No reader and no writer left: the last table goes plainly. */
	table_free(fwd.table);
free_qsbr:
	rte_free(fwd.qsbr);
close_ports:
	/* 10. Ports, then the pool: every mbuf must be back by now. */
	rte_eth_dev_stop(RX_PORT);
	rte_eth_dev_close(RX_PORT);
	rte_eth_dev_stop(TX_PORT);
	rte_eth_dev_close(TX_PORT);
	in_use = rte_mempool_in_use_count(pool);
	if (in_use != 0) {
		fprintf(stderr, PROG ": %u mbufs not returned to the pool\n",
			in_use);
		rc = EXIT_FAILURE_RUN;
	} else if (rc == EXIT_OK) {
		printf(PROG ": clean exit, every mbuf back in the pool\n");
	}
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return rc;
}
