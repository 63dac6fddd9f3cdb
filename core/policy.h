/*
 * policy.h - the scheduling policy interface: one ops table, and the core services a policy
 * may use.
 *
 * A policy answers two questions and nothing else: *where does this task go* (submit) and
 * *what does this worker run now* (pop, steal, idle). It never blocks, sleeps or spins: every
 * wait, spin budget, suspension, wake-up, clock read and trace event belongs to the core, so
 * all policies are measured with the same ruler and the same policy code could run under a
 * virtual-time executor. The one exception is work the policy models, spent with sb_work_ns so
 * that it is charged like a task's work in virtual time too (global's claim_lock_ns: the
 * database round trip of Quartz's lock-bound claim). Only core/policy.c calls through this
 * table; that file is the single place for the asserts, counters, chaos injection and
 * invariant checks around each call.
 *
 * Threads: `caller` is the thread context of whoever submits (a worker, a request thread or
 * the watcher); `self` is the index of the worker asking for work and is always the calling
 * thread. Policies keep shared state in their own structures and document, per structure,
 * which operations may run concurrently.
 *
 * Adding a policy: one file in policies/ that defines a `const struct sb_policy_ops`, and one
 * line in policies/registry.c; policies/README.md lists them all, and policies/fifo.c is the
 * smallest complete one. Only submit is required: every other op has a default (sched_ext's
 * way), so a policy writes only what it decides. The registry is checked at start-up
 * (sb_policies_check: names, required ops, parameter tables).
 */
#ifndef SB_POLICY_H
#define SB_POLICY_H

#include <errno.h>

#include "param.h"
#include "sb.h"

/* Placement results of submit (>= 0 means: queued for that worker; the core wakes it). */
enum {
	SB_TO_CALLER  = -1, /* core: append to the calling thread's own serial queue */
	SB_TO_WATCHER = -2, /* core: hand the conditional task to the watcher thread */
	SB_TO_ANY     = -3, /* queued where any worker may take it: core wakes one suspended worker */
	SB_TO_NOWAKE  = -4, /* queued; no worker needs waking (e.g. behind an occupied lane) */
};

/* What an idle worker should do; filled by the idle callback. */
struct sb_idle {
	int wake;                /* a worker the policy just handed work to (core wakes it), or -1 */
	bool stay_awake;         /* do not suspend; call idle again (e.g. the distributor) */
	bool suspend_now;        /* suspend without the remaining empty rounds: this worker may take
				  * nothing for now (global's workers beyond a lowered thread count) */
	bool yield;              /* with stay_awake: give the CPU away before the next round, for a
				  * waiter whose progress needs another thread to run (a lock holder) */
	uint64_t max_suspend_us; /* cap on the next suspension; 0 = the runtime's timeout */
};

typedef void (*sb_stat_emit_fn)(void *ctx, const char *key, double value);

/* What a policy promises, so check mode can hold it to it. */
enum sb_policy_flags {
	/* The policy itself never lets two sticky tasks of one transaction run at once (a bound
	 * worker, a lane, a slot), without relying on the transaction lock: check mode counts them
	 * before the lock is taken and fails the run on an overlap. */
	SB_POLICY_STICKY_EXCLUSIVE = 1u << 0,
	/* A task it queues with SB_TO_NOWAKE waits in its job's own queue, which every worker
	 * serving the job takes from (priority's subtask queues; its SB_TO_ANY puts out a handle
	 * on the queue all jobs share): a virtual executor charges it on its job's line. */
	SB_POLICY_JOB_QUEUES = 1u << 1,
};

struct sb_policy_ops {
	/*
	 * Create the policy's state for `rt` (workers exist but have not asked for work yet).
	 * `params` points at a block laid out by `params` below, already validated. Return 0, or
	 * -errno with a one-line reason in err. Called once, before any other callback. NULL: the
	 * policy keeps no state (its callbacks get the runtime as `state`); then destroy is NULL too.
	 */
	int (*create)(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen);
	/* Free the state. Every job has finished and every worker has stopped. NULL: nothing to
	 * free (no create). */
	void (*destroy)(void *state);

	/*
	 * A job's first schedule, on the submitting thread, before its root task is submitted.
	 * The policy may decide per-job things here (hybrid picks serial or stealing; priority
	 * registers the job's handle). Setting j->run_inline makes the submitting thread run the
	 * job to completion inside sb_job_submit, draining its own serial queue (jogasaki's hybrid
	 * runs a serial job within the schedule call); only sensible when every task of the job
	 * goes SB_TO_CALLER. NULL: nothing to decide.
	 */
	void (*job_start)(void *state, struct sb_job *j, struct sb_thread *caller);
	/*
	 * The job's teardown has run (callback returned), on the teardown thread; no task of the
	 * job is queued or running. Release per-job state. NULL: none kept.
	 */
	void (*job_end)(void *state, struct sb_job *j);
	/*
	 * sb_job_cancel() was called, from any thread. The core already drops the job's tasks as
	 * they surface; a policy with per-job queues may skip them sooner. NULL: nothing extra.
	 */
	void (*job_cancel)(void *state, struct sb_job *j);

	/* Per-transaction policy state (lanes, slots) in x->pdata: made at sb_txn_begin, freed at
	 * sb_txn_end when no task of the transaction is queued. Return 0 or -errno. NULL: none. */
	int (*txn_init)(void *state, struct sb_txn *x);
	void (*txn_fini)(void *state, struct sb_txn *x);

	/*
	 * A task becomes runnable: a new one, one that yielded, or one resumed after SB_BLOCKED.
	 * Any thread may call this concurrently. Put the task somewhere and return where (a worker
	 * index or an SB_TO_* code). The task's job, txn, flags and t->job->pword tell the policy
	 * what it needs; flags SB_TF_STICKY / SB_TF_COND / SB_TF_URGENT are hints it may honour.
	 * Required.
	 */
	int (*submit)(void *state, struct sb_thread *caller, struct sb_task *t);
	/*
	 * What worker `self` runs now from the queues it looks at first (its own, or shared ones).
	 * Called only by worker `self`. Return NULL when there is nothing. NULL: the policy never
	 * queues work for a worker (serial: every task runs on the thread that submits it).
	 */
	struct sb_task *(*pop)(void *state, unsigned self);
	/*
	 * One steal sweep for worker `self`, called by the core after stealing_wait x
	 * thread_count further empty pops. A stolen task is run at once by the core. NULL: the
	 * policy never steals.
	 */
	struct sb_task *(*steal)(void *state, unsigned self);
	/*
	 * Worker `self` found nothing in pop and steal. The policy may move work between workers
	 * (task distribution mode), return a task for `self`, and say whether `self` may suspend
	 * (fill *out; it arrives with wake = -1, stay_awake = false, suspend_now = false,
	 * yield = false, max_suspend_us = 0). NULL: the core's idle path alone.
	 */
	struct sb_task *(*idle)(void *state, unsigned self, struct sb_idle *out);
	/*
	 * A thread that is not a worker (a request thread) waits in sb_job_wait() for a job: a
	 * task it may run meanwhile, or NULL (DuckDB's external threads, memo 002: the thread that
	 * runs a query executes that query's tasks while it waits). Any non-worker thread, at any
	 * time; the core runs the task at once on `caller` and asks again before it parks. NULL:
	 * waiting threads only wait.
	 */
	struct sb_task *(*help)(void *state, struct sb_thread *caller);

	/* Approximate number of runnable tasks queued for worker `w` (w = -1: queues not owned by
	 * any worker). Any thread, any time; may be stale. NULL: unknown (reported as 0). */
	size_t (*queued)(void *state, int w);
	/* Policy counters for summary.json and the end-of-run table. NULL: none. */
	void (*stats)(void *state, sb_stat_emit_fn emit, void *ctx);

	const char *name;
	const char *description;     /* one line, with the memo it implements */
	int version;
	unsigned flags;                /* enum sb_policy_flags */
	const struct sb_param *params; /* parameter table; NULL when the policy has none */
	size_t params_size;            /* size of the parameter block */
	/* Keys of .stats counters that show which of its mechanisms the policy used (hybrid's serial
	 * and stealing jobs, distribution's hand-offs), NULL-terminated; the end-of-run table prints
	 * them. When one of them is 0 the policy degenerated into something simpler in this run, and
	 * the table says so with `degenerate_hint`: the setting under which it does differ. */
	const char *const *paths;
	const char *degenerate_hint;
};

/* ------------------------------------------------------------------------------------------ */
/* Core services for policies (none of them blocks)                                           */

/* The head of every thread context: what policies read on their hot path, without a call.
 * Read-only outside the core. core/rt.h asserts that struct sb_thread starts with these. */
struct sb_thread_pub {
	int worker;         /* worker index, or -1 for request threads and the watcher */
	unsigned id;        /* attach order: small, stable (producer tokens use it) */
	unsigned preferred; /* preferred worker, UINT32_MAX until the first placement */
};

/* Worker index of a thread context, or -1 for request threads and the watcher. */
static inline int sb_thread_worker(const struct sb_thread *caller)
{
	return caller ? ((const struct sb_thread_pub *)(const void *)caller)->worker : -1;
}

/* A thread's own id among all attached threads (stable, small, for producer tokens). */
static inline unsigned sb_thread_id(const struct sb_thread *caller)
{
	return ((const struct sb_thread_pub *)(const void *)caller)->id;
}

unsigned sb_nworkers(const struct sb_rt *rt);
/*
 * jogasaki's default placement: the caller's fixed preferred worker (a worker's is itself;
 * another thread gets one round robin on its first call) when
 * use_preferred_worker_for_current_thread, otherwise round robin per call.
 */
unsigned sb_place_default(struct sb_rt *rt, struct sb_thread *caller);
/* jogasaki's suspended_worker option: scan from base+1 for a suspended worker; if none, base+1
 * (base = the default placement). */
unsigned sb_place_urgent(struct sb_rt *rt, struct sb_thread *caller);
/* True while worker i is suspended (deactivated, in memo 001's words). A snapshot. */
bool sb_worker_suspended(const struct sb_rt *rt, unsigned i);
/* Number of workers currently suspended. A snapshot. */
unsigned sb_nsuspended(const struct sb_rt *rt);
/* Workers that are out of work: suspended plus awake and searching (polling, stealing). Two
 * relaxed loads, no write: cheap enough for a policy's hot path (e.g. to decide whether an
 * owner-private queue should make work visible to thieves). A snapshot; may be stale. */
unsigned sb_nidle(const struct sb_rt *rt);

/* Work just became available to other workers other than through submit's return value (the
 * surplus of a steal, a lane handed back to a queue, a task put back from pop): wakes a
 * sleeping worker to search for it when nobody is searching. With every worker busy it costs
 * two loads. Never blocks. */
void sb_work_available(struct sb_rt *rt);

/*
 * The sticky word (memo 000): bind t's transaction to `candidate` if none of its sticky tasks
 * is queued or running, else keep the worker already bound; count t in. Returns the bound
 * worker, where t must go. The core counts t out when its run ends.
 */
unsigned sb_txn_bind(struct sb_task *t, unsigned candidate);
/* Per-transaction policy data (txn_init/txn_fini). */
void *sb_txn_pdata(const struct sb_txn *x);
void sb_txn_set_pdata(struct sb_txn *x, void *p);
/* Try the transaction lock without waiting (hybrid's serial decision). */
bool sb_txn_try_lock(struct sb_txn *x);

/* Evaluate a conditional task's check part (counted; the core's watcher does the same). */
bool sb_task_ready(struct sb_task *t);
/* The calling thread's context (policies get `caller` in submit; elsewhere use this). */
struct sb_thread *sb_thread_self(void);
/* A fast per-thread pseudo-random number. */
uint64_t sb_rand(void);
/* hwloc distance between the cores of workers a and b (0 = same core; larger = farther). */
unsigned sb_worker_distance(const struct sb_rt *rt, unsigned a, unsigned b);
/* The runtime parameter block (read-only). */
const struct sb_config *sb_rt_config(const struct sb_rt *rt);

/* ---- errors ----
 * A policy reports an error one way: a negative errno that says its kind (-ENOMEM: out of a
 * resource, the run failed; -EINVAL, -ERANGE: a value refused, bad input) with a one-line
 * message. The harness picks the exit status from the errno, never from the text. */

/* For the callbacks that return an error (create, txn_init): writes the message to err and
 * returns neg_errno, e.g. `return sb_policy_error(err, errlen, -ENOMEM, "out of memory");`. */
int sb_policy_error(char *err, size_t errlen, int neg_errno, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* For a callback that can neither return an error nor go on (job_start or submit out of
 * memory): prints "schedbed: policy NAME: message (errno's text)" and ends the process with
 * the failed-run status 1. Never abort(): a policy's failure is a result, not a crash. */
__attribute__((noreturn, cold, format(printf, 3, 4)))
void sb_policy_fatal(const struct sb_rt *rt, int neg_errno, const char *fmt, ...);

/* Whether j was cancelled. relaxed: a hint for skipping its queued tasks sooner; the core
 * drops them itself as they surface. */
static inline bool sb_job_cancelled(const struct sb_job *j)
{
	return atomic_load_explicit(&j->SB_CORE_OWNED(flags), memory_order_relaxed) & SB_JF_CANCELLED;
}

/* Jobs: hybrid's serial path runs a job holding its transaction's lock. Try the lock for j's
 * transaction; on success the core releases it at j's teardown. */
bool sb_job_try_lock_txn(struct sb_job *j);

#endif
