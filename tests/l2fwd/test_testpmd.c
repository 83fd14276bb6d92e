/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * l2fwd-sirq between two dpdk-testpmd processes over net_memif: the
 * packet counts of the three processes add up exactly.
 *
 *   testpmd "gen" (txonly) --memif a--> l2fwd-sirq port 0
 *   l2fwd-sirq port 1      --memif b--> testpmd "sink" (rxonly)
 *
 * testpmd has one forwarding mode for all its ports, hence two of them,
 * interactive and driven through their stdin (memif clients; l2fwd-sirq
 * is the server of both links). The generator floods from CPU 1; the
 * sink polls on CPU 0 beside l2fwd-sirq, so that the two take turns, and
 * link b has 16384-slot rings (rsize=14) to carry a whole turn of
 * l2fwd-sirq's output: most of what it forwards reaches the sink instead
 * of being refused by a full ring (which is counted either way). The
 * interactive "stop" ends forwarding without closing a port: the memif
 * PMD can crash a process whose peer disconnects during traffic
 * (DESIGN.md), so every process stops forwarding before any exits.
 *
 * After the generator stops, l2fwd-sirq is watched (SIGUSR1 reports)
 * until it has received all of it and flushed its TX buffers, then the
 * sink until it has received all l2fwd-sirq handed to memif. The checks:
 *   gen TX-packets (accepted by memif)   == l2fwd port 0 rx
 *   l2fwd port 0 rx == port 1 tx + port 0 runts + port 1 link-down drops
 *   l2fwd port 1 tx == lcore tx_packets + tx_dropped (memif ring full)
 *   l2fwd lcore tx_packets               == sink RX-packets
 * with nothing left in flight: no packet dropped at stop, no mbuf out of
 * the pool. The deadlines only catch a hang.
 */

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "l2t.h"

#define TESTPMD_MEMORY_MB "256"
#define TESTPMD_MBUFS "8192"
#define START_DEADLINE_S 30
#define CMD_DEADLINE_S 20
#define DRAIN_DEADLINE_S 20
/* Packets the generator must have pushed through before it stops. */
#define MIN_TRAFFIC 100000
#define PROMPT "testpmd> "

static struct l2t_proc l2fwd, gen, sink;

static void
suite_fini(void)
{
	l2t_proc_reap(&gen);
	l2t_proc_reap(&sink);
	l2t_proc_reap(&l2fwd);
	l2t_cleanup();
}

TestSuite(l2fwd_testpmd, .fini = suite_fini, .timeout = 110);

/* Links: a from the generator, b to the sink. */
#define LINK_A "a.sock", ""
#define LINK_B "b.sock", ",rsize=14"

static void
memif_vdev(struct l2t_argv *a, unsigned int port, const char *role,
	   const char *sock, const char *extra)
{
	l2t_arg(a, "--vdev=net_memif%u,role=%s,socket=%s,socket-abstract=no%s",
		port, role, l2t_path(sock), extra);
}

/*
 * An interactive testpmd, memif client of @sock: its main lcore (the
 * command line) on CPU 1, its forwarding lcore on @fwd_cpu.
 */
static void
start_testpmd(struct l2t_proc *p, const char *name, unsigned int fwd_cpu,
	      const char *sock, const char *extra, const char *mode)
{
	struct l2t_argv a = { .argc = 0 };

	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	l2t_arg(&a, "%s", l2t_env("DPDK_TESTPMD"));
	l2t_arg(&a, "--lcores=0@1,1@%u", fwd_cpu);
	l2t_arg(&a, "--no-huge");
	l2t_arg(&a, "-m");
	l2t_arg(&a, TESTPMD_MEMORY_MB);
	l2t_arg(&a, "--no-pci");
	l2t_arg(&a, "--file-prefix=%s", l2t_new_prefix());
	memif_vdev(&a, 0, "client", sock, extra);
	l2t_arg(&a, "--");
	l2t_arg(&a, "-i");
	l2t_arg(&a, "--forward-mode=%s", mode);
	l2t_arg(&a, "--total-num-mbufs=" TESTPMD_MBUFS);
	l2t_proc_start(p, name, &a);
	l2t_proc_expect(p, PROMPT, START_DEADLINE_S);
}

static void
command(struct l2t_proc *p, const char *cmd)
{
	l2t_proc_send(p, cmd);
	l2t_proc_expect(p, PROMPT, CMD_DEADLINE_S);
}

/* "stop": the accumulated forward statistics of all ports. */
static void
stop_forwarding(struct l2t_proc *p, uint64_t *rx, uint64_t *tx,
		uint64_t *tx_dropped)
{
	unsigned long long r, rd, rt, t, td, tt;
	const char *at;

	l2t_proc_send(p, "stop");
	at = l2t_proc_expect(p, "Accumulated forward statistics for all ports",
			     CMD_DEADLINE_S);
	l2t_proc_expect(p, PROMPT, CMD_DEADLINE_S);
	at = strstr(at, "RX-packets:");
	cr_assert(at != NULL && sscanf(at, "RX-packets: %llu RX-dropped: %llu "
				       "RX-total: %llu TX-packets: %llu "
				       "TX-dropped: %llu TX-total: %llu",
				       &r, &rd, &rt, &t, &td, &tt) == 6,
		  "%s: cannot read the forward statistics:\n%s", p->name,
		  at != NULL ? at : "(none)");
	*rx = r;
	*tx = t;
	*tx_dropped = td;
}

/* "show port stats 0": RX-packets of the NIC. */
static uint64_t
port_rx_packets(struct l2t_proc *p)
{
	unsigned long long rx;
	const char *at;

	l2t_proc_send(p, "show port stats 0");
	at = l2t_proc_expect(p, "NIC statistics for port 0", CMD_DEADLINE_S);
	l2t_proc_expect(p, PROMPT, CMD_DEADLINE_S);
	at = strstr(at, "RX-packets:");
	cr_assert(at != NULL && sscanf(at, "RX-packets: %llu", &rx) == 1,
		  "%s: cannot read the port statistics", p->name);
	return rx;
}

/* The report's counters, and the report let go of. */
static void
read_counts(json_t *j, struct l2t_counts *c)
{
	l2t_report_counts(j, c);
	json_decref(j);
}

/* Everything received was handed on, everything handed on left a buffer. */
static bool
l2fwd_quiescent(const struct l2t_counts *c, uint64_t gen_tx)
{
	return c->rx[0] == gen_tx &&
		c->rx[0] == c->tx[1] + c->runts[0] + c->link_drops[1] &&
		c->tx[0] + c->tx[1] == c->lc_tx + c->lc_dropped;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Until testpmd's port 0 says "Link status: down": the memif server went
 * away and this client took the disconnection in its interrupt thread.
 */
static void
wait_link_down(struct l2t_proc *p)
{
	unsigned int waited;
	const char *at;

	for (waited = 0;; waited += 50) {
		l2t_proc_send(p, "show port info 0");
		at = l2t_proc_expect(p, "Link status: ", CMD_DEADLINE_S);
		at += strlen("Link status: ");
		if (strncmp(at, "down", 4) == 0)
			break;
		l2t_proc_expect(p, PROMPT, CMD_DEADLINE_S);
		cr_assert(waited < DRAIN_DEADLINE_S * 1000,
			  "%s: link still up %u s after l2fwd-sirq exited",
			  p->name, DRAIN_DEADLINE_S);
		sleep_ms(50);
	}
	l2t_proc_expect(p, PROMPT, CMD_DEADLINE_S);
}

Test(l2fwd_testpmd, counts_add_up_between_testpmd_and_l2fwd_over_memif)
{
	char report[512];
	uint64_t gen_rx, gen_tx, gen_tx_dropped, sink_rx, sink_tx, sink_dropped;
	struct l2t_argv a = { .argc = 0 };
	struct l2t_counts c;
	unsigned int waited;
	uint64_t got;
	int status;

	snprintf(report, sizeof(report), "%s", l2t_path("report.json"));

	/*
	 * l2fwd-sirq: memif servers, until SIGINT; line-buffered, to see
	 * "forwards" as soon as it is printed.
	 */
	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	l2t_eal_args(&a, l2t_env("L2FWD_SIRQ"));
	memif_vdev(&a, 0, "server", LINK_A);
	memif_vdev(&a, 1, "server", LINK_B);
	l2t_arg(&a, "--");
	l2t_arg(&a, "-T");
	l2t_arg(&a, "0");
	l2t_arg(&a, "--report");
	l2t_arg(&a, "%s", report);
	l2t_proc_start(&l2fwd, "l2fwd-sirq", &a);
	l2t_proc_expect(&l2fwd, "forwards 2 queue(s)", START_DEADLINE_S);

	start_testpmd(&sink, "testpmd sink", 0, LINK_B, "rxonly");
	command(&sink, "start");
	start_testpmd(&gen, "testpmd gen", 1, LINK_A, "txonly");
	command(&gen, "start");

	/* Traffic until MIN_TRAFFIC packets went through l2fwd-sirq. */
	for (waited = 0;; waited += 100) {
		read_counts(l2t_report_request(&l2fwd, report, CMD_DEADLINE_S), &c);
		if (c.rx[0] >= MIN_TRAFFIC)
			break;
		cr_assert(waited < DRAIN_DEADLINE_S * 1000,
			  "only %" PRIu64 " packets reached l2fwd-sirq in %u s",
			  c.rx[0], DRAIN_DEADLINE_S);
		sleep_ms(100);
	}

	/* The generator stops; l2fwd-sirq must account for all it sent. */
	stop_forwarding(&gen, &gen_rx, &gen_tx, &gen_tx_dropped);
	cr_assert(gen_tx >= MIN_TRAFFIC, "testpmd sent %" PRIu64 " packets",
		  gen_tx);
	for (waited = 0;; waited += 50) {
		read_counts(l2t_report_request(&l2fwd, report, CMD_DEADLINE_S), &c);
		if (l2fwd_quiescent(&c, gen_tx))
			break;
		cr_assert(waited < DRAIN_DEADLINE_S * 1000,
			  "l2fwd-sirq does not account for testpmd's %" PRIu64
			  " packets: port 0 rx %" PRIu64 ", port 1 tx %" PRIu64
			  ", runts %" PRIu64 ", link-down drops %" PRIu64
			  ", lcore tx %" PRIu64 " + refused %" PRIu64, gen_tx,
			  c.rx[0], c.tx[1], c.runts[0], c.link_drops[1], c.lc_tx,
			  c.lc_dropped);
		sleep_ms(50);
	}

	/* The sink must receive all that memif accepted from l2fwd-sirq. */
	for (waited = 0; (got = port_rx_packets(&sink)) != c.lc_tx; waited += 50) {
		cr_assert(waited < DRAIN_DEADLINE_S * 1000,
			  "testpmd sink received %" PRIu64 " packets, l2fwd-sirq "
			  "sent %" PRIu64, got, c.lc_tx);
		sleep_ms(50);
	}
	stop_forwarding(&sink, &sink_rx, &sink_tx, &sink_dropped);

	/*
	 * Nobody forwards any more. A memif peer must take the other's
	 * disconnection while nothing polls its port and before its own
	 * exit: DPDK 22.11's memif_disconnect() clears the connected flag
	 * and unmaps the rings in the interrupt thread while a burst that
	 * passed the flag may still read them (l2fwd-sirq, the server, died
	 * with SIGSEGV in librte_net_memif when the clients quit while it
	 * polled), and a client that gets it during its rte_eal_cleanup()
	 * can touch a freed interrupt handle (testpmd died in
	 * rte_intr_instance_free() 8 times in 20 runs on a loaded machine).
	 * So l2fwd-sirq stops its lcores and closes its ports first, then
	 * each stopped testpmd sees its link go down, then quits.
	 */
	cr_assert(kill(l2fwd.pid, SIGINT) == 0);
	status = l2t_proc_wait(&l2fwd, CMD_DEADLINE_S);
	cr_assert(status == 0, "l2fwd-sirq exited %d:\n%s", status,
		  l2t_app_lines(l2fwd.buf));
	read_counts(l2t_report_load(report), &c);
	wait_link_down(&gen);
	wait_link_down(&sink);
	l2t_proc_send(&gen, "quit");
	l2t_proc_send(&sink, "quit");
	status = l2t_proc_wait(&gen, CMD_DEADLINE_S);
	cr_expect(status == 0, "testpmd gen exited %d:\n%s", status,
		  l2t_app_lines(gen.buf));
	status = l2t_proc_wait(&sink, CMD_DEADLINE_S);
	cr_expect(status == 0, "testpmd sink exited %d:\n%s", status,
		  l2t_app_lines(sink.buf));

	cr_expect(gen_tx == c.rx[0], "testpmd sent %" PRIu64 ", l2fwd-sirq port 0 "
		  "received %" PRIu64, gen_tx, c.rx[0]);
	cr_expect(c.rx[0] == c.tx[1] + c.runts[0] + c.link_drops[1],
		  "l2fwd-sirq port 0 rx %" PRIu64 " != port 1 tx %" PRIu64
		  " + runts %" PRIu64 " + link-down drops %" PRIu64, c.rx[0],
		  c.tx[1], c.runts[0], c.link_drops[1]);
	cr_expect(c.tx[1] == c.lc_tx + c.lc_dropped,
		  "l2fwd-sirq port 1 tx %" PRIu64 " != sent %" PRIu64
		  " + refused by memif %" PRIu64, c.tx[1], c.lc_tx, c.lc_dropped);
	cr_expect(sink_rx == c.lc_tx, "l2fwd-sirq sent %" PRIu64 ", testpmd "
		  "received %" PRIu64, c.lc_tx, sink_rx);
	cr_expect(sink_rx > 0, "nothing reached the sink");
	cr_expect(c.runts[0] == 0, "testpmd's 64-byte frames counted as runts");
	/* Nothing flows the other way. */
	cr_expect(c.rx[1] == 0 && c.tx[0] == 0 && gen_rx == 0 && sink_tx == 0,
		  "traffic from the sink: l2fwd port 1 rx %" PRIu64 ", port 0 tx %"
		  PRIu64 ", gen rx %" PRIu64 ", sink tx %" PRIu64, c.rx[1],
		  c.tx[0], gen_rx, sink_tx);
	cr_expect(c.lc_rx_dropped_at_stop == 0,
		  "%" PRIu64 " packets dropped at stop", c.lc_rx_dropped_at_stop);
	cr_expect(c.mbufs_in_use == 0, "mbufs_in_use %" PRIu64, c.mbufs_in_use);
	cr_log_info("testpmd sent %" PRIu64 " (memif refused %" PRIu64
		    "), l2fwd-sirq forwarded %" PRIu64 " (memif refused %"
		    PRIu64 "), testpmd received %" PRIu64, gen_tx,
		    gen_tx_dropped, c.lc_tx, c.lc_dropped, sink_rx);

}
