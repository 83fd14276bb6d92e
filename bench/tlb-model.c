/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tlb-model: the data-TLB misses a forwarder would take on 4 KB pages,
 * from a valgrind lackey trace (bench/tlb-model.sh). This VM's perf has
 * no hardware counters, so the misses are modelled instead of counted: an
 * L1 data TLB of --l1 entries and an L2 of --l2, both fully associative
 * with LRU replacement, 4 KB pages, fed every load, store and modify of
 * the trace. A packet is one execution of the instruction at --pc-offset
 * within the first executable mapping whose path contains --lib (a store
 * the PMD's receive loop makes once a packet); after --warm packets, the
 * next --packets are counted. The mappings come from --maps (the traced
 * process's /proc/PID/maps), read until --lib is mapped and again when
 * the count starts, and the misses are given per mapping.
 *
 *   tlb-model --maps /proc/PID/maps --lib librte_net_null --pc-offset 0x20f3 \
 *       [--warm N] [--packets N] [--l1 N] [--l2 N] < lackey-trace
 *
 * Prints one JSON object. Exit 0, 1 when no packet was counted, 2 on a
 * bad option. A model: a real TLB is not LRU, and a page walk hits the
 * caches; what it gives is where one program takes more misses than
 * another, not cycles.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tool.h"

#define PAGE_SHIFT 12
#define MAX_ENTRIES 65536
#define MAX_MAPS 8192
#define NAME_LEN 256
#define SEEN_BITS 22		/* the pages seen, a bit each, hashed */
#define MAPS_EVERY 1000000	/* trace lines between looks for --lib */

struct tlb {
	uint64_t *page;
	uint64_t *used;
	unsigned int n;
	uint64_t clock;
};

struct mapping {
	uint64_t lo, hi;
	char name[NAME_LEN + 8];	/* permissions, a space, the path */
	uint64_t accesses, l1_misses, l2_misses, pages;
};

const char bench_prog[] = "tlb-model";

static struct mapping maps[MAX_MAPS + 1];	/* the last: none of them */
static unsigned int nb_maps;
static uint8_t seen[(1u << SEEN_BITS) / 8];

static void
tlb_free(struct tlb *t)
{
	free(t->page);
	free(t->used);
}

static int
tlb_init(struct tlb *t, unsigned int n)
{
	t->n = n;
	t->clock = 0;
	t->page = malloc(n * sizeof(*t->page));
	t->used = calloc(n, sizeof(*t->used));
	if (t->page == NULL || t->used == NULL)
		return -ENOMEM;
	memset(t->page, 0xff, n * sizeof(*t->page));
	return 0;
}

/* Hit: true. Miss: the page replaces the least recently used entry. */
static bool
tlb_access(struct tlb *t, uint64_t page)
{
	unsigned int i, lru = 0;

	for (i = 0; i < t->n; i++) {
		if (t->page[i] == page) {
			t->used[i] = ++t->clock;
			return true;
		}
		if (t->used[i] < t->used[lru])
			lru = i;
	}
	t->page[lru] = page;
	t->used[lru] = ++t->clock;
	return false;
}

/*
 * Read the mappings; the address of the packet instruction, or 0 while
 * @lib is not mapped (its text's file offset taken away: p_vaddr ==
 * p_offset in a shared object's text).
 */
static uint64_t
read_maps(const char *file, const char *lib, uint64_t pc_offset)
{
	char line[512], perm[8], path[NAME_LEN];
	uint64_t lo, hi, off, pc = 0;
	FILE *f = fopen(file, "r");

	if (f == NULL)
		return 0;
	nb_maps = 0;
	while (nb_maps < MAX_MAPS && fgets(line, sizeof(line), f) != NULL) {
		struct mapping *m = &maps[nb_maps];

		path[0] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64
			   " %*s %*s %255[^\n]", &lo, &hi, perm, &off,
			   path) < 4)
			continue;
		memset(m, 0, sizeof(*m));
		m->lo = lo;
		m->hi = hi;
		snprintf(m->name, sizeof(m->name), "%s %s", perm,
			 path[0] != '\0' ? path : "[anon]");
		nb_maps++;
		if (pc == 0 && strstr(path, lib) != NULL && perm[2] == 'x')
			pc = lo + pc_offset - off;
	}
	fclose(f);
	memset(&maps[nb_maps], 0, sizeof(maps[nb_maps]));
	snprintf(maps[nb_maps].name, sizeof(maps[nb_maps].name),
		 "(not mapped when read)");
	return pc;
}

static struct mapping *
mapping_of(uint64_t addr)
{
	unsigned int lo = 0, hi = nb_maps;

	/* /proc/PID/maps lists the mappings in address order: bisect. */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (addr < maps[mid].lo)
			hi = mid;
		else if (addr >= maps[mid].hi)
			lo = mid + 1;
		else
			return &maps[mid];
	}
	return &maps[nb_maps];
}

static bool
first_sight(uint64_t page)
{
	uint64_t h = (page * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - SEEN_BITS);
	uint8_t bit = (uint8_t)(1u << (h % 8));

	if (seen[h / 8] & bit)
		return false;
	seen[h / 8] |= bit;
	return true;
}

static int
usage(const char *prog, const char *why)
{
	if (why != NULL)
		fprintf(stderr, "%s: %s\n", bench_prog, why);
	fprintf(stderr,
		"usage: %s --maps FILE --lib NAME --pc-offset HEX [--warm N] [--packets N] [--l1 N] [--l2 N] < lackey-trace\n",
		prog);
	return 2;
}

/* --pc-offset: hexadecimal, with or without 0x. */
static int
parse_hex(const char *v, uint64_t *out)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(v, &end, 16);
	if (errno != 0 || end == v || *end != '\0' || *v == '-' ||
	    n > UINT32_MAX) {
		fprintf(stderr, "%s: --pc-offset: bad value '%s' (hexadecimal, 0..0xffffffff)\n",
			bench_prog, v);
		return -1;
	}
	*out = n;
	return 0;
}

static void
print_json(uint64_t packets, uint64_t accesses, uint64_t l1, uint64_t l2,
	   uint64_t pages, unsigned int l1_n, unsigned int l2_n)
{
	unsigned int i;
	bool first = true;

	printf("{\"packets\": %" PRIu64 ", \"l1_entries\": %u, \"l2_entries\": %u,"
	       " \"accesses_per_packet\": %.2f, \"l1_misses_per_packet\": %.4f,"
	       " \"l2_misses_per_packet\": %.4f, \"pages\": %" PRIu64 ",\n \"mappings\": [",
	       packets, l1_n, l2_n, (double)accesses / packets,
	       (double)l1 / packets, (double)l2 / packets, pages);
	for (i = 0; i <= nb_maps; i++) {
		const struct mapping *m = &maps[i];

		if (m->pages == 0)
			continue;
		printf("%s\n  {\"start\": \"0x%" PRIx64 "\", \"name\": \"%s\", \"pages\": %" PRIu64
		       ", \"accesses_per_packet\": %.2f, \"l1_misses_per_packet\": %.4f,"
		       " \"l2_misses_per_packet\": %.4f}",
		       first ? "" : ",", m->lo, m->name, m->pages,
		       (double)m->accesses / packets,
		       (double)m->l1_misses / packets,
		       (double)m->l2_misses / packets);
		first = false;
	}
	printf("]}\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "maps", required_argument, NULL, 'm' },
		{ "lib", required_argument, NULL, 'L' },
		{ "pc-offset", required_argument, NULL, 'o' },
		{ "warm", required_argument, NULL, 'w' },
		{ "packets", required_argument, NULL, 'p' },
		{ "l1", required_argument, NULL, '1' },
		{ "l2", required_argument, NULL, '2' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *maps_file = NULL, *lib = NULL;
	uint64_t pc_offset = UINT64_MAX, warm = 100000, want = 100000;
	uint64_t l1_n = 64, l2_n = 2048, v;
	uint64_t pc = 0, lines = 0, packets = 0, accesses = 0, m1 = 0, m2 = 0;
	uint64_t pages = 0;
	struct tlb l1, l2;
	bool counting = false;
	char line[256];
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': maps_file = optarg; break;
		case 'L': lib = optarg; break;
		case 'o':
			if (parse_hex(optarg, &pc_offset) != 0)
				return 2;
			break;
		case 'w':
			if (bench_parse_u64("warm", optarg, 0, UINT32_MAX,
					    &warm) != 0)
				return 2;
			break;
		case 'p':
			if (bench_parse_u64("packets", optarg, 1, UINT32_MAX,
					    &want) != 0)
				return 2;
			break;
		case '1':
		case '2':
			if (bench_parse_u64(c == '1' ? "l1" : "l2", optarg, 1,
					    MAX_ENTRIES, &v) != 0)
				return 2;
			*(c == '1' ? &l1_n : &l2_n) = v;
			break;
		case 'h':
			usage(argv[0], NULL);
			return 0;
		default:
			return usage(argv[0], NULL);
		}
	}
	if (optind != argc)
		return usage(argv[0], "no operand expected: the trace is read from stdin");
	if (maps_file == NULL || lib == NULL || pc_offset == UINT64_MAX)
		return usage(argv[0], "--maps, --lib and --pc-offset are needed");
	memset(&l1, 0, sizeof(l1));
	memset(&l2, 0, sizeof(l2));
	if (tlb_init(&l1, (unsigned int)l1_n) != 0 ||
	    tlb_init(&l2, (unsigned int)l2_n) != 0) {
		fprintf(stderr, "%s: out of memory\n", bench_prog);
		tlb_free(&l1);
		tlb_free(&l2);
		return 1;
	}

	/* lackey: "I  addr,size", then " L addr,size", " S", " M" lines. */
	while (fgets(line, sizeof(line), stdin) != NULL) {
		uint64_t addr, page;
		struct mapping *m;
		bool hit1, hit2 = true;

		if (pc == 0 && lines++ % MAPS_EVERY == 0)
			pc = read_maps(maps_file, lib, pc_offset);
		if (pc == 0)
			continue;
		if (line[0] == 'I') {
			if (strtoull(line + 3, NULL, 16) != pc)
				continue;
			if (counting) {
				/* The next packet's start: the last one ended. */
				if (packets == want)
					break;
				packets++;
			} else if (packets++ == warm) {
				/* This packet is the first counted. */
				counting = true;
				packets = 1;
				read_maps(maps_file, lib, pc_offset);
			}
			continue;
		}
		if (line[0] != ' ' || (line[1] != 'L' && line[1] != 'S' &&
				       line[1] != 'M'))
			continue;
		addr = strtoull(line + 3, NULL, 16);
		page = addr >> PAGE_SHIFT;
		hit1 = tlb_access(&l1, page);
		if (!hit1)
			hit2 = tlb_access(&l2, page);
		if (!counting)
			continue;
		m = mapping_of(addr);
		accesses++;
		m->accesses++;
		if (first_sight(page)) {
			pages++;
			m->pages++;
		}
		if (!hit1) {
			m1++;
			m->l1_misses++;
		}
		if (!hit2) {
			m2++;
			m->l2_misses++;
		}
	}
	tlb_free(&l1);
	tlb_free(&l2);
	if (!counting || packets == 0) {
		fprintf(stderr, "%s: no packet counted (%s %s at 0x%" PRIx64
			", %" PRIu64 " of %" PRIu64 " warm-up packets seen)\n",
			bench_prog, lib, pc != 0 ? "mapped, instruction" :
			"never mapped, offset", pc != 0 ? pc : pc_offset,
			counting ? warm : packets, warm);
		return 1;
	}
	print_json(packets, accesses, m1, m2, pages, (unsigned int)l1_n,
		   (unsigned int)l2_n);
	return 0;
}
