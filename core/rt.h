/*
 * rt.h - the core's private structures: runtime, workers, thread contexts, transactions.
 *
 * Included by the core's .c files only (and by tests that check layout). Policies see none of this; they
 * go through core/policy.h. The harness reads results through core/stats.h.
 *
 * Layout rule (as in Lace): what other threads write or read often lives on its own cache
 * line, apart from what only the owner touches; _Static_asserts below keep it that way.
 */
#ifndef SB_RT_H
#define SB_RT_H

#include <pthread.h>
#include <stdatomic.h>

#include "exec.h"
#include "helper.h"
#include "policy.h"
#include "queue.h"
#include "stats.h"

#define SB_TOKEN_BATCH 64    /* job tokens a thread takes from a job's count at once */
#define SB_FREE_BATCH 256    /* tasks moved between a thread's free lists and the depot at once */
#define SB_SLAB_TASKS 256    /* tasks per allocation: a new slab is one free list (task.c) */
_Static_assert(SB_SLAB_TASKS <= SB_FREE_BATCH, "a new slab fits a thread's free list");
#define SB_JOB_ROWS_CAP (1u << 22) /* job rows one thread records at most (the rest are counted) */

/* Per-thread counters. The owner updates them with relaxed load+store (no lock prefix);
 * progress and watchdog readers load them relaxed. */
struct sb_counters {
	_Atomic uint64_t v[SB_NR_COUNTERS];
};

#ifdef SB_NO_HOT_STATS
#define SB_HOT_INC(tc, c) ((void)0)
#else
#define SB_HOT_INC(tc, c) sb_count((tc), (c), 1)
#endif

/* The stall watchdog's age buckets (watcher.c): tasks this thread placed into and started from
 * the queues, per age slot (the time of placement, in steps of a quarter of the limit, modulo
 * the slots) and job class. The owner adds with relaxed load+store; the monitor sums them. */
#define SB_WATCH_SLOTS 16
struct sb_watch {
	_Atomic uint64_t placed[SB_WATCH_SLOTS][SB_MAX_CLASSES];
	_Atomic uint64_t started[SB_WATCH_SLOTS][SB_MAX_CLASSES];
};

enum sb_thread_kind { SB_THREAD_WORKER, SB_THREAD_REQUEST, SB_THREAD_WATCHER };

/* A thread's context: workers embed one; request threads and the watcher allocate one. All
 * fields are owner-private unless marked; contexts live until the runtime is destroyed, so
 * their counters and recordings can be read after the thread is gone. */
struct sb_thread {
	int worker;                /* index, or -1 (these three first: struct sb_thread_pub) */
	unsigned id;               /* attach order, 0.. */
	unsigned preferred;        /* preferred worker, UINT32_MAX until first placement */
	enum sb_thread_kind kind;
	struct sb_rt *rt;
	uint64_t rng;

	struct sb_node *free;      /* task free list: nfree tasks, at most SB_FREE_BATCH */
	unsigned nfree;
	struct sb_node *spare;     /* a full batch of free tasks, or NULL (task.c) */
	struct sb_job *tok_job;    /* job whose tokens this thread caches ... */
	int64_t tok_n;             /* ... and how many */
	struct sb_list serial;     /* own serial queue (SB_TO_CALLER) */
	struct sb_task *current;   /* running task */
	bool busy;                 /* worker: ran a task since the last empty round */
	uint64_t since;            /* worker: when busy/idle last changed */

	/* Jobs this thread submitted and jobs it tore down: only the owner writes them, and
	 * sb_rt_stop sums them over every context (runtime.c, live_jobs) instead of a count per runtime
	 * that every creator and finisher would take turns writing. */
	_Atomic uint64_t jobs_in;
	_Atomic uint64_t jobs_out;
	struct sb_counters cnt;    /* read by others (relaxed) */
	struct sb_watch watch;     /* read by the monitor (relaxed) */
	struct sb_rec rec;         /* histograms, job rows, trace events; read after the run */
	bool attached;
	struct sb_thread *next_all; /* the runtime's list of every context (under threads_lock) */
};

_Static_assert(offsetof(struct sb_thread, worker) == offsetof(struct sb_thread_pub, worker) &&
	       offsetof(struct sb_thread, id) == offsetof(struct sb_thread_pub, id) &&
	       offsetof(struct sb_thread, preferred) == offsetof(struct sb_thread_pub, preferred),
	       "struct sb_thread must start with struct sb_thread_pub");

/* A task's check-mode state (t->cstate): check.c verifies each start finds it QUEUED. */
enum sb_check_state { SB_CS_FREE = 0, SB_CS_QUEUED = 1, SB_CS_RUNNING = 2, SB_CS_PARKED = 3 };

/* SB_W_SEARCH: woken to search; the waker has already counted the worker in nsearching. */
enum sb_worker_state { SB_W_ACTIVE = 0, SB_W_SUSPENDED = 1, SB_W_SEARCH = 2 };

/* Bits of sb_rt.slow: anything set sends each task through the slow path of sb_run/sb_place. */
enum { SB_SLOW_CHECK = 1, SB_SLOW_TRACE = 2, SB_SLOW_MONITOR = 4, SB_SLOW_CHAOS = 8, SB_SLOW_CANCEL = 16,
       SB_SLOW_VIRTUAL = 32 /* a virtual executor charges policy calls */ };
/* The modes that wrap policy calls (check, chaos): one bit test of rt->slow decides, so that
 * with both off a submit or pop costs one load and one predictable branch beyond the call. */
#define SB_SLOW_WRAP (SB_SLOW_CHECK | SB_SLOW_CHAOS | SB_SLOW_VIRTUAL)

struct sb_worker {
	/* --- shared: other threads read and write these --- */
	_Alignas(SB_CACHELINE) _Atomic uint32_t state; /* futex word; enum sb_worker_state */
	_Atomic uint64_t run_seq;   /* tasks started or dropped (monitor: same task still running?) */
	_Atomic uint32_t yield_req; /* monitor -> task: please yield */
	_Atomic uint32_t idle;      /* 1 while the worker finds nothing (watchdog) */
	_Atomic uint64_t nap_until; /* while it sleeps between polls: when the nap ends, else 0 */
	/* The stretches in progress, so that counters read meanwhile (a measurement window's ends,
	 * sb_rt_worker_counters) include them: the busy or idle stretch (sb_stretch_word: its start
	 * and which, 0 before the first and after the last) and the suspension (its start, 0 when
	 * none; an idle stretch stops while it lasts). snap_seq is odd while the owner moves an
	 * ended stretch into its counter (a seqlock, sb_snap_begin/end), so a reader counts an
	 * ending stretch neither twice nor not at all. */
	_Atomic uint32_t snap_seq;
	_Atomic uint64_t stretch;
	_Atomic uint64_t susp_since;
	/* When a waker claimed this sleeping worker (sb_now_ns), for the wake-up latency counter:
	 * written by wakers before their claim, taken (and zeroed) by the worker once awake */
	_Atomic uint64_t wake_claim;
	/* --- owner-private --- */
	_Alignas(SB_CACHELINE) struct sb_thread tc;
	struct sb_rt *rt;
	unsigned idx;
	int core;                   /* pinned core, or -1 */
	bool searching;             /* counted in rt->nsearching */
	struct sb_xthread thread;
	bool started;
};

/* The busy or idle stretch that started at `since` (sb_now_ns), as the word a reader loads at
 * once: start + 1 (so that a stretch starting at a virtual clock's 0 is not "none"), then which. */
static inline uint64_t sb_stretch_word(uint64_t since, bool busy)
{
	return ((since + 1) << 1) | busy;
}

/* The owner's side of the snapshot seqlock (the reader is sb_rt_worker_counters, stats.c):
 * between begin and end it moves an ended stretch into a counter and starts the next. */
static inline uint32_t sb_snap_begin(struct sb_worker *w)
{
	uint32_t s = atomic_load_explicit(&w->snap_seq, memory_order_relaxed);
	atomic_store_explicit(&w->snap_seq, s + 1, memory_order_relaxed);
	/* release fence: orders the odd sequence before the stores that follow, so a reader that
	 * sees any of them (and fences with acquire) sees the odd sequence and retries */
	atomic_thread_fence(memory_order_release);
	return s;
}

static inline void sb_snap_end(struct sb_worker *w, uint32_t s)
{
	/* release: pairs with the reader's first acquire load; its counter reads then see ours */
	atomic_store_explicit(&w->snap_seq, s + 2, memory_order_release);
}
_Static_assert(offsetof(struct sb_worker, tc) % SB_CACHELINE == 0, "worker-private state on its own line");

struct sb_txn {
	_Atomic uint64_t sticky;   /* upper 32: sticky tasks queued or running; lower 32: worker */
	_Atomic uint32_t lock;     /* 0 free, 1 held, 2 held with waiters (futex word) */
	_Atomic(struct sb_thread *) owner; /* recursive: the holder */
	uint32_t depth;            /* recursion depth, written by the holder only */
	_Atomic uint32_t running;  /* check mode: sticky tasks running now (must stay <= 1) */
	_Atomic uint64_t id;       /* published with release before the txn enters the map */
	void *pdata;               /* policy state (txn_init) */
	struct sb_rt *rt;
	struct cds_lfht_node *hnode; /* entry in the transaction map */
};

struct sb_slab {
	struct sb_slab *next;
	struct sb_task tasks[SB_SLAB_TASKS];
};

struct sb_rt {
	struct sb_config cfg;
	const struct sb_policy_ops *ops; /* &ops_own */
	struct sb_policy_ops ops_own;    /* the policy's table, the core's defaults filled in */
	void *pstate;
	void *pparams;

	unsigned n;
	struct sb_worker *w;       /* n workers, cache-line aligned */
	bool membarrier;           /* MEMBARRIER_CMD_PRIVATE_EXPEDITED is registered and in use */
	bool light_producer;       /* producers need only a compiler barrier (membarrier, or nobody sleeps) */

	_Alignas(SB_CACHELINE) _Atomic unsigned rr;       /* round-robin placement */
	/* written only when a worker goes idle or wakes: with every worker busy, producers only
	 * read this line, so it stays shared in every cache */
	_Alignas(SB_CACHELINE) _Atomic unsigned nsuspended;
	_Atomic unsigned nsearching;                      /* awake workers out of local work */
	_Atomic unsigned wake_rr;                         /* where a searcher wake starts its scan */
	/* written by every job's creator: a line of its own, so that the line below stays shared */
	_Alignas(SB_CACHELINE) _Atomic uint64_t job_ids;
	_Atomic uint64_t task_seq;                        /* check mode only */
	/* Read on every task or job and written only while sb_rt_stop waits: the jobs still live
	 * are counted per thread (sb_thread.jobs_in, jobs_out), not here, so that no line two
	 * threads write is touched per job. */
	_Alignas(SB_CACHELINE) _Atomic uint32_t live_seq; /* futex word: a job ended during a stop */
	_Atomic bool live_waited;                         /* sb_rt_stop waits on live_seq */
	_Atomic bool live_kick;                           /* taken by the teardown that bumps live_seq */
	_Atomic uint32_t slow;                            /* SB_SLOW_* */
	_Atomic bool stopping;                            /* workers and helpers exit */
	bool stopped;

	/* thread contexts */
	pthread_mutex_t threads_lock;
	struct sb_thread *threads; /* every context, newest first */
	unsigned nthreads;

	/* task memory: slabs are never freed before destroy, so tasks are type-stable */
	pthread_mutex_t depot_lock;
	struct sb_node *depot;     /* whole batches of free tasks (task.c) */
	struct sb_slab *slabs;
	_Atomic uint64_t nr_slabs;

	/* transactions */
	struct cds_lfht *txns;

	/* conditional tasks: the watcher thread, kicked on each conditional push */
	struct sb_mpsc cond_q;
	struct sb_helper watcher;
	struct sb_thread *watcher_tc;

	/* monitor: cooperative preemption and the stall watchdog */
	struct sb_helper monitor;
	_Atomic(const char *const *) class_names; /* for the watchdog's messages; NULL: "class N" */

	/* recording window (ns); jobs submitted inside it are recorded */
	_Atomic uint64_t win_start, win_end;
	_Atomic uint64_t trace_cap;    /* bound on trace events per thread */

	/* failure: first check-mode violation or stall */
	_Atomic int fail_claim;
	_Atomic int failed;
	char failure[1024];

	/* topology */
	void *topo;                /* hwloc_topology_t */
	unsigned *dist;            /* n x n worker distances */

	/* chaos */
	uint64_t chaos_seed;
};

/* ---- internal functions shared between core files (idle.h and thread.h have the rest) ---- */

/* task.c */
void sb_run(struct sb_thread *tc, struct sb_task *t, bool stolen);
void sb_place(struct sb_thread *tc, struct sb_task *t); /* submit through the policy + wake */
void sb_tok_flush(struct sb_thread *tc);
void sb_task_free(struct sb_thread *tc, struct sb_task *t);
void sb_thread_cache_release(struct sb_thread *tc);
void sb_slabs_free(struct sb_rt *rt);
size_t sb_drain_serial(struct sb_thread *tc, size_t max);

/* job.c */
void sb_job_sub(struct sb_thread *tc, struct sb_job *j, int64_t n);
void sb_job_run_teardown_task(struct sb_thread *tc, struct sb_task *t);
void sb_job_ref_put(struct sb_job *j);

/* txn.c */
int sb_txn_map_init(struct sb_rt *rt);
void sb_txn_map_fini(struct sb_rt *rt);
void sb_txn_lock(struct sb_thread *tc, struct sb_txn *x);
void sb_txn_unlock(struct sb_txn *x);
void sb_txn_unbind(struct sb_txn *x);
bool sb_txn_try_lock_as(struct sb_thread *tc, struct sb_txn *x);
/* Find by id (RCU lookup in the transaction map), NULL when absent: tests look into the map. */
struct sb_txn *sb_txn_find(struct sb_rt *rt, uint64_t id);

/* worker.c */
void *sb_worker_main(void *arg); /* a worker thread's body; arg: its struct sb_worker */
int sb_topology_init(struct sb_rt *rt, char *err, size_t errlen);
void sb_workers_join(struct sb_rt *rt);

/* watcher.c */
int sb_watcher_start(struct sb_rt *rt, char *err, size_t errlen);
void sb_watcher_stop(struct sb_rt *rt);

/* monitor.c */
int sb_monitor_start(struct sb_rt *rt, char *err, size_t errlen);
void sb_monitor_stop(struct sb_rt *rt);
void sb_watch_placed(struct sb_thread *tc, struct sb_task *t);  /* a task enters a queue */
void sb_watch_started(struct sb_thread *tc, struct sb_task *t); /* ... and leaves it (t->wslot) */

/* fail.c */
void sb_fail(struct sb_rt *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* check.c */
bool sb_check_run_begin(struct sb_thread *tc, struct sb_task *t);
void sb_check_run_end(struct sb_thread *tc, struct sb_task *t);
void sb_check_sticky_enter(struct sb_thread *tc, struct sb_task *t);
void sb_check_sticky_leave(struct sb_thread *tc, struct sb_txn *x);
void sb_check_doomed(struct sb_thread *tc, struct sb_task *t);

/* policy.c: the only callers of rt->ops */
void sb_policy_bind(struct sb_rt *rt, const struct sb_policy_ops *ops); /* rt->ops, with defaults */
int sb_policy_create(struct sb_rt *rt, const void *params, char *err, size_t errlen);
void sb_policy_destroy(struct sb_rt *rt);
int sb_policy_submit(struct sb_thread *tc, struct sb_task *t, bool wrapped); /* wrapped: chaos on */
struct sb_task *sb_policy_pop(struct sb_rt *rt, unsigned self);
struct sb_task *sb_policy_steal(struct sb_rt *rt, unsigned self);
bool sb_policy_can_steal(const struct sb_rt *rt);
struct sb_task *sb_policy_idle(struct sb_rt *rt, unsigned self, struct sb_idle *out);
struct sb_task *sb_policy_help(struct sb_thread *tc); /* a waiting non-worker's task, or NULL */
void sb_policy_job_start(struct sb_thread *tc, struct sb_job *j);
void sb_policy_job_end(struct sb_rt *rt, struct sb_job *j);
void sb_policy_job_cancel(struct sb_rt *rt, struct sb_job *j);
int sb_policy_txn_init(struct sb_rt *rt, struct sb_txn *x);
void sb_policy_txn_fini(struct sb_rt *rt, struct sb_txn *x);
size_t sb_policy_queued(const struct sb_rt *rt, int w);

/* clock.c */
void sb_clock_calibrate(void);

/* Slow paths stay out of line so the hot path needs no callee-saved registers. */
#define SB_COLD __attribute__((noinline, cold))
/* Hot-path functions called across core files; inlined at link time (the release build uses
 * -flto), so the layering costs no calls. */
#define SB_HOT_INLINE __attribute__((always_inline)) inline

static inline void sb_count(struct sb_thread *tc, enum sb_counter c, uint64_t by)
{
	/* relaxed load+store: the owner is the only writer; readers tolerate staleness */
	uint64_t v = atomic_load_explicit(&tc->cnt.v[c], memory_order_relaxed);
	atomic_store_explicit(&tc->cnt.v[c], v + by, memory_order_relaxed);
}


#endif
