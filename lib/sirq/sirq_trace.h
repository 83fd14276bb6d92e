/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_TRACE_H
#define SIRQ_TRACE_H

/*
 * Tracepoints, the kernel's way: the engine names the event where it
 * happens, as kernel/softirq.c calls trace_softirq_raise(),
 * trace_softirq_entry() and trace_softirq_exit(), and the build decides
 * what that costs.
 *
 * With -Dtracepoints=true (the default) meson defines SIRQ_TRACEPOINTS in
 * the library's DPDK build, and each SIRQ_TRACE_*() is an rte_trace point
 * named sirq.*, registered by sirq_trace.c and enabled at run time with
 * EAL's --trace=sirq.* (or rte_trace_point_enable()). A disabled point is
 * one load of its handle and a predicted branch. Without SIRQ_TRACEPOINTS
 * (-Dtracepoints=false, or the engine built without DPDK) they expand to
 * nothing and this header includes no DPDK header.
 *
 * They are regular points, not RTE_TRACE_POINT_FP: Debian's DPDK, like
 * DPDK's default build, has RTE_ENABLE_TRACE_FP off, which would compile
 * fast-path points out for every user of the packaged DPDK. The disabled
 * cost is in docs/benchmarks.md.
 *
 * Every event carries the CPU's id (sirq_cpu_conf.id: the lcore id in the
 * DPDK binding), since sirqd writes into a trace stream of its own, not
 * the lcore's. Vectors, contexts and reasons are the numbers of enum
 * sirq_vector, sirq_ctx, sirq_exit, sirq_wake and sirq_window.
 */

#ifdef SIRQ_TRACEPOINTS

#include <rte_trace_point.h>

/* A vector became pending: the raise whose time the run's latency counts. */
RTE_TRACE_POINT(
	sirq_trace_softirq_raise,
	RTE_TRACE_POINT_ARGS(uint32_t cpu, uint8_t vec),
	rte_trace_point_emit_u32(cpu);
	rte_trace_point_emit_u8(vec);
)

RTE_TRACE_POINT(
	sirq_trace_softirq_entry,
	RTE_TRACE_POINT_ARGS(uint32_t cpu, uint8_t vec, uint8_t ctx),
	rte_trace_point_emit_u32(cpu);
	rte_trace_point_emit_u8(vec);
	rte_trace_point_emit_u8(ctx);
)

RTE_TRACE_POINT(
	sirq_trace_softirq_exit,
	RTE_TRACE_POINT_ARGS(uint32_t cpu, uint8_t vec, uint8_t ctx),
	rte_trace_point_emit_u32(cpu);
	rte_trace_point_emit_u8(vec);
	rte_trace_point_emit_u8(ctx);
)

/* One __do_softirq() pass ended, and why. */
RTE_TRACE_POINT(
	sirq_trace_pass_end,
	RTE_TRACE_POINT_ARGS(uint32_t cpu, uint8_t reason, uint8_t ctx),
	rte_trace_point_emit_u32(cpu);
	rte_trace_point_emit_u8(reason);
	rte_trace_point_emit_u8(ctx);
)

/* An idle worker was woken (wakeup_softirqd()). */
RTE_TRACE_POINT(
	sirq_trace_worker_wakeup,
	RTE_TRACE_POINT_ARGS(uint32_t cpu, uint8_t reason),
	rte_trace_point_emit_u32(cpu);
	rte_trace_point_emit_u8(reason);
)

/* kicinski: a deferral window opened until @end_ns (engine clock, ns). */
RTE_TRACE_POINT(
	sirq_trace_window_open,
	RTE_TRACE_POINT_ARGS(uint32_t cpu, uint8_t kind, uint64_t end_ns),
	rte_trace_point_emit_u32(cpu);
	rte_trace_point_emit_u8(kind);
	rte_trace_point_emit_u64(end_ns);
)

/* kicinski: the window ended with the worker still runnable; work taken back. */
RTE_TRACE_POINT(
	sirq_trace_window_override,
	RTE_TRACE_POINT_ARGS(uint32_t cpu),
	rte_trace_point_emit_u32(cpu);
)

#define SIRQ_TRACE_SOFTIRQ_RAISE(cpu, vec) \
	sirq_trace_softirq_raise((cpu)->conf.id, (uint8_t)(vec))
#define SIRQ_TRACE_SOFTIRQ_ENTRY(cpu, vec, ctx) \
	sirq_trace_softirq_entry((cpu)->conf.id, (uint8_t)(vec), (uint8_t)(ctx))
#define SIRQ_TRACE_SOFTIRQ_EXIT(cpu, vec, ctx) \
	sirq_trace_softirq_exit((cpu)->conf.id, (uint8_t)(vec), (uint8_t)(ctx))
#define SIRQ_TRACE_PASS_END(cpu, why, ctx) \
	sirq_trace_pass_end((cpu)->conf.id, (uint8_t)(why), (uint8_t)(ctx))
#define SIRQ_TRACE_WORKER_WAKEUP(cpu, why) \
	sirq_trace_worker_wakeup((cpu)->conf.id, (uint8_t)(why))
#define SIRQ_TRACE_WINDOW_OPEN(cpu, kind, end_ns) \
	sirq_trace_window_open((cpu)->conf.id, (uint8_t)(kind), (end_ns))
#define SIRQ_TRACE_WINDOW_OVERRIDE(cpu) \
	sirq_trace_window_override((cpu)->conf.id)

#else /* !SIRQ_TRACEPOINTS */

#define SIRQ_TRACE_NOTHING(...) do { } while (0)
#define SIRQ_TRACE_SOFTIRQ_RAISE(cpu, vec) SIRQ_TRACE_NOTHING(cpu, vec)
#define SIRQ_TRACE_SOFTIRQ_ENTRY(cpu, vec, ctx) SIRQ_TRACE_NOTHING(cpu, vec, ctx)
#define SIRQ_TRACE_SOFTIRQ_EXIT(cpu, vec, ctx) SIRQ_TRACE_NOTHING(cpu, vec, ctx)
#define SIRQ_TRACE_PASS_END(cpu, why, ctx) SIRQ_TRACE_NOTHING(cpu, why, ctx)
#define SIRQ_TRACE_WORKER_WAKEUP(cpu, why) SIRQ_TRACE_NOTHING(cpu, why)
#define SIRQ_TRACE_WINDOW_OPEN(cpu, kind, end_ns) \
	SIRQ_TRACE_NOTHING(cpu, kind, end_ns)
#define SIRQ_TRACE_WINDOW_OVERRIDE(cpu) SIRQ_TRACE_NOTHING(cpu)

#endif /* SIRQ_TRACEPOINTS */

#endif /* SIRQ_TRACE_H */
