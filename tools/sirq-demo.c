/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * sirq-demo: the four overload policies side by side, on simulated time.
 *
 * The model: one CPU (one struct sirq_cpu) and a simulated clock that the
 * engine reads through ops.clock_ns. Nothing sleeps and there are no
 * threads; a run of seconds of simulated time takes milliseconds. Four
 * parties share the CPU:
 *
 *  - the NIC: packets arrive at a steady rate plus trains (size and gap
 *    drawn from a fixed-seed PRNG) into an Rx ring; overflow is dropped.
 *    Arrivals are a function of time only, so every policy sees the
 *    same traffic.
 *  - the dispatcher ("hardirq" + irq_exit): every DISPATCH_TICK_NS it
 *    looks at the ring, raises NET_RX if it is not empty and calls
 *    sirq_irq_exit(). What that runs inline is taken from whichever task
 *    had the CPU; ticks missed meanwhile fire once, right after.
 *  - NET_RX, NAPI-like: at most NAPI_WEIGHT packets per call, each costing
 *    PKT_COST_NS of simulated time; it re-raises itself when it used its
 *    whole weight, as napi_poll() keeps a busy device scheduled.
 *  - two tasks, the application and the worker (sirqd), under a toy
 *    scheduler. The application follows a script of phases: idle, want
 *    (it is runnable and sets need_resched) and hold (it keeps the CPU:
 *    a long slice, a higher priority, preemption off; a runnable worker
 *    waits until the hold ends). When both tasks are runnable outside a
 *    hold they take turns of SCHED_SLICE_NS. A worker turn is a sequence
 *    of sirq_worker_run() calls; ops.wake_worker makes the worker
 *    runnable and SIRQ_WORKER_SLEEP makes it idle again.
 *
 * Time advances in quanta that end at the next dispatcher tick, at the
 * next change of the application's script, or when a handler or a worker
 * pass returns. Everything printed comes from the engine's counters or
 * from this accounting; nothing depends on the policy but the engine.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sirq.h>

#define NS_PER_US	UINT64_C(1000)
#define NS_PER_MS	(1000 * NS_PER_US)
#define NS_PER_S	(1000 * NS_PER_MS)

/* irq mode's tick (DESIGN.md): NAPI masks the NIC interrupt while it
 * polls, so the dispatcher looks at the ring once per coalescing period. */
#define DISPATCH_TICK_NS	(100 * NS_PER_US)
/* NAPI weight, net/core/dev.c. */
#define NAPI_WEIGHT		64
/* About the kernel's receive path from driver to socket, per packet. */
#define PKT_COST_NS		(1 * NS_PER_US)
/* Fixed cost of one poll call, even on an empty ring. */
#define POLL_COST_NS		(1 * NS_PER_US)
/* A common NIC ring size: 4 ms of a 1 Mpps stream. */
#define RX_RING_SIZE		4096
/* CFS with two runnable tasks: its 6 ms latency target split in two. */
#define SCHED_SLICE_NS		(3 * NS_PER_MS)
/* Time starts here, not at 0: the engine reads a raise stamp of 0 as "none". */
#define SIM_EPOCH_NS		NS_PER_S

#define DURATION_MS_DEFAULT	5000
/* A demo, not a benchmark: ten simulated minutes take seconds. */
#define DURATION_MS_MAX		600000
#define SEED_DEFAULT		1
/* Second PRNG stream (the application), independent of the NIC's. */
#define APP_SEED_SALT		0x5eed5eed5eed5eedULL
#define NET_RX_P99		0.99

/* A uniform draw in [min, max]; ns or packets. */
struct range {
	uint64_t min;
	uint64_t max;
};

struct scenario {
	const char *name;
	const char *summary;
	uint64_t rate_pps;		/* steady arrivals */
	struct range train_pkts;	/* extra trains; max 0 = none */
	struct range train_gap_ns;
	struct range idle_ns;		/* application does not want the CPU */
	struct range want_ns;		/* wants it, shares it with sirqd */
	struct range hold_every_ns;	/* max 0 = never holds */
	struct range hold_ns;		/* keeps it */
};

static const struct scenario scenarios[] = {
	{
		.name = "stall",
		.summary = "100 kpps + trains of 64-256 pkts every 0.5-3 ms; "
			"app wants the CPU 0.5-2 ms of every 1.5-6 ms and "
			"holds it 10-20 ms every 40-60 ms",
		.rate_pps = 100000,
		.train_pkts = { 64, 256 },
		.train_gap_ns = { 500 * NS_PER_US, 3 * NS_PER_MS },
		.idle_ns = { 1 * NS_PER_MS, 4 * NS_PER_MS },
		.want_ns = { 500 * NS_PER_US, 2 * NS_PER_MS },
		.hold_every_ns = { 40 * NS_PER_MS, 60 * NS_PER_MS },
		.hold_ns = { 10 * NS_PER_MS, 20 * NS_PER_MS },
	},
	{
		.name = "flood",
		.summary = "2 Mpps, twice what the CPU can process; "
			"app wants the CPU all the time",
		.rate_pps = 2000000,
		.idle_ns = { 0, 0 },
		.want_ns = { 10 * NS_PER_MS, 10 * NS_PER_MS },
	},
};

#define NB_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

/* splitmix64 (Steele, Lea, Flood 2014): any seed works, 0 included. */
static uint64_t
prng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
range_draw(uint64_t *state, struct range r)
{
	if (r.max <= r.min)
		return r.min;
	return r.min + prng_next(state) % (r.max - r.min + 1);
}

struct nic {
	uint64_t prng;
	uint64_t synced_ns;		/* arrivals counted up to here */
	uint64_t next_train_ns;
	uint64_t ring;			/* packets waiting */
	uint64_t ring_peak;
	uint64_t dropped;
};

enum app_mode {
	APP_IDLE = 0,
	APP_WANT,
	APP_HOLD,
};

struct app {
	uint64_t prng;
	enum app_mode mode;
	uint64_t phase_end_ns;
	uint64_t next_hold_ns;
	uint64_t synced_ns;
	uint64_t wanted_ns;		/* time it wanted the CPU */
	uint64_t ran_ns;		/* time it had it */
};

enum task {
	TASK_NONE = 0,
	TASK_APP,
	TASK_WORKER,
};

struct sim {
	const struct scenario *sc;
	struct sirq_cpu *cpu;
	uint64_t now;
	uint64_t start;
	uint64_t end;
	uint64_t next_tick;
	struct nic nic;
	struct app app;
	bool worker_ready;		/* woken, not yet back to sleep */
	enum task current;
	uint64_t turn_start;
	uint64_t processed;
};

static uint64_t
steady_arrivals(const struct sim *s, uint64_t from, uint64_t to)
{
	uint64_t rate = s->sc->rate_pps;

	return (to - s->start) * rate / NS_PER_S -
		(from - s->start) * rate / NS_PER_S;
}

static void
nic_sync(struct sim *s)
{
	const struct scenario *sc = s->sc;
	struct nic *nic = &s->nic;
	uint64_t arrived = steady_arrivals(s, nic->synced_ns, s->now);

	while (sc->train_pkts.max != 0 && nic->next_train_ns <= s->now) {
		arrived += range_draw(&nic->prng, sc->train_pkts);
		nic->next_train_ns += range_draw(&nic->prng, sc->train_gap_ns);
	}
	nic->ring += arrived;
	if (nic->ring > RX_RING_SIZE) {
		nic->dropped += nic->ring - RX_RING_SIZE;
		nic->ring = RX_RING_SIZE;
	}
	if (nic->ring > nic->ring_peak)
		nic->ring_peak = nic->ring;
	nic->synced_ns = s->now;
}

static void
app_next_phase(struct app *a, const struct scenario *sc)
{
	uint64_t start = a->phase_end_ns;

	if (a->mode != APP_IDLE) {
		a->mode = APP_IDLE;
		a->phase_end_ns = start + range_draw(&a->prng, sc->idle_ns);
	} else if (sc->hold_every_ns.max != 0 && start >= a->next_hold_ns) {
		a->mode = APP_HOLD;
		a->phase_end_ns = start + range_draw(&a->prng, sc->hold_ns);
		a->next_hold_ns = start +
			range_draw(&a->prng, sc->hold_every_ns);
	} else {
		a->mode = APP_WANT;
		a->phase_end_ns = start + range_draw(&a->prng, sc->want_ns);
	}
}

static void
app_sync(struct sim *s)
{
	struct app *a = &s->app;

	while (a->phase_end_ns <= s->now) {
		if (a->mode != APP_IDLE)
			a->wanted_ns += a->phase_end_ns - a->synced_ns;
		a->synced_ns = a->phase_end_ns;
		app_next_phase(a, s->sc);
	}
	if (a->mode != APP_IDLE)
		a->wanted_ns += s->now - a->synced_ns;
	a->synced_ns = s->now;
}

/* Bring the world (NIC ring, application, need_resched) up to now. */
static void
sim_sync(struct sim *s)
{
	nic_sync(s);
	app_sync(s);
	sirq_set_need_resched(s->cpu, s->app.mode != APP_IDLE);
}

static uint64_t
sim_clock_ns(void *ctx)
{
	return ((const struct sim *)ctx)->now;
}

static void
sim_wake_worker(void *ctx)
{
	((struct sim *)ctx)->worker_ready = true;
}

static void
net_rx_action(struct sirq_cpu *cpu, void *arg)
{
	struct sim *s = arg;
	uint64_t n;

	sim_sync(s);
	n = s->nic.ring < NAPI_WEIGHT ? s->nic.ring : NAPI_WEIGHT;
	s->nic.ring -= n;
	s->processed += n;
	s->now += POLL_COST_NS + n * PKT_COST_NS;
	if (n == NAPI_WEIGHT)
		sirq_raise_irqoff(cpu, SIRQ_NET_RX);
}

static void
dispatcher_tick(struct sim *s)
{
	if (s->nic.ring > 0)
		sirq_raise_irqoff(s->cpu, SIRQ_NET_RX);
	sirq_irq_exit(s->cpu);

	s->next_tick += DISPATCH_TICK_NS;
	if (s->next_tick < s->now)
		s->next_tick = s->now;
}

/* The toy scheduler: a hold keeps the CPU, otherwise turns of a slice. */
static enum task
pick_task(struct sim *s)
{
	bool app = s->app.mode != APP_IDLE;
	enum task next;

	if (!s->worker_ready)
		next = app ? TASK_APP : TASK_NONE;
	else if (!app)
		next = TASK_WORKER;
	else if (s->app.mode == APP_HOLD)
		next = TASK_APP;
	else if (s->current != TASK_NONE &&
		 s->now - s->turn_start < SCHED_SLICE_NS)
		next = s->current;	/* the running task's turn goes on */
	else
		next = s->current == TASK_APP ? TASK_WORKER : TASK_APP;

	if (next != s->current) {
		s->current = next;
		s->turn_start = s->now;
	}
	return next;
}

/* Run the application, or nobody, until the next event. */
static void
run_quantum(struct sim *s, bool app_runs)
{
	uint64_t until = s->next_tick;

	if (s->app.phase_end_ns < until)
		until = s->app.phase_end_ns;
	if (s->end < until)
		until = s->end;
	if (app_runs)
		s->app.ran_ns += until - s->now;
	s->now = until;
}

static void
run_worker(struct sim *s)
{
	enum sirq_worker_status st = sirq_worker_run(s->cpu);

	if (st == SIRQ_WORKER_SLEEP || st == SIRQ_WORKER_EXIT)
		s->worker_ready = false;
}

static void
sim_run(struct sim *s)
{
	while (s->now < s->end) {
		sim_sync(s);
		if (s->now >= s->next_tick) {
			dispatcher_tick(s);
			continue;
		}
		switch (pick_task(s)) {
		case TASK_WORKER:
			run_worker(s);
			break;
		case TASK_APP:
			run_quantum(s, true);
			break;
		default:
			run_quantum(s, false);
			break;
		}
	}
	sim_sync(s);
}

static void
sim_init(struct sim *s, const struct scenario *sc, uint64_t duration_ns,
	 uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->sc = sc;
	s->start = SIM_EPOCH_NS;
	s->now = s->start;
	s->end = s->start + duration_ns;
	s->next_tick = s->start;

	s->nic.prng = seed;
	s->nic.synced_ns = s->start;
	s->nic.next_train_ns = s->start +
		range_draw(&s->nic.prng, sc->train_gap_ns);

	s->app.prng = seed ^ APP_SEED_SALT;
	s->app.mode = APP_IDLE;
	s->app.synced_ns = s->start;
	s->app.phase_end_ns = s->start + range_draw(&s->app.prng, sc->idle_ns);
	s->app.next_hold_ns = s->start +
		range_draw(&s->app.prng, sc->hold_every_ns);
}

/*
 * One table per scenario: a row per metric, a column per policy. Rows are
 * named by their JSON keys, so the table and the JSON file read alike.
 */
#define MAX_ROWS	24
#define KEY_LEN		32

struct row {
	char key[KEY_LEN];
	int decimals;
	double v[SIRQ_POLICY_MAX];
};

struct table {
	struct row rows[MAX_ROWS];
	unsigned int nb_rows;
	unsigned int cursor;	/* next row of the policy being collected */
};

static void
put(struct table *t, enum sirq_policy_id p, const char *key, int decimals,
    double v)
{
	struct row *r;

	if (t->cursor >= MAX_ROWS)
		return;		/* a new metric needs MAX_ROWS raised */
	r = &t->rows[t->cursor++];
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->decimals = decimals;
	r->v[p] = v;
	if (t->cursor > t->nb_rows)
		t->nb_rows = t->cursor;
}

static double
percent(uint64_t part, uint64_t whole)
{
	return whole == 0 ? 0.0 : 100.0 * (double)part / (double)whole;
}

static void
collect(struct table *t, enum sirq_policy_id p, const struct sim *s)
{
	double duration_s = (double)(s->end - s->start) / NS_PER_S;
	uint64_t duration = s->end - s->start;
	const struct sirq_latency *lat;
	struct sirq_stats st;
	char key[KEY_LEN];
	unsigned int k;

	sirq_stats_get(s->cpu, &st);
	lat = &st.latency[SIRQ_NET_RX];
	t->cursor = 0;
	put(t, p, "packets", 0, (double)s->processed);
	put(t, p, "dropped", 0, (double)s->nic.dropped);
	put(t, p, "rx_ring_peak", 0, (double)s->nic.ring_peak);
	put(t, p, "net_rx_p99_us", 1,
	    (double)sirq_latency_quantile(lat, NET_RX_P99) / NS_PER_US);
	put(t, p, "net_rx_max_us", 1, (double)lat->max_ns / NS_PER_US);
	put(t, p, "stalls", 0, (double)lat->stalls);
	put(t, p, "stalls_per_s", 2, (double)lat->stalls / duration_s);
	put(t, p, "app_cpu_share_pct", 1,
	    percent(s->app.ran_ns, s->app.wanted_ns));
	put(t, p, "net_rx_inline_cpu_pct", 1,
	    percent(st.time_ns[SIRQ_NET_RX][SIRQ_CTX_INLINE], duration));
	put(t, p, "net_rx_sirqd_cpu_pct", 1,
	    percent(st.time_ns[SIRQ_NET_RX][SIRQ_CTX_WORKER], duration));
	for (k = 0; k < SIRQ_WAKE_MAX; k++) {
		snprintf(key, sizeof(key), "wakeups_%s", sirq_wake_name(k));
		put(t, p, key, 0, (double)st.wakeups[k]);
	}
	for (k = 0; k < SIRQ_WINDOW_MAX; k++) {
		snprintf(key, sizeof(key), "windows_opened_%s", sirq_window_name(k));
		put(t, p, key, 0, (double)st.windows_opened[k]);
	}
	put(t, p, "window_overrides", 0, (double)st.window_overrides);
	put(t, p, "windows_closed_idle", 0, (double)st.windows_closed_idle);
}

static struct sirq_cpu *
demo_cpu_create(struct sim *s, enum sirq_policy_id p)
{
	struct sirq_cpu_conf conf = { .name = "demo" };

	sirq_params_default(&conf.params);
	conf.params.policy = p;
	conf.ops.clock_ns = sim_clock_ns;
	conf.ops.wake_worker = sim_wake_worker;
	conf.ops.ctx = s;
	s->cpu = sirq_cpu_create(&conf);
	if (s->cpu != NULL &&
	    sirq_register(s->cpu, SIRQ_NET_RX, net_rx_action, s, NULL) != 0) {
		sirq_cpu_free(s->cpu);
		s->cpu = NULL;
		errno = EINVAL;
	}
	return s->cpu;
}

static int
run_scenario(const struct scenario *sc, struct table *t,
	     uint64_t duration_ns, uint64_t seed)
{
	struct sim s;
	unsigned int p;

	for (p = 0; p < SIRQ_POLICY_MAX; p++) {
		sim_init(&s, sc, duration_ns, seed);
		if (demo_cpu_create(&s, p) == NULL) {
			fprintf(stderr, "sirq-demo: engine set-up for %s failed: %s\n",
				sirq_policy_name(p), strerror(errno));
			return -1;
		}
		sim_run(&s);
		collect(t, p, &s);
		sirq_worker_park(s.cpu);
		sirq_cpu_free(s.cpu);
	}
	return 0;
}

static void
print_table(const struct scenario *sc, const struct table *t)
{
	unsigned int r, p;

	printf("== %s: %s\n%-24s", sc->name, sc->summary, "");
	for (p = 0; p < SIRQ_POLICY_MAX; p++)
		printf(" %11s", sirq_policy_name(p));
	printf("\n");
	for (r = 0; r < t->nb_rows; r++) {
		printf("%-24s", t->rows[r].key);
		for (p = 0; p < SIRQ_POLICY_MAX; p++)
			printf(" %11.*f", t->rows[r].decimals, t->rows[r].v[p]);
		printf("\n");
	}
	printf("\n");
}

struct demo_args {
	uint64_t duration_ms;
	uint64_t seed;
	const char *json;
};

static void
json_write(FILE *f, const struct demo_args *a, uint64_t stall_threshold_ns,
	   const struct table tables[])
{
	unsigned int i, r, p;

	fprintf(f, "{\n  \"duration_ms\": %" PRIu64 ",\n  \"seed\": %" PRIu64
		",\n  \"stall_threshold_ns\": %" PRIu64 ",\n  \"scenarios\": {\n",
		a->duration_ms, a->seed, stall_threshold_ns);
	for (i = 0; i < NB_SCENARIOS; i++) {
		fprintf(f, "    \"%s\": {\n", scenarios[i].name);
		for (p = 0; p < SIRQ_POLICY_MAX; p++) {
			fprintf(f, "      \"%s\": {", sirq_policy_name(p));
			for (r = 0; r < tables[i].nb_rows; r++)
				fprintf(f, "%s\"%s\": %.*f", r ? ", " : "",
					tables[i].rows[r].key,
					tables[i].rows[r].decimals,
					tables[i].rows[r].v[p]);
			fprintf(f, "}%s\n", p + 1 < SIRQ_POLICY_MAX ? "," : "");
		}
		fprintf(f, "    }%s\n", i + 1 < NB_SCENARIOS ? "," : "");
	}
	fprintf(f, "  }\n}\n");
}

static void
usage(FILE *out, const char *prog)
{
	fprintf(out,
		"usage: %s [--duration-ms N] [--seed N] [--json FILE] [--help]\n"
		"Plays a stall and a flood scenario under every policy on simulated\n"
		"time and prints them side by side.\n"
		"  --duration-ms N  simulated time per run, 1..%u (default %u)\n"
		"  --seed N         PRNG seed of the traffic trains and the\n"
		"                   application's script (default %u)\n"
		"  --json FILE      also write the numbers as JSON to FILE\n"
		"  --help           this text\n",
		prog, DURATION_MS_MAX, DURATION_MS_DEFAULT, SEED_DEFAULT);
}

/* A decimal in [min, max], or false after saying what is wrong. */
static bool
parse_u64(const char *opt, const char *arg, uint64_t min, uint64_t max,
	  uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 ||
	    v < min || v > max) {
		fprintf(stderr, "sirq-demo: invalid %s '%s' (want %" PRIu64
			"..%" PRIu64 ")\n", opt, arg, min, max);
		return false;
	}
	*out = v;
	return true;
}

/* 0: run; 1: --help was given; 2: bad command line. */
static int
parse_args(int argc, char **argv, struct demo_args *a)
{
	static const struct option longopts[] = {
		{ "duration-ms", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'd' && parse_u64("--duration-ms", optarg, 1,
					  DURATION_MS_MAX, &a->duration_ms))
			continue;
		if (c == 's' && parse_u64("--seed", optarg, 0, UINT64_MAX,
					  &a->seed))
			continue;
		if (c == 'j') {
			a->json = optarg;
			continue;
		}
		if (c == 'h') {
			usage(stdout, argv[0]);
			return 1;
		}
		if (c != 'd' && c != 's')
			usage(stderr, argv[0]);
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "sirq-demo: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr, argv[0]);
		return 2;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct demo_args a = { DURATION_MS_DEFAULT, SEED_DEFAULT, NULL };
	static struct table tables[NB_SCENARIOS];
	struct sirq_params defaults;
	FILE *json = NULL;
	unsigned int i;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc != 0)
		return rc == 1 ? 0 : rc;
	if (a.json != NULL) {
		json = fopen(a.json, "w");
		if (json == NULL) {
			fprintf(stderr, "sirq-demo: cannot write --json '%s': %s\n",
				a.json, strerror(errno));
			return 2;
		}
	}

	sirq_params_default(&defaults);
	printf("sirq-demo: %" PRIu64 " ms simulated per run, seed %" PRIu64
	       "; stall = NET_RX raise-to-run >= %" PRIu64 " us\n"
	       "NET_RX %u pkts/call at %" PRIu64 " ns/pkt, dispatcher tick %"
	       PRIu64 " us, sched slice %" PRIu64 " us\n\n",
	       a.duration_ms, a.seed,
	       defaults.stall_threshold_ns / NS_PER_US, NAPI_WEIGHT,
	       PKT_COST_NS, DISPATCH_TICK_NS / NS_PER_US,
	       SCHED_SLICE_NS / NS_PER_US);
	for (i = 0; i < NB_SCENARIOS; i++) {
		if (run_scenario(&scenarios[i], &tables[i],
				 a.duration_ms * NS_PER_MS, a.seed) != 0)
			return 1;
		print_table(&scenarios[i], &tables[i]);
	}
	if (json == NULL)
		return 0;
	json_write(json, &a, defaults.stall_threshold_ns, tables);
	if (fclose(json) != 0) {
		fprintf(stderr, "sirq-demo: writing '%s' failed: %s\n",
			a.json, strerror(errno));
		return 1;
	}
	return 0;
}
