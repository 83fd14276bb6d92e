/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef L2FWD_RECEIVER_H
#define L2FWD_RECEIVER_H

/*
 * --receiver: the flood scenario of 4cd13c21b207 ("softirq: Let
 * ksoftirqd do its job", 2016) as the commit measured it, a UDP receiver
 * on the flooded CPU.
 *
 * NET_RX does not forward. For each packet it spends the protocol cost
 * (the kernel's path from the driver to a socket: `proto`, 1 us by
 * default, a busy spin on the TSC) and queues the mbuf on the lcore's
 * socket, a bounded queue of `rcvbuf` packets. A full socket drops the
 * packet (the mbuf is freed) and counts it, as UDP counts RcvbufErrors;
 * a packet queued while a reader sleeps wakes one (sk_data_ready() and an
 * exclusive waiter). The application's `threads` readers run on the
 * lcore's CPUs at SCHED_OTHER (`nice`), like the --app-load threads:
 * each takes what is queued (recvmsg(), or recvmmsg() of up to
 * L2FWD_RCV_BATCH), spends `app` (1 us) per packet, frees it and counts
 * it received. A reader with nothing to read blocks on a futex, as
 * recvmsg() sleeps on the socket.
 *
 * Books, per lcore: processed = received + drops + queued (+ drained at
 * exit, once the readers have stopped).
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <sirq.h>

#include "app_cpu.h"

#define L2FWD_RCV_MAX_THREADS 16
/* Packets a reader takes from the socket at once (recvmmsg()). */
#define L2FWD_RCV_BATCH 32

struct l2fwd_receiver_spec {
	bool enabled;
	uint64_t proto_ns;	/* NET_RX's cost per packet */
	uint64_t app_ns;	/* the reader's cost per packet */
	uint32_t rcvbuf;	/* socket queue, packets */
	uint32_t threads;	/* readers per lcore */
	int nice;
};

void l2fwd_receiver_spec_default(struct l2fwd_receiver_spec *s);

/*
 * Parse "proto=1us,app=1us,rcvbuf=256,threads=1,nice=0" (any subset, any
 * order; "on" alone takes the defaults) over @s; "off" disables. 0, or -1
 * with a message naming the bad item in @err.
 */
int l2fwd_receiver_parse(const char *text, struct l2fwd_receiver_spec *s,
			 char *err, size_t len);

/* --help's text for the default. */
#define L2FWD_RECEIVER_DEFAULT_TEXT "off"

struct rte_ring;
struct rte_mbuf;

/* CPU time of the three parties on an lcore's CPU, sampled together. */
struct l2fwd_cpu_split {
	uint64_t at_ns;		/* CLOCK_MONOTONIC of the sample; 0: none yet */
	uint64_t receiver_ns;	/* all readers */
	uint64_t sirqd_ns;
	/* ktimers/N, sirq-<vec>/N and the NAPI threads napi/N-I. */
	uint64_t threads_ns;
	uint64_t dispatcher_ns;	/* since it entered sirq_lcore_main() */
};

/* One reader thread. */
struct l2fwd_reader {
	struct l2fwd_receiver *rcv;
	pthread_t thread;
	clockid_t clock;
	/* The futex it sleeps on: 1 while it waits for a packet. */
	uint32_t waiting;
};

/* One lcore's socket and its readers. */
struct l2fwd_receiver {
	struct l2fwd_receiver_spec spec;
	unsigned int lcore_id;
	struct rte_ring *sock;
	uint64_t proto_cycles;
	uint64_t app_cycles;
	uint64_t start_ns;

	struct l2fwd_reader reader[L2FWD_RCV_MAX_THREADS];
	uint32_t nb_readers;
	uint32_t stop;

	/* NET_RX: one writer at a time (the execution lock). */
	uint64_t processed;
	uint64_t drops;		/* UDP RcvbufErrors */
	uint64_t wakeups;	/* sleeping readers woken */
	/* The readers. */
	uint64_t received;
	/* main() after the readers stopped. */
	uint64_t drained_at_exit;

	/* CPU clocks of the lcore's threads, for the split. */
	struct app_cpu cpu;
	struct l2fwd_cpu_split split;
};

/*
 * Set up an lcore's socket (on @socket_id) before launch. 0, or a
 * negative errno after a message.
 */
int l2fwd_receiver_init(struct l2fwd_receiver *r,
			const struct l2fwd_receiver_spec *spec,
			unsigned int lcore_id, int socket_id);

/*
 * NET_RX in place of l2fwd_rx() (a sirq_rx_fn_t, @arg a struct
 * l2fwd_receiver): protocol cost, then the socket or a drop.
 */
void l2fwd_receiver_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
		       struct rte_mbuf **pkts, uint16_t n, void *arg);

/*
 * The lcore's dispatcher thread, from that thread as it enters
 * sirq_lcore_main(): its CPU clock and where it starts.
 */
void l2fwd_receiver_dispatcher_started(struct l2fwd_receiver *r);

/*
 * Start the readers, pinned to the lcore's CPUs. 0, or a negative errno
 * after a message (the readers started are stopped).
 */
int l2fwd_receiver_start(struct l2fwd_receiver *r);

/*
 * Stop and join the readers (each finishes the packets it took), then
 * free what is still queued (drained_at_exit). Any time after start.
 */
void l2fwd_receiver_stop(struct l2fwd_receiver *r);

/* Free the socket (empty after l2fwd_receiver_stop()). */
void l2fwd_receiver_free(struct l2fwd_receiver *r);

/*
 * Sample the CPU clocks of the readers, the lcore's sirqd and its
 * dispatcher into r->split. From one thread at a time (the control
 * timer); the report reads the last sample.
 */
void l2fwd_receiver_sample_cpu(struct l2fwd_receiver *r);

/* The JSON object of one lcore's receiver, over @elapsed_ns. */
void l2fwd_receiver_json(FILE *f, const struct l2fwd_receiver *r,
			 uint64_t elapsed_ns);

/* One line of the statistics. */
void l2fwd_receiver_print(FILE *f, const struct l2fwd_receiver *r,
			  uint64_t elapsed_ns);

#endif /* L2FWD_RECEIVER_H */
