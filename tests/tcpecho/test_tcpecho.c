/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Functional tests of apps/tcp-echo against the kernel's own TCP stack.
 *
 * Each test makes a network namespace of its own, runs tcp-echo inside it
 * with a net_tap port (so the tap interface is born in the namespace),
 * moves itself into the namespace (setns), gives the kernel side of the
 * tap an address and a MAC of its own (net_tap gives both sides the same
 * one), and talks to the server from there: ICMP echo and ARP from this
 * process, TCP from tcp-echo-client. The fixture's fini stops the server
 * and deletes the namespace whether the test passed or not.
 *
 * meson passes TCP_ECHO and TCP_ECHO_CLIENT in the environment.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#define ECHO_PORT 7
#define SERVER_HOST 1			/* 10.<net>.0.1: tcp-echo */
#define CLIENT_HOST 2			/* 10.<net>.0.2: the kernel */
#define SPOOF_HOST 3			/* 10.<net>.0.3: nobody */
#define KERNEL_MAC "02:00:00:00:00:02"
#define TAP_WAIT_MS 20000		/* EAL start under ASan is slow */
#define PING_TRIES 20
#define PING_WAIT_MS 500
#define STOP_GRACE_MS 10000
/* The concurrent test: every byte of every message compared. */
#define CONNS 16
#define MESSAGES 3
#define MAX_MESSAGE (1u << 20)
#define CLIENT_TIMEOUT_S "20"
/* The malformed-input test. */
#define RANDOM_FRAMES 2000
#define MARTIAN_FRAMES 64		/* IPv6, from us, from/to loopback */
#define ETHERTYPE_IPV6_NUM 0x86dd
#define FRAME_MAX 1514
#define INJECT_PACE_FRAMES 32		/* then 1 ms: far below the tap's 500 */

struct env {
	char ns[32];
	char tap[IFNAMSIZ];
	char prefix[48];
	char report[96];
	char log[96];
	unsigned int net;		/* second octet of 10.x.0.0/24 */
	pid_t server;
	uint8_t server_mac[ETH_ALEN];
	uint8_t kernel_mac[ETH_ALEN];
	int ifindex;
};

static struct env env;

static int
sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static const char *
need_env(const char *name)
{
	const char *v = getenv(name);

	cr_assert(v != NULL && v[0] != '\0', "%s is not set (run through meson test)",
		  name);
	return v;
}

static void
ip_of(unsigned int host, char *buf, size_t len)
{
	snprintf(buf, len, "10.%u.0.%u", env.net, host);
}

static void
msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Run @argv to its end; its exit code (128 + signal if killed). */
static int
run(char *const argv[])
{
	pid_t pid = fork();
	int st;

	cr_assert(pid >= 0);
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
start_server(void)
{
	char ip[32], vdev[64], prefix[64], report[128];
	const char *bin = need_env("TCP_ECHO");

	ip_of(SERVER_HOST, ip, sizeof(ip));
	strcat(ip, "/24");
	snprintf(vdev, sizeof(vdev), "--vdev=net_tap0,iface=%s", env.tap);
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", env.prefix);
	snprintf(report, sizeof(report), "--report=%s", env.report);
	env.server = fork();
	cr_assert(env.server >= 0);
	if (env.server == 0) {
		char *argv[] = {
			(char *)"ip", (char *)"netns", (char *)"exec", env.ns,
			(char *)bin, (char *)"-l", (char *)"1",
			(char *)"--no-huge", (char *)"-m", (char *)"256",
			(char *)"--no-pci", prefix, vdev, (char *)"--",
			(char *)"--ip", ip, (char *)"--port", (char *)"7",
			report, (char *)"-T", (char *)"0", NULL,
		};
		int fd = open(env.log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		/* Never outlive the test, even one killed by its timeout. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp("ip", argv);
		_exit(127);
	}
}

static void
enter_ns(void)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/var/run/netns/%s", env.ns);
	fd = open(path, O_RDONLY);
	cr_assert(fd >= 0, "open %s: %s", path, strerror(errno));
	cr_assert(setns(fd, CLONE_NEWNET) == 0, "setns: %s", strerror(errno));
	close(fd);
}

static bool
server_alive(void)
{
	return env.server > 0 && waitpid(env.server, NULL, WNOHANG) == 0;
}

static void
get_mac(const char *ifname, uint8_t *mac)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	cr_assert(fd >= 0 && ioctl(fd, SIOCGIFHWADDR, &ifr) == 0);
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	close(fd);
}

/*
 * The DPDK port's MAC, from the line tcp-echo prints once its stack is up.
 * Not the tap's own address at creation: net_tap gives the kernel side the
 * port's MAC just after the interface appears, so an early read can see the
 * kernel's random one (the test failed that way about once in 20 runs).
 */
static void
wait_server_mac(void)
{
	unsigned int waited = 0, m[ETH_ALEN];
	char line[512];
	int i;

	for (;;) {
		FILE *f = fopen(env.log, "r");
		bool found = false;

		while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL) {
			const char *p = strstr(line, ", MAC ");

			found = p != NULL &&
				sscanf(p, ", MAC %x:%x:%x:%x:%x:%x", &m[0], &m[1],
				       &m[2], &m[3], &m[4], &m[5]) == ETH_ALEN;
		}
		if (f != NULL)
			fclose(f);
		if (found)
			break;
		cr_assert(server_alive() && waited < TAP_WAIT_MS,
			  "tcp-echo did not print its port's MAC; see %s", env.log);
		msleep(50);
		waited += 50;
	}
	for (i = 0; i < ETH_ALEN; i++)
		env.server_mac[i] = (uint8_t)m[i];
}

/* Namespace, server, and the kernel side of its tap configured. */
static void
setup(void)
{
	unsigned int waited = 0;
	char ip[32];

	memset(&env, 0, sizeof(env));
	env.net = 100 + (unsigned int)getpid() % 150;
	snprintf(env.ns, sizeof(env.ns), "tcpecho%d", getpid());
	snprintf(env.tap, sizeof(env.tap), "tet%d", getpid() % 1000000);
	snprintf(env.prefix, sizeof(env.prefix), "tcpecho-%d", getpid());
	snprintf(env.report, sizeof(env.report), "/tmp/tcpecho-%d.json", getpid());
	snprintf(env.log, sizeof(env.log), "/tmp/tcpecho-%d.log", getpid());
	sh("ip netns del %s 2>/dev/null", env.ns);
	cr_assert(sh("ip netns add %s", env.ns) == 0, "ip netns add %s", env.ns);
	start_server();
	enter_ns();
	while ((env.ifindex = (int)if_nametoindex(env.tap)) == 0) {
		cr_assert(server_alive() && waited < TAP_WAIT_MS,
			  "tcp-echo did not create %s in %s; see %s", env.tap,
			  env.ns, env.log);
		msleep(50);
		waited += 50;
	}
	wait_server_mac();
	ip_of(CLIENT_HOST, ip, sizeof(ip));
	/* We are in the namespace: so are the commands we run. */
	cr_assert(sh("ip link set lo up && ip link set %s address %s && "
		     "ip addr add %s/24 dev %s && ip link set %s up", env.tap,
		     KERNEL_MAC, ip, env.tap, env.tap) == 0);
	get_mac(env.tap, env.kernel_mac);
}

/* SIGINT, then the exit code (SIGKILL after the grace period: fails). */
static int
stop_server(void)
{
	unsigned int waited = 0;
	int st;

	if (env.server <= 0)
		return -1;
	kill(env.server, SIGINT);
	while (waitpid(env.server, &st, WNOHANG) == 0) {
		if (waited >= STOP_GRACE_MS) {
			kill(env.server, SIGKILL);
			waitpid(env.server, &st, 0);
			env.server = 0;
			return -1;
		}
		msleep(50);
		waited += 50;
	}
	env.server = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
teardown(void)
{
	if (env.server > 0) {
		kill(env.server, SIGKILL);
		waitpid(env.server, NULL, 0);
	}
	if (env.ns[0] != '\0')
		sh("ip netns del %s", env.ns);
	if (env.prefix[0] != '\0')
		sh("rm -rf /var/run/dpdk/%s", env.prefix);
	unlink(env.report);
	unlink(env.log);
}

static uint16_t
csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static uint16_t
csum(const void *data, size_t len)
{
	return htons((uint16_t)~csum_add(0, data, len));
}

/* ICMP echo to the server from this namespace; true if it answered. */
static bool
ping_server(void)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct timeval tv = { 0, PING_WAIT_MS * 1000 };
	char ip[32];
	int fd, i;

	ip_of(SERVER_HOST, ip, sizeof(ip));
	inet_pton(AF_INET, ip, &to.sin_addr);
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	cr_assert(fd >= 0, "raw ICMP socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (i = 0; i < PING_TRIES; i++) {
		uint8_t req[64] = { 0 }, rep[1500];
		struct icmphdr *h = (struct icmphdr *)req;
		ssize_t n;

		h->type = ICMP_ECHO;
		h->un.echo.id = htons((uint16_t)getpid());
		h->un.echo.sequence = htons((uint16_t)i);
		memset(req + sizeof(*h), 0xa5, sizeof(req) - sizeof(*h));
		h->checksum = csum(req, sizeof(req));
		sendto(fd, req, sizeof(req), 0, (struct sockaddr *)&to, sizeof(to));
		while ((n = recv(fd, rep, sizeof(rep), 0)) > 0) {
			const struct iphdr *iph = (const struct iphdr *)rep;
			const struct icmphdr *r = (const void *)(rep + iph->ihl * 4);

			if (iph->saddr == to.sin_addr.s_addr &&
			    r->type == ICMP_ECHOREPLY &&
			    r->un.echo.id == h->un.echo.id &&
			    memcmp(rep + iph->ihl * 4 + sizeof(*r),
				   req + sizeof(*h), sizeof(req) - sizeof(*h)) == 0) {
				close(fd);
				return true;
			}
		}
	}
	close(fd);
	return false;
}

/* The MAC the kernel learnt for the server by ARP, from /proc/net/arp. */
static bool
arp_entry(uint8_t *mac)
{
	char line[256], ip[32], want[32];
	unsigned int m[ETH_ALEN], flags;
	bool found = false;
	FILE *f = fopen("/proc/net/arp", "r");
	int i;

	ip_of(SERVER_HOST, want, sizeof(want));
	cr_assert(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%31s %*s %x %x:%x:%x:%x:%x:%x", ip, &flags,
			   &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 8 &&
		    strcmp(ip, want) == 0 && (flags & 0x2) != 0) {
			for (i = 0; i < ETH_ALEN; i++)
				mac[i] = (uint8_t)m[i];
			found = true;
		}
	fclose(f);
	return found;
}

/* tcp-echo-client against the server; its JSON, or fails the test. */
static json_t *
run_client(unsigned int conns, unsigned int messages, unsigned int max_size,
	   unsigned int seed)
{
	char ip[32], c[16], m[16], x[16], s[16], json[96];
	char *argv[] = {
		(char *)need_env("TCP_ECHO_CLIENT"), (char *)"--addr", ip,
		(char *)"--conns", c, (char *)"--messages", m,
		(char *)"--max-size", x, (char *)"--seed", s,
		(char *)"--timeout", (char *)CLIENT_TIMEOUT_S, (char *)"--json",
		json, NULL,
	};
	json_error_t err;
	json_t *r;
	int rc;

	ip_of(SERVER_HOST, ip, sizeof(ip));
	snprintf(c, sizeof(c), "%u", conns);
	snprintf(m, sizeof(m), "%u", messages);
	snprintf(x, sizeof(x), "%u", max_size);
	snprintf(s, sizeof(s), "%u", seed);
	snprintf(json, sizeof(json), "/tmp/tcpecho-client-%d.json", getpid());
	rc = run(argv);
	r = json_load_file(json, 0, &err);
	unlink(json);
	cr_assert(rc == 0, "tcp-echo-client exited %d; server log %s", rc,
		  env.log);
	cr_assert(r != NULL, "client JSON: %s", err.text);
	return r;
}

static uint64_t
u64(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	cr_assert(json_is_integer(v), "no integer '%s' in the JSON", key);
	return (uint64_t)json_integer_value(v);
}

/* Stop the server, check its exit and its report; returns the report. */
static json_t *
stop_and_report(void)
{
	json_error_t err;
	json_t *r;
	int rc = stop_server();

	cr_assert(rc == 0, "tcp-echo exited %d after SIGINT; log %s", rc, env.log);
	r = json_load_file(env.report, 0, &err);
	cr_assert(r != NULL, "report %s: %s", env.report, err.text);
	cr_expect_eq(u64(r, "mbufs_in_use"), 0, "no mbuf leaked");
	cr_expect_eq(u64(json_object_get(r, "echo"), "conns_active"), 0);
	return r;
}

TestSuite(tcpecho, .init = setup, .fini = teardown, .timeout = 60);

Test(tcpecho, answers_arp_and_ping_from_the_kernel)
{
	uint8_t mac[ETH_ALEN];

	cr_assert(ping_server(), "no ICMP echo reply from tcp-echo; log %s",
		  env.log);
	cr_assert(arp_entry(mac), "the kernel has no complete ARP entry for the server");
	cr_expect_arr_eq(mac, env.server_mac, ETH_ALEN,
			 "ARP resolved the server to the DPDK port's MAC");
	json_decref(stop_and_report());
}

Test(tcpecho, echoes_every_byte_of_concurrent_connections)
{
	json_t *c, *r, *echo;
	uint64_t bytes;

	c = run_client(CONNS, MESSAGES, MAX_MESSAGE, (unsigned int)getpid());
	cr_expect_eq(u64(c, "messages"), CONNS * MESSAGES);
	cr_expect_eq(u64(c, "mismatches"), 0);
	cr_expect_eq(u64(c, "errors"), 0);
	bytes = u64(c, "bytes");
	r = stop_and_report();
	echo = json_object_get(r, "echo");
	cr_expect_eq(u64(echo, "conns_accepted"), CONNS);
	cr_expect_eq(u64(echo, "conns_closed"), CONNS,
		     "every client FIN answered by the server's FIN");
	cr_expect_eq(u64(echo, "bytes_echoed"), bytes);
	json_decref(c);
	json_decref(r);
}

/* ---- malformed input ---- */

static uint64_t rng_state;

static uint64_t
rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void
rnd_bytes(uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)rnd();
}

struct injector {
	int fd;
	struct sockaddr_ll to;
	uint64_t sent;
};

/*
 * Paced: a tap's queue toward its reader holds 500 frames and drops the
 * rest without telling sendto(), so an unpaced burst could lose frames
 * that the counts below expect the server to have seen.
 */
static void
inject(struct injector *in, const uint8_t *frame, size_t len)
{
	if (sendto(in->fd, frame, len, 0, (struct sockaddr *)&in->to,
		   sizeof(in->to)) >= 0)
		in->sent++;
	if (in->sent % INJECT_PACE_FRAMES == 0)
		msleep(1);
}

/* Ethernet to the server, from the kernel's MAC. */
static size_t
eth(uint8_t *f, uint16_t type)
{
	memcpy(f, env.server_mac, ETH_ALEN);
	memcpy(f + ETH_ALEN, env.kernel_mac, ETH_ALEN);
	f[12] = (uint8_t)(type >> 8);
	f[13] = (uint8_t)type;
	return ETH_HLEN;
}

/* A valid IPv4 header (20 bytes) for @payload bytes of @proto. */
static struct iphdr *
ipv4(uint8_t *f, uint8_t proto, size_t payload, unsigned int src_host)
{
	struct iphdr *ip = (struct iphdr *)(f + ETH_HLEN);
	char a[32];

	memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = proto;
	ip->tot_len = htons((uint16_t)(sizeof(*ip) + payload));
	ip->id = (uint16_t)rnd();
	ip_of(src_host, a, sizeof(a));
	inet_pton(AF_INET, a, &ip->saddr);
	ip_of(SERVER_HOST, a, sizeof(a));
	inet_pton(AF_INET, a, &ip->daddr);
	ip->check = csum(ip, sizeof(*ip));
	return ip;
}

static void
tcp_checksum(struct iphdr *ip, struct tcphdr *th, size_t len)
{
	uint8_t pseudo[12];
	uint32_t sum;

	memcpy(pseudo, &ip->saddr, 4);
	memcpy(pseudo + 4, &ip->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP;
	pseudo[10] = (uint8_t)(len >> 8);
	pseudo[11] = (uint8_t)len;
	th->check = 0;
	sum = csum_add(0, pseudo, sizeof(pseudo));
	th->check = htons((uint16_t)~csum_add(sum, th, len));
}

/* A TCP segment to the echo port; checksum right unless @bad_csum. */
static size_t
tcp_segment(uint8_t *f, uint8_t flags, unsigned int doff, size_t opt_len,
	    size_t payload, bool bad_csum, unsigned int src_host)
{
	size_t hl = sizeof(struct tcphdr) + opt_len, len = hl + payload;
	struct iphdr *ip;
	struct tcphdr *th;

	eth(f, ETHERTYPE_IP);
	ip = ipv4(f, IPPROTO_TCP, len, src_host);
	th = (struct tcphdr *)(f + ETH_HLEN + sizeof(*ip));
	memset(th, 0, sizeof(*th));
	th->source = htons((uint16_t)(1024 + rnd() % 60000));
	th->dest = htons(ECHO_PORT);
	th->seq = (uint32_t)rnd();
	th->ack_seq = (uint32_t)rnd();
	th->doff = doff & 0xf;
	((uint8_t *)th)[13] = flags;
	th->window = (uint16_t)rnd();
	rnd_bytes((uint8_t *)(th + 1), opt_len + payload);
	tcp_checksum(ip, th, len);
	if (bad_csum)
		th->check ^= 0x5a5a;
	return ETH_HLEN + sizeof(*ip) + len;
}

static void
send_malformed(struct injector *in)
{
	uint8_t f[FRAME_MAX + 64];
	struct iphdr *ip;
	size_t n, i;

	/* Random bytes, as Ethernet, as IPv4, as TCP to our port. */
	for (i = 0; i < RANDOM_FRAMES; i++) {
		n = 1 + rnd() % FRAME_MAX;
		rnd_bytes(f, n);
		switch (i % 4) {
		case 1:
			eth(f, ETHERTYPE_IP);
			break;
		case 2:
			eth(f, ETHERTYPE_ARP);
			break;
		case 3:
			if (n < ETH_HLEN + 40)
				n = ETH_HLEN + 40;
			n = tcp_segment(f, (uint8_t)rnd(), (unsigned int)rnd(),
					rnd() % 40, n - ETH_HLEN - 40,
					rnd() & 1, SPOOF_HOST);
			break;
		default:
			memcpy(f, env.server_mac, ETH_ALEN);
			break;
		}
		inject(in, f, n);
	}
	/* Runts: shorter than an Ethernet header, then than an IP one. */
	for (n = 1; n < ETH_HLEN + 20; n++) {
		eth(f, ETHERTYPE_IP);
		inject(in, f, n);
	}
	/* IPv4: ihl below 5, ihl past the frame, lengths that lie, bad sums. */
	for (i = 0; i < 64; i++) {
		n = tcp_segment(f, TH_SYN, 5, 0, 16, false, CLIENT_HOST);
		ip = (struct iphdr *)(f + ETH_HLEN);
		switch (i % 6) {
		case 0:
			ip->ihl = (uint8_t)(rnd() % 5);
			break;
		case 1:
			ip->ihl = 15;
			break;
		case 2:
			ip->tot_len = htons((uint16_t)(n + 100 + rnd() % 60000));
			break;
		case 3:
			ip->tot_len = htons((uint16_t)(rnd() % 20));
			break;
		case 4:
			ip->frag_off = htons((uint16_t)(0x2000 | (rnd() & 0x1fff)));
			break;
		default:
			ip->version = (uint8_t)(rnd() % 16);
			break;
		}
		ip->check = 0;
		ip->check = (i & 1) ? csum(ip, sizeof(*ip)) : (uint16_t)rnd();
		inject(in, f, n);
	}
	/* TCP with the right checksum: data offsets in and past the segment. */
	for (i = 0; i < 16; i++) {
		n = tcp_segment(f, TH_SYN | TH_ACK, (unsigned int)i, 0, 0, false,
				CLIENT_HOST);
		inject(in, f, n);
		n = tcp_segment(f, TH_SYN, 15, 40, 0, false, CLIENT_HOST);
		inject(in, f, n);
	}
	/* Options that lie: length 0 or 1, and lengths past the header. */
	for (i = 0; i < 64; i++) {
		struct tcphdr *th;

		n = tcp_segment(f, TH_SYN, 10, 20, 0, false, CLIENT_HOST);
		ip = (struct iphdr *)(f + ETH_HLEN);
		th = (struct tcphdr *)(ip + 1);
		((uint8_t *)(th + 1))[0] = (uint8_t)(2 + rnd() % 6);
		((uint8_t *)(th + 1))[1] = (uint8_t)(i % 3 == 0 ? 0 : i % 3 == 1 ?
						     1 : 200 + rnd() % 56);
		tcp_checksum(ip, th, sizeof(*th) + 20);
		inject(in, f, n);
	}
	/* RST, FIN and data into connections that do not exist. */
	for (i = 0; i < 64; i++) {
		static const uint8_t flags[] = {
			TH_RST, TH_FIN | TH_ACK, TH_ACK | TH_PUSH, TH_SYN | TH_FIN,
			TH_SYN | TH_RST, 0xff,
		};

		n = tcp_segment(f, flags[i % sizeof(flags)], 5, 0, rnd() % 1400,
				i & 1, CLIENT_HOST);
		inject(in, f, n);
	}
	/* ICMP: truncated echo requests and bad checksums. */
	for (i = 0; i < 32; i++) {
		struct icmphdr *ic;
		size_t pl = rnd() % 8;

		eth(f, ETHERTYPE_IP);
		ip = ipv4(f, IPPROTO_ICMP, pl, CLIENT_HOST);
		ic = (struct icmphdr *)(ip + 1);
		rnd_bytes((uint8_t *)ic, pl);
		if (pl > 0)
			ic->type = ICMP_ECHO;
		inject(in, f, ETH_HLEN + sizeof(*ip) + pl);
	}
}

/*
 * Frames the server must drop before lwIP: IPv6 (ff02::1 reaches Debian's
 * IPv6-enabled lwIP), and ICMP echo requests from the server's own
 * address or from or to 127/8, which lwIP would answer through its
 * loopback queue. Returns how many were injected.
 */
static size_t
send_martians(struct injector *in)
{
	uint8_t f[FRAME_MAX];
	struct iphdr *ip;
	size_t i, n = 0;
	char a[32];

	for (i = 0; i < MARTIAN_FRAMES; i++) {
		eth(f, i % 4 == 0 ? ETHERTYPE_IPV6_NUM : ETHERTYPE_IP);
		ip = ipv4(f, IPPROTO_ICMP, 8, CLIENT_HOST);
		switch (i % 4) {
		case 1:
			ip_of(SERVER_HOST, a, sizeof(a));
			inet_pton(AF_INET, a, &ip->saddr);
			break;
		case 2:
			inet_pton(AF_INET, "127.0.0.1", &ip->saddr);
			break;
		case 3:
			inet_pton(AF_INET, "127.0.0.1", &ip->daddr);
			break;
		default:
			break;
		}
		((uint8_t *)(ip + 1))[0] = ICMP_ECHO;
		ip->check = 0;
		ip->check = csum(ip, sizeof(*ip));
		inject(in, f, ETH_HLEN + sizeof(*ip) + 8);
		n++;
	}
	return n;
}

Test(tcpecho, survives_malformed_frames_and_keeps_echoing)
{
	struct injector in = { .to = { .sll_family = AF_PACKET } };
	size_t martians;
	json_t *c, *r;

	rng_state = (uint64_t)getpid();
	cr_assert(ping_server(), "server not answering before the test; log %s",
		  env.log);
	in.fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	cr_assert(in.fd >= 0, "AF_PACKET socket: %s", strerror(errno));
	in.to.sll_ifindex = env.ifindex;
	in.to.sll_halen = ETH_ALEN;
	memcpy(in.to.sll_addr, env.server_mac, ETH_ALEN);

	send_malformed(&in);
	martians = send_martians(&in);
	close(in.fd);
	cr_assert_gt(in.sent, RANDOM_FRAMES, "frames were injected");
	cr_assert(server_alive(), "tcp-echo died on malformed input; log %s",
		  env.log);

	c = run_client(4, 4, 65536, 7);
	cr_expect_eq(u64(c, "messages"), 16);
	cr_expect_eq(u64(c, "mismatches"), 0);
	cr_assert(ping_server(), "no ping reply after the malformed frames");
	r = stop_and_report();
	cr_expect_gt(u64(json_object_get(r, "echo"), "frames_in"), RANDOM_FRAMES);
	cr_expect_geq(u64(json_object_get(r, "echo"), "frames_filtered"),
		      martians, "IPv6 and loopback/self-sourced frames dropped");
	json_decref(c);
	json_decref(r);
}

/* ---- the command line: nothing starts on a bad option ---- */

/* Run tcp-echo with @args after "--"; exit code, stderr+stdout in @out. */
static int
run_cli(char *out, size_t len, const char *args)
{
	char cmd[512], path[64];
	FILE *f;
	size_t n;
	int st;

	snprintf(path, sizeof(path), "/tmp/tcpecho-cli-%d.txt", getpid());
	snprintf(cmd, sizeof(cmd), "%s -l 1 --no-huge -m 64 --no-pci "
		 "--file-prefix=tcpecho-cli-%d -- %s >%s 2>&1",
		 need_env("TCP_ECHO"), getpid(), args, path);
	st = system(cmd);
	f = fopen(path, "r");
	cr_assert(f != NULL);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
	unlink(path);
	sh("rm -rf /var/run/dpdk/tcpecho-cli-%d", getpid());
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(tcpecho_cli, ip_is_required, .timeout = 30)
{
	char out[4096];

	cr_expect_eq(run_cli(out, sizeof(out), "--port 7"), 2);
	cr_expect(strstr(out, "--ip is required") != NULL, "said: %s", out);
}

Test(tcpecho_cli, bad_values_are_named_with_exit_2, .timeout = 30)
{
	static const char *const bad[][2] = {
		{ "--ip 10.1.2.300", "'10.1.2.300'" },
		{ "--ip 10.1.2.3/33", "'10.1.2.3/33'" },
		{ "--ip 224.0.0.1", "'224.0.0.1'" },
		{ "--ip 10.1.2.3 --port 0", "'0'" },
		{ "--ip 10.1.2.3 --port 70000", "'70000'" },
		{ "--ip 10.1.2.3 --tsq-limit 10", "'10'" },
		{ "--ip 10.1.2.3 --policy fastest", "'fastest'" },
		{ "--ip 10.1.2.3 --app-load hold=1parsec", "1parsec" },
	};
	char out[4096];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(run_cli(out, sizeof(out), bad[i][0]), 2, "%s",
			     bad[i][0]);
		cr_expect(strstr(out, bad[i][1]) != NULL, "%s said: %s",
			  bad[i][0], out);
	}
}

Test(tcpecho_cli, help_lists_every_option_with_its_default, .timeout = 30)
{
	char out[16384];

	cr_expect_eq(run_cli(out, sizeof(out), "--help"), 0);
	cr_expect(strstr(out, "--ip ADDR[/LEN]") != NULL);
	cr_expect(strstr(out, "--port N") != NULL && strstr(out, "(default: 7)") != NULL);
	cr_expect(strstr(out, "--tsq-limit") != NULL);
	cr_expect(strstr(out, "--policy") != NULL && strstr(out, "--app-load") != NULL);
	cr_expect(strstr(out, "--config") != NULL && strstr(out, "--report") != NULL);
}
