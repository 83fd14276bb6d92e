/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * --receiver: a UDP receiver on the flooded CPU (l2fwd_receiver.h), the
 * measurement of 4cd13c21b207: about 2,000 packets/s read before the
 * commit, about 900,000 after, the CPU split 50/50 between the receiver
 * and ksoftirqd.
 */

#include <dirent.h>
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

/*
 * glibc's pthread_getcpuclockid() for a thread known only by its id
 * (sirqd, started inside the library): the kernel's
 * MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), readable by any thread of
 * the same process.
 */
#define CPUCLOCK_SCHED 2
#define CPUCLOCK_PERTHREAD_MASK 4

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

/* A thread's CPU time; false if the thread is gone. */
static bool
clock_ns(clockid_t clock, uint64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) != 0)
		return false;
	*ns = (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
	return true;
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
	clockid_t clock;
	uint64_t base;

	if (pthread_getcpuclockid(pthread_self(), &clock) != 0 ||
	    !clock_ns(clock, &base))
		return;
	r->dispatcher_tid = (pid_t)syscall(SYS_gettid);
	r->dispatcher_clock = clock;
	r->dispatcher_base_ns = base;
	__atomic_store_n(&r->dispatcher_known, true, __ATOMIC_RELEASE);
}

/* The CPU-time clock of thread @tid of this process (CPUCLOCK_SCHED). */
static clockid_t
tid_clock(unsigned int tid)
{
	return (clockid_t)((~tid << 3) | CPUCLOCK_PERTHREAD_MASK |
			   CPUCLOCK_SCHED);
}

/*
 * Call @fn for each thread of this process with its tid and its name
 * ("name\n", as /proc shows it), until @fn returns false.
 */
static void
foreach_thread(bool (*fn)(unsigned int tid, const char *comm, void *arg),
	       void *arg)
{
	char path[64], comm[32];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		FILE *f;
		bool named;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.16s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		named = fgets(comm, sizeof(comm), f) != NULL;
		fclose(f);
		if (named && !fn((unsigned int)atoi(e->d_name), comm, arg))
			break;
	}
	closedir(d);
}

/* sirqd/<lcore>, found by its name among the process's threads. */
static bool
sirqd_if_named(unsigned int tid, const char *comm, void *arg)
{
	struct l2fwd_receiver *r = arg;
	char want[32];

	snprintf(want, sizeof(want), "sirqd/%u\n", r->lcore_id);
	if (strcmp(comm, want) != 0)
		return true;
	r->sirqd_tid = (pid_t)tid;
	r->sirqd_clock = tid_clock(tid);
	r->sirqd_known = true;
	return false;
}

/* Is @comm ("name\n") lcore @lcore's ktimers/N or sirq-<vector>/N? */
static bool
softirq_thread_of(const char *comm, unsigned int lcore)
{
	const char *slash = strrchr(comm, '/');
	char *end;
	unsigned long id;

	if (slash == NULL || (strncmp(comm, "ktimers/", 8) != 0 &&
			      strncmp(comm, "sirq-", 5) != 0))
		return false;
	id = strtoul(slash + 1, &end, 10);
	return end != slash + 1 && (*end == '\n' || *end == '\0') &&
		id == lcore;
}

/* A softirq thread of the lcore: its CPU time now, kept once it is gone. */
static bool
sample_if_softirq_thread(unsigned int tid, const char *comm, void *arg)
{
	struct l2fwd_receiver *r = arg;
	unsigned int i;
	uint64_t v;

	if (!softirq_thread_of(comm, r->lcore_id) ||
	    !clock_ns(tid_clock(tid), &v))
		return true;
	for (i = 0; i < r->nb_sthreads; i++)
		if (r->sthread[i].tid == (pid_t)tid)
			break;
	if (i == r->nb_sthreads) {
		if (i == L2FWD_RCV_MAX_SOFTIRQ_THREADS)
			return true;
		r->nb_sthreads++;
		r->sthread[i].tid = (pid_t)tid;
	}
	r->sthread[i].ns = v;
	return true;
}

/*
 * The CPU time of the lcore's softirq threads, those running now and
 * those gone (a change of model restarts them): their sum.
 */
static uint64_t
sample_softirq_threads(struct l2fwd_receiver *r)
{
	uint64_t sum = 0;
	unsigned int i;

	foreach_thread(sample_if_softirq_thread, r);
	for (i = 0; i < r->nb_sthreads; i++)
		sum += r->sthread[i].ns;
	return sum;
}

void
l2fwd_receiver_sample_cpu(struct l2fwd_receiver *r)
{
	struct l2fwd_cpu_split s = r->split;
	uint32_t i, n = __atomic_load_n(&r->nb_readers, __ATOMIC_ACQUIRE);
	uint64_t v, sum = 0;
	bool readers_ok = true;

	for (i = 0; i < n; i++) {
		if (!clock_ns(r->reader[i].clock, &v)) {
			readers_ok = false;
			break;
		}
		sum += v;
	}
	/* Gone threads keep their last sample. */
	if (readers_ok)
		s.receiver_ns = sum;
	if (!r->sirqd_known)
		foreach_thread(sirqd_if_named, r);
	if (r->sirqd_known && clock_ns(r->sirqd_clock, &v))
		s.sirqd_ns = v;
	s.threads_ns = sample_softirq_threads(r);
	if (__atomic_load_n(&r->dispatcher_known, __ATOMIC_ACQUIRE) &&
	    clock_ns(r->dispatcher_clock, &v))
		s.dispatcher_ns = v - r->dispatcher_base_ns;
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
