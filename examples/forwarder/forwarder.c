/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * forwarder: a small dataplane on libsirq, the program of docs/guide.md.
 *
 * One lcore forwards what arrives on port 0 to port 1: port 0's Rx queue
 * is a NAPI context of the lcore's dispatcher, and its receive function,
 * which runs in NET_RX, hands each burst to port 1 with sirq_tx_burst().
 * Beside it:
 *  - a 100 ms rte_timer on the lcore (it fires from the TIMER vector)
 *    schedules a tasklet;
 *  - the tasklet raises a vector of the application's own, taken with
 *    sirq_vector_alloc(), whose handler keeps the best 100 ms forwarding
 *    rate seen;
 *  - a control thread changes the policy with sirq_lcore_set_params()
 *    after --change-after seconds;
 *  - the /sirq/ telemetry commands are registered, and the main lcore
 *    prints a stats line every second.
 * SIGINT or SIGTERM (or --duration) stops it; it exits 0 when everything
 * stopped cleanly and no mbuf is left out of the pool.
 *
 * Built outside the tree against the installed library:
 *
 *   cc -O2 -Wall -o forwarder forwarder.c \
 *       $(pkg-config --cflags --libs libsirq libdpdk)
 *   ./forwarder -l 0,1 --no-huge -m 256 --no-pci \
 *       --vdev net_null0 --vdev net_null1 -- --duration 10
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_timer.h>

#include <sirq.h>

#define PROG "forwarder"

/* Exit codes. */
#define EXIT_OK 0
#define EXIT_FAILURE_RUN 1	/* setup failed, a call refused, mbufs leaked */
#define EXIT_USAGE 2		/* a bad option or EAL argument */

#define RX_PORT 0
#define TX_PORT 1
#define RING_SIZE 1024
#define NB_MBUF 8191
#define MBUF_CACHE 256
#define TIMER_PERIOD_MS 100

/* Options after "--". */
struct options {
	unsigned int duration_s;	/* 0: until SIGINT/SIGTERM */
	unsigned int change_after_s;	/* 0: never */
	enum sirq_policy_id new_policy;
};

/*
 * Counters written by handlers (one at a time: they hold the lcore's
 * execution lock, on the dispatcher or on sirqd) and read by the main
 * lcore: relaxed atomics.
 */
struct counters {
	uint64_t timer;		/* rte_timer callbacks */
	uint64_t tasklet;	/* tasklet runs */
	uint64_t vector;	/* runs of our own vector */
	uint64_t forwarded;	/* packets handed to sirq_tx_burst() */
	uint64_t best_100ms;	/* most packets forwarded in one timer period */
};

struct fwd {
	struct sirq_lcore *lc;
	struct sirq_cpu *cpu;
	int txq;			/* sirq_tx_burst() index of port 1 */
	int vec;			/* our vector, from sirq_vector_alloc() */
	struct sirq_tasklet tasklet;
	struct rte_timer timer;
	uint64_t forwarded_at_vector;	/* the vector's last look */
	struct counters cnt;
};

static struct fwd fwd;
static volatile sig_atomic_t quit_signal;	/* SIGINT or SIGTERM seen */
static bool stopping;				/* the main lcore is stopping */

#define COUNT(field, n) \
	__atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (n), \
			 __ATOMIC_RELAXED)
#define READ(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

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
	       "Forwards port 0 to port 1 on the first worker lcore (EAL -l 0,1),\n"
	       "with a 100 ms timer, a tasklet and a vector of its own; a control\n"
	       "thread changes the policy after --change-after seconds.\n"
	       "\n"
	       "  -d, --duration S      stop after S seconds (default 0: at SIGINT/SIGTERM)\n"
	       "  -c, --change-after S  change the policy after S seconds (default 5; 0: never)\n"
	       "  -p, --policy NAME     the policy to change to: mainline, ksoftirqd,\n"
	       "                        kicinski or deferred (default mainline)\n"
	       "  -h, --help            this text\n"
	       "\n"
	       "Example: " PROG " -l 0,1 --no-huge -m 256 --no-pci --file-prefix fwd \\\n"
	       "           --vdev net_null0 --vdev net_null1 -- --duration 10\n"
	       "then: echo /sirq/params,1 | dpdk-telemetry.py -f fwd\n"
	       "\n"
	       "Exit status: 0 stopped cleanly; 1 a setup step or a call failed, or mbufs\n"
	       "leaked; 2 a bad option.\n");
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
		{ "duration", required_argument, NULL, 'd' },
		{ "change-after", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, pol;

	o->duration_s = 0;
	o->change_after_s = 5;
	o->new_policy = SIRQ_POLICY_MAINLINE;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:c:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_seconds("--duration", optarg, &o->duration_s) != 0)
				return -EINVAL;
			break;
		case 'c':
			if (parse_seconds("--change-after", optarg,
					  &o->change_after_s) != 0)
				return -EINVAL;
			break;
		case 'p':
			pol = sirq_policy_from_name(optarg);
			if (pol < 0) {
				fprintf(stderr, PROG ": --policy '%s': want mainline, ksoftirqd, kicinski or deferred\n",
					optarg);
				return -EINVAL;
			}
			o->new_policy = (enum sirq_policy_id)pol;
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

/*
 * NET_RX: a burst from port 0's Rx queue. Handler context (the lcore's
 * execution lock is held), so sirq_tx_burst() may send; it takes every
 * packet, freeing those the TX ring refuses.
 */
static void
forward_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	   struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct fwd *f = arg;
	int ret;

	(void)port;
	(void)queue;
	ret = sirq_tx_burst(lc, (unsigned int)f->txq, pkts, n);
	if (ret < 0) {		/* cannot happen here: we are in NET_RX */
		rte_pktmbuf_free_bulk(pkts, n);
		return;
	}
	COUNT(f->cnt.forwarded, n);
}

/* TIMER, every 100 ms: hand the work to a tasklet. */
static void
on_timer(struct rte_timer *t, void *arg)
{
	struct fwd *f = arg;

	(void)t;
	COUNT(f->cnt.timer, 1);
	sirq_tasklet_schedule(f->cpu, &f->tasklet);
}

/* TASKLET: raise our vector. A handler raises with _irqoff: no kick. */
static void
on_tasklet(struct sirq_tasklet *t, void *arg)
{
	struct fwd *f = arg;

	(void)t;
	COUNT(f->cnt.tasklet, 1);
	sirq_raise_irqoff(f->cpu, (unsigned int)f->vec);
}

/* Our vector: the best forwarding rate over one timer period. */
static void
on_vector(struct sirq_cpu *cpu, void *arg)
{
	struct fwd *f = arg;
	uint64_t now = READ(f->cnt.forwarded);
	uint64_t delta = now - f->forwarded_at_vector;

	(void)cpu;
	f->forwarded_at_vector = now;
	if (delta > READ(f->cnt.best_100ms))
		__atomic_store_n(&f->cnt.best_100ms, delta, __ATOMIC_RELAXED);
	COUNT(f->cnt.vector, 1);
}

static void
on_signal(int sig)
{
	quit_signal = sig;
	sirq_lcore_stop_all();		/* async-signal-safe */
}

/* The control thread: change the policy after change_after_s seconds. */
struct control {
	struct sirq_lcore *lc;
	const struct options *opts;
	int result;			/* 0, or the negative errno */
};

static void *
control_main(void *arg)
{
	struct control *c = arg;
	struct sirq_lcore_params p;
	struct timespec t0, t1;
	enum sirq_policy_id old;
	uint64_t hz = rte_get_timer_hz();
	uint64_t due = rte_get_timer_cycles() + c->opts->change_after_s * hz;

	/* Sleep in steps of at most 100 ms, so that a stop is seen at once. */
	while (rte_get_timer_cycles() < due) {
		if (should_stop())
			return NULL;
		usleep(100 * 1000);
	}
	if (should_stop())
		return NULL;
	c->result = sirq_lcore_get_params(c->lc, &p);
	if (c->result != 0)
		return NULL;
	old = p.engine.policy;
	p.engine.policy = c->opts->new_policy;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c->result = sirq_lcore_set_params(c->lc, &p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (c->result != 0) {
		fprintf(stderr, PROG ": sirq_lcore_set_params: %s\n",
			strerror(-c->result));
		return NULL;
	}
	printf(PROG ": control thread: policy %s -> %s after %u s "
	       "(sirq_lcore_set_params returned in %ld us)\n",
	       sirq_policy_name(old), sirq_policy_name(p.engine.policy),
	       c->opts->change_after_s,
	       (long)((t1.tv_sec - t0.tv_sec) * 1000000L +
		      (t1.tv_nsec - t0.tv_nsec) / 1000));
	fflush(stdout);
	return NULL;
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

/* The last second's counters, for the rates (large: not on the stack). */
static struct sirq_lcore_stats prev;
static struct sirq_stats eng, prev_eng;

/*
 * One line a second: rates from the binding's counters over the time
 * since the last line, our counters, where NET_RX ran, the policy.
 */
static void
print_stats(double elapsed_s, double interval_s)
{
	struct sirq_lcore_stats st;
	struct sirq_lcore_params p;

	sirq_lcore_stats_get(fwd.lc, &st);
	sirq_stats_get(fwd.cpu, &eng);
	sirq_lcore_get_params(fwd.lc, &p);
	printf(PROG ": %5.1f s  rx %6.2f Mpps  tx %6.2f Mpps  dropped %" PRIu64
	       "  timer %" PRIu64 " tasklet %" PRIu64 " vector %" PRIu64
	       "  NET_RX/s inline %" PRIu64 " sirqd %" PRIu64 "  policy %s\n",
	       elapsed_s,
	       (double)(st.rx_packets - prev.rx_packets) / interval_s / 1e6,
	       (double)(st.tx_packets - prev.tx_packets) / interval_s / 1e6,
	       st.tx_dropped - prev.tx_dropped,
	       READ(fwd.cnt.timer), READ(fwd.cnt.tasklet), READ(fwd.cnt.vector),
	       (uint64_t)((eng.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE] -
			   prev_eng.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE]) / interval_s),
	       (uint64_t)((eng.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER] -
			   prev_eng.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER]) / interval_s),
	       sirq_policy_name(p.engine.policy));
	fflush(stdout);
	prev = st;
	prev_eng = eng;
}

/* The main lcore while the dispatcher runs: a stats line every second. */
static void
watch(const struct options *o)
{
	uint64_t hz = rte_get_timer_hz(), start = rte_get_timer_cycles();
	uint64_t end = start + o->duration_s * hz;
	uint64_t now = start, last = start, next = start + hz;

	while (quit_signal == 0 && (o->duration_s == 0 || now < end)) {
		usleep(10 * 1000);
		now = rte_get_timer_cycles();
		if (now < next)
			continue;
		print_stats((double)(now - start) / hz, (double)(now - last) / hz);
		last = now;
		next = start + ((now - start) / hz + 1) * hz;
	}
}

int
main(int argc, char **argv)
{
	struct sirq_lcore_conf conf;
	struct options opts;
	struct control ctl;
	struct rte_mempool *pool;
	pthread_t control_thread;
	unsigned int lcore, in_use;
	int ret, rc = EXIT_OK;

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

	/* 2. The mbuf pool and the two ports. */
	pool = rte_pktmbuf_pool_create("fwd_pool", NB_MBUF, MBUF_CACHE, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_lcore_to_socket_id(lcore));
	if (pool == NULL) {
		fprintf(stderr, PROG ": mbuf pool: %s\n", rte_strerror(rte_errno));
		rte_eal_cleanup();
		return EXIT_FAILURE_RUN;
	}
	if (port_init(RX_PORT, pool) != 0 || port_init(TX_PORT, pool) != 0) {
		rc = EXIT_FAILURE_RUN;
		goto close_ports;
	}

	/* 3. The lcore's dispatcher: the defaults, poll mode. */
	sirq_lcore_conf_default(&conf);
	fwd.lc = sirq_lcore_create(lcore, &conf);
	if (fwd.lc == NULL) {
		fprintf(stderr, PROG ": sirq_lcore_create(lcore %u): %s\n",
			lcore, rte_strerror(rte_errno));
		rc = EXIT_FAILURE_RUN;
		goto close_ports;
	}
	fwd.cpu = sirq_lcore_cpu(fwd.lc);

	/* 4. Queues: port 0 Rx is a NAPI context, port 1 TX is ours. */
	fwd.txq = sirq_lcore_add_tx_queue(fwd.lc, TX_PORT, 0);
	if (fwd.txq < 0) {
		fprintf(stderr, PROG ": sirq_lcore_add_tx_queue(port %u): %s\n",
			TX_PORT, strerror(-fwd.txq));
		rc = EXIT_FAILURE_RUN;
		goto free_lcore;
	}
	ret = sirq_lcore_add_rx_queue(fwd.lc, RX_PORT, 0, forward_rx, &fwd);
	if (ret != 0) {
		fprintf(stderr, PROG ": sirq_lcore_add_rx_queue(port %u): %s\n",
			RX_PORT, strerror(-ret));
		rc = EXIT_FAILURE_RUN;
		goto free_lcore;
	}

	/* 5. Our vector, the tasklet, and the timer on the lcore. */
	fwd.vec = sirq_vector_alloc(fwd.cpu, on_vector, &fwd, "fwd_peak");
	if (fwd.vec < 0) {
		fprintf(stderr, PROG ": sirq_vector_alloc: %s\n",
			strerror(-fwd.vec));
		rc = EXIT_FAILURE_RUN;
		goto free_lcore;
	}
	sirq_tasklet_init(&fwd.tasklet, on_tasklet, &fwd);
	/* sirq_lcore_create() initialised the timer subsystem. */
	rte_timer_init(&fwd.timer);
	ret = rte_timer_reset(&fwd.timer,
			      rte_get_timer_hz() / 1000 * TIMER_PERIOD_MS,
			      PERIODICAL, lcore, on_timer, &fwd);
	if (ret != 0) {
		fprintf(stderr, PROG ": rte_timer_reset(lcore %u): %d\n",
			lcore, ret);
		rc = EXIT_FAILURE_RUN;
		goto free_lcore;
	}

	/* 6. Telemetry: /sirq/stats, /sirq/params, /sirq/params_set, ... */
	ret = sirq_telemetry_register();
	if (ret != 0) {
		fprintf(stderr, PROG ": sirq_telemetry_register: %s\n",
			strerror(-ret));
		rc = EXIT_FAILURE_RUN;
		goto stop_timer;
	}

	/* 7. Launch the dispatcher, then the control thread. */
	printf(PROG ": lcore %u forwards port %u -> port %u under %s, vector %d "
	       "is '%s'; telemetry: dpdk-telemetry.py -f %s\n",
	       lcore, RX_PORT, TX_PORT, sirq_policy_name(conf.params.policy),
	       fwd.vec, sirq_vector_name(fwd.cpu, (unsigned int)fwd.vec),
	       strrchr(rte_eal_get_runtime_dir(), '/') + 1);
	fflush(stdout);
	ret = rte_eal_remote_launch(sirq_lcore_main, fwd.lc, lcore);
	if (ret != 0) {
		fprintf(stderr, PROG ": launch on lcore %u: %s\n", lcore,
			strerror(-ret));
		rc = EXIT_FAILURE_RUN;
		goto stop_timer;
	}
	ctl.lc = fwd.lc;
	ctl.opts = &opts;
	ctl.result = 0;
	ret = opts.change_after_s > 0 ?
		pthread_create(&control_thread, NULL, control_main, &ctl) : 0;
	if (ret != 0) {
		fprintf(stderr, PROG ": control thread: %s\n", strerror(ret));
		rc = EXIT_FAILURE_RUN;
		opts.change_after_s = 0;
		sirq_lcore_stop_all();
	} else {
		watch(&opts);
	}

	/* 8. Stop: the dispatcher returns once sirqd is joined and drained. */
	__atomic_store_n(&stopping, true, __ATOMIC_RELEASE);
	sirq_lcore_stop_all();
	if (opts.change_after_s > 0) {
		pthread_join(control_thread, NULL);
		if (ctl.result != 0)
			rc = EXIT_FAILURE_RUN;
	}
	ret = rte_eal_wait_lcore(lcore);
	if (ret != 0) {
		fprintf(stderr, PROG ": sirq_lcore_main: %s\n", strerror(-ret));
		rc = EXIT_FAILURE_RUN;
	}
	if (quit_signal != 0)
		printf(PROG ": signal %d, stopped\n", (int)quit_signal);
	printf(PROG ": forwarded %" PRIu64 " packets, best %.2f Mpps over 100 ms; "
	       "timer %" PRIu64 ", tasklet %" PRIu64 ", vector %" PRIu64 "\n",
	       READ(fwd.cnt.forwarded), (double)READ(fwd.cnt.best_100ms) / 1e5,
	       READ(fwd.cnt.timer), READ(fwd.cnt.tasklet), READ(fwd.cnt.vector));
	/* Waits for the execution lock: each got it within one handler run. */
	sirq_stats_get(fwd.cpu, &eng);
	printf(PROG ": execution lock: %" PRIu64 " wait(s), the longest %" PRIu64
	       " us; at most %" PRIu64 " handler run(s) while one waited\n",
	       eng.lock_wait.samples, eng.lock_wait.max_ns / 1000,
	       eng.lock_wait_runs_max);

stop_timer:
	rte_timer_stop_sync(&fwd.timer);
free_lcore:
	sirq_lcore_free(fwd.lc);
close_ports:
	/* 9. Ports, then the pool: every mbuf must be back by now. */
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
