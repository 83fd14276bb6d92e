/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libsirq on a NIC with descriptor rings, without a NIC: l2fwd-sirq on
 * two net_virtio_user ports whose vhost-user backends are the net_vhost
 * ports of one dpdk-testpmd, generator and sink of both directions.
 *
 *   testpmd net_vhost0 (server, SOCK0) <-> l2fwd-sirq net_virtio_user0
 *   testpmd net_vhost1 (server, SOCK1) <-> l2fwd-sirq net_virtio_user1
 *
 * testpmd floods both ports (flowgen: it also receives and drops), then
 * only receives (rxonly) while l2fwd-sirq drains; the counts of the two
 * agree exactly, per port, through testpmd's port statistics:
 *   testpmd port p TX-packets (into l2fwd's Rx ring) == l2fwd port p rx
 *   l2fwd port p rx == port p^1 tx + runts + link-down drops
 *   l2fwd ports tx == lcore tx_packets + tx_dropped
 *   testpmd RX-packets, both ports == lcore tx_packets
 * and no mbuf is left out of l2fwd-sirq's pool. The report says which
 * path served the queues: Rx work found by the monitor condition (virtio
 * has no descriptor status), never by fetching; in irq mode, Rx
 * interrupts seen; TX completion by refcount (virtio has no
 * tx_done_cleanup). pmd_caps shows what the PMD answers, with traffic.
 * The same with the sides swapped (l2fwd-sirq on net_vhost, testpmd on
 * virtio-user) shows the other paths: fetch, and tx_done_cleanup.
 *
 * virtio-user shares its memory with the backend, so the virtio side
 * runs on hugepages with --single-file-segments (vhost-user takes at
 * most 8 memory regions; without it every 2 MB page is one). Before any
 * test, main() makes sure hugepages can be had (reserving and mounting
 * them as root if needed); where they cannot, or with VIRTIO_NO_HUGE
 * set, every process runs --no-huge, whose memory 22.11 puts in a memfd
 * that vhost-user can share. Then a vhost port and a virtio-user port
 * must connect in one process; if not, the whole program is skipped
 * (77). Hugepage files of every process are removed at the end.
 */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "l2t.h"

#define HUGEPAGE_DIR "/dev/hugepages"
/*
 * 2 MB pages free before the tests start: testpmd's 16384 mbufs and
 * l2fwd-sirq's pool (about 40 and 25 MB), EAL's heaps and rings in each,
 * with room to spare.
 */
#define HUGEPAGES_WANTED 128
#define TESTPMD_MBUFS "16384"
#define START_DEADLINE_S 30
#define CMD_DEADLINE_S 20
#define DRAIN_DEADLINE_S 20
/* Packets each l2fwd-sirq port must receive before the flood stops. */
#define MIN_TRAFFIC 50000
/* How long pmd_caps waits for an interrupt, a monitor hit, a TX release. */
#define CAPS_WAIT_MS "2000"
#define PROMPT "testpmd> "
#define ENOTSUP_RC (-ENOTSUP)

static struct l2t_proc testpmd, l2fwd, caps;
static char hugepage_stem[64];

/* Hugepage files of this process's DPDK children (l2t-<pid>-<n>map_*). */
static void
remove_hugepage_files(const char *stem)
{
	char p[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (stem[0] == '\0' || (d = opendir(HUGEPAGE_DIR)) == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, stem, strlen(stem)) == 0) {
			snprintf(p, sizeof(p), "%s/%s", HUGEPAGE_DIR, e->d_name);
			unlink(p);
		}
	closedir(d);
}

static void
suite_init(void)
{
	snprintf(hugepage_stem, sizeof(hugepage_stem), "l2t-%d-", (int)getpid());
}

static void
suite_fini(void)
{
	l2t_proc_reap(&caps);
	l2t_proc_reap(&l2fwd);
	l2t_proc_reap(&testpmd);
	l2t_cleanup();
	remove_hugepage_files(hugepage_stem);
}

TestSuite(virtio, .init = suite_init, .fini = suite_fini, .timeout = 60);

/* Set by main() when no hugepages could be had: every process --no-huge. */
#define NO_HUGE_ENV "VIRTIO_NO_HUGE"
#define NO_HUGE_MEMORY_MB "512"

/*
 * EAL arguments of a process with the two ports of one side: the virtio
 * side on hugepages with one segment file per list (its memory is shared
 * with the backend), the vhost side as it comes; or both --no-huge,
 * whose memory EAL puts in a memfd that the backend can map as well.
 */
static void
side_eal_args(struct l2t_argv *a, const char *lcores, bool virtio)
{
	unsigned int p;

	l2t_arg(a, "--lcores=%s", lcores);
	if (getenv(NO_HUGE_ENV) != NULL) {
		l2t_arg(a, "--no-huge");
		l2t_arg(a, "-m");
		l2t_arg(a, NO_HUGE_MEMORY_MB);
	} else if (virtio) {
		l2t_arg(a, "--single-file-segments");
	}
	l2t_arg(a, "--no-pci");
	l2t_arg(a, "--file-prefix=%s", l2t_new_prefix());
	for (p = 0; p < 2; p++) {
		char sock[32];

		snprintf(sock, sizeof(sock), "vhost%u.sock", p);
		if (virtio)
			l2t_arg(a, "--vdev=net_virtio_user%u,path=%s", p,
				l2t_path(sock));
		else
			l2t_arg(a, "--vdev=net_vhost%u,iface=%s,queues=1", p,
				l2t_path(sock));
	}
}

/*
 * The traffic peer: an interactive testpmd, its main and forwarding
 * lcores on CPU 1 (the other side has CPU 0), with the vhost-user
 * servers (which must listen before the virtio side connects) or the
 * virtio-user clients.
 */
static void
start_testpmd(const char *mode, bool virtio)
{
	struct l2t_argv a = { .argc = 0 };

	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	l2t_arg(&a, "%s", l2t_env("DPDK_TESTPMD"));
	side_eal_args(&a, "0@1,1@1", virtio);
	l2t_arg(&a, "--");
	l2t_arg(&a, "-i");
	l2t_arg(&a, "--forward-mode=%s", mode);
	l2t_arg(&a, "--nb-cores=1");
	l2t_arg(&a, "--total-num-mbufs=" TESTPMD_MBUFS);
	l2t_arg(&a, "--disable-link-check");
	l2t_proc_start(&testpmd, "testpmd", &a);
	l2t_proc_expect(&testpmd, PROMPT, START_DEADLINE_S);
}

static void
command(struct l2t_proc *p, const char *cmd)
{
	l2t_proc_send(p, cmd);
	l2t_proc_expect(p, PROMPT, CMD_DEADLINE_S);
}

/* "show port stats all": RX- and TX-packets of testpmd's two ports. */
static void
peer_port_stats(uint64_t rx[2], uint64_t tx[2])
{
	unsigned long long r, t;
	const char *at;
	unsigned int p;

	l2t_proc_send(&testpmd, "show port stats all");
	for (p = 0; p < 2; p++) {
		char title[64];

		snprintf(title, sizeof(title), "NIC statistics for port %u", p);
		at = l2t_proc_expect(&testpmd, title, CMD_DEADLINE_S);
		at = strstr(at, "RX-packets:");
		cr_assert(at != NULL && sscanf(at, "RX-packets: %llu", &r) == 1,
			  "testpmd: cannot read the RX-packets of port %u", p);
		at = strstr(at, "TX-packets:");
		cr_assert(at != NULL && sscanf(at, "TX-packets: %llu", &t) == 1,
			  "testpmd: cannot read the TX-packets of port %u", p);
		rx[p] = r;
		tx[p] = t;
	}
	l2t_proc_expect(&testpmd, PROMPT, CMD_DEADLINE_S);
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* One object of pmd_caps's output, by port. */
static json_t *
caps_of_port(const char *out, unsigned int port)
{
	const char *line = out;

	while ((line = strstr(line, "{\"port\": ")) != NULL) {
		json_error_t e;
		json_t *j = json_loads(line, JSON_DISABLE_EOF_CHECK, &e);

		cr_assert(j != NULL, "pmd_caps: bad JSON: %s", e.text);
		if (l2t_json_u64(j, "port") == port)
			return j;
		json_decref(j);
		line++;
	}
	cr_assert_fail("pmd_caps printed nothing for port %u:\n%s", port, out);
	return NULL;
}

static int
caps_int(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);

	cr_assert(json_is_integer(v), "pmd_caps: no %s", key);
	return (int)json_integer_value(v);
}

Test(virtio, pmd_answers_as_its_22_11_source_reads)
{
	struct l2t_argv a = { .argc = 0 };
	unsigned int port;
	int status;

	start_testpmd("txonly", false);
	command(&testpmd, "start");
	l2t_arg(&a, "%s", l2t_env("VIRTIO_PMD_CAPS"));
	side_eal_args(&a, "0@0", true);
	l2t_arg(&a, "--");
	l2t_arg(&a, "--wait-ms");
	l2t_arg(&a, CAPS_WAIT_MS);
	l2t_proc_start(&caps, "pmd_caps", &a);
	status = l2t_proc_wait(&caps, START_DEADLINE_S);
	cr_assert(status == 0, "pmd_caps exited %d:\n%s", status, caps.buf);
	command(&testpmd, "stop");
	l2t_proc_send(&testpmd, "quit");
	l2t_proc_wait(&testpmd, CMD_DEADLINE_S);

	for (port = 0; port < 2; port++) {
		json_t *c = caps_of_port(caps.buf, port);
		char *line = json_dumps(c, JSON_COMPACT);

		cr_log_info("%s", line);
		free(line);
		/* docs/architecture.md's table: change both together. */
		cr_expect_eq(caps_int(c, "rx_queue_count"), ENOTSUP_RC,
			     "port %u: rx_queue_count", port);
		cr_expect_eq(caps_int(c, "rx_descriptor_status"), ENOTSUP_RC,
			     "port %u: rx_descriptor_status", port);
		cr_expect_eq(caps_int(c, "tx_descriptor_status"), ENOTSUP_RC,
			     "port %u: tx_descriptor_status", port);
		cr_expect_eq(caps_int(c, "tx_done_cleanup"), ENOTSUP_RC,
			     "port %u: tx_done_cleanup", port);
		cr_expect_eq(caps_int(c, "monitor"), 0,
			     "port %u: rte_eth_get_monitor_addr", port);
		cr_expect_eq(caps_int(c, "rx_intr_fd"), 0,
			     "port %u: no Rx interrupt fd", port);
		cr_expect_eq(caps_int(c, "rx_intr_enable"), 0,
			     "port %u: rte_eth_dev_rx_intr_enable", port);
		/* With testpmd's flood arriving. */
		cr_expect_gt(caps_int(c, "rx_packets"), 0,
			     "port %u: no traffic from testpmd", port);
		cr_expect_eq(caps_int(c, "rx_intr_fired"), 1,
			     "port %u: no Rx interrupt within " CAPS_WAIT_MS " ms",
			     port);
		cr_expect_eq(caps_int(c, "monitor_fired"), 1,
			     "port %u: the monitor condition never saw a packet",
			     port);
		/*
		 * Lazy TX free: one packet stays in the ring, held, until
		 * the PMD needs descriptors again.
		 */
		cr_expect_eq(caps_int(c, "tx_held_ms"), -1,
			     "port %u: virtio let go of a sent mbuf", port);
		json_decref(c);
	}
}

/* Every packet testpmd handed to one port came out of the other. */
static bool
books_balance(const struct l2t_counts *c, const uint64_t peer_rx[2],
	      const uint64_t peer_tx[2])
{
	unsigned int p;

	for (p = 0; p < 2; p++)
		if (c->rx[p] != peer_tx[p] ||
		    c->rx[p] != c->tx[p ^ 1] + c->runts[p] + c->link_drops[p ^ 1])
			return false;
	return c->tx[0] + c->tx[1] == c->lc_tx + c->lc_dropped &&
		peer_rx[0] + peer_rx[1] == c->lc_tx;
}

/* A counter of the single lcore's sirq section: "config" or "counters". */
static uint64_t
sirq_value(json_t *report, const char *section, const char *key)
{
	json_t *lcores = json_object_get(json_object_get(report, "sirq"),
					 "lcores");

	cr_assert(json_is_array(lcores) && json_array_size(lcores) == 1,
		  "report: not one sirq lcore");
	return l2t_json_u64(json_object_get(json_array_get(lcores, 0), section),
			    key);
}

static void
start_l2fwd(const char *mode, bool virtio, const char *report)
{
	struct l2t_argv a = { .argc = 0 };

	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	l2t_arg(&a, "%s", l2t_env("L2FWD_SIRQ"));
	side_eal_args(&a, "0@0", virtio);
	l2t_arg(&a, "--");
	l2t_arg(&a, "-p");
	l2t_arg(&a, "0x3");
	l2t_arg(&a, "-T");
	l2t_arg(&a, "0");
	l2t_arg(&a, "--mode");
	l2t_arg(&a, "%s", mode);
	l2t_arg(&a, "--report");
	l2t_arg(&a, "%s", report);
	l2t_proc_start(&l2fwd, "l2fwd-sirq", &a);
	l2t_proc_expect(&l2fwd, "forwards 2 queue(s)", START_DEADLINE_S);
}

/*
 * l2fwd-sirq's start line for each port: what the PMD gives libsirq.
 * virtio-user: work by its monitor condition, Rx interrupts in irq mode,
 * TX completion by refcount; net_vhost: fetched, tx_done_cleanup.
 */
static void
expect_port_lines(const char *out, const char *mode, bool virtio)
{
	const bool irq = strcmp(mode, "irq") == 0;
	const char *want[3];
	char line[512];
	unsigned int port, i;

	want[0] = virtio ? "(net_virtio_user): Rx work: monitor;" :
		"(net_vhost): Rx work: fetch (the fallback:";
	/* (l2fwd-sirq on net_vhost runs in poll mode only, below.) */
	cr_assert(virtio || !irq, "no irq-mode case on the vhost side");
	want[1] = !irq ? "Rx interrupts: not asked (poll mode)" :
		"Rx interrupts: yes, one per queue";
	want[2] = virtio ? "TX done: refcount (the fallback: no tx_done_cleanup)" :
		"TX done: tx_done_cleanup;";
	for (port = 0; port < 2; port++) {
		cr_assert(l2t_port_paths(out, port, line, sizeof(line)) != NULL,
			  "no start line for port %u:\n%s", port,
			  l2t_app_lines(out));
		cr_log_info("%s", line);
		for (i = 0; i < 3; i++)
			cr_expect(strstr(line, want[i]) != NULL,
				  "port %u: no \"%s\" in: %s", port, want[i], line);
	}
}

/*
 * testpmd floods both of l2fwd-sirq's ports, then only receives while
 * l2fwd-sirq drains; both stop, the client side first (a virtio-user
 * port whose vhost-user server has gone gets SIGPIPE when it stops).
 * The final report of l2fwd-sirq, whose books balance with testpmd's.
 */
static json_t *
forward(const char *mode, bool l2fwd_on_virtio)
{
	uint64_t peer_rx[2], peer_tx[2];
	struct l2t_counts c;
	unsigned int waited;
	const char *report;
	json_t *j;
	int status;

	report = l2t_path("report.json");
	if (l2fwd_on_virtio) {
		start_testpmd("flowgen", false);
		start_l2fwd(mode, true, report);
	} else {
		start_l2fwd(mode, false, report);
		start_testpmd("flowgen", true);
	}
	expect_port_lines(l2fwd.buf, mode, l2fwd_on_virtio);

	/* Both directions until each port has had MIN_TRAFFIC packets. */
	command(&testpmd, "start");
	for (waited = 0;; waited += 100) {
		j = l2t_report_request(&l2fwd, report, CMD_DEADLINE_S);
		l2t_report_counts(j, &c);
		json_decref(j);
		if (c.rx[0] >= MIN_TRAFFIC && c.rx[1] >= MIN_TRAFFIC)
			break;
		cr_assert(waited < DRAIN_DEADLINE_S * 1000,
			  "l2fwd-sirq received %" PRIu64 " and %" PRIu64
			  " packets in %u s", c.rx[0], c.rx[1], DRAIN_DEADLINE_S);
		sleep_ms(100);
	}

	/* The flood stops; testpmd keeps receiving while l2fwd-sirq drains. */
	command(&testpmd, "stop");
	command(&testpmd, "set fwd rxonly");
	command(&testpmd, "start");
	for (waited = 0;; waited += 50) {
		peer_port_stats(peer_rx, peer_tx);
		j = l2t_report_request(&l2fwd, report, CMD_DEADLINE_S);
		l2t_report_counts(j, &c);
		json_decref(j);
		if (books_balance(&c, peer_rx, peer_tx))
			break;
		cr_assert(waited < DRAIN_DEADLINE_S * 1000,
			  "the books do not balance after %u s: testpmd tx %" PRIu64
			  "/%" PRIu64 ", l2fwd rx %" PRIu64 "/%" PRIu64 ", tx %"
			  PRIu64 "/%" PRIu64 ", lcore tx %" PRIu64 " + refused %"
			  PRIu64 ", testpmd rx %" PRIu64 "/%" PRIu64,
			  DRAIN_DEADLINE_S, peer_tx[0], peer_tx[1], c.rx[0],
			  c.rx[1], c.tx[0], c.tx[1], c.lc_tx, c.lc_dropped,
			  peer_rx[0], peer_rx[1]);
		sleep_ms(50);
	}
	command(&testpmd, "stop");

	if (l2fwd_on_virtio) {
		cr_assert(kill(l2fwd.pid, SIGINT) == 0);
		status = l2t_proc_wait(&l2fwd, CMD_DEADLINE_S);
		cr_assert(status == 0, "l2fwd-sirq exited %d:\n%s", status,
			  l2t_app_lines(l2fwd.buf));
	}
	l2t_proc_send(&testpmd, "quit");
	status = l2t_proc_wait(&testpmd, CMD_DEADLINE_S);
	cr_expect(status == 0, "testpmd exited %d:\n%s", status,
		  l2t_app_lines(testpmd.buf));
	if (!l2fwd_on_virtio) {
		cr_assert(kill(l2fwd.pid, SIGINT) == 0);
		status = l2t_proc_wait(&l2fwd, CMD_DEADLINE_S);
		cr_assert(status == 0, "l2fwd-sirq exited %d:\n%s", status,
			  l2t_app_lines(l2fwd.buf));
	}

	j = l2t_report_load(report);
	l2t_report_counts(j, &c);
	cr_expect(books_balance(&c, peer_rx, peer_tx),
		  "the final report differs from the drained one");
	cr_expect(c.runts[0] == 0 && c.runts[1] == 0, "runts from testpmd");
	cr_expect(c.lc_rx_dropped_at_stop == 0,
		  "%" PRIu64 " packets dropped at stop", c.lc_rx_dropped_at_stop);
	cr_expect(c.mbufs_in_use == 0, "mbufs_in_use %" PRIu64, c.mbufs_in_use);
	cr_log_info("l2fwd-sirq on %s, %s mode: testpmd sent %" PRIu64 " + %"
		    PRIu64 ", l2fwd-sirq forwarded %" PRIu64 " (refused %" PRIu64
		    "), testpmd received %" PRIu64 "; Rx schedules: monitor %"
		    PRIu64 ", fetch %" PRIu64 "; Rx interrupts %" PRIu64
		    "; tx_done_cleanup calls %" PRIu64,
		    l2fwd_on_virtio ? "virtio-user" : "vhost", mode, peer_tx[0],
		    peer_tx[1], c.lc_tx, c.lc_dropped, peer_rx[0] + peer_rx[1],
		    sirq_value(j, "counters", "rx_sched_monitor"),
		    sirq_value(j, "counters", "rx_sched_fetch"),
		    sirq_value(j, "counters", "irq_rx_events"),
		    sirq_value(j, "counters", "tx_done_cleanup_calls"));
	return j;
}

/* virtio has neither descriptor status nor tx_done_cleanup (22.11). */
static void
expect_virtio_paths(json_t *j)
{
	cr_expect_eq(sirq_value(j, "config", "rx_queues"), 2);
	cr_expect_eq(sirq_value(j, "config", "rx_queues_monitor"), 2,
		     "virtio's Rx queues are not watched by the monitor condition");
	cr_expect_gt(sirq_value(j, "counters", "rx_sched_monitor"), 0);
	cr_expect_eq(sirq_value(j, "counters", "rx_sched_fetch"), 0,
		     "a virtio queue was fetched");
	cr_expect_eq(sirq_value(j, "counters", "rx_sched_desc"), 0);
	cr_expect_eq(sirq_value(j, "config", "tx_queues"), 2);
	cr_expect_eq(sirq_value(j, "config", "tx_queues_refcount"), 2,
		     "virtio has no tx_done_cleanup: completion by refcount");
	cr_expect_eq(sirq_value(j, "counters", "tx_done_cleanup_calls"), 0);
}

Test(virtio, poll_mode_forwards_everything_and_finds_work_by_monitor)
{
	json_t *j = forward("poll", true);

	expect_virtio_paths(j);
	cr_expect_eq(sirq_value(j, "config", "rx_queues_intr"), 0);
	json_decref(j);
}

Test(virtio, irq_mode_forwards_everything_woken_by_rx_interrupts)
{
	json_t *j = forward("irq", true);

	expect_virtio_paths(j);
	cr_expect_eq(sirq_value(j, "config", "rx_queues_intr"), 2,
		     "virtio's Rx interrupts are not used");
	cr_expect_gt(sirq_value(j, "counters", "irq_rx_events"), 0,
		     "no Rx interrupt woke the dispatcher");
	json_decref(j);
}

/*
 * The other way round: l2fwd-sirq on the vhost side. net_vhost has
 * tx_done_cleanup (a no-op: it copies and frees at tx_burst) and a
 * monitor condition that points into the guest's memory, which libsirq
 * does not use: its Rx queues are fetched.
 */
Test(virtio, on_the_vhost_side_queues_are_fetched_and_tx_done_cleanup_is_used)
{
	json_t *j = forward("poll", false);

	cr_expect_eq(sirq_value(j, "config", "rx_queues_monitor"), 0,
		     "net_vhost's monitor condition names guest memory");
	cr_expect_eq(sirq_value(j, "config", "rx_queues_desc_status"), 0);
	cr_expect_gt(sirq_value(j, "counters", "rx_sched_fetch"), 0);
	cr_expect_eq(sirq_value(j, "counters", "rx_sched_monitor"), 0);
	cr_expect_eq(sirq_value(j, "config", "tx_queues_done_cleanup"), 2,
		     "net_vhost's tx_done_cleanup not found");
	cr_expect_geq(sirq_value(j, "counters", "tx_done_cleanup_calls"), 2);
	json_decref(j);
}

/* Before any test: hugepages, and vhost-user between two ports. */

static long
meminfo(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, strlen(key)) == 0 &&
		    sscanf(line + strlen(key), ": %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static bool
hugetlbfs_mounted(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, " " HUGEPAGE_DIR " hugetlbfs ") != NULL;
	fclose(f);
	return found;
}

/*
 * HUGEPAGES_WANTED free 2 MB pages on HUGEPAGE_DIR, reserved and mounted
 * here if root can; NULL, or why not.
 */
static const char *
hugepages_ready(void)
{
	static char why[256];
	long total, free_pages;
	FILE *f;

	if (meminfo("Hugepagesize") != 2048)
		return "the default hugepage size is not 2 MB";
	if (!hugetlbfs_mounted()) {
		mkdir(HUGEPAGE_DIR, 0755);
		if (mount("nodev", HUGEPAGE_DIR, "hugetlbfs", 0, NULL) != 0) {
			snprintf(why, sizeof(why), "no hugetlbfs on %s and mounting one failed: %s",
				 HUGEPAGE_DIR, strerror(errno));
			return why;
		}
		printf("virtio: mounted hugetlbfs on %s\n", HUGEPAGE_DIR);
	}
	total = meminfo("HugePages_Total");
	free_pages = meminfo("HugePages_Free");
	if (free_pages >= HUGEPAGES_WANTED)
		return NULL;
	f = fopen("/proc/sys/vm/nr_hugepages", "w");
	if (f != NULL) {
		fprintf(f, "%ld\n", total + HUGEPAGES_WANTED - free_pages);
		fclose(f);
		printf("virtio: asked for %ld more 2 MB hugepages\n",
		       HUGEPAGES_WANTED - free_pages);
	}
	free_pages = meminfo("HugePages_Free");
	if (free_pages >= HUGEPAGES_WANTED)
		return NULL;
	snprintf(why, sizeof(why), "%ld free 2 MB hugepages, %d wanted, and no more could be reserved",
		 free_pages, HUGEPAGES_WANTED);
	return why;
}

/*
 * A vhost-user server port and a virtio-user port connected to it, in
 * one pmd_caps process (the virtio-user port hot-plugged once the vhost
 * port listens): what fails here is the machine, not libsirq. NULL, or
 * why not; pmd_caps's answers for both ports, or the end of its output,
 * are printed.
 */
static const char *
vhost_user_works(void)
{
	static char out_text[1 << 18];
	char dir[] = "/tmp/virtio-pre-XXXXXX", cmd[2048], out[sizeof(dir) + 8];
	const char *caps_bin = getenv("VIRTIO_PMD_CAPS"), *line;
	size_t n = 0;
	FILE *f;
	int rc;

	if (caps_bin == NULL)
		return "VIRTIO_PMD_CAPS is not set: run the tests through meson";
	if (mkdtemp(dir) == NULL)
		return "mkdtemp failed";
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(cmd, sizeof(cmd),
		 "timeout -s KILL 30 %s -l 0 %s --no-pci "
		 "--file-prefix=l2t-%d-pre --vdev=net_vhost0,iface=%s/s.sock "
		 "-- --attach net_virtio_user0,path=%s/s.sock >%s 2>&1",
		 caps_bin, getenv(NO_HUGE_ENV) != NULL ?
		 "--no-huge -m " NO_HUGE_MEMORY_MB : "--single-file-segments",
		 (int)getpid(), dir, dir, out);
	printf("virtio: %s\n", cmd);
	rc = system(cmd);
	f = fopen(out, "r");
	if (f != NULL) {
		n = fread(out_text, 1, sizeof(out_text) - 1, f);
		fclose(f);
	}
	out_text[n] = '\0';
	snprintf(cmd, sizeof(cmd), "rm -rf %s /var/run/dpdk/l2t-%d-pre",
		 dir, (int)getpid());
	if (system(cmd) != 0)
		printf("virtio: could not remove %s\n", dir);
	snprintf(cmd, sizeof(cmd), "l2t-%d-pre", (int)getpid());
	remove_hugepage_files(cmd);
	if (rc == 0 && strstr(out_text, "\"driver\": \"net_virtio_user\"") != NULL) {
		for (line = out_text; (line = strstr(line, "\n{")) != NULL; line++)
			printf("virtio: %.*s\n", (int)strcspn(line + 1, "\n"),
			       line + 1);
		return NULL;
	}
	printf("%s\n", out_text + (n > 3000 ? n - 3000 : 0));
	return "a net_virtio_user port could not use a net_vhost port in the same process (output above)";
}

int
main(int argc, char *argv[])
{
	struct criterion_test_set *tests = criterion_initialize();
	const char *why;
	int result = 0;

	/*
	 * Hugepages first; without them (or with VIRTIO_NO_HUGE set) every
	 * process runs --no-huge, which virtio-user can share in 22.11.
	 */
	why = getenv(NO_HUGE_ENV) == NULL ? hugepages_ready() : "VIRTIO_NO_HUGE is set";
	if (why != NULL) {
		printf("virtio: no hugepages (%s): every process runs --no-huge\n",
		       why);
		setenv(NO_HUGE_ENV, "1", 1);
	}
	why = vhost_user_works();
	if (why != NULL) {
		printf("SKIP: %s\n", why);
		criterion_finalize(tests);
		return 77;
	}
	if (criterion_handle_args(argc, argv, true))
		result = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return result;
}
