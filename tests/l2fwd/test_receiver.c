/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * l2fwd-sirq --receiver: NET_RX delivers to a bounded socket queue that
 * reader threads on the lcore's CPU read (the flood of 4cd13c21b207).
 * Two net_null ports flood it. Judged by the report's "receiver" object:
 * packets reach the application, the books balance (NET_RX processed =
 * received + dropped + drained at exit, nothing left queued, every mbuf
 * back in its pool), a small socket with a slow reader drops. Behaviour
 * only: no rates are judged.
 */

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "l2t.h"

/* EAL start and stop take about a second: a hang detector, not a speed. */
#define STOP_DEADLINE_S 15
/* Long enough for the flood to be under way before the signal. */
#define FLOOD_BEFORE_SIGNAL_MS 1000

static void
suite_fini(void)
{
	l2t_cleanup();
}

TestSuite(l2fwd_receiver, .fini = suite_fini, .timeout = 60);

struct rcv_case {
	char policy[16];
	char mode[8];
};

static json_t *
receiver_of(json_t *report)
{
	json_t *rcv = json_object_get(report, "receiver");

	cr_assert(json_is_array(rcv) && json_array_size(rcv) == 1,
		  "the report has no \"receiver\" array of one lcore");
	return json_array_get(rcv, 0);
}

/*
 * The receiver's books: NET_RX processed what the lcore received from
 * the ports, and each packet was received by the application, dropped
 * by the full socket or freed from it at exit; nothing is left queued,
 * every mbuf is back in its pool.
 */
static void
expect_receiver_books_balance(json_t *j, const char *label)
{
	json_t *r = receiver_of(j);
	uint64_t processed = l2t_json_u64(r, "processed");
	uint64_t received = l2t_json_u64(r, "received");
	uint64_t drops = l2t_json_u64(r, "drops");
	uint64_t drained = l2t_json_u64(r, "drained_at_exit");
	uint64_t ports_rx = l2t_json_u64(l2t_report_port(j, 0), "rx") +
		l2t_json_u64(l2t_report_port(j, 1), "rx");

	cr_expect(processed > 0, "%s: NET_RX processed nothing", label);
	cr_expect(processed == received + drops + drained,
		  "%s: processed %" PRIu64 " != received %" PRIu64 " + drops %"
		  PRIu64 " + drained at exit %" PRIu64, label, processed,
		  received, drops, drained);
	cr_expect(l2t_json_u64(r, "queued") == 0,
		  "%s: %" PRIu64 " packets still queued after the drain", label,
		  l2t_json_u64(r, "queued"));
	cr_expect(l2t_report_lcores_sum(j, "rx_packets") == processed,
		  "%s: lcore rx_packets %" PRIu64 " != processed %" PRIu64,
		  label, l2t_report_lcores_sum(j, "rx_packets"), processed);
	cr_expect(ports_rx == processed, "%s: ports rx %" PRIu64
		  " != processed %" PRIu64, label, ports_rx, processed);
	cr_expect(l2t_json_u64(j, "mbufs_in_use") == 0,
		  "%s: mbufs_in_use %" PRIu64, label,
		  l2t_json_u64(j, "mbufs_in_use"));
}

/* l2fwd-sirq on two net_null ports, on lcore 0, with --receiver @spec. */
static json_t *
run_receiver(const char *policy, const char *mode, const char *spec,
	     const char *duration)
{
	const char *report = l2t_path("report.json");
	struct l2t_argv a = { .argc = 0 };
	struct l2t_result r;
	json_t *j;

	l2t_null_flood_args(&a, "-l", "0", report);
	l2t_arg(&a, "--policy");
	l2t_arg(&a, "%s", policy);
	l2t_arg(&a, "--mode");
	l2t_arg(&a, "%s", mode);
	l2t_arg(&a, "--receiver");
	l2t_arg(&a, "%s", spec);
	l2t_arg(&a, "--duration");
	l2t_arg(&a, "%s", duration);
	l2t_run_for(&a, STOP_DEADLINE_S, &r);
	cr_assert(r.status == 0 && !r.timed_out,
		  "--policy %s --mode %s --receiver %s: exit code %d%s:\n%s%s",
		  policy, mode, spec, r.status,
		  r.timed_out ? " (did not stop at --duration)" : "",
		  l2t_app_lines(r.out), l2t_app_lines(r.err));
	cr_expect(strstr(r.out, "receives on") != NULL,
		  "no 'lcore 0 receives on' line:\n%s", l2t_app_lines(r.out));
	l2t_result_free(&r);
	j = l2t_report_load(report);
	return j;
}

ParameterizedTestParameters(l2fwd_receiver,
			    packets_reach_the_application_and_the_books_balance)
{
	static struct rcv_case cases[] = {
		{ "mainline", "irq" }, { "ksoftirqd", "irq" },
		{ "kicinski", "irq" }, { "threaded", "irq" },
		{ "kicinski", "poll" },
	};

	return cr_make_param_array(struct rcv_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct rcv_case *c, l2fwd_receiver,
		  packets_reach_the_application_and_the_books_balance)
{
	char label[64];
	json_t *j, *r;

	snprintf(label, sizeof(label), "--policy %s --mode %s", c->policy,
		 c->mode);
	j = run_receiver(c->policy, c->mode, "on", "2");
	r = receiver_of(j);
	cr_expect(l2t_json_u64(r, "received") > 0,
		  "%s: the application received nothing", label);
	cr_expect(json_real_value(json_object_get(r, "rx_pps")) > 0,
		  "%s: rx_pps is 0", label);
	expect_receiver_books_balance(j, label);
	json_decref(j);
}

/*
 * A socket of 4 packets and a reader that takes 1 ms a packet: the
 * flood overflows it, and every packet is still accounted for.
 */
Test(l2fwd_receiver, a_small_socket_and_a_slow_reader_drop)
{
	json_t *j, *r;

	j = run_receiver("kicinski", "irq", "rcvbuf=4,app=1ms", "1");
	r = receiver_of(j);
	cr_expect(l2t_json_u64(r, "rcvbuf") == 4);
	cr_expect(l2t_json_u64(r, "app_ns") == 1000000);
	cr_expect(l2t_json_u64(r, "drops") > 0,
		  "a 4-packet socket under a flood dropped nothing");
	expect_receiver_books_balance(j, "rcvbuf=4,app=1ms");
	json_decref(j);
}

/* The spec as given, and the CPU split sampled while it ran. */
Test(l2fwd_receiver, the_report_has_the_spec_and_the_cpu_split)
{
	json_t *j, *r, *cpu;

	j = run_receiver("ksoftirqd", "irq",
			 "proto=500ns,app=2us,rcvbuf=100,threads=2,nice=1", "2");
	r = receiver_of(j);
	cr_expect(l2t_json_u64(r, "proto_ns") == 500);
	cr_expect(l2t_json_u64(r, "app_ns") == 2000);
	cr_expect(l2t_json_u64(r, "rcvbuf") == 100);
	cr_expect(l2t_json_u64(r, "threads") == 2);
	cr_expect(json_integer_value(json_object_get(r, "nice")) == 1);
	cpu = json_object_get(r, "cpu");
	cr_assert(json_is_object(cpu), "no receiver cpu object");
	cr_expect(json_real_value(json_object_get(cpu, "window_s")) > 0,
		  "the CPU split was never sampled");
	cr_expect(json_real_value(json_object_get(cpu, "receiver_s")) > 0,
		  "the readers used no CPU");
	cr_expect(json_real_value(json_object_get(cpu, "sirqd_s")) > 0,
		  "sirqd not found or used no CPU");
	cr_expect(json_real_value(json_object_get(cpu, "dispatcher_s")) > 0,
		  "the dispatcher used no CPU");
	expect_receiver_books_balance(j, "threads=2");
	json_decref(j);
}

/*
 * sk_data_ready() wakes the reader, but in the kernel the reader cannot
 * run before the softirq ends. Here a reader woken between two packets
 * could preempt a fair-class sirqd, drain one packet and sleep again: a
 * futex round trip a packet. One wake-up per burst of up to 32 packets
 * (net_null always fills them): far fewer than one per 16 packets.
 */
Test(l2fwd_receiver, the_reader_is_woken_once_a_burst_not_once_a_packet)
{
	json_t *j, *r;
	uint64_t wakeups, processed;

	j = run_receiver("ksoftirqd", "irq", "proto=1us,app=0ns", "2");
	r = receiver_of(j);
	wakeups = l2t_json_u64(r, "wakeups");
	processed = l2t_json_u64(r, "processed");
	cr_expect(wakeups > 0, "the reader was never woken");
	cr_expect(wakeups * 16 <= processed, "%" PRIu64 " wake-ups for %"
		  PRIu64 " packets", wakeups, processed);
	expect_receiver_books_balance(j, "app=0ns");
	json_decref(j);
}

/* The option from the INI file, [l2fwd] receiver = ... */
Test(l2fwd_receiver, the_config_file_sets_it)
{
	const char *report = l2t_path("report.json");
	const char *ini = l2t_path("receiver.ini");
	struct l2t_argv a = { .argc = 0 };
	struct l2t_result r;
	json_t *j, *rcv;

	l2t_write_file(ini, "[l2fwd]\nreceiver = rcvbuf=64,threads=3\n"
		       "[run]\nduration = 1\n[sirq]\nmode = irq\n");
	l2t_null_flood_args(&a, "-l", "0", report);
	l2t_arg(&a, "--config");
	l2t_arg(&a, "%s", ini);
	l2t_run_for(&a, STOP_DEADLINE_S, &r);
	cr_assert(r.status == 0 && !r.timed_out, "exit code %d:\n%s%s",
		  r.status, l2t_app_lines(r.out), l2t_app_lines(r.err));
	l2t_result_free(&r);
	j = l2t_report_load(report);
	rcv = receiver_of(j);
	cr_expect(l2t_json_u64(rcv, "rcvbuf") == 64);
	cr_expect(l2t_json_u64(rcv, "threads") == 3);
	expect_receiver_books_balance(j, "--config");
	json_decref(j);
}

/* SIGINT under full load: exit code 0, a report, the books balance. */
Test(l2fwd_receiver, sigint_under_a_flood_exits_cleanly)
{
	const char *report = l2t_path("report.json");
	struct l2t_argv a = { .argc = 0 };
	struct l2t_proc p = { .name = "l2fwd-sirq" };
	int status;
	json_t *j;

	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	l2t_null_flood_args(&a, "-l", "0", report);
	l2t_arg(&a, "--mode");
	l2t_arg(&a, "irq");
	l2t_arg(&a, "--policy");
	l2t_arg(&a, "mainline");
	l2t_arg(&a, "--receiver");
	l2t_arg(&a, "threads=2");
	l2t_proc_start(&p, "l2fwd-sirq", &a);
	l2t_proc_expect(&p, "receives on", STOP_DEADLINE_S);
	usleep(FLOOD_BEFORE_SIGNAL_MS * 1000);

	cr_assert(kill(p.pid, SIGINT) == 0);
	status = l2t_proc_wait(&p, STOP_DEADLINE_S);
	cr_assert(status == 0, "SIGINT: exit code %d:\n%s", status,
		  l2t_app_lines(p.buf));
	cr_expect(strstr(p.buf, "signal 2, stopping") != NULL,
		  "no 'signal 2, stopping' in:\n%s", l2t_app_lines(p.buf));
	l2t_proc_reap(&p);
	j = l2t_report_load(report);
	expect_receiver_books_balance(j, "SIGINT");
	json_decref(j);
}
