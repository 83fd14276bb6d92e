/* SPDX-License-Identifier: BSD-3-Clause */

/* The options of l2fwd-sirq and the --portmap parser. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "l2fwd.h"

#define L2(field) offsetof(struct l2fwd_opts, field)

static int
parse_receiver(void *conf, const char *value, char *err, size_t len)
{
	struct l2fwd_opts *o = conf;

	return l2fwd_receiver_parse(value, &o->receiver, err, len);
}

static int
parse_probe(void *conf, const char *value, char *err, size_t len)
{
	struct l2fwd_opts *o = conf;

	return l2fwd_probe_parse(value, &o->probe, err, len);
}

const struct app_opt l2fwd_opts_table[] = {
	{ "portmask", 'p', "l2fwd", APP_OPT_HEX64, L2(portmask), 1, UINT64_MAX,
	  "MASK", "hexadecimal mask of the ports to use", NULL, NULL },
	{ "queues", 'q', "l2fwd", APP_OPT_U32, L2(queues_per_lcore), 0,
	  L2FWD_MAX_RX_PER_LCORE, "N", "Rx queues per forwarding lcore; 0: spread over all lcores",
	  NULL, NULL },
	{ "rxq", 0, "l2fwd", APP_OPT_U16, L2(rxq_per_port), 1, 16, "N",
	  "Rx queues per port (RSS), where the PMD has them", NULL, NULL },
	{ "period", 'T', "l2fwd", APP_OPT_U32, L2(period_s), 0, 86400, "S",
	  "statistics every S seconds, 0 to disable", NULL, NULL },
	{ "mac-updating", 0, "l2fwd", APP_OPT_FLAG_ON, L2(mac_updating), 0, 0,
	  NULL, "rewrite the MAC addresses (the default)", NULL, NULL },
	{ "no-mac-updating", 0, "l2fwd", APP_OPT_FLAG_OFF, L2(mac_updating), 0,
	  0, NULL, "forward frames unchanged", NULL, NULL },
	/*
	 * l2fwd's -P puts the ports in promiscuous mode; l2fwd-sirq always
	 * does (a forwarder whose peer's MAC it does not know must take
	 * every frame), so -P is taken for l2fwd's command lines.
	 */
	{ "promiscuous", 'P', "l2fwd", APP_OPT_FLAG_ON, L2(promiscuous), 0, 0,
	  NULL, "taken for DPDK l2fwd's command lines: every port is put in promiscuous mode anyway (where the PMD has it)",
	  NULL, NULL },
	{ "portmap", 0, "l2fwd", APP_OPT_STRING, L2(portmap), 0, 0, "MAP",
	  "port pairs, e.g. \"(0,1)(2,3)\"; \"(0,0)\": port 0 sends back what it receives, as testpmd's --port-topology=loop (unset: pairs in port order)",
	  NULL, NULL },
	{ "receiver", 0, "l2fwd", APP_OPT_CUSTOM, 0, 0, 0, "SPEC",
	  "receive instead of forwarding: NET_RX queues each packet on a socket of rcvbuf packets after proto of work, threads on the lcore's CPUs read it at app a packet: proto=1us,app=1us,rcvbuf=256,threads=1[,nice=0], or off",
	  parse_receiver, L2FWD_RECEIVER_DEFAULT_TEXT },
	{ "probe", 0, "l2fwd", APP_OPT_CUSTOM, 0, 0, 0, "SPEC",
	  "latency probes on each lcore: a periodic rte_timer every P (TIMER raised every P) and a tasklet scheduled every Q from a timer callback (TASKLET raised every Q); the report's TIMER and TASKLET latency: timer=1ms,tasklet=1ms (10us..10s, either alone), on (both 1ms) or off",
	  parse_probe, L2FWD_PROBE_DEFAULT_TEXT },
	{ "busy-poll", 0, "l2fwd", APP_OPT_FLAG_ON, L2(busy.enabled), 0, 0,
	  NULL, "an application thread on each lcore's CPU busy-polls its Rx queues as epoll_wait() does (sirq_napi_busy_poll()), sleeping when it finds nothing",
	  NULL, NULL },
	{ "busy-poll-us", 0, "l2fwd", APP_OPT_U32, L2(busy.poll_us), 0, 1000000,
	  "US", "--busy-poll: spin this long without packets before sleeping (busy_poll_usecs); 0: one poll",
	  NULL, NULL },
	{ "busy-poll-budget", 0, "l2fwd", APP_OPT_U16, L2(busy.budget), 1, 256,
	  "N", "--busy-poll: packets per poll (busy_poll_budget)", NULL, NULL },
	{ "prefer-busy-poll", 0, "l2fwd", APP_OPT_FLAG_ON, L2(busy.prefer), 0,
	  0, NULL, "--busy-poll: NET_RX stands aside while the application polls; with --irq-suspend-timeout-us its finds keep interrupts off (prefer_busy_poll)",
	  NULL, NULL },
};

const size_t l2fwd_nb_opts = RTE_DIM(l2fwd_opts_table);

void
l2fwd_opts_defaults(struct l2fwd_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->queues_per_lcore = 0;
	o->rxq_per_port = 1;
	o->period_s = L2FWD_STATS_PERIOD_DEFAULT;
	o->mac_updating = true;
	o->portmask = 0x3;
	l2fwd_receiver_spec_default(&o->receiver);
	l2fwd_probe_spec_default(&o->probe);
	o->busy.budget = SIRQ_BUSY_POLL_BUDGET_DEFAULT;
}

int
l2fwd_parse_portmap(const char *s, struct l2fwd_port *ports)
{
	unsigned int a, b;

	while (*s != '\0') {
		/* "(0,1" converts both numbers but never reaches %n. */
		int used = -1;

		if (sscanf(s, " (%u ,%u )%n", &a, &b, &used) != 2 || used < 0 ||
		    a >= RTE_MAX_ETHPORTS || b >= RTE_MAX_ETHPORTS) {
			fprintf(stderr, L2FWD_PROG ": --portmap: bad pair at '%s'\n", s);
			return -EINVAL;
		}
		ports[a].dst = (uint16_t)b;
		ports[b].dst = (uint16_t)a;
		ports[a].enabled = ports[b].enabled = true;
		s += used;
	}
	return 0;
}
