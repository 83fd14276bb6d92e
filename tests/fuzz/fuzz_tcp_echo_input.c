/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: tcp-echo's netif input, the frames NET_RX hands to
 * lwIP (echo_stack_input()), without DPDK: the xmit callback takes the
 * place of sirq_tx and keeps nothing.
 *
 * Input: a sequence of frames, each a 2-byte little-endian length and
 * that many bytes (what is left at the end is one more frame), so that
 * one input can hold a handshake and the segments after it. The stack is
 * one per process and keeps its connections from input to input, as a
 * server does.
 * Oracles: the sanitizers; every frame is counted once (delivered, runt,
 * oversize or no memory); what
 * the stack sends is a whole Ethernet frame no longer than the MTU
 * allows; connections never exceed max_conns.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <lwip/pbuf.h>
#include <lwip/sys.h>

#include "echo_stack.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The seeds' addresses: 10.0.0.1/24, port 7, MAC 02:00:00:00:00:01. */
#define FUZZ_IP "10.0.0.1"
#define FUZZ_NETMASK "255.255.255.0"
#define FUZZ_MTU 1500
#define FUZZ_MAX_CONNS 64
#define FUZZ_LEN_BYTES 2
#define ETH_HLEN_MIN 14

static uint64_t frames_out;

/*
 * lwIP's clock, interposed on liblwip's own: every input is
 * FUZZ_TICK_MS later than the one before, so the stack's timers (TCP
 * retransmission and TIME_WAIT, ARP ageing, IP reassembly's 15 s) run
 * within seconds of fuzzing and the same inputs take the same paths.
 */
#define FUZZ_TICK_MS 250
static u32_t fuzz_now_ms;

u32_t
sys_now(void)
{
	return fuzz_now_ms;
}

static int
drop_frame(void *arg, struct pbuf *p, struct sirq_tx_tracker *tracker)
{
	(void)arg;
	(void)tracker;
	if (p->tot_len < ETH_HLEN_MIN ||
	    p->tot_len > FUZZ_MTU + ECHO_LINK_HLEN_MAX) {
		fprintf(stderr, "fuzz: sent a frame of %u bytes\n", p->tot_len);
		abort();
	}
	frames_out++;
	return 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct echo_stack_conf conf = {
		.port = ECHO_DEFAULT_PORT,
		.mac = { 0x02, 0, 0, 0, 0, 0x01 },
		.mtu = FUZZ_MTU,
		.max_conns = FUZZ_MAX_CONNS,
		.tsq_limit = ECHO_DEFAULT_TSQ_LIMIT,
		.xmit = drop_frame,
	};

	(void)argc;
	(void)argv;
	conf.ip = inet_addr(FUZZ_IP);
	conf.netmask = inet_addr(FUZZ_NETMASK);
	if (echo_stack_init(&conf) != 0) {
		fprintf(stderr, "fuzz: echo_stack_init failed\n");
		abort();
	}
	return 0;
}

/* Frames the stack has accounted for, one way or another. */
static uint64_t
counted(const struct echo_stats *st)
{
	return st->frames_in + st->frames_runt + st->frames_oversize +
		st->rx_nomem;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct echo_stats before, after;
	uint64_t frames = 0;
	size_t len;

	echo_stack_stats(&before);
	while (size > 0) {
		if (size > FUZZ_LEN_BYTES) {
			len = (size_t)data[0] | (size_t)data[1] << 8;
			data += FUZZ_LEN_BYTES;
			size -= FUZZ_LEN_BYTES;
			if (len > size)
				len = size;
		} else {
			len = size;
		}
		echo_stack_input(data, len);
		frames++;
		data += len;
		size -= len;
	}
	fuzz_now_ms += FUZZ_TICK_MS;
	echo_stack_timeouts();
	echo_stack_stats(&after);
	if (counted(&after) - counted(&before) != frames ||
	    echo_stack_active_conns() > FUZZ_MAX_CONNS) {
		fprintf(stderr, "fuzz: %lu frames in, %lu counted, %u connections\n",
			(unsigned long)frames,
			(unsigned long)(counted(&after) - counted(&before)),
			echo_stack_active_conns());
		abort();
	}
	return 0;
}
