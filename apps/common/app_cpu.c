/* SPDX-License-Identifier: BSD-3-Clause */

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_cpu.h"

#define NS_PER_SEC 1000000000ULL

/* From the kernel's posix-timers.h: a thread's CPUCLOCK_SCHED clock. */
#define CPUCLOCK_SCHED 2
#define CPUCLOCK_PERTHREAD_MASK 4

void
app_cpu_init(struct app_cpu *c, unsigned int lcore_id)
{
	memset(c, 0, sizeof(*c));
	c->lcore_id = lcore_id;
}

bool
app_cpu_clock_ns(clockid_t clock, uint64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) != 0)
		return false;
	*ns = (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
	return true;
}

double
app_cpu_percent(uint64_t ns, uint64_t window_ns)
{
	return window_ns != 0 ? 100.0 * (double)ns / (double)window_ns : 0.0;
}

void
app_cpu_dispatcher_started(struct app_cpu *c)
{
	clockid_t clock;
	uint64_t base;

	if (pthread_getcpuclockid(pthread_self(), &clock) != 0 ||
	    !app_cpu_clock_ns(clock, &base))
		return;
	c->dispatcher_clock = clock;
	c->dispatcher_base_ns = base;
	__atomic_store_n(&c->dispatcher_known, true, __ATOMIC_RELEASE);
}

/* The CPU-time clock of thread @tid of this process. */
static clockid_t
tid_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned int)tid << 3) |
			   CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED);
}

/* @s starts with lcore id @lcore, then ends (or "-" for a NAPI thread). */
static bool
lcore_suffix(const char *s, unsigned int lcore, char napi)
{
	char *end;
	unsigned long id = strtoul(s, &end, 10);

	if (end == s || id != lcore)
		return false;
	return napi ? *end == '-' : (*end == '\n' || *end == '\0');
}

/* The kind of library thread @comm ("name\n") is for @lcore, or -1. */
static int
thread_kind(const char *comm, unsigned int lcore)
{
	const char *slash = strchr(comm, '/');

	if (slash == NULL)
		return -1;
	if (strncmp(comm, "sirqd/", 6) == 0 && lcore_suffix(slash + 1, lcore, 0))
		return APP_CPU_SIRQD;
	if ((strncmp(comm, "ktimers/", 8) == 0 || strncmp(comm, "sirq-", 5) == 0) &&
	    lcore_suffix(strrchr(comm, '/') + 1, lcore, 0))
		return APP_CPU_SOFTIRQ;
	if (strncmp(comm, "napi/", 5) == 0 && lcore_suffix(slash + 1, lcore, 1))
		return APP_CPU_NAPI;
	return -1;
}

/* Each library thread of the lcore running now: its CPU time. */
static void
scan_threads(struct app_cpu *c)
{
	char path[64], comm[32];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(e->d_name);
		unsigned int i;
		uint64_t ns;
		FILE *f;
		int kind;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		kind = fgets(comm, sizeof(comm), f) != NULL ?
			thread_kind(comm, c->lcore_id) : -1;
		fclose(f);
		if (kind < 0 || !app_cpu_clock_ns(tid_clock(tid), &ns))
			continue;
		for (i = 0; i < c->nb_threads; i++)
			if (c->thread[i].tid == tid)
				break;
		if (i == c->nb_threads) {
			if (i == APP_CPU_MAX_THREADS)
				continue;
			c->nb_threads++;
			c->thread[i].tid = tid;
			c->thread[i].kind = (enum app_cpu_kind)kind;
		}
		c->thread[i].ns = ns;
	}
	closedir(d);
}

void
app_cpu_sample(struct app_cpu *c, struct app_cpu_split *s)
{
	struct timespec ts;
	unsigned int i;
	uint64_t v;

	memset(s, 0, sizeof(*s));
	scan_threads(c);
	for (i = 0; i < c->nb_threads; i++) {
		switch (c->thread[i].kind) {
		case APP_CPU_SIRQD:
			s->sirqd_ns += c->thread[i].ns;
			break;
		case APP_CPU_SOFTIRQ:
			s->softirq_ns += c->thread[i].ns;
			break;
		case APP_CPU_NAPI:
			s->napi_ns += c->thread[i].ns;
			break;
		}
	}
	if (__atomic_load_n(&c->dispatcher_known, __ATOMIC_ACQUIRE) &&
	    app_cpu_clock_ns(c->dispatcher_clock, &v))
		s->dispatcher_ns = v - c->dispatcher_base_ns;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->at_ns = (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}
