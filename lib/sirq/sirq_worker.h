/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_WORKER_H
#define SIRQ_WORKER_H

/*
 * Internal to libsirq: sirqd, the thread that is an lcore's ksoftirqd.
 * Not installed.
 */

#include <pthread.h>
#include <semaphore.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_lcore.h>

#include "sirq_lcore.h"

struct sirqd {
	struct sirq_cpu *cpu;
	/*
	 * -1: sirqd. Otherwise a softirq thread of the execution model
	 * (sirq_thread_run()), known by its lead vector: ktimers/N, or
	 * sirq-<vector>/N of the pushdown.
	 */
	int thread;
	/*
	 * What the scheduler is told of it: pthread attributes at its start
	 * for a class and priority alone; sched_setattr(), by the thread
	 * itself before its first pass, for a slice or SCHED_DEADLINE.
	 */
	struct sirq_thread_attr sched;
	pid_t tid;			/* published when it starts; 0 before */
	int start_ret;			/* sched_setattr()'s at its start */
	sem_t started;			/* posted once start_ret is there */
	struct sirq_lcore_stats *stats;
	unsigned int lcore_id;		/* the lcore sirqd runs as */
	int socket;
	rte_cpuset_t cpus;
	int numa_node;			/* preferred for its memory; -1: local */
	int fd;				/* eventfd sirqd sleeps on */
	pthread_t thread_id;
	bool running;
	/* Its execution-lock token, published when it starts; 0 before. */
	uintptr_t token;
	clockid_t clock;		/* its CPU-time clock */

	/*
	 * Priority inheritance on the execution lock: SCHED_FIFO priority
	 * lent to a sirqd that the scheduler preempted inside a pass, so
	 * that it finishes the pass and lets the dispatcher in; 0 = never.
	 */
	int pi_priority;
	uint32_t pi_lent;		/* sirqd runs on lent priority */
	pthread_mutex_t pi_lock;	/* serialises lend and give back */
	/* The dispatcher's last look at a sirqd holding the lock. */
	bool pi_watching;
	uint64_t pi_cpu_ns;

	struct rte_rcu_qsbr *qsbr;
	unsigned int qsbr_id;

	/* Called when sirqd has found nothing to do and is about to sleep. */
	void (*idle)(void *arg);
	/* Optional: after every run, whatever it did (irq mode's unmask). */
	void (*ran)(void *arg);
	void *idle_arg;

};

int sirqd_init(struct sirqd *w, struct sirq_cpu *cpu,
	       struct sirq_lcore_stats *stats, unsigned int lcore_id,
	       int socket, const struct sirq_lcore_conf *conf);
void sirqd_fini(struct sirqd *w);
void sirqd_wake(struct sirqd *w);
int sirqd_start(struct sirqd *w);
void sirqd_stop(struct sirqd *w);
void sirqd_lock_busy(struct sirqd *w);
void sirqd_lend(struct sirqd *w, int policy, int priority);
bool sirq_sched_needs_setattr(const struct sirq_thread_attr *a);
/* The engine's (sirq_core.c): lock waits sleep while @on (a deadline holder). */
void sirq_cpu_lock_waits_sleep(struct sirq_cpu *cpu, bool on);
bool sirq_cpu_lock_waits_sleeping(const struct sirq_cpu *cpu);
/*
 * The engine's: bound the calling thread's next rounds to @left_ns of
 * the CPU's clock from now (0: unbound); NET_RX's last bounded poll took
 * sirq_round_step_ns().
 */
void sirq_cpu_round_limit(const struct sirq_cpu *cpu, uint64_t left_ns);
uint64_t sirq_round_step_ns(void);
int sirq_sched_apply(pid_t tid, const struct sirq_thread_attr *a);
const char *sirq_sched_refusal(const struct sirq_thread_attr *a, int err);
void sirqd_name(const struct sirqd *w, char *buf, size_t len);

/* The dispatcher holds the lock: sirqd is not stuck in a pass. */
static inline void
sirqd_lock_free(struct sirqd *w)
{
	w->pi_watching = false;
}

#endif /* SIRQ_WORKER_H */
