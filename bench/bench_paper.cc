/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_paper: lib/cuckoo against the paper authors' own code,
 * efficient/cuckoofilter's CuckooFilter<uint64_t, 12> (header-only C++),
 * on the same 8-byte keys in one process.
 *
 * Built only when meson's option paper_cuckoofilter names a local copy of
 * that repository (it is never part of this tree):
 *   meson configure build -Dpaper_cuckoofilter=/path/to/cuckoofilter
 *
 * Both filters: 4 slots a bucket, 12-bit fingerprints, the same number of
 * slots (a power of two), filled to --fill (default 95%) with one call per
 * key, each with its own hash (theirs: TwoIndependentMultiplyShift, a
 * 128-bit multiply; ours: cf_add()/cf_lookup() on the key's bytes, seeded
 * XXH3, and again in a filter of CF_KEY_HASH_U64, cf_hash_u64() of the
 * key: the "key_hash u64" rows). Then lookups one call per key at 0, 50 and
 * 100% positive queries, and lib/cuckoo's bulk lookup (cf_hash() of each
 * key, then cf_lookup_bulk() on bursts of 32). The targets run in turns,
 * the order alternating between repetitions; each figure is the median of
 * --reps, in million operations per second of this thread's CPU time
 * (a loaded machine's other jobs holding the core are not counted), and
 * each ratio is ours over theirs in the same run.
 *
 * Usage: bench_paper [--sizes 16,26] [--reps N] [--fill F] [--queries N]
 *                    [--csv FILE]
 */

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <string>
#include <time.h>
#include <vector>

#include "cuckoofilter.h"

#include "cuckoo_filter.h"

namespace {

const unsigned int kBurst = 32;
const unsigned int kMixes[] = { 0, 50, 100 };
const unsigned int kNbMixes = sizeof(kMixes) / sizeof(kMixes[0]);

typedef cuckoofilter::CuckooFilter<uint64_t, 12> PaperFilter;

/* This thread's CPU time (as bench_util.h's cpu_now(), which this C++
 * program does not include: it needs DPDK's headers): the time it ran,
 * without the time a loaded machine's other jobs held its core. */
double
now()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

double
median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[v.size() / 2];
}

/* Rates of one target in one repetition, in operations per second. */
struct rates {
	double add;
	double lookup[kNbMixes];
	double bulk[kNbMixes];
	uint64_t add_failed;
	uint64_t false_neg;  /* stored keys not found: must be 0 */
	uint64_t false_pos;  /* of the 0% mix's lookups */
	uint64_t hits;       /* all lookups' hits: keeps the work alive */
	uint64_t huge_kb;    /* the process's transparent huge pages, filled */
};

struct workload {
	std::vector<uint64_t> keys;               /* stored */
	std::vector<uint64_t> queries[kNbMixes];  /* by mix */
};

/* The process's anonymous memory in transparent huge pages, in KiB
 * (smaps_rollup's AnonHugePages), 0 where it cannot be read. With THP in
 * "madvise" mode only lib/cuckoo's table (madvise(MADV_HUGEPAGE)) gets
 * them: their absence at 2^26 slots means a TLB miss a bucket. */
uint64_t
huge_kb()
{
	FILE *fp = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	unsigned long long kb = 0;

	if (fp == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			break;
	fclose(fp);
	return kb;
}

/* A query stream for each mix: positives drawn from the stored keys,
 * negatives from a stream disjoint from them with overwhelming odds. */
void
workload_make(workload *w, uint64_t stored, uint64_t queries)
{
	uint64_t rng = UINT64_C(0x5eed), qrng = UINT64_C(0xfeed), pick = 7;

	w->keys.resize(stored);
	for (uint64_t k = 0; k < stored; k++)
		w->keys[k] = splitmix64(&rng);
	for (unsigned int m = 0; m < kNbMixes; m++) {
		w->queries[m].resize(queries);
		for (uint64_t q = 0; q < queries; q++)
			w->queries[m][q] = splitmix64(&pick) % 100 < kMixes[m] ?
				w->keys[splitmix64(&pick) % stored] :
				splitmix64(&qrng);
	}
}

/* Each target's loops in a function of their own (not inlined into
 * main, whose registers they would share). */
__attribute__((noinline)) rates
run_paper(const workload &w, uint64_t slots)
{
	/* Their constructor takes a key count: num_buckets is its quarter
	 * rounded up to a power of two, doubled if that fills it over
	 * 96%. 95% of the slots gives exactly slots / 4 buckets. */
	PaperFilter *f = new PaperFilter((size_t)(slots * 0.95));
	rates r = rates();
	double t0;

	if (f->SizeInBytes() != slots * 12 / 8) {
		fprintf(stderr, "bench_paper: their filter has %zu bytes, "
			"expected %" PRIu64 "\n", f->SizeInBytes(),
			slots * 12 / 8);
		exit(1);
	}
	std::vector<bool> stored(w.keys.size());

	t0 = now();
	for (size_t k = 0; k < w.keys.size(); k++)
		stored[k] = f->Add(w.keys[k]) == cuckoofilter::Ok;
	r.add = w.keys.size() / (now() - t0);
	/* A refused add (their victim slot taken) stored nothing. */
	for (size_t k = 0; k < w.keys.size(); k++) {
		r.add_failed += !stored[k];
		r.false_neg += stored[k] &&
			f->Contain(w.keys[k]) != cuckoofilter::Ok;
	}
	for (unsigned int m = 0; m < kNbMixes; m++) {
		uint64_t hits = 0;

		t0 = now();
		for (uint64_t key : w.queries[m])
			hits += f->Contain(key) == cuckoofilter::Ok;
		r.lookup[m] = w.queries[m].size() / (now() - t0);
		if (kMixes[m] == 0)
			r.false_pos = hits;
		r.hits += hits;
	}
	delete f;
	return r;
}

/* lib/cuckoo's per-key calls: cf_add()/cf_lookup() of the key's bytes,
 * hashed with seeded XXH3 (the default), or with @p int_hash in a filter
 * of CF_KEY_HASH_U64 (cf_hash_u64() of the key). */
__attribute__((noinline)) rates
run_ours(const workload &w, uint64_t slots, bool int_hash)
{
	struct cf_params p = cf_params();
	struct cf_stats st;
	struct cf_filter *f;
	rates r = rates();
	double t0;

	p.capacity = (uint64_t)(slots * 0.95);
	p.fp_bits = 12;
	p.seed = UINT64_C(0x5eed);
	p.key_hash = int_hash ? CF_KEY_HASH_U64 : CF_KEY_HASH_XXH3;
	f = cf_create(&p);
	if (f == NULL) {
		fprintf(stderr, "bench_paper: cf_create: %s\n",
			strerror(errno));
		exit(1);
	}
	cf_stats(f, &st);
	if (st.slots != slots) {
		fprintf(stderr, "bench_paper: lib/cuckoo has %" PRIu64
			" slots, expected %" PRIu64 "\n", st.slots, slots);
		exit(1);
	}
	t0 = now();
	for (uint64_t key : w.keys)
		r.add_failed += cf_add(f, &key, sizeof(key)) != 0;
	r.add = w.keys.size() / (now() - t0);
	r.huge_kb = huge_kb();
	for (uint64_t key : w.keys)
		r.false_neg += cf_lookup(f, &key, sizeof(key)) != 1;
	for (unsigned int m = 0; m < kNbMixes; m++) {
		const std::vector<uint64_t> &q = w.queries[m];
		uint64_t hits = 0;

		t0 = now();
		for (uint64_t key : q)
			hits += (uint64_t)cf_lookup(f, &key, sizeof(key));
		r.lookup[m] = q.size() / (now() - t0);
		if (kMixes[m] == 0)
			r.false_pos = hits;
		r.hits += hits;
		if (int_hash)
			continue;
		hits = 0;
		t0 = now();
		for (uint64_t i = 0; i + kBurst <= q.size(); i += kBurst) {
			uint64_t h[kBurst], mask;

			for (unsigned int k = 0; k < kBurst; k++)
				h[k] = cf_hash(f, &q[i + k], sizeof(q[i + k]));
			hits += (uint64_t)cf_lookup_bulk(f, h, kBurst, &mask,
				NULL);
		}
		r.bulk[m] = q.size() / kBurst * kBurst / (now() - t0);
		r.hits += hits;
	}
	cf_free(f);
	return r;
}

struct options {
	std::vector<unsigned int> sizes;
	unsigned int reps;
	double fill;
	uint64_t queries;
	const char *csv;
};

void
usage(const char *prog)
{
	printf("usage: %s [--sizes L1,L2] [--reps N] [--fill F] "
		"[--queries N] [--csv FILE]\n"
		"  --sizes    log2 of the slots of each filter (default 16,26)\n"
		"  --reps     repetitions, median reported (default 5)\n"
		"  --fill     share of the slots filled (default 0.95)\n"
		"  --queries  lookups per mix (default 10000000)\n"
		"  --csv      also write the rows to FILE\n", prog);
}

int
parse(int argc, char **argv, options *o)
{
	static const struct option longopts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'r' },
		{ "fill", required_argument, NULL, 'f' },
		{ "queries", required_argument, NULL, 'q' },
		{ "csv", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->sizes = { 16, 26 };
	o->reps = 5;
	o->fill = 0.95;
	o->queries = 10000000;
	o->csv = NULL;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 's': {
			std::string s(optarg);
			size_t at = 0;

			o->sizes.clear();
			while (at <= s.size()) {
				size_t comma = s.find(',', at);
				std::string word = s.substr(at, comma == std::string::npos ?
					std::string::npos : comma - at);
				unsigned long v = strtoul(word.c_str(), &end, 10);

				if (word.empty() || *end != '\0' || v < 10 ||
						v > 30) {
					fprintf(stderr, "--sizes: '%s' is not a "
						"log2 of slots from 10 to 30\n",
						word.c_str());
					return -1;
				}
				o->sizes.push_back((unsigned int)v);
				if (comma == std::string::npos)
					break;
				at = comma + 1;
			}
			break;
		}
		case 'r':
			o->reps = (unsigned int)strtoul(optarg, &end, 10);
			if (*end != '\0' || o->reps < 1 || o->reps > 100) {
				fprintf(stderr, "--reps: 1 to 100\n");
				return -1;
			}
			break;
		case 'f':
			o->fill = strtod(optarg, &end);
			if (*end != '\0' || !(o->fill > 0 && o->fill <= 0.95)) {
				fprintf(stderr, "--fill: over 0, at most 0.95 "
					"(their filter doubles its table above "
					"0.96)\n");
				return -1;
			}
			break;
		case 'q':
			o->queries = strtoull(optarg, &end, 10);
			if (*end != '\0' || o->queries < kBurst) {
				fprintf(stderr, "--queries: at least %u\n",
					kBurst);
				return -1;
			}
			break;
		case 'c':
			o->csv = optarg;
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0],
			argv[optind]);
		return -1;
	}
	return 0;
}

} /* namespace */

int
main(int argc, char **argv)
{
	options o;
	FILE *csv = NULL;

	if (parse(argc, argv, &o) != 0)
		return 2;
	if (o.csv != NULL) {
		csv = fopen(o.csv, "w");
		if (csv == NULL) {
			fprintf(stderr, "%s: %s\n", o.csv, strerror(errno));
			return 1;
		}
		fprintf(csv, "log2_slots,op,mix,ours_mops,paper_mops,ratio\n");
	}
	printf("lib/cuckoo (cf_add/cf_lookup, 12-bit) against "
		"efficient/cuckoofilter CuckooFilter<uint64_t, 12>: one call "
		"per key,\n%.0f%% fill, median of %u runs, M ops/s of CPU time; "
		"ratio = ours / theirs\n", 100 * o.fill, o.reps);
	for (unsigned int log2 : o.sizes) {
		uint64_t slots = UINT64_C(1) << log2;
		workload w;
		/* ours (cf_add/cf_lookup), ours with CF_KEY_HASH_U64,
		 * theirs */
		std::vector<double> add[3], look[3][kNbMixes], bulk[kNbMixes];
		uint64_t fails[3] = { 0, 0, 0 }, fneg[3] = { 0, 0, 0 };
		uint64_t fpos[3] = { 0, 0, 0 }, sink = 0;
		uint64_t huge_min = UINT64_MAX, huge_max = 0;

		workload_make(&w, (uint64_t)(slots * o.fill), o.queries);
		for (unsigned int rep = 0; rep < o.reps; rep++) {
			rates r[3];

			/* each target first in turn */
			for (unsigned int k = 0; k < 3; k++) {
				unsigned int t = (rep + k) % 3;

				r[t] = t == 2 ? run_paper(w, slots) :
					run_ours(w, slots, t == 1);
			}
			for (int t = 0; t < 3; t++) {
				add[t].push_back(r[t].add);
				for (unsigned int m = 0; m < kNbMixes; m++)
					look[t][m].push_back(r[t].lookup[m]);
				fails[t] += r[t].add_failed;
				fneg[t] += r[t].false_neg;
				fpos[t] += r[t].false_pos;
				sink += r[t].hits;
			}
			for (unsigned int m = 0; m < kNbMixes; m++)
				bulk[m].push_back(r[0].bulk[m]);
			for (int t = 0; t < 2; t++) {
				huge_min = std::min(huge_min, r[t].huge_kb);
				huge_max = std::max(huge_max, r[t].huge_kb);
			}
		}
		printf("\n## 2^%u slots (%" PRIu64 " keys)\n\n", log2,
			(uint64_t)w.keys.size());
		printf("| operation | ours M/s | theirs M/s | ours / theirs |\n");
		printf("|---|---:|---:|---:|\n");
		auto row = [&](const char *op, unsigned int mix, double a,
				double b) {
			printf("| %s | %.2f | %.2f | %.2fx |\n", op, a / 1e6,
				b / 1e6, b > 0 ? a / b : 0);
			if (csv != NULL)
				fprintf(csv, "%u,%s,%u,%.4f,%.4f,%.4f\n", log2,
					op, mix, a / 1e6, b / 1e6,
					b > 0 ? a / b : 0);
		};
		row("add", 0, median(add[0]), median(add[2]));
		row("add, key_hash u64", 0, median(add[1]), median(add[2]));
		for (unsigned int m = 0; m < kNbMixes; m++) {
			char op[64];

			snprintf(op, sizeof(op), "lookup, %u%% positive",
				kMixes[m]);
			row(op, kMixes[m], median(look[0][m]),
				median(look[2][m]));
		}
		for (unsigned int m = 0; m < kNbMixes; m++) {
			char op[64];

			snprintf(op, sizeof(op), "lookup, key_hash u64, %u%% "
				"positive", kMixes[m]);
			row(op, kMixes[m], median(look[1][m]),
				median(look[2][m]));
		}
		for (unsigned int m = 0; m < kNbMixes; m++) {
			char op[64];

			snprintf(op, sizeof(op), "bulk lookup (ours), %u%% "
				"positive, vs their per-key", kMixes[m]);
			row(op, kMixes[m], median(bulk[m]), median(look[2][m]));
		}
		printf("\nfailed adds: ours %" PRIu64 " (key_hash u64 %"
			PRIu64 "), theirs %" PRIu64 "; stored keys not found: "
			"ours %" PRIu64 " (%" PRIu64 "), theirs %" PRIu64
			"; false positives at 0%%: ours %.4f%% (%.4f%%), theirs "
			"%.4f%% (checksum %" PRIu64 ")\n", fails[0], fails[1],
			fails[2], fneg[0], fneg[1], fneg[2],
			100.0 * fpos[0] / o.reps / o.queries,
			100.0 * fpos[1] / o.reps / o.queries,
			100.0 * fpos[2] / o.reps / o.queries, sink);
		printf("lib/cuckoo's table in huge pages: %" PRIu64 "-%" PRIu64
			" of %" PRIu64 " KiB (THP, by run)\n", huge_min,
			huge_max, slots * 12 / 8 / 1024);
		if (fneg[0] != 0 || fneg[1] != 0 || fneg[2] != 0) {
			fprintf(stderr, "bench_paper: false negatives\n");
			return 1;
		}
	}
	if (csv != NULL)
		fclose(csv);
	return 0;
}
