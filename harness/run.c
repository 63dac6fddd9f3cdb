/*
 * run.c - one run: runtime and workload up, warm-up, measurement window, progress, stop, read
 * everything back, write the result files, print the summary.
 *
 * Owns the order of a run and the measurement window: jobs are recorded by the core only when
 * submitted inside [window start, window end), which opens when the warm-up ends and closes
 * when the run is told to stop (or a bounded run is done), so jobs still in flight at the end
 * count, and jobs submitted while stopping do not. After the window, jobs still pending get the
 * drain time (--drain) to finish; what is left then is cancelled and counted as unfinished, and
 * the run exits BENCH_EXIT_OVERLOADED. Counters are cumulative over the whole run
 * (the accounting reconciles them); window rates come from relaxed snapshots at both ends.
 * Does not own the files' formats (report.c, meta.c, trace.c) or the directory (outdir.c).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

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

static void counters_now(const struct sb_rt *rt, uint64_t out[SB_NR_COUNTERS])
{
	uint64_t w[SB_NR_COUNTERS];
	sb_rt_other_counters(rt, out);
	for (unsigned i = 0; i < sb_rt_nworkers(rt); i++) {
		sb_rt_worker_counters(rt, i, w);
		for (unsigned c = 0; c < SB_NR_COUNTERS; c++)
			out[c] += w[c];
	}
}

static struct bench_cpu cpu_now(void)
{
	/* simulated: the actors' CPU time, and no resident set (the simulator's is no result) */
	if (sb_exec_virtual())
		return (struct bench_cpu){ .user_s = (double)sb_sim_cpu_ns() / 1e9 };
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (struct bench_cpu){ .user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
				   .sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
				   .maxrss_kib = ru.ru_maxrss };
}

static void sleep_ms(long ms)
{
	sb_exec_sleep_ns((uint64_t)ms * 1000000u);
}

/* ---- the measurement window ---- */

struct window {
	bool open;
	uint64_t cnt0[SB_NR_COUNTERS]; /* counters and CPU time when it opened */
	struct bench_cpu cpu0;
};

static void window_open(struct sb_rt *rt, struct bench_result *r, struct window *w, uint64_t now)
{
	w->open = true;
	r->win_start = now;
	counters_now(rt, w->cnt0);
	w->cpu0 = cpu_now();
	sb_rt_set_window(rt, now, UINT64_MAX);
}

/* ---- the drain: pending jobs get a bounded time after the window ---- */

/* A workload's stop() returns when every job it submitted has finished, which an overloaded run
 * may never reach. While it waits, a timer thread cancels every live job (sb_rt_cancel: queued
 * tasks are dropped, teardowns run, each such job counts as unfinished) when the drain time is
 * up, so stop() returns. */
struct drain {
	struct sb_rt *rt;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct timespec deadline; /* CLOCK_MONOTONIC */
	bool done;                /* stop() returned: no cancel needed (under lock) */
	bool started;
	pthread_t thread;
};

static void *drain_main(void *arg)
{
	struct drain *d = arg;
	pthread_mutex_lock(&d->lock);
	int e = 0;
	/* a failed run needs no drain: what is queued may never finish (a starved queue), and
	 * threads still running it (a request thread draining its own queue) would hold up the
	 * stop until the deadline; so the wait looks at the failure every 10 ms */
	while (!d->done && e != ETIMEDOUT && !sb_rt_failure(d->rt)) {
		struct timespec slice;
		clock_gettime(CLOCK_MONOTONIC, &slice);
		slice.tv_nsec += 10000000L;
		if (slice.tv_nsec >= 1000000000L) {
			slice.tv_sec++;
			slice.tv_nsec -= 1000000000L;
		}
		bool last = slice.tv_sec > d->deadline.tv_sec ||
			    (slice.tv_sec == d->deadline.tv_sec && slice.tv_nsec >= d->deadline.tv_nsec);
		e = pthread_cond_timedwait(&d->cond, &d->lock, last ? &d->deadline : &slice);
		if (!last && e == ETIMEDOUT)
			e = 0;
	}
	bool cancel = !d->done;
	pthread_mutex_unlock(&d->lock);
	if (cancel)
		sb_rt_cancel(d->rt);
	return NULL;
}

static void drain_start(struct drain *d, struct sb_rt *rt, double seconds)
{
	memset(d, 0, sizeof *d);
	d->rt = rt;
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cond, &ca);
	pthread_condattr_destroy(&ca);
	clock_gettime(CLOCK_MONOTONIC, &d->deadline);
	double whole = (double)(time_t)seconds;
	d->deadline.tv_sec += (time_t)seconds;
	d->deadline.tv_nsec += (long)((seconds - whole) * 1e9);
	if (d->deadline.tv_nsec >= 1000000000L) {
		d->deadline.tv_sec++;
		d->deadline.tv_nsec -= 1000000000L;
	}
	/* Under a virtual executor the bound would be wall time racing a simulated run from outside
	 * it (and nondeterministic): none is kept; a simulation in which nothing can move any more
	 * ends by itself with SimGrid's deadlock report. */
	if (sb_exec_virtual())
		return;
	/* without the thread there is no bound: cancel at once rather than risk a run that never ends */
	d->started = pthread_create(&d->thread, NULL, drain_main, d) == 0;
	if (!d->started)
		sb_rt_cancel(rt);
}

static void drain_end(struct drain *d)
{
	pthread_mutex_lock(&d->lock);
	d->done = true;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	if (d->started)
		pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
}

/* ---- progress ---- */

struct progress {
	bool on, tty;
	uint64_t next, last_t;
	uint64_t last_jobs;
};

static void progress(struct progress *p, const struct bench_opts *o, void *wst, uint64_t start, uint64_t now,
		     bool measuring)
{
	if (!p->on || now < p->next)
		return;
	struct wl_counts c;
	o->workload->counts(wst, &c);
	double dt = (double)(now - p->last_t) / 1e9;
	double rate = dt > 0 ? (double)(c.jobs_done - p->last_jobs) / dt : 0;
	double el = (double)(now - start) / 1e9;
	char phase[64];
	if (!measuring)
		snprintf(phase, sizeof phase, "warm-up");
	else if (o->p.jobs)
		snprintf(phase, sizeof phase, "bounded %lld jobs", (long long)o->p.jobs);
	else
		snprintf(phase, sizeof phase, "measuring %.0f s", o->p.duration);
	fprintf(stderr, "%s%7.1f s  %-20s jobs done %12llu  %12.0f jobs/s%s", p->tty ? "\r" : "", el, phase,
		(unsigned long long)c.jobs_done, rate, p->tty ? "  " : "\n");
	fflush(stderr);
	p->last_t = now;
	p->last_jobs = c.jobs_done;
	p->next = now + 1000000000ull;
}

/* ---- reading the recordings back ---- */

struct collect {
	struct bench_result *r;
	size_t caprows, caplanes;
	bool oom;
};

static void grow(void **arr, size_t *cap, size_t need, size_t elem, bool *oom)
{
	if (need <= *cap)
		return;
	size_t nc = *cap ? *cap : 64;
	while (nc < need)
		nc *= 2;
	void *p = realloc(*arr, nc * elem);
	if (!p) {
		*oom = true;
		return;
	}
	*arr = p;
	*cap = nc;
}

static void visit(void *ctx, int worker, unsigned thread_id, const struct sb_rec *rec)
{
	struct collect *c = ctx;
	struct bench_result *r = c->r;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
		if (!rec->hist[k])
			continue;
		if (!r->hist[k] && !(r->hist[k] = calloc(1, sizeof *r->hist[k]))) {
			c->oom = true;
			continue;
		}
		sb_hist_merge(r->hist[k], rec->hist[k]);
		sb_hist_merge(&r->all, rec->hist[k]);
	}
	r->rows_dropped += rec->rows_dropped;
	if (rec->nrows) {
		grow((void **)&r->rows, &c->caprows, r->nrows + rec->nrows, sizeof *r->rows, &c->oom);
		if (c->caprows >= r->nrows + rec->nrows) {
			memcpy(r->rows + r->nrows, rec->rows, rec->nrows * sizeof *r->rows);
			r->nrows += rec->nrows;
		} else {
			r->rows_dropped += rec->nrows;
		}
	}
	r->ev_lost += rec->ev_dropped;
	if (rec->nev) {
		grow((void **)&r->lanes, &c->caplanes, r->nlanes + 1, sizeof *r->lanes, &c->oom);
		if (c->caplanes > r->nlanes) {
			r->lanes[r->nlanes++] = (struct bench_lane){ .worker = worker, .thread_id = thread_id, .ev = rec->ev,
								     .nev = rec->nev };
			r->ev_total += rec->nev;
		}
	}
}

static int row_order(const void *a, const void *b)
{
	const struct sb_jobrow *x = a, *y = b;
	if (x->t_submit != y->t_submit)
		return x->t_submit < y->t_submit ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

struct pstat_sink {
	struct bench_result *r;
	size_t cap;
};

static void pstat(void *ctx, const char *key, double v)
{
	struct pstat_sink *s = ctx;
	bool oom = false;
	grow((void **)&s->r->pstats, &s->cap, s->r->npstats + 1, sizeof *s->r->pstats, &oom);
	char *k = oom ? NULL : strdup(key);
	if (k)
		s->r->pstats[s->r->npstats++] = (struct bench_stat){ .key = k, .value = v };
}

static void reconcile(struct bench_result *r)
{
	const uint64_t *t = r->total_cnt;
	const struct wl_counts *w = &r->wl;
	/* workload.h: every job ends in exactly one teardown, and every task the workload made ran to
	 * an end (done/error) or was dropped; yields and blocks are extra runs of the same task */
	uint64_t ends = t[SB_C_RUN] + t[SB_C_DROPPED];
	uint64_t made = w->tasks_created + t[SB_C_YIELD] + t[SB_C_BLOCKED];
	r->recon_ok = w->jobs_done == w->jobs_submitted && w->jobs_submitted == t[SB_C_TEARDOWN] && made == ends;
	if (!r->recon_ok)
		snprintf(r->recon_text, sizeof r->recon_text,
			 "accounting does not add up: jobs submitted %llu, done %llu, teardowns %llu; tasks created %llu "
			 "vs run %llu - yields %llu - blocked %llu + dropped %llu",
			 (unsigned long long)w->jobs_submitted, (unsigned long long)w->jobs_done,
			 (unsigned long long)t[SB_C_TEARDOWN], (unsigned long long)w->tasks_created,
			 (unsigned long long)t[SB_C_RUN], (unsigned long long)t[SB_C_YIELD],
			 (unsigned long long)t[SB_C_BLOCKED], (unsigned long long)t[SB_C_DROPPED]);
}

static void result_free(struct bench_result *r)
{
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++)
		free(r->hist[k]);
	for (size_t i = 0; i < r->npstats; i++)
		free(r->pstats[i].key);
	free(r->pstats);
	free(r->worker_cnt);
	free(r->rows);
	free(r->lanes);
	free((char *)r->failure);
}

/* A runtime or workload that could not start, by its negative errno: a value the policy, core or
 * workload refused is bad input (2); anything else (out of memory, threads, the topology) is a
 * failed run (1). */
static int start_failure_status(int e)
{
	switch (-e) {
	case EINVAL:
	case ERANGE:
	case E2BIG:
	case EDOM:
	case ENOENT:
		return BENCH_EXIT_USAGE;
	default:
		return BENCH_EXIT_FAIL;
	}
}

/* ---- writing ---- */

static int write_files(const struct bench_opts *o, struct bench_result *r, const struct bench_host *h, char *err,
		       size_t errlen)
{
	/* trace first: summary.json reports how much of it was kept */
	static const struct {
		const char *name;
		bench_writer fn;
	} files[] = {
		{ "trace.json", trace_write }, { "jobs.csv.gz", bench_write_jobs }, { "workers.csv", bench_write_workers },
		{ "summary.json", bench_write_summary }, { "meta.json", bench_write_meta }, { "plot.gp", bench_write_plot },
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		if (files[i].fn == trace_write && !o->core.trace)
			continue;
		FILE *f = bench_out_open(files[i].name, err, errlen);
		if (!f)
			return -1;
		files[i].fn(f, o, r, h);
		if (bench_out_close(f, files[i].name, err, errlen) != 0)
			return -1;
	}
	return 0;
}

/* ---- the run ---- */

int bench_run(struct bench_opts *o)
{
	struct bench_result r;
	memset(&r, 0, sizeof r);
	char err[4096] = "";
	time_t wall = time(NULL);
	struct tm tm;
	gmtime_r(&wall, &tm);
	strftime(r.date, sizeof r.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	snprintf(r.run_id, sizeof r.run_id, "%s-%s-%s", stamp, o->policy->name, o->workload->name);
	while (r.nclasses < SB_MAX_CLASSES && o->workload->classes && o->workload->classes[r.nclasses])
		r.nclasses++;

	if (bench_signals_start(err, sizeof err) != 0) {
		bench_error("%s", err);
		return BENCH_EXIT_FAIL;
	}
	/* everything that forks (git) or may fail on bad input happens before any worker exists */
	struct bench_host host;
	bench_host_collect(&host);
	if (bench_out_prepare(o->out, r.run_id, sizeof r.run_id, err, sizeof err) != 0) {
		bench_error("%s", err);
		return BENCH_EXIT_USAGE;
	}

	r.t0 = sb_now_ns();
	struct sb_rt *rt;
	int e = sb_rt_create(&rt, &o->core, o->policy, o->pparams, err, sizeof err);
	if (e) {
		bench_out_abandon();
		bench_error("cannot start policy %s: %s", o->policy->name, err);
		return start_failure_status(e);
	}
	r.nworkers = sb_rt_nworkers(rt);
	/* after every check of the input: jogasaki's default of 5 workers stays the default, and on a
	 * smaller machine one line says what it means */
	if (!o->quiet && host.pus && (uint64_t)o->core.thread_count > host.pus && strcmp(o->executor, "sim") != 0)
		fprintf(stderr, "schedbed: note: %lld workers on %u hardware threads: the kernel time-slices them "
				"(--threads %u gives one per core)\n",
			(long long)o->core.thread_count, host.pus, host.pus);
	sb_rt_set_class_names(rt, o->workload->classes);
	/* trace.json keeps the earliest trace_limit events of the window; no thread needs more */
	sb_rt_set_trace_cap(rt, (size_t)o->p.trace_limit);
	sb_rt_set_window(rt, UINT64_MAX, UINT64_MAX); /* nothing recorded during warm-up */

	_Atomic bool stop = false;
	struct wl_env env = { .rt = rt, .seed = (uint64_t)o->p.seed, .jobs = o->p.jobs, .stop = &stop };
	void *wst = NULL;
	uint64_t start = sb_now_ns();
	uint64_t warm_end = start + (uint64_t)(o->p.warmup * 1e9);
	uint64_t deadline = o->p.jobs ? UINT64_MAX : warm_end + (uint64_t)(o->p.duration * 1e9);
	struct window win = { .open = false };
	/* without a warm-up the window opens before the first job, or a bounded run would miss the
	 * jobs its clients submit at once */
	if (o->p.warmup == 0)
		window_open(rt, &r, &win, start);
	if ((e = o->workload->start(&env, o->wparams, &wst, err, sizeof err)) != 0) {
		atomic_store(&stop, true);
		sb_rt_destroy(rt);
		bench_out_abandon();
		bench_error("cannot start workload %s: %s", o->workload->name, err);
		return start_failure_status(e);
	}
	struct progress pg = { .on = !o->quiet, .tty = isatty(STDERR_FILENO), .next = start + 1000000000ull,
			       .last_t = start };
	for (;;) {
		uint64_t now = sb_now_ns();
		if (!win.open && now >= warm_end)
			window_open(rt, &r, &win, now);
		if (sb_rt_failure(rt) || now >= deadline || (o->p.jobs && o->workload->done(wst)))
			break;
		progress(&pg, o, wst, start, now, win.open);
		sleep_ms(o->p.jobs ? 2 : 10);
	}
	r.win_end = sb_now_ns();
	if (!win.open) /* stopped before the warm-up ended (a failure, or a quicker bounded run) */
		window_open(rt, &r, &win, r.win_end);
	sb_rt_set_window(rt, r.win_start, r.win_end);
	counters_now(rt, r.window_cnt);
	struct bench_cpu cpu1 = cpu_now();
	for (unsigned c = 0; c < SB_NR_COUNTERS; c++)
		r.window_cnt[c] -= win.cnt0[c];
	/* rusage counts whole microseconds: difference them as such, so 0.056174 s does not print as
	 * 0.056173999999999995 */
	r.cpu_window = (struct bench_cpu){ round((cpu1.user_s - win.cpu0.user_s) * 1e6) / 1e6,
					   round((cpu1.sys_s - win.cpu0.sys_s) * 1e6) / 1e6, cpu1.maxrss_kib };
	r.window_s = (double)(r.win_end - r.win_start) / 1e9;
	if (pg.on && pg.tty)
		fputc('\n', stderr);

	atomic_store(&stop, true);
	struct drain dr;
	drain_start(&dr, rt, o->p.drain);
	o->workload->stop(wst);
	drain_end(&dr);
	sb_rt_stop(rt, SB_STOP_DRAIN);
	r.stop_s = (double)(sb_now_ns() - r.win_end) / 1e9;
	r.cpu_total = cpu_now();
	o->workload->counts(wst, &r.wl);

	const char *fail = sb_rt_failure(rt);
	r.failure = fail ? strdup(fail) : NULL;
	r.worker_cnt = calloc(r.nworkers ? r.nworkers : 1, sizeof *r.worker_cnt);
	struct collect col = { .r = &r };
	if (!r.worker_cnt)
		col.oom = true;
	for (unsigned i = 0; r.worker_cnt && i < r.nworkers; i++)
		sb_rt_worker_counters(rt, i, r.worker_cnt[i]);
	sb_rt_other_counters(rt, r.other_cnt);
	counters_now(rt, r.total_cnt);
	r.unfinished = r.total_cnt[SB_C_UNFINISHED];
	reconcile(&r);
	sb_rt_visit_recordings(rt, visit, &col);
	struct pstat_sink ps = { .r = &r };
	sb_rt_policy_stats(rt, pstat, &ps);
	qsort(r.rows, r.nrows, sizeof *r.rows, row_order);

	int rc = BENCH_EXIT_OK;
	if (col.oom || bench_percentiles(&r) != 0) {
		bench_out_abandon();
		bench_error("out of memory while reading the recordings back");
		rc = BENCH_EXIT_FAIL;
	} else if (write_files(o, &r, &host, err, sizeof err) != 0 || bench_out_publish(err, sizeof err) != 0) {
		bench_out_abandon();
		bench_error("%s", err);
		rc = BENCH_EXIT_FAIL;
	} else {
		bench_print_table(stdout, o, &r);
		printf("results: %s\n", bench_out_final());
		fflush(stdout);
		if (r.failure) {
			/* the core has printed the whole report; one line here says what it means */
			bench_error("run failed: %.*s (the full text is in summary.json)", (int)strcspn(r.failure, "\n"),
				    r.failure);
			rc = BENCH_EXIT_FAIL;
		} else if (!r.recon_ok) {
			bench_error("run failed: %s", r.recon_text);
			rc = BENCH_EXIT_FAIL;
		} else if (r.wl.results_wrong) {
			bench_error("run failed: %llu wrong results; the first: %s", (unsigned long long)r.wl.results_wrong,
				    r.wl.wrong_text);
			rc = BENCH_EXIT_FAIL;
		} else if (r.unfinished) {
			bench_error("run overloaded: %llu jobs still pending %g s after the window were cancelled "
				    "(counted as unfinished in summary.json)", (unsigned long long)r.unfinished, o->p.drain);
			rc = BENCH_EXIT_OVERLOADED;
		}
	}
	o->workload->destroy(wst);
	sb_rt_destroy(rt);
	result_free(&r);
	return rc;
}
