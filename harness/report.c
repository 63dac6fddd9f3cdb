/*
 * report.c - the numbers of a run: summary.json, jobs.csv, workers.csv and the table printed at
 * the end.
 *
 * Owns the names and units readers and scripts rely on: latencies are in ns (from the job's
 * arrival to the end of its teardown), rates per second of the measurement window, times in
 * the CSV files relative to the run's start, classes by the workload's names, counters by
 * sb_counter_names. Does not own how the numbers are gathered (run.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static double per_s(double n, double window_s)
{
	return window_s > 0 ? n / window_s : NAN;
}

const char *bench_class_name(const struct sb_workload *w, unsigned i)
{
	static char spare[SB_MAX_CLASSES][16];
	unsigned n = 0;
	while (w->classes && w->classes[n])
		n++;
	if (i < n)
		return w->classes[i];
	snprintf(spare[i % SB_MAX_CLASSES], sizeof spare[0], "class%u", i);
	return spare[i % SB_MAX_CLASSES];
}

bool bench_rows_written(const struct bench_opts *o, const struct bench_result *r)
{
	return (int64_t)r->nrows <= o->p.rows;
}

/* ---- percentiles: one method for the table, summary.json and the plots ---- */

const double bench_quantiles[BENCH_NQ] = { 0.5, 0.9, 0.99, 0.999, 1.0 };
const char *const bench_quantile_keys[BENCH_NQ] = { "p50", "p90", "p99", "p999", "max" };

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest rank: the smallest latency with at least a fraction q of the jobs at or below it, i.e.
 * element ceil(q n) of the sorted values (numpy: percentile(v, 100 q, method="inverted_cdf")).
 * An exact value some job had, never an interpolation or a bucket bound. */
static void nearest_rank(uint64_t *v, size_t n, uint64_t out[BENCH_NQ])
{
	qsort(v, n, sizeof *v, cmp_u64);
	for (unsigned i = 0; i < BENCH_NQ; i++) {
		double rank = ceil(bench_quantiles[i] * (double)n - 1e-9); /* 0.99 * 100 is 99, not 99.000001 */
		size_t k = rank < 1 ? 0 : (size_t)rank - 1;
		out[i] = n ? v[k < n ? k : n - 1] : 0;
	}
}

int bench_percentiles(struct bench_result *r)
{
	r->pct_exact = r->rows_dropped == 0;
	uint64_t *v = r->pct_exact ? malloc((r->nrows ? r->nrows : 1) * sizeof *v) : NULL;
	if (r->pct_exact && !v)
		return -ENOMEM;
	/* the one class every job (every row) belongs to, if there is one: "all" is that class, and
	 * millions of jobs are sorted once, not twice */
	unsigned only = SB_MAX_CLASSES, nclasses = 0;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++)
		if (r->hist[k] && r->hist[k]->count) {
			only = k;
			nclasses++;
		}
	for (size_t i = 0; nclasses == 1 && i < r->nrows; i++)
		if (r->rows[i].cls != only)
			nclasses++;
	for (unsigned k = 0; k <= SB_MAX_CLASSES; k++) {
		const struct sb_hist *h = k < SB_MAX_CLASSES ? r->hist[k] : &r->all;
		uint64_t *out = k < SB_MAX_CLASSES ? r->pct[k] : r->pct_all;
		if (!h || !h->count)
			continue;
		if (k == SB_MAX_CLASSES && nclasses == 1) {
			memcpy(out, r->pct[only], sizeof r->pct[only]);
			continue;
		}
		if (!r->pct_exact) {
			for (unsigned i = 0; i < BENCH_NQ; i++)
				out[i] = sb_hist_quantile(h, bench_quantiles[i]);
			continue;
		}
		size_t n = 0;
		for (size_t i = 0; i < r->nrows; i++)
			if (k == SB_MAX_CLASSES || r->rows[i].cls == k)
				v[n++] = r->rows[i].t_end - r->rows[i].t_arrival;
		nearest_rank(v, n, out);
	}
	free(v);
	return 0;
}

/* ---- summary.json ---- */

static void arrival_members(FILE *f, const struct wl_arrival_counts *a, double span_s)
{
	fprintf(f, "\"offered\": %llu, \"issued\": %llu, \"unissued\": %llu, \"completed\": %llu",
		(unsigned long long)a->offered, (unsigned long long)a->issued, (unsigned long long)a->unissued,
		(unsigned long long)a->completed);
	bench_json_kn(f, ", \"offered_per_s\": ", per_s((double)a->offered, span_s));
	bench_json_kn(f, ", \"completed_per_s\": ", per_s((double)a->completed, span_s));
}

/* The open-loop accounting (null in a closed loop): per arrival class and over all of them. */
static void arrivals_object(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	const struct wl_counts *w = &r->wl;
	if (!w->arrival_classes) {
		fputs("null", f);
		return;
	}
	struct wl_arrival_counts all = { 0 };
	fputs("{ \"classes\": {", f);
	bool first = true;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
		if (!(w->arrival_classes >> k & 1))
			continue;
		const struct wl_arrival_counts *a = &w->arrivals[k];
		all.offered += a->offered;
		all.issued += a->issued;
		all.unissued += a->unissued;
		all.completed += a->completed;
		fputs(first ? " " : ", ", f);
		first = false;
		sb_json_string(f, bench_class_name(o->workload, k));
		fputs(": { ", f);
		arrival_members(f, a, r->arrivals_s);
		fputs(" }", f);
	}
	fputs(" }, ", f);
	arrival_members(f, &all, r->arrivals_s);
	bench_json_kn(f, ", \"span_s\": ", r->arrivals_s);
	bench_json_kn(f, ", \"max_lag_s\": ", (double)w->lag_max_ns / 1e9);
	bench_json_kn(f, ", \"max_lag_limit_s\": ", o->p.max_lag);
	fputs(" }", f);
}

static void latency_object(FILE *f, const struct sb_hist *h, const uint64_t pct[BENCH_NQ], double window_s)
{
	fprintf(f, "{ \"count\": %llu, \"throughput\": ", (unsigned long long)h->count);
	sb_json_double(f, per_s((double)h->count, window_s));
	for (unsigned i = 0; i < BENCH_NQ; i++) {
		fprintf(f, ", \"%s\": ", bench_quantile_keys[i]);
		sb_json_double(f, h->count ? (double)pct[i] : NAN);
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
	sb_json_double(f, r->window_s);
	fprintf(f, ",\n  \"drain_s\": ");
	sb_json_double(f, o->p.drain);
	fprintf(f, ",\n  \"unfinished\": %llu,\n  \"shutdown\": %s,\n  \"overloaded\": %s", (unsigned long long)r->unfinished,
		r->unfinished && o->p.drain == 0 && !r->failure ? "true" : "false", r->overload[0] ? "true" : "false");
	fputs(",\n  \"overload\": ", f);
	sb_json_string(f, r->overload[0] ? r->overload : NULL);
	fputs(",\n  \"arrivals\": ", f);
	arrivals_object(f, o, r);
	fprintf(f, ",\n  \"stop_s\": ");
	sb_json_double(f, r->stop_s);
	fprintf(f, ",\n  \"jobs\": %llu,\n  \"throughput\": ", (unsigned long long)r->all.count);
	sb_json_double(f, per_s((double)r->all.count, r->window_s));
	fprintf(f, ",\n  \"tasks\": %llu,\n  \"tasks_per_s\": ", (unsigned long long)r->window_cnt[SB_C_RUN]);
	sb_json_double(f, per_s((double)r->window_cnt[SB_C_RUN], r->window_s));
	fprintf(f, ",\n  \"latency_unit\": \"ns\",\n  \"percentiles\": \"%s\"",
		r->pct_exact ? "nearest rank over every job" : "histogram bucket upper bound (job rows were capped)");
	bench_json_kn(f, ",\n  \"cpu\": { \"user_s\": ", r->cpu_total.user_s);
	bench_json_kn(f, ", \"sys_s\": ", r->cpu_total.sys_s);
	bench_json_kn(f, ", \"window_user_s\": ", r->cpu_window.user_s);
	bench_json_kn(f, ", \"window_sys_s\": ", r->cpu_window.sys_s);
	bench_json_kn(f, ", \"window_cores\": ", per_s(r->cpu_window.user_s + r->cpu_window.sys_s, r->window_s));
	bench_json_kn(f, ", \"peak_rss_kib\": ", (double)r->cpu_total.maxrss_kib);
	uint64_t pw = r->cpu_window.preempted_workers, pc = r->cpu_window.preempted_clients;
	bench_json_kn(f, ", \"window_preempted_workers\": ", pw == BENCH_UNKNOWN ? NAN : (double)pw);
	bench_json_kn(f, ", \"window_preempted_clients\": ", pc == BENCH_UNKNOWN ? NAN : (double)pc);
	fputs(" },\n  \"classes\": {", f);
	bool first = true;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
		if (!r->hist[k] || !r->hist[k]->count)
			continue;
		fputs(first ? "\n    " : ",\n    ", f);
		first = false;
		sb_json_string(f, bench_class_name(o->workload, k));
		fputs(": ", f);
		latency_object(f, r->hist[k], r->pct[k], r->window_s);
	}
	fputs(first ? "},\n  \"all\": " : "\n  },\n  \"all\": ", f);
	latency_object(f, &r->all, r->pct_all, r->window_s);

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
		"\"dropped\": %llu, \"unfinished\": %llu, \"results_wrong\": %llu, \"ok\": %s },\n",
		(unsigned long long)r->wl.jobs_submitted, (unsigned long long)r->wl.jobs_done,
		(unsigned long long)r->wl.jobs_failed, (unsigned long long)t[SB_C_TEARDOWN],
		(unsigned long long)r->wl.tasks_created, (unsigned long long)t[SB_C_RUN], (unsigned long long)t[SB_C_YIELD],
		(unsigned long long)t[SB_C_BLOCKED], (unsigned long long)t[SB_C_DROPPED], (unsigned long long)r->unfinished,
		(unsigned long long)r->wl.results_wrong, r->recon_ok ? "true" : "false");
	fprintf(f,
		"  \"recorded\": { \"job_rows\": %zu, \"job_rows_dropped\": %zu, \"job_rows_written\": %s, "
		"\"trace_events\": %zu, \"trace_events_written\": %zu, \"trace_events_lost\": %zu },\n  \"failure\": ",
		r->nrows, r->rows_dropped, bench_rows_written(o, r) ? "true" : "false", r->ev_total, r->ev_written,
		r->ev_lost);
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

/* ---- plot.gp ---- */

/*
 * A gnuplot script that needs nothing but the run's own files (like rt-app's per-run scripts):
 * the latency CDF per class, from jobs.csv.gz, and jobs finished per second over the window in
 * 100 ms bins, drawn in the terminal (dumb). The classes, their counts and the window are written
 * in as constants. It writes no file: the run's figure files are scripts/plot_run.py's.
 */
void bench_write_plot(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h)
{
	/* the window widened to whole 100 ms bins (a bin is plotted at its start) */
	double ws = (double)(r->win_start - r->t0) / 1e9, we = ws + r->window_s;
	ws = floor(ws * 10) / 10;
	we = (floor(we * 10) + 1) / 10;
	fprintf(f,
		"# plot.gp - run %s: latency CDF per job class and throughput over time, from the files\n"
		"# beside this script (written by schedbed run; see schedbed outputs).\n"
		"# Draws in the terminal and writes no file (scripts/plot_run.py writes the figure files).\n"
		"#   gnuplot plot.gp                      both in the terminal\n"
		"#   gnuplot -e \"only='cdf'\" plot.gp     the CDF alone\n"
		"if (!exists(\"only\")) only = ''\n"
		"cd system(sprintf(\"dirname '%%s'\", ARG0))\n"
		"rows = \"< gzip -dc jobs.csv.gz\"\n"
		"set datafile separator ','\n"
		"set key bottom right\n"
		"set grid\n"
		"set terminal dumb size 110,32\n",
		r->run_id);
	fputs("classes = \"", f);
	bool first = true;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++)
		if (r->hist[k] && r->hist[k]->count) {
			fprintf(f, "%s%s", first ? "" : " ", bench_class_name(o->workload, k));
			first = false;
		}
	fputs("\"\ncounts = \"", f);
	first = true;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++)
		if (r->hist[k] && r->hist[k]->count) {
			fprintf(f, "%s%llu", first ? "" : " ", (unsigned long long)r->hist[k]->count);
			first = false;
		}
	bool rows = bench_rows_written(o, r);
	fputs("\"\n", f);
	if (!rows) /* past --rows: the CDF and the throughput from latency-hist.json.gz's buckets, written in */
		bench_write_hist_blocks(f, r);
	fprintf(f,
		"set title \"%s: %s on %s, %u workers - latency CDF per class (%s)\" noenhanced\n"
		"set logscale x\n"
		/* the dumb terminal has 7 line symbols: past 7 classes two would look alike; a letter each */
		"cdf_with = 'points pt word(\"A B C D E F G H I J K L M N O P Q R S T U V W X Y Z\", i)'\n"
		"set xlabel 'latency (us, log scale)'\n"
		"set ylabel 'fraction of jobs at or below'\n"
		"%s"
		"if (only eq 'cdf') { exit }\n"
		"unset logscale x\n"
		"set yrange [0:*]\n"
		"set title \"%s: jobs finished per second in the window (100 ms bins)\" noenhanced\n"
		"set xlabel 's from run start'\n"
		"set ylabel 'jobs/s'\n"
		"set xrange [%.6f:%.6f]\n"
		"%s",
		r->run_id, o->policy->name, o->workload->name, r->nworkers,
		rows ? "nearest rank" : "buckets",
		rows ? /* one data source per class: smooth cumulative restarts at every skipped (NaN) row */
			"plot for [i=1:words(classes)] sprintf(\"< gzip -dc jobs.csv.gz | awk -F, '$2 == \\\"%s\\\"'\", "
			"word(classes, i)) using ($8 / 1e3):(1.0 / real(word(counts, i))) smooth cumulative with @cdf_with "
			"title word(classes, i) noenhanced\n"
		     : "plot for [i=1:words(classes)] $cdf index (i - 1) using 1:2 with @cdf_with title word(classes, i) noenhanced\n",
		r->run_id, ws, we,
		rows ? "plot rows using (floor($7 / 1e8) / 10.0):(10.0) smooth frequency with histeps title 'all classes'\n"
		     : "plot $finished using 1:2 with histeps title 'all classes'\n");
}

/* ---- the table ---- */

static const char *fmt_ns(char *buf, size_t len, const struct sb_hist *h, uint64_t value)
{
	if (!h->count) {
		snprintf(buf, len, "-");
		return buf;
	}
	double v = (double)value;
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

/* columns p50, p99, p99.9, max: bench_quantiles[0, 2, 3, 4] */
static void class_row(FILE *f, const char *name, const struct sb_hist *h, const uint64_t pct[BENCH_NQ], double window_s)
{
	char a[32], b[32], c[32], d[32];
	fprintf(f, "  %-16s %10llu %12.1f %11s %11s %11s %11s\n", name, (unsigned long long)h->count,
		per_s((double)h->count, window_s), fmt_ns(a, sizeof a, h, pct[0]), fmt_ns(b, sizeof b, h, pct[2]),
		fmt_ns(c, sizeof c, h, pct[3]), fmt_ns(d, sizeof d, h, pct[4]));
}

static bool pstat_value(const struct bench_result *r, const char *key, double *v)
{
	for (size_t i = 0; i < r->npstats; i++)
		if (strcmp(r->pstats[i].key, key) == 0) {
			*v = r->pstats[i].value;
			return true;
		}
	return false;
}

/* The policy's path counters, and one note when one of them stayed 0 (see sb_policy_ops.paths). */
static void paths_line(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	const char *const *k = o->policy->paths;
	if (!k || !*k)
		return;
	fprintf(f, "  %s:", o->policy->name);
	bool zero = false;
	for (; *k; k++) {
		double v = 0;
		if (!pstat_value(r, *k, &v))
			continue;
		fprintf(f, " %s %.0f", *k, v);
		zero |= v == 0;
	}
	fputc('\n', f);
	if (zero && o->policy->degenerate_hint)
		fprintf(f, "  note: %s\n", o->policy->degenerate_hint);
}

/* Open loop: what the schedule offered against what was achieved, per arrival class. */
static void arrivals_lines(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	const struct wl_counts *w = &r->wl;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
		if (!(w->arrival_classes >> k & 1))
			continue;
		const struct wl_arrival_counts *a = &w->arrivals[k];
		char off[32], done[32];
		fprintf(f, "  open loop, %s arrivals over %.3g s: offered %llu (%s/s), issued %llu, completed %llu (%s/s), "
			   "never issued %llu (%.1f%%)\n",
			bench_class_name(o->workload, k), r->arrivals_s, (unsigned long long)a->offered,
			si(off, sizeof off, per_s((double)a->offered, r->arrivals_s)), (unsigned long long)a->issued,
			(unsigned long long)a->completed, si(done, sizeof done, per_s((double)a->completed, r->arrivals_s)),
			(unsigned long long)a->unissued, a->offered ? 100.0 * (double)a->unissued / (double)a->offered : 0.0);
	}
	if (w->arrival_classes)
		fprintf(f, "  clients behind their arrivals by up to %.3g s (--max-lag %g s)%s\n", (double)w->lag_max_ns / 1e9,
			o->p.max_lag, (double)w->lag_max_ns > o->p.max_lag * 1e9 ? ": overloaded" : "");
}

void bench_print_table(FILE *f, const struct bench_opts *o, const struct bench_result *r)
{
	const uint64_t *w = r->window_cnt;
	fprintf(f, "%s: policy %s, workload %s, %u threads, window %.3g s; latency percentiles %s\n", r->run_id,
		o->policy->name, o->workload->name, r->nworkers, r->window_s,
		r->pct_exact ? "by nearest rank" : "from histogram buckets (job rows were capped)");
	fprintf(f, "  %-16s %10s %12s %11s %11s %11s %11s\n", "class", "jobs", "jobs/s", "p50", "p99", "p99.9", "max");
	unsigned shown = 0;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
		if (r->hist[k] && r->hist[k]->count) {
			class_row(f, bench_class_name(o->workload, k), r->hist[k], r->pct[k], r->window_s);
			shown++;
		}
	}
	if (shown != 1)
		class_row(f, "all", &r->all, r->pct_all, r->window_s);
	double cpu = r->cpu_window.user_s + r->cpu_window.sys_s;
	char rate[32];
	fprintf(f, "  tasks/s %s  CPU %.2f s user + %.2f s sys (%.2f cores)  steals %llu (%llu sweeps)  suspends %llu  "
		   "wake-ups %llu\n",
		si(rate, sizeof rate, per_s((double)w[SB_C_RUN], r->window_s)), r->cpu_window.user_s, r->cpu_window.sys_s,
		per_s(cpu, r->window_s), (unsigned long long)w[SB_C_STOLEN], (unsigned long long)w[SB_C_STEAL_SWEEP],
		(unsigned long long)w[SB_C_SUSPEND], (unsigned long long)w[SB_C_WOKEN]);
	/* serial's callers and global's external threads run tasks outside the pool: say how many */
	if (r->other_cnt[SB_C_RUN] && r->total_cnt[SB_C_RUN])
		fprintf(f, "  tasks run by request threads, not workers: %.1f%% (whole run)\n",
			100.0 * (double)r->other_cnt[SB_C_RUN] / (double)r->total_cnt[SB_C_RUN]);
	paths_line(f, o, r);
	if (r->ev_total)
		fprintf(f, "  trace.json: %zu of %zu recorded events (those from the window's start%s)\n", r->ev_written,
			r->ev_total, r->ev_limited ? ", up to --trace-limit" : "");
	arrivals_lines(f, o, r);
	if (r->unfinished && r->failure)
		fprintf(f, "  unfinished %llu jobs: cancelled when the run failed\n", (unsigned long long)r->unfinished);
	else if (r->unfinished && o->p.drain == 0)
		fprintf(f, "  unfinished %llu jobs: in flight at the shutdown (--drain 0), cancelled; stopped %.3g s after "
			"the window\n", (unsigned long long)r->unfinished, r->stop_s);
	else if (r->unfinished)
		fprintf(f, "  unfinished %llu jobs: still pending %g s after the window, cancelled (overloaded); "
			"stopped %.3g s after the window\n", (unsigned long long)r->unfinished, o->p.drain, r->stop_s);
	fprintf(f, "  accounting %s%s%s\n", r->recon_ok ? "ok" : "FAILED", r->wl.results_wrong ? ", results WRONG" : "",
		r->failure ? ", run FAILED" : "");
}
