/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_H
#define SIRQ_H

/**
 * @file
 * libsirq: the Linux softirq machinery for user-space dataplanes. The
 * umbrella header: both layers.
 *
 * libsirq has one public header per layer:
 *  - sirq_engine.h, the engine: vectors, raise, the softirq loop,
 *    bottom halves, tasklets, policies and parameters, counters, and
 *    struct sirq_ops, its interface to the environment. No DPDK.
 *  - sirq_lcore.h, the DPDK binding: a dispatcher per lcore, NAPI on Rx
 *    queues, TX, the control plane (sirq_lcore_set_params()), telemetry,
 *    the binding's counters. It includes sirq_engine.h.
 *
 * A DPDK application includes sirq_lcore.h; a program that runs the
 * engine under another framework includes sirq_engine.h. This header
 * includes both, for code written before the split.
 */

#include "sirq_engine.h"
#include "sirq_lcore.h"

#endif /* SIRQ_H */
