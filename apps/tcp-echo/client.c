/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tcp-echo-client: drives an echo server from the kernel's TCP stack and
 * checks every byte. N connections at once, each sending messages of
 * random size (seeded) one at a time and waiting for the whole echo,
 * which gives the request RTT; then a FIN, and the server's FIN is
 * expected back. Prints one JSON object: counts, throughput, RTT
 * percentiles and the TCP counters of this network namespace
 * (/proc/net/snmp, /proc/net/netstat) over the run, retransmissions
 * included. Exit 0 only if every byte came back, in order.
 *
 * --serve turns it into a kernel echo server, the yardstick of the
 * benchmark.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "app_random.h"

#define PROG "tcp-echo-client"
#define EXIT_USAGE 2
#define IO_CHUNK 65536
#define MAX_EVENTS 64
#define NS_PER_S 1000000000ULL
#define NS_PER_US 1000ULL
#define LISTEN_BACKLOG 1024
#define MAX_CONNS 10000
#define MAX_SIZE (64u << 20)

struct opts {
	struct sockaddr_in addr;
	bool have_addr;
	unsigned int conns;
	unsigned int messages;		/* per connection; 0: --duration */
	unsigned int duration_s;
	uint32_t min_size;
	uint32_t max_size;
	uint64_t seed;
	unsigned int timeout_s;		/* of one message, and of connect */
	unsigned int gap_us;		/* between a connection's messages */
	const char *json;
	bool serve;
};

static struct opts o = {
	.conns = 8,
	.messages = 10,
	.min_size = 1,
	.max_size = 65536,
	.seed = 1,
	.timeout_s = 30,
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void
fill(uint64_t *s, uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = app_random(s);

		memcpy(buf + i, &v, 8);
	}
	for (; i < len; i++)
		buf[i] = (uint8_t)app_random(s);
}

/* TCP counters of this namespace. */
#define NB_COUNTERS 5
static const char *const counter_names[NB_COUNTERS] = {
	"OutSegs", "RetransSegs", "TCPTimeouts", "TCPLossProbes",
	"TCPSpuriousRTOs",
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
tcp_counters(long long *c)
{
	unsigned int i;

	for (i = 0; i < NB_COUNTERS; i++) {
		c[i] = proc_counter("/proc/net/snmp", "Tcp", counter_names[i]);
		if (c[i] < 0)
			c[i] = proc_counter("/proc/net/netstat", "TcpExt",
					    counter_names[i]);
	}
}

static int
set_nonblock_nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
		return -1;
	return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* ---- client ---- */

enum conn_state { CONNECTING, SENDING, GAP, DRAINING, DONE };

struct conn {
	int fd;
	unsigned int id;
	enum conn_state state;
	uint64_t rng;
	uint8_t *msg;
	uint32_t size, sent, recvd;
	uint64_t t0;			/* message start, or connect start */
	uint64_t next_ns;		/* GAP: when to send the next */
	unsigned int done;
	uint32_t events;		/* registered with epoll */
};

struct results {
	uint64_t messages, bytes, errors, mismatches;
	uint64_t *rtt;
	size_t nb_rtt, cap_rtt;
};

static struct results res;

static void
fail(struct conn *c, const char *what, int err)
{
	fprintf(stderr, PROG ": connection %u: %s%s%s (message %u, %u/%u bytes back)\n",
		c->id, what, err ? ": " : "", err ? strerror(err) : "", c->done,
		c->recvd, c->size);
	res.errors++;
	close(c->fd);
	c->fd = -1;
	c->state = DONE;
}

static void
rtt_add(uint64_t ns)
{
	if (res.nb_rtt == res.cap_rtt) {
		size_t cap = res.cap_rtt ? res.cap_rtt * 2 : 4096;
		uint64_t *r = realloc(res.rtt, cap * sizeof(*r));

		if (r == NULL)
			return;
		res.rtt = r;
		res.cap_rtt = cap;
	}
	res.rtt[res.nb_rtt++] = ns;
}

static void
want(int ep, struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	if (c->events == events)
		return;
	epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
	c->events = events;
}

static void
next_message(int ep, struct conn *c, uint64_t now, uint64_t end_ns)
{
	bool more = o.messages != 0 ? c->done < o.messages :
		now < end_ns && !stop;

	if (!more) {
		/* FIN; the server's FIN must follow its last echo. */
		shutdown(c->fd, SHUT_WR);
		c->state = DRAINING;
		want(ep, c, EPOLLIN);
		return;
	}
	c->size = o.min_size + (uint32_t)(app_random(&c->rng) %
					  (o.max_size - o.min_size + 1));
	fill(&c->rng, c->msg, c->size);
	c->sent = c->recvd = 0;
	c->t0 = now;
	c->state = SENDING;
	want(ep, c, EPOLLIN | EPOLLOUT);
}

static void
on_writable(int ep, struct conn *c)
{
	ssize_t n;

	if (c->state == CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err != 0) {
			fail(c, "connect", err);
			return;
		}
		next_message(ep, c, now_ns(), UINT64_MAX);
		return;
	}
	if (c->state != SENDING || c->sent == c->size) {
		want(ep, c, EPOLLIN);
		return;
	}
	n = send(c->fd, c->msg + c->sent, c->size - c->sent, MSG_NOSIGNAL);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			fail(c, "send", errno);
		return;
	}
	c->sent += (uint32_t)n;
	if (c->sent == c->size)
		want(ep, c, EPOLLIN);
}

static void
on_readable(int ep, struct conn *c, uint64_t end_ns)
{
	static uint8_t buf[IO_CHUNK];
	ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
	uint64_t now;

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			fail(c, "recv", errno);
		return;
	}
	if (n == 0) {
		if (c->state == DRAINING) {
			close(c->fd);
			c->fd = -1;
			c->state = DONE;
		} else {
			fail(c, "the server closed the connection early", 0);
		}
		return;
	}
	if (c->state != SENDING || c->recvd + (uint32_t)n > c->sent) {
		fail(c, "bytes that were never sent came back", 0);
		return;
	}
	if (memcmp(buf, c->msg + c->recvd, (size_t)n) != 0) {
		res.mismatches++;
		fail(c, "the echo differs from what was sent", 0);
		return;
	}
	c->recvd += (uint32_t)n;
	if (c->recvd < c->size)
		return;
	now = now_ns();
	rtt_add(now - c->t0);
	res.messages++;
	res.bytes += c->size;
	c->done++;
	if (o.gap_us != 0) {
		c->state = GAP;
		c->next_ns = now + o.gap_us * NS_PER_US;
		want(ep, c, EPOLLIN);
	} else {
		next_message(ep, c, now, end_ns);
	}
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
pct_us(double q)
{
	size_t i;

	if (res.nb_rtt == 0)
		return 0;
	i = (size_t)(q * (double)(res.nb_rtt - 1) + 0.5);
	return (double)res.rtt[i] / 1e3;
}

static void
report(FILE *f, double secs, const long long *before, const long long *after)
{
	double mean = 0;
	unsigned int i;
	size_t k;

	qsort(res.rtt, res.nb_rtt, sizeof(*res.rtt), cmp_u64);
	for (k = 0; k < res.nb_rtt; k++)
		mean += (double)res.rtt[k] / 1e3;
	if (res.nb_rtt != 0)
		mean /= (double)res.nb_rtt;
	fprintf(f, "{\"conns\": %u, \"messages\": %" PRIu64 ", \"bytes\": %" PRIu64
		", \"errors\": %" PRIu64 ", \"mismatches\": %" PRIu64
		", \"elapsed_s\": %.3f, \"echo_mbit_s\": %.3f, \"messages_per_s\": %.1f"
		", \"rtt_us\": {\"mean\": %.1f, \"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f"
		", \"p999\": %.1f, \"max\": %.1f}, \"tcp\": {",
		o.conns, res.messages, res.bytes, res.errors, res.mismatches, secs,
		secs > 0 ? (double)res.bytes * 8 / secs / 1e6 : 0.0,
		secs > 0 ? (double)res.messages / secs : 0.0, mean, pct_us(0.5),
		pct_us(0.9), pct_us(0.99), pct_us(0.999), pct_us(1.0));
	for (i = 0; i < NB_COUNTERS; i++)
		fprintf(f, "%s\"%s\": %lld", i ? ", " : "", counter_names[i],
			before[i] < 0 || after[i] < 0 ? -1 : after[i] - before[i]);
	fprintf(f, "}}\n");
}

static int
run_client(void)
{
	struct epoll_event evs[MAX_EVENTS];
	long long before[NB_COUNTERS], after[NB_COUNTERS];
	struct conn *conns = calloc(o.conns, sizeof(*conns));
	uint64_t start, end_ns;
	unsigned int i, live;
	int ep = epoll_create1(0);
	FILE *out = stdout;

	if (conns == NULL || ep < 0) {
		perror(PROG);
		return 1;
	}
	tcp_counters(before);
	start = now_ns();
	end_ns = o.messages != 0 ? UINT64_MAX :
		start + (uint64_t)o.duration_s * NS_PER_S;
	for (i = 0; i < o.conns; i++) {
		struct conn *c = &conns[i];
		struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = c };

		c->id = i;
		c->rng = o.seed * 0x100000001b3ULL + i;
		c->msg = malloc(o.max_size);
		c->fd = socket(AF_INET, SOCK_STREAM, 0);
		if (c->msg == NULL || c->fd < 0 || set_nonblock_nodelay(c->fd) != 0) {
			perror(PROG);
			return 1;
		}
		c->state = CONNECTING;
		c->t0 = start;
		c->events = EPOLLOUT;
		if (connect(c->fd, (struct sockaddr *)&o.addr, sizeof(o.addr)) != 0 &&
		    errno != EINPROGRESS) {
			fail(c, "connect", errno);
			continue;
		}
		epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
	}
	for (;;) {
		uint64_t now = now_ns(), wake = UINT64_MAX;
		int n, k, timeout_ms;

		live = 0;
		for (i = 0; i < o.conns; i++) {
			struct conn *c = &conns[i];

			if (c->state == DONE)
				continue;
			if (c->state == GAP && now >= c->next_ns)
				next_message(ep, c, now, end_ns);
			if (c->state == GAP && c->next_ns < wake)
				wake = c->next_ns;
			if (c->state != GAP &&
			    now - c->t0 > (uint64_t)o.timeout_s * NS_PER_S) {
				fail(c, "no complete echo within --timeout", 0);
				continue;
			}
			live++;
		}
		if (live == 0)
			break;
		timeout_ms = wake == UINT64_MAX ? 100 :
			(int)((wake > now ? wake - now : 0) / 1000000);
		n = epoll_wait(ep, evs, MAX_EVENTS, timeout_ms > 100 ? 100 : timeout_ms);
		for (k = 0; k < n; k++) {
			struct conn *c = evs[k].data.ptr;

			if (c->state == DONE)
				continue;
			if (evs[k].events & (EPOLLOUT | EPOLLERR))
				on_writable(ep, c);
			if (c->state != DONE &&
			    (evs[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
				on_readable(ep, c, end_ns);
		}
	}
	tcp_counters(after);
	if (o.json != NULL) {
		out = fopen(o.json, "w");
		if (out == NULL) {
			fprintf(stderr, PROG ": --json %s: %s\n", o.json,
				strerror(errno));
			return 1;
		}
	}
	report(out, (double)(now_ns() - start) / 1e9, before, after);
	if (out != stdout)
		fclose(out);
	for (i = 0; i < o.conns; i++)
		free(conns[i].msg);
	free(conns);
	free(res.rtt);
	close(ep);
	return res.errors == 0 && res.mismatches == 0 ? 0 : 1;
}

/* ---- kernel echo server ---- */

struct peer {
	int fd;
	uint8_t buf[IO_CHUNK];
	size_t len, off;		/* received, not yet echoed */
	bool eof;
};

static void
peer_close(int ep, struct peer *p)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, p->fd, NULL);
	close(p->fd);
	free(p);
}

/* Echo what is pending, then read more only once it is all gone. */
static void
peer_io(int ep, struct peer *p)
{
	struct epoll_event ev = { .data.ptr = p };

	for (;;) {
		ssize_t n;

		if (p->off < p->len) {
			n = send(p->fd, p->buf + p->off, p->len - p->off,
				 MSG_NOSIGNAL);
			if (n < 0 && errno == EAGAIN)
				break;
			if (n < 0) {
				peer_close(ep, p);
				return;
			}
			p->off += (size_t)n;
			continue;
		}
		if (p->eof) {
			peer_close(ep, p);
			return;
		}
		n = recv(p->fd, p->buf, sizeof(p->buf), 0);
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			if (n < 0) {
				peer_close(ep, p);
				return;
			}
			p->eof = true;
			continue;
		}
		p->len = (size_t)n;
		p->off = 0;
	}
	ev.events = p->off < p->len ? EPOLLOUT : EPOLLIN;
	epoll_ctl(ep, EPOLL_CTL_MOD, p->fd, &ev);
}

static int
run_server(void)
{
	struct epoll_event evs[MAX_EVENTS], ev = { .events = EPOLLIN };
	uint64_t end = o.duration_s ? now_ns() + o.duration_s * NS_PER_S :
		UINT64_MAX;
	int one = 1, ep, lfd;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ep = epoll_create1(0);
	if (lfd < 0 || ep < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(lfd, (struct sockaddr *)&o.addr, sizeof(o.addr)) != 0 ||
	    listen(lfd, LISTEN_BACKLOG) != 0) {
		fprintf(stderr, PROG ": --serve %s:%u: %s\n",
			inet_ntoa(o.addr.sin_addr), ntohs(o.addr.sin_port),
			strerror(errno));
		return 1;
	}
	fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
	ev.data.ptr = NULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	printf(PROG ": serving %s:%u\n", inet_ntoa(o.addr.sin_addr),
	       ntohs(o.addr.sin_port));
	fflush(stdout);
	while (!stop && now_ns() < end) {
		int n = epoll_wait(ep, evs, MAX_EVENTS, 100), k;

		for (k = 0; k < n; k++) {
			struct peer *p = evs[k].data.ptr;
			int fd;

			if (p != NULL) {
				peer_io(ep, p);
				continue;
			}
			while ((fd = accept(lfd, NULL, NULL)) >= 0) {
				p = calloc(1, sizeof(*p));
				if (p == NULL || set_nonblock_nodelay(fd) != 0) {
					close(fd);
					free(p);
					continue;
				}
				p->fd = fd;
				ev.events = EPOLLIN;
				ev.data.ptr = p;
				epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
			}
		}
	}
	close(lfd);
	close(ep);
	return 0;
}

/* ---- options ---- */

static void
usage(void)
{
	printf("Usage: " PROG " --addr IP [options]\n"
	       "  --addr IP          server address (required)\n"
	       "  --port N           server port (default: 7)\n"
	       "  --conns N          concurrent connections (default: 8)\n"
	       "  --messages N       messages per connection, then FIN (default: 10)\n"
	       "  --duration S       instead of --messages: send for S seconds\n"
	       "  --min-size BYTES   smallest message (default: 1)\n"
	       "  --max-size BYTES   largest message (default: 65536)\n"
	       "  --gap-us US        pause between a connection's messages (default: 0)\n"
	       "  --seed N           sizes and payloads (default: 1)\n"
	       "  --timeout S        longest wait for one echo (default: 30)\n"
	       "  --json FILE        results here instead of stdout\n"
	       "  --serve            be a kernel echo server on --addr/--port instead\n"
	       "  --help             this text\n");
}

static int
parse_u32(const char *name, const char *v, uint32_t min, uint32_t max,
	  uint32_t *out)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || *v == '\0' || *v == '-' ||
	    n < min || n > max) {
		fprintf(stderr, PROG ": --%s: bad value '%s' (%u..%u)\n", name,
			v, min, max);
		return -1;
	}
	*out = (uint32_t)n;
	return 0;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "conns", required_argument, NULL, 'c' },
		{ "messages", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "min-size", required_argument, NULL, 'n' },
		{ "max-size", required_argument, NULL, 'x' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", required_argument, NULL, 'j' },
		{ "serve", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t v, port = 7;
	int c, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1 && ret == 0) {
		switch (c) {
		case 'a':
			if (inet_pton(AF_INET, optarg, &o.addr.sin_addr) != 1) {
				fprintf(stderr, PROG ": --addr: bad address '%s'\n",
					optarg);
				return -1;
			}
			o.have_addr = true;
			break;
		case 'p':
			ret = parse_u32("port", optarg, 1, UINT16_MAX, &port);
			break;
		case 'c':
			ret = parse_u32("conns", optarg, 1, MAX_CONNS, &o.conns);
			break;
		case 'm':
			ret = parse_u32("messages", optarg, 0, UINT32_MAX, &o.messages);
			break;
		case 'd':
			ret = parse_u32("duration", optarg, 1, 86400, &o.duration_s);
			o.messages = 0;
			break;
		case 'n':
			ret = parse_u32("min-size", optarg, 1, MAX_SIZE, &o.min_size);
			break;
		case 'x':
			ret = parse_u32("max-size", optarg, 1, MAX_SIZE, &o.max_size);
			break;
		case 'g':
			ret = parse_u32("gap-us", optarg, 0, 10000000, &o.gap_us);
			break;
		case 's':
			ret = parse_u32("seed", optarg, 0, UINT32_MAX, &v);
			o.seed = v;
			break;
		case 't':
			ret = parse_u32("timeout", optarg, 1, 3600, &o.timeout_s);
			break;
		case 'j':
			o.json = optarg;
			break;
		case 'S':
			o.serve = true;
			break;
		case 'h':
			usage();
			exit(0);
		default:
			fprintf(stderr, PROG ": bad option '%s'; see --help\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (ret != 0)
		return -1;
	if (!o.have_addr) {
		fprintf(stderr, PROG ": --addr is required\n");
		return -1;
	}
	if (o.min_size > o.max_size) {
		fprintf(stderr, PROG ": --min-size %u is above --max-size %u\n",
			o.min_size, o.max_size);
		return -1;
	}
	if (o.messages == 0 && o.duration_s == 0) {
		fprintf(stderr, PROG ": --messages 0 needs --duration\n");
		return -1;
	}
	o.addr.sin_family = AF_INET;
	o.addr.sin_port = htons((uint16_t)port);
	return 0;
}

int
main(int argc, char **argv)
{
	if (parse_args(argc, argv) != 0)
		return EXIT_USAGE;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	return o.serve ? run_server() : run_client();
}
