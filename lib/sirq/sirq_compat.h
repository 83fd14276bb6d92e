/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_COMPAT_H
#define SIRQ_COMPAT_H

/*
 * Internal to libsirq (not installed): the one place where the DPDK
 * versions libsirq supports differ, 22.11 LTS (Debian 12) and 24.11 LTS
 * (Debian 13). The .c files call the sirq_compat names below and hold no
 * version check of their own; where both versions have an API, the newer
 * one is used.
 *
 * Differences between 22.11 and 24.11 that reach libsirq:
 *
 *  - rte_tel_data_add_dict_u64() is deprecated (23.03) in favour of
 *    rte_tel_data_add_dict_uint(), which 22.11 does not have:
 *    sirq_tel_add_dict_uint().
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
