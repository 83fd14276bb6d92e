/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Who runs a flood under mainline, and whether another thread's
 * bottom-half sections change it (docs/policies.md, "What the kernel
 * does with pending work, since the revert").
 *
 * net_null floods the lcore's one queue: every NAPI poll uses its whole
 * budget, so every pass ends on its limits with NET_RX still pending.
 * In the kernel the first such pass wakes ksoftirqd, which then runs
 * pass after pass while work stays pending; the NIC is masked, so the
 * only interrupts are ticks, and one that lands inside a pass runs
 * nothing at irq exit. Another CPU's thread cannot take this CPU's
 * bottom halves; one on this CPU runs what is pending at its
 * local_bh_enable() and wakes nobody. So the flood stays with ksoftirqd,
 * sections or not: almost nothing runs inline.
 *
 * libsirq, irq mode: the same by construction. Poll mode without an
 * application slice: the dispatcher is the idle task while sirqd is
 * runnable (it does not poll), whatever made sirqd runnable. Before,
 * the dispatcher waited only after a deferral: a same-CPU thread's
 * sections gave sirqd the flood (5 % inline) and without them the
 * dispatcher kept it (100 % inline), or not, as the scheduler fell.
 *
 * Each case asserts the inline share against the kernel's (at most
 * SHARE_POINTS points), that every sirqd pass is explained by a wake-up
 * or a continuation, and logs the counts for the doc's table.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <rte_lcore.h>

#include "eal_harness.h"
#include "sirq.h"

#define SECTION_PERIOD_MS 10
#define RUN_MS 1000
/* The kernel's inline share here is about 0: 10 points allowed. */
#define SHARE_POINTS 10.0

enum sections {
	SECTIONS_NONE,
	SECTIONS_SAME_CPU,	/* a thread pinned to the lcore's CPU */
	SECTIONS_OTHER_CPU,	/* the test thread, on another CPU */
};

static const char *const section_names[] = {
	[SECTIONS_NONE] = "none",
	[SECTIONS_SAME_CPU] = "same_cpu",
	[SECTIONS_OTHER_CPU] = "other_cpu",
};

struct sectioner {
	struct sirq_lcore *lc;
	uint64_t stop_ns;
	unsigned int sections;	/* sections opened and closed */
	unsigned int refused;	/* -EXDEV: another CPU's thread */
	unsigned int calls;	/* ... which asked the lcore instead */
};

static int
empty_section(struct sirq_lcore *lc, void *arg)
{
	(void)lc;
	(void)arg;
	return 0;
}

static void
sections_until_stop(struct sectioner *s)
{
	struct sirq_cpu *cpu = sirq_lcore_cpu(s->lc);
	int ret;

	while (now_ns() < s->stop_ns) {
		ret = sirq_bh_disable(cpu);
		if (ret == 0) {
			cr_assert_eq(sirq_bh_enable(cpu), 0);
			s->sections++;
		} else {
			cr_assert_eq(ret, -EXDEV);
			s->refused++;
			if (sirq_lcore_call(s->lc, empty_section, NULL) == 0)
				s->calls++;
		}
		usleep(SECTION_PERIOD_MS * 1000);
	}
}

static void *
same_cpu_main(void *arg)
{
	struct sectioner *s = arg;
	rte_cpuset_t set = rte_lcore_cpuset(TEST_LCORE);

	cr_assert(pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0);
	sections_until_stop(s);
	return NULL;
}

static void
flood(enum sirq_mode mode, enum sections sections)
{
	static const char *const vdevs[] = { "net_null0", NULL };
	struct sirq_lcore_conf conf;
	struct sirq_lcore_stats ls;
	struct sectioner s = { 0 };
	uint64_t passes = 0, woken = 0, explained, in, out;
	struct sirq_lcore *lc;
	struct sirq_stats st;
	double share;
	pthread_t thr;
	unsigned int e;

	eal_start(vdevs);
	port_start(0, 1, false);
	sirq_lcore_conf_default(&conf);
	conf.mode = mode;
	conf.params.policy = SIRQ_POLICY_MAINLINE;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_lcore_add_rx_queue(lc, 0, 0, rx_free_all, NULL) == 0);
	s.lc = lc;
	dispatcher_launch(lc);
	dispatcher_wait_running(lc);
	s.stop_ns = now_ns() + RUN_MS * 1000000ULL;
	if (sections == SECTIONS_SAME_CPU) {
		cr_assert(pthread_create(&thr, NULL, same_cpu_main, &s) == 0);
		cr_assert(pthread_join(thr, NULL) == 0);
	} else if (sections == SECTIONS_OTHER_CPU) {
		sections_until_stop(&s);
	} else {
		usleep(RUN_MS * 1000);
	}
	dispatcher_join(lc);
	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	sirq_lcore_stats_get(lc, &ls);

	for (e = 0; e < SIRQ_EXIT_MAX; e++)
		passes += st.pass_exit[e][SIRQ_CTX_WORKER];
	for (e = 0; e < SIRQ_WAKE_MAX; e++)
		woken += st.wakeups[e];
	explained = woken - st.worker_wakeups_unused + st.worker_continuations;
	in = st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE];
	out = st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER];
	share = in + out != 0 ? 100.0 * (double)in / (double)(in + out) : 0;
	cr_log_info("share mode=%s sections=%s net_rx_inline=%" PRIu64
		    " net_rx_sirqd=%" PRIu64 " inline_pct=%.1f sirqd_passes=%" PRIu64
		    " wakeups=%" PRIu64 " (restart %" PRIu64 ", time %" PRIu64
		    ", recheck %" PRIu64 ", run %" PRIu64 ") unused=%" PRIu64
		    " continuations=%" PRIu64 " sections=%u refused=%u calls=%u"
		    " iterations=%" PRIu64 " poll_waits=%" PRIu64,
		    mode == SIRQ_MODE_IRQ ? "irq" : "poll",
		    section_names[sections], in, out, share, passes, woken,
		    st.wakeups[SIRQ_WAKE_RESTART], st.wakeups[SIRQ_WAKE_TIME],
		    st.wakeups[SIRQ_WAKE_RECHECK], st.wakeups[SIRQ_WAKE_RUN],
		    st.worker_wakeups_unused, st.worker_continuations,
		    s.sections, s.refused, s.calls, ls.iterations,
		    ls.poll_waits);

	cr_expect_gt(in + out, 0, "no flood");
	cr_expect_leq(share, SHARE_POINTS,
		      "NET_RX ran %.1f %% inline (%" PRIu64 " of %" PRIu64
		      "): the kernel leaves the flood to ksoftirqd", share, in,
		      in + out);
	cr_expect(explained == passes || explained == passes + 1,
		  "sirqd ran %" PRIu64 " passes, wake-ups and continuations explain %" PRIu64,
		  passes, explained);
	if (sections == SECTIONS_SAME_CPU) {
		cr_expect_gt(s.sections, 0);
		cr_expect_eq(s.refused, 0);
	} else if (sections == SECTIONS_OTHER_CPU) {
		cr_expect_eq(s.sections, 0, "another CPU took the bottom halves");
		cr_expect_gt(s.calls, 0);
		cr_expect_eq(s.calls, s.refused);
	}
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "mbufs leaked");
}

#define SHARE_TEST(mode, sections)						\
Test(lcore_share, mainline_##mode##_sections_##sections, .timeout = 60)	\
{										\
	flood(SIRQ_MODE_##mode, SECTIONS_##sections);				\
}

SHARE_TEST(POLL, NONE)
SHARE_TEST(POLL, SAME_CPU)
SHARE_TEST(POLL, OTHER_CPU)
SHARE_TEST(IRQ, NONE)
SHARE_TEST(IRQ, SAME_CPU)
SHARE_TEST(IRQ, OTHER_CPU)
