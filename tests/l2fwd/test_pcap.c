/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * l2fwd-sirq forwards what net_pcap replays, byte for byte.
 *
 * Each port replays its own rx_pcap once: frames of 14..9000 bytes,
 * 802.1Q and QinQ tagged, broadcast, IPv4/IPv6/link-local multicast,
 * runts (0..13 bytes) and random garbage, shuffled, three rounds of them
 * (more than one NAPI weight of packets). What the paired port writes to
 * its tx_pcap must be exactly the non-runt frames of the other port's
 * input, in order, none lost or duplicated, with the MAC addresses
 * rewritten (destination 02:00:00:00:00:<port>, source the port's MAC as
 * DPDK reports it) or, with --no-mac-updating, untouched. The JSON report
 * must count the same: rx, tx, runts per port, no drop, no mbuf left out
 * of the pool. The same for every policy, both modes, with and without
 * an application load on the lcore.
 *
 * Jumbo frames: l2fwd-sirq's mbufs hold 1920 bytes after the headroom
 * (RTE_MBUF_DEFAULT_BUF_SIZE). net_pcap's Rx copies a longer frame into a
 * chain of mbufs (eth_pcap_rx_jumbo: 9000 bytes take 5 segments), and its
 * TX writes a chain back whole with rte_pktmbuf_read(), so frames up to
 * 9000 bytes are checked byte for byte like the others. Above 16128 bytes
 * (RTE_ETHER_MAX_JUMBO_FRAME_LEN) net_pcap's TX writes only the first
 * 16128 bytes of a chain; a separate test pins that behaviour.
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "l2t.h"

#define NB_PORTS 2
#define ETHER_HDR_LEN 14	/* below this a frame is a runt */
#define ROUNDS 3
#define RUN_SECONDS "1"		/* net_pcap replays at once; then idle */
#define APP_LOAD "hold=2ms,period=10ms"
/*
 * net_pcap's TX writes at most this much of a multi-segment mbuf
 * (RTE_ETH_PCAP_SNAPLEN = RTE_ETHER_MAX_JUMBO_FRAME_LEN in pcap_ethdev.c).
 */
#define PCAP_TX_SNAPLEN 16128
/* pcap file layout (pcap-savefile(5)): what a finished output file holds. */
#define PCAP_FILE_HEADER 24
#define PCAP_RECORD_HEADER 16

enum frame_kind {
	UNICAST,
	VLAN,		/* 802.1Q */
	QINQ,		/* 802.1ad outer, 802.1Q inner */
	BROADCAST,
	MCAST_IPV4,
	MCAST_IPV6,
	LINK_LOCAL,	/* 01:80:c2:00:00:00, which bridges keep */
	RUNT,
	GARBAGE,	/* random bytes, random length */
};

struct frame_spec {
	enum frame_kind kind;
	uint32_t len;
};

/* One round; garbage lengths are drawn per round. */
static const struct frame_spec round_specs[] = {
	{ UNICAST, 14 }, { UNICAST, 15 }, { UNICAST, 42 }, { UNICAST, 59 },
	{ UNICAST, 60 }, { UNICAST, 64 }, { UNICAST, 65 }, { UNICAST, 127 },
	{ UNICAST, 128 }, { UNICAST, 256 }, { UNICAST, 512 },
	{ UNICAST, 1000 }, { UNICAST, 1024 }, { UNICAST, 1500 },
	{ UNICAST, 1514 }, { UNICAST, 1518 },
	/* Around one mbuf's data room (2048 - 128 headroom) and two. */
	{ UNICAST, 1919 }, { UNICAST, 1920 }, { UNICAST, 1921 },
	{ UNICAST, 2048 }, { UNICAST, 3000 }, { UNICAST, 4095 },
	{ UNICAST, 4096 }, { UNICAST, 4097 }, { UNICAST, 6000 },
	{ UNICAST, 8192 }, { UNICAST, 9000 },
	{ VLAN, 18 }, { VLAN, 64 }, { VLAN, 1518 }, { VLAN, 1522 },
	{ VLAN, 4000 }, { VLAN, 9000 },
	{ QINQ, 22 }, { QINQ, 68 }, { QINQ, 1522 }, { QINQ, 9000 },
	{ BROADCAST, 60 }, { BROADCAST, 1514 },
	{ MCAST_IPV4, 60 }, { MCAST_IPV4, 1000 },
	{ MCAST_IPV6, 86 }, { MCAST_IPV6, 1514 },
	{ LINK_LOCAL, 60 },
	{ RUNT, 0 }, { RUNT, 1 }, { RUNT, 6 }, { RUNT, 12 }, { RUNT, 13 },
	{ GARBAGE, 0 }, { GARBAGE, 0 }, { GARBAGE, 0 }, { GARBAGE, 0 },
	{ GARBAGE, 0 }, { GARBAGE, 0 }, { GARBAGE, 5 }, { GARBAGE, 9000 },
};

#define NB_ROUND_SPECS (sizeof(round_specs) / sizeof(round_specs[0]))
#define MAX_FRAME 65535

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
set_dst(uint8_t *f, uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint8_t e,
	uint8_t g)
{
	const uint8_t mac[6] = { a, b, c, d, e, g };

	memcpy(f, mac, sizeof(mac));
}

/*
 * A frame of @s: random bytes, then the header its kind has, then a
 * sequence number where there is room, so that every frame is unique.
 */
static uint32_t
make_frame(uint8_t *f, const struct frame_spec *s, uint64_t *rng,
	   uint16_t port, uint32_t seq)
{
	uint32_t len = s->len, off = 12;

	if (s->kind == GARBAGE && len == 0)
		len = (uint32_t)(l2t_random(rng) % 2000);
	l2t_random_bytes(rng, f, len);
	if (s->kind == RUNT || s->kind == GARBAGE || len < ETHER_HDR_LEN)
		return len;

	/* Source: a locally administered address naming the input port. */
	set_dst(f + 6, 0x02, 0x5e, 0x10, 0x00, 0x00, (uint8_t)port);
	switch (s->kind) {
	case BROADCAST:
		set_dst(f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
		put16(f + off, 0x0806);		/* ARP */
		break;
	case MCAST_IPV4:
		set_dst(f, 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb);
		put16(f + off, 0x0800);
		break;
	case MCAST_IPV6:
		set_dst(f, 0x33, 0x33, 0x00, 0x00, 0x00, 0x01);
		put16(f + off, 0x86dd);
		break;
	case LINK_LOCAL:
		set_dst(f, 0x01, 0x80, 0xc2, 0x00, 0x00, 0x00);
		put16(f + off, 0x0026);		/* 802.3 length: STP */
		break;
	case QINQ:
		set_dst(f, 0x00, 0x1b, 0x21, 0x00, 0x00, 0x01);
		put16(f + off, 0x88a8);
		put16(f + off + 2, 0x2064);	/* PCP 1, VID 100 */
		off += 4;
		/* fall through */
	case VLAN:
		if (s->kind == VLAN)
			set_dst(f, 0x00, 0x1b, 0x21, 0x00, 0x00, 0x02);
		put16(f + off, 0x8100);
		put16(f + off + 2, 0xa0c8);	/* PCP 5, VID 200 */
		off += 4;
		put16(f + off, 0x0800);
		break;
	default:
		set_dst(f, 0x00, 0x1b, 0x21, 0x00, 0x00, 0x03);
		put16(f + off, 0x0800);
		break;
	}
	off += 2;
	if (len >= off + 4) {
		f[off] = (uint8_t)(seq >> 24);
		f[off + 1] = (uint8_t)(seq >> 16);
		f[off + 2] = (uint8_t)(seq >> 8);
		f[off + 3] = (uint8_t)seq;
	}
	return len;
}

/*
 * @rounds shuffled rounds of round_specs for Rx queue @queue of @port,
 * different for every port and queue; returns the runts.
 */
static uint64_t
build_input(uint16_t port, uint16_t queue, unsigned int rounds,
	    struct l2t_frames *fs)
{
	struct frame_spec specs[NB_ROUND_SPECS];
	uint64_t rng = 0x5eed0000ULL + port + ((uint64_t)queue << 8), runts = 0;
	static uint8_t f[MAX_FRAME];
	unsigned int r, i;
	uint32_t seq = 0;

	memset(fs, 0, sizeof(*fs));
	for (r = 0; r < rounds; r++) {
		memcpy(specs, round_specs, sizeof(specs));
		for (i = NB_ROUND_SPECS - 1; i > 0; i--) {
			unsigned int j = (unsigned int)(l2t_random(&rng) % (i + 1));
			struct frame_spec t = specs[i];

			specs[i] = specs[j];
			specs[j] = t;
		}
		for (i = 0; i < NB_ROUND_SPECS; i++) {
			uint32_t len = make_frame(f, &specs[i], &rng, port, seq++);

			l2t_frames_add(fs, f, len);
			if (len < ETHER_HDR_LEN)
				runts++;
		}
	}
	return runts;
}

/* What @dst_port must transmit for an input frame, or false for a runt. */
static bool
expected_output(const struct l2t_frame *in, bool mac_updating,
		uint16_t dst_port, const uint8_t dst_mac[6], uint8_t *out)
{
	if (in->len < ETHER_HDR_LEN)
		return false;
	memcpy(out, in->data, in->len);
	if (mac_updating) {
		set_dst(out, 0x02, 0x00, 0x00, 0x00, 0x00, (uint8_t)dst_port);
		memcpy(out + 6, dst_mac, 6);
	}
	return true;
}

static void
format_bytes(char *buf, size_t len, const uint8_t *p, uint32_t n)
{
	size_t used = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < n && used + 3 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%02x", p[i]);
}

/*
 * The frames written by @out_port are exactly @in's non-runts, rewritten
 * for @out_port, in order; at most @snaplen bytes of each are compared
 * and caplen must be min(len, snaplen).
 */
static void
check_forwarded(const char *label, const struct l2t_frames *in,
		const struct l2t_frames *out, uint16_t in_port,
		uint16_t out_port, bool mac_updating, const uint8_t mac[6],
		uint32_t snaplen)
{
	static uint8_t want[MAX_FRAME];
	char got_hex[64], want_hex[64];
	size_t i, o = 0;

	for (i = 0; i < in->n; i++) {
		const struct l2t_frame *g;
		uint32_t cap, k;

		if (!expected_output(&in->f[i], mac_updating, out_port, mac, want))
			continue;
		cr_assert(o < out->n,
			  "%s: port %u wrote %zu frames; input frame %zu of port %u "
			  "(%u bytes) and later ones are missing", label, out_port,
			  out->n, i, in_port, in->f[i].len);
		g = &out->f[o];
		cap = in->f[i].len < snaplen ? in->f[i].len : snaplen;
		cr_assert(g->len == in->f[i].len && g->caplen == cap,
			  "%s: port %u frame %zu: %u bytes (%u captured), expected "
			  "input frame %zu of port %u: %u bytes (%u captured)",
			  label, out_port, o, g->len, g->caplen, i, in_port,
			  in->f[i].len, cap);
		for (k = 0; k < cap && g->data[k] == want[k]; k++)
			;
		if (k < cap) {
			format_bytes(got_hex, sizeof(got_hex), g->data + k,
				     cap - k < 16 ? cap - k : 16);
			format_bytes(want_hex, sizeof(want_hex), want + k,
				     cap - k < 16 ? cap - k : 16);
			cr_assert_fail("%s: port %u frame %zu (input frame %zu of "
				       "port %u, %u bytes) differs at byte %u: "
				       "%s, expected %s", label, out_port, o, i,
				       in_port, g->len, k, got_hex, want_hex);
		}
		o++;
	}
	cr_assert(o == out->n, "%s: port %u wrote %zu frames, %zu expected: "
		  "duplicates or frames from elsewhere", label, out_port, out->n,
		  o);
}

struct fwd_case {
	char policy[16];
	char mode[8];
	bool load;
	bool mac_updating;
};

struct pcap_run {
	struct l2t_frames in[NB_PORTS];
	struct l2t_frames out[NB_PORTS];
	uint64_t runts[NB_PORTS];
	uint8_t mac[NB_PORTS][6];
	bool mac_updating;	/* learn the MACs before the run */
	json_t *report;
	char label[128];
};

/* The file of queue @queue of @port: "in0.pcap", or "in0.2.pcap". */
static const char *
pcap_file(const char *kind, unsigned int port, unsigned int queue,
	  unsigned int nb_queues)
{
	char name[32];

	if (nb_queues == 1)
		snprintf(name, sizeof(name), "%s%u.pcap", kind, port);
	else
		snprintf(name, sizeof(name), "%s%u.%u.pcap", kind, port, queue);
	return l2t_path(name);
}

/* net_pcap@port with one rx_pcap and one tx_pcap per queue. */
static void
pcap_vdev(char *buf, size_t len, unsigned int port, unsigned int nb_queues,
	  const char *tx_name)
{
	unsigned int q;
	size_t n;

	snprintf(buf, len, "net_pcap%u", port);
	for (q = 0; q < nb_queues; q++) {
		n = strlen(buf);
		snprintf(buf + n, len - n, ",rx_pcap=%s",
			 pcap_file("in", port, q, nb_queues));
	}
	for (q = 0; q < nb_queues; q++) {
		n = strlen(buf);
		snprintf(buf + n, len - n, ",tx_pcap=%s",
			 pcap_file(tx_name, port, q, nb_queues));
	}
	cr_assert(strlen(buf) + 1 < len, "--vdev too long: %s", buf);
}

/*
 * Write the inputs of @nb_queues runs (runs[q] holds queue q of each
 * port), learn the MACs if the first run wants them, and fill @vdev.
 */
static void
prepare_ports(struct pcap_run *runs, unsigned int nb_queues,
	      char vdev[NB_PORTS][L2T_ARG_LEN])
{
	char probe[NB_PORTS][L2T_ARG_LEN];
	const char *probe_vdevs[NB_PORTS + 1];
	unsigned int p, q;

	for (p = 0; p < NB_PORTS; p++) {
		for (q = 0; q < nb_queues; q++)
			l2t_pcap_write(pcap_file("in", p, q, nb_queues),
				       &runs[q].in[p]);
		pcap_vdev(vdev[p], L2T_ARG_LEN, p, nb_queues, "out");
		pcap_vdev(probe[p], sizeof(probe[p]), p, nb_queues, "probe");
		probe_vdevs[p] = probe[p];
	}
	probe_vdevs[NB_PORTS] = NULL;
	if (!runs[0].mac_updating)
		return;
	l2t_probe_macs(probe_vdevs, runs[0].mac, NB_PORTS);
	for (q = 1; q < nb_queues; q++)
		memcpy(runs[q].mac, runs[0].mac, sizeof(runs[0].mac));
}

static void
read_outputs(struct pcap_run *runs, unsigned int nb_queues)
{
	unsigned int p, q;

	for (p = 0; p < NB_PORTS; p++)
		for (q = 0; q < nb_queues; q++)
			l2t_pcap_read(pcap_file("out", p, q, nb_queues),
				      &runs[q].out[p]);
}

/* Write the inputs, learn the MACs, run l2fwd-sirq, read the outputs. */
static void
run_l2fwd(struct pcap_run *run, const char *const *extra, unsigned int nb_extra)
{
	char vdev[NB_PORTS][L2T_ARG_LEN];
	struct l2t_result res;
	struct l2t_argv a = { .argc = 0 };
	unsigned int p, i;

	prepare_ports(run, 1, vdev);
	l2t_eal_args(&a, l2t_env("L2FWD_SIRQ"));
	for (p = 0; p < NB_PORTS; p++)
		l2t_arg(&a, "--vdev=%s", vdev[p]);
	l2t_arg(&a, "--");
	l2t_arg(&a, "--duration");
	l2t_arg(&a, RUN_SECONDS);
	l2t_arg(&a, "-T");
	l2t_arg(&a, "0");
	l2t_arg(&a, "--report");
	l2t_arg(&a, "%s", l2t_path("report.json"));
	for (i = 0; i < nb_extra; i++)
		l2t_arg(&a, "%s", extra[i]);
	l2t_run(&a, &res);
	cr_assert(res.status == 0, "%s: l2fwd-sirq exited %d:\n%s%s", run->label,
		  res.status, l2t_app_lines(res.out), l2t_app_lines(res.err));
	l2t_result_free(&res);

	run->report = l2t_report_load(l2t_path("report.json"));
	read_outputs(run, 1);
}

/* The size of the pcap file that holds @in's non-runts, forwarded. */
static long long
forwarded_pcap_size(const struct l2t_frames *in)
{
	long long size = PCAP_FILE_HEADER;
	size_t i;

	for (i = 0; i < in->n; i++)
		if (in->f[i].len >= ETHER_HDR_LEN)
			size += PCAP_RECORD_HEADER + in->f[i].len;
	return size;
}

/*
 * The report counts what the pcap files show: @frames replayed and
 * @runts among them, per port.
 */
static void
check_report_counts_of(const char *label, json_t *report,
		       const uint64_t frames[NB_PORTS],
		       const uint64_t runts[NB_PORTS])
{
	unsigned int p;

	for (p = 0; p < NB_PORTS; p++) {
		json_t *jp = l2t_report_port(report, p);
		unsigned int peer = p ^ 1;

		cr_expect(l2t_json_u64(jp, "rx") == frames[p],
			  "%s: port %u rx %" PRIu64 ", %" PRIu64 " frames replayed",
			  label, p, l2t_json_u64(jp, "rx"), frames[p]);
		cr_expect(l2t_json_u64(jp, "runts") == runts[p],
			  "%s: port %u runts %" PRIu64 ", %" PRIu64 " in its input",
			  label, p, l2t_json_u64(jp, "runts"), runts[p]);
		cr_expect(l2t_json_u64(jp, "tx") == frames[peer] - runts[peer],
			  "%s: port %u tx %" PRIu64 ", %" PRIu64 " non-runts from port %u",
			  label, p, l2t_json_u64(jp, "tx"),
			  frames[peer] - runts[peer], peer);
		cr_expect(l2t_json_u64(jp, "link_down_drops") == 0,
			  "%s: port %u link_down_drops %" PRIu64, label, p,
			  l2t_json_u64(jp, "link_down_drops"));
	}
	cr_expect(l2t_report_lcores_sum(report, "tx_dropped") == 0,
		  "%s: tx_dropped %" PRIu64, label,
		  l2t_report_lcores_sum(report, "tx_dropped"));
	cr_expect(l2t_report_lcores_sum(report, "rx_dropped_at_stop") == 0,
		  "%s: rx_dropped_at_stop %" PRIu64, label,
		  l2t_report_lcores_sum(report, "rx_dropped_at_stop"));
	cr_expect(l2t_json_u64(report, "mbufs_in_use") == 0,
		  "%s: mbufs_in_use %" PRIu64 " after the ports closed",
		  label, l2t_json_u64(report, "mbufs_in_use"));
}

static void
check_report_counts(const struct pcap_run *run)
{
	const uint64_t frames[NB_PORTS] = { run->in[0].n, run->in[1].n };

	check_report_counts_of(run->label, run->report, frames, run->runts);
}

static void
free_run(struct pcap_run *run)
{
	unsigned int p;

	for (p = 0; p < NB_PORTS; p++) {
		l2t_frames_free(&run->in[p]);
		l2t_frames_free(&run->out[p]);
	}
	json_decref(run->report);
}

static void
suite_fini(void)
{
	l2t_cleanup();
}

TestSuite(l2fwd_pcap, .fini = suite_fini, .timeout = 60);

/*
 * Every policy in both modes, with and without the load; each pair of
 * policy and mode also sees both MAC settings (the rewrite happens in the
 * Rx function wherever NET_RX runs, so it needs no third dimension).
 */
#define CASES(policy) \
	{ policy, "poll", false, true }, { policy, "poll", true, false }, \
	{ policy, "irq", false, false }, { policy, "irq", true, true }

ParameterizedTestParameters(l2fwd_pcap, forwards_every_frame_exactly)
{
	static struct fwd_case cases[] = {
		CASES("mainline"), CASES("ksoftirqd"), CASES("kicinski"),
		CASES("deferred"),
	};

	return cr_make_param_array(struct fwd_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct fwd_case *c, l2fwd_pcap, forwards_every_frame_exactly)
{
	const char *extra[8];
	unsigned int nb = 0, p;
	struct pcap_run run;
	const char *s;

	memset(&run, 0, sizeof(run));
	snprintf(run.label, sizeof(run.label), "--policy %s --mode %s%s%s",
		 c->policy, c->mode, c->load ? " --app-load " APP_LOAD : "",
		 c->mac_updating ? "" : " --no-mac-updating");
	run.mac_updating = c->mac_updating;
	for (p = 0; p < NB_PORTS; p++)
		run.runts[p] = build_input((uint16_t)p, 0, ROUNDS, &run.in[p]);
	extra[nb++] = "--policy";
	extra[nb++] = c->policy;
	extra[nb++] = "--mode";
	extra[nb++] = c->mode;
	if (c->load) {
		extra[nb++] = "--app-load";
		extra[nb++] = APP_LOAD;
	}
	if (!c->mac_updating)
		extra[nb++] = "--no-mac-updating";
	run_l2fwd(&run, extra, nb);

	for (p = 0; p < NB_PORTS; p++)
		check_forwarded(run.label, &run.in[p], &run.out[p ^ 1],
				(uint16_t)p, (uint16_t)(p ^ 1), c->mac_updating,
				run.mac[p ^ 1], MAX_FRAME);
	check_report_counts(&run);

	s = json_string_value(json_object_get(run.report, "policy"));
	cr_expect(s != NULL && strcmp(s, c->policy) == 0,
		  "%s: report says policy %s", run.label, s ? s : "(none)");
	s = json_string_value(json_object_get(run.report, "mode"));
	cr_expect(s != NULL && strcmp(s, c->mode) == 0,
		  "%s: report says mode %s", run.label, s ? s : "(none)");
	if (c->load) {
		json_t *loads = json_object_get(run.report, "app_load");
		json_t *l = json_array_get(loads, 0);

		/* The load really ran beside the forwarding. */
		cr_expect(json_array_size(loads) == 1 &&
			  l2t_json_u64(l, "bursts") > 0 &&
			  l2t_json_u64(l, "work_units") > 0,
			  "%s: app_load did not run: %s", run.label,
			  json_dumps(loads, JSON_COMPACT));
	} else {
		cr_expect(json_array_size(json_object_get(run.report,
							  "app_load")) == 0,
			  "%s: app_load reported without --app-load", run.label);
	}
	free_run(&run);
}

/*
 * Beyond 9000 bytes: net_pcap receives a frame of any length (up to the
 * 65535 its Rx copies into a chain of mbufs) and l2fwd-sirq forwards it
 * whole (the report counts it), but net_pcap's TX writes at most
 * PCAP_TX_SNAPLEN bytes of a multi-segment mbuf: the record keeps the
 * frame's length with a caplen of 16128. This pins that behaviour of
 * DPDK 22.11, so that a change in either shows here.
 */
Test(l2fwd_pcap, frames_beyond_16128_bytes_are_forwarded_and_written_truncated)
{
	static const uint32_t sizes[] = {
		9001, 9728, 16127, 16128, 16129, 20000, 65535,
	};
	static uint8_t f[MAX_FRAME];
	struct frame_spec spec = { UNICAST, 0 };
	uint64_t rng = 0x6a6d626fULL;
	struct pcap_run run;
	unsigned int i, p;

	memset(&run, 0, sizeof(run));
	snprintf(run.label, sizeof(run.label), "frames of 9001..65535 bytes");
	run.mac_updating = true;
	for (p = 0; p < NB_PORTS; p++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			spec.len = sizes[i];
			l2t_frames_add(&run.in[p], f,
				       make_frame(f, &spec, &rng, (uint16_t)p, i));
		}
	run_l2fwd(&run, NULL, 0);
	for (p = 0; p < NB_PORTS; p++)
		check_forwarded(run.label, &run.in[p], &run.out[p ^ 1],
				(uint16_t)p, (uint16_t)(p ^ 1), true,
				run.mac[p ^ 1], PCAP_TX_SNAPLEN);
	check_report_counts(&run);
	free_run(&run);
}

/*
 * A run ended as a user ends it: every frame forwarded (both output
 * files hold what they must), then SIGINT. Wait for each output file of
 * @runs (runs[q] holds queue q of each port), then for @min_run_s since
 * the start, then stop it: exit code 0 within STOP_DEADLINE_S.
 */
#define FORWARD_DEADLINE_S 10
#define STOP_DEADLINE_S 10

static void
run_until_forwarded(struct l2t_proc *proc, struct pcap_run *runs,
		    unsigned int nb_queues, unsigned int min_run_s,
		    const char *label)
{
	struct timespec start, now;
	unsigned int p, q;
	int status;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (q = 0; q < nb_queues; q++)
		for (p = 0; p < NB_PORTS; p++)
			l2t_proc_wait_file_size(proc,
						pcap_file("out", p ^ 1, q, nb_queues),
						forwarded_pcap_size(&runs[q].in[p]),
						FORWARD_DEADLINE_S);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - start.tv_sec < (time_t)min_run_s)
		sleep(min_run_s - (unsigned int)(now.tv_sec - start.tv_sec));
	cr_assert(kill(proc->pid, SIGINT) == 0, "%s: SIGINT: %s", label,
		  strerror(errno));
	status = l2t_proc_wait(proc, STOP_DEADLINE_S);
	cr_assert(status == 0, "%s: exit code %d after SIGINT:\n%s", label,
		  status, l2t_app_lines(proc->buf));
}

/* Start l2fwd-sirq on @opt @lcores and the pcap ports, then "--" @args. */
static void
start_on_lcores(struct l2t_proc *proc, const char *opt, const char *lcores,
		char vdev[NB_PORTS][L2T_ARG_LEN], const char *const *args)
{
	struct l2t_argv a = { .argc = 0 };
	unsigned int p;

	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	l2t_eal_args_lcores(&a, l2t_env("L2FWD_SIRQ"), opt, lcores);
	for (p = 0; p < NB_PORTS; p++)
		l2t_arg(&a, "--vdev=%s", vdev[p]);
	l2t_arg(&a, "--");
	for (; *args != NULL; args++)
		l2t_arg(&a, "%s", *args);
	l2t_proc_start(proc, "l2fwd-sirq", &a);
}

/*
 * The hold-out of a new user (issue 14): l2fwd-sirq as DPDK's l2fwd is
 * run, on two net_pcap ports (one Rx and one TX queue each), with no
 * option after "--" but the portmask and the policy under test, stopped
 * with SIGINT, its report on stdout. Two lcores, or four: -l 0-3 leaves
 * two lcores without a queue, idle as in l2fwd. Where the machine has
 * fewer than four CPUs, "-l 0-3" is refused by EAL itself, so the same
 * four lcores go on its first two CPUs.
 */
struct holdout_case {
	char policy[16];
	bool four_lcores;
};

ParameterizedTestParameters(l2fwd_pcap, plain_l2fwd_command_line_forwards_every_frame_exactly)
{
	static struct holdout_case cases[] = {
		{ "mainline", false }, { "ksoftirqd", false },
		{ "kicinski", false }, { "deferred", false },
		{ "mainline", true }, { "ksoftirqd", true },
		{ "kicinski", true }, { "deferred", true },
	};

	return cr_make_param_array(struct holdout_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct holdout_case *c, l2fwd_pcap,
		  plain_l2fwd_command_line_forwards_every_frame_exactly)
{
	const char *args[] = { "-p", "0x3", "--policy", c->policy, NULL };
	const char *opt = "-l", *lcores = "0,1";
	char vdev[NB_PORTS][L2T_ARG_LEN];
	struct l2t_proc proc;
	struct pcap_run run;
	unsigned int p;
	const char *s;

	if (c->four_lcores) {
		bool four_cpus = sysconf(_SC_NPROCESSORS_ONLN) >= 4;

		opt = four_cpus ? "-l" : "--lcores";
		lcores = four_cpus ? "0-3" : "0@0,1@1,2@0,3@1";
	}
	memset(&run, 0, sizeof(run));
	snprintf(run.label, sizeof(run.label), "%s %s -- -p 0x3 --policy %s",
		 opt, lcores, c->policy);
	run.mac_updating = true;
	for (p = 0; p < NB_PORTS; p++)
		run.runts[p] = build_input((uint16_t)p, 0, ROUNDS, &run.in[p]);
	prepare_ports(&run, 1, vdev);
	start_on_lcores(&proc, opt, lcores, vdev, args);
	run_until_forwarded(&proc, &run, 1, 0, run.label);
	run.report = l2t_report_from_output(proc.buf);
	l2t_proc_reap(&proc);
	read_outputs(&run, 1);

	for (p = 0; p < NB_PORTS; p++)
		check_forwarded(run.label, &run.in[p], &run.out[p ^ 1],
				(uint16_t)p, (uint16_t)(p ^ 1), true,
				run.mac[p ^ 1], MAX_FRAME);
	check_report_counts(&run);
	s = json_string_value(json_object_get(run.report, "policy"));
	cr_expect(s != NULL && strcmp(s, c->policy) == 0,
		  "%s: report says policy %s", run.label, s ? s : "(none)");
	/* One lcore per queue: the extra ones of -l 0-3 forward nothing. */
	cr_expect(json_array_size(json_object_get(run.report, "lcores")) == 2,
		  "%s: %zu forwarding lcores, 2 expected", run.label,
		  json_array_size(json_object_get(run.report, "lcores")));
	free_run(&run);
}

/*
 * More lcores than CPUs (issue 14): eight lcores on two CPUs, each with
 * its dispatcher and sirqd, two net_pcap ports of four queues each
 * (--rxq 4), all defaults otherwise. Lcores 0-3 poll queues 0-3 of
 * port 0 and send on TX queues 0-3 of port 1 (numbered in lcore order),
 * lcores 4-7 the reverse; so TX queue q of a port must write queue q of
 * its pair's input, in order, every frame exactly once. It runs a few
 * seconds, then SIGINT: exit code 0, every mbuf back in its pool.
 */
#define MANY_LCORES "(0-7)@(0,1)"
#define MANY_QUEUES 4
#define MANY_ROUNDS 10
#define MANY_RUN_S 3

Test(l2fwd_pcap, eight_lcores_on_two_cpus_forward_every_frame_exactly_once)
{
	const char *args[] = { "--rxq", "4", "-T", "0", NULL };
	char vdev[NB_PORTS][L2T_ARG_LEN];
	struct pcap_run runs[MANY_QUEUES];
	uint64_t frames[NB_PORTS] = { 0 }, runts[NB_PORTS] = { 0 };
	struct l2t_proc proc;
	unsigned int p, q;
	json_t *report;

	memset(runs, 0, sizeof(runs));
	for (q = 0; q < MANY_QUEUES; q++) {
		snprintf(runs[q].label, sizeof(runs[q].label),
			 "--lcores '%s' -- --rxq 4, queue %u", MANY_LCORES, q);
		runs[q].mac_updating = true;
		for (p = 0; p < NB_PORTS; p++) {
			runs[q].runts[p] = build_input((uint16_t)p, (uint16_t)q,
						       MANY_ROUNDS, &runs[q].in[p]);
			frames[p] += runs[q].in[p].n;
			runts[p] += runs[q].runts[p];
		}
	}
	prepare_ports(runs, MANY_QUEUES, vdev);
	start_on_lcores(&proc, "--lcores", MANY_LCORES, vdev, args);
	run_until_forwarded(&proc, runs, MANY_QUEUES, MANY_RUN_S,
			    runs[0].label);
	report = l2t_report_from_output(proc.buf);
	l2t_proc_reap(&proc);
	read_outputs(runs, MANY_QUEUES);

	for (q = 0; q < MANY_QUEUES; q++)
		for (p = 0; p < NB_PORTS; p++)
			check_forwarded(runs[q].label, &runs[q].in[p],
					&runs[q].out[p ^ 1], (uint16_t)p,
					(uint16_t)(p ^ 1), true,
					runs[q].mac[p ^ 1], MAX_FRAME);
	check_report_counts_of(runs[0].label, report, frames, runts);
	cr_expect(json_array_size(json_object_get(report, "lcores")) == 8,
		  "%zu forwarding lcores, 8 expected",
		  json_array_size(json_object_get(report, "lcores")));
	json_decref(report);
	for (q = 0; q < MANY_QUEUES; q++)
		free_run(&runs[q]);
}
