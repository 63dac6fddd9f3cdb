/*
 * stats.h - what a run records and how the harness reads it: per-thread counters, log-linear
 * latency histograms per job class, one row per recorded job, and trace events.
 *
 * Everything is recorded by the thread it happens on, into that thread's own buffers, without
 * locks or shared atomics; the harness merges after the run (or reads counters relaxed while it
 * runs, for progress). Histograms are log-linear: exact below 64 ns, then 32 sub-buckets per
 * power of two (relative error under 3.2%).
 */
#ifndef SB_STATS_H
#define SB_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sb.h"

enum sb_counter {
	SB_C_RUN,          /* tasks run (all kinds, not counting dropped ones) */
	SB_C_STICKY,       /* of which sticky */
	SB_C_STOLEN,       /* of which obtained by a steal sweep */
	SB_C_SPAWN,        /* tasks submitted from this thread */
	SB_C_TO_CALLER,    /* of which the policy handed back to this thread (SB_TO_CALLER) */
	SB_C_YIELD,        /* bodies that returned SB_YIELD */
	SB_C_BLOCKED,      /* bodies that returned SB_BLOCKED */
	SB_C_ERROR,        /* bodies that returned SB_ERROR */
	SB_C_DROPPED,      /* tasks of cancelled jobs dropped unrun */
	SB_C_COND_CHECK,   /* conditional checks evaluated */
	SB_C_COND_FALSE,   /* ... that said "not yet" */
	SB_C_STEAL_SWEEP,  /* steal sweeps */
	SB_C_SUSPEND,      /* suspensions */
	SB_C_WOKEN,        /* suspensions ended by a wake-up (not the timeout) */
	SB_C_WAKEUP_RUN,   /* tasks run first after a suspension (jogasaki's wakeup_run) */
	SB_C_WAKES_SENT,   /* futex wake-ups this thread issued */
	SB_C_TEARDOWN,     /* teardowns run */
	SB_C_UNFINISHED,   /* of which jobs ended by sb_rt_cancel (a drain that ran out) */
	SB_C_JOBS_SUBMITTED,
	SB_C_PREEMPT_REQ,  /* yield requests from the monitor (counted on the worker) */
	SB_C_BUSY_NS,      /* worker: time running or looking for tasks it then found */
	SB_C_IDLE_NS,      /* worker: time finding nothing, awake */
	SB_C_SUSPEND_NS,   /* worker: time suspended */
	SB_C_WAKE_NS,      /* worker: from a waker's claim to the end of its sleep, summed over SB_C_WOKEN */
	SB_C_SWEEP_NS,     /* worker: time inside steal sweeps */
	SB_C_LOCK_WAITS,   /* the core's shared locks (task depot, queue segments) found taken */
	SB_C_LOCK_NS,      /* ... and the time spent waiting for them */
	SB_C_IDLE_YIELD,   /* worker: CPU given away between idle rounds on the policy's word (sb_idle.yield) */
	SB_C_SPIN_YIELD,   /* worker: CPU given away while spinning before a suspension (worker_spin_yield) */
	SB_C_JOB_WAIT,     /* parks waiting for a job to end (sb_job_wait: request threads) */
	SB_C_JOB_WAKE,     /* wake-ups of those, sent by the thread that ended the job */
	SB_NR_COUNTERS
};

extern const char *const sb_counter_names[SB_NR_COUNTERS];
extern const char *const sb_counter_help[SB_NR_COUNTERS];

#define SB_HIST_SUB_BITS 5
#define SB_HIST_LINEAR 64
#define SB_HIST_BUCKETS (SB_HIST_LINEAR + (64 - 6) * (1 << SB_HIST_SUB_BITS))

struct sb_hist {
	uint64_t count, sum, min, max;
	uint64_t b[SB_HIST_BUCKETS];
};

void sb_hist_record(struct sb_hist *h, uint64_t v);
void sb_hist_merge(struct sb_hist *into, const struct sb_hist *from);
/* Value at quantile q (0..1): the upper bound of the bucket that holds it (max for q = 1). */
uint64_t sb_hist_quantile(const struct sb_hist *h, double q);
unsigned sb_hist_bucket(uint64_t v);
uint64_t sb_hist_bucket_high(unsigned b);

/* One recorded job (jobs.csv). */
struct sb_jobrow {
	uint64_t id;
	uint64_t t_arrival, t_submit, t_start, t_end;
	int32_t work_level;
	int16_t end_thread;
	uint8_t cls;
	uint8_t status;
};

enum sb_trace_kind { SB_EV_TASK, SB_EV_WAKE, SB_EV_SUSPEND };

/* One trace event: a task execution (X event) or an instant. */
struct sb_tev {
	uint64_t ts, dur;
	uint64_t job;
	uint32_t cls;
	uint8_t kind;
	uint8_t stolen;
	uint8_t result;
};

/* A thread's recordings. Grown by its owner only. */
struct sb_rec {
	struct sb_hist *hist[SB_MAX_CLASSES]; /* allocated on first use */
	struct sb_jobrow *rows;
	size_t nrows, caprows;
	size_t rows_dropped;
	struct sb_tev *ev;
	size_t nev, capev;
	size_t ev_dropped;
};

void sb_rec_free(struct sb_rec *r);
/* The next trace event slot of r (grown by doubling, up to `cap` events), or NULL when the
 * recording is full or out of memory (then counted in ev_dropped). Owner thread only. */
struct sb_tev *sb_rec_event(struct sb_rec *r, size_t cap);

/* ---- reading a runtime's results (harness, tests) ---- */

struct sb_rt;

/* Cumulative counters of worker i (relaxed reads; exact after sb_rt_stop). */
void sb_rt_worker_counters(const struct sb_rt *rt, unsigned i, uint64_t out[SB_NR_COUNTERS]);
/* Counters summed over every non-worker thread context (request threads, watcher). */
void sb_rt_other_counters(const struct sb_rt *rt, uint64_t out[SB_NR_COUNTERS]);
/* Restrict job recording to jobs submitted in [start, end) ns (default: everything). */
void sb_rt_set_window(struct sb_rt *rt, uint64_t start, uint64_t end);
/* At most this many trace events per thread (the earliest of the window; default 16M). Trace
 * events, like job rows, are only recorded inside the window set by sb_rt_set_window. */
void sb_rt_set_trace_cap(struct sb_rt *rt, size_t cap);

/* Visit every thread context's recordings (after sb_rt_stop). `worker` is -1 for others. */
typedef void (*sb_rec_visit_fn)(void *ctx, int worker, unsigned thread_id, const struct sb_rec *r);
void sb_rt_visit_recordings(const struct sb_rt *rt, sb_rec_visit_fn fn, void *ctx);
/* Policy counters (ops->stats), forwarded. */
void sb_rt_policy_stats(const struct sb_rt *rt, void (*emit)(void *ctx, const char *key, double v), void *ctx);
/* Number of task slabs allocated so far (memory bound checks). */
uint64_t sb_rt_task_slabs(const struct sb_rt *rt);

#endif
