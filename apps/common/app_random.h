/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_APP_RANDOM_H
#define SIRQ_APP_RANDOM_H

#include <stdint.h>

/*
 * splitmix64: a fixed seed gives the same sequence on every run, so the
 * application load's schedule and the echo client's sizes and payloads
 * are reproducible. Header-only: the client links nothing of DPDK.
 */
static inline uint64_t
app_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif /* SIRQ_APP_RANDOM_H */
