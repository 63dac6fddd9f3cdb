/*
 * hist.c - latency-hist.json.gz: every job of the window, in log buckets per job class and end
 * status, and the jobs that finished ok per 100 ms; the one per-job file a run always writes.
 *
 * A run of millions of jobs would write hundreds of MB of rows (jobs.csv.gz) that the plots then
 * read back whole; this file holds what they draw (every percentile of every class within 1/64,
 * throughput over time) in a few KB. Its format is the one the sweep runner's scripts read
 * (scripts/sbhist.py: read_histogram, hist_pairs, hist_percentile): exact below 2^7 ns, above it
 * each power of two cut into 64 buckets; bucket i < 128 holds latency i, above it
 * [(i - 64 s) << s, + 2^s) with s = i / 64 - 1, so consecutive buckets have consecutive numbers
 * and are stored as the first occupied one, the gaps between occupied ones and their counts.
 * "classes" holds the jobs that ended ok (what the latency figures are about) and "all" their
 * sum; "statuses" the others (cancelled: the time until the cut; error), per class.
 *
 * Does not own the rows (run.c gathers them), nor the table's percentiles (report.c, nearest
 * rank over the exact latencies).
 */
#include <stdlib.h>

#include "bench.h"

#define SUB_BITS 7
#define HALF (1u << (SUB_BITS - 1))
#define NBUCKETS (HALF * (64 - SUB_BITS + 2))
#define NSTATUS 3 /* the core's job statuses: ok, error, cancelled (jobs.csv's names) */
#define BIN_NS 100000000ull

static const char *const status_names[NSTATUS] = { "ok", "error", "cancelled" };

struct lat_hist {
	uint64_t n;
	uint64_t b[NBUCKETS];
};

struct bench_hist {
	struct lat_hist h[NSTATUS][SB_MAX_CLASSES];
	struct lat_hist all; /* every class, ok jobs */
	uint64_t first_bin, nbins;
	uint64_t *bins; /* ok jobs finished per BIN_NS from first_bin */
};

static unsigned bucket_index(uint64_t v)
{
	unsigned bits = v ? 64u - (unsigned)__builtin_clzll(v) : 0;
	unsigned shift = bits > SUB_BITS ? bits - SUB_BITS : 0;
	return HALF * shift + (unsigned)(v >> shift);
}

static uint64_t bucket_high(unsigned i)
{
	if (i < 2 * HALF)
		return i;
	unsigned shift = i / HALF - 1;
	return ((uint64_t)(i - HALF * shift) << shift) + ((uint64_t)1 << shift) - 1;
}

struct bench_hist *bench_hist_build(const struct bench_result *r)
{
	struct bench_hist *hs = calloc(1, sizeof *hs);
	if (!hs)
		return NULL;
	hs->first_bin = (r->win_start - r->t0) / BIN_NS;
	uint64_t last = hs->first_bin;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct sb_jobrow *j = &r->rows[i];
		if (j->status == 0 && (j->t_end - r->t0) / BIN_NS > last)
			last = (j->t_end - r->t0) / BIN_NS;
	}
	hs->nbins = last - hs->first_bin + 1;
	if (!(hs->bins = calloc(hs->nbins, sizeof *hs->bins))) {
		free(hs);
		return NULL;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		const struct sb_jobrow *j = &r->rows[i];
		unsigned st = j->status < NSTATUS ? j->status : NSTATUS - 1;
		unsigned b = bucket_index(j->t_end - j->t_arrival);
		hs->h[st][j->cls].n++;
		hs->h[st][j->cls].b[b]++;
		if (st == 0) {
			hs->all.n++;
			hs->all.b[b]++;
			uint64_t bin = (j->t_end - r->t0) / BIN_NS;
			if (bin >= hs->first_bin)
				hs->bins[bin - hs->first_bin]++;
		}
	}
	return hs;
}

void bench_hist_free(struct bench_hist *hs)
{
	if (hs)
		free(hs->bins);
	free(hs);
}

/* {"first": .., "gaps": [..], "counts": [..]} of the occupied buckets */
static void hist_json(FILE *f, const struct lat_hist *h)
{
	unsigned first = 0;
	while (first < NBUCKETS && !h->b[first])
		first++;
	fprintf(f, "{\"first\":%u,\"gaps\":[", first < NBUCKETS ? first : 0);
	unsigned prev = first;
	bool any = false;
	for (unsigned i = first + 1; i < NBUCKETS; i++)
		if (h->b[i]) {
			fprintf(f, "%s%u", any ? "," : "", i - prev - 1);
			any = true;
			prev = i;
		}
	fputs("],\"counts\":[", f);
	any = false;
	for (unsigned i = first; i < NBUCKETS; i++)
		if (h->b[i]) {
			fprintf(f, "%s%llu", any ? "," : "", (unsigned long long)h->b[i]);
			any = true;
		}
	fputs("]}", f);
}

static void class_members(FILE *f, const struct bench_opts *o, const struct lat_hist *hs, bool *first)
{
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
		if (!hs[k].n)
			continue;
		fputs(*first ? "" : ",", f);
		*first = false;
		sb_json_string(f, bench_class_name(o->workload, k));
		fputc(':', f);
		hist_json(f, &hs[k]);
	}
}

void bench_write_hist(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h)
{
	const struct bench_hist *hs = r->lat;
	fprintf(f, "{\"unit\":\"ns\",\"sub_bits\":%d,\"buckets\":\"per class: first (the lowest occupied bucket), gaps "
		   "(empty buckets before each next occupied one), counts (jobs in each occupied bucket); bucket i < "
		   "2**sub_bits holds latency i, above it [(i - h*s) << s, + 2**s) with h = 2**(sub_bits-1), s = i // h - 1\","
		   "\"classes\":{", SUB_BITS);
	bool first = true;
	class_members(f, o, hs->h[0], &first);
	fputs(first ? "\"all\":" : ",\"all\":", f);
	hist_json(f, &hs->all);
	fputs("},\"statuses\":{", f);
	bool sfirst = true;
	for (unsigned st = 1; st < NSTATUS; st++) {
		bool any = false;
		for (unsigned k = 0; k < SB_MAX_CLASSES; k++)
			any |= hs->h[st][k].n > 0;
		if (!any)
			continue;
		fprintf(f, "%s\"%s\":{", sfirst ? "" : ",", status_names[st]);
		sfirst = false;
		first = true;
		class_members(f, o, hs->h[st], &first);
		fputc('}', f);
	}
	fputs("},\"jobs\":{", f);
	for (unsigned st = 0; st < NSTATUS; st++) {
		uint64_t n = 0;
		for (unsigned k = 0; k < SB_MAX_CLASSES; k++)
			n += hs->h[st][k].n;
		fprintf(f, "%s\"%s\":%llu", st ? "," : "", status_names[st], (unsigned long long)n);
	}
	fprintf(f, "},\"jobs_not_recorded\":%zu,\"finished_ok\":{\"bin_s\":%g,\"first_bin_s\":%g,\"counts\":[",
		r->rows_dropped, (double)BIN_NS / 1e9, (double)(hs->first_bin * BIN_NS) / 1e9);
	for (uint64_t i = 0; i < hs->nbins; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)hs->bins[i]);
	fputs("]}}\n", f);
}

/* plot.gp without rows: gnuplot data blocks, $cdf (one data set per class with ok jobs, in class
 * order, two blank lines apart: latency in us, fraction of the class's jobs at or below, each
 * bucket at its upper bound) and $finished (bin start in s from run start, jobs/s). Comma-
 * separated, as plot.gp reads its CSV. */
void bench_write_hist_blocks(FILE *f, const struct bench_result *r)
{
	const struct bench_hist *hs = r->lat;
	fputs("$cdf << EOD\n", f);
	bool first = true;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
		const struct lat_hist *lh = &hs->h[0][k];
		if (!lh->n)
			continue;
		if (!first)
			fputs("\n\n", f);
		first = false;
		uint64_t seen = 0;
		for (unsigned i = 0; i < NBUCKETS; i++)
			if (lh->b[i]) {
				seen += lh->b[i];
				fprintf(f, "%.6g,%.9g\n", (double)bucket_high(i) / 1e3, (double)seen / (double)lh->n);
			}
	}
	fputs("EOD\n$finished << EOD\n", f);
	for (uint64_t i = 0; i < hs->nbins; i++)
		fprintf(f, "%.1f,%.6g\n", (double)((hs->first_bin + i) * BIN_NS) / 1e9,
			(double)hs->bins[i] * 1e9 / (double)BIN_NS);
	fputs("EOD\n", f);
}
