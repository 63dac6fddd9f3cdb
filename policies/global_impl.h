/*
 * global_impl.h - the `global` policy's state, shared by global.c (the queues, claims and the
 * policy's life) and global_threads.c (threads_low, the thread count changed at run time, and
 * the idle step).
 */
#ifndef SB_POLICIES_GLOBAL_IMPL_H
#define SB_POLICIES_GLOBAL_IMPL_H

#include "../core/policy.h"
#include "../core/queue.h"

struct global_params {
	bool producer_tokens;
	int64_t producer_slots;
	int64_t batch;
	int64_t claim_lock_ns;
	int64_t threads_low;
	int64_t resize_every;
	int token_scope;
	bool external_threads;
};

enum { GLOBAL_TOKEN_THREAD, GLOBAL_TOKEN_JOB };
extern const char *const global_token_scopes[];

/*
 * Per worker, written by its owner only. buf/head/n/pos are private; nbuf and the two
 * counters are stored relaxed by the owner and read relaxed by queued() and stats() on any
 * thread (a stale value is acceptable there).
 */
struct global_worker {
	_Alignas(SB_CACHELINE) struct sb_task **buf; /* claimed, not yet handed out: buf[head..n) */
	unsigned head, n;
	unsigned pos;                 /* queue index where the next claim's scan starts */
	_Atomic size_t nbuf;          /* n - head, for queued() */
	_Atomic uint64_t nr_claims;   /* successful claims */
	_Atomic uint64_t nr_claimed;  /* tasks they took */
	_Atomic uint64_t nr_rounds;   /* claim-lock rounds (claim_lock_ns > 0) */
	_Atomic uint64_t nr_busy;     /* pops that found the claim lock taken */
	_Atomic uint32_t seen_gen;    /* the last shrink this worker acknowledged (threads_low) */
};

/*
 * Shared state. q[0] is the shared queue; with producer tokens q[1 + id] belongs to the thread
 * with attach id `id`. Queues are sb_fifo, so every push and pop may overlap with any other.
 * `span` only grows (CAS to a larger value); the rare counters are relaxed fetch_adds.
 */
struct global {
	struct global_params p;
	unsigned nworkers;
	unsigned nq;
	struct sb_fifo *q;
	_Alignas(SB_CACHELINE) _Atomic unsigned span; /* queues in use: q[0..span) */
	_Atomic uint64_t nr_fallback;
	_Alignas(SB_CACHELINE) _Atomic bool claim_lock; /* claim_lock_ns > 0: held for one claim */
	/* claim_lock_ns > 0: rounds in progress now, and the most ever at once (stats' lock_holders_max:
	 * 1 while the lock serialises them); on the lock's line, which every round moves anyway */
	_Atomic unsigned holders, holders_max;
	/* threads_low > 0, the thread count: workers [0, active) claim; 0 while a shrink waits for
	 * every worker to stop; `target` is what its relaunch starts; `gen` counts shrinks */
	struct sb_rt *rt;
	_Alignas(SB_CACHELINE) _Atomic unsigned active;
	_Atomic unsigned target;
	_Atomic uint32_t gen;
	_Atomic uint64_t nr_changes, nr_relaunch;
	_Alignas(SB_CACHELINE) _Atomic uint64_t njobs; /* every job_start writes it: a line of its own */
	struct global_worker *w;
};

/* global.c */
size_t global_queued(void *st, int w);

/* global_threads.c: threads_low, the thread count changed at run time, and the idle step */
void global_threads_job_start(struct global *g);
bool global_may_claim(struct global *g, unsigned self);
struct sb_task *global_idle(void *st, unsigned self, struct sb_idle *out);

/* global_tokens.c: producer tokens, per thread or per job, and the external threads */
struct sb_fifo *global_token_queue(struct global *g, struct sb_thread *caller, const struct sb_task *t);
void global_token_job_start(struct global *g, struct sb_job *j, struct sb_thread *caller);
struct sb_task *global_help(void *st, struct sb_thread *caller);

#endif
