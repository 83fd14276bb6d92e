/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Latency histograms: 16 sub-buckets per power of two, fed by runs of
 * steadily spaced packets a bucket at a time.
 */

#include <math.h>

#include "sim.h"

static unsigned int
hist_bucket(uint64_t ns)
{
	unsigned int e, b;

	if (ns < HIST_SUB)
		return (unsigned int)ns;
	e = 63 - (unsigned int)__builtin_clzll(ns);
	b = HIST_SUB + (e - HIST_SUB_BITS) * HIST_SUB +
		(unsigned int)((ns >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
	return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

/* Lowest value of bucket @b, in ns. */
static uint64_t
hist_lower(unsigned int b)
{
	unsigned int e;

	if (b < HIST_SUB)
		return b;
	e = (b - HIST_SUB) / HIST_SUB + HIST_SUB_BITS;
	return (uint64_t)(HIST_SUB + (b - HIST_SUB) % HIST_SUB) <<
		(e - HIST_SUB_BITS);
}

/* One past the highest value of bucket @b, in ns. */
uint64_t
hist_upper(unsigned int b)
{
	return b + 1 < HIST_BUCKETS ? hist_lower(b + 1) : UINT64_MAX;
}

/*
 * Add @n samples l0, l0 + slope, ..., in ps: packets that arrived at a
 * steady pace and are served at another steady pace. Walks buckets, not
 * packets, so 100 Gb/s costs no more than 1 Gb/s.
 */
void
hist_add_linear(struct hist *h, uint64_t l0, int64_t slope, uint64_t n)
{
	uint64_t k = 0, last;

	if (n == 0)
		return;
	last = (uint64_t)((int64_t)l0 + slope * (int64_t)(n - 1));
	while (k < n) {
		uint64_t v = (uint64_t)((int64_t)l0 + slope * (int64_t)k);
		unsigned int b = hist_bucket(v / PS_PER_NS);
		uint64_t cnt;

		if (slope == 0) {
			cnt = n - k;
		} else if (slope > 0) {
			uint64_t hi = hist_upper(b);

			cnt = hi == UINT64_MAX ? n - k :
				(hi * PS_PER_NS - 1 - v) / (uint64_t)slope + 1;
		} else {
			cnt = (v - hist_lower(b) * PS_PER_NS) /
				(uint64_t)(-slope) + 1;
		}
		cnt = min_u64(cnt, n - k);
		h->count[b] += cnt;
		k += cnt;
	}
	h->samples += n;
	h->sum_ns += ((double)l0 + (double)last) / 2 * (double)n / PS_PER_NS;
	if (l0 / PS_PER_NS > h->max_ns)
		h->max_ns = l0 / PS_PER_NS;
	if (last / PS_PER_NS > h->max_ns)
		h->max_ns = last / PS_PER_NS;
}

/* Upper bound of the bucket holding quantile @q, capped at the maximum. */
uint64_t
hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;
	unsigned int b;

	if (h->samples == 0)
		return 0;
	rank = (uint64_t)ceil(q * (double)h->samples);
	if (rank == 0)
		rank = 1;
	for (b = 0; b < HIST_BUCKETS; b++) {
		seen += h->count[b];
		if (seen >= rank)
			return min_u64(hist_upper(b) - 1, h->max_ns);
	}
	return h->max_ns;
}

