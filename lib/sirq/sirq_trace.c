/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Registration of the sirq.* trace points with EAL's trace library (the
 * points themselves are in sirq_trace.h). Only built with
 * -Dtracepoints=true. The names are what --trace=REGEX matches:
 * --trace=sirq.* records all of them.
 */

#include <rte_trace_point_register.h>

#include "sirq_trace.h"

RTE_TRACE_POINT_REGISTER(sirq_trace_softirq_raise, sirq.softirq.raise)
RTE_TRACE_POINT_REGISTER(sirq_trace_softirq_entry, sirq.softirq.entry)
RTE_TRACE_POINT_REGISTER(sirq_trace_softirq_exit, sirq.softirq.exit)
RTE_TRACE_POINT_REGISTER(sirq_trace_pass_end, sirq.pass.end)
RTE_TRACE_POINT_REGISTER(sirq_trace_worker_wakeup, sirq.worker.wakeup)
RTE_TRACE_POINT_REGISTER(sirq_trace_window_open, sirq.window.open)
RTE_TRACE_POINT_REGISTER(sirq_trace_window_override, sirq.window.override)
