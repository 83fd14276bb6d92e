/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_ECHO_STACK_H
#define SIRQ_ECHO_STACK_H

/*
 * The TCP echo server of tcp-echo: Debian's lwIP (raw API) behind one
 * Ethernet netif, and the echo logic on top, with no DPDK inside. Frames
 * come in through echo_stack_input*() and leave through the xmit callback
 * of the configuration, which tcp-echo points at an rte_mbuf and
 * sirq_tx_tracked(); a fuzzer can point it at nothing and call
 * echo_stack_input() with any bytes.
 *
 * lwIP is one global stack (Debian builds it NO_SYS=0 with core locking),
 * so there is one echo_stack per process. Every entry point below takes
 * the lwIP core lock itself; the callbacks it makes run with it held.
 *
 * TCP small queues: each connection may have at most tsq_limit bytes
 * handed to the NIC and not yet released (its sirq_tx_tracker). The echo
 * data waiting to be written back stays in the connection's backlog
 * (and in the receive window it keeps closed) until TX completion runs
 * the connection's tasklet, which pushes the next batch.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sirq.h>

struct pbuf;
struct echo_conn;

/*
 * Transmit one Ethernet frame (a pbuf chain, copied by the callee before
 * it returns). @tracker is the TCP connection's TSQ tracker, or NULL for
 * frames of no connection (ARP, ICMP, closed connections).
 * Returns 0 or a negative errno (the frame is dropped and counted).
 */
typedef int (*echo_xmit_fn_t)(void *arg, struct pbuf *p,
			      struct sirq_tx_tracker *tracker);

struct echo_stack_conf {
	uint32_t ip;			/* network byte order */
	uint32_t netmask;		/* network byte order */
	uint16_t port;			/* TCP port, host order */
	uint8_t mac[6];
	uint16_t mtu;
	uint32_t max_conns;		/* concurrent connections */
	uint32_t tsq_limit;		/* bytes per connection at the NIC */
	echo_xmit_fn_t xmit;
	void *xmit_arg;
};

/* Counters; written under the core lock, read racily by the stats line. */
struct echo_stats {
	uint64_t frames_in;
	uint64_t frames_runt;		/* shorter than an Ethernet header */
	uint64_t frames_oversize;	/* longer than mtu + link header */
	uint64_t frames_filtered;	/* not ARP or IPv4, or from/to 127/8 or from us */
	uint64_t rx_nomem;		/* no pbuf for a frame */
	uint64_t frames_out;
	uint64_t tx_errors;		/* the xmit callback refused */
	uint64_t conns_accepted;
	uint64_t conns_refused;		/* max_conns reached */
	uint64_t conns_closed;		/* FIN both ways */
	uint64_t conns_reset;		/* RST or lwIP abort */
	uint64_t bytes_in;		/* TCP payload received */
	uint64_t bytes_echoed;		/* TCP payload written back */
	uint64_t tsq_throttled;		/* pushes stopped by the TSQ limit */
	uint64_t tsq_tasklet_runs;	/* completion tasklet pushes */
};

#define ECHO_DEFAULT_PORT 7
/*
 * Bytes per connection at the NIC. The kernel's tcp_limit_output_bytes
 * is 1 MB for 100 Gbit/s NICs; at the rates of a tap or one core it would
 * never bind. 16 KB is about 1 ms of a 100 Mbit/s flow, eleven full
 * segments: the echo of a small request always fits, a 1 MB one is fed
 * in batches by the completion tasklet.
 */
#define ECHO_DEFAULT_TSQ_LIMIT 16384
#define ECHO_DEFAULT_MAX_CONNS 1024
#define ECHO_MAX_CONNS 65536
/* Longest frame accepted: a VLAN-tagged header over the MTU. */
#define ECHO_LINK_HLEN_MAX 18

/*
 * Initialise lwIP (lwip_init(), the core lock), add the netif, bring it
 * up and listen. Call once. Returns 0 or a negative errno.
 */
int echo_stack_init(const struct echo_stack_conf *conf);

/* Abort every connection (RST), free what they hold, stop listening. */
void echo_stack_shutdown(void);

/*
 * Feed one received Ethernet frame, copied. Any bytes at all: runts,
 * oversized and malformed frames are counted or dropped by lwIP. Takes
 * the core lock. The fuzz entry point.
 */
void echo_stack_input(const void *frame, size_t len);

/*
 * As echo_stack_input() for a burst of frames given as segment lists:
 * frame i has nb_segs[i] segments, each (seg_data, seg_len). One lock for
 * the burst. tcp-echo passes its rte_mbuf chains this way.
 */
struct echo_frame {
	uint32_t len;			/* total */
	uint16_t nb_segs;
	const void *const *seg_data;
	const uint16_t *seg_len;
};
void echo_stack_input_burst(const struct echo_frame *frames, unsigned int n);

/* Run lwIP's timeouts (sys_check_timeouts()). Takes the core lock. */
void echo_stack_timeouts(void);

/* Connections now. */
uint32_t echo_stack_active_conns(void);

/* Copy of the counters. */
void echo_stack_stats(struct echo_stats *st);

#endif /* SIRQ_ECHO_STACK_H */
