/*
 * run.c - one run: runtime and workload up, warm-up, measurement window, progress, stop, read
 * everything back, write the result files, print the summary.
 *
 * Owns the order of a run and the measurement window: jobs are recorded by the core only when
 * submitted inside [window start, window end), which opens when the warm-up ends and closes
 * when the run is told to stop (or a bounded run is done), so jobs still in flight at the end
 * count, and jobs submitted while stopping do not. After the window, jobs still pending get the
 * drain time (--drain) to finish; what is left then is cancelled and counted as unfinished, and
 * the run exits BENCH_EXIT_OVERLOADED, unless the drain time was 0: a requested shutdown. An
 * open-loop run whose clients fell behind their arrivals by more than --max-lag is overloaded
 * too. Counters are cumulative over the whole run (the accounting reconciles them); window
 * rates come from relaxed snapshots at both ends. bench_run reads as its phases: prepare,
 * start, measure, close the window, stop, read back, publish.
 * Does not own the files' formats (report.c, meta.c, trace.c) or the directory (outdir.c).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

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

/* The kernel's involuntary context switches of this process's workers and request threads
 * (core/runtime.c and workloads/clients.c name them worker-N and client-N): how often the OS
 * took a runnable one's CPU for another thread. Linux only; elsewhere nothing is counted. */
static void preemptions_native(uint64_t *workers, uint64_t *clients)
{
	*workers = *clients = 0;
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[300], line[128], comm[32] = "";
		uint64_t *into = NULL;
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue; /* "." and "..", or a thread that just ended */
		if (fgets(comm, sizeof comm, f))
			into = !strncmp(comm, "worker-", 7) ? workers : !strncmp(comm, "client-", 7) ? clients : NULL;
		fclose(f);
		snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
		if (!into || !(f = fopen(path, "r")))
			continue;
		unsigned long long n;
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &n) == 1)
				*into += n;
		fclose(f);
	}
	closedir(d);
}

/* The process's CPU time and peak memory, and the preemption counts: CPU_OPEN reads the
 * counts before the CPU time and CPU_CLOSE after it, so that the /proc reads (some 12 ms of the
 * harness's CPU with 256 request threads) fall outside the window either way; CPU_ONLY skips
 * them (the run's end, when the threads are gone). */
enum cpu_when { CPU_OPEN, CPU_CLOSE, CPU_ONLY };

static struct bench_cpu cpu_now(enum cpu_when when)
{
	struct bench_cpu c = { 0 };
	/* simulated: the actors' CPU time, and no resident set (the simulator's is no result) */
	if (sb_exec_virtual()) {
		c.user_s = (double)sb_sim_cpu_ns() / 1e9;
		sb_sim_preemptions(&c.preempted_workers, &c.preempted_clients);
		return c;
	}
	if (when == CPU_OPEN)
		preemptions_native(&c.preempted_workers, &c.preempted_clients);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	c.user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	c.sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	c.maxrss_kib = ru.ru_maxrss;
	if (when == CPU_CLOSE)
		preemptions_native(&c.preempted_workers, &c.preempted_clients);
	return c;
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
	w->cpu0 = cpu_now(CPU_OPEN);
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

/* One line a second of wall time. Under --executor sim a simulated second may take minutes (or
 * a millisecond): the pace is the wall clock's, and the line says how much simulated time has
 * been reached. */
struct progress {
	bool on, tty;
	uint64_t next_wall, last_t;
	uint64_t last_jobs;
};

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void progress(struct progress *p, const struct bench_opts *o, void *wst, uint64_t start, uint64_t now,
		     bool measuring)
{
	uint64_t wall = wall_ns();
	if (!p->on || wall < p->next_wall)
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
		snprintf(phase, sizeof phase, "measuring %g s", o->p.duration);
	fprintf(stderr, "%s%7.*f s%s  %-20s jobs done %12llu  %12.0f jobs/s%s", p->tty ? "\r" : "",
		sb_exec_virtual() ? 3 : 1, el, sb_exec_virtual() ? " simulated" : "", phase,
		(unsigned long long)c.jobs_done, rate, p->tty ? "  " : "\n");
	fflush(stderr);
	p->last_t = now;
	p->last_jobs = c.jobs_done;
	p->next_wall = wall + 1000000000ull;
}

/* After the window: one line per step until the table, each with the seconds since the window
 * closed (reading back and writing millions of jobs takes a while). */
static void step(const struct bench_opts *o, uint64_t since_wall, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void step(const struct bench_opts *o, uint64_t since_wall, const char *fmt, ...)
{
	if (o->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "  +%.1f s  ", (double)(wall_ns() - since_wall) / 1e9);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fflush(stderr);
	va_end(ap);
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
	bench_hist_free(r->lat);
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
		{ "trace.json", trace_write }, { "jobs.csv.gz", bench_write_jobs },
		{ "latency-hist.json.gz", bench_write_hist }, { "workers.csv", bench_write_workers },
		{ "summary.json", bench_write_summary }, { "meta.json", bench_write_meta }, { "plot.gp", bench_write_plot },
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		if ((files[i].fn == trace_write && !o->core.trace) || (files[i].fn == bench_write_jobs && !bench_rows_written(o, r)))
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

/* ---- the run, phase by phase ---- */

struct run {
	struct bench_opts *o;
	struct bench_result r;
	struct bench_host host;
	struct sb_rt *rt;
	void *wst;
	_Atomic bool stop;
	_Atomic uint64_t stop_ns;
	struct wl_env env;
	struct window win;
	uint64_t start;       /* the workload's start (sb_now_ns) */
	uint64_t closed_wall; /* the window's end, wall clock (the steps after it) */
	char err[4096];
};

/* The run's name, the signal thread, the machine and the result directory: everything that
 * forks (git) or may fail on bad input happens before any worker exists. */
static int run_prepare(struct run *x)
{
	struct bench_result *r = &x->r;
	time_t wall = time(NULL);
	struct tm tm;
	gmtime_r(&wall, &tm);
	strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	snprintf(r->run_id, sizeof r->run_id, "%s-%s-%s", stamp, x->o->policy->name, x->o->workload->name);
	while (r->nclasses < SB_MAX_CLASSES && x->o->workload->classes && x->o->workload->classes[r->nclasses])
		r->nclasses++;
	if (bench_signals_start(x->err, sizeof x->err) != 0) {
		bench_error("%s", x->err);
		return BENCH_EXIT_FAIL;
	}
	bench_host_collect(&x->host);
	if (bench_out_prepare(x->o->out, r->run_id, sizeof r->run_id, x->err, sizeof x->err) != 0) {
		bench_error("%s", x->err);
		return BENCH_EXIT_USAGE;
	}
	return 0;
}

/* The runtime, then the workload's clients. */
static int run_start(struct run *x)
{
	struct bench_opts *o = x->o;
	x->r.t0 = sb_now_ns();
	int e = sb_rt_create(&x->rt, &o->core, o->policy, o->pparams, x->err, sizeof x->err);
	if (e) {
		bench_out_abandon();
		bench_error("cannot start policy %s: %s", o->policy->name, x->err);
		return start_failure_status(e);
	}
	x->r.nworkers = sb_rt_nworkers(x->rt);
	/* after every check of the input: jogasaki's default of 5 workers stays the default, and on a
	 * smaller machine one line says what it means (simulated workers have a core each) */
	if (!o->quiet && !sb_exec_virtual() && x->host.pus && (uint64_t)o->core.thread_count > x->host.pus)
		fprintf(stderr, "schedbed: note: %lld workers on %u hardware threads: the kernel time-slices them "
				"(--threads %u gives one per core)\n",
			(long long)o->core.thread_count, x->host.pus, x->host.pus);
	sb_rt_set_class_names(x->rt, o->workload->classes);
	/* trace.json keeps the earliest trace_limit events of the window; no thread needs more */
	sb_rt_set_trace_cap(x->rt, (size_t)o->p.trace_limit);
	sb_rt_set_window(x->rt, UINT64_MAX, UINT64_MAX); /* nothing recorded during warm-up */

	x->start = sb_now_ns();
	x->env = (struct wl_env){ .rt = x->rt, .seed = (uint64_t)o->p.seed, .jobs = o->p.jobs, .stop = &x->stop,
				  .stop_ns = &x->stop_ns, .start_ns = x->start };
	/* without a warm-up the window opens before the first job, or a bounded run would miss the
	 * jobs its clients submit at once */
	if (o->p.warmup == 0)
		window_open(x->rt, &x->r, &x->win, x->start);
	if ((e = o->workload->start(&x->env, o->wparams, &x->wst, x->err, sizeof x->err)) != 0) {
		atomic_store(&x->stop, true);
		sb_rt_destroy(x->rt);
		bench_out_abandon();
		bench_error("cannot start workload %s: %s", o->workload->name, x->err);
		return start_failure_status(e);
	}
	return 0;
}

/* Warm-up and the window, until the duration is up, a bounded run is done or the run failed. */
static void run_measure(struct run *x)
{
	struct bench_opts *o = x->o;
	uint64_t warm_end = x->start + (uint64_t)(o->p.warmup * 1e9);
	uint64_t deadline = o->p.jobs ? UINT64_MAX : warm_end + (uint64_t)(o->p.duration * 1e9);
	struct progress pg = { .on = !o->quiet, .tty = isatty(STDERR_FILENO), .next_wall = wall_ns() + 1000000000ull,
			       .last_t = x->start };
	for (;;) {
		uint64_t now = sb_now_ns();
		if (!x->win.open && now >= warm_end)
			window_open(x->rt, &x->r, &x->win, now);
		if (sb_rt_failure(x->rt) || now >= deadline || (o->p.jobs && o->workload->done(x->wst)))
			break;
		progress(&pg, o, x->wst, x->start, now, x->win.open);
		sleep_ms(o->p.jobs ? 2 : 10);
	}
	if (pg.on && pg.tty)
		fputc('\n', stderr);
}

/* A count's growth over the window; BENCH_UNKNOWN when it fell (a thread counted at the start
 * had ended by the close, taking its count with it). */
static uint64_t since(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : BENCH_UNKNOWN;
}

/* Close the window: its counters and CPU time. */
static void window_close(struct run *x)
{
	struct bench_result *r = &x->r;
	r->win_end = sb_now_ns();
	x->closed_wall = wall_ns();
	if (!x->win.open) /* stopped before the warm-up ended (a failure, or a quicker bounded run) */
		window_open(x->rt, r, &x->win, r->win_end);
	sb_rt_set_window(x->rt, r->win_start, r->win_end);
	counters_now(x->rt, r->window_cnt);
	struct bench_cpu cpu1 = cpu_now(CPU_CLOSE);
	for (unsigned c = 0; c < SB_NR_COUNTERS; c++)
		r->window_cnt[c] -= x->win.cnt0[c];
	/* rusage counts whole microseconds: difference them as such, so 0.056174 s does not print as
	 * 0.056173999999999995 */
	r->cpu_window = (struct bench_cpu){ round((cpu1.user_s - x->win.cpu0.user_s) * 1e6) / 1e6,
					    round((cpu1.sys_s - x->win.cpu0.sys_s) * 1e6) / 1e6, cpu1.maxrss_kib,
					    since(cpu1.preempted_workers, x->win.cpu0.preempted_workers),
					    since(cpu1.preempted_clients, x->win.cpu0.preempted_clients) };
	r->window_s = (double)(r->win_end - r->win_start) / 1e9;
}

/* Tell the workload to stop, give pending jobs the drain time, stop the runtime. */
static void run_stop(struct run *x)
{
	struct bench_opts *o = x->o;
	struct bench_result *r = &x->r;
	struct wl_counts now;
	o->workload->counts(x->wst, &now);
	step(o, x->closed_wall, "window closed; stopping with %llu jobs in flight (--drain %g s)",
	     (unsigned long long)(now.jobs_submitted - now.jobs_done), o->p.drain);
	/* relaxed: published by the seq_cst store of stop below, which open-loop clients read with
	 * acquire before they read this (wl_arrivals_end) */
	atomic_store_explicit(&x->stop_ns, r->win_end, memory_order_relaxed);
	atomic_store(&x->stop, true);
	struct drain dr;
	drain_start(&dr, x->rt, o->p.drain);
	o->workload->stop(x->wst);
	drain_end(&dr);
	sb_rt_stop(x->rt, SB_STOP_DRAIN);
	r->stop_s = (double)(sb_now_ns() - r->win_end) / 1e9;
	r->cpu_total = cpu_now(CPU_ONLY);
	o->workload->counts(x->wst, &r->wl);
	r->arrivals_s = (double)(r->win_end - x->start) / 1e9;
}

/* Everything the core recorded, merged; false when out of memory. */
static bool read_back(struct run *x)
{
	struct bench_result *r = &x->r;
	step(x->o, x->closed_wall, "stopped; reading back the recordings");
	const char *fail = sb_rt_failure(x->rt);
	r->failure = fail ? strdup(fail) : NULL;
	r->worker_cnt = calloc(r->nworkers ? r->nworkers : 1, sizeof *r->worker_cnt);
	struct collect col = { .r = r };
	if (!r->worker_cnt)
		col.oom = true;
	for (unsigned i = 0; r->worker_cnt && i < r->nworkers; i++)
		sb_rt_worker_counters(x->rt, i, r->worker_cnt[i]);
	sb_rt_other_counters(x->rt, r->other_cnt);
	counters_now(x->rt, r->total_cnt);
	r->unfinished = r->total_cnt[SB_C_UNFINISHED];
	reconcile(r);
	sb_rt_visit_recordings(x->rt, visit, &col);
	struct pstat_sink ps = { .r = r };
	sb_rt_policy_stats(x->rt, pstat, &ps);
	step(x->o, x->closed_wall, "sorting %zu job rows and computing percentiles", r->nrows);
	qsort(r->rows, r->nrows, sizeof *r->rows, row_order);
	return !col.oom && bench_percentiles(r) == 0 && (r->lat = bench_hist_build(r)) != NULL;
}

/* Overloaded: the clients fell behind their arrivals by more than --max-lag, or jobs still
 * pending after a drain time were cancelled. Jobs cancelled by --drain 0 are a requested
 * shutdown, not an overload. Fills r->overload with the reason ("" when none). */
static void judge_overload(const struct bench_opts *o, struct bench_result *r)
{
	r->overload[0] = 0;
	const struct wl_counts *w = &r->wl;
	if (w->arrival_classes && (double)w->lag_max_ns > o->p.max_lag * 1e9) {
		uint64_t off = 0, un = 0;
		for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
			off += w->arrivals[k].offered;
			un += w->arrivals[k].unissued;
		}
		snprintf(r->overload, sizeof r->overload,
			 "the clients fell behind their arrivals by up to %.3g s (--max-lag %g s); %llu of %llu offered "
			 "arrivals (%.1f%%) were never issued",
			 (double)w->lag_max_ns / 1e9, o->p.max_lag, (unsigned long long)un, (unsigned long long)off,
			 off ? 100.0 * (double)un / (double)off : 0.0);
	} else if (r->unfinished && o->p.drain > 0) {
		snprintf(r->overload, sizeof r->overload,
			 "%llu jobs still pending %g s after the window were cancelled (counted as unfinished in "
			 "summary.json)", (unsigned long long)r->unfinished, o->p.drain);
	}
}

/* The files, the table, and the exit status. */
static int run_publish(struct run *x)
{
	struct bench_opts *o = x->o;
	struct bench_result *r = &x->r;
	judge_overload(o, r);
	if (bench_rows_written(o, r))
		step(o, x->closed_wall, "writing the result files (jobs.csv.gz: %zu rows)", r->nrows);
	else
		step(o, x->closed_wall, "writing the result files: %zu jobs, over --rows %lld: latency-hist.json.gz "
		     "only, no jobs.csv.gz", r->nrows, (long long)o->p.rows);
	if (write_files(o, r, &x->host, x->err, sizeof x->err) != 0 || bench_out_publish(x->err, sizeof x->err) != 0) {
		bench_out_abandon();
		bench_error("%s", x->err);
		return BENCH_EXIT_FAIL;
	}
	bench_print_table(stdout, o, r);
	printf("results: %s\n", bench_out_final());
	fflush(stdout);
	if (r->failure) {
		/* the core has printed the whole report; one line here says what it means */
		bench_error("run failed: %.*s (the full text is in summary.json)", (int)strcspn(r->failure, "\n"),
			    r->failure);
		return BENCH_EXIT_FAIL;
	}
	if (!r->recon_ok) {
		bench_error("run failed: %s", r->recon_text);
		return BENCH_EXIT_FAIL;
	}
	if (r->wl.results_wrong) {
		bench_error("run failed: %llu wrong results; the first: %s", (unsigned long long)r->wl.results_wrong,
			    r->wl.wrong_text);
		return BENCH_EXIT_FAIL;
	}
	if (r->overload[0]) {
		bench_error("run overloaded: %s", r->overload);
		return BENCH_EXIT_OVERLOADED;
	}
	return BENCH_EXIT_OK;
}

int bench_run(struct bench_opts *o)
{
	struct run *x = calloc(1, sizeof *x);
	if (!x) {
		bench_error("out of memory");
		return BENCH_EXIT_FAIL;
	}
	x->o = o;
	int rc = run_prepare(x);
	if (!rc)
		rc = run_start(x);
	if (rc) {
		free(x);
		return rc;
	}
	run_measure(x);
	window_close(x);
	run_stop(x);
	if (!read_back(x)) {
		bench_out_abandon();
		bench_error("out of memory while reading the recordings back");
		rc = BENCH_EXIT_FAIL;
	} else {
		rc = run_publish(x);
	}
	o->workload->destroy(x->wst);
	sb_rt_destroy(x->rt);
	result_free(&x->r);
	free(x);
	return rc;
}
