/*
 * bench.h - what the files of the `schedbed` program share: the parsed options of a run, the
 * numbers a run produces, and the functions that write them.
 *
 * The harness owns the command line, the run loop (warm-up, measurement window, progress, stop)
 * and every output file. It does not own scheduling, workloads or measurement: it picks a policy
 * and a workload from their registries, drives them through core/sb.h and workloads/workload.h,
 * and reads what the core recorded through core/stats.h. Nothing here names a policy or a
 * workload.
 *
 * Prefixes: bench_ for the CLI, the run loop and the result files; trace_ for trace.json.
 */
#ifndef SB_HARNESS_BENCH_H
#define SB_HARNESS_BENCH_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/param.h"
#include "../core/policy.h"
#include "../core/sb.h"
#include "../core/stats.h"
#include "../workloads/workload.h"

/* Exit statuses: bad input is 2 (and nothing ran), a failed run is 1, an overloaded run is 3
 * (its results are written): pending jobs outlasted a drain time and were cancelled, or the
 * open-loop clients fell behind their arrivals by more than --max-lag. */
enum { BENCH_EXIT_OK = 0, BENCH_EXIT_FAIL = 1, BENCH_EXIT_USAGE = 2, BENCH_EXIT_OVERLOADED = 3,
       BENCH_EXIT_INTERRUPTED = 130 };

/* Options of `run` that belong to the harness, as a parameter table so that parsing, ranges,
 * error messages and meta.json come from core/param.h like every other parameter. */
struct bench_params {
	double duration;     /* s, timed runs */
	double warmup;       /* s before the measurement window opens */
	int64_t jobs;        /* bounded run: total jobs; 0 = timed */
	int64_t seed;
	int64_t trace_limit; /* most task events written to trace.json */
	double drain;        /* s pending jobs may take after the window before they are cancelled */
	double max_lag;      /* s open-loop clients may fall behind their arrivals before the run is overloaded */
	int64_t rows;        /* most jobs of the window written as rows (jobs.csv.gz); past it, none */
	int64_t sim_cores;   /* --executor sim: the simulated machine's cores, shared; 0 = one per thread */
};
extern const struct sb_param bench_param_table[];

struct bench_opts {
	const struct sb_policy_ops *policy;
	const struct sb_workload *workload;
	struct sb_config core;
	void *pparams;            /* the policy's parameter block (NULL when it has none) */
	void *wparams;            /* the workload's */
	struct bench_params p;
	bool duration_set, warmup_set, jobs_set;
	const char *out;          /* --out, or NULL for results/<run-id> */
	bool quiet;
	const char *executor;     /* "native" or "sim" */
	const char *sim_costs;    /* --sim-costs, else sim/costs-<machine>.txt (main.c picks it) */
	bool dry_run;             /* --dry-run: everything is checked, nothing runs */
	int argc;
	char **argv;              /* the whole command line, for meta.json */
};

/* cli.c: parse `schedbed run ...` (argv[0] is "run"). Returns 0, or prints one line and returns
 * BENCH_EXIT_USAGE; --help prints the usage and returns -1 (caller exits 0). */
int bench_parse_run(int argc, char **argv, struct bench_opts *o);
void bench_opts_free(struct bench_opts *o);
void bench_usage_run(FILE *f);
/* Print one line "schedbed: <msg>" to stderr. */
void bench_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- what a run produced (run.c fills it, report.c and trace.c write it) ---- */

struct bench_stat {
	char *key;
	double value;
};

struct bench_lane {
	int worker;               /* -1 for request threads and the watcher */
	unsigned thread_id;
	const struct sb_tev *ev;  /* the core's recording, valid until sb_rt_destroy */
	size_t nev;
};

struct bench_cpu {
	double user_s, sys_s;
	long maxrss_kib; /* peak resident set so far */
	/* times so far the workers and the request threads lost their CPU while runnable (natively
	 * their involuntary context switches; simulated, sb_sim_preemptions); a thread that has
	 * ended no longer counts, so only the window's difference is reported */
	uint64_t preempted_workers, preempted_clients;
};
#define BENCH_UNKNOWN UINT64_MAX /* a count that could not be taken (summary.json: null) */

/* The latency percentiles every output reports: p50, p90, p99, p99.9 and the maximum. */
#define BENCH_NQ 5
extern const double bench_quantiles[BENCH_NQ];
extern const char *const bench_quantile_keys[BENCH_NQ]; /* summary.json: "p50", ..., "max" */

struct bench_result {
	char run_id[160];
	char date[32];            /* UTC, ISO 8601 */
	uint64_t t0;              /* run start (sb_now_ns); every time in the files is relative to it */
	uint64_t win_start, win_end;
	double window_s;
	unsigned nworkers;
	unsigned nclasses;        /* of the workload's class list */

	struct sb_hist *hist[SB_MAX_CLASSES]; /* merged over threads; NULL when the class never ran */
	struct sb_hist all;
	/* Latency percentiles, ns, at bench_quantiles[] (bench_percentiles fills them), per class and
	 * over all classes. pct_exact: nearest rank over every job's latency; false only when job
	 * rows were capped, and then the histogram's bucket bounds (up to ~3% high). */
	uint64_t pct[SB_MAX_CLASSES][BENCH_NQ], pct_all[BENCH_NQ];
	bool pct_exact;

	uint64_t (*worker_cnt)[SB_NR_COUNTERS];
	uint64_t other_cnt[SB_NR_COUNTERS];
	uint64_t total_cnt[SB_NR_COUNTERS];
	uint64_t window_cnt[SB_NR_COUNTERS]; /* total counters over the window (relaxed snapshots) */
	struct bench_cpu cpu_window, cpu_total;

	struct bench_stat *pstats;
	size_t npstats;

	struct wl_counts wl;
	bool recon_ok;
	char recon_text[512];     /* what did not add up, when !recon_ok */
	const char *failure;      /* sb_rt_failure(), or NULL */
	uint64_t unfinished;      /* jobs cancelled when the drain time ran out */
	double stop_s;            /* window end -> every worker stopped: the drain, cancels and the runtime's stop */
	double arrivals_s;        /* the workload's start -> the window's end: the span open-loop arrivals are counted over */
	char overload[320];       /* why the run is overloaded (exit 3), "" when it is not */

	struct sb_jobrow *rows;
	size_t nrows, rows_dropped;
	struct bench_hist *lat;   /* the rows in log buckets per class and status (hist.c) */

	struct bench_lane *lanes;
	size_t nlanes;
	size_t ev_lost;           /* events the core could not record */
	size_t ev_written, ev_total;
	bool ev_limited;          /* trace.json stopped at --trace-limit */
};

/* run.c */
int bench_run(struct bench_opts *o);
/* report.c: fill r->pct from r->rows (or from the histograms when rows were capped). */
int bench_percentiles(struct bench_result *r);
/* report.c: the workload's name for class i (or "class<i>" past its list), in a static buffer
 * for the latter. */
const char *bench_class_name(const struct sb_workload *w, unsigned i);
/* hist.c: the histograms of latency-hist.json.gz from r->rows (NULL: out of memory), and the
 * data blocks plot.gp draws from when there are no rows. */
struct bench_hist *bench_hist_build(const struct bench_result *r);
void bench_hist_free(struct bench_hist *hs);
void bench_write_hist_blocks(FILE *f, const struct bench_result *r);
/* report.c: whether jobs.csv.gz is written (the window's jobs are within --rows). */
bool bench_rows_written(const struct bench_opts *o, const struct bench_result *r);

/* outdir.c: the result directory is built under a temporary name beside its final place and
 * renamed into place only when complete; an interrupt or a failure before that removes it. */
/* Take SIGINT, SIGTERM and SIGHUP on one dedicated thread from now on: call before any other
 * thread starts. An interrupt removes whatever the run has not published and exits 130. */
int bench_signals_start(char *err, size_t errlen);
/* Choose and create the place (results/<run_id>, or --out); run_id may get a "-N" suffix. */
int bench_out_prepare(const char *out_opt, char *run_id, size_t idlen, char *err, size_t errlen);
/* Open a result file (meta.json, summary.json, jobs.csv.gz, workers.csv, trace.json, plot.gp)
 * in the temporary directory; a name ending in .gz is gzip-compressed as it is written. */
FILE *bench_out_open(const char *name, char *err, size_t errlen);
/* Close a file opened above, reporting write errors (disk full) in err. */
int bench_out_close(FILE *f, const char *name, char *err, size_t errlen);
int bench_out_publish(char *err, size_t errlen);
void bench_out_abandon(void);
const char *bench_out_final(void);

/* json.c: the few JSON pieces the writers need (numbers alone: sb_json_double). */
/* `prefix` verbatim (separator and key), then s as a JSON string. */
void bench_json_kv(FILE *f, const char *prefix, const char *s);
/* The same for a number. */
void bench_json_kn(FILE *f, const char *prefix, double v);

/* meta.c: what the run was and where it ran, gathered before any thread starts */
struct bench_host {
	char git_sha[64];
	int git_dirty;            /* 1, 0, or -1 when unknown */
	char host[256];
	char cpu_model[256];
	char cpu_id[32];          /* "family.model.stepping" (cpuid leaf 1), "" where there is none */
	char kernel[128];         /* the OS release (uname -r) */
	char topology[1024];      /* hwloc synthetic description, "" when not expressible */
	unsigned packages, cores, pus;
	char machine[96];         /* short stable name from cpu_model and pus: names sim/costs-<machine>.txt */
};
void bench_host_collect(struct bench_host *h);
/* Only the hardware facts (CPU model, counts, machine name): what picks the simulator's cost table. */
void bench_host_topology(struct bench_host *h);

/* The result files' writers share one shape, so the run writes them from one table. The trace
 * writer records in r how much of the trace it kept. */
typedef void (*bench_writer)(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h);
void bench_write_meta(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h);
void bench_write_summary(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h);
void bench_write_jobs(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h);
void bench_write_workers(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h);
void bench_write_hist(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h);
/* outputs.c: `schedbed outputs`, the reference for every file, column and key a run writes. */
void bench_usage_outputs(FILE *f);
void bench_write_plot(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h);
void trace_write(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h);

/* report.c */
void bench_print_table(FILE *f, const struct bench_opts *o, const struct bench_result *r);

#endif
