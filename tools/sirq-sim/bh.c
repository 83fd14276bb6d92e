/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Bottom-half sections of the simulated application threads, on OS
 * threads of their own.
 *
 * The engine knows the holder of a CPU's BH lock by the calling OS
 * thread (sirq_thread_token), and the simulator runs every simulated task
 * on one OS thread. A section held by an application thread across
 * simulated time must belong to another owner than the thread that runs
 * the softirq threads, the worker and the dispatcher, or the engine would
 * take them all for the holder (a nested sirq_bh_disable(), or
 * SIRQ_WORKER_BUSY for a softirq thread that "has bottom halves off").
 * So each application thread that has sections gets an agent: an OS
 * thread that calls sirq_bh_disable() and sirq_bh_enable() for it and
 * nothing else. The calls are synchronous: the caller waits until the
 * agent is done, so exactly one OS thread runs simulator code at any
 * time and the run stays deterministic. A wait for the lock inside the
 * engine (ops.lock_wait) runs on the agent that waits, which makes the
 * holder's agent release it (sim.c) before the engine looks again.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "sim.h"

enum agent_req {
	AGENT_IDLE = 0,
	AGENT_DISABLE,
	AGENT_ENABLE,
	AGENT_QUIT,
};

struct bh_agent {
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum agent_req req;
	struct sirq_cpu *cpu;
};

static void *
agent_main(void *arg)
{
	struct bh_agent *a = arg;
	enum agent_req req;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (a->req == AGENT_IDLE)
			pthread_cond_wait(&a->cv, &a->mu);
		req = a->req;
		if (req == AGENT_QUIT)
			break;
		pthread_mutex_unlock(&a->mu);
		if (req == AGENT_DISABLE)
			sirq_bh_disable(a->cpu);
		else
			sirq_bh_enable(a->cpu);
		pthread_mutex_lock(&a->mu);
		a->req = AGENT_IDLE;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* Hand @req to the agent and wait until it has done it. */
static void
agent_call(struct bh_agent *a, enum agent_req req)
{
	pthread_mutex_lock(&a->mu);
	a->req = req;
	pthread_cond_broadcast(&a->cv);
	while (a->req != AGENT_IDLE)
		pthread_cond_wait(&a->cv, &a->mu);
	pthread_mutex_unlock(&a->mu);
}

struct bh_agent *
bh_agent_start(struct sirq_cpu *cpu)
{
	struct bh_agent *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->cpu = cpu;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (pthread_create(&a->tid, NULL, agent_main, a) != 0) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
		free(a);
		errno = EAGAIN;
		return NULL;
	}
	return a;
}

/* sirq_bh_disable() as the agent's thread: may wait for the lock. */
void
bh_agent_disable(struct bh_agent *a)
{
	agent_call(a, AGENT_DISABLE);
}

/* sirq_bh_enable() as the agent's thread: may run pending work there. */
void
bh_agent_enable(struct bh_agent *a)
{
	agent_call(a, AGENT_ENABLE);
}

/*
 * End the agent. A section it still holds is left as it is: the CPU is
 * freed after the run, not used again.
 */
void
bh_agent_stop(struct bh_agent *a)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&a->mu);
	a->req = AGENT_QUIT;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->tid, NULL);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	free(a);
}
