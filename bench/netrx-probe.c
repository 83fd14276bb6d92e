/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * netrx-probe: how long NET_RX of another CPU makes a packet wait, seen
 * from outside. The kernel has no stall counter of its own; an ICMP echo
 * request is answered by the receiving kernel inside NET_RX (icmp_rcv()),
 * with no task to schedule, so with the peer's receive path steered onto
 * one CPU (RPS) the echo's round trip, up to the kernel's receive stamp of
 * the reply (SO_TIMESTAMPNS), is that CPU's NET_RX wait plus a constant. Sends one echo request every --interval-us over a raw socket
 * and prints one JSON object: RTT percentiles, the maximum, the replies
 * slower than --threshold-ms (8 ms: the stall threshold of the patch's
 * tracker and of libsirq) and the requests that got no reply. Root only.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_tool.h"

#define PROG "netrx-probe"
#define NS_PER_S BENCH_NS_PER_S
#define NS_PER_MS UINT64_C(1000000)
#define NS_PER_US UINT64_C(1000)
/* A reply later than this is counted lost. */
#define LOST_AFTER_NS NS_PER_S

struct opts {
	struct sockaddr_in dst;
	bool have_dst;
	uint32_t interval_us;
	uint32_t threshold_ms;
	uint32_t duration_s;
	int cpu;
	const char *json;
};

static struct opts o = {
	.interval_us = 1000,
	.threshold_ms = 8,
	.duration_s = 10,
	.cpu = -1,
};

const char bench_prog[] = PROG;

/* The clock of SO_TIMESTAMPNS. */
static uint64_t
now_ns(void)
{
	return bench_clock_ns(CLOCK_REALTIME);
}

/* The Internet checksum (RFC 1071), bytewise: no aliasing of the header. */
static uint16_t
csum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] | b[i + 1] << 8);
	if (i < len)
		sum += b[i];
	while (sum >> 16)
		sum = (sum >> 16) + (sum & 0xffff);
	return (uint16_t)~sum;
}

/*
 * When the reply reached this host's stack: the kernel's receive stamp,
 * taken as the peer's NET_RX hands it to the veth (netif_rx() on the
 * peer's CPU), so the probe's own wake-up on a busy CPU is not in the RTT.
 */
static uint64_t
rx_stamp(struct msghdr *h)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(h); c != NULL; c = CMSG_NXTHDR(h, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
		}
	return now_ns();
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
pct_us(const uint64_t *v, size_t n, double q)
{
	return n ? (double)v[(size_t)(q * (double)(n - 1) + 0.5)] / 1e3 : 0.0;
}

static int
probe(int fd)
{
	uint64_t *sent_at, *rtt, start = now_ns(), next = start, end;
	uint64_t slow = 0;
	size_t nb_req, nb_rtt = 0, seq = 0;
	uint16_t id = (uint16_t)getpid();
	FILE *out;

	nb_req = (size_t)((uint64_t)o.duration_s * 1000000 / o.interval_us) + 1;
	sent_at = calloc(nb_req, sizeof(*sent_at));
	rtt = calloc(nb_req, sizeof(*rtt));
	if (sent_at == NULL || rtt == NULL) {
		fprintf(stderr, PROG ": out of memory for %zu requests\n", nb_req);
		return 1;
	}
	end = start + (uint64_t)o.duration_s * NS_PER_S;
	while (!bench_stop) {
		uint64_t now = now_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int wait_ms;

		if (now >= next && seq < nb_req && now < end) {
			struct icmphdr h = {
				.type = ICMP_ECHO,
				.un.echo.id = htons(id),
				.un.echo.sequence = htons((uint16_t)seq),
			};

			h.checksum = csum(&h, sizeof(h));
			sent_at[seq] = now;
			if (sendto(fd, &h, sizeof(h), 0, (struct sockaddr *)&o.dst,
				   sizeof(o.dst)) < 0 && errno != ENOBUFS) {
				fprintf(stderr, PROG ": sendto %s: %s\n",
					inet_ntoa(o.dst.sin_addr), strerror(errno));
				return 1;
			}
			seq++;
			next += (uint64_t)o.interval_us * NS_PER_US;
		}
		if (now >= end + LOST_AFTER_NS || (now >= end && nb_rtt == seq))
			break;
		wait_ms = next > now ? (int)((next - now) / NS_PER_MS) : 0;
		if (poll(&pfd, 1, wait_ms) > 0) {
			uint8_t buf[512];
			char ctl[CMSG_SPACE(sizeof(struct timespec))];
			struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
			struct msghdr mh = {
				.msg_iov = &iov, .msg_iovlen = 1,
				.msg_control = ctl, .msg_controllen = sizeof(ctl),
			};
			ssize_t n = recvmsg(fd, &mh, 0);
			const struct iphdr *ip = (const void *)buf;
			const struct icmphdr *r;
			uint64_t t = rx_stamp(&mh);
			uint16_t s;

			if (n < (ssize_t)sizeof(*ip) ||
			    n < (ssize_t)(ip->ihl * 4 + sizeof(*r)))
				continue;
			r = (const void *)(buf + ip->ihl * 4);
			s = ntohs(r->un.echo.sequence);
			if (r->type != ICMP_ECHOREPLY || ntohs(r->un.echo.id) != id ||
			    s >= seq || sent_at[s] == 0)
				continue;
			/* 16-bit sequence: at most 65536 requests in flight, plenty. */
			rtt[nb_rtt++] = t - sent_at[s];
			if (t - sent_at[s] >= (uint64_t)o.threshold_ms * NS_PER_MS)
				slow++;
			sent_at[s] = 0;
		}
	}
	qsort(rtt, nb_rtt, sizeof(*rtt), cmp_u64);
	out = bench_json_open(o.json);
	if (out == NULL)
		return 1;
	fprintf(out, "{\"interval_us\": %u, \"seconds\": %u, \"requests\": %zu"
		", \"replies\": %zu, \"lost\": %zu, \"threshold_ms\": %u"
		", \"slow\": %" PRIu64 ", \"slow_per_s\": %.3f"
		", \"rtt_us\": {\"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f"
		", \"p999\": %.1f, \"max\": %.1f}}\n",
		o.interval_us, o.duration_s, seq, nb_rtt, seq - nb_rtt,
		o.threshold_ms, slow, (double)slow / o.duration_s,
		pct_us(rtt, nb_rtt, 0.5), pct_us(rtt, nb_rtt, 0.9),
		pct_us(rtt, nb_rtt, 0.99), pct_us(rtt, nb_rtt, 0.999),
		pct_us(rtt, nb_rtt, 1.0));
	bench_json_close(out);
	free(sent_at);
	free(rtt);
	return 0;
}

static void
usage(void)
{
	printf("Usage: " PROG " --dst IP [options]\n"
	       "ICMP echo requests to IP every --interval-us; a JSON object of the RTTs,\n"
	       "those slower than --threshold-ms and the lost ones. Root only.\n"
	       "  --dst IP            the host whose NET_RX is probed (required)\n"
	       "  --interval-us US    between requests, 100..1000000 (default: 1000)\n"
	       "  --threshold-ms MS   an RTT at least this long is slow (default: 8)\n"
	       "  --duration S        seconds of requests (default: 10)\n"
	       "  --cpu N             pin to CPU N (default: not pinned)\n"
	       "  --json FILE         the JSON object here instead of stdout\n"
	       "  --help              this text\n");
}

static int
tool_option(int c, const char *arg)
{
	int ret = 0;

	switch (c) {
	case 'd':
		if (inet_pton(AF_INET, arg, &o.dst.sin_addr) != 1) {
			fprintf(stderr, PROG ": --dst: bad address '%s'\n", arg);
			return -1;
		}
		o.dst.sin_family = AF_INET;
		o.have_dst = true;
		break;
	case 'i':
		ret = bench_parse_u32("interval-us", arg, 100, 1000000, &o.interval_us);
		break;
	case 'T':
		ret = bench_parse_u32("threshold-ms", arg, 1, 60000, &o.threshold_ms);
		break;
	case 't':
		ret = bench_parse_u32("duration", arg, 1, 3600, &o.duration_s);
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
		{ "interval-us", required_argument, NULL, 'i' },
		{ "threshold-ms", required_argument, NULL, 'T' },
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
	int fd, one = 1;

	if (parse_args(argc, argv) != 0)
		return BENCH_EXIT_USAGE;
	if (o.cpu >= 0 && bench_pin(o.cpu) != 0)
		return 1;
	bench_catch_signals();
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (fd < 0) {
		fprintf(stderr, PROG ": raw ICMP socket: %s (root only)\n", strerror(errno));
		return 1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) != 0) {
		fprintf(stderr, PROG ": SO_TIMESTAMPNS: %s\n", strerror(errno));
		return 1;
	}
	return probe(fd);
}
