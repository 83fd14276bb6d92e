/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_L2T_H
#define SIRQ_L2T_H

/*
 * Functional tests of l2fwd-sirq: the binary is run as a user runs it,
 * with DPDK virtual devices, and judged by what it writes (pcap files,
 * the JSON report, its messages, its exit code).
 *
 * meson passes the programs and directories in the environment:
 * L2FWD_SIRQ (the binary), L2T_CONFIG_DIR (config/), L2T_DEFAULT_POLICY
 * (-Ddefault_policy), DPDK_TESTPMD.
 *
 * Every DPDK process gets --no-huge (hugepages only where a test needs
 * multi-process), --no-pci, its own --file-prefix (l2t-<test pid>-<n>,
 * removed from the runtime directory at the end) and its own virtual
 * devices. Failures go through Criterion's asserts.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define L2T_MAX_ARGS 64
#define L2T_ARG_LEN 512
#define L2T_EAL_MEMORY_MB "128"
/* Safety net for a hung process, far above any run's duration. */
#define L2T_RUN_TIMEOUT_S 60
/* After SIGINT, before SIGKILL. */
#define L2T_STOP_GRACE_S 5L

/* An argument vector under construction. */
struct l2t_argv {
	int argc;
	char *argv[L2T_MAX_ARGS + 1];
	char buf[L2T_MAX_ARGS][L2T_ARG_LEN];
};

/* Append one printf-formatted argument. */
void l2t_arg(struct l2t_argv *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A fresh --file-prefix, whose runtime directory l2t_cleanup() removes. */
const char *l2t_new_prefix(void);
const char *l2t_last_prefix(void);

/*
 * Append the binary and its EAL arguments: lcore 0, --no-huge, --no-pci
 * and a fresh --file-prefix. Start from an argv with argc = 0.
 */
void l2t_eal_args(struct l2t_argv *a, const char *binary);
/* The same on other lcores: @opt "-l" or "--lcores", @lcores its value. */
void l2t_eal_args_lcores(struct l2t_argv *a, const char *binary,
			 const char *opt, const char *lcores);
/*
 * The same for a primary process that DPDK's multi-process tools
 * (dpdk-dumpcap, dpdk-pdump, dpdk-proc-info) attach to: --lcores=@lcores
 * (EAL's syntax: "1", "1@0,2@1"), hugepages (no --no-huge and no -m: EAL
 * takes them as it needs them), --no-pci and a fresh --file-prefix, the
 * one the tools are given.
 */
void l2t_eal_args_huge(struct l2t_argv *a, const char *binary,
		       const char *lcores);

/* The runtime directory EAL creates for a file prefix. */
void l2t_runtime_dir(const char *prefix, char *buf, size_t len);

/* A process that ran to its end: exit code, what it printed. */
struct l2t_result {
	int status;		/* exit code, or 128 + signal */
	char *out;		/* stdout, NUL-terminated */
	char *err;		/* stderr */
	bool timed_out;		/* SIGINT (then SIGKILL) ended it */
};

/* Run @a to its end (stopped after L2T_RUN_TIMEOUT_S: fails the test). */
void l2t_run(struct l2t_argv *a, struct l2t_result *r);
/*
 * Run @a for at most @timeout_s, then SIGINT it (SIGKILL after
 * L2T_STOP_GRACE_S) and set r->timed_out; the caller judges.
 */
void l2t_run_for(struct l2t_argv *a, unsigned int timeout_s,
		 struct l2t_result *r);
void l2t_result_free(struct l2t_result *r);

/*
 * The lines of @text that do not come from EAL, for messages; the last
 * two results stay valid.
 */
const char *l2t_app_lines(const char *text);

/*
 * l2fwd-sirq's start line for @port that says what its PMD gives libsirq
 * ("l2fwd-sirq: port N (driver): Rx work: ...; RSS: ..."), without its
 * newline, copied into @buf; NULL when @text has none.
 */
const char *l2t_port_paths(const char *text, unsigned int port, char *buf,
			   size_t len);

/* The per-test scratch directory (created on first use). */
const char *l2t_dir(void);
/* @name inside it; the last L2T_PATHS results stay valid. */
#define L2T_PATHS 16
const char *l2t_path(const char *name);
/*
 * Remove the scratch directory and, for every prefix, its runtime
 * directory and the hugepage files EAL left in hugetlbfs mounts.
 */
void l2t_cleanup(void);

/* Environment set by meson; fails the test when missing. */
const char *l2t_env(const char *name);

/* Write @text into the file @path. */
void l2t_write_file(const char *path, const char *text);

/* Load the JSON report; fails the test on bad JSON. */
json_t *l2t_report_load(const char *path);
/* ports[] entry of @port, and one of its counters. */
json_t *l2t_report_port(json_t *report, unsigned int port);
uint64_t l2t_json_u64(json_t *obj, const char *key);
/* The string @key of @obj; fails the test without one. */
const char *l2t_json_str(json_t *obj, const char *key);
/* The sum of @key over lcores[]. */
uint64_t l2t_report_lcores_sum(json_t *report, const char *key);

/* The books of a two-port l2fwd-sirq report. */
struct l2t_counts {
	uint64_t rx[2], tx[2], runts[2], link_drops[2];
	uint64_t lc_tx, lc_dropped, lc_rx_dropped_at_stop;
	uint64_t mbufs_in_use;
};

/* Read them from @report (not released). */
void l2t_report_counts(json_t *report, struct l2t_counts *c);

/*
 * l2fwd-sirq on two net_null ports (a flood without end) with the EAL
 * lcores @opt @lcores, then "--", -T 0 and --report @report; the caller
 * adds its own options.
 */
void l2t_null_flood_args(struct l2t_argv *a, const char *opt,
			 const char *lcores, const char *report);
/*
 * The books of a report of two ports: what each port received was sent
 * on its pair or counted as dropped, everything handed to the lcores' TX
 * queues was sent or counted as refused, every mbuf is back in its pool.
 * @label starts each failure message.
 */
void l2t_expect_books_balance(const char *report, const char *label);

/* A frame as written to or read from a pcap file. */
struct l2t_frame {
	uint32_t caplen;	/* bytes in data */
	uint32_t len;		/* length on the wire */
	uint8_t *data;
};

struct l2t_frames {
	size_t n;
	size_t cap;
	struct l2t_frame *f;
};

/* Append a copy of @len bytes (caplen = len). */
void l2t_frames_add(struct l2t_frames *fs, const uint8_t *data, uint32_t len);
void l2t_frames_free(struct l2t_frames *fs);

/* Write @fs as an Ethernet pcap file (pcap_open_dead + pcap_dump_open). */
void l2t_pcap_write(const char *path, const struct l2t_frames *fs);
/* Read every frame of a pcap file; checks the link type is Ethernet. */
void l2t_pcap_read(const char *path, struct l2t_frames *fs);

/* A small deterministic generator (splitmix64) for payloads. */
uint64_t l2t_random(uint64_t *state);
void l2t_random_bytes(uint64_t *state, uint8_t *buf, size_t len);

/*
 * The MAC address DPDK gives each port of the --vdev arguments @vdevs
 * (NULL-terminated), asked of DPDK itself in a child process with the same
 * devices in the same order, as l2fwd-sirq would see them.
 */
void l2t_probe_macs(const char *const *vdevs, uint8_t macs[][6],
		    unsigned int nb_ports);

/*
 * A process the test talks to while it runs: stdin from the test, stdout
 * and stderr (line-buffered through stdbuf) into one pipe the test reads.
 */
struct l2t_proc {
	const char *name;	/* for messages */
	pid_t pid;
	int in_fd;
	int out_fd;
	char *buf;		/* everything it printed so far */
	size_t len;
	size_t cap;
	size_t mark;		/* where the next search starts */
	int status;		/* once it ended: as l2t_result.status */
};

/* Start @a; @name labels messages. */
void l2t_proc_start(struct l2t_proc *p, const char *name, struct l2t_argv *a);
/*
 * Read until @needle appears after the mark (fails the test after
 * @timeout_s); returns where it starts and moves the mark past it.
 */
const char *l2t_proc_expect(struct l2t_proc *p, const char *needle,
			    unsigned int timeout_s);
/* Write one line to its stdin; the mark moves to the end of its output. */
void l2t_proc_send(struct l2t_proc *p, const char *line);
/* Wait for it to end (fails the test after @timeout_s); its exit code. */
int l2t_proc_wait(struct l2t_proc *p, unsigned int timeout_s);
/* Kill it if it still runs; free the buffer. */
void l2t_proc_reap(struct l2t_proc *p);

/*
 * Wait until the file @path holds at least @size bytes while @p runs
 * (fails the test after @timeout_s, or if @p ends first).
 */
void l2t_proc_wait_file_size(struct l2t_proc *p, const char *path,
			     long long size, unsigned int timeout_s);

/*
 * The JSON report l2fwd-sirq printed on stdout (no --report) among its
 * other lines in @text; fails the test if there is none.
 */
json_t *l2t_report_from_output(const char *text);

/*
 * Ask a running l2fwd-sirq for its report (SIGUSR1) and load it: the
 * report is written under @path by the lcore's control timer.
 */
json_t *l2t_report_request(struct l2t_proc *p, const char *path,
			   unsigned int timeout_s);

#endif /* SIRQ_L2T_H */
