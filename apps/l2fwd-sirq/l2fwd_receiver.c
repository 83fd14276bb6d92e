/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * --receiver: a UDP receiver on the flooded CPU (l2fwd_receiver.h), the
 * measurement of 4cd13c21b207: about 2,000 packets/s read before the
 * commit, about 900,000 after, the CPU split 50/50 between the receiver
 * and ksoftirqd.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_atomic.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "app_opts.h"
#include "l2fwd.h"
#include "l2fwd_receiver.h"

#define NS_PER_US UINT64_C(1000)
#define NS_PER_MS UINT64_C(1000000)
#define NS_PER_SEC UINT64_C(1000000000)

/*
 * About 1 us a packet each way: the kernel's path from the driver to a
 * UDP socket, and a recvmsg() with a little work on the datagram. The
 * simulator's flood scenario uses the same 1 us (docs/policies.md).
 */
#define RCV_PROTO_DEFAULT NS_PER_US
#define RCV_APP_DEFAULT NS_PER_US
/*
 * 256 packets: what a default net.core.rmem_default (208 KiB) holds of
 * small datagrams once each is charged its skb truesize (about 768 B).
 */
#define RCV_RCVBUF_DEFAULT 256
#define RCV_RCVBUF_MAX (1u << 20)
#define RCV_COST_MAX (10 * NS_PER_MS)
#define RCV_THREADS_DEFAULT 1

void
l2fwd_receiver_spec_default(struct l2fwd_receiver_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->proto_ns = RCV_PROTO_DEFAULT;
	s->app_ns = RCV_APP_DEFAULT;
	s->rcvbuf = RCV_RCVBUF_DEFAULT;
	s->threads = RCV_THREADS_DEFAULT;
}

static int
cost_item(const char *key, const char *val, uint64_t *ns, char *err,
	  size_t len)
{
	if (app_parse_duration_ns(val, ns) == 0 && *ns <= RCV_COST_MAX)
		return 0;
	snprintf(err, len, "--receiver: bad %s '%s' (0..%" PRIu64 "ms)", key,
		 val, RCV_COST_MAX / NS_PER_MS);
	return -1;
}

static int
receiver_item(void *spec, const char *key, const char *val, char *err,
	      size_t len)
{
	struct l2fwd_receiver_spec *s = spec;
	char *end;
	long n;

	if (val == NULL || *val == '\0')
		goto bad;
	if (strcmp(key, "proto") == 0)
		return cost_item(key, val, &s->proto_ns, err, len);
	if (strcmp(key, "app") == 0)
		return cost_item(key, val, &s->app_ns, err, len);
	if (strcmp(key, "rcvbuf") != 0 && strcmp(key, "threads") != 0 &&
	    strcmp(key, "nice") != 0)
		goto bad;
	errno = 0;
	n = strtol(val, &end, 10);
	if (errno == 0 && *end != '\0')
		errno = EINVAL;
	if (strcmp(key, "rcvbuf") == 0) {
		if (errno == 0 && n >= 1 && n <= (long)RCV_RCVBUF_MAX) {
			s->rcvbuf = (uint32_t)n;
			return 0;
		}
		snprintf(err, len, "--receiver: bad rcvbuf '%s' (1..%u packets)",
			 val, RCV_RCVBUF_MAX);
		return -1;
	}
	if (strcmp(key, "threads") == 0) {
		if (errno == 0 && n >= 1 && n <= L2FWD_RCV_MAX_THREADS) {
			s->threads = (uint32_t)n;
			return 0;
		}
		snprintf(err, len, "--receiver: bad threads '%s' (1..%u)", val,
			 L2FWD_RCV_MAX_THREADS);
		return -1;
	}
	if (errno == 0 && n >= -20 && n <= 19) {
		s->nice = (int)n;
		return 0;
	}
	snprintf(err, len, "--receiver: bad nice '%s' (-20..19)", val);
	return -1;
bad:
	snprintf(err, len, "--receiver: bad item '%s%s%s'", key,
		 val != NULL ? "=" : "", val != NULL ? val : "");
	return -1;
}

int
l2fwd_receiver_parse(const char *text, struct l2fwd_receiver_spec *s,
		     char *err, size_t len)
{
	int ret = app_spec_parse("--receiver", text, receiver_item, s, err,
				 len);

	if (ret != 0) {
		if (ret > 0)
			s->enabled = false;
		return ret > 0 ? 0 : -1;
	}
	s->enabled = true;
	return 0;
}

static uint64_t
ns_to_cycles(uint64_t ns)
{
	return ns * rte_get_tsc_hz() / NS_PER_SEC;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/*
 * The per-packet cost: a busy spin to a TSC deadline (rte_get_tsc_hz() is
 * EAL's calibrated TSC rate). A thread preempted inside a spin finds its
 * deadline passed when it runs again: one packet per preemption comes
 * cheap, hundreds a second against hundreds of thousands of packets.
 */
static inline void
spend_cycles(uint64_t cycles)
{
	uint64_t start;

	if (cycles == 0)
		return;
	start = rte_rdtsc();
	while (rte_rdtsc() - start < cycles)
		rte_pause();
}

static long
futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

int
l2fwd_receiver_init(struct l2fwd_receiver *r,
		    const struct l2fwd_receiver_spec *spec,
		    unsigned int lcore_id, int socket_id)
{
	char name[RTE_RING_NAMESIZE];

	memset(r, 0, sizeof(*r));
	r->spec = *spec;
	r->lcore_id = lcore_id;
	app_cpu_init(&r->cpu, lcore_id);
	r->proto_cycles = ns_to_cycles(spec->proto_ns);
	r->app_cycles = ns_to_cycles(spec->app_ns);
	r->start_ns = now_ns();
	/*
	 * One producer, NET_RX (dispatcher and sirqd take turns under the
	 * execution lock). The readers share the CPU under the fair
	 * scheduler: with relaxed tail sync a reader preempted in a dequeue
	 * does not make the others spin until it runs again.
	 */
	snprintf(name, sizeof(name), "l2fwd_sock_%u", lcore_id);
	r->sock = rte_ring_create(name, spec->rcvbuf, socket_id,
				  RING_F_EXACT_SZ | RING_F_SP_ENQ |
				  RING_F_MC_RTS_DEQ);
	if (r->sock == NULL) {
		fprintf(stderr, L2FWD_PROG ": lcore %u: socket queue of %u packets: %s\n",
			lcore_id, spec->rcvbuf, rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

static inline void
count(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/*
 * sk_data_ready(): wake one sleeping reader (recvmsg() waits as an
 * exclusive waiter). The waker clears the reader's flag, as the kernel's
 * wake-up takes the waiter off the queue, so that the packets queued
 * before the reader runs do not wake it again.
 */
static inline void
data_ready(struct l2fwd_receiver *r)
{
	uint32_t i, n = __atomic_load_n(&r->nb_readers, __ATOMIC_ACQUIRE);

	/* The enqueue before the reads of the flags (the reader: after). */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++) {
		struct l2fwd_reader *rd = &r->reader[i];
		uint32_t one = 1;

		if (__atomic_load_n(&rd->waiting, __ATOMIC_RELAXED) == 1 &&
		    __atomic_compare_exchange_n(&rd->waiting, &one, 0, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED)) {
			futex(&rd->waiting, FUTEX_WAKE_PRIVATE, 1);
			count(&r->wakeups, 1);
			return;
		}
	}
}

void
l2fwd_receiver_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
		  struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct l2fwd_receiver *r = arg;
	uint64_t drops = 0;
	uint16_t i;

	RTE_SET_USED(lc);
	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	for (i = 0; i < n; i++) {
		spend_cycles(r->proto_cycles);
		if (unlikely(rte_ring_sp_enqueue(r->sock, pkts[i]) != 0)) {
			rte_pktmbuf_free(pkts[i]);
			drops++;
		}
	}
	/*
	 * One wake-up for the burst. The kernel's reader, woken by the
	 * first packet, cannot run before the softirq ends (it runs with
	 * preemption off); a reader woken here could preempt a fair-class
	 * sirqd between two packets, drain one and sleep again, a futex
	 * round trip per packet that the kernel does not have.
	 */
	if (drops < n)
		data_ready(r);
	count(&r->processed, n);
	if (drops != 0)
		count(&r->drops, drops);
}

/*
 * Block until a packet is queued or the receiver stops, as recvmsg()
 * sleeps on the socket: the flag is the futex word, and NET_RX clears it
 * when it wakes us.
 */
static void
wait_for_packets(struct l2fwd_reader *rd)
{
	struct l2fwd_receiver *r = rd->rcv;

	__atomic_store_n(&rd->waiting, 1, __ATOMIC_SEQ_CST);
	/* The flag before the look at the queue (NET_RX: the other way). */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (rte_ring_count(r->sock) != 0 ||
	    __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&rd->waiting, 0, __ATOMIC_RELAXED);
		return;
	}
	while (__atomic_load_n(&rd->waiting, __ATOMIC_ACQUIRE) == 1 &&
	       !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
		futex(&rd->waiting, FUTEX_WAIT_PRIVATE, 1);
}

/*
 * One of the application's readers. It is not an lcore: the mbufs it
 * frees go to the pool without touching the lcore's mempool cache, which
 * only the lcore's handlers use.
 */
static void *
reader_main(void *arg)
{
	struct l2fwd_reader *rd = arg;
	struct l2fwd_receiver *r = rd->rcv;
	struct rte_mbuf *pkts[L2FWD_RCV_BATCH];

	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), r->spec.nice) != 0)
		fprintf(stderr, L2FWD_PROG ": receiver: nice %d refused: %s\n",
			r->spec.nice, strerror(errno));
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		unsigned int n, i;

		n = rte_ring_dequeue_burst(r->sock, (void **)pkts,
					   L2FWD_RCV_BATCH, NULL);
		if (n == 0) {
			wait_for_packets(rd);
			continue;
		}
		for (i = 0; i < n; i++)
			spend_cycles(r->app_cycles);
		rte_pktmbuf_free_bulk(pkts, n);
		__atomic_fetch_add(&r->received, n, __ATOMIC_RELAXED);
	}
	return NULL;
}

int
l2fwd_receiver_start(struct l2fwd_receiver *r)
{
	rte_cpuset_t cpus = rte_lcore_cpuset(r->lcore_id);
	char name[16];
	uint32_t i;
	int ret;

	for (i = 0; i < r->spec.threads; i++) {
		struct l2fwd_reader *rd = &r->reader[i];

		rd->rcv = r;
		ret = pthread_create(&rd->thread, NULL, reader_main, rd);
		if (ret != 0) {
			fprintf(stderr, L2FWD_PROG ": receiver thread %u of lcore %u: %s\n",
				i, r->lcore_id, strerror(ret));
			l2fwd_receiver_stop(r);
			return -ret;
		}
		pthread_setaffinity_np(rd->thread, sizeof(cpus), &cpus);
		snprintf(name, sizeof(name), "rcv/%u", r->lcore_id);
		pthread_setname_np(rd->thread, name);
		if (pthread_getcpuclockid(rd->thread, &rd->clock) != 0)
			rd->clock = (clockid_t)-1;
		__atomic_store_n(&r->nb_readers, i + 1, __ATOMIC_RELEASE);
	}
	return 0;
}

void
l2fwd_receiver_stop(struct l2fwd_receiver *r)
{
	struct rte_mbuf *m;
	uint32_t i;

	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < r->nb_readers; i++) {
		__atomic_store_n(&r->reader[i].waiting, 0, __ATOMIC_SEQ_CST);
		futex(&r->reader[i].waiting, FUTEX_WAKE_PRIVATE, INT_MAX);
	}
	for (i = 0; i < r->nb_readers; i++)
		pthread_join(r->reader[i].thread, NULL);
	r->nb_readers = 0;
	if (r->sock == NULL)
		return;
	while (rte_ring_dequeue(r->sock, (void **)&m) == 0) {
		rte_pktmbuf_free(m);
		r->drained_at_exit++;
	}
}

void
l2fwd_receiver_free(struct l2fwd_receiver *r)
{
	rte_ring_free(r->sock);
	r->sock = NULL;
}

void
l2fwd_receiver_dispatcher_started(struct l2fwd_receiver *r)
{
	app_cpu_dispatcher_started(&r->cpu);
}

void
l2fwd_receiver_sample_cpu(struct l2fwd_receiver *r)
{
	struct l2fwd_cpu_split s = r->split;
	struct app_cpu_split lib;
	uint32_t i, n = __atomic_load_n(&r->nb_readers, __ATOMIC_ACQUIRE);
	uint64_t v, sum = 0;
	bool readers_ok = true;

	for (i = 0; i < n; i++) {
		if (!app_cpu_clock_ns(r->reader[i].clock, &v)) {
			readers_ok = false;
			break;
		}
		sum += v;
	}
	/* Gone threads keep their last sample. */
	if (readers_ok)
		s.receiver_ns = sum;
	app_cpu_sample(&r->cpu, &lib);
	s.sirqd_ns = lib.sirqd_ns;
	s.threads_ns = lib.softirq_ns + lib.napi_ns;
	s.dispatcher_ns = lib.dispatcher_ns;
	s.at_ns = now_ns();
	r->split = s;
}

static double
share(uint64_t ns, uint64_t window_ns)
{
	return window_ns != 0 ? (double)ns / (double)window_ns : 0.0;
}

static double
rate(uint64_t n, uint64_t ns)
{
	return ns != 0 ? (double)n * NS_PER_SEC / (double)ns : 0.0;
}

void
l2fwd_receiver_json(FILE *f, const struct l2fwd_receiver *r,
		    uint64_t elapsed_ns)
{
	uint64_t processed = __atomic_load_n(&r->processed, __ATOMIC_RELAXED);
	uint64_t received = __atomic_load_n(&r->received, __ATOMIC_RELAXED);
	uint64_t drops = __atomic_load_n(&r->drops, __ATOMIC_RELAXED);
	const struct l2fwd_cpu_split *s = &r->split;
	uint64_t window = s->at_ns > r->start_ns ? s->at_ns - r->start_ns : 0;

	fprintf(f, "{\"lcore\": %u, \"proto_ns\": %" PRIu64 ", \"app_ns\": %" PRIu64
		", \"rcvbuf\": %u, \"threads\": %u, \"nice\": %d"
		", \"processed\": %" PRIu64 ", \"processed_pps\": %.1f"
		", \"received\": %" PRIu64 ", \"rx_pps\": %.1f"
		", \"drops\": %" PRIu64 ", \"drops_per_s\": %.1f"
		", \"queued\": %u, \"drained_at_exit\": %" PRIu64
		", \"wakeups\": %" PRIu64,
		r->lcore_id, r->spec.proto_ns, r->spec.app_ns, r->spec.rcvbuf,
		r->spec.threads, r->spec.nice, processed,
		rate(processed, elapsed_ns), received, rate(received, elapsed_ns),
		drops, rate(drops, elapsed_ns),
		r->sock != NULL ? rte_ring_count(r->sock) : 0,
		r->drained_at_exit,
		__atomic_load_n(&r->wakeups, __ATOMIC_RELAXED));
	fprintf(f, ", \"cpu\": {\"window_s\": %.3f, \"receiver_s\": %.3f"
		", \"sirqd_s\": %.3f, \"threads_s\": %.3f, \"dispatcher_s\": %.3f"
		", \"receiver_share\": %.4f, \"sirqd_share\": %.4f"
		", \"threads_share\": %.4f, \"dispatcher_share\": %.4f}}",
		(double)window / NS_PER_SEC, (double)s->receiver_ns / NS_PER_SEC,
		(double)s->sirqd_ns / NS_PER_SEC,
		(double)s->threads_ns / NS_PER_SEC,
		(double)s->dispatcher_ns / NS_PER_SEC,
		share(s->receiver_ns, window), share(s->sirqd_ns, window),
		share(s->threads_ns, window), share(s->dispatcher_ns, window));
}

void
l2fwd_receiver_print(FILE *f, const struct l2fwd_receiver *r,
		     uint64_t elapsed_ns)
{
	uint64_t processed = __atomic_load_n(&r->processed, __ATOMIC_RELAXED);
	uint64_t received = __atomic_load_n(&r->received, __ATOMIC_RELAXED);
	uint64_t drops = __atomic_load_n(&r->drops, __ATOMIC_RELAXED);
	const struct l2fwd_cpu_split *s = &r->split;
	uint64_t window = s->at_ns > r->start_ns ? s->at_ns - r->start_ns : 0;

	fprintf(f, "receiver lcore %u: NET_RX %" PRIu64 " (%.0f pps) app %" PRIu64
		" (%.0f pps) drops %" PRIu64 " (%.0f/s) queued %u; CPU app %.1f%% "
		"sirqd %.1f%% softirq threads %.1f%% dispatcher %.1f%%\n",
		r->lcore_id, processed,
		rate(processed, elapsed_ns), received, rate(received, elapsed_ns),
		drops, rate(drops, elapsed_ns),
		r->sock != NULL ? rte_ring_count(r->sock) : 0,
		100 * share(s->receiver_ns, window),
		100 * share(s->sirqd_ns, window),
		100 * share(s->threads_ns, window),
		100 * share(s->dispatcher_ns, window));
}
