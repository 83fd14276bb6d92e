/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * DPDK's multi-process tools attached to l2fwd-sirq and tcp-echo that run
 * with their defaults on hugepages, as a user attaches them: dpdk-dumpcap,
 * dpdk-pdump and dpdk-proc-info are secondary processes given the app's
 * --file-prefix. What a tool returns is checked against what the app
 * did: captured frames byte for byte, port statistics against the app's
 * JSON report. The app must go on forwarding after a tool has come and
 * gone, and stop on SIGINT with exit code 0 and every mbuf in its pool.
 *
 * l2fwd-sirq runs on one lcore (id 1 on CPU 1: see L2FWD_LCORES) and
 * two net_null ports with copy=1:
 * each port receives frames of its own length (PORT0_LEN, PORT1_LEN)
 * whose bytes are all zero (net_null copies them from a zeroed buffer),
 * so a frame received on a port is known to the byte, and a forwarded one
 * is the other port's zero frame with l2fwd's two MAC addresses written
 * in (the port's own MAC as dpdk-proc-info --show-port reads it: net_null
 * draws a random one). net_pcap replaying a pcap of this test's own
 * frames would say more, but DPDK 22.11's net_pcap does not survive a
 * secondary process: secondaries parse only the first 63 characters of
 * its devargs (ETH_PCAP_ARG_MAXLEN), so a cut "infinite_rx" crashes them
 * in atoi(NULL); and the rte_eal_cleanup() of every secondary closes the
 * port through pmd_pcap_remove() -> eth_dev_stop(), which sets the
 * primary's shared link status down (l2fwd-sirq then drops everything)
 * and made dpdk-proc-info die of SIGSEGV on its way out.
 *
 * tcp-echo runs on lcore 1 and net_tap in a network namespace of the
 * test's own, with the kernel's TCP as its client as in tests/tcpecho;
 * the client is a connection of this test whose stream is a known
 * pattern.
 *
 * main() runs scripts/hugepages.sh first, which reserves hugepages if it
 * can; when it cannot, the whole program exits 77 (meson: SKIP) and says
 * why. Root only (hugepages, network namespaces).
 *
 * meson passes L2FWD_SIRQ, TCP_ECHO, DPDK_DUMPCAP, DPDK_PDUMP,
 * DPDK_PROC_INFO, L2T_STDBUF, MP_HUGEPAGES (the script) and, under ASan,
 * MP_BASE_VIRTADDR.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "l2t.h"

/* meson's exit code for a skipped test. */
#define MESON_SKIP 77

/* EAL start of a primary or a tool under ASan: a few seconds here. */
#define START_DEADLINE_S 30
#define TOOL_DEADLINE_S 30
#define STOP_DEADLINE_S 10

/*
 * Lcore ids 1 and 2 on CPUs 0 and 1. DPDK processes that share memory
 * must not share an lcore id ("corruption of memory pool caches", DPDK's
 * multi-process guide), and the tools take lcore 0: dumpcap 22.11 with
 * no option to move it, proc-info by its own "-c1", pdump as told here.
 * With "-l 0,1", a capture of dpdk-pdump once held a sent frame among
 * the received ones (1 run in 30), as two users of one cache would give:
 * pdump freeing into its pool's cache 0 while l2fwd-sirq's lcore 0 took
 * copies from it. tcp-echo runs on lcore 1 alone.
 *
 * And the app's lcore not on CPU 0, where the tools run (one lcore: two
 * on CPU 1 would be a test of lcores sharing a CPU, which l2fwd_lcores
 * is): DPDK 22.11's
 * pdump callbacks race with the disable that a tool sends when it exits
 * (fixed upstream by 34536d08b0, "pdump: fix races in callbacks", Nov
 * 2025): a datapath thread preempted inside the capture callback by the
 * exiting tool resumes in the tool's freed ring and pool. sirqd is a
 * fair-class thread, so on a CPU shared with dumpcap it was preempted
 * there: l2fwd-sirq crashed in rte_pcapng_copy() after 1 capture in 6.
 */
#define L2FWD_LCORES "1@1"
#define TOOL_LCORE "0"
#define NB_PORTS 2
/* Lengths of the frames net_null hands to each port: two different. */
#define PORT0_LEN 60
#define PORT1_LEN 100
#define ETHER_ADDR_LEN 6
#define ETHER_HDR_LEN 14
/* Frames dumpcap must capture (-c); it stops within a burst of that. */
#define CAPTURE_PACKETS 256
/* How long dpdk-pdump captures, at least (some 100 000 frames). */
#define PDUMP_CAPTURE_MS 300
/*
 * Forwarding must go on after a tool: both directions move within this
 * (others' tests may share the two CPUs; a stop is what it catches).
 */
#define PROGRESS_DEADLINE_MS 10000
#define PROGRESS_STEP_MS 100

/* tcp-echo, as in tests/tcpecho: 10.<net>.0.1 the server, .2 the kernel. */
#define ECHO_PORT 7
#define SERVER_HOST 1
#define CLIENT_HOST 2
#define KERNEL_MAC_TEXT "02:00:00:00:00:02"
/*
 * The client's stream: byte k is k mod 251. Any run of it, in either
 * direction and cut anywhere, has b[i+1] = b[i] + 1 mod 251; a prime
 * keeps the cycle out of step with segment and chunk sizes.
 */
#define PATTERN_MOD 251
#define CLIENT_CHUNK 4096
#define CLIENT_IO_TIMEOUT_S 5
/* Echoed before the idle test stops its client. */
#define CLIENT_BYTES (1u << 20)
/* Idle reads of tcp-echo (report, proc-info, report) tried at most. */
#define IDLE_TRIES 10
#define QUIET_MS 300

#define ETHERTYPE_IPV4_NUM 0x0800
#define ETHERTYPE_ARP_NUM 0x0806
#define IPPROTO_TCP_NUM 6

/* ---- what every test needs ---- */

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static off_t
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : 0;
}

/* A tool run to its end: exit code 0 within TOOL_DEADLINE_S, or fail. */
static void
run_tool(struct l2t_argv *a, struct l2t_result *r)
{
	l2t_run_for(a, TOOL_DEADLINE_S, r);
	cr_assert(!r->timed_out, "%s did not end within %d s:\n%s%s",
		  a->argv[0], TOOL_DEADLINE_S, r->out, r->err);
	cr_assert(r->status == 0, "%s exited %d:\n%s%s", a->argv[0], r->status,
		  r->out, r->err);
}

/*
 * dpdk-dumpcap on port @port of the primary @prefix until it has @count
 * frames that pass @filter (libpcap syntax; NULL: all).
 */
/*
 * A tool's every thread on CPU 0, its control threads too (EAL gives them
 * the CPUs the process may use outside its lcores): none of them may
 * preempt the app's datapath on CPU 1 inside a pdump callback when the
 * tool disables the capture at exit (the 22.11 race above).
 */
static void
tool_on_cpu0(struct l2t_argv *a)
{
	l2t_arg(a, "/usr/bin/taskset");
	l2t_arg(a, "-c");
	l2t_arg(a, "0");
}

static void
dumpcap(const char *prefix, unsigned int port, const char *filter,
	unsigned int count, const char *path)
{
	struct l2t_argv a = { .argc = 0 };
	struct l2t_result r;

	tool_on_cpu0(&a);
	l2t_arg(&a, "%s", l2t_env("DPDK_DUMPCAP"));
	l2t_arg(&a, "--file-prefix=%s", prefix);
	/*
	 * -p: dumpcap 22.11 switches promiscuous mode on for the capture
	 * and off when it exits (cleanup_pdump_resources()), even on a port
	 * the application had made promiscuous itself, as l2fwd-sirq does.
	 */
	l2t_arg(&a, "-p");
	l2t_arg(&a, "-i");
	l2t_arg(&a, "%u", port);
	if (filter != NULL) {
		l2t_arg(&a, "-f");
		l2t_arg(&a, "%s", filter);
	}
	l2t_arg(&a, "-c");
	l2t_arg(&a, "%u", count);
	l2t_arg(&a, "-w");
	l2t_arg(&a, "%s", path);
	run_tool(&a, &r);
	l2t_result_free(&r);
}

/* dpdk-proc-info of the primary @prefix with @option; its stdout. */
static char *
proc_info(const char *prefix, const char *option)
{
	struct l2t_argv a = { .argc = 0 };
	struct l2t_result r;

	/* It runs on lcore 0 (its own "-c1") and uses no mempool. */
	tool_on_cpu0(&a);
	l2t_arg(&a, "%s", l2t_env("DPDK_PROC_INFO"));
	l2t_arg(&a, "--file-prefix=%s", prefix);
	l2t_arg(&a, "--");
	l2t_arg(&a, "%s", option);
	run_tool(&a, &r);
	free(r.err);
	return r.out;
}

struct port_stats {
	uint64_t rx;	/* RX-packets: ipackets */
	uint64_t tx;	/* TX-packets: opackets */
};

/* The "NIC statistics for port N" block of proc-info --stats. */
static void
parse_port_stats(const char *out, unsigned int port, struct port_stats *s)
{
	unsigned long long rx, tx;
	char head[64];
	const char *at;

	snprintf(head, sizeof(head), "NIC statistics for port %u ", port);
	at = strstr(out, head);
	cr_assert(at != NULL, "proc-info printed no statistics of port %u:\n%s",
		  port, out);
	at = strstr(at, "RX-packets:");
	cr_assert(at != NULL && sscanf(at, "RX-packets: %llu", &rx) == 1,
		  "proc-info: no RX-packets for port %u:\n%s", port, out);
	at = strstr(at, "TX-packets:");
	cr_assert(at != NULL && sscanf(at, "TX-packets: %llu", &tx) == 1,
		  "proc-info: no TX-packets for port %u:\n%s", port, out);
	s->rx = rx;
	s->tx = tx;
}

/* The MAC of a port from proc-info --show-port. */
static void
parse_port_mac(const char *out, unsigned int port, uint8_t mac[ETHER_ADDR_LEN])
{
	unsigned int m[ETHER_ADDR_LEN], i;
	char head[64];
	const char *at;

	snprintf(head, sizeof(head), "===== Port %u =====", port);
	at = strstr(out, head);
	cr_assert(at != NULL, "proc-info --show-port: no port %u:\n%s", port,
		  out);
	at = strstr(at, "-- mac ");
	cr_assert(at != NULL && sscanf(at, "-- mac %x:%x:%x:%x:%x:%x", &m[0],
				       &m[1], &m[2], &m[3], &m[4], &m[5]) == 6,
		  "proc-info --show-port: no MAC for port %u:\n%s", port, out);
	for (i = 0; i < ETHER_ADDR_LEN; i++)
		mac[i] = (uint8_t)m[i];
}

static void
format_frame(char *buf, size_t len, const struct l2t_frame *f)
{
	size_t used = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < f->caplen && used + 3 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%02x",
					 f->data[i]);
}

/* SIGINT; exit code 0 and no mbuf out of the pool in the final report. */
static json_t *
stop_app(struct l2t_proc *p, const char *report)
{
	json_t *j;
	int status;

	cr_assert(kill(p->pid, SIGINT) == 0, "SIGINT to %s: %s", p->name,
		  strerror(errno));
	status = l2t_proc_wait(p, STOP_DEADLINE_S);
	cr_assert(status == 0, "%s exited %d after SIGINT:\n%s", p->name,
		  status, l2t_app_lines(p->buf));
	j = l2t_report_load(report);
	cr_expect(l2t_json_u64(j, "mbufs_in_use") == 0,
		  "%s: %" PRIu64 " mbufs still in use after SIGINT", p->name,
		  l2t_json_u64(j, "mbufs_in_use"));
	return j;
}

/*
 * EAL arguments of a primary the tools attach to; under ASan a base
 * address out of the sanitizer's way (meson sets MP_BASE_VIRTADDR).
 */
static const char *
eal_args(struct l2t_argv *a, const char *binary, const char *lcores)
{
	const char *base = getenv("MP_BASE_VIRTADDR");

	l2t_eal_args_huge(a, binary, lcores);
	if (base != NULL && base[0] != '\0')
		l2t_arg(a, "--base-virtaddr=%s", base);
	return l2t_last_prefix();
}

/* ---- l2fwd-sirq ---- */

static struct l2t_proc app;
static char report[512];

static void
l2fwd_fini(void)
{
	l2t_proc_reap(&app);
	l2t_cleanup();
}

TestSuite(mp, .timeout = 60);

/*
 * l2fwd-sirq with its defaults: -p 0x3, nothing else but the report; its
 * lcore started.
 */
static const char *
start_l2fwd(void)
{
	struct l2t_argv a = { .argc = 0 };
	const char *prefix;

	snprintf(report, sizeof(report), "%s", l2t_path("report.json"));
	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	prefix = eal_args(&a, l2t_env("L2FWD_SIRQ"), L2FWD_LCORES);
	l2t_arg(&a, "--vdev=net_null0,copy=1,size=%u", PORT0_LEN);
	l2t_arg(&a, "--vdev=net_null1,copy=1,size=%u", PORT1_LEN);
	l2t_arg(&a, "--");
	l2t_arg(&a, "-p");
	l2t_arg(&a, "0x3");
	l2t_arg(&a, "--report");
	l2t_arg(&a, "%s", report);
	l2t_proc_start(&app, "l2fwd-sirq", &a);
	l2t_proc_expect(&app, "lcore 1 forwards", START_DEADLINE_S);
	return prefix;
}

struct l2fwd_counts {
	uint64_t rx[NB_PORTS];
	uint64_t tx[NB_PORTS];
	uint64_t link_down_drops;
	uint64_t lc_tx;			/* accepted by the PMDs */
	uint64_t lc_rx_dropped_at_stop;
};

static void
read_counts(json_t *j, struct l2fwd_counts *c)
{
	unsigned int p;

	memset(c, 0, sizeof(*c));
	for (p = 0; p < NB_PORTS; p++) {
		json_t *jp = l2t_report_port(j, p);

		c->rx[p] = l2t_json_u64(jp, "rx");
		c->tx[p] = l2t_json_u64(jp, "tx");
		c->link_down_drops += l2t_json_u64(jp, "link_down_drops");
	}
	c->lc_tx = l2t_report_lcores_sum(j, "tx_packets");
	c->lc_rx_dropped_at_stop = l2t_report_lcores_sum(j, "rx_dropped_at_stop");
	json_decref(j);
}

static void
request_counts(struct l2fwd_counts *c)
{
	read_counts(l2t_report_request(&app, report, STOP_DEADLINE_S), c);
}

static bool
moved_on(const struct l2fwd_counts *a, const struct l2fwd_counts *b)
{
	unsigned int p;

	for (p = 0; p < NB_PORTS; p++)
		if (b->rx[p] == a->rx[p] || b->tx[p] == a->tx[p])
			return false;
	return true;
}

/*
 * Every port receives and sends more after the tool has gone, with no
 * frame dropped for a link down: what a secondary leaves behind must
 * not stop the forwarding (DPDK 22.11's net_pcap would).
 */
static void
expect_forwarding(const char *after)
{
	struct l2fwd_counts a, b;
	unsigned int waited = 0;

	request_counts(&a);
	do {
		sleep_ms(PROGRESS_STEP_MS);
		waited += PROGRESS_STEP_MS;
		request_counts(&b);
	} while (!moved_on(&a, &b) && waited < PROGRESS_DEADLINE_MS);
	cr_expect(moved_on(&a, &b), "%d ms after %s, a port stood still: rx %"
		  PRIu64 "/%" PRIu64 " -> %" PRIu64 "/%" PRIu64 ", tx %" PRIu64
		  "/%" PRIu64 " -> %" PRIu64 "/%" PRIu64, PROGRESS_DEADLINE_MS,
		  after, a.rx[0], a.rx[1], b.rx[0], b.rx[1], a.tx[0], a.tx[1],
		  b.tx[0], b.tx[1]);
	cr_expect(b.link_down_drops == 0,
		  "after %s, %" PRIu64 " frames dropped for a link down", after,
		  b.link_down_drops);
}

/* The zero frame of length @len, as l2fwd-sirq sends it on @port. */
static void
forwarded_frame(uint8_t *f, uint32_t len, unsigned int port,
		const uint8_t mac[ETHER_ADDR_LEN])
{
	memset(f, 0, len);
	f[0] = 0x02;			/* 02:00:00:00:00:<port> */
	f[5] = (uint8_t)port;
	memcpy(f + ETHER_ADDR_LEN, mac, ETHER_ADDR_LEN);
}

/* Frame @i of @fs is exactly @len bytes of @want. */
static void
expect_frame(const char *what, const struct l2t_frames *fs, size_t i,
	     const uint8_t *want, uint32_t len)
{
	const struct l2t_frame *f = &fs->f[i];
	char got[2 * PORT1_LEN + 1], exp[2 * PORT1_LEN + 1];
	struct l2t_frame w = { .caplen = len, .len = len, .data = (uint8_t *)want };

	if (f->len == len && f->caplen == len && memcmp(f->data, want, len) == 0)
		return;
	format_frame(got, sizeof(got), f);
	format_frame(exp, sizeof(exp), &w);
	cr_assert_fail("%s: frame %zu of %zu (len %u, caplen %u):\n  %s\n"
		       "expected:\n  %s", what, i, fs->n, f->len, f->caplen, got,
		       exp);
}

/* Every frame of a capture is @want, and there are at least @count. */
static void
expect_capture(const char *what, const char *path, unsigned int count,
	       const uint8_t *want, uint32_t len)
{
	struct l2t_frames fs;
	size_t i;

	l2t_pcap_read(path, &fs);
	cr_expect(fs.n >= count, "%s: dumpcap -c %u wrote %zu frames", what,
		  count, fs.n);
	for (i = 0; i < fs.n; i++)
		expect_frame(what, &fs, i, want, len);
	l2t_frames_free(&fs);
}

/*
 * Port 0 both ways, one capture each, told apart by a filter on what
 * l2fwd-sirq writes: received, port 0's zero frames (source MAC 0);
 * sent, port 1's frames rewritten for port 0 (destination
 * 02:00:00:00:00:00). One capture of both would do, but dumpcap's
 * polling thread runs on CPU 0 beside the lcore that polls port 0, and
 * the first few hundred frames were seen to be all the other lcore's
 * (port 0's TX): each direction waits for its own.
 */
Test(mp, dumpcap_captures_what_l2fwd_sirq_receives_and_forwards,
     .fini = l2fwd_fini)
{
	const char *prefix = start_l2fwd();
	const char *rx_path = l2t_path("port0-rx.pcapng");
	const char *tx_path = l2t_path("port0-tx.pcapng");
	uint8_t mac[ETHER_ADDR_LEN], rx_frame[PORT0_LEN], tx_frame[PORT1_LEN];
	char *out;

	out = proc_info(prefix, "--show-port");
	parse_port_mac(out, 0, mac);
	free(out);

	dumpcap(prefix, 0, "ether src 00:00:00:00:00:00", CAPTURE_PACKETS,
		rx_path);
	dumpcap(prefix, 0, "ether dst 02:00:00:00:00:00", CAPTURE_PACKETS,
		tx_path);
	expect_forwarding("dumpcap");

	memset(rx_frame, 0, sizeof(rx_frame));
	expect_capture("received on port 0", rx_path, CAPTURE_PACKETS,
		       rx_frame, PORT0_LEN);
	forwarded_frame(tx_frame, PORT1_LEN, 0, mac);
	expect_capture("sent on port 0", tx_path, CAPTURE_PACKETS, tx_frame,
		       PORT1_LEN);
	json_decref(stop_app(&app, report));
}

Test(mp, pdump_captures_each_direction_of_an_l2fwd_sirq_port,
     .fini = l2fwd_fini)
{
	const char *prefix = start_l2fwd();
	const char *rx_path = l2t_path("pdump-rx.pcap");
	const char *tx_path = l2t_path("pdump-tx.pcap");
	uint8_t mac[ETHER_ADDR_LEN], rx_frame[PORT1_LEN], tx_frame[PORT0_LEN];
	struct l2t_argv a = { .argc = 0 };
	struct l2t_proc pdump;
	struct l2t_frames rx, tx;
	unsigned int waited;
	char *out;
	size_t i;
	int status;

	out = proc_info(prefix, "--show-port");
	parse_port_mac(out, 1, mac);
	free(out);

	/* Port 1: receives PORT1_LEN zero frames, sends port 0's. */
	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	tool_on_cpu0(&a);
	l2t_arg(&a, "%s", l2t_env("DPDK_PDUMP"));
	l2t_arg(&a, "-l");
	l2t_arg(&a, TOOL_LCORE);
	l2t_arg(&a, "--file-prefix=%s", prefix);
	l2t_arg(&a, "--");
	l2t_arg(&a, "--pdump");
	l2t_arg(&a, "port=1,queue=*,rx-dev=%s,tx-dev=%s", rx_path, tx_path);
	l2t_proc_start(&pdump, "dpdk-pdump", &a);
	/*
	 * Printed once the capture callbacks are in place. Then at least
	 * PDUMP_CAPTURE_MS, and until both files have frames (net_pcap
	 * writes through stdio: a file is empty until a buffer is full).
	 */
	l2t_proc_expect(&pdump, "capture for", TOOL_DEADLINE_S);
	sleep_ms(PDUMP_CAPTURE_MS);
	for (waited = 0; (file_size(rx_path) == 0 || file_size(tx_path) == 0) &&
	     waited < PROGRESS_DEADLINE_MS; waited += PROGRESS_STEP_MS)
		sleep_ms(PROGRESS_STEP_MS);
	cr_assert(kill(pdump.pid, SIGINT) == 0);
	status = l2t_proc_wait(&pdump, TOOL_DEADLINE_S);
	cr_assert(status == 0, "dpdk-pdump exited %d after SIGINT:\n%s", status,
		  l2t_app_lines(pdump.buf));
	l2t_proc_reap(&pdump);
	expect_forwarding("pdump");

	memset(rx_frame, 0, sizeof(rx_frame));
	forwarded_frame(tx_frame, PORT0_LEN, 1, mac);
	l2t_pcap_read(rx_path, &rx);
	l2t_pcap_read(tx_path, &tx);
	cr_expect(rx.n > 0 && tx.n > 0, "pdump wrote %zu received and %zu sent "
		  "frames in %d ms", rx.n, tx.n, PDUMP_CAPTURE_MS);
	for (i = 0; i < rx.n; i++)
		expect_frame("pdump rx-dev", &rx, i, rx_frame, PORT1_LEN);
	for (i = 0; i < tx.n; i++)
		expect_frame("pdump tx-dev", &tx, i, tx_frame, PORT0_LEN);
	cr_log_info("pdump: %zu frames received, %zu sent on port 1", rx.n,
		    tx.n);
	l2t_frames_free(&rx);
	l2t_frames_free(&tx);
	json_decref(stop_app(&app, report));
}

/*
 * proc-info reads the PMDs' counters at some time t between two reports
 * of l2fwd-sirq: one requested before it ran (r) and the final one after
 * SIGINT (f). Without any allowance for timing:
 *   r.rx[p] <= ipackets[p]: a frame is fetched from the PMD before
 *     l2fwd-sirq counts it;
 *   ipackets[p] <= f.rx[p] + f.rx_dropped_at_stop: each fetched frame is
 *     counted, or dropped at stop;
 *   0 < opackets[p] <= f.tx[p]: l2fwd-sirq counts a frame when it is
 *     buffered for the PMD, the PMD when it takes it;
 *   r.lcores tx_packets <= sum opackets <= f.lcores tx_packets: the lcore
 *     counts what the PMD took, right after tx_burst.
 */
Test(mp, proc_info_stats_of_l2fwd_sirq_agree_with_its_report,
     .fini = l2fwd_fini)
{
	const char *prefix = start_l2fwd();
	struct port_stats pi[NB_PORTS];
	struct l2fwd_counts r, f;
	uint64_t opackets = 0;
	unsigned int p;
	char *out;

	request_counts(&r);
	cr_assert(r.rx[0] > 0 && r.rx[1] > 0, "l2fwd-sirq forwards nothing");
	out = proc_info(prefix, "--stats");
	for (p = 0; p < NB_PORTS; p++)
		parse_port_stats(out, p, &pi[p]);
	free(out);
	expect_forwarding("proc-info");
	read_counts(stop_app(&app, report), &f);

	for (p = 0; p < NB_PORTS; p++) {
		cr_expect(r.rx[p] <= pi[p].rx && pi[p].rx <= f.rx[p] +
			  f.lc_rx_dropped_at_stop,
			  "port %u: proc-info RX-packets %" PRIu64 " outside [%"
			  PRIu64 ", %" PRIu64 " + %" PRIu64 " dropped at stop] "
			  "of l2fwd-sirq's reports", p, pi[p].rx, r.rx[p],
			  f.rx[p], f.lc_rx_dropped_at_stop);
		cr_expect(pi[p].tx > 0 && pi[p].tx <= f.tx[p],
			  "port %u: proc-info TX-packets %" PRIu64 " outside (0, %"
			  PRIu64 "] of l2fwd-sirq's final report", p, pi[p].tx,
			  f.tx[p]);
		opackets += pi[p].tx;
	}
	cr_expect(r.lc_tx <= opackets && opackets <= f.lc_tx,
		  "proc-info TX-packets of both ports %" PRIu64 " outside the "
		  "lcores' tx_packets [%" PRIu64 ", %" PRIu64 "]", opackets,
		  r.lc_tx, f.lc_tx);
	cr_log_info("proc-info: port 0 rx %" PRIu64 " tx %" PRIu64 ", port 1 "
		    "rx %" PRIu64 " tx %" PRIu64 "; reports rx %" PRIu64 "/%"
		    PRIu64 " before, %" PRIu64 "/%" PRIu64 " at exit", pi[0].rx,
		    pi[0].tx, pi[1].rx, pi[1].tx, r.rx[0], r.rx[1], f.rx[0],
		    f.rx[1]);
}

/* ---- tcp-echo ---- */

struct echo_env {
	char ns[32];
	char tap[IF_NAMESIZE];
	char ip[2][32];			/* [0] server, [1] kernel */
	uint8_t server_mac[ETHER_ADDR_LEN];
	uint8_t kernel_mac[ETHER_ADDR_LEN];
	const char *prefix;
};

static struct echo_env echo;

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

static void
write_proc(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return;		/* a kernel without IPv6 has nothing to turn off */
	fputs(value, f);
	fclose(f);
}

static void
parse_mac(const char *text, uint8_t mac[ETHER_ADDR_LEN])
{
	unsigned int m[ETHER_ADDR_LEN], i;

	cr_assert(sscanf(text, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
			 &m[4], &m[5]) == 6, "not a MAC address: %.17s", text);
	for (i = 0; i < ETHER_ADDR_LEN; i++)
		mac[i] = (uint8_t)m[i];
}

/*
 * A namespace of our own, entered before anything starts: tcp-echo's tap
 * is born in it, and the tools run in it as a user would run them there.
 * No IPv6 in it, so that the kernel sends nothing on the tap but this
 * test's TCP connection and its ARP.
 */
static void
echo_init(void)
{
	struct l2t_argv a = { .argc = 0 };
	unsigned int net = 100 + (unsigned int)getpid() % 150;
	char path[64];
	const char *at;
	int fd;

	memset(&echo, 0, sizeof(echo));
	snprintf(echo.ns, sizeof(echo.ns), "mp%d", (int)getpid());
	snprintf(echo.tap, sizeof(echo.tap), "mpt%d", (int)getpid() % 1000000);
	snprintf(echo.ip[0], sizeof(echo.ip[0]), "10.%u.0.%u", net, SERVER_HOST);
	snprintf(echo.ip[1], sizeof(echo.ip[1]), "10.%u.0.%u", net, CLIENT_HOST);
	snprintf(report, sizeof(report), "%s", l2t_path("report.json"));
	cr_assert(sh("ip netns add %s", echo.ns) == 0, "ip netns add %s",
		  echo.ns);
	snprintf(path, sizeof(path), "/var/run/netns/%s", echo.ns);
	fd = open(path, O_RDONLY);
	cr_assert(fd >= 0 && setns(fd, CLONE_NEWNET) == 0, "enter %s: %s",
		  echo.ns, strerror(errno));
	close(fd);
	write_proc("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	write_proc("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");

	/* tcp-echo with its defaults: the address it needs, the report. */
	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	echo.prefix = eal_args(&a, l2t_env("TCP_ECHO"), "1");
	l2t_arg(&a, "--vdev=net_tap0,iface=%s", echo.tap);
	l2t_arg(&a, "--");
	l2t_arg(&a, "--ip");
	l2t_arg(&a, "%s/24", echo.ip[0]);
	l2t_arg(&a, "--report");
	l2t_arg(&a, "%s", report);
	l2t_proc_start(&app, "tcp-echo", &a);
	at = l2t_proc_expect(&app, ", MAC ", START_DEADLINE_S);
	parse_mac(at + strlen(", MAC "), echo.server_mac);

	/* net_tap gives the kernel side the port's MAC: give it its own. */
	cr_assert(sh("ip link set lo up && ip link set %s address %s && "
		     "ip addr add %s/24 dev %s && ip link set %s up", echo.tap,
		     KERNEL_MAC_TEXT, echo.ip[1], echo.tap, echo.tap) == 0,
		  "configuring %s in %s", echo.tap, echo.ns);
	parse_mac(KERNEL_MAC_TEXT, echo.kernel_mac);
}

static void
echo_fini(void)
{
	l2t_proc_reap(&app);
	if (echo.ns[0] != '\0')
		sh("ip netns del %s", echo.ns);
	l2t_cleanup();
}

/* The kernel's side of a conversation with tcp-echo, in a thread. */
struct client {
	pthread_t thread;
	int fd;
	bool stop;
	uint64_t echoed;		/* bytes back and checked */
	uint64_t mismatches;
	int err;			/* errno of a failure, else 0 */
};

static void
fill_pattern(uint8_t *buf, size_t len, uint64_t offset)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)((offset + i) % PATTERN_MOD);
}

static bool
io_all(int fd, uint8_t *buf, size_t len, bool out)
{
	while (len > 0) {
		ssize_t n = out ? send(fd, buf, len, MSG_NOSIGNAL) :
			recv(fd, buf, len, 0);

		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

/* Send a chunk of the pattern, read its echo back, until told to stop. */
static void *
client_run(void *arg)
{
	static uint8_t out[CLIENT_CHUNK], in[CLIENT_CHUNK];
	struct client *c = arg;
	uint64_t offset = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		fill_pattern(out, sizeof(out), offset);
		if (!io_all(c->fd, out, sizeof(out), true) ||
		    !io_all(c->fd, in, sizeof(in), false)) {
			c->err = errno != 0 ? errno : EPIPE;
			break;
		}
		if (memcmp(in, out, sizeof(in)) != 0)
			__atomic_fetch_add(&c->mismatches, 1, __ATOMIC_RELAXED);
		offset += sizeof(out);
		__atomic_store_n(&c->echoed, offset, __ATOMIC_RELEASE);
	}
	/* FIN both ways, as a client that is done. */
	shutdown(c->fd, SHUT_WR);
	while (c->err == 0 && recv(c->fd, in, sizeof(in), 0) > 0)
		;
	close(c->fd);
	return NULL;
}

static void
client_start(struct client *c)
{
	struct timeval tv = { CLIENT_IO_TIMEOUT_S, 0 };
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_port = htons(ECHO_PORT),
	};

	memset(c, 0, sizeof(*c));
	inet_pton(AF_INET, echo.ip[0], &to.sin_addr);
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(c->fd >= 0, "socket: %s", strerror(errno));
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	cr_assert(connect(c->fd, (struct sockaddr *)&to, sizeof(to)) == 0,
		  "connect to tcp-echo at %s:%d: %s", echo.ip[0], ECHO_PORT,
		  strerror(errno));
	cr_assert(pthread_create(&c->thread, NULL, client_run, c) == 0);
}

static uint64_t
client_echoed(struct client *c)
{
	return __atomic_load_n(&c->echoed, __ATOMIC_ACQUIRE);
}

static void
client_stop(struct client *c)
{
	__atomic_store_n(&c->stop, true, __ATOMIC_RELEASE);
	pthread_join(c->thread, NULL);
	cr_expect(c->err == 0, "the kernel's connection to tcp-echo failed: %s",
		  strerror(c->err));
	cr_expect(c->mismatches == 0, "%" PRIu64 " chunks echoed wrong",
		  c->mismatches);
	cr_expect(c->echoed > 0, "nothing echoed");
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool
mac_is(const uint8_t *p, const uint8_t mac[ETHER_ADDR_LEN])
{
	return memcmp(p, mac, ETHER_ADDR_LEN) == 0;
}

/* An IPv4 address of ours in network order at @p: 0 server, 1 kernel. */
static int
host_of(const uint8_t *p)
{
	struct in_addr a;
	int h;

	for (h = 0; h < 2; h++) {
		inet_pton(AF_INET, echo.ip[h], &a);
		if (memcmp(p, &a, sizeof(a)) == 0)
			return h;
	}
	return -1;
}

enum echo_frame_kind { ECHO_ARP, ECHO_TCP, ECHO_TCP_TO_SERVER, ECHO_TCP_FROM_SERVER };

/*
 * Frame @f must be ARP between the two hosts, or TCP between the kernel
 * and port 7 of the server whose payload is a run of the pattern.
 * Returns its kind; a data segment says its direction.
 */
static enum echo_frame_kind
check_echo_frame(const struct l2t_frame *f, size_t i)
{
	const uint8_t *d = f->data, *ip = d + ETHER_HDR_LEN, *tcp, *pl;
	bool to_server;
	uint32_t ihl, tot, doff, n, k;
	char hex[2 * 64 + 1];
	int src, dst;

	format_frame(hex, sizeof(hex), f);
	cr_assert(f->caplen >= ETHER_HDR_LEN, "frame %zu: %u bytes", i,
		  f->caplen);
	to_server = mac_is(d, echo.server_mac);
	if (get16(d + 12) == ETHERTYPE_ARP_NUM) {
		/* Requests are broadcast; the sender is one of ours. */
		cr_assert(mac_is(d + 6, echo.server_mac) ||
			  mac_is(d + 6, echo.kernel_mac),
			  "frame %zu: ARP from a stranger: %s", i, hex);
		return ECHO_ARP;
	}
	cr_assert((to_server && mac_is(d + 6, echo.kernel_mac)) ||
		  (mac_is(d, echo.kernel_mac) && mac_is(d + 6, echo.server_mac)),
		  "frame %zu: not between the kernel and tcp-echo: %s", i, hex);
	cr_assert(get16(d + 12) == ETHERTYPE_IPV4_NUM &&
		  f->caplen >= ETHER_HDR_LEN + 20 && ip[0] >> 4 == 4 &&
		  ip[9] == IPPROTO_TCP_NUM,
		  "frame %zu: not TCP over IPv4: %s", i, hex);
	ihl = (ip[0] & 0xfu) * 4;
	tot = get16(ip + 2);
	src = host_of(ip + 12);
	dst = host_of(ip + 16);
	cr_assert(src == (to_server ? 1 : 0) && dst == (to_server ? 0 : 1),
		  "frame %zu: IPv4 addresses do not match the MACs: %s", i, hex);
	tcp = ip + ihl;
	cr_assert(f->caplen >= ETHER_HDR_LEN + ihl + 20 &&
		  get16(tcp + (to_server ? 2 : 0)) == ECHO_PORT,
		  "frame %zu: TCP not to or from port %d: %s", i, ECHO_PORT, hex);
	doff = (uint32_t)(tcp[12] >> 4) * 4;
	cr_assert(tot >= ihl + doff && f->len >= ETHER_HDR_LEN + tot,
		  "frame %zu: IPv4 length %u does not fit: %s", i, tot, hex);
	n = tot - ihl - doff;
	if (n == 0)
		return ECHO_TCP;
	pl = tcp + doff;
	/* What was captured of it; dumpcap's snap length covers an MTU. */
	if (ETHER_HDR_LEN + ihl + doff + n > f->caplen)
		n = f->caplen - (ETHER_HDR_LEN + ihl + doff);
	for (k = 0; k < n; k++)
		cr_assert(pl[k] < PATTERN_MOD && (k == 0 ||
			  pl[k] == (pl[k - 1] + 1) % PATTERN_MOD),
			  "frame %zu: payload byte %u is %u after %u, not the "
			  "client's stream: %s", i, k, pl[k], k ? pl[k - 1] : 0,
			  hex);
	return to_server ? ECHO_TCP_TO_SERVER : ECHO_TCP_FROM_SERVER;
}

Test(mp, dumpcap_captures_the_tcp_echo_conversation_with_the_kernel,
     .init = echo_init, .fini = echo_fini)
{
	const char *capture = l2t_path("tap.pcapng");
	size_t kinds[4] = { 0 }, i;
	struct l2t_frames fs;
	struct client c;
	uint64_t at_exit;
	unsigned int waited;

	client_start(&c);
	dumpcap(echo.prefix, 0, NULL, CAPTURE_PACKETS, capture);
	at_exit = client_echoed(&c);
	for (waited = 0; client_echoed(&c) == at_exit &&
	     waited < PROGRESS_DEADLINE_MS; waited += PROGRESS_STEP_MS)
		sleep_ms(PROGRESS_STEP_MS);
	cr_expect(client_echoed(&c) > at_exit, "tcp-echo stopped echoing "
		  "after dumpcap (%" PRIu64 " bytes)", at_exit);
	client_stop(&c);

	l2t_pcap_read(capture, &fs);
	cr_expect(fs.n >= CAPTURE_PACKETS, "dumpcap -c %u wrote %zu frames",
		  CAPTURE_PACKETS, fs.n);
	for (i = 0; i < fs.n; i++)
		kinds[check_echo_frame(&fs.f[i], i)]++;
	cr_expect(kinds[ECHO_TCP_TO_SERVER] > 0 && kinds[ECHO_TCP_FROM_SERVER] > 0,
		  "no data both ways: %zu segments to tcp-echo, %zu from it",
		  kinds[ECHO_TCP_TO_SERVER], kinds[ECHO_TCP_FROM_SERVER]);
	cr_log_info("dumpcap on tcp-echo: %zu frames: %zu data to it, %zu from "
		    "it, %zu other TCP, %zu ARP", fs.n,
		    kinds[ECHO_TCP_TO_SERVER], kinds[ECHO_TCP_FROM_SERVER],
		    kinds[ECHO_TCP], kinds[ECHO_ARP]);
	l2t_frames_free(&fs);
	json_decref(stop_app(&app, report));
}

struct echo_counts {
	uint64_t rx, tx, lc_tx, lc_tx_dropped, lc_rx_dropped_at_stop;
};

static void
echo_counts(struct echo_counts *c)
{
	json_t *j = l2t_report_request(&app, report, STOP_DEADLINE_S);
	json_t *p = l2t_report_port(j, 0);

	c->rx = l2t_json_u64(p, "rx");
	c->tx = l2t_json_u64(p, "tx");
	c->lc_tx = l2t_report_lcores_sum(j, "tx_packets");
	c->lc_tx_dropped = l2t_report_lcores_sum(j, "tx_dropped");
	c->lc_rx_dropped_at_stop = l2t_report_lcores_sum(j, "rx_dropped_at_stop");
	json_decref(j);
}

/*
 * Once the conversation is over nothing moves, so proc-info must read
 * exactly what tcp-echo reports: every frame the PMD received was handed
 * to lwIP (port rx), every frame the PMD took was counted by the lcore
 * (tx_packets). Quiet is proved by the same counts in the reports before
 * and after proc-info; a frame in between (an ARP refresh) means another
 * try.
 */
Test(mp, proc_info_stats_of_an_idle_tcp_echo_equal_its_report,
     .init = echo_init, .fini = echo_fini)
{
	struct echo_counts before, after;
	struct port_stats pi = { 0, 0 };
	struct client c;
	unsigned int tries, waited;
	char *out;

	client_start(&c);
	for (waited = 0; client_echoed(&c) < CLIENT_BYTES &&
	     waited < PROGRESS_DEADLINE_MS; waited += PROGRESS_STEP_MS)
		sleep_ms(PROGRESS_STEP_MS);
	client_stop(&c);
	sleep_ms(QUIET_MS);
	for (tries = 0; tries < IDLE_TRIES; tries++) {
		echo_counts(&before);
		out = proc_info(echo.prefix, "--stats");
		parse_port_stats(out, 0, &pi);
		free(out);
		echo_counts(&after);
		if (memcmp(&before, &after, sizeof(before)) == 0)
			break;
		sleep_ms(QUIET_MS);
	}
	cr_assert(tries < IDLE_TRIES, "tcp-echo never idle across %d proc-info "
		  "runs", IDLE_TRIES);
	cr_expect(pi.rx == before.rx, "proc-info RX-packets %" PRIu64
		  ", tcp-echo received %" PRIu64, pi.rx, before.rx);
	cr_expect(pi.tx == before.lc_tx, "proc-info TX-packets %" PRIu64
		  ", tcp-echo's lcore sent %" PRIu64, pi.tx, before.lc_tx);
	cr_expect(before.tx == before.lc_tx + before.lc_tx_dropped,
		  "tcp-echo handed %" PRIu64 " frames to its port, sent %"
		  PRIu64 " and dropped %" PRIu64, before.tx, before.lc_tx,
		  before.lc_tx_dropped);
	cr_expect(pi.rx > 0 && pi.tx > 0, "no traffic: rx %" PRIu64 " tx %"
		  PRIu64, pi.rx, pi.tx);
	cr_log_info("proc-info on idle tcp-echo: rx %" PRIu64 " tx %" PRIu64
		    " after %u tries", pi.rx, pi.tx, tries + 1);
	json_decref(stop_app(&app, report));
}

/*
 * Hugepages first (scripts/hugepages.sh reserves them when it can), then
 * the tests; without them, the secondaries cannot attach at all: skip.
 */
int
main(int argc, char *argv[])
{
	struct criterion_test_set *tests = criterion_initialize();
	const char *script = getenv("MP_HUGEPAGES");
	char cmd[4096];
	int result = 0, rc;

	if (!criterion_handle_args(argc, argv, true)) {
		criterion_finalize(tests);
		return 0;
	}
	if (script == NULL || script[0] == '\0') {
		fprintf(stderr, "MP_HUGEPAGES is not set: run the tests through meson\n");
		criterion_finalize(tests);
		return 1;
	}
	if (geteuid() != 0) {
		printf("SKIP: not root: the mp tests need hugepages and network "
		       "namespaces\n");
		criterion_finalize(tests);
		return MESON_SKIP;
	}
	snprintf(cmd, sizeof(cmd), "'%s'", script);
	fflush(NULL);
	rc = system(cmd);
	if (rc != 0) {
		printf("SKIP: no hugepages (%s above), and DPDK's multi-process "
		       "tools cannot attach to a --no-huge process: the "
		       "dpdk-dumpcap, dpdk-pdump and dpdk-proc-info tests did not "
		       "run\n", script);
		criterion_finalize(tests);
		return MESON_SKIP;
	}
	result = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return result;
}
