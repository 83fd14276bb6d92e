/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * udp-flood: the sender of the kernel lab's flood scenario (the UDP flood
 * of kernel commit 4cd13c21b207). Sends small datagrams to one address as
 * fast as sendmmsg() goes, or paced at --rate packets per second, for
 * --warmup + --duration seconds, and prints one JSON object: what it sent
 * over the measured window (after the warm-up), and send errors (ENOBUFS,
 * EAGAIN: the sender's own qdisc or socket said no).
 *
 * Pacing is a token bucket on CLOCK_MONOTONIC refilled before every batch:
 * a batch is as many packets as are due (at most --batch), so a paced run
 * sends steadily and never makes up for lost time in one burst larger than
 * a batch.
 */

#include <arpa/inet.h>
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

#define PROG "udp-flood"
#define NS_PER_S BENCH_NS_PER_S
#define MAX_BATCH 1024
#define MAX_PAYLOAD 1472		/* one 1500-byte frame */
/* The 4cd13c21b207 test: small datagrams, the packet rate is the load. */
#define PAYLOAD_DEFAULT 18
#define BATCH_DEFAULT 64
/* A paced sender sleeps when the next packet is further away than this. */
#define PACE_SLEEP_NS 50000ULL

struct opts {
	struct sockaddr_in dst;
	bool have_dst;
	uint32_t payload;
	uint64_t rate;			/* packets/s; 0: as fast as it goes */
	uint32_t batch;
	uint32_t warmup_s;
	uint32_t duration_s;
	int cpu;			/* -1: not pinned */
	const char *json;
};

static struct opts o = {
	.payload = PAYLOAD_DEFAULT,
	.batch = BATCH_DEFAULT,
	.warmup_s = 1,
	.duration_s = 10,
	.cpu = -1,
};

const char bench_prog[] = PROG;

struct counts {
	uint64_t sent;
	uint64_t errors;		/* packets refused: ENOBUFS, EAGAIN, ... */
	int last_errno;
};

static int
flood(int fd, struct counts *window)
{
	static struct mmsghdr msgs[MAX_BATCH];
	static struct iovec iov[MAX_BATCH];
	static uint8_t payload[MAX_PAYLOAD];
	struct counts all = { 0 }, at_start = { 0 };
	uint64_t start = bench_clock_ns(CLOCK_MONOTONIC);
	uint64_t win_start = start + (uint64_t)o.warmup_s * NS_PER_S;
	uint64_t win_end = win_start + (uint64_t)o.duration_s * NS_PER_S;
	uint64_t paced = 0;		/* packets due since start, paced runs */
	bool in_window = false;
	uint32_t i;

	memset(payload, 0xa5, sizeof(payload));
	for (i = 0; i < o.batch; i++) {
		iov[i].iov_base = payload;
		iov[i].iov_len = o.payload;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (!bench_stop) {
		uint64_t now = bench_clock_ns(CLOCK_MONOTONIC);
		uint32_t n = o.batch;
		int ret;

		if (!in_window && now >= win_start) {
			at_start = all;
			in_window = true;
		}
		if (now >= win_end)
			break;
		if (o.rate != 0) {
			uint64_t due = (now - start) * o.rate / NS_PER_S;

			if (due <= paced) {
				uint64_t next = start + (paced + 1) * NS_PER_S / o.rate;

				if (next - now > PACE_SLEEP_NS)
					bench_sleep_until(next);
				continue;
			}
			if (due - paced < n)
				n = (uint32_t)(due - paced);
		}
		ret = sendmmsg(fd, msgs, n, 0);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			if (errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED) {
				fprintf(stderr, PROG ": sendmmsg to %s:%u: %s\n",
					inet_ntoa(o.dst.sin_addr), ntohs(o.dst.sin_port),
					strerror(errno));
				return -1;
			}
			/* A refused packet is still one the pace has used up. */
			all.errors++;
			all.last_errno = errno;
			paced++;
			continue;
		}
		all.sent += (uint64_t)ret;
		paced += (uint64_t)ret;
	}
	if (!in_window)
		at_start = all;
	window->sent = all.sent - at_start.sent;
	window->errors = all.errors - at_start.errors;
	window->last_errno = all.last_errno;
	return 0;
}

static void
usage(void)
{
	printf("Usage: " PROG " --dst IP:PORT [options]\n"
	       "Sends UDP datagrams to IP:PORT with sendmmsg(), flat out or paced;\n"
	       "prints a JSON object of what was sent after the warm-up.\n"
	       "  --dst IP:PORT     destination (required)\n"
	       "  --size BYTES      UDP payload, 1..%u (default: %u)\n"
	       "  --rate PPS        packets per second; 0: as fast as it goes (default: 0)\n"
	       "  --batch N         datagrams per sendmmsg(), 1..%u (default: %u)\n"
	       "  --warmup S        seconds sent before the measured window (default: 1)\n"
	       "  --duration S      seconds measured (default: 10)\n"
	       "  --cpu N           pin to CPU N (default: not pinned)\n"
	       "  --json FILE       the JSON object here instead of stdout\n"
	       "  --help            this text\n",
	       MAX_PAYLOAD, PAYLOAD_DEFAULT, MAX_BATCH, BATCH_DEFAULT);
}

static int
tool_option(int c, const char *arg)
{
	int ret = 0;

	switch (c) {
	case 'd':
		ret = bench_parse_ipv4_port("dst", arg, &o.dst);
		o.have_dst = ret == 0;
		break;
	case 's':
		ret = bench_parse_u32("size", arg, 1, MAX_PAYLOAD, &o.payload);
		break;
	case 'r':
		ret = bench_parse_u64("rate", arg, 0, 100000000, &o.rate);
		break;
	case 'b':
		ret = bench_parse_u32("batch", arg, 1, MAX_BATCH, &o.batch);
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
		{ "dst", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "batch", required_argument, NULL, 'b' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, 't' },
		BENCH_COMMON_OPTIONS,
	};

	if (bench_parse_args(argc, argv, lo, tool_option, usage, &o.cpu,
			     &o.json) != 0)
		return -1;
	if (!o.have_dst) {
		fprintf(stderr, PROG ": --dst is required; see --help\n");
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct counts w;
	FILE *out;
	int fd;

	if (parse_args(argc, argv) != 0)
		return BENCH_EXIT_USAGE;
	if (o.cpu >= 0 && bench_pin(o.cpu) != 0)
		return 1;
	bench_catch_signals();
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&o.dst, sizeof(o.dst)) != 0) {
		fprintf(stderr, PROG ": socket to %s:%u: %s\n", inet_ntoa(o.dst.sin_addr),
			ntohs(o.dst.sin_port), strerror(errno));
		return 1;
	}
	if (flood(fd, &w) != 0)
		return 1;
	close(fd);
	out = bench_json_open(o.json);
	if (out == NULL)
		return 1;
	fprintf(out, "{\"payload\": %u, \"rate\": %" PRIu64 ", \"batch\": %u, \"cpu\": %d"
		", \"seconds\": %u, \"sent\": %" PRIu64 ", \"sent_pps\": %.1f"
		", \"send_errors\": %" PRIu64 ", \"last_error\": \"%s\"}\n",
		o.payload, o.rate, o.batch, o.cpu, o.duration_s, w.sent,
		(double)w.sent / o.duration_s, w.errors,
		w.errors ? strerror(w.last_errno) : "");
	bench_json_close(out);
	return 0;
}
