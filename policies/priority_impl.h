/*
 * priority_impl.h - the `priority` policy's state (priority.c: serving and the policy's life;
 * priority_job.c: a job's state from job_start to job_end and its cancel handle), with the
 * per-job helpers and the handle queues inline, as they are on the submit and pop paths.
 *
 * Dropping a handle races with a submit to the same job. The job's handles are the bits of one
 * word (`free`, a set bit = a marker not out), and a Dekker pair of seq_cst fences decides:
 *   submit: push the subtask;      fence (S); fewer than min(N, queued) out? put one out
 *   drop:   set our bit (release); fence (D); queue not empty? take a bit back, keep serving
 * If (S) comes first in the fences' total order the dropper sees the subtask; if (D) comes
 * first the submitter sees the handle gone. Both may act; the CAS keeps the count at most N.
 * So a job never has queued subtasks and no handle out. A handle taken back whose pop still
 * finds nothing (a producer between claiming its cell and publishing it) stays held, and idle
 * keeps that worker awake until the subtask is there.
 */
#ifndef SB_POLICIES_PRIORITY_IMPL_H
#define SB_POLICIES_PRIORITY_IMPL_H

#include <pthread.h>

#include "../core/policy.h"
#include "../core/queue.h"

#define PRIORITY_MAX_SERVERS 64 /* a job's handles are the bits of one word */

struct priority_params {
	int64_t max_priority;
	int64_t concurrency;
	bool yield_to_higher;
};

enum { HANDLE_SERVER, HANDLE_CANCEL }; /* a marker's pint */

/* job->pword while the policy owns it: which of job_start/job_end ran, and cancellers inside */
#define PW_STARTED (1ull << 62)
#define PW_ENDED (1ull << 63)
#define PW_INSIDE (PW_STARTED - 1)

/*
 * Per-job state. The subtask queue is an sb_fifo (any thread pushes, the job's servers pop).
 * `free` is CASed by submitters (put out a handle) and servers (take one back), fetch_or'ed by
 * servers dropping one; `refs` by every owner; `cancel_sent` once by job_cancel. The rest is
 * written in job_start and read-only after.
 */
struct priority_job {
	struct sb_fifo q;
	_Alignas(SB_CACHELINE) _Atomic uint64_t free; /* bit i set: markers[i] is not out */
	_Atomic unsigned refs;
	_Atomic bool cancel_sent;
	unsigned limit;      /* N */
	unsigned level;      /* index of the handle queue */
	struct priority *pr; /* whose pool it goes back to */
	struct priority_job *next_free; /* in the pool */
	struct sb_task cancel;
	struct sb_task markers[]; /* pr->max_limit of them, whatever this job's limit */
};

/* Per worker, owner-only; the counters are stored relaxed by the owner and read by stats. */
struct priority_worker {
	_Alignas(SB_CACHELINE) struct sb_task *held; /* the handle this worker serves, or NULL */
	unsigned held_level;
	bool fresh;                    /* held handle has not given a subtask yet */
	bool rotate;                   /* a task of the held job came back unfinished */
	_Atomic uint64_t nr_handles;   /* handles taken from the queues */
	_Atomic uint64_t nr_stale;     /* ... that found nothing to serve */
	_Atomic uint64_t nr_yields;    /* handles put back for a higher-priority one */
	_Atomic uint64_t nr_rotations; /* handles put back after a task of their job yielded */
	_Atomic uint64_t nr_retakes;   /* drops undone because a subtask came in (the race) */
};

/* One level of handles: an unbounded FIFO (anything overlaps with anything). */
struct priority_level {
	struct sb_fifo q;
};

/*
 * Shared state. lv[0..nlevels) are the priority levels, lowest first; lv[nlevels] holds cancel
 * handles. `front` (an sb_fifo) holds first teardown tasks. Counters are relaxed fetch_adds.
 */
struct priority {
	struct priority_params p;
	struct sb_rt *rt;
	unsigned nworkers;
	unsigned nlevels;
	struct sb_fifo front;
	struct priority_level *lv;
	struct priority_worker *w;
	unsigned max_limit; /* the largest N a job can have: every state has room for it */
	_Alignas(SB_CACHELINE) _Atomic uint64_t nr_jobs;
	_Atomic uint64_t nr_cancel, nr_clamped, nr_unstarted;
	/* Per-job states of ended jobs, for the next job_start (priority_job.c): one made and freed
	 * per job cost glibc's aligned allocation, a free on another thread's arena and two trips
	 * to the queue segments' pool. Under pool_lock. */
	_Alignas(SB_CACHELINE) pthread_mutex_t pool_lock;
	struct priority_job *pool;
	unsigned pool_len;
	_Atomic uint64_t nr_states; /* states taken from the allocator (stats: states_made) */
};


static void bump(_Atomic uint64_t *c)
{
	/* owner-only counter: relaxed load+store, read relaxed by stats */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

static void count(_Atomic uint64_t *c)
{
	/* a rare event, counted by any thread */
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ---- per-job state ---- */

static inline struct priority_job *job_of(const struct sb_task *h)
{
	return h->arg;
}

/* priority_job.c: the last reference is gone; the state goes back to its pool */
void priority_job_recycle(struct priority_job *pj);

static inline void job_ref(struct priority_job *pj)
{
	/* relaxed: the caller owns a reference already, or keeps the job open (job_end not run) */
	atomic_fetch_add_explicit(&pj->refs, 1, memory_order_relaxed);
}

static inline void job_unref(struct priority_job *pj)
{
	/* acq_rel: the last owner sees every other owner's accesses before it frees */
	if (atomic_fetch_sub_explicit(&pj->refs, 1, memory_order_acq_rel) != 1)
		return;
	priority_job_recycle(pj);
}

static inline unsigned handles_out(const struct priority_job *pj, uint64_t free_bits)
{
	return pj->limit - (unsigned)__builtin_popcountll(free_bits);
}

/* Put out one more handle if fewer than `cap` are out: take a free marker. NULL otherwise. */
static inline struct sb_task *server_add(struct priority_job *pj, unsigned cap)
{
	/* relaxed load: only a first guess for the CAS */
	uint64_t f = atomic_load_explicit(&pj->free, memory_order_relaxed);
	for (;;) {
		if (!f || handles_out(pj, f) >= cap)
			return NULL;
		/* acquire: pairs with the release fetch_or in serve, so the marker's previous
		 * holder is done with it before we queue it again */
		if (atomic_compare_exchange_weak_explicit(&pj->free, &f, f & (f - 1), memory_order_acquire,
							  memory_order_relaxed))
			return &pj->markers[__builtin_ctzll(f)];
	}
}

/* ---- handle queues ---- */

static inline void push_handle(struct priority *pr, unsigned level, struct sb_task *h)
{
	sb_fifo_push(&pr->lv[level].q, h);
}

/* The first handle at `floor` or above, highest level (the cancel handles) first. */
static inline struct sb_task *take_handle(struct priority *pr, unsigned floor)
{
	for (unsigned i = pr->nlevels + 1; i-- > floor;) {
		struct sb_task *h = sb_fifo_pop(&pr->lv[i].q);
		if (h)
			return h;
	}
	return NULL;
}

/* Worker `me` takes handle h from a queue. */
static inline void hold(struct priority *pr, struct priority_worker *me, struct sb_task *h)
{
	bump(&me->nr_handles);
	me->held = h;
	me->fresh = true;
	me->rotate = false;
	me->held_level = h->pint == HANDLE_CANCEL ? pr->nlevels : job_of(h)->level;
}

/* priority_job.c */
void priority_job_start(void *st, struct sb_job *j, struct sb_thread *caller);
void priority_job_end(void *st, struct sb_job *j);
void priority_job_cancel(void *st, struct sb_job *j);
/* The pool of ended jobs' states: set up in create; freed in destroy, once every reference
 * is gone. */
void priority_pool_init(struct priority *pr);
void priority_pool_fini(struct priority *pr);
/* The per-job counters: jobs, cancel handles sent, priorities clamped, states made. */
void priority_job_stats(struct priority *pr, sb_stat_emit_fn emit, void *ctx);

#endif
