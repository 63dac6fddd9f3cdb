/*
 * sb.h - the public API of the schedbed core: what workloads, the harness and tests use.
 *
 * Owns the vocabulary shared by every memo: a *task* runs on one thread without waiting and
 * either finishes or hands its remainder back (SB_YIELD); a *job* is the set of tasks of one
 * request and always ends with exactly one *teardown* (completion callback); a *transaction*
 * (sb_txn) groups jobs and serialises their sticky tasks; *workers* are the pool threads and
 * *request threads* are threads outside the pool that submit jobs (and, under the serial and
 * hybrid policies, run them).
 *
 * Does not own scheduling decisions: where a task goes and what a worker runs next belong to
 * the policy behind core/policy.h. Nothing in this header names a policy.
 *
 * Threading contract: every thread that calls into the core is either a worker (created by
 * the runtime) or attached with sb_thread_attach() and later sb_thread_detach(). Functions
 * say which threads may call them; "any attached thread" is the default.
 */
#ifndef SB_H
#define SB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "exec.h"

#define SB_CACHELINE 64

/* `size` bytes of zeroes, cache-line aligned and rounded up to whole lines: every heap object of
 * a type that declares _Alignas(SB_CACHELINE) comes from here (core/alloc.c), and so does any
 * block one thread writes and others only read (workloads' per-thread counts); free() releases
 * it. NULL when out of memory. */
void *sb_alloc_lines(size_t size);

struct sb_rt;
struct sb_job;
struct sb_txn;
struct sb_task;
struct sb_thread;
struct sb_policy_ops;

/* ------------------------------------------------------------------------------------------ */
/* Tasks                                                                                      */

/* What a task body returns. */
enum sb_result {
	SB_DONE = 0,   /* finished */
	SB_YIELD,      /* not finished: run me again later (re-submitted through the policy at once) */
	SB_BLOCKED,    /* parked: not queued anywhere until someone calls sb_task_resume() */
	SB_ERROR,      /* finished with an error: the job's status becomes SB_JOB_ERROR */
};

typedef enum sb_result (*sb_task_fn)(struct sb_task *t);
/* The check part of a conditional task: cheap, non-blocking, may run many times on any thread. */
typedef bool (*sb_check_fn)(struct sb_task *t);

enum sb_task_flags {
	SB_TF_STICKY   = 1u << 0, /* works on t->txn: never concurrent with the txn's other sticky
	                             tasks; holds the txn lock while it runs (memo 000) */
	SB_TF_COND     = 1u << 1, /* conditional: t->check must hold before t->fn runs */
	SB_TF_URGENT   = 1u << 2, /* placement hint "suspended_worker": hand it to a suspended worker
	                             if there is one (teardown, commit responses) */
	SB_TF_TEARDOWN = 1u << 3, /* set by the core on a job's teardown task; not counted in the job */
	SB_TF_MARKER   = 1u << 4, /* a policy's own queue entry (lane task, ticket): never run by the
	                             core, never seen outside the policy that made it */
	SB_TF_AGAIN    = 1u << 5, /* set by the core on a re-submission (yielded, resumed, or a
	                             conditional taken too early): policies queue it behind fresh work */
	SB_TF_BOUND    = 1u << 6, /* core private: counted in its transaction's sticky word */
	SB_TF_DOOMED   = 1u << 7, /* core private (check mode): submitted after its job was cancelled */
	SB_TF_CLEANUP  = 1u << 8, /* runs even when its job is cancelled: it releases a hold or ends a
	                             transaction that others wait for; keep such a task short */
};

/* Intrusive queue link. A task sits in at most one queue at a time. */
struct sb_node {
	_Atomic(struct sb_node *) next;
};

/*
 * Fields the core owns. Policies are compiled with SB_POLICY_SIDE (the Makefile does it for
 * policies/), and there these fields carry a name that says whose they are, so a policy that
 * reads or writes one fails to compile; it goes through core/policy.h's accessors instead
 * (sb_job_cancelled, sb_job_try_lock_txn). The layout is the same on both sides.
 */
#ifdef SB_POLICY_SIDE
#define SB_CORE_OWNED(field) field##__core_owned_see_policy_h
#else
#define SB_CORE_OWNED(field) field
#endif

/*
 * A task. Allocate with sb_task_new(), fill fn/arg/u/flags, hand over with sb_spawn(). After
 * sb_spawn() the submitting thread must not touch it again (it may already have run and been
 * recycled), except a task parked with SB_BLOCKED, which its owner resumes with sb_task_resume().
 */
struct sb_task {
	struct sb_node node;     /* queue link, owned by whichever queue holds the task */
	sb_task_fn fn;           /* the body; for a conditional task, the body run once check holds */
	sb_check_fn check;       /* conditional tasks only */
	void *arg;               /* workload data */
	union {                  /* workload scratch (e.g. fib's n and a continuation pointer); */
		uint64_t u[3];   /* au: the same words, for a task its workload shares before it */
		_Atomic uint64_t au[3]; /* is spawned (a join task its children add into) */
	};
	struct sb_job *job;      /* set by sb_task_new(); every task belongs to exactly one job */
	struct sb_txn *txn;      /* the transaction a sticky task works on (defaults to job's txn) */
	uint32_t flags;          /* enum sb_task_flags */
	int32_t pint;            /* policy scratch while the task is queued (e.g. a pending count) */
	uint64_t SB_CORE_OWNED(seq); /* unique per submission (check mode only) */
	_Atomic uint32_t SB_CORE_OWNED(cstate); /* check mode: queued / running / free */
	uint16_t cls;            /* copy of job->cls, kept here so traces need not chase the job */
	uint16_t SB_CORE_OWNED(wslot); /* the stall watchdog's age slot + 1 while queued */
};

/* ------------------------------------------------------------------------------------------ */
/* Jobs                                                                                       */

enum sb_teardown {
	SB_TEARDOWN_DEFAULT = 0, /* the runtime parameter inplace_teardown decides */
	SB_TEARDOWN_TASK,        /* a teardown task, rescheduling itself until the job is ready */
	SB_TEARDOWN_INPLACE,     /* run by the thread whose task finished the job last */
};

enum sb_job_status { SB_JOB_OK = 0, SB_JOB_ERROR, SB_JOB_CANCELLED };

/* Statement work levels from jogasaki's statement_work_level_kind (memo 000). */
enum sb_work_level {
	SB_WL_UNDEFINED = -1,
	SB_WL_ZERO = 0,
	SB_WL_SIMPLE_WRITE = 10,
	SB_WL_KEY_OPERATION = 20,
	SB_WL_SIMPLE_CRUD = 30,
	SB_WL_SIMPLE_MULTIRECORD = 40,
	SB_WL_JOIN = 50,
	SB_WL_AGGREGATE = 60,
	SB_WL_INFINITY = 999,
};

#define SB_MAX_CLASSES 16

typedef void (*sb_job_done_fn)(struct sb_job *j);

struct sb_job_desc {
	unsigned cls;            /* job class index (< SB_MAX_CLASSES), for per-class latency */
	int work_level;          /* enum sb_work_level */
	struct sb_txn *txn;      /* optional */
	enum sb_teardown teardown;
	sb_job_done_fn done;     /* completion callback; runs once, on the teardown thread */
	void *arg;               /* workload data, reachable as j->arg */
	int priority;            /* larger runs first (priority policy); 0 is normal */
	unsigned concurrency;    /* workers that may serve this job at once (priority policy);
	                            0 = no limit */
	uint64_t t_arrival;      /* intended arrival (open loop); 0 = use the submit time */
	bool force_stealing;     /* hybrid: begin/commit/load/durability jobs never run serially */
};

enum sb_job_flags {
	SB_JF_COMPLETING = 1u << 0, /* teardown claimed (one CAS, memo 000) */
	SB_JF_CANCELLED  = 1u << 1,
	SB_JF_ERROR      = 1u << 2,
	SB_JF_DONE       = 1u << 3, /* callback has returned; waiters may go */
	SB_JF_WAITERS    = 1u << 4, /* someone sleeps in sb_job_wait() */
	SB_JF_SUBMITTED  = 1u << 5,
	SB_JF_ZEROED     = 1u << 6, /* the count has reached zero and its last decrementer is done */
};

/*
 * A job. Fields above `core private` are set from the descriptor and are read-only afterwards.
 * Lifetime: sb_job_create() returns one reference for the caller; the runtime holds its own
 * from sb_job_submit() to the end of teardown. Drop yours with sb_job_put().
 */
struct sb_job {
	/* --- read by every task of the job (task_take, sb_run), written once or rarely --- */
	uint64_t id;
	unsigned cls;
	int work_level;
	struct sb_txn *txn;
	enum sb_teardown teardown;
	sb_job_done_fn done;
	void *arg;
	int priority;
	unsigned concurrency;
	bool force_stealing;
	bool run_inline;         /* set by a policy's job_start: the submitting thread runs the job
	                            to completion inside sb_job_submit */
	struct sb_rt *rt;

	/* times in ns (sb_now_ns); t_end and end_thread are valid once SB_JF_DONE is seen */
	uint64_t t_submit;
	uint64_t t_arrival;
	_Atomic uint64_t t_start;

	/* policy private: hybrid keeps the job's mode here, priority its subtask queue */
	_Atomic uint64_t pword;
	void *pdata;

	/* core private */
	_Atomic uint32_t SB_CORE_OWNED(flags); /* enum sb_job_flags: read by every task (cancelled?) */
	/* The count below is written by every thread that runs the job's tasks (token batches,
	 * flushes when a worker runs dry); on the line of the fields above, each of those writes would
	 * cost every other worker a miss on its next task. A gap of a whole line keeps them apart
	 * wherever the allocator puts the job. */
	char SB_CORE_OWNED(gap)[64];
	_Atomic int64_t SB_CORE_OWNED(count); /* live tasks + tokens cached by threads + holds; 0 = finished */
	_Atomic uint32_t SB_CORE_OWNED(refs);
	_Atomic uint32_t SB_CORE_OWNED(nr_teardown_runs); /* check mode: must end at exactly 1 */
	bool SB_CORE_OWNED(holds_txn_lock); /* hybrid serial job: the txn lock is released after teardown */
	uint64_t t_end;
	int end_thread;          /* worker index that ran the teardown, or -1 for other threads */
	/* a virtual executor's: the creating thread (its id + 1; 0 = not attached) and whether the
	 * teardown ran on another one (valid once SB_JF_DONE is seen), for the job's costs */
	unsigned SB_CORE_OWNED(creator);
	bool SB_CORE_OWNED(ended_away);
};

/* ------------------------------------------------------------------------------------------ */
/* Runtime                                                                                    */

/* Core parameters, named as in the memos, with jogasaki's defaults (see core/param.c). */
struct sb_config {
	int64_t thread_count;            /* workers */
	bool core_affinity;              /* pin workers with hwloc */
	int64_t initial_core;            /* first core to pin to */
	int64_t stealing_wait;           /* extra local tries = stealing_wait x thread_count */
	int64_t task_polling_wait;       /* 0 nothing, 1 yield, >=2 sleep (value-2) us */
	bool busy_worker;                /* never suspend */
	bool wake_fence;                 /* producer-side fence, not the sleeper's membarrier */
	int64_t worker_try_count;        /* empty rounds before suspending */
	int64_t worker_spin_yield;       /* empty rounds between the spin's yields; 0 never */
	int64_t worker_suspend_timeout;  /* us */
	int64_t watcher_interval;        /* us, conditional-task watcher sleep */
	bool use_preferred_worker_for_current_thread;
	bool inplace_teardown;           /* default teardown mode for jobs that do not choose */
	int64_t preempt_threshold;       /* us a task may run before it is asked to yield; 0 off */
	int64_t stall_limit;             /* ms queued work may wait (starved, or with a worker
	                                    resting) before the run fails; 0 off (see below) */
	bool check;                      /* run-time invariant checking */
	bool trace;                      /* per-task trace events */
	int64_t chaos;                   /* 0 off; else seed for yields/delays at policy call sites */
	const char *topology;            /* hwloc synthetic topology string, "" = the machine's */
};

/* Fill with defaults. */
void sb_config_default(struct sb_config *cfg);

/* The stall watchdog samples every 1 ms and wants a condition seen over ten samples before it
 * judges, so a smaller limit is rounded up to this. */
#define SB_STALL_RESOLUTION_MS 10
/* Check mode verifies liveness too: with stall_limit 0 it applies this limit. */
#define SB_STALL_CHECK_DEFAULT_MS 1000
/* The limit the watchdog applies, in ms (0 = off): stall_limit rounded up to the resolution,
 * or check mode's default when stall_limit is 0. */
int64_t sb_config_stall_limit(const struct sb_config *cfg);

/*
 * Create a runtime in *out with `policy` and its parameter block `pparams` (as produced by the
 * policy's parameter table; NULL = defaults). Workers start at once. Returns 0, or a negative
 * errno that says the kind of failure (-EINVAL, -ERANGE: a value refused; -ENOMEM, -EAGAIN,
 * -EIO: out of a resource) with a one-line reason in err; *out is then NULL.
 */
int sb_rt_create(struct sb_rt **out, const struct sb_config *cfg, const struct sb_policy_ops *policy,
		 const void *pparams, char *err, size_t errlen);

enum sb_stop_mode {
	SB_STOP_DRAIN,  /* wait for every submitted job to finish normally */
	SB_STOP_CANCEL, /* cancel every live job: queued tasks are dropped, teardowns still run */
};

/* Stop: wait for live jobs (after cancelling them in CANCEL mode), then join the workers and the
 * core's helper threads. Call from an attached request thread or an unattached one; never from a
 * task. Idempotent. */
void sb_rt_stop(struct sb_rt *rt, enum sb_stop_mode mode);
/* Free everything. Stops first (DRAIN) if not yet stopped. Detaches the calling thread if it is
 * attached; every other request thread must have detached (the call aborts otherwise). */
void sb_rt_destroy(struct sb_rt *rt);

const struct sb_config *sb_rt_config(const struct sb_rt *rt);
unsigned sb_rt_nworkers(const struct sb_rt *rt);
const struct sb_policy_ops *sb_rt_policy(const struct sb_rt *rt);
/* Non-zero after a check-mode violation or a stall; the text says which and where. */
const char *sb_rt_failure(const struct sb_rt *rt);
/* Names of the job classes (NULL-terminated, kept by the caller for the runtime's life), so
 * that the watchdog's messages can name them; without them it says "class N". */
void sb_rt_set_class_names(struct sb_rt *rt, const char *const *names);
/* Cancel every live job and every job submitted from now on, from any thread that is not a
 * task: queued tasks are dropped as they surface (except SB_TF_CLEANUP ones), teardowns still
 * run, and each job so ended is counted as unfinished. sb_rt_stop(SB_STOP_CANCEL) starts so. */
void sb_rt_cancel(struct sb_rt *rt);
/* True once sb_rt_cancel has been called: a workload that holds jobs open releases them. */
bool sb_rt_cancelled(const struct sb_rt *rt);

/* Attach / detach the calling (non-worker) thread. Detach runs (DRAIN) or drops (after a
 * CANCEL stop) anything still in the thread's own serial queue. */
struct sb_thread *sb_thread_attach(struct sb_rt *rt);
void sb_thread_detach(void);
/* The calling thread's context, or NULL when not attached. */
struct sb_thread *sb_thread_self(void);
/* Worker index of the calling thread, or -1. */
int sb_self_worker(void);
/* Run tasks from the calling thread's own serial queue until it is empty. Returns how many ran. */
size_t sb_thread_run_pending(void);

/* ------------------------------------------------------------------------------------------ */
/* Jobs and tasks                                                                             */

struct sb_job *sb_job_create(struct sb_rt *rt, const struct sb_job_desc *d);
/* First schedule of the job: the policy sees the job (job_start), then `root` is spawned. */
void sb_job_submit(struct sb_job *j, struct sb_task *root);
/* Wait until the job's completion callback has returned. While waiting, the calling thread runs
 * the tasks of its own serial queue (serial and hybrid put work there). Request threads only.
 * Returns false if the runtime failed (check violation, stall) before the job finished. */
bool sb_job_wait(struct sb_job *j);
bool sb_job_done(const struct sb_job *j);
void sb_job_put(struct sb_job *j);
enum sb_job_status sb_job_status(const struct sb_job *j);
/* Keep a job open without a task (a commit waiting for durability): +1 on the job's count. Call
 * only while the job is open (from one of its tasks, or before submit). */
void sb_job_hold(struct sb_job *j);
/* Drop a hold; may finish the job (and run an in-place teardown on this thread). */
void sb_job_release(struct sb_job *j);
/* Mark cancelled: its queued tasks are dropped when they surface, teardown still runs once. */
void sb_job_cancel(struct sb_job *j);
/* jogasaki style: submit the teardown task now; it reschedules itself until the job's last task
 * has ended. No effect for in-place jobs or when teardown is already claimed. */
void sb_job_request_teardown(struct sb_job *j);

/* A new task of job j from the calling thread's free list (no malloc, no lock on the usual
 * path): fn, arg and job set, txn = the job's, u[] zeroed, no flags. A task made conditional
 * with SB_TF_COND must also get its check. */
struct sb_task *sb_task_new(struct sb_job *j, sb_task_fn fn, void *arg);
/* Schedule a task: from a task of the same job (the usual case), another job, or a request
 * thread. The policy decides where it goes. */
void sb_spawn(struct sb_task *t);
/* Re-schedule a task that returned SB_BLOCKED. */
void sb_task_resume(struct sb_task *t);
/* The task running on the calling thread, or NULL. */
struct sb_task *sb_current_task(void);
/* Cooperative preemption: true when the preemption monitor has flagged the running task. A long
 * task polls this, saves its progress and returns SB_YIELD. */
bool sb_should_yield(void);

/* ------------------------------------------------------------------------------------------ */
/* Transactions                                                                               */

/* A transaction: the sticky word, the (recursive) transaction lock and an entry in the
 * runtime's transaction map. End it only after all its jobs have finished. */
struct sb_txn *sb_txn_begin(struct sb_rt *rt, uint64_t id);
void sb_txn_end(struct sb_txn *x);
uint64_t sb_txn_id(const struct sb_txn *x);

/* ------------------------------------------------------------------------------------------ */
/* Time and work                                                                              */

/* Monotonic nanoseconds. */
uint64_t sb_now_ns(void);
/* Spend `ns` of CPU as calibrated busy work (not wall time: a preempted task takes longer, as
 * real work would). */
void sb_work_ns(uint64_t ns);

#endif
