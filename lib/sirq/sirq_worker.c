/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * sirqd/N: the lcore's ksoftirqd.
 *
 * In the kernel ksoftirqd/N is CPU N's softirq context: the handlers it
 * runs use CPU N's per-CPU data, and the softirq exclusion keeps it and
 * the interrupt-exit path apart. sirqd is the same for its lcore: it runs
 * handlers *as* the lcore (rte_lcore_id(), so the lcore's mempool cache
 * and rte_timer list), and only while it holds the lcore's execution
 * lock, which the dispatcher also holds for everything it does with that
 * state. No lcore is registered for it, so DPDK multi-process (dumpcap,
 * pdump, proc-info) keeps working.
 *
 * It is a fair-class (SCHED_OTHER) thread like ksoftirqd, whose pass time
 * counts against its fair share. A kernel pass cannot be preempted by
 * tasks; a user-space one can, and a sirqd preempted holding the lock
 * would lock the dispatcher out for as long as the scheduler keeps it
 * off the CPU. So the lock has priority inheritance, as PREEMPT_RT's
 * softirq lock does: a dispatcher that finds sirqd holding the lock
 * without having run since its last look lends it SCHED_FIFO until the
 * pass ends. Passes that are not preempted never leave SCHED_OTHER.
 */

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <numa.h>

#include <rte_errno.h>
#include <rte_rcu_qsbr.h>

#include "sirq_dpdk.h"
#include "sirq_worker.h"

/* Parse "2", "2-3,6" into a cpuset; -EINVAL names nothing, caller logs. */
static int
parse_cpu_list(const char *s, rte_cpuset_t *set)
{
	char *end;

	CPU_ZERO(set);
	while (*s != '\0') {
		unsigned long lo, hi;

		errno = 0;
		lo = strtoul(s, &end, 10);
		if (end == s || errno != 0 || lo >= CPU_SETSIZE)
			return -EINVAL;
		hi = lo;
		s = end;
		if (*s == '-') {
			s++;
			hi = strtoul(s, &end, 10);
			if (end == s || errno != 0 || hi >= CPU_SETSIZE || hi < lo)
				return -EINVAL;
			s = end;
		}
		for (; lo <= hi; lo++)
			CPU_SET(lo, set);
		if (*s == ',')
			s++;
		else if (*s != '\0')
			return -EINVAL;
	}
	return CPU_COUNT(set) > 0 ? 0 : -EINVAL;
}

static int numa_preferred_node(const struct sirqd *w);

int
sirqd_init(struct sirqd *w, struct sirq_cpu *cpu,
	   struct sirq_lcore_stats *stats, unsigned int lcore_id, int socket,
	   const struct sirq_lcore_conf *conf)
{
	memset(w, 0, sizeof(*w));
	w->thread = -1;
	w->sched.policy = SCHED_OTHER;
	w->cpu = cpu;
	w->stats = stats;
	w->lcore_id = lcore_id;
	w->socket = socket;
	w->fd = -1;
	w->pi_priority = conf->worker_boost_priority;
	w->qsbr = conf->qsbr;
	w->qsbr_id = conf->qsbr_worker_id;
	if (conf->worker_cpus != NULL && conf->worker_cpus[0] != '\0') {
		if (parse_cpu_list(conf->worker_cpus, &w->cpus) != 0) {
			SIRQ_LOG(ERR, "lcore %u: bad worker cpus '%s'",
				 lcore_id, conf->worker_cpus);
			return -EINVAL;
		}
	} else {
		w->cpus = rte_lcore_cpuset(lcore_id);
	}
	if (conf->worker_register)
		SIRQ_LOG(WARNING,
			 "lcore %u: worker_register is deprecated and ignored: sirqd runs as lcore %u, with its mempool cache",
			 lcore_id, lcore_id);
	w->fd = eventfd(0, EFD_CLOEXEC);
	if (w->fd < 0) {
		SIRQ_LOG(ERR, "lcore %u: eventfd: %s", lcore_id,
			 strerror(errno));
		return -errno;
	}
	pthread_mutex_init(&w->pi_lock, NULL);
	sem_init(&w->started, 0, 0);
	w->numa_node = numa_preferred_node(w);
	return 0;
}

void
sirqd_fini(struct sirqd *w)
{
	if (w->fd < 0)
		return;
	close(w->fd);
	w->fd = -1;
	pthread_mutex_destroy(&w->pi_lock);
	sem_destroy(&w->started);
}

void
sirqd_wake(struct sirqd *w)
{
	uint64_t one = 1;

	/* EAGAIN means the counter is already non-zero: awake anyway. */
	if (write(w->fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		SIRQ_LOG(ERR, "sirqd/%u: eventfd write: %s", w->lcore_id,
			 strerror(errno));
}

static uint64_t
thread_cpu_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * SIRQ_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* <linux/sched/types.h>'s (its first version), which glibc does not wrap. */
struct sched_attr_v0 {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;		/* SCHED_OTHER: the slice, 6.12 on */
	uint64_t sched_deadline;
	uint64_t sched_period;
};

#define NS_PER_US 1000u

/* What pthread attributes cannot carry: a slice, a reservation. */
bool
sirq_sched_needs_setattr(const struct sirq_thread_attr *a)
{
	return a->policy == SCHED_DEADLINE ||
		(a->policy == SCHED_OTHER && a->slice_us != 0);
}

/*
 * Give thread @tid (0: the caller) the attributes @a with
 * sched_setattr(), its nice value kept. A slice is read back: kernels
 * before 6.12 take sched_runtime for SCHED_OTHER and ignore it
 * (-EOPNOTSUPP). 0 or -errno.
 */
int
sirq_sched_apply(pid_t tid, const struct sirq_thread_attr *a)
{
	struct sched_attr_v0 sa, now;

	memset(&now, 0, sizeof(now));
	if (syscall(SYS_sched_getattr, tid, &now, sizeof(now), 0) != 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.size = sizeof(sa);
	sa.sched_policy = (uint32_t)a->policy;
	switch (a->policy) {
	case SCHED_DEADLINE:
		sa.sched_runtime = (uint64_t)a->runtime_us * NS_PER_US;
		sa.sched_deadline = (uint64_t)(a->deadline_us != 0 ?
			a->deadline_us : a->period_us) * NS_PER_US;
		sa.sched_period = (uint64_t)a->period_us * NS_PER_US;
		break;
	case SCHED_FIFO:
	case SCHED_RR:
		sa.sched_priority = (uint32_t)a->priority;
		break;
	default:
		sa.sched_nice = now.sched_policy == SCHED_OTHER ?
			now.sched_nice : 0;
		sa.sched_runtime = (uint64_t)a->slice_us * NS_PER_US;
		break;
	}
	if (syscall(SYS_sched_setattr, tid, &sa, 0) != 0)
		return -errno;
	if (a->policy != SCHED_OTHER || a->slice_us == 0)
		return 0;
	memset(&now, 0, sizeof(now));
	if (syscall(SYS_sched_getattr, tid, &now, sizeof(now), 0) != 0)
		return -errno;
	return now.sched_runtime == sa.sched_runtime ? 0 : -EOPNOTSUPP;
}

/* Why the kernel refused @a with @err (negative), in its own rule's words. */
const char *
sirq_sched_refusal(const struct sirq_thread_attr *a, int err)
{
	if (a->policy == SCHED_DEADLINE && err == -EPERM)
		return "SCHED_DEADLINE needs an affinity that spans the thread's root domain while kernel.sched_rt_runtime_us >= 0: give its CPU an exclusive cpuset (cgroup v1 cpuset.cpu_exclusive=1 and cpuset.sched_load_balance=0, v2 cpuset.cpus.partition=root) or set kernel.sched_rt_runtime_us to -1; or the process lacks CAP_SYS_NICE";
	if (a->policy == SCHED_DEADLINE && err == -EBUSY)
		return "SCHED_DEADLINE admission control: the reservation does not fit in the root domain's deadline bandwidth (kernel.sched_rt_runtime_us per kernel.sched_rt_period_us), or the thread's affinity was narrowed under it";
	if (err == -EOPNOTSUPP)
		return "the kernel ignores a fair task's slice (Linux 6.12 or later has one)";
	if (err == -EPERM)
		return "not permitted (CAP_SYS_NICE, RLIMIT_RTPRIO)";
	return strerror(-err);
}

/*
 * Lend @w @policy and @priority while it holds the execution lock as
 * @token; given back after its run (give_back_priority()). 0, or the
 * error of pthread_setschedparam() (nothing lent).
 */
static int
lend(struct sirqd *w, uintptr_t token, int policy, int priority)
{
	struct sched_param sp = { .sched_priority = priority };
	int ret = 0;

	/* A reservation outranks every real-time priority: nothing to lend. */
	if (__atomic_load_n(&w->sched.policy, __ATOMIC_RELAXED) ==
	    SCHED_DEADLINE)
		return 0;
	pthread_mutex_lock(&w->pi_lock);
	__atomic_store_n(&w->pi_lent, 1, __ATOMIC_SEQ_CST);
	if (token == 0 || sirq_exec_lock_owner(w->cpu) != token) {
		__atomic_store_n(&w->pi_lent, 0, __ATOMIC_RELAXED);
	} else {
		ret = pthread_setschedparam(w->thread_id, policy, &sp);
		if (ret == 0)
			sirq_stat_add_atomic(&w->stats->worker_pi_boosts, 1);
		else
			__atomic_store_n(&w->pi_lent, 0, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&w->pi_lock);
	return ret;
}

/*
 * The dispatcher found the lock taken. If sirqd holds it and has not run
 * since the dispatcher's last look, the scheduler preempted it inside a
 * pass: lend it SCHED_FIFO so that the pass ends now, if the dispatcher
 * would run the pending work itself. A policy that would leave the work
 * to sirqd anyway (ksoftirqd, kicinski inside a window, deferred) waits
 * for the scheduler, as it waits for ksoftirqd: lending there gave sirqd
 * SCHED_FIFO time that its fair share is never charged, and took the
 * application's half of the CPU (the 4cd13c21b207 flood). Dispatcher
 * only.
 */
void
sirqd_lock_busy(struct sirqd *w)
{
	/* sirq_lcore_set_params() may change it from another thread. */
	int prio = __atomic_load_n(&w->pi_priority, __ATOMIC_RELAXED);
	uintptr_t token = __atomic_load_n(&w->token, __ATOMIC_ACQUIRE);
	uint64_t cpu_ns;
	int ret;

	if (prio == 0 || token == 0 ||
	    sirq_exec_lock_owner(w->cpu) != token ||
	    !sirq_inline_wanted(w->cpu)) {
		w->pi_watching = false;
		return;
	}
	cpu_ns = thread_cpu_ns(w->clock);
	if (!w->pi_watching || cpu_ns != w->pi_cpu_ns) {
		w->pi_watching = true;
		w->pi_cpu_ns = cpu_ns;
		return;
	}
	w->pi_watching = false;

	/*
	 * Lent, then looked at again: if sirqd dropped the lock before the
	 * look, its own check after the unlock sees the loan (both sides
	 * store, then load, sequentially consistent) and gives it back.
	 */
	ret = lend(w, token, SCHED_FIFO, prio);
	if (ret != 0) {
		SIRQ_LOG(WARNING,
			 "sirqd/%u: SCHED_FIFO %d refused (%s): a preempted pass keeps the dispatcher waiting",
			 w->lcore_id, prio, strerror(ret));
		__atomic_store_n(&w->pi_priority, 0, __ATOMIC_RELAXED);
	}
}

/*
 * sirqd, after every sirq_worker_run(): back to its own attributes if
 * lent, all of them: pthread_setschedparam() would reset a slice.
 */
static void
give_back_priority(struct sirqd *w)
{
	struct sched_param sp = { .sched_priority = w->sched.priority };

	/* Orders the unlock in sirq_worker_run() before the load. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&w->pi_lent, __ATOMIC_RELAXED) == 0)
		return;
	pthread_mutex_lock(&w->pi_lock);
	if (__atomic_load_n(&w->pi_lent, __ATOMIC_RELAXED) != 0) {
		if (sirq_sched_needs_setattr(&w->sched))
			sirq_sched_apply(0, &w->sched);
		else
			pthread_setschedparam(pthread_self(),
					      w->sched.policy, &sp);
		__atomic_store_n(&w->pi_lent, 0, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&w->pi_lock);
}

/*
 * A thread waits for the BH lock that @w holds: lend @w its class and
 * priority, if above @w's own, until @w's run ends (give_back_priority()),
 * as a task blocked on an rtmutex boosts the owner. Any thread.
 */
void
sirqd_lend(struct sirqd *w, int policy, int priority)
{
	if ((policy != SCHED_FIFO && policy != SCHED_RR) ||
	    (w->sched.policy != SCHED_OTHER && w->sched.priority >= priority))
		return;
	lend(w, __atomic_load_n(&w->token, __ATOMIC_ACQUIRE), policy, priority);
}

/*
 * sirqd placed on CPUs of another node than the lcore it serves: its
 * allocations still prefer the lcore's node, where the queues and the
 * per-lcore state are; the placement is reported once. Looked at here,
 * on the thread creating the lcore: libnuma fills its node cache on the
 * first numa_node_of_cpu() without a lock, and two sirqd threads making
 * that first call at once leak one copy.
 */
static int
numa_preferred_node(const struct sirqd *w)
{
	unsigned int cpu;

	if (numa_available() < 0 || w->socket < 0)
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &w->cpus) ||
		    numa_node_of_cpu((int)cpu) == w->socket)
			continue;
		SIRQ_LOG(WARNING,
			 "sirqd/%u: CPU %u is on node %d, lcore %u on node %d; memory stays on node %d",
			 w->lcore_id, cpu, numa_node_of_cpu((int)cpu),
			 w->lcore_id, w->socket, w->socket);
		return w->socket;
	}
	return -1;
}

static inline void
rcu_online(struct sirqd *w, bool on)
{
	if (w->qsbr == NULL)
		return;
	if (on)
		rte_rcu_qsbr_thread_online(w->qsbr, w->qsbr_id);
	else
		rte_rcu_qsbr_thread_offline(w->qsbr, w->qsbr_id);
}

/*
 * A SCHED_DEADLINE softirq thread's budget, as the thread sees it: the
 * time its rounds took since its period began. The kernel throttles it
 * where its runtime ends, mid-round if it comes to that, and a round
 * holds the BH lock: everyone else would then wait for its next period.
 * So each round is bounded by what is left (NET_RX ends its run before
 * a poll that would not fit, sirq_cpu_round_limit()), and a thread with
 * too little left for one more step gives up the rest (sched_yield(),
 * which sleeps a deadline task until its next period) with the lock
 * free. A step is NET_RX's last poll, or for a thread whose rounds are
 * not bounded that way, two average rounds.
 *
 * Rounds are timed on CLOCK_MONOTONIC (the vDSO), not the thread's CPU
 * clock (a system call, four a round, were 2 % of a core at 1,000
 * requests a second): only another deadline task can preempt this one,
 * so wall time over-counts its runtime only then, which ends its
 * rounds early rather than late.
 */
struct dl_budget {
	uint64_t runtime_ns, period_ns;
	uint64_t period0;		/* when its period began, about */
	uint64_t used_ns;		/* its rounds' time in this period */
	uint64_t round_avg_ns;		/* a round's time, averaged (1/8) */
};

/* Slack kept at a round's end, for the handler's own tail and the clock. */
#define DL_SLACK_NS 20000

static void
dl_budget_start(struct dl_budget *b, uint64_t runtime_ns, uint64_t period_ns)
{
	b->runtime_ns = runtime_ns;
	b->period_ns = period_ns;
	b->period0 = thread_cpu_ns(CLOCK_MONOTONIC);
	b->used_ns = 0;
}

/* Before a round: bound it by the runtime left, or give the rest up. */
static void
dl_budget_before_round(struct dl_budget *b, const struct sirq_cpu *cpu,
		       uint64_t now)
{
	uint64_t left, need, step = sirq_round_step_ns();

	if (now - b->period0 >= b->period_ns)
		/* A new period began meanwhile: a fresh runtime. */
		dl_budget_start(b, b->runtime_ns, b->period_ns);
	left = b->used_ns < b->runtime_ns ? b->runtime_ns - b->used_ns : 0;
	need = step != 0 ? step : RTE_MIN(2 * b->round_avg_ns,
					  b->runtime_ns / 2);
	need += DL_SLACK_NS;
	if (left < need) {
		sched_yield();
		dl_budget_start(b, b->runtime_ns, b->period_ns);
		left = b->runtime_ns;
	}
	sirq_cpu_round_limit(cpu, left > 2 * DL_SLACK_NS ?
			     left - DL_SLACK_NS : DL_SLACK_NS);
}

/*
 * After a call that took @round_ns: all of it is runtime used, whatever
 * it found; a round that ran and left work (@ran) also makes the average.
 */
static void
dl_budget_after_round(struct dl_budget *b, const struct sirq_cpu *cpu,
		      uint64_t round_ns, bool ran)
{
	sirq_cpu_round_limit(cpu, 0);
	b->used_ns += round_ns;
	if (!ran)
		return;
	b->round_avg_ns = b->round_avg_ns == 0 ? round_ns :
		(7 * b->round_avg_ns + round_ns) / 8;
}

static void *
sirqd_main(void *arg)
{
	struct sirqd *w = arg;
	struct dl_budget dl = { 0 };
	uint64_t token, round0 = 0;

	/*
	 * The lcore's identity, for its handlers: rte_lcore_id() picks the
	 * lcore's mempool cache and rte_timer list. Safe because every use
	 * of them, here or on the dispatcher, holds the execution lock.
	 */
	RTE_PER_LCORE(_lcore_id) = w->lcore_id;
	/* Its CPUs again, through EAL: rte_socket_id() follows them. */
	if (rte_thread_set_affinity(&w->cpus) != 0)
		SIRQ_LOG(WARNING, "sirqd/%u: cannot pin", w->lcore_id);
	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	/* A slice or a reservation, pinned first; sirqd_start() waits. */
	w->start_ret = sirq_sched_needs_setattr(&w->sched) ?
		sirq_sched_apply(0, &w->sched) : 0;
	sem_post(&w->started);
	if (w->start_ret != 0)
		return NULL;
	__atomic_store_n(&w->token, sirq_self_token(), __ATOMIC_RELEASE);
	if (w->numa_node >= 0)
		numa_set_preferred(w->numa_node);
	rcu_online(w, true);

	for (;;) {
		enum sirq_worker_status st;
		/* sirq_lcore_thread_attr() may change them meanwhile. */
		bool deadline = __atomic_load_n(&w->sched.policy,
						__ATOMIC_RELAXED) == SCHED_DEADLINE;

		if (deadline) {
			uint64_t rt = (uint64_t)__atomic_load_n(&w->sched.runtime_us,
					__ATOMIC_RELAXED) * NS_PER_US;
			uint64_t per = (uint64_t)__atomic_load_n(&w->sched.period_us,
					__ATOMIC_RELAXED) * NS_PER_US;

			if (dl.period_ns != per || dl.runtime_ns != rt)
				dl_budget_start(&dl, rt, per);
			round0 = thread_cpu_ns(CLOCK_MONOTONIC);
			dl_budget_before_round(&dl, w->cpu, round0);
			round0 = thread_cpu_ns(CLOCK_MONOTONIC);
		}
		st = w->thread < 0 ? sirq_worker_run(w->cpu) :
			sirq_thread_run(w->cpu, (unsigned int)w->thread);
		if (deadline)
			dl_budget_after_round(&dl, w->cpu,
					      thread_cpu_ns(CLOCK_MONOTONIC) - round0,
					      st == SIRQ_WORKER_YIELD);

		give_back_priority(w);
		if (w->ran != NULL)
			w->ran(w->idle_arg);
		switch (st) {
		case SIRQ_WORKER_SLEEP:
			if (w->idle != NULL)
				w->idle(w->idle_arg);
			rcu_online(w, false);
			if (read(w->fd, &token, sizeof(token)) < 0 &&
			    errno != EINTR)
				SIRQ_LOG(ERR, "sirqd/%u: eventfd read: %s",
					 w->lcore_id, strerror(errno));
			rcu_online(w, true);
			break;
		case SIRQ_WORKER_YIELD:
			/*
			 * run_ksoftirqd() then cond_resched(), which only
			 * switches when the scheduler has marked the task:
			 * the scheduler preempts sirqd by itself.
			 */
			if (w->qsbr != NULL)
				rte_rcu_qsbr_quiescent(w->qsbr, w->qsbr_id);
			break;
		case SIRQ_WORKER_BUSY:
			/*
			 * The dispatcher's iteration: let it end. A deadline
			 * thread sleeps instead (sched_yield() would give up
			 * the rest of its runtime until its next period), and
			 * so does any thread while a deadline thread may hold
			 * the lock throttled, until its next period.
			 */
			if (deadline || sirq_cpu_lock_waits_sleeping(w->cpu)) {
				struct timespec ts = { .tv_nsec = 20000 };

				nanosleep(&ts, NULL);
			} else {
				sched_yield();
			}
			break;
		case SIRQ_WORKER_EXIT:
		default:
			rcu_online(w, false);
			return NULL;
		}
	}
}

int
sirqd_start(struct sirqd *w)
{
	pthread_attr_t attr;
	char name[16];
	int ret;

	bool setattr = sirq_sched_needs_setattr(&w->sched);
	struct sched_param sp = {
		.sched_priority = setattr ? 0 : w->sched.priority,
	};

	/*
	 * Pinned and in its class from its first instruction, whoever starts
	 * it; a slice or a reservation from its second (sirqd_main()).
	 */
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, setattr ? SCHED_OTHER :
				    w->sched.policy);
	pthread_attr_setschedparam(&attr, &sp);
	ret = pthread_attr_setaffinity_np(&attr, sizeof(w->cpus), &w->cpus);
	if (ret != 0)
		SIRQ_LOG(WARNING, "sirqd/%u: cannot pin: %s", w->lcore_id,
			 strerror(ret));
	w->token = 0;
	w->tid = 0;
	w->start_ret = 0;
	w->pi_lent = 0;
	w->pi_watching = false;
	sirqd_name(w, name, sizeof(name));
	if (w->thread < 0)
		sirq_worker_unpark(w->cpu);
	ret = pthread_create(&w->thread_id, &attr, sirqd_main, w);
	if (ret == EPERM && !setattr && w->sched.policy != SCHED_OTHER) {
		SIRQ_LOG(WARNING,
			 "%s: %s %d refused (not permitted): SCHED_OTHER instead",
			 name, w->sched.policy == SCHED_FIFO ? "SCHED_FIFO" :
			 "SCHED_RR", w->sched.priority);
		w->sched.policy = SCHED_OTHER;
		w->sched.priority = 0;
		sp.sched_priority = 0;
		pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
		pthread_attr_setschedparam(&attr, &sp);
		ret = pthread_create(&w->thread_id, &attr, sirqd_main, w);
	}
	pthread_attr_destroy(&attr);
	if (ret != 0) {
		SIRQ_LOG(ERR, "lcore %u: cannot start %s: %s", w->lcore_id,
			 name, strerror(ret));
		if (w->thread < 0)
			sirq_worker_park(w->cpu);
		return -ret;
	}
	/*
	 * Its TID there for sirq_lcore_thread_attr(), and its slice or
	 * reservation as the kernel answered the thread.
	 */
	while (sem_wait(&w->started) != 0 && errno == EINTR)
		;
	if (w->start_ret != 0) {
		ret = w->start_ret;
		pthread_join(w->thread_id, NULL);
		SIRQ_LOG(ERR, "lcore %u: %s not started: its %s refused (%s): %s",
			 w->lcore_id, name,
			 w->sched.policy == SCHED_DEADLINE ?
			 "SCHED_DEADLINE reservation" : "slice",
			 strerror(-ret), sirq_sched_refusal(&w->sched, ret));
		if (w->thread < 0)
			sirq_worker_park(w->cpu);
		return ret;
	}
	if (pthread_getcpuclockid(w->thread_id, &w->clock) != 0)
		w->pi_priority = 0;	/* no way to see it preempted */
	pthread_setname_np(w->thread_id, name);
	w->running = true;
	return 0;
}

void
sirqd_stop(struct sirqd *w)
{
	if (!w->running)
		return;
	if (w->thread < 0)
		sirq_worker_park(w->cpu);
	else
		sirq_thread_detach(w->cpu, (unsigned int)w->thread);
	sirqd_wake(w);
	pthread_join(w->thread_id, NULL);
	w->running = false;
}

/*
 * The thread's name, as ps shows it: sirqd/N, ktimers/N (the rt
 * model's TIMER thread, as 6.13's), sirq-<vector>/N (a pushdown thread).
 */
void
sirqd_name(const struct sirqd *w, char *buf, size_t len)
{
	char vec[SIRQ_NAME_LEN];
	size_t i;

	if (w->thread < 0) {
		snprintf(buf, len, "sirqd/%u", w->lcore_id);
		return;
	}
	if (sirq_cpu_conf(w->cpu)->params.policy == SIRQ_POLICY_RT &&
	    w->thread == SIRQ_TIMER) {
		snprintf(buf, len, "ktimers/%u", w->lcore_id);
		return;
	}
	snprintf(vec, sizeof(vec), "%s",
		 sirq_vector_name(w->cpu, (unsigned int)w->thread));
	for (i = 0; vec[i] != '\0'; i++)
		vec[i] = (char)tolower((unsigned char)vec[i]);
	snprintf(buf, len, "sirq-%s/%u", vec, w->lcore_id);
}
