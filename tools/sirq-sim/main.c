/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * sirq-sim's command line: the scenarios, the options that override
 * them, and a run per (scenario, tick_hz, policy). The model is
 * described in sim.h.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

enum scenario_id {
	SC_STALL = 0,
	SC_FLOOD,
	SC_MAX,
};

static const char *const scenario_names[SC_MAX] = {
	[SC_STALL] = "stall",
	[SC_FLOOD] = "flood",
};

static const char *const scenario_summary[SC_MAX] = {
	[SC_STALL] = "moderate traffic with trains; application threads that "
		"wake often and want the CPU for 10 ms at a time",
	[SC_FLOOD] = "input twice what the CPU can process; a steady "
		"application",
};

/*
 * The two scenarios of docs/design.md at the kernel's per-packet cost (about
 * 1 us from driver to socket):
 *  - stall: 100 kpps steady plus trains of 64-256 packets every
 *    0.5-3 ms (about 20 % of the CPU), and three threads that each want
 *    10 ms every 50 ms on average (random gaps): the l2fwd-sirq demo's
 *    --app-load on the real scheduler.
 *  - flood: 2 Mpps, twice what 1 us a packet allows, and one thread that
 *    always wants the CPU.
 */
static const struct range stall_train_pkts = { 64, 256 };
static const struct range stall_train_gap_ps = { 500 * PS_PER_US, 3 * PS_PER_MS };

static void
scenario_defaults(struct sim_conf *c, enum scenario_id sc)
{
	c->scenario = scenario_names[sc];
	c->cost_ps = 1 * PS_PER_US;
	c->ring = RX_RING_DEFAULT;
	c->pkt_size = ETH_MIN_FRAME;
	if (sc == SC_STALL) {
		c->rate_pps = 100000;
		c->train_pkts = stall_train_pkts;
		c->train_gap_ps = stall_train_gap_ps;
		c->app_threads = 3;
		c->app_hold_ps = 10 * PS_PER_MS;
		c->app_period_ps = 50 * PS_PER_MS;
		c->app_random = true;
	} else {
		c->rate_pps = 2000000;
		c->train_pkts = (struct range){ 0, 0 };
		c->train_gap_ps = (struct range){ 0, 0 };
		c->app_threads = 1;
		c->app_hold_ps = 10 * PS_PER_MS;
		c->app_period_ps = 10 * PS_PER_MS;
		c->app_random = false;
	}
}

/* Options that override the scenario's defaults; 0/negative: not given. */
struct overrides {
	uint64_t rate_pps;
	double rate_gbps;
	int64_t pkt_size;
	double cost_ns;
	double poll_cost_ns;
	int trains;		/* -1 not given, 0 off, 1 on */
	int64_t ring;
	int64_t app_threads;
	int64_t app_hold_us;
	int64_t app_period_us;
	int app_random;		/* -1 not given */
};

/* --app-bh-every-us when only --app-bh-us is given. */
#define APP_BH_EVERY_US_DEFAULT 1000
/* --timer-cost-ns: a timer callback of about a packet's cost. */
#define TIMER_COST_NS_DEFAULT 1000

static const char *const thread_sched_names[] = {
	[THREAD_SCHED_MODEL] = "model",
	[THREAD_SCHED_OTHER] = "other",
	[THREAD_SCHED_FIFO] = "fifo",
};

struct args {
	bool scenario[SC_MAX];
	bool policy[SIRQ_POLICY_MAX];
	uint32_t tick_hz[MAX_TICK_HZ];
	unsigned int nb_tick_hz;
	uint64_t duration_ms;
	uint64_t seed;
	const char *json;
	bool quiet;
	double timer_cost_ns;
	struct overrides o;
	struct sim_conf base;	/* scenario-independent settings */
};

static void
usage(FILE *out, const char *prog)
{
	unsigned int p;

	fprintf(out,
		"usage: %s [options]\n"
		"Deterministic simulation of the softirq engine on one CPU: NIC,\n"
		"dispatcher (hardirq), NET_RX/NET_TX/TIMER, application threads,\n"
		"the worker and the execution models' softirq threads under an\n"
		"EEVDF-like scheduler with a SCHED_FIFO class. Prints a table per\n"
		"scenario and tick_hz, a column per policy or model.\n"
		"  --scenario LIST     stall, flood or all (default all)\n"
		"  --policy LIST       comma-separated, or all (default all):\n"
		"                     ", prog);
	for (p = 0; p < SIRQ_POLICY_MAX; p++)
		fprintf(out, " %s", sirq_policy_name(p));
	fprintf(out, "\n"
		"                      (rt: ktimers/0 at SCHED_FIFO 1, the dispatcher's\n"
		"                      pass as the NIC's irq thread; pushdown and\n"
		"                      pushdown-locked: a sirq-<vector>/0 thread per vector)\n"
		"  --tick-hz LIST      engine jiffies: 0 (exact TSC), 100, 250, 1000;\n"
		"                      up to %u values (default 0)\n"
		"  --duration-ms N     simulated time per run, 1..%u (default %u)\n"
		"  --seed N            PRNG seed of trains and app gaps (default %u)\n"
		"  --json FILE         write every run as JSON (bench/policy_plots.py)\n"
		"  --quiet             no tables\n"
		"traffic (default: the scenario's):\n"
		"  --rate-pps N        steady arrivals (stall 100000, flood 2000000)\n"
		"  --rate-gbps X       steady arrivals as line rate of --pkt-size frames\n"
		"  --pkt-size B        frame size, %u..%u (default %u)\n"
		"  --trains on|off     packet trains (stall: 64-256 pkts every 0.5-3 ms)\n"
		"  --cost-ns X         NET_RX cost per packet, ps precision (default 1000)\n"
		"  --poll-cost-ns X    cost per NAPI poll and NET_TX run (default: --cost-ns)\n"
		"  --ring N            Rx ring size (default %u)\n"
		"dispatcher:\n"
		"  --irq-tick-us N     irq-mode tick (default %u)\n"
		"  --rx-irq-us N       Rx interrupt N us after a packet while NAPI is\n"
		"                      idle; 0: tick only, as on the vdevs (default 0)\n"
		"scheduler and tasks:\n"
		"  --sched-hz N        scheduler tick (default %u)\n"
		"  --sched-slice-us N  base slice (default %u)\n"
		"  --worker kernel|sirqd  kernel: ksoftirqd, passes in the fair class,\n"
		"                      cond_resched(); sirqd: passes boosted to SCHED_FIFO,\n"
		"                      sched_yield() between them (default kernel)\n"
		"  --worker-nice N     (default 0)\n"
		"  --app-threads N     0..%u (stall 3, flood 1)\n"
		"  --app-hold-us N     CPU wanted per wake-up (default 10000)\n"
		"  --app-period-us N   mean time between wake-ups; hold >= period is\n"
		"                      a steady load (stall 50000, flood 10000)\n"
		"  --app-random on|off gaps uniform in [0, 2 period] (stall on, flood off)\n"
		"  --app-nice N        (default 0)\n"
		"  --app-bh-us N       each application thread holds bottom halves off\n"
		"                      (the BH lock) for the first N us of every\n"
		"                      --app-bh-every-us of its CPU time; 0: never (default 0)\n"
		"  --app-bh-every-us N (default %u)\n"
		"  --thread-sched model|other|fifo  the models' softirq threads: as the\n"
		"                      kernel has them (ktimers SCHED_FIFO 1, the\n"
		"                      pushdown's SCHED_OTHER), or all SCHED_OTHER, or all\n"
		"                      SCHED_FIFO 1 (default model)\n"
		"  --thread-nice N     nice of the SCHED_OTHER ones (default 0)\n"
		"timer:\n"
		"  --timer-us N        a periodic timer on TIMER, due every N us and\n"
		"                      raised at the dispatcher's tick; 0: none (default 0)\n"
		"  --timer-cost-ns X   its handler's cost (default %u)\n"
		"  --help              this text\n",
		MAX_TICK_HZ, DURATION_MS_MAX, DURATION_MS_DEFAULT,
		SEED_DEFAULT, ETH_MIN_FRAME, ETH_MAX_FRAME, ETH_MIN_FRAME,
		RX_RING_DEFAULT, SIRQ_IRQ_TICK_US_DEFAULT, SCHED_HZ_DEFAULT,
		SCHED_SLICE_US_DEFAULT, APP_MAX_THREADS, APP_BH_EVERY_US_DEFAULT,
		TIMER_COST_NS_DEFAULT);
}

static bool
parse_i64(const char *opt, const char *arg, int64_t min, int64_t max,
	  int64_t *out)
{
	long long v;
	char *end;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (end == arg || *end != '\0' || errno != 0 || v < min || v > max) {
		fprintf(stderr, "sirq-sim: invalid %s '%s' (want %" PRId64
			"..%" PRId64 ")\n", opt, arg, min, max);
		return false;
	}
	*out = v;
	return true;
}

static bool
parse_double(const char *opt, const char *arg, double min, double max,
	     double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end != '\0' || errno != 0 || !(v >= min) ||
	    !(v <= max)) {
		fprintf(stderr, "sirq-sim: invalid %s '%s' (want %g..%g)\n",
			opt, arg, min, max);
		return false;
	}
	*out = v;
	return true;
}

static bool
parse_onoff(const char *opt, const char *arg, int *out)
{
	if (strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0) {
		*out = arg[1] == 'n';
		return true;
	}
	fprintf(stderr, "sirq-sim: invalid %s '%s' (want on or off)\n", opt, arg);
	return false;
}

/* "a,b,c" or "all" over @names; sets @sel. */
static bool
parse_names(const char *opt, const char *arg, const char *const *names,
	    unsigned int n, bool *sel)
{
	char buf[128], *item, *save = NULL;
	unsigned int i;

	if (strcmp(arg, "all") == 0) {
		for (i = 0; i < n; i++)
			sel[i] = true;
		return true;
	}
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		goto bad;
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n; i++)
			if (strcmp(item, names[i]) == 0)
				break;
		if (i == n)
			goto bad;
		sel[i] = true;
	}
	return true;
bad:
	fprintf(stderr, "sirq-sim: invalid %s '%s'\n", opt, arg);
	return false;
}

static bool
parse_tick_hz(const char *arg, struct args *a)
{
	char buf[128], *item, *save = NULL;
	int64_t v;

	a->nb_tick_hz = 0;
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return false;
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		if (a->nb_tick_hz == MAX_TICK_HZ) {
			fprintf(stderr, "sirq-sim: at most %u --tick-hz values\n",
				MAX_TICK_HZ);
			return false;
		}
		if (!parse_i64("--tick-hz", item, 0, SCHED_HZ_MAX, &v))
			return false;
		a->tick_hz[a->nb_tick_hz++] = (uint32_t)v;
	}
	return a->nb_tick_hz > 0;
}

enum {
	OPT_SCENARIO = 256, OPT_POLICY, OPT_TICK_HZ, OPT_DURATION, OPT_SEED,
	OPT_JSON, OPT_QUIET, OPT_RATE_PPS, OPT_RATE_GBPS, OPT_PKT_SIZE,
	OPT_TRAINS, OPT_COST, OPT_POLL_COST, OPT_RING, OPT_IRQ_TICK,
	OPT_RX_IRQ, OPT_SCHED_HZ, OPT_SLICE, OPT_WORKER, OPT_WORKER_NICE,
	OPT_APP_THREADS, OPT_APP_HOLD, OPT_APP_PERIOD, OPT_APP_RANDOM,
	OPT_APP_NICE, OPT_APP_BH, OPT_APP_BH_EVERY, OPT_THREAD_SCHED,
	OPT_THREAD_NICE, OPT_TIMER, OPT_TIMER_COST, OPT_HELP,
};

static bool
parse_opt(int c, const char *arg, struct args *a)
{
	const char *policy_names[SIRQ_POLICY_MAX];
	struct overrides *o = &a->o;
	int64_t v = 0;
	unsigned int i;

	for (i = 0; i < SIRQ_POLICY_MAX; i++)
		policy_names[i] = sirq_policy_name(i);
	switch (c) {
	case OPT_SCENARIO:
		memset(a->scenario, 0, sizeof(a->scenario));
		return parse_names("--scenario", arg, scenario_names, SC_MAX,
				   a->scenario);
	case OPT_POLICY:
		memset(a->policy, 0, sizeof(a->policy));
		return parse_names("--policy", arg, policy_names,
				   SIRQ_POLICY_MAX, a->policy);
	case OPT_TICK_HZ:
		return parse_tick_hz(arg, a);
	case OPT_DURATION:
		if (!parse_i64("--duration-ms", arg, 1, DURATION_MS_MAX, &v))
			return false;
		a->duration_ms = (uint64_t)v;
		return true;
	case OPT_SEED:
		if (!parse_i64("--seed", arg, 0, INT64_MAX, &v))
			return false;
		a->seed = (uint64_t)v;
		return true;
	case OPT_JSON:
		a->json = arg;
		return true;
	case OPT_QUIET:
		a->quiet = true;
		return true;
	case OPT_RATE_PPS:
		/* 10 Gpps: beyond any NIC, still exact in ps. */
		if (!parse_i64("--rate-pps", arg, 1, 10000000000LL, &v))
			return false;
		o->rate_pps = (uint64_t)v;
		return true;
	case OPT_RATE_GBPS:
		return parse_double("--rate-gbps", arg, 0.001, 1600, &o->rate_gbps);
	case OPT_PKT_SIZE:
		return parse_i64("--pkt-size", arg, ETH_MIN_FRAME, ETH_MAX_FRAME,
				 &o->pkt_size);
	case OPT_TRAINS:
		return parse_onoff("--trains", arg, &o->trains);
	case OPT_COST:
		return parse_double("--cost-ns", arg, 0.001, 1e9, &o->cost_ns);
	case OPT_POLL_COST:
		return parse_double("--poll-cost-ns", arg, 0, 1e9, &o->poll_cost_ns);
	case OPT_RING:
		return parse_i64("--ring", arg, 1, RX_RING_MAX, &o->ring);
	case OPT_IRQ_TICK:
		if (!parse_i64("--irq-tick-us", arg, 1, 1000000, &v))
			return false;
		a->base.irq_tick_ps = (uint64_t)v * PS_PER_US;
		return true;
	case OPT_RX_IRQ:
		if (!parse_i64("--rx-irq-us", arg, 0, 1000000, &v))
			return false;
		a->base.rx_irq_ps = (uint64_t)v * PS_PER_US;
		return true;
	case OPT_SCHED_HZ:
		if (!parse_i64("--sched-hz", arg, 1, SCHED_HZ_MAX, &v))
			return false;
		a->base.sched_hz = (uint32_t)v;
		return true;
	case OPT_SLICE:
		if (!parse_i64("--sched-slice-us", arg, 1, 1000000, &v))
			return false;
		a->base.slice_ps = (uint64_t)v * PS_PER_US;
		return true;
	case OPT_WORKER:
		if (strcmp(arg, "sirqd") == 0 || strcmp(arg, "kernel") == 0) {
			a->base.worker = arg[0] == 's' ? WORKER_SIRQD : WORKER_KERNEL;
			return true;
		}
		fprintf(stderr, "sirq-sim: invalid --worker '%s'\n", arg);
		return false;
	case OPT_WORKER_NICE:
		if (!parse_i64("--worker-nice", arg, NICE_MIN, NICE_MAX, &v))
			return false;
		a->base.worker_nice = (int)v;
		return true;
	case OPT_APP_THREADS:
		return parse_i64("--app-threads", arg, 0, APP_MAX_THREADS,
				 &o->app_threads);
	case OPT_APP_HOLD:
		return parse_i64("--app-hold-us", arg, 1, 10000000, &o->app_hold_us);
	case OPT_APP_PERIOD:
		return parse_i64("--app-period-us", arg, 1, 10000000,
				 &o->app_period_us);
	case OPT_APP_RANDOM:
		return parse_onoff("--app-random", arg, &o->app_random);
	case OPT_APP_NICE:
		if (!parse_i64("--app-nice", arg, NICE_MIN, NICE_MAX, &v))
			return false;
		a->base.app_nice = (int)v;
		return true;
	case OPT_APP_BH:
		if (!parse_i64("--app-bh-us", arg, 0, 10000000, &v))
			return false;
		a->base.app_bh_ps = (uint64_t)v * PS_PER_US;
		return true;
	case OPT_APP_BH_EVERY:
		if (!parse_i64("--app-bh-every-us", arg, 1, 10000000, &v))
			return false;
		a->base.app_bh_every_ps = (uint64_t)v * PS_PER_US;
		return true;
	case OPT_THREAD_SCHED:
		for (i = 0; i < sizeof(thread_sched_names) /
			     sizeof(thread_sched_names[0]); i++) {
			if (strcmp(arg, thread_sched_names[i]) == 0) {
				a->base.thread_sched = i;
				return true;
			}
		}
		fprintf(stderr, "sirq-sim: invalid --thread-sched '%s' (want "
			"model, other or fifo)\n", arg);
		return false;
	case OPT_THREAD_NICE:
		if (!parse_i64("--thread-nice", arg, NICE_MIN, NICE_MAX, &v))
			return false;
		a->base.thread_nice = (int)v;
		return true;
	case OPT_TIMER:
		if (!parse_i64("--timer-us", arg, 0, 10000000, &v))
			return false;
		a->base.timer_period_ps = (uint64_t)v * PS_PER_US;
		return true;
	case OPT_TIMER_COST:
		if (!parse_double("--timer-cost-ns", arg, 0, 1e9, &a->timer_cost_ns))
			return false;
		return true;
	default:
		return false;
	}
}

/* 0: run; 1: --help was given; 2: bad command line. */
static int
parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "scenario", required_argument, NULL, OPT_SCENARIO },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "tick-hz", required_argument, NULL, OPT_TICK_HZ },
		{ "duration-ms", required_argument, NULL, OPT_DURATION },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "rate-pps", required_argument, NULL, OPT_RATE_PPS },
		{ "rate-gbps", required_argument, NULL, OPT_RATE_GBPS },
		{ "pkt-size", required_argument, NULL, OPT_PKT_SIZE },
		{ "trains", required_argument, NULL, OPT_TRAINS },
		{ "cost-ns", required_argument, NULL, OPT_COST },
		{ "poll-cost-ns", required_argument, NULL, OPT_POLL_COST },
		{ "ring", required_argument, NULL, OPT_RING },
		{ "irq-tick-us", required_argument, NULL, OPT_IRQ_TICK },
		{ "rx-irq-us", required_argument, NULL, OPT_RX_IRQ },
		{ "sched-hz", required_argument, NULL, OPT_SCHED_HZ },
		{ "sched-slice-us", required_argument, NULL, OPT_SLICE },
		{ "worker", required_argument, NULL, OPT_WORKER },
		{ "worker-nice", required_argument, NULL, OPT_WORKER_NICE },
		{ "app-threads", required_argument, NULL, OPT_APP_THREADS },
		{ "app-hold-us", required_argument, NULL, OPT_APP_HOLD },
		{ "app-period-us", required_argument, NULL, OPT_APP_PERIOD },
		{ "app-random", required_argument, NULL, OPT_APP_RANDOM },
		{ "app-nice", required_argument, NULL, OPT_APP_NICE },
		{ "app-bh-us", required_argument, NULL, OPT_APP_BH },
		{ "app-bh-every-us", required_argument, NULL, OPT_APP_BH_EVERY },
		{ "thread-sched", required_argument, NULL, OPT_THREAD_SCHED },
		{ "thread-nice", required_argument, NULL, OPT_THREAD_NICE },
		{ "timer-us", required_argument, NULL, OPT_TIMER },
		{ "timer-cost-ns", required_argument, NULL, OPT_TIMER_COST },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == OPT_HELP) {
			usage(stdout, argv[0]);
			return 1;
		}
		if (c == '?' || !parse_opt(c, optarg, a)) {
			if (c == '?')
				usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sirq-sim: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (a->o.rate_pps != 0 && a->o.rate_gbps > 0) {
		fprintf(stderr, "sirq-sim: give --rate-pps or --rate-gbps, not both\n");
		return 2;
	}
	if (a->base.app_bh_every_ps == 0)
		a->base.app_bh_every_ps = APP_BH_EVERY_US_DEFAULT * PS_PER_US;
	if (a->base.app_bh_ps > a->base.app_bh_every_ps) {
		fprintf(stderr, "sirq-sim: --app-bh-us above --app-bh-every-us\n");
		return 2;
	}
	a->base.timer_cost_ps = (uint64_t)llround(a->timer_cost_ns * PS_PER_NS);
	return 0;
}

/* The configuration of one scenario: its defaults, then the options. */
static bool
make_conf(struct sim_conf *c, const struct args *a, enum scenario_id sc)
{
	const struct overrides *o = &a->o;

	*c = a->base;
	scenario_defaults(c, sc);
	c->duration_ps = a->duration_ms * PS_PER_MS;
	c->seed = a->seed;
	if (o->pkt_size > 0)
		c->pkt_size = (uint32_t)o->pkt_size;
	if (o->rate_pps != 0)
		c->rate_pps = o->rate_pps;
	if (o->rate_gbps > 0)
		c->rate_pps = (uint64_t)llround(o->rate_gbps * 1e9 /
			((double)(c->pkt_size + ETH_WIRE_OVERHEAD) * BITS_PER_BYTE));
	if (o->trains == 0)
		c->train_pkts.max = 0;
	if (o->trains == 1) {
		c->train_pkts = stall_train_pkts;
		c->train_gap_ps = stall_train_gap_ps;
	}
	if (o->cost_ns > 0)
		c->cost_ps = (uint64_t)llround(o->cost_ns * PS_PER_NS);
	c->poll_cost_ps = o->poll_cost_ns >= 0 ?
		(uint64_t)llround(o->poll_cost_ns * PS_PER_NS) : c->cost_ps;
	if (o->ring > 0)
		c->ring = (uint32_t)o->ring;
	if (o->app_threads >= 0)
		c->app_threads = (uint32_t)o->app_threads;
	if (o->app_hold_us > 0)
		c->app_hold_ps = (uint64_t)o->app_hold_us * PS_PER_US;
	if (o->app_period_us > 0)
		c->app_period_ps = (uint64_t)o->app_period_us * PS_PER_US;
	if (o->app_random >= 0)
		c->app_random = o->app_random;
	if (c->cost_ps == 0) {
		fprintf(stderr, "sirq-sim: --cost-ns below 1 ps\n");
		return false;
	}
	return true;
}

static int
run_one(const struct sim_conf *c, struct result *r)
{
	/* static: the histograms make it large for the stack. */
	static struct sim s;
	int ret;

	ret = sim_init(&s, c);
	if (ret != 0) {
		fprintf(stderr, "sirq-sim: set-up of %s/%s failed: %s\n",
			c->scenario, sirq_policy_name(c->policy), strerror(-ret));
		sim_fini(&s);
		return ret;
	}
	sim_run(&s);
	collect(r, &s);
	sim_fini(&s);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct sim_conf confs[SC_MAX][MAX_TICK_HZ][SIRQ_POLICY_MAX];
	static struct result res[SC_MAX][MAX_TICK_HZ][SIRQ_POLICY_MAX];
	struct args a = {
		.duration_ms = DURATION_MS_DEFAULT,
		.seed = SEED_DEFAULT,
		.nb_tick_hz = 1,
		.timer_cost_ns = TIMER_COST_NS_DEFAULT,
		.o = { .trains = -1, .app_threads = -1, .app_random = -1,
		       .poll_cost_ns = -1 },
		.base = {
			.irq_tick_ps = SIRQ_IRQ_TICK_US_DEFAULT * PS_PER_US,
			.sched_hz = SCHED_HZ_DEFAULT,
			.slice_ps = SCHED_SLICE_US_DEFAULT * PS_PER_US,
			.worker = WORKER_KERNEL,
		},
	};
	unsigned int sc, t, p, n, nb_runs = 0, done = 0;
	FILE *json = NULL;
	int rc;

	for (sc = 0; sc < SC_MAX; sc++)
		a.scenario[sc] = true;
	for (p = 0; p < SIRQ_POLICY_MAX; p++)
		a.policy[p] = true;
	rc = parse_args(argc, argv, &a);
	if (rc != 0)
		return rc == 1 ? 0 : rc;

	for (sc = 0; sc < SC_MAX; sc++) {
		if (!a.scenario[sc])
			continue;
		for (t = 0; t < a.nb_tick_hz; t++) {
			for (p = 0; p < SIRQ_POLICY_MAX; p++) {
				struct sim_conf *c = &confs[sc][t][p];

				if (!make_conf(c, &a, sc))
					return 2;
				c->policy = p;
				c->tick_hz = a.tick_hz[t];
				if (a.policy[p])
					nb_runs++;
			}
		}
	}
	if (a.json != NULL) {
		json = fopen(a.json, "w");
		if (json == NULL) {
			fprintf(stderr, "sirq-sim: cannot write --json '%s': %s\n",
				a.json, strerror(errno));
			return 2;
		}
		fprintf(json, "{\"source\": \"sirq-sim\", \"format\": 1"
			", \"stall_threshold_ms\": %.3f, \"duration_ms\": %" PRIu64
			", \"seed\": %" PRIu64 ",\n \"scenarios\": {",
			(double)SIRQ_STALL_THRESHOLD_NS_DEFAULT / NS_PER_MS,
			a.duration_ms, a.seed);
		for (sc = 0, n = 0; sc < SC_MAX; sc++) {
			if (!a.scenario[sc])
				continue;
			fprintf(json, "%s\n  \"%s\": ", n++ ? "," : "",
				scenario_names[sc]);
			json_conf(json, &confs[sc][0][0]);
		}
		fprintf(json, "},\n \"runs\": [\n");
	}

	for (sc = 0; sc < SC_MAX; sc++) {
		if (!a.scenario[sc])
			continue;
		for (t = 0; t < a.nb_tick_hz; t++) {
			const struct result *row[SIRQ_POLICY_MAX];

			for (p = 0, n = 0; p < SIRQ_POLICY_MAX; p++) {
				if (!a.policy[p])
					continue;
				if (run_one(&confs[sc][t][p], &res[sc][t][p]) != 0)
					return 1;
				row[n++] = &res[sc][t][p];
				if (json != NULL)
					json_run(json, &res[sc][t][p],
						 ++done < nb_runs);
			}
			if (a.quiet)
				continue;
			printf("== %s, tick_hz %u: %s\n   ", scenario_names[sc],
			       a.tick_hz[t], scenario_summary[sc]);
			json_conf(stdout, &confs[sc][t][0]);
			printf("\n");
			print_table(row, n);
		}
	}
	if (json == NULL)
		return 0;
	fprintf(json, " ]}\n");
	if (fclose(json) != 0) {
		fprintf(stderr, "sirq-sim: writing '%s' failed: %s\n",
			a.json, strerror(errno));
		return 1;
	}
	return 0;
}

