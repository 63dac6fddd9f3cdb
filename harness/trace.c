/*
 * trace.c - trace.json: the run's task events in the Chrome / Perfetto trace event format.
 *
 * One lane (tid) per worker, named "worker N", and one per other thread that ran tasks (request
 * threads under serial and hybrid), tid 1000+N. Each task run is a complete ("X") event named
 * by its job class, with the job id, whether it was stolen and how it ended in args; stolen runs
 * also carry the category "steal" and a " (stolen)" suffix so they stand out in a viewer.
 * Wake-ups are thread-scoped instants, suspensions complete events named "suspended". Two
 * global instants mark the measurement window. Times are microseconds from the run's start.
 *
 * A traced run records far more events than a viewer can hold, so the file keeps the earliest
 * trace_limit events from the window's start: the cut-off time is found by counting events
 * into time bins (refining the bin that overflows), which needs no sorting and no copy of the
 * core's per-thread buffers. Does not own recording the events (the core does).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define TRACE_BINS 4096
#define TRACE_OTHER_TID 1000

/* The first time t such that events in [from, t) number at most `limit`; UINT64_MAX if all fit. */
static uint64_t trace_cutoff(const struct bench_result *r, uint64_t from, size_t limit)
{
	uint64_t hi = from;
	size_t total = 0;
	for (size_t l = 0; l < r->nlanes; l++)
		for (size_t i = 0; i < r->lanes[l].nev; i++) {
			uint64_t ts = r->lanes[l].ev[i].ts;
			if (ts >= from) {
				total++;
				if (ts >= hi)
					hi = ts + 1;
			}
		}
	if (total <= limit)
		return UINT64_MAX;
	uint64_t lo = from;
	size_t budget = limit;
	static size_t bins[TRACE_BINS];
	for (;;) {
		uint64_t width = (hi - lo + TRACE_BINS - 1) / TRACE_BINS;
		memset(bins, 0, sizeof bins);
		for (size_t l = 0; l < r->nlanes; l++)
			for (size_t i = 0; i < r->lanes[l].nev; i++) {
				uint64_t ts = r->lanes[l].ev[i].ts;
				if (ts >= lo && ts < hi)
					bins[(ts - lo) / width]++;
			}
		size_t b = 0;
		while (b < TRACE_BINS && bins[b] <= budget)
			budget -= bins[b++];
		if (b == TRACE_BINS)
			return hi; /* cannot happen: [lo, hi) overflowed one level up */
		lo += b * width;
		if (width == 1)
			return lo;
		hi = lo + width < hi ? lo + width : hi;
	}
}

static int lane_tid(const struct bench_lane *l)
{
	return l->worker >= 0 ? l->worker : TRACE_OTHER_TID + (int)l->thread_id;
}

static void metadata(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	fprintf(f, "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"schedbed %s/%s\"}}",
		o->policy->name, o->workload->name);
	/* every worker gets a lane, even one that ran nothing: an empty lane is a finding */
	for (unsigned w = 0; w < r->nworkers; w++)
		fprintf(f,
			",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"worker %u\"}},\n"
			"{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%u}}",
			w, w, w, w);
	for (size_t l = 0; l < r->nlanes; l++) {
		if (r->lanes[l].worker >= 0)
			continue;
		int tid = lane_tid(&r->lanes[l]);
		fprintf(f,
			",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"thread %u (not a worker)\"}},\n"
			"{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%d}}",
			tid, r->lanes[l].thread_id, tid, tid);
	}
	fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":0,\"name\":\"window start\",\"cat\":\"window\",\"ts\":%.3f}",
		(double)(r->win_start - r->t0) / 1e3);
	fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":0,\"name\":\"window end\",\"cat\":\"window\",\"ts\":%.3f}",
		(double)(r->win_end - r->t0) / 1e3);
}

static const char *const result_names[] = { "done", "yield", "blocked", "error" };

static void event(FILE *f, const struct bench_opts *o, const struct sb_tev *e, int tid, uint64_t t0)
{
	double ts = (double)(e->ts - t0) / 1e3, dur = (double)e->dur / 1e3;
	switch (e->kind) {
	case SB_EV_WAKE:
		fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%d,\"name\":\"wake-up\",\"cat\":\"wake\",\"ts\":%.3f}",
			tid, ts);
		return;
	case SB_EV_SUSPEND:
		fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":\"suspended\",\"cat\":\"suspend\",\"ts\":%.3f,\"dur\":%.3f}",
			tid, ts, dur);
		return;
	default: {
		bool stolen = e->stolen;
		fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":", tid);
		char name[96];
		snprintf(name, sizeof name, "%s%s", bench_class_name(o->workload, e->cls), stolen ? " (stolen)" : "");
		sb_json_string(f, name);
		fprintf(f, ",\"cat\":\"%s\",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"job\":%llu,\"stolen\":%s,\"result\":\"%s\"}}",
			stolen ? "steal" : "task", ts, dur, (unsigned long long)e->job, stolen ? "true" : "false",
			e->result < 4 ? result_names[e->result] : "unknown");
	}
	}
}

void trace_write(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h)
{
	uint64_t from = r->win_end > r->win_start ? r->win_start : r->t0;
	uint64_t cut = trace_cutoff(r, from, (size_t)o->p.trace_limit);
	r->ev_limited = cut != UINT64_MAX;
	r->ev_written = 0;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
	metadata(f, o, r);
	for (size_t l = 0; l < r->nlanes; l++) {
		int tid = lane_tid(&r->lanes[l]);
		for (size_t i = 0; i < r->lanes[l].nev; i++) {
			const struct sb_tev *e = &r->lanes[l].ev[i];
			if (e->ts < from || e->ts >= cut)
				continue;
			event(f, o, e, tid, r->t0);
			r->ev_written++;
		}
	}
	bench_json_kv(f, "\n],\n\"otherData\":{\"run_id\":", r->run_id);
	fprintf(f, ",\"events_written\":%zu,\"events_recorded\":%zu,\"events_lost\":%zu,\"cutoff_us\":", r->ev_written,
		r->ev_total, r->ev_lost);
	sb_json_double(f, cut == UINT64_MAX ? NAN : (double)(cut - r->t0) / 1e3);
	fputs("}}\n", f);
}
