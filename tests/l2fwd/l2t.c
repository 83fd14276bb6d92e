/* SPDX-License-Identifier: BSD-3-Clause */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <pcap/pcap.h>

#include "l2t.h"

#define MAX_PREFIXES 64
#define WAIT_STEP_NS 5000000L	/* 5 ms between looks at a child */

static char scratch[PATH_MAX];
static char path_bufs[L2T_PATHS][PATH_MAX];
static unsigned int next_path;
static char prefixes[MAX_PREFIXES][64];
static unsigned int nb_prefixes;

/*
 * Deadlines are on the monotonic clock, not counted in sleep steps: on a
 * machine starved by real-time threads a 5 ms sleep can take far longer.
 */
static long
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

const char *
l2t_env(const char *name)
{
	const char *v = getenv(name);

	cr_assert(v != NULL && v[0] != '\0',
		  "%s is not set: run the tests through meson", name);
	return v;
}

void
l2t_arg(struct l2t_argv *a, const char *fmt, ...)
{
	va_list ap;
	int n;

	cr_assert(a->argc < L2T_MAX_ARGS, "too many arguments");
	va_start(ap, fmt);
	n = vsnprintf(a->buf[a->argc], L2T_ARG_LEN, fmt, ap);
	va_end(ap);
	cr_assert(n >= 0 && n < L2T_ARG_LEN, "argument too long: %s",
		  a->buf[a->argc]);
	a->argv[a->argc] = a->buf[a->argc];
	a->argc++;
	a->argv[a->argc] = NULL;
}

const char *
l2t_new_prefix(void)
{
	cr_assert(nb_prefixes < MAX_PREFIXES, "too many DPDK processes");
	snprintf(prefixes[nb_prefixes], sizeof(prefixes[0]), "l2t-%d-%u",
		 (int)getpid(), nb_prefixes);
	return prefixes[nb_prefixes++];
}

void
l2t_eal_args(struct l2t_argv *a, const char *binary)
{
	l2t_eal_args_lcores(a, binary, "-l", "0");
}

void
l2t_eal_args_lcores(struct l2t_argv *a, const char *binary, const char *opt,
		    const char *lcores)
{
	const char *prefix = l2t_new_prefix();

	l2t_arg(a, "%s", binary);
	l2t_arg(a, "%s", opt);
	l2t_arg(a, "%s", lcores);
	l2t_arg(a, "--no-huge");
	l2t_arg(a, "-m");
	l2t_arg(a, L2T_EAL_MEMORY_MB);
	l2t_arg(a, "--no-pci");
	l2t_arg(a, "--file-prefix=%s", prefix);
}

void
l2t_eal_args_huge(struct l2t_argv *a, const char *binary, const char *lcores)
{
	const char *prefix = l2t_new_prefix();

	l2t_arg(a, "%s", binary);
	l2t_arg(a, "--lcores=%s", lcores);
	l2t_arg(a, "--no-pci");
	l2t_arg(a, "--file-prefix=%s", prefix);
}

const char *
l2t_last_prefix(void)
{
	return nb_prefixes > 0 ? prefixes[nb_prefixes - 1] : "";
}

/* As EAL's eal_create_runtime_dir(). */
void
l2t_runtime_dir(const char *prefix, char *buf, size_t len)
{
	const char *base = "/var/run";

	if (getuid() != 0) {
		base = getenv("XDG_RUNTIME_DIR");
		if (base == NULL)
			base = "/tmp";
	}
	snprintf(buf, len, "%s/dpdk/%s", base, prefix);
}

/* rm -r of a directory of plain files and sockets (no recursion needed). */
static void
remove_flat_dir(const char *dir)
{
	char p[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/*
 * EAL names its hugepage files <prefix>map_<n> in a hugetlbfs mount and
 * leaves them there at exit, each holding a page until it is removed.
 */
static void
remove_hugepage_files(const char *prefix)
{
	char line[1024], dir[PATH_MAX], start[sizeof(prefixes[0]) + sizeof("map_")];
	char p[PATH_MAX + NAME_MAX + 2];
	struct dirent *e;
	FILE *mounts;
	DIR *d;
	int n;

	/* A cut name would match (and remove) another prefix's pages. */
	n = snprintf(start, sizeof(start), "%smap_", prefix);
	if (n < 0 || (size_t)n >= sizeof(start))
		return;
	mounts = fopen("/proc/mounts", "r");
	if (mounts == NULL)
		return;
	while (fgets(line, sizeof(line), mounts) != NULL) {
		char fstype[64];

		if (sscanf(line, "%*s %4095s %63s", dir, fstype) != 2 ||
		    strcmp(fstype, "hugetlbfs") != 0 ||
		    (d = opendir(dir)) == NULL)
			continue;
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, start, strlen(start)) != 0)
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	fclose(mounts);
}

const char *
l2t_dir(void)
{
	if (scratch[0] == '\0') {
		snprintf(scratch, sizeof(scratch), "/tmp/l2t-%d-XXXXXX",
			 (int)getpid());
		cr_assert(mkdtemp(scratch) != NULL, "mkdtemp: %s",
			  strerror(errno));
	}
	return scratch;
}

const char *
l2t_path(const char *name)
{
	char *buf = path_bufs[next_path++ % L2T_PATHS];

	snprintf(buf, PATH_MAX, "%s/%s", l2t_dir(), name);
	return buf;
}

void
l2t_cleanup(void)
{
	char dir[PATH_MAX];
	unsigned int i;

	for (i = 0; i < nb_prefixes; i++) {
		l2t_runtime_dir(prefixes[i], dir, sizeof(dir));
		remove_flat_dir(dir);
		remove_hugepage_files(prefixes[i]);
	}
	nb_prefixes = 0;
	if (scratch[0] != '\0' && getenv("L2T_KEEP") == NULL)
		remove_flat_dir(scratch);
	scratch[0] = '\0';
}

static char *
read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0, cap = 4096, got;
	char *buf = malloc(cap);

	cr_assert(buf != NULL);
	if (f == NULL) {
		buf[0] = '\0';
		return buf;
	}
	while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n - 1 == 0) {
			cap *= 2;
			buf = realloc(buf, cap);
			cr_assert(buf != NULL);
		}
	}
	fclose(f);
	buf[n] = '\0';
	return buf;
}

void
l2t_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert(f != NULL, "%s: %s", path, strerror(errno));
	cr_assert(fputs(text, f) >= 0 && fclose(f) == 0, "%s: write failed",
		  path);
}

void
l2t_run(struct l2t_argv *a, struct l2t_result *r)
{
	l2t_run_for(a, L2T_RUN_TIMEOUT_S, r);
	cr_assert(!r->timed_out, "%s did not end within %d s:\n%s%s",
		  a->argv[0], L2T_RUN_TIMEOUT_S, l2t_app_lines(r->out),
		  l2t_app_lines(r->err));
}

/* Wait up to @ns for @pid; 0 if it is still running. */
static pid_t
wait_child(pid_t pid, int *status, long ns)
{
	struct timespec step = { 0, WAIT_STEP_NS };
	const long since = now_ns();
	pid_t w;

	while ((w = waitpid(pid, status, WNOHANG)) == 0 &&
	       now_ns() - since < ns)
		nanosleep(&step, NULL);
	return w;
}

void
l2t_run_for(struct l2t_argv *a, unsigned int timeout_s, struct l2t_result *r)
{
	char out_path[PATH_MAX], err_path[PATH_MAX];
	int status = 0;
	pid_t pid, w;

	snprintf(out_path, sizeof(out_path), "%s/run.out", l2t_dir());
	snprintf(err_path, sizeof(err_path), "%s/run.err", l2t_dir());
	fflush(NULL);
	pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(126);
		execv(a->argv[0], a->argv);
		dprintf(2, "exec %s: %s\n", a->argv[0], strerror(errno));
		_exit(127);
	}
	r->timed_out = false;
	w = wait_child(pid, &status, (long)timeout_s * 1000000000L);
	if (w == 0) {
		/* SIGINT first: a DPDK app then stops and reports. */
		r->timed_out = true;
		kill(pid, SIGINT);
		w = wait_child(pid, &status, L2T_STOP_GRACE_S * 1000000000L);
		if (w == 0) {
			kill(pid, SIGKILL);
			w = waitpid(pid, &status, 0);
		}
	}
	cr_assert(w == pid, "waitpid: %s", strerror(errno));
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) :
		128 + WTERMSIG(status);
	r->out = read_all(out_path);
	r->err = read_all(err_path);
}

void
l2t_result_free(struct l2t_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

const char *
l2t_app_lines(const char *text)
{
	/* Two at a time, for the stdout and stderr of one message. */
	static char bufs[2][8192];
	static unsigned int next;
	char *buf = bufs[next++ % 2];
	const size_t size = sizeof(bufs[0]);
	const char *line = text;
	size_t n = 0;

	while (*line != '\0') {
		const char *end = strchr(line, '\n');
		size_t len = end != NULL ? (size_t)(end - line + 1) : strlen(line);

		if (strncmp(line, "EAL: ", 5) != 0 &&
		    strncmp(line, "TELEMETRY: ", 11) != 0 &&
		    n + len < size) {
			memcpy(buf + n, line, len);
			n += len;
		}
		line += len;
	}
	buf[n] = '\0';
	return buf;
}

const char *
l2t_port_paths(const char *text, unsigned int port, char *buf, size_t len)
{
	char head[48];
	const char *line;

	snprintf(head, sizeof(head), "l2fwd-sirq: port %u (", port);
	for (line = text; line != NULL && *line != '\0';) {
		const char *end = strchr(line, '\n');
		size_t n = end != NULL ? (size_t)(end - line) : strlen(line);

		if (strncmp(line, head, strlen(head)) == 0 &&
		    memmem(line, n, "): Rx work: ", 12) != NULL) {
			snprintf(buf, len, "%.*s", (int)n, line);
			return buf;
		}
		line = end != NULL ? end + 1 : NULL;
	}
	return NULL;
}

json_t *
l2t_report_load(const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);

	cr_assert(j != NULL, "report %s: %s (line %d)", path, e.text, e.line);
	cr_assert(json_is_object(j), "report %s is not an object", path);
	return j;
}

uint64_t
l2t_json_u64(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	cr_assert(json_is_integer(v), "\"%s\" missing or not an integer", key);
	cr_assert(json_integer_value(v) >= 0, "\"%s\" is negative", key);
	return (uint64_t)json_integer_value(v);
}

const char *
l2t_json_str(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	cr_assert(s != NULL, "\"%s\" missing or not a string", key);
	return s;
}

json_t *
l2t_report_port(json_t *report, unsigned int port)
{
	json_t *ports = json_object_get(report, "ports"), *p;
	size_t i;

	cr_assert(json_is_array(ports), "report has no ports[]");
	json_array_foreach(ports, i, p)
		if (l2t_json_u64(p, "port") == port)
			return p;
	cr_assert_fail("report has no port %u", port);
	return NULL;
}

uint64_t
l2t_report_lcores_sum(json_t *report, const char *key)
{
	json_t *lcores = json_object_get(report, "lcores"), *l;
	uint64_t sum = 0;
	size_t i;

	cr_assert(json_is_array(lcores) && json_array_size(lcores) > 0,
		  "report has no lcores[]");
	json_array_foreach(lcores, i, l)
		sum += l2t_json_u64(l, key);
	return sum;
}

void
l2t_null_flood_args(struct l2t_argv *a, const char *opt, const char *lcores,
		    const char *report)
{
	l2t_eal_args_lcores(a, l2t_env("L2FWD_SIRQ"), opt, lcores);
	l2t_arg(a, "--vdev=net_null0");
	l2t_arg(a, "--vdev=net_null1");
	l2t_arg(a, "--");
	l2t_arg(a, "-T");
	l2t_arg(a, "0");
	l2t_arg(a, "--report");
	l2t_arg(a, "%s", report);
}

void
l2t_expect_books_balance(const char *report, const char *label)
{
	uint64_t rx[2], tx[2], runts[2], link_drops[2];
	uint64_t lc_tx, lc_dropped;
	unsigned int p;
	json_t *j;

	j = l2t_report_load(report);
	for (p = 0; p < 2; p++) {
		json_t *jp = l2t_report_port(j, p);

		rx[p] = l2t_json_u64(jp, "rx");
		tx[p] = l2t_json_u64(jp, "tx");
		runts[p] = l2t_json_u64(jp, "runts");
		link_drops[p] = l2t_json_u64(jp, "link_down_drops");
	}
	for (p = 0; p < 2; p++) {
		cr_expect(rx[p] > 0, "%s: port %u received nothing", label, p);
		cr_expect(rx[p] == tx[p ^ 1] + runts[p] + link_drops[p ^ 1],
			  "%s: port %u rx %" PRIu64 " != port %u tx %" PRIu64
			  " + runts %" PRIu64 " + link-down drops %" PRIu64,
			  label, p, rx[p], p ^ 1, tx[p ^ 1], runts[p],
			  link_drops[p ^ 1]);
	}
	lc_tx = l2t_report_lcores_sum(j, "tx_packets");
	lc_dropped = l2t_report_lcores_sum(j, "tx_dropped");
	cr_expect(tx[0] + tx[1] == lc_tx + lc_dropped,
		  "%s: ports tx %" PRIu64 " != lcore tx_packets %" PRIu64
		  " + tx_dropped %" PRIu64 ": packets left in TX buffers",
		  label, tx[0] + tx[1], lc_tx, lc_dropped);
	cr_expect(l2t_report_lcores_sum(j, "rx_packets") == rx[0] + rx[1],
		  "%s: lcore rx_packets %" PRIu64 " != ports rx %" PRIu64, label,
		  l2t_report_lcores_sum(j, "rx_packets"), rx[0] + rx[1]);
	cr_expect(l2t_json_u64(j, "mbufs_in_use") == 0,
		  "%s: mbufs_in_use %" PRIu64, label,
		  l2t_json_u64(j, "mbufs_in_use"));
	json_decref(j);
}

void
l2t_frames_add(struct l2t_frames *fs, const uint8_t *data, uint32_t len)
{
	struct l2t_frame *f;

	if (fs->n == fs->cap) {
		fs->cap = fs->cap ? 2 * fs->cap : 64;
		fs->f = realloc(fs->f, fs->cap * sizeof(*fs->f));
		cr_assert(fs->f != NULL);
	}
	f = &fs->f[fs->n++];
	f->caplen = f->len = len;
	f->data = malloc(len ? len : 1);
	cr_assert(f->data != NULL);
	memcpy(f->data, data, len);
}

void
l2t_frames_free(struct l2t_frames *fs)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		free(fs->f[i].data);
	free(fs->f);
	memset(fs, 0, sizeof(*fs));
}

void
l2t_pcap_write(const char *path, const struct l2t_frames *fs)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, UINT16_MAX);
	pcap_dumper_t *d;
	size_t i;

	cr_assert(dead != NULL, "pcap_open_dead failed");
	d = pcap_dump_open(dead, path);
	cr_assert(d != NULL, "pcap_dump_open %s: %s", path, pcap_geterr(dead));
	for (i = 0; i < fs->n; i++) {
		struct pcap_pkthdr h = {
			.ts = { .tv_sec = 1, .tv_usec = (suseconds_t)i },
			.caplen = fs->f[i].caplen,
			.len = fs->f[i].len,
		};

		pcap_dump((u_char *)d, &h, fs->f[i].data);
	}
	cr_assert(pcap_dump_flush(d) == 0, "pcap_dump_flush %s", path);
	pcap_dump_close(d);
	pcap_close(dead);
}

void
l2t_pcap_read(const char *path, struct l2t_frames *fs)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p;
	int ret;

	memset(fs, 0, sizeof(*fs));
	p = pcap_open_offline(path, err);
	cr_assert(p != NULL, "pcap_open_offline %s: %s", path, err);
	cr_assert(pcap_datalink(p) == DLT_EN10MB, "%s: link type %d", path,
		  pcap_datalink(p));
	while ((ret = pcap_next_ex(p, &h, &data)) == 1) {
		l2t_frames_add(fs, data, h->caplen);
		fs->f[fs->n - 1].len = h->len;
	}
	cr_assert(ret == PCAP_ERROR_BREAK, "%s: %s", path, pcap_geterr(p));
	pcap_close(p);
}

uint64_t
l2t_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void
l2t_random_bytes(uint64_t *state, uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)l2t_random(state);
}

void
l2t_probe_macs(const char *const *vdevs, uint8_t macs[][6],
	       unsigned int nb_ports)
{
	struct l2t_argv a = { .argc = 0 };
	struct l2t_result r;
	unsigned int i, port, m[6];
	const char *line;

	l2t_eal_args(&a, l2t_env("L2T_MAC_PROBE"));
	for (i = 0; vdevs[i] != NULL; i++)
		l2t_arg(&a, "--vdev=%s", vdevs[i]);
	l2t_run(&a, &r);
	cr_assert(r.status == 0, "mac_probe exited %d: %s", r.status, r.err);
	for (i = 0; i < nb_ports; i++) {
		line = r.out;
		while ((line = strstr(line, "port ")) != NULL) {
			if (sscanf(line, "port %u %x:%x:%x:%x:%x:%x", &port,
				   &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 7 &&
			    port == i)
				break;
			line++;
		}
		cr_assert(line != NULL, "mac_probe did not report port %u:\n%s",
			  i, r.out);
		for (port = 0; port < 6; port++)
			macs[i][port] = (uint8_t)m[port];
	}
	l2t_result_free(&r);
}

void
l2t_proc_start(struct l2t_proc *p, const char *name, struct l2t_argv *a)
{
	int in[2], out[2];

	memset(p, 0, sizeof(p[0]));
	p->name = name;
	p->status = -1;
	cr_assert(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0,
		  "pipe: %s", strerror(errno));
	fflush(NULL);
	p->pid = fork();
	cr_assert(p->pid >= 0, "fork: %s", strerror(errno));
	if (p->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 ||
		    dup2(out[1], 2) < 0)
			_exit(126);
		execv(a->argv[0], a->argv);
		dprintf(2, "exec %s: %s\n", a->argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in_fd = in[1];
	p->out_fd = out[0];
	fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
	p->cap = 65536;
	p->buf = malloc(p->cap);
	cr_assert(p->buf != NULL);
	p->buf[0] = '\0';
}

/* Append what the process printed; false at its end of output. */
static bool
proc_read(struct l2t_proc *p)
{
	ssize_t n;

	for (;;) {
		if (p->cap - p->len < 4096) {
			p->cap *= 2;
			p->buf = realloc(p->buf, p->cap);
			cr_assert(p->buf != NULL);
		}
		n = read(p->out_fd, p->buf + p->len, p->cap - p->len - 1);
		if (n > 0) {
			p->len += (size_t)n;
			p->buf[p->len] = '\0';
			continue;
		}
		return n < 0 && errno == EAGAIN;
	}
}

static const char *
proc_tail(const struct l2t_proc *p)
{
	return p->buf + (p->len > 3000 ? p->len - 3000 : 0);
}

const char *
l2t_proc_expect(struct l2t_proc *p, const char *needle, unsigned int timeout_s)
{
	struct timespec step = { 0, WAIT_STEP_NS };
	const long since = now_ns();
	bool open = true;
	char *at;

	for (;;) {
		if (open)
			open = proc_read(p);
		at = strstr(p->buf + p->mark, needle);
		if (at != NULL) {
			p->mark = (size_t)(at - p->buf) + strlen(needle);
			return at;
		}
		cr_assert(open, "%s ended before printing '%s':\n...%s", p->name,
			  needle, proc_tail(p));
		cr_assert(now_ns() - since < (long)timeout_s * 1000000000L,
			  "%s did not print '%s' within %u s:\n...%s", p->name,
			  needle, timeout_s, proc_tail(p));
		nanosleep(&step, NULL);
	}
}

void
l2t_proc_send(struct l2t_proc *p, const char *line)
{
	size_t len = strlen(line);

	proc_read(p);
	p->mark = p->len;
	cr_assert(write(p->in_fd, line, len) == (ssize_t)len &&
		  write(p->in_fd, "\n", 1) == 1, "%s: cannot write '%s': %s",
		  p->name, line, strerror(errno));
}

int
l2t_proc_wait(struct l2t_proc *p, unsigned int timeout_s)
{
	struct timespec step = { 0, WAIT_STEP_NS };
	const long since = now_ns();
	int status;
	pid_t w;

	while ((w = waitpid(p->pid, &status, WNOHANG)) == 0) {
		proc_read(p);
		cr_assert(now_ns() - since < (long)timeout_s * 1000000000L,
			  "%s did not end within %u s:\n...%s", p->name,
			  timeout_s, proc_tail(p));
		nanosleep(&step, NULL);
	}
	cr_assert(w == p->pid, "waitpid %s: %s", p->name, strerror(errno));
	proc_read(p);
	p->pid = 0;
	p->status = WIFEXITED(status) ? WEXITSTATUS(status) :
		128 + WTERMSIG(status);
	return p->status;
}

void
l2t_proc_reap(struct l2t_proc *p)
{
	if (p->buf == NULL)
		return;		/* never started */
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
	close(p->in_fd);
	close(p->out_fd);
	free(p->buf);
	p->buf = NULL;
}

void
l2t_proc_wait_file_size(struct l2t_proc *p, const char *path, long long size,
			unsigned int timeout_s)
{
	struct timespec step = { 0, WAIT_STEP_NS };
	const long since = now_ns();
	struct stat st;

	for (;;) {
		bool open = proc_read(p);
		long long have = stat(path, &st) == 0 ? (long long)st.st_size : -1;

		if (have >= size)
			return;
		cr_assert(open && waitpid(p->pid, NULL, WNOHANG) == 0,
			  "%s ended before %s held %lld bytes (it holds %lld):\n...%s",
			  p->name, path, size, have, proc_tail(p));
		cr_assert(now_ns() - since < (long)timeout_s * 1000000000L,
			  "%s: %s holds %lld bytes after %u s, %lld expected:\n...%s",
			  p->name, path, have, timeout_s, size, proc_tail(p));
		nanosleep(&step, NULL);
	}
}

json_t *
l2t_report_from_output(const char *text)
{
	const char *start = strstr(text, "{\"app\": ");
	json_error_t e;
	json_t *j;

	cr_assert(start != NULL, "no JSON report in the output:\n%s",
		  l2t_app_lines(text));
	/* Lines may follow it (EAL at exit): one object, then stop. */
	j = json_loads(start, JSON_DISABLE_EOF_CHECK, &e);
	cr_assert(j != NULL, "report on stdout: %s (line %d)", e.text, e.line);
	cr_assert(json_is_object(j), "the report on stdout is not an object");
	return j;
}

json_t *
l2t_report_request(struct l2t_proc *p, const char *path,
		   unsigned int timeout_s)
{
	struct timespec step = { 0, WAIT_STEP_NS };
	const long since = now_ns();

	remove(path);
	cr_assert(kill(p->pid, SIGUSR1) == 0, "SIGUSR1 to %s: %s", p->name,
		  strerror(errno));
	/* report_write() renames a complete file into place. */
	while (access(path, F_OK) != 0) {
		proc_read(p);
		cr_assert(now_ns() - since < (long)timeout_s * 1000000000L,
			  "%s wrote no report within %u s of SIGUSR1:\n...%s",
			  p->name, timeout_s, proc_tail(p));
		nanosleep(&step, NULL);
	}
	return l2t_report_load(path);
}

void
l2t_report_counts(json_t *report, struct l2t_counts *c)
{
	unsigned int p;

	for (p = 0; p < 2; p++) {
		json_t *jp = l2t_report_port(report, p);

		c->rx[p] = l2t_json_u64(jp, "rx");
		c->tx[p] = l2t_json_u64(jp, "tx");
		c->runts[p] = l2t_json_u64(jp, "runts");
		c->link_drops[p] = l2t_json_u64(jp, "link_down_drops");
	}
	c->lc_tx = l2t_report_lcores_sum(report, "tx_packets");
	c->lc_dropped = l2t_report_lcores_sum(report, "tx_dropped");
	c->lc_rx_dropped_at_stop = l2t_report_lcores_sum(report,
						       "rx_dropped_at_stop");
	c->mbufs_in_use = l2t_json_u64(report, "mbufs_in_use");
}
