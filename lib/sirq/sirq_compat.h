/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_COMPAT_H
#define SIRQ_COMPAT_H

/*
 * Internal to libsirq (not installed): the one place where the DPDK
 * versions libsirq supports differ, 22.11 LTS (Debian 12), 24.11 LTS
 * (Debian 13) and 25.11 LTS (Debian testing). The .c files call the
 * sirq_compat names below and hold no version check of their own; where
 * the versions share an API, the newest one is used.
 *
 * Differences found building everything (library, apps, tools, tests)
 * with -Werror against all three (docs/architecture.md, "Supported DPDK
 * versions"):
 *
 *  - rte_tel_data_add_dict_u64() is deprecated (23.03) in favour of
 *    rte_tel_data_add_dict_uint(), which 22.11 does not have, and gone in
 *    25.11: sirq_tel_add_dict_uint() below.
 *  - rte_tel_data_add_dict_int() takes an int in 22.11, an int64_t from
 *    23.03 on: the same call compiles on all three (libsirq passes an int).
 *  - The libraries' ABI: librte_*.so.23 (22.11), .so.25 (24.11), .so.26
 *    (25.11); libsirq is rebuilt per version, nothing in its own ABI
 *    changes.
 *  - 25.11 no longer takes __rte_packed after a struct (its
 *    __rte_packed_begin/_end replace it): the one packed struct, in
 *    bench/lat-gen.c, uses GCC's attribute, which every version accepts.
 *    25.11's other removals (the unprefixed `handler` typedef of
 *    rte_telemetry.h, rte_eth_stats' per-queue q_* arrays,
 *    rte_eal_parse_coremask()) are nothing libsirq calls.
 *
 * Everything else libsirq calls (ethdev bursts and Rx interrupts,
 * rte_power_monitor, EAL lcores and threads, mempool, rte_timer,
 * rte_trace points) compiles unchanged, warnings as errors.
 */

#include <stdint.h>

#include <rte_telemetry.h>
#include <rte_version.h>

#define SIRQ_DPDK_AT_LEAST(y, m) (RTE_VERSION >= RTE_VERSION_NUM(y, m, 0, 0))

/* An unsigned 64-bit value in a telemetry dict. */
static inline int
sirq_tel_add_dict_uint(struct rte_tel_data *d, const char *name, uint64_t val)
{
#if SIRQ_DPDK_AT_LEAST(23, 3)
	return rte_tel_data_add_dict_uint(d, name, val);
#else
	return rte_tel_data_add_dict_u64(d, name, val);
#endif
}

#endif /* SIRQ_COMPAT_H */
