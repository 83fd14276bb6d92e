/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * lat-gen: the generator and sink of the low-load bench
 * (bench/lowload-bench.sh). A DPDK primary process that owns the
 * vhost-user side of a forwarder's two net_virtio_user ports:
 *
 *   lat-gen net_vhost0 (server) -> forwarder port 0 -> forwarder port 1
 *                                -> lat-gen net_vhost1 (server)
 *
 * It sends frames on --tx-port paced at --rate frames per second on its
 * own lcore (the TSC sets the schedule; a frame that is late goes as soon
 * as it can, up to a burst of 32, so the offered rate holds), writes the
 * TSC into each frame's payload just before rte_eth_tx_burst(), and
 * busy-polls --rx-port, where the forwarder sends the frame on: latency
 * is the TSC when the frame is back minus the stamp, both read on this
 * lcore. What it measures is the whole path from the generator's
 * tx_burst to its rx_burst: the vhost copy and interrupt into the
 * forwarder, the forwarder's wake-up and forwarding, and the virtio TX
 * ring back.
 *
 * Phases: wait for both links (the forwarder's virtio-user ports
 * connect); probe, one frame every 10 ms until one comes back (the
 * forwarder forwards); --warmup seconds paced, not counted; --duration
 * seconds paced and counted (the window); stop sending and wait --drain
 * ms for frames still on their way. Frames carry a sequence number and
 * their phase, so only frames sent in the window count, each once. Over
 * the window it also reads utime + stime of the process in
 * --cpu-pid-file (/proc/PID/stat: all its threads), the forwarder's CPU.
 * It also says how undisturbed the run was: its own thread's CPU time
 * and involuntary context switches over the window (anything else on its
 * CPU delays the frames it times), and with --watch-cpu N how busy CPU N
 * was and how much of it the hypervisor took (steal), from /proc/stat.
 * Then one JSON object (--json FILE or stdout). With --hold it then keeps
 * the ports until SIGINT or SIGTERM or both links are down: the
 * virtio-user side must stop first (docs/architecture.md §12: a
 * virtio-user port whose vhost-user server has gone gets SIGPIPE when it
 * stops).
 *
 *   lat-gen [EAL options] -- [options]; lat-gen -- --help
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "bench_tool.h"

#define PROG "lat-gen"
#define MAGIC UINT32_C(0x4c415447)	/* "LATG" */
#define ETHER_TYPE 0x88b5		/* IEEE local experimental */
#define FRAME_MIN 60			/* without the CRC */
#define FRAME_MAX 1514
#define FRAME_DEFAULT 60		/* 64 bytes on the wire */
#define BURST 32
#define NB_MBUFS 8191
#define MBUF_CACHE 256
#define RING_SIZE 1024
#define PROBE_INTERVAL_MS 10
#define HOLD_POLL_US 20000
/* Latencies kept for the percentiles: 100 kpps for 100 s. */
#define MAX_SAMPLES (10u * 1000 * 1000)
/* Latency counted as a stall ("over_8ms"), the patch's threshold. */
#define STALL_NS (8u * 1000 * 1000)

enum phase { PH_PROBE = 1, PH_WARMUP = 2, PH_WINDOW = 3 };

/* The payload after the Ethernet header. */
struct stamp {
	uint32_t magic;
	uint32_t phase;
	uint64_t run;			/* this process's start TSC: a frame of ours */
	uint64_t seq;
	uint64_t tsc;
} __attribute__((__packed__));	/* DPDK 25.11 dropped __rte_packed at the end */

struct opts {
	uint64_t rate;
	uint32_t frame;
	uint32_t warmup_s;
	uint32_t duration_s;
	uint32_t drain_ms;
	uint32_t link_timeout_s;
	uint32_t ready_timeout_s;
	uint16_t tx_port;
	uint16_t rx_port;
	const char *cpu_pid_file;
	int watch_cpu;			/* -1: none */
	bool hold;
	uint32_t hold_max_s;
	const char *json;
	int cpu;			/* unused: EAL's -l pins lat-gen */
};

static struct opts o = {
	.rate = 10000,
	.frame = FRAME_DEFAULT,
	.warmup_s = 1,
	.duration_s = 10,
	.drain_ms = 200,
	.link_timeout_s = 30,
	.ready_timeout_s = 30,
	.tx_port = 0,
	.rx_port = 1,
	.hold_max_s = 60,
	.watch_cpu = -1,
	.cpu = -1,
};

const char bench_prog[] = PROG;

struct cpu_times {
	uint64_t utime, stime;		/* clock ticks */
	bool ok;
};

struct counts {
	uint64_t sent;			/* window frames the PMD took */
	uint64_t tx_refused;		/* window frames it refused (ring full) */
	uint64_t received;		/* window frames back, each once */
	uint64_t duplicates;
	uint64_t other_phase;		/* probe or warm-up frames back */
	uint64_t foreign;		/* frames that are not ours */
	uint64_t wrong_port;		/* ours, back on --tx-port */
	uint64_t late_bursts;		/* sends of more than one due frame */
	uint64_t max_due;
	uint64_t probes;
};

static uint64_t run_id;
static uint64_t tsc_hz;
static uint32_t *lat_ns;		/* window latencies, in ns */
static uint8_t *seen;			/* per window sequence number */
static uint64_t seen_size;
static struct counts c;

static void
usage(void)
{
	printf("Usage: " PROG " [EAL options] -- [options]\n"
	       "Paces frames out of one port of a forwarder and times them back on\n"
	       "the other, with the TSC stamp each frame carries; prints a JSON object.\n"
	       "  --rate PPS            frames per second, 1..10000000 (default: %" PRIu64 ")\n"
	       "  --size BYTES          frame length without the CRC, %u..%u (default: %u)\n"
	       "  --warmup S            seconds paced before the window, 0..3600 (default: %u)\n"
	       "  --duration S          seconds measured, 1..3600 (default: %u)\n"
	       "  --drain MS            wait for frames in flight after the window (default: %u)\n"
	       "  --tx-port N           port the frames go out on (default: %u)\n"
	       "  --rx-port N           port they come back on (default: %u)\n"
	       "  --link-timeout S      wait this long for both links (default: %u)\n"
	       "  --ready-timeout S     and this long for a probe to come back (default: %u)\n"
	       "  --cpu-pid-file FILE   CPU of the process whose PID FILE holds, over the window\n"
	       "  --watch-cpu N         how busy CPU N was over the window (/proc/stat)\n"
	       "  --hold                after the JSON, keep the ports until SIGINT, SIGTERM\n"
	       "                        or both links down (at most --hold-max S)\n"
	       "  --hold-max S          (default: %u)\n"
	       "  --json FILE           the JSON object here instead of stdout\n"
	       "  --help                this text\n"
	       "EAL options: the lcore (-l 0), the vhost ports\n"
	       "(--vdev net_vhost0,iface=SOCK,queues=1), --file-prefix, ...\n",
	       o.rate, FRAME_MIN, FRAME_MAX, FRAME_DEFAULT, o.warmup_s, o.duration_s,
	       o.drain_ms, o.tx_port, o.rx_port, o.link_timeout_s, o.ready_timeout_s,
	       o.hold_max_s);
}

static int
parse_port(const char *name, const char *arg, uint16_t *port)
{
	uint32_t v;

	if (bench_parse_u32(name, arg, 0, RTE_MAX_ETHPORTS - 1, &v) != 0)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static int
tool_option(int ch, const char *arg)
{
	switch (ch) {
	case 'r':
		return bench_parse_u64("rate", arg, 1, 10000000, &o.rate);
	case 's':
		return bench_parse_u32("size", arg, FRAME_MIN, FRAME_MAX, &o.frame);
	case 'w':
		return bench_parse_u32("warmup", arg, 0, 3600, &o.warmup_s);
	case 't':
		return bench_parse_u32("duration", arg, 1, 3600, &o.duration_s);
	case 'd':
		return bench_parse_u32("drain", arg, 0, 60000, &o.drain_ms);
	case 'T':
		return parse_port("tx-port", arg, &o.tx_port);
	case 'R':
		return parse_port("rx-port", arg, &o.rx_port);
	case 'l':
		return bench_parse_u32("link-timeout", arg, 1, 3600, &o.link_timeout_s);
	case 'y':
		return bench_parse_u32("ready-timeout", arg, 1, 3600, &o.ready_timeout_s);
	case 'p':
		o.cpu_pid_file = arg;
		return 0;
	case 'W':
		return bench_parse_cpu(arg, &o.watch_cpu);
	case 'H':
		o.hold = true;
		return 0;
	case 'm':
		return bench_parse_u32("hold-max", arg, 1, 86400, &o.hold_max_s);
	default:
		return 1;
	}
}

/* The options after "--" (all of them if there is none). */
static int
parse_tool_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rate", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, 't' },
		{ "drain", required_argument, NULL, 'd' },
		{ "tx-port", required_argument, NULL, 'T' },
		{ "rx-port", required_argument, NULL, 'R' },
		{ "link-timeout", required_argument, NULL, 'l' },
		{ "ready-timeout", required_argument, NULL, 'y' },
		{ "cpu-pid-file", required_argument, NULL, 'p' },
		{ "watch-cpu", required_argument, NULL, 'W' },
		{ "hold", no_argument, NULL, 'H' },
		{ "hold-max", required_argument, NULL, 'm' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	if (bench_parse_args(argc, argv, lo, tool_option, usage, &o.cpu,
			     &o.json) != 0)
		return -1;
	if (o.tx_port == o.rx_port) {
		fprintf(stderr, PROG ": --tx-port and --rx-port are both %u\n",
			o.tx_port);
		return -1;
	}
	return 0;
}

/* utime and stime of PID, all its threads (fields 14 and 15). */
static struct cpu_times
read_cpu(pid_t pid)
{
	struct cpu_times t = { 0 };
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return t;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: fields count from the last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL)
		return t;
	/* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime" */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %" SCNu64 " %" SCNu64,
		   &t.utime, &t.stime) == 2)
		t.ok = true;
	return t;
}

/* Busy and steal time of CPU @cpu, in clock ticks, from /proc/stat. */
struct cpu_stat {
	uint64_t busy, steal, total;
	bool ok;
};

static struct cpu_stat
read_cpu_stat(int cpu)
{
	struct cpu_stat st = { 0 };
	uint64_t v[10] = { 0 };
	char name[16], line[512];
	FILE *f = fopen("/proc/stat", "r");
	int i;

	if (f == NULL)
		return st;
	snprintf(name, sizeof(name), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, name, strlen(name)) != 0)
			continue;
		/* user nice system idle iowait irq softirq steal guest guest_nice */
		if (sscanf(line + strlen(name), "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			   " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
			for (i = 0; i < 8; i++)
				st.total += v[i];
			st.busy = st.total - v[3] - v[4];
			st.steal = v[7];
			st.ok = true;
		}
		break;
	}
	fclose(f);
	return st;
}

static void
read_comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	comm[0] = '\0';
	f = fopen(path, "r");
	if (f == NULL)
		return;
	if (fgets(comm, (int)len, f) != NULL)
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

static int
read_pid_file(const char *path, pid_t *pid)
{
	char buf[32];
	uint32_t v;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		fprintf(stderr, PROG ": --cpu-pid-file %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (bench_parse_u32("cpu-pid-file", buf, 1, INT32_MAX, &v) != 0)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static int
port_setup(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf = { 0 };
	int ret;

	if (!rte_eth_dev_is_valid_port(port)) {
		fprintf(stderr, PROG ": port %u: no such port (%u found; give the vhost ports with --vdev)\n",
			port, rte_eth_dev_count_avail());
		return -1;
	}
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port, 0, RING_SIZE,
					     rte_eth_dev_socket_id(port), NULL, mp);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, RING_SIZE,
					     rte_eth_dev_socket_id(port), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret != 0) {
		fprintf(stderr, PROG ": port %u set-up: %s\n", port, rte_strerror(-ret));
		return -1;
	}
	return 0;
}

static bool
link_up(uint16_t port)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(port, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_UP;
}

static uint64_t
ms_to_tsc(uint64_t ms)
{
	return ms * tsc_hz / 1000;
}

/* A frame of ours with its sequence number; the stamp comes at sending. */
static struct rte_mbuf *
frame_new(struct rte_mempool *mp, enum phase ph, uint64_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct rte_ether_hdr *eh;
	struct stamp *s;

	if (m == NULL)
		return NULL;
	if (rte_pktmbuf_append(m, (uint16_t)o.frame) == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	memset(eh, 0, o.frame);
	memset(&eh->dst_addr, 0xff, sizeof(eh->dst_addr));
	rte_eth_macaddr_get(o.tx_port, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(ETHER_TYPE);
	s = (struct stamp *)(eh + 1);
	s->magic = MAGIC;
	s->phase = ph;
	s->run = run_id;
	s->seq = seq;
	return m;
}

static const struct stamp *
frame_stamp(struct rte_mbuf *m)
{
	const struct stamp *s;

	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr) + sizeof(*s))
		return NULL;
	s = rte_pktmbuf_mtod_offset(m, const struct stamp *,
				    sizeof(struct rte_ether_hdr));
	if (s->magic != MAGIC || s->run != run_id)
		return NULL;
	return s;
}

/* Sends @n frames of phase @ph from sequence @seq on; returns how many went. */
static uint16_t
send_frames(struct rte_mempool *mp, enum phase ph, uint64_t seq, uint16_t n)
{
	struct rte_mbuf *m[BURST];
	uint16_t i, k = 0, sent;
	uint64_t now;

	for (i = 0; i < n; i++) {
		m[k] = frame_new(mp, ph, seq + i);
		if (m[k] != NULL)
			k++;
	}
	now = rte_rdtsc();
	for (i = 0; i < k; i++)
		rte_pktmbuf_mtod_offset(m[i], struct stamp *,
					sizeof(struct rte_ether_hdr))->tsc = now;
	sent = rte_eth_tx_burst(o.tx_port, 0, m, k);
	if (sent < k)
		rte_pktmbuf_free_bulk(&m[sent], k - sent);
	return sent;
}

/* Polls both ports once; returns the frames of phase @want that came back. */
static unsigned int
poll_once(uint64_t win_first, unsigned int want)
{
	struct rte_mbuf *m[BURST];
	unsigned int got = 0;
	uint16_t n, i;
	uint64_t now;

	n = rte_eth_rx_burst(o.rx_port, 0, m, BURST);
	now = rte_rdtsc();
	for (i = 0; i < n; i++) {
		const struct stamp *s = frame_stamp(m[i]);

		if (s == NULL) {
			c.foreign++;
		} else if (s->phase != PH_WINDOW) {
			c.other_phase++;
			if (s->phase == want)
				got++;
		} else {
			uint64_t k = s->seq - win_first;

			if (s->seq < win_first || k >= seen_size) {
				c.foreign++;
			} else if (seen[k]) {
				c.duplicates++;
			} else {
				uint64_t d = now > s->tsc ? now - s->tsc : 0;
				uint64_t ns = d * 1000000000ULL / tsc_hz;

				seen[k] = 1;
				if (c.received < MAX_SAMPLES)
					lat_ns[c.received] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
				c.received++;
				got++;
			}
		}
	}
	rte_pktmbuf_free_bulk(m, n);
	/* Nothing should come back the way it went. */
	n = rte_eth_rx_burst(o.tx_port, 0, m, BURST);
	for (i = 0; i < n; i++)
		if (frame_stamp(m[i]) != NULL)
			c.wrong_port++;
		else
			c.foreign++;
	rte_pktmbuf_free_bulk(m, n);
	return got;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank, in us. */
static double
pct_us(const uint32_t *v, uint64_t n, double p)
{
	uint64_t rank;

	if (n == 0)
		return 0;
	rank = (uint64_t)(p / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1] / 1000.0;
}

struct result {
	double window_s;
	double self_cpu_s;		/* lat-gen's own thread over the window */
	long self_nivcsw;		/* its involuntary context switches */
	bool have_watch;
	double watch_busy, watch_steal;	/* shares of the watched CPU */
	bool have_cpu;
	pid_t pid;
	char comm[64];
	double cpu_s, utime_s, stime_s;
};

static void
write_json(FILE *f, const struct result *r)
{
	uint64_t n = c.received < MAX_SAMPLES ? c.received : MAX_SAMPLES;
	double sum = 0;
	uint64_t i, over = 0;

	qsort(lat_ns, n, sizeof(*lat_ns), cmp_u32);
	for (i = 0; i < n; i++) {
		sum += lat_ns[i];
		/* The patch's stall: 8 ms or more. */
		if (lat_ns[i] >= STALL_NS)
			over++;
	}
	fprintf(f, "{\"tool\": \"" PROG "\", \"rate_pps\": %" PRIu64 ", \"frame_bytes\": %u"
		", \"warmup_s\": %u, \"duration_s\": %u, \"window_s\": %.6f"
		", \"sent\": %" PRIu64 ", \"sent_pps\": %.1f, \"tx_refused\": %" PRIu64
		", \"received\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"duplicates\": %" PRIu64
		", \"other_phase\": %" PRIu64 ", \"foreign\": %" PRIu64 ", \"wrong_port\": %" PRIu64
		", \"late_bursts\": %" PRIu64 ", \"max_due\": %" PRIu64 ", \"probes\": %" PRIu64
		", \"tsc_hz\": %" PRIu64 ",\n \"latency_us\": {\"samples\": %" PRIu64
		", \"min\": %.3f, \"p50\": %.3f, \"p90\": %.3f, \"p99\": %.3f, \"p999\": %.3f"
		", \"max\": %.3f, \"mean\": %.3f, \"over_8ms\": %" PRIu64 "}",
		o.rate, o.frame, o.warmup_s, o.duration_s, r->window_s, c.sent,
		c.sent / r->window_s, c.tx_refused, c.received,
		c.sent > c.received ? c.sent - c.received : 0, c.duplicates,
		c.other_phase, c.foreign, c.wrong_port, c.late_bursts, c.max_due,
		c.probes, tsc_hz, n,
		pct_us(lat_ns, n, 0), pct_us(lat_ns, n, 50), pct_us(lat_ns, n, 90),
		pct_us(lat_ns, n, 99), pct_us(lat_ns, n, 99.9), pct_us(lat_ns, n, 100),
		n ? sum / (double)n / 1000.0 : 0.0, over);
	if (r->have_cpu)
		fprintf(f, ",\n \"cpu\": {\"pid\": %d, \"comm\": \"%s\", \"utime_s\": %.3f"
			", \"stime_s\": %.3f, \"seconds\": %.3f, \"share\": %.5f}",
			(int)r->pid, r->comm, r->utime_s, r->stime_s, r->cpu_s,
			r->cpu_s / r->window_s);
	fprintf(f, ",\n \"self\": {\"cpu_share\": %.5f, \"involuntary_switches\": %ld}",
		r->self_cpu_s / r->window_s, r->self_nivcsw);
	if (r->have_watch)
		fprintf(f, ",\n \"watch_cpu\": {\"cpu\": %d, \"busy_share\": %.5f"
			", \"steal_share\": %.5f}",
			o.watch_cpu, r->watch_busy, r->watch_steal);
	fprintf(f, "}\n");
}

/* Until both links are up; -1 after --link-timeout or a signal. */
static int
wait_links(void)
{
	uint64_t end = rte_rdtsc() + (uint64_t)o.link_timeout_s * tsc_hz;

	while (!(link_up(o.tx_port) && link_up(o.rx_port))) {
		if (bench_stop)
			return -1;
		if (rte_rdtsc() > end) {
			fprintf(stderr, PROG ": links not up after %u s (port %u %s, port %u %s)\n",
				o.link_timeout_s, o.tx_port, link_up(o.tx_port) ? "up" : "down",
				o.rx_port, link_up(o.rx_port) ? "up" : "down");
			return -1;
		}
		rte_delay_us_sleep(10000);
	}
	return 0;
}

/* A probe every 10 ms until one is back. */
static int
wait_ready(struct rte_mempool *mp)
{
	uint64_t end = rte_rdtsc() + (uint64_t)o.ready_timeout_s * tsc_hz;
	uint64_t next = 0;

	for (;;) {
		uint64_t now = rte_rdtsc();

		if (bench_stop)
			return -1;
		if (now > end) {
			fprintf(stderr, PROG ": no probe came back in %u s (%" PRIu64 " sent): is the forwarder forwarding port %u to %u?\n",
				o.ready_timeout_s, c.probes, o.tx_port, o.rx_port);
			return -1;
		}
		if (now >= next) {
			c.probes += send_frames(mp, PH_PROBE, c.probes, 1);
			next = now + ms_to_tsc(PROBE_INTERVAL_MS);
		}
		if (poll_once(0, PH_PROBE) > 0)
			return 0;
	}
}

/*
 * Paced sending and polling for @secs seconds of phase @ph; frame k is
 * due at start + k / rate.
 */
static void
paced(struct rte_mempool *mp, enum phase ph, uint64_t start, uint32_t secs,
      uint64_t *seq, uint64_t win_first)
{
	uint64_t end = start + (uint64_t)secs * tsc_hz;
	uint64_t k = 0;

	while (!bench_stop) {
		uint64_t now = rte_rdtsc(), due;

		if (now >= end)
			break;
		/* Frames due by now: those with k <= (now - start) * rate / hz. */
		due = (uint64_t)((unsigned __int128)(now - start) * o.rate / tsc_hz) + 1;

		if (due > k) {
			uint64_t n = due - k;
			uint16_t burst = n > BURST ? BURST : (uint16_t)n, sent;

			if (n > 1)
				c.late_bursts++;
			if (n > c.max_due)
				c.max_due = n;
			sent = send_frames(mp, ph, *seq, burst);
			if (ph == PH_WINDOW) {
				c.sent += sent;
				c.tx_refused += burst - sent;
			}
			/* Refused frames are gone from the pace, as on a wire. */
			k += burst;
			*seq += burst;
		}
		poll_once(win_first, 0);
	}
}

int
main(int argc, char **argv)
{
	int sep = -1, i, ret = 1, eal_argc;
	struct rte_mempool *mp;
	struct cpu_times t0 = { 0 }, t1 = { 0 };
	struct cpu_stat w0 = { 0 }, w1 = { 0 };
	struct rusage ru0, ru1;
	uint64_t self0, self1;
	struct result r = { 0 };
	uint64_t seq = 0, win_first, start, win_start, win_end, drain_end;
	FILE *out;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	/* The tool's options first: --help and bad values before EAL's output. */
	if (sep >= 0) {
		argv[sep] = argv[0];
		if (parse_tool_args(argc - sep, argv + sep) != 0)
			return BENCH_EXIT_USAGE;
		eal_argc = sep;
	} else {
		eal_argc = argc;
	}
	optind = 1;
	ret = rte_eal_init(eal_argc, argv);
	if (ret < 0) {
		fprintf(stderr, PROG ": EAL init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	ret = 1;
	bench_catch_signals();
	tsc_hz = rte_get_tsc_hz();
	run_id = rte_rdtsc();
	seen_size = o.rate * o.duration_s + BURST;
	seen = calloc(seen_size, 1);
	lat_ns = malloc(sizeof(*lat_ns) * (seen_size < MAX_SAMPLES ? seen_size : MAX_SAMPLES));
	if (seen == NULL || lat_ns == NULL) {
		fprintf(stderr, PROG ": no memory for %" PRIu64 " frames\n", seen_size);
		goto out;
	}
	mp = rte_pktmbuf_pool_create("lat_gen", NB_MBUFS, MBUF_CACHE, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr, PROG ": mbuf pool: %s\n", rte_strerror(rte_errno));
		goto out;
	}
	if (port_setup(o.tx_port, mp) != 0 || port_setup(o.rx_port, mp) != 0)
		goto out;
	printf(PROG ": ports %u -> %u, waiting for the links\n", o.tx_port, o.rx_port);
	fflush(stdout);
	if (wait_links() != 0)
		goto stop;
	printf(PROG ": links up, probing\n");
	fflush(stdout);
	if (wait_ready(mp) != 0)
		goto stop;
	printf(PROG ": forwarded; %" PRIu64 " fps, %u s warm-up, %u s measured\n",
	       o.rate, o.warmup_s, o.duration_s);
	fflush(stdout);

	start = rte_rdtsc();
	paced(mp, PH_WARMUP, start, o.warmup_s, &seq, UINT64_MAX);
	win_first = seq;
	if (o.cpu_pid_file != NULL) {
		if (read_pid_file(o.cpu_pid_file, &r.pid) != 0)
			goto stop;
		read_comm(r.pid, r.comm, sizeof(r.comm));
		t0 = read_cpu(r.pid);
		if (!t0.ok) {
			fprintf(stderr, PROG ": --cpu-pid-file %s: no /proc/%d/stat\n",
				o.cpu_pid_file, (int)r.pid);
			goto stop;
		}
	}
	if (o.watch_cpu >= 0)
		w0 = read_cpu_stat(o.watch_cpu);
	getrusage(RUSAGE_THREAD, &ru0);
	self0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	win_start = rte_rdtsc();
	paced(mp, PH_WINDOW, win_start, o.duration_s, &seq, win_first);
	win_end = rte_rdtsc();
	self1 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	getrusage(RUSAGE_THREAD, &ru1);
	if (o.cpu_pid_file != NULL)
		t1 = read_cpu(r.pid);
	if (o.watch_cpu >= 0)
		w1 = read_cpu_stat(o.watch_cpu);
	drain_end = win_end + ms_to_tsc(o.drain_ms);
	while (!bench_stop && rte_rdtsc() < drain_end && c.received < c.sent)
		poll_once(win_first, 0);
	if (bench_stop) {
		fprintf(stderr, PROG ": stopped by a signal; no result\n");
		goto stop;
	}
	r.window_s = (double)(win_end - win_start) / (double)tsc_hz;
	r.self_cpu_s = (double)(self1 - self0) / 1e9;
	r.self_nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
	if (w0.ok && w1.ok && w1.total > w0.total) {
		r.have_watch = true;
		r.watch_busy = (double)(w1.busy - w0.busy) / (double)(w1.total - w0.total);
		r.watch_steal = (double)(w1.steal - w0.steal) / (double)(w1.total - w0.total);
	}
	if (o.cpu_pid_file != NULL) {
		long hz = sysconf(_SC_CLK_TCK);

		if (!t1.ok) {
			fprintf(stderr, PROG ": process %d (%s) ended during the window\n",
				(int)r.pid, r.comm);
			goto stop;
		}
		r.have_cpu = true;
		r.utime_s = (double)(t1.utime - t0.utime) / (double)hz;
		r.stime_s = (double)(t1.stime - t0.stime) / (double)hz;
		r.cpu_s = r.utime_s + r.stime_s;
	}
	out = bench_json_open(o.json);
	if (out == NULL)
		goto stop;
	write_json(out, &r);
	bench_json_close(out);
	printf(PROG ": %" PRIu64 " sent, %" PRIu64 " back; result written\n",
	       c.sent, c.received);
	fflush(stdout);
	ret = 0;
	if (o.hold) {
		uint64_t end = rte_rdtsc() + (uint64_t)o.hold_max_s * tsc_hz;

		while (!bench_stop && rte_rdtsc() < end &&
		       (link_up(o.tx_port) || link_up(o.rx_port))) {
			poll_once(win_first, 0);
			rte_delay_us_sleep(HOLD_POLL_US);
		}
	}
stop:
	rte_eth_dev_stop(o.tx_port);
	rte_eth_dev_stop(o.rx_port);
	rte_eth_dev_close(o.tx_port);
	rte_eth_dev_close(o.rx_port);
out:
	free(seen);
	free(lat_ns);
	rte_eal_cleanup();
	return ret;
}
