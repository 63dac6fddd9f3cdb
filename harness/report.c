/*
 * report.c - the numbers of a run: summary.json, jobs.csv, workers.csv and the table printed at
 * the end.
 *
 * Owns the names and units readers and scripts rely on: latencies are in ns (from the job's
 * arrival to the end of its teardown), rates per second of the measurement window, times in
 * the CSV files relative to the run's start, classes by the workload's names, counters by
 * sb_counter_names. Does not own how the numbers are gathered (run.c).
 */
#include <math.h>
#include <string.h>

#include "bench.h"

static double per_s(double n, double window_s)
{
	return window_s > 0 ? n / window_s : NAN;
}

/* ---- summary.json ---- */

static void latency_object(FILE *f, const struct sb_hist *h, double window_s)
{
	fprintf(f, "{ \"count\": %llu, \"throughput\": ", (unsigned long long)h->count);
	bench_json_num(f, per_s((double)h->count, window_s));
	static const struct {
		const char *key;
		double q;
	} qs[] = { { "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "p999", 0.999 }, { "max", 1.0 } };
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
		fprintf(f, ", \"%s\": ", qs[i].key);
		bench_json_num(f, h->count ? (double)sb_hist_quantile(h, qs[i].q) : NAN);
	}
	bench_json_kn(f, ", \"mean\": ", h->count ? (double)h->sum / (double)h->count : NAN);
	fputs(" }", f);
}

static void counter_members(FILE *f, const uint64_t c[SB_NR_COUNTERS])
{
	for (unsigned i = 0; i < SB_NR_COUNTERS; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", sb_counter_names[i], (unsigned long long)c[i]);
}

void bench_write_summary(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h)
{
	bench_json_kv(f, "{\n  \"run_id\": ", r->run_id);
	bench_json_kv(f, ",\n  \"policy\": ", o->policy->name);
	bench_json_kv(f, ",\n  \"workload\": ", o->workload->name);
	fprintf(f, ",\n  \"threads\": %u,\n  \"seed\": %lld,\n  \"window_s\": ", r->nworkers, (long long)o->p.seed);
	bench_json_num(f, r->window_s);
	fprintf(f, ",\n  \"drain_s\": ");
	bench_json_num(f, o->p.drain);
	fprintf(f, ",\n  \"unfinished\": %llu,\n  \"overloaded\": %s", (unsigned long long)r->unfinished,
		r->unfinished ? "true" : "false");
	fprintf(f, ",\n  \"jobs\": %llu,\n  \"throughput\": ", (unsigned long long)r->all.count);
	bench_json_num(f, per_s((double)r->all.count, r->window_s));
	fprintf(f, ",\n  \"tasks\": %llu,\n  \"tasks_per_s\": ", (unsigned long long)r->window_cnt[SB_C_RUN]);
	bench_json_num(f, per_s((double)r->window_cnt[SB_C_RUN], r->window_s));
	bench_json_kn(f, ",\n  \"latency_unit\": \"ns\",\n  \"cpu\": { \"user_s\": ", r->cpu_total.user_s);
	bench_json_kn(f, ", \"sys_s\": ", r->cpu_total.sys_s);
	bench_json_kn(f, ", \"window_user_s\": ", r->cpu_window.user_s);
	bench_json_kn(f, ", \"window_sys_s\": ", r->cpu_window.sys_s);
	bench_json_kn(f, ", \"window_cores\": ", per_s(r->cpu_window.user_s + r->cpu_window.sys_s, r->window_s));
	bench_json_kn(f, ", \"peak_rss_kib\": ", (double)r->cpu_total.maxrss_kib);
	fputs(" },\n  \"classes\": {", f);
	bool first = true;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
		if (!r->hist[k] || !r->hist[k]->count)
			continue;
		fputs(first ? "\n    " : ",\n    ", f);
		first = false;
		sb_json_string(f, bench_class_name(o->workload, k));
		fputs(": ", f);
		latency_object(f, r->hist[k], r->window_s);
	}
	fputs(first ? "},\n  \"all\": " : "\n  },\n  \"all\": ", f);
	latency_object(f, &r->all, r->window_s);

	fputs(",\n  \"counters\": {\n    \"workers\": [", f);
	for (unsigned i = 0; i < r->nworkers; i++) {
		fprintf(f, "%s\n      { \"worker\": %u, ", i ? "," : "", i);
		counter_members(f, r->worker_cnt[i]);
		fputs(" }", f);
	}
	fputs("\n    ],\n    \"other\": { ", f);
	counter_members(f, r->other_cnt);
	fputs(" },\n    \"total\": { ", f);
	counter_members(f, r->total_cnt);
	fputs(" },\n    \"window\": { ", f);
	counter_members(f, r->window_cnt);
	fputs(" }\n  },\n  \"policy_stats\": {", f);
	for (size_t i = 0; i < r->npstats; i++) {
		fputs(i ? ", " : " ", f);
		sb_json_string(f, r->pstats[i].key);
		bench_json_kn(f, ": ", r->pstats[i].value);
	}
	const uint64_t *t = r->total_cnt;
	fprintf(f,
		" },\n  \"reconciliation\": { \"jobs_submitted\": %llu, \"jobs_done\": %llu, \"jobs_failed\": %llu, "
		"\"teardowns\": %llu, \"tasks_created\": %llu, \"tasks_run\": %llu, \"yields\": %llu, \"blocked\": %llu, "
		"\"dropped\": %llu, \"unfinished\": %llu, \"ok\": %s },\n",
		(unsigned long long)r->wl.jobs_submitted, (unsigned long long)r->wl.jobs_done,
		(unsigned long long)r->wl.jobs_failed, (unsigned long long)t[SB_C_TEARDOWN],
		(unsigned long long)r->wl.tasks_created, (unsigned long long)t[SB_C_RUN], (unsigned long long)t[SB_C_YIELD],
		(unsigned long long)t[SB_C_BLOCKED], (unsigned long long)t[SB_C_DROPPED], (unsigned long long)r->unfinished,
		r->recon_ok ? "true" : "false");
	fprintf(f,
		"  \"recorded\": { \"job_rows\": %zu, \"job_rows_dropped\": %zu, \"trace_events\": %zu, "
		"\"trace_events_written\": %zu, \"trace_events_lost\": %zu },\n  \"failure\": ",
		r->nrows, r->rows_dropped, r->ev_total, r->ev_written, r->ev_lost);
	sb_json_string(f, r->failure);
	fputs("\n}\n", f);
}

/* ---- CSV ---- */

static const char *const status_names[] = { "ok", "error", "cancelled" };

void bench_write_jobs(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h)
{
	fputs("id,class,work_level,arrival_ns,submit_ns,start_ns,end_ns,latency_ns,end_worker,status\n", f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct sb_jobrow *j = &r->rows[i];
		char start[24] = ""; /* empty: the job ended without running a task (all dropped) */
		if (j->t_start)
			snprintf(start, sizeof start, "%lld", (long long)(j->t_start - r->t0));
		fprintf(f, "%llu,%s,%d,%lld,%lld,%s,%lld,%llu,%d,%s\n", (unsigned long long)j->id,
			bench_class_name(o->workload, j->cls), (int)j->work_level, (long long)(j->t_arrival - r->t0),
			(long long)(j->t_submit - r->t0), start, (long long)(j->t_end - r->t0),
			(unsigned long long)(j->t_end - j->t_arrival), (int)j->end_thread,
			j->status < 3 ? status_names[j->status] : "unknown");
	}
}

void bench_write_workers(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h)
{
	fputs("worker", f);
	for (unsigned c = 0; c < SB_NR_COUNTERS; c++)
		fprintf(f, ",%s", sb_counter_names[c]);
	fputc('\n', f);
	for (unsigned i = 0; i <= r->nworkers; i++) {
		const uint64_t *c = i < r->nworkers ? r->worker_cnt[i] : r->other_cnt;
		if (i < r->nworkers)
			fprintf(f, "%u", i);
		else
			fputs("other", f);
		for (unsigned k = 0; k < SB_NR_COUNTERS; k++)
			fprintf(f, ",%llu", (unsigned long long)c[k]);
		fputc('\n', f);
	}
}

/* ---- the table ---- */

static const char *fmt_ns(char *buf, size_t len, const struct sb_hist *h, double q)
{
	if (!h->count) {
		snprintf(buf, len, "-");
		return buf;
	}
	double v = (double)sb_hist_quantile(h, q);
	if (v < 1e3)
		snprintf(buf, len, "%.0f ns", v);
	else if (v < 1e6)
		snprintf(buf, len, "%.1f us", v / 1e3);
	else if (v < 1e9)
		snprintf(buf, len, "%.2f ms", v / 1e6);
	else
		snprintf(buf, len, "%.2f s", v / 1e9);
	return buf;
}

/* 21.5k, 1.23M: rates in the table */
static const char *si(char *buf, size_t len, double v)
{
	static const char *const unit[] = { "", "k", "M", "G" };
	unsigned u = 0;
	while (u < 3 && fabs(v) >= 1000) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, isfinite(v) ? "%.3g%s" : "-", v, unit[u]);
	return buf;
}

static void class_row(FILE *f, const char *name, const struct sb_hist *h, double window_s)
{
	char a[32], b[32], c[32], d[32];
	fprintf(f, "  %-16s %10llu %12.1f %11s %11s %11s %11s\n", name, (unsigned long long)h->count,
		per_s((double)h->count, window_s), fmt_ns(a, sizeof a, h, 0.5), fmt_ns(b, sizeof b, h, 0.99),
		fmt_ns(c, sizeof c, h, 0.999), fmt_ns(d, sizeof d, h, 1.0));
}

void bench_print_table(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	const uint64_t *w = r->window_cnt;
	fprintf(f, "%s: policy %s, workload %s, %u threads, window %.3g s\n", r->run_id, o->policy->name,
		o->workload->name, r->nworkers, r->window_s);
	fprintf(f, "  %-16s %10s %12s %11s %11s %11s %11s\n", "class", "jobs", "jobs/s", "p50", "p99", "p99.9", "max");
	unsigned shown = 0;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
		if (r->hist[k] && r->hist[k]->count) {
			class_row(f, bench_class_name(o->workload, k), r->hist[k], r->window_s);
			shown++;
		}
	}
	if (shown != 1)
		class_row(f, "all", &r->all, r->window_s);
	double cpu = r->cpu_window.user_s + r->cpu_window.sys_s;
	char rate[32];
	fprintf(f, "  tasks/s %s  CPU %.2f s user + %.2f s sys (%.2f cores)  steals %llu (%llu sweeps)  suspends %llu  "
		   "wake-ups %llu\n",
		si(rate, sizeof rate, per_s((double)w[SB_C_RUN], r->window_s)), r->cpu_window.user_s, r->cpu_window.sys_s,
		per_s(cpu, r->window_s), (unsigned long long)w[SB_C_STOLEN], (unsigned long long)w[SB_C_STEAL_SWEEP],
		(unsigned long long)w[SB_C_SUSPEND], (unsigned long long)w[SB_C_WOKEN]);
	if (r->ev_total)
		fprintf(f, "  trace.json: %zu of %zu recorded events (those from the window's start%s)\n", r->ev_written,
			r->ev_total, r->ev_limited ? ", up to --trace-limit" : "");
	if (r->unfinished && r->failure)
		fprintf(f, "  unfinished %llu jobs: cancelled when the run failed\n", (unsigned long long)r->unfinished);
	else if (r->unfinished)
		fprintf(f, "  unfinished %llu jobs: still pending %g s after the window, cancelled (overloaded)\n",
			(unsigned long long)r->unfinished, o->p.drain);
	fprintf(f, "  accounting %s%s\n", r->recon_ok ? "ok" : "FAILED", r->failure ? ", run FAILED" : "");
}
