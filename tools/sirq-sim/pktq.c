/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Packet FIFOs (the Rx ring, the TX buffer) as runs of steady spacing,
 * so that a million packets cost no more than one.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

int
pktq_init(struct pktq *q, uint64_t limit)
{
	memset(q, 0, sizeof(*q));
	q->limit = limit;
	/* Every segment holds a packet: limit + 1 segments always fit. */
	q->cap = (uint32_t)limit + 1;
	q->seg = calloc(q->cap, sizeof(*q->seg));
	return q->seg == NULL ? -ENOMEM : 0;
}

void
pktq_fini(struct pktq *q)
{
	free(q->seg);
	q->seg = NULL;
}

/* Append up to @n packets arriving at t0, t0 + dt, ...; returns the dropped. */
uint64_t
pktq_push(struct pktq *q, uint64_t t0, uint64_t dt, uint64_t n)
{
	uint64_t room = q->limit - q->pkts, keep = min_u64(n, room);
	struct seg *last;

	if (keep == 0)
		return n;
	last = q->nb == 0 ? NULL : &q->seg[(q->head + q->nb - 1) % q->cap];
	if (last != NULL && last->dt == dt && last->t0 + last->n * dt == t0) {
		last->n += keep;
	} else {
		struct seg *s = &q->seg[(q->head + q->nb) % q->cap];

		s->t0 = t0;
		s->dt = dt;
		s->n = keep;
		q->nb++;
	}
	q->pkts += keep;
	return n - keep;
}

/* Arrival time of the @k-th packet from the head (k < pkts). */
uint64_t
pktq_time_of(const struct pktq *q, uint64_t k)
{
	uint32_t i;

	for (i = 0; i < q->nb; i++) {
		const struct seg *s = &q->seg[(q->head + i) % q->cap];

		if (k < s->n)
			return s->t0 + k * s->dt;
		k -= s->n;
	}
	return TIME_NEVER;
}

/*
 * Serve @n head packets, the k-th at t + k * cost, into @h. If @out is
 * given, each is handed to it when its service ends.
 */
void
pktq_pop(struct pktq *q, uint64_t n, uint64_t t, uint64_t cost,
	 struct hist *h, struct pktq *out, uint64_t *out_dropped)
{
	while (n > 0 && q->nb > 0) {
		struct seg *s = &q->seg[q->head];
		uint64_t m = min_u64(n, s->n);

		hist_add_linear(h, t - s->t0, (int64_t)cost - (int64_t)s->dt, m);
		if (out != NULL)
			*out_dropped += pktq_push(out, t + cost, cost, m);
		s->t0 += m * s->dt;
		s->n -= m;
		q->pkts -= m;
		n -= m;
		t += m * cost;
		if (s->n == 0) {
			q->head = (q->head + 1) % q->cap;
			q->nb--;
		}
	}
}

