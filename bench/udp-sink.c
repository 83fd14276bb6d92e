/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * udp-sink: the receiving application of the kernel lab's flood scenario
 * (the UDP receiver of kernel commit 4cd13c21b207). Reads datagrams with
 * recvmmsg() (recv() with --batch 1), spends --cost-ns of CPU work on each
 * one, and after --warmup seconds measures for --duration seconds:
 *
 *  - datagrams received per second;
 *  - the socket's drops: SO_RXQ_OVFL (sk_drops, carried by every received
 *    datagram) and UDP RcvbufErrors/InErrors of this network namespace
 *    (/proc/net/snmp);
 *  - the CPU it is pinned on (--cpu): the /proc/stat split of that CPU
 *    (user, system, softirq, idle, ... in USER_HZ ticks), the run time of
 *    ksoftirqd/N and its own (/proc/PID/schedstat, ns), and the backlog
 *    drops and time squeezes of that CPU (/proc/net/softnet_stat).
 *
 * The per-packet cost is CPU work (a loop calibrated on the thread's CPU
 * clock before the first datagram), not wall time, so time taken by
 * softirqs on top of the receiver does not count as its work.
 *
 * Without CONFIG_IRQ_TIME_ACCOUNTING (the tick decides where a CPU's time
 * went) a task's run time includes the softirqs that interrupted it; the
 * /proc/stat split does not: a tick that lands in a softirq counts as
 * softirq, whichever task it interrupted, ksoftirqd included.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_tool.h"

#define PROG "udp-sink"
#define NS_PER_S BENCH_NS_PER_S
#define NS_PER_MS 1000000ULL
#define MAX_BATCH 1024
#define BATCH_DEFAULT 64
#define MAX_DGRAM 2048
/* A blocked receiver still looks at the clock this often. */
#define RCV_TIMEOUT_US 100000
/* Calibration: the work loop's speed over this much thread CPU time. */
#define CALIBRATE_NS (50 * NS_PER_MS)
#define CALIBRATE_ROUNDS 5

/* /proc/stat's per-CPU columns, in their order. */
enum { ST_USER, ST_NICE, ST_SYSTEM, ST_IDLE, ST_IOWAIT, ST_IRQ, ST_SOFTIRQ,
	ST_STEAL, NB_ST };
static const char *const st_names[NB_ST] = {
	"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
};

struct opts {
	struct sockaddr_in addr;
	bool have_addr;
	uint64_t cost_ns;
	uint32_t batch;
	uint32_t rcvbuf;		/* 0: the kernel's default */
	uint32_t warmup_s;
	uint32_t duration_s;
	int cpu;
	const char *json;
};

static struct opts o = {
	.batch = BATCH_DEFAULT,
	.warmup_s = 1,
	.duration_s = 10,
	.cpu = -1,
};

const char bench_prog[] = PROG;

/* Work steps per microsecond of this thread's CPU: the best of a few. */
static double
calibrate(void)
{
	double best = 0;
	int r;

	for (r = 0; r < CALIBRATE_ROUNDS; r++) {
		uint64_t steps = 0, t0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID), t;

		do {
			bench_work(1000);
			steps += 1000;
			t = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		} while (t - t0 < CALIBRATE_NS);
		if ((double)steps * 1e3 / (double)(t - t0) > best)
			best = (double)steps * 1e3 / (double)(t - t0);
	}
	return best;
}

/* ---- what the machine says ---- */

struct sample {
	uint64_t t_ns;
	uint64_t received;
	uint64_t sk_drops;		/* SO_RXQ_OVFL: latest seen */
	long long rcvbuf_errors, in_errors, in_datagrams;
	unsigned long long cpu_ticks[NB_ST];
	long long ksoftirqd_ns, self_ns;
	unsigned long long backlog_drops, time_squeeze, processed;
};

/* The value of @name in the "@proto:" header/value line pair of @path. */
static long long
proc_counter(const char *path, const char *proto, const char *name)
{
	char hdr[4096], val[4096], *hs, *vs, *h, *v;
	size_t plen = strlen(proto);
	long long ret = -1;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return -1;
	while (fgets(hdr, sizeof(hdr), f) != NULL &&
	       fgets(val, sizeof(val), f) != NULL) {
		if (strncmp(hdr, proto, plen) != 0 || hdr[plen] != ':')
			continue;
		h = strtok_r(hdr + plen + 1, " \n", &hs);
		v = strtok_r(val + plen + 1, " \n", &vs);
		for (; h != NULL && v != NULL; h = strtok_r(NULL, " \n", &hs),
		     v = strtok_r(NULL, " \n", &vs))
			if (strcmp(h, name) == 0) {
				ret = atoll(v);
				break;
			}
		break;
	}
	fclose(f);
	return ret;
}

static void
cpu_ticks(int cpu, unsigned long long *t)
{
	char line[512], want[32];
	FILE *f = fopen("/proc/stat", "r");
	int i;

	for (i = 0; i < NB_ST; i++)
		t[i] = 0;
	if (f == NULL)
		return;
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, want, strlen(want)) == 0) {
			sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu",
			       &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7]);
			break;
		}
	fclose(f);
}

/* Run time of a task in ns, from /proc/PID/schedstat; -1 if unknown. */
static long long
run_ns(int pid)
{
	char path[64];
	long long ns = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%lld", &ns) != 1)
		ns = -1;
	fclose(f);
	return ns;
}

static int
find_ksoftirqd(int cpu)
{
	char want[32], path[300], comm[64];
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int pid = -1;

	if (dir == NULL)
		return -1;
	snprintf(want, sizeof(want), "ksoftirqd/%d\n", cpu);
	while (pid < 0 && (d = readdir(dir)) != NULL) {
		FILE *f;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL && strcmp(comm, want) == 0)
			pid = atoi(d->d_name);
		fclose(f);
	}
	closedir(dir);
	return pid;
}

/* Line @cpu of /proc/net/softnet_stat: processed, dropped, time_squeeze. */
static void
softnet(int cpu, struct sample *s)
{
	char line[512];
	FILE *f = fopen("/proc/net/softnet_stat", "r");
	int i = 0;

	s->processed = s->backlog_drops = s->time_squeeze = 0;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned int v[15] = { 0 };

		/* Column 13 (0-based 12) is the CPU id since Linux 5.x. */
		if (sscanf(line, "%x %x %x %x %x %x %x %x %x %x %x %x %x", &v[0],
			   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
			   &v[9], &v[10], &v[11], &v[12]) == 13 ? (int)v[12] == cpu :
		    i == cpu) {
			s->processed = v[0];
			s->backlog_drops = v[1];
			s->time_squeeze = v[2];
			break;
		}
		i++;
	}
	fclose(f);
}

static void
take(struct sample *s, int ksoftirqd, uint64_t received, uint64_t sk_drops)
{
	s->t_ns = bench_clock_ns(CLOCK_MONOTONIC);
	s->received = received;
	s->sk_drops = sk_drops;
	s->rcvbuf_errors = proc_counter("/proc/net/snmp", "Udp", "RcvbufErrors");
	s->in_errors = proc_counter("/proc/net/snmp", "Udp", "InErrors");
	s->in_datagrams = proc_counter("/proc/net/snmp", "Udp", "InDatagrams");
	cpu_ticks(o.cpu, s->cpu_ticks);
	s->ksoftirqd_ns = ksoftirqd > 0 ? run_ns(ksoftirqd) : -1;
	s->self_ns = run_ns(getpid());
	softnet(o.cpu, s);
}

/* ---- receiving ---- */

static uint32_t
sk_drops_of(struct msghdr *h, uint32_t last)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(h); c != NULL; c = CMSG_NXTHDR(h, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t v;

			memcpy(&v, CMSG_DATA(c), sizeof(v));
			return v;
		}
	return last;
}

static int
receive(int fd, uint64_t steps, struct sample *a, struct sample *b, int ksoftirqd)
{
	static struct mmsghdr msgs[MAX_BATCH];
	static struct iovec iov[MAX_BATCH];
	static uint8_t bufs[MAX_BATCH][MAX_DGRAM];
	static char ctl[MAX_BATCH][CMSG_SPACE(sizeof(uint32_t))];
	uint64_t start = bench_clock_ns(CLOCK_MONOTONIC), received = 0;
	uint64_t win_start = start + (uint64_t)o.warmup_s * NS_PER_S;
	uint64_t win_end = win_start + (uint64_t)o.duration_s * NS_PER_S;
	uint32_t drops = 0, i;
	bool in_window = false;

	for (i = 0; i < o.batch; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = MAX_DGRAM;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (!bench_stop) {
		uint64_t now = bench_clock_ns(CLOCK_MONOTONIC);
		int n, k;

		if (!in_window && now >= win_start) {
			take(a, ksoftirqd, received, drops);
			in_window = true;
		}
		if (now >= win_end)
			break;
		for (i = 0; i < o.batch; i++) {
			msgs[i].msg_hdr.msg_control = ctl[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
		}
		n = recvmmsg(fd, msgs, o.batch, MSG_WAITFORONE, NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				continue;
			fprintf(stderr, PROG ": recvmmsg: %s\n", strerror(errno));
			return -1;
		}
		for (k = 0; k < n; k++) {
			drops = sk_drops_of(&msgs[k].msg_hdr, drops);
			bench_work(steps);
		}
		received += (uint64_t)n;
	}
	if (!in_window)
		take(a, ksoftirqd, received, drops);
	take(b, ksoftirqd, received, drops);
	return 0;
}

/* ---- report ---- */

static void
report(FILE *f, const struct sample *a, const struct sample *b, double steps_per_us,
       int ksoftirqd)
{
	double secs = (double)(b->t_ns - a->t_ns) / 1e9;
	unsigned long long ticks = 0;
	int i;

	for (i = 0; i < NB_ST; i++)
		ticks += b->cpu_ticks[i] - a->cpu_ticks[i];
	fprintf(f, "{\"cost_ns\": %" PRIu64 ", \"batch\": %u, \"cpu\": %d"
		", \"work_steps_per_us\": %.1f, \"seconds\": %.3f"
		", \"received\": %" PRIu64 ", \"received_pps\": %.1f"
		", \"sk_drops\": %" PRIu64 ", \"udp\": {\"InDatagrams\": %lld"
		", \"RcvbufErrors\": %lld, \"InErrors\": %lld}",
		o.cost_ns, o.batch, o.cpu, steps_per_us, secs,
		b->received - a->received, (double)(b->received - a->received) / secs,
		b->sk_drops - a->sk_drops, b->in_datagrams - a->in_datagrams,
		b->rcvbuf_errors - a->rcvbuf_errors, b->in_errors - a->in_errors);
	fprintf(f, ", \"softnet\": {\"processed\": %llu, \"backlog_drops\": %llu"
		", \"time_squeeze\": %llu}",
		b->processed - a->processed, b->backlog_drops - a->backlog_drops,
		b->time_squeeze - a->time_squeeze);
	fprintf(f, ", \"cpu_ticks\": {");
	for (i = 0; i < NB_ST; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", st_names[i],
			b->cpu_ticks[i] - a->cpu_ticks[i]);
	fprintf(f, "}, \"cpu_share\": {");
	for (i = 0; i < NB_ST; i++)
		fprintf(f, "%s\"%s\": %.4f", i ? ", " : "", st_names[i],
			ticks ? (double)(b->cpu_ticks[i] - a->cpu_ticks[i]) / (double)ticks : 0.0);
	fprintf(f, "}, \"ksoftirqd_pid\": %d, \"ksoftirqd_share\": %.4f"
		", \"receiver_share\": %.4f}\n", ksoftirqd,
		a->ksoftirqd_ns >= 0 && b->ksoftirqd_ns >= 0 ?
		(double)(b->ksoftirqd_ns - a->ksoftirqd_ns) / 1e9 / secs : -1.0,
		a->self_ns >= 0 && b->self_ns >= 0 ?
		(double)(b->self_ns - a->self_ns) / 1e9 / secs : -1.0);
}

/* ---- options ---- */

static void
usage(void)
{
	printf("Usage: " PROG " --bind IP:PORT --cpu N [options]\n"
	       "Receives UDP datagrams, spends --cost-ns of CPU on each; prints a JSON\n"
	       "object of what it got, the socket's drops and the split of CPU N.\n"
	       "  --bind IP:PORT    address to receive on (required)\n"
	       "  --cpu N           pin to CPU N, whose time is reported (required)\n"
	       "  --cost-ns NS      CPU work per datagram (default: 0)\n"
	       "  --batch N         datagrams per recvmmsg(), 1..%u; 1 is one recv() each\n"
	       "                    (default: %u)\n"
	       "  --rcvbuf BYTES    SO_RCVBUF (default: the kernel's, net.core.rmem_default)\n"
	       "  --warmup S        seconds before the measured window (default: 1)\n"
	       "  --duration S      seconds measured (default: 10)\n"
	       "  --json FILE       the JSON object here instead of stdout\n"
	       "  --help            this text\n",
	       MAX_BATCH, BATCH_DEFAULT);
}

static int
tool_option(int c, const char *arg)
{
	int ret = 0;

	switch (c) {
	case 'a':
		ret = bench_parse_ipv4_port("bind", arg, &o.addr);
		o.have_addr = ret == 0;
		break;
	case 'n':
		ret = bench_parse_u64("cost-ns", arg, 0, NS_PER_S, &o.cost_ns);
		break;
	case 'b':
		ret = bench_parse_u32("batch", arg, 1, MAX_BATCH, &o.batch);
		break;
	case 'r':
		ret = bench_parse_u32("rcvbuf", arg, 1, 1u << 30, &o.rcvbuf);
		break;
	case 'w':
		ret = bench_parse_u32("warmup", arg, 0, 3600, &o.warmup_s);
		break;
	case 't':
		ret = bench_parse_u32("duration", arg, 1, 86400, &o.duration_s);
		break;
	default:
		return 1;
	}
	return ret;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "bind", required_argument, NULL, 'a' },
		{ "cost-ns", required_argument, NULL, 'n' },
		{ "batch", required_argument, NULL, 'b' },
		{ "rcvbuf", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, 't' },
		BENCH_COMMON_OPTIONS,
	};

	if (bench_parse_args(argc, argv, lo, tool_option, usage, &o.cpu,
			     &o.json) != 0)
		return -1;
	if (!o.have_addr || o.cpu < 0) {
		fprintf(stderr, PROG ": --bind and --cpu are required; see --help\n");
		return -1;
	}
	return 0;
}

static int
open_socket(void)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = RCV_TIMEOUT_US };
	int one = 1, fd = socket(AF_INET, SOCK_DGRAM, 0);
	int rcvbuf = (int)o.rcvbuf;

	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    (o.rcvbuf != 0 &&
	     setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0)) {
		fprintf(stderr, PROG ": socket options: %s\n", strerror(errno));
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&o.addr, sizeof(o.addr)) != 0) {
		fprintf(stderr, PROG ": --bind %s:%u: %s\n", inet_ntoa(o.addr.sin_addr),
			ntohs(o.addr.sin_port), strerror(errno));
		return -1;
	}
	return fd;
}

int
main(int argc, char **argv)
{
	struct sample a, b;
	double steps_per_us;
	FILE *out;
	int fd, ksoftirqd;

	if (parse_args(argc, argv) != 0)
		return BENCH_EXIT_USAGE;
	if (bench_pin(o.cpu) != 0)
		return 1;
	ksoftirqd = find_ksoftirqd(o.cpu);
	if (ksoftirqd < 0)
		fprintf(stderr, PROG ": no ksoftirqd/%d in /proc: its share is -1\n", o.cpu);
	bench_catch_signals();
	fd = open_socket();
	if (fd < 0)
		return 1;
	steps_per_us = calibrate();
	/* The caller may start sending now: the socket is bound, the loop calibrated. */
	fprintf(stderr, PROG ": ready on %s:%u, CPU %d, %.0f work steps/us\n",
		inet_ntoa(o.addr.sin_addr), ntohs(o.addr.sin_port), o.cpu, steps_per_us);
	if (receive(fd, (uint64_t)(steps_per_us * (double)o.cost_ns / 1e3), &a, &b,
		    ksoftirqd) != 0)
		return 1;
	close(fd);
	out = bench_json_open(o.json);
	if (out == NULL)
		return 1;
	report(out, &a, &b, steps_per_us, ksoftirqd);
	bench_json_close(out);
	return 0;
}
