/*
 * global.c - `global`: DuckDB's TaskScheduler (memo 002), with Quartz's batch acquisition
 * (memo 003) as an option.
 *
 * Owns. One shared task queue, optional per-producer sub-queues and a per-worker claim buffer.
 * Does not own waiting: DuckDB's workers block on a lightweight semaphore; here submit answers
 * SB_TO_ANY and the core wakes one suspended worker, so the semaphore is the core's. Nothing is
 * stolen. Conditional tasks go to the watcher; sticky tasks need no placement (the core's
 * transaction lock keeps them apart). Yielded tasks (DuckDB's TASK_NOT_FINISHED) and resumed
 * ones (TASK_BLOCKED, then rescheduled) come back through submit like new ones.
 *
 * Algorithm. Every thread pushes to one unbounded lock-free MPMC queue (sb_fifo, in place of
 * DuckDB's moodycamel ConcurrentQueue, which is unbounded too) and every worker pops from it.
 *
 * producer_tokens=true: each submitting thread gets a sub-queue of its own, so one producer's
 * tasks stay FIFO among themselves, as with DuckDB's producer tokens; token_scope=job makes the
 * token the job's (a DuckDB query's), and external_threads lets a waiting request thread run
 * what its token queued: global_tokens.c has all three. Consumers visit the shared queue and
 * the sub-queues in use round robin, each worker from its own position, and move past a queue
 * after claiming from it, so a busy producer cannot starve the others.
 *
 * batch=N (Quartz's batchTriggerAcquisitionMaxCount, default 1): a worker claims up to N
 * tasks with one CAS (sb_fifo_pop_batch) into a private buffer and hands them out one per pop
 * before it claims again. The experiment: fewer claims per task, at the price of balance,
 * since buffered tasks wait for their worker while others may idle. `stats` reports claims and
 * tasks per claim.
 *
 * claim_lock_ns=T (Quartz's lock-bound acquisition; 0, the default, keeps claims lock-free):
 * Quartz's scheduler threads acquire due triggers inside one database lock round (the
 * TRIGGER_ACCESS row lock, held across the acquisition query), so claims are serialised and
 * each costs a round trip; batching amortises that round over N triggers. Here a claim takes
 * the policy's claim lock, spends T ns of work under it (sb_work_ns: the query, charged in
 * virtual time too) and then claims up to `batch` tasks. A policy never waits, so a worker that
 * finds the lock taken gets no task from pop (counted as lock_busy) and the core calls again;
 * while a queue holds tasks, `idle` keeps such a worker awake (stay_awake) rather than letting
 * it suspend, as Quartz's threads wait on the lock instead of sleeping. A lock round starts only
 * when some queue looks non-empty, so idle workers do not take turns at the lock.
 *
 * threads_low=N (DuckDB's SET threads at run time; 0, the default, keeps the count fixed):
 * every resize_every jobs the thread count alternates between thread_count and N, and only
 * workers [0, active) claim; global_threads.c has it, with the idle step.
 *
 * Invariants. A queued task is in exactly one place, one queue or one worker's buffer, and is
 * handed out once; each queue is FIFO in claim order (with a single consumer that is submission
 * order per producer); every buffered task is counted in queued(worker).
 * With claim_lock_ns, at most one claim is in progress at a time (lock_rounds = claims +
 * the rounds that found the queues emptied meanwhile; lock_holders_max, the most rounds ever in
 * progress at once, is 1).
 * With threads_low, a worker at or beyond `active` claims nothing (global_threads.c).
 *
 * Limits. Buffers are never stolen from, so with stall_limit set a buffer stuck behind a task
 * that runs longer than the limit while others idle is reported as a stall (it is one);
 * DuckDB's idle allocator flushes are not modelled. The queues are unbounded, as DuckDB's are:
 * no task is ever refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "global_impl.h"

#define P struct global_params
static const struct sb_param global_param_table[] = {
	SB_PARAM_BOOL(P, producer_tokens, 0, "one FIFO sub-queue per submitting thread (DuckDB producer tokens)"),
	SB_PARAM_INT(P, producer_slots, 64, 1, 4096,
		     "sub-queues made at start; threads with a larger attach id use the shared queue"),
	SB_PARAM_INT(P, batch, 1, 1, 1024, "tasks a worker claims at once (Quartz batchTriggerAcquisitionMaxCount)"),
	SB_PARAM_INT(P, claim_lock_ns, 0, 0, 100000000,
		     "work done under one shared lock per claim (Quartz's lock round); 0: lock-free claims"),
	SB_PARAM_INT(P, threads_low, 0, 0, 1023,
		     "DuckDB's SET threads at run time: alternate between thread_count and this many; 0: never"),
	SB_PARAM_INT(P, resize_every, 10000, 100, 1000000000, "jobs between two changes of the thread count"),
	SB_PARAM_ENUM(P, token_scope, GLOBAL_TOKEN_THREAD, global_token_scopes,
		      "whose producer token a task uses: its submitting thread's, or its job's (a DuckDB query's)"),
	SB_PARAM_BOOL(P, external_threads, 0, "a request thread waiting for its job runs tasks from its own "
		      "producer queue (DuckDB's external threads); needs producer_tokens"),
	SB_PARAM_END,
};
#undef P

static void global_destroy(void *st);

static int global_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	const struct global_params *p = params;
	struct global *g = sb_alloc_lines(sizeof *g);
	if (!g)
		goto oom;
	g->p = *p;
	g->nworkers = sb_nworkers(rt);
	g->nq = 1 + (p->producer_tokens ? (unsigned)p->producer_slots : 0);
	atomic_init(&g->span, 1);
	atomic_init(&g->claim_lock, false);
	atomic_init(&g->holders, 0);
	atomic_init(&g->holders_max, 0);
	g->rt = rt;
	atomic_init(&g->active, g->nworkers);
	atomic_init(&g->target, g->nworkers);
	if (p->threads_low && (unsigned)p->threads_low >= g->nworkers) {
		int r = sb_policy_error(err, errlen, -EINVAL, "threads_low=%lld: must be below thread_count (%u), "
					"or 0 for a fixed count", (long long)p->threads_low, g->nworkers);
		global_destroy(g);
		return r;
	}
	if (p->token_scope == GLOBAL_TOKEN_JOB && !p->producer_tokens) {
		int r = sb_policy_error(err, errlen, -EINVAL, "token_scope=job needs producer_tokens=true");
		global_destroy(g);
		return r;
	}
	if (p->external_threads && (!p->producer_tokens || p->claim_lock_ns)) {
		int r = sb_policy_error(err, errlen, -EINVAL, "external_threads=true needs producer_tokens=true and "
					"claim_lock_ns=0 (a waiting thread takes from its own producer queue, "
					"outside the claim lock)");
		global_destroy(g);
		return r;
	}
	g->q = sb_alloc_lines(g->nq * sizeof *g->q);
	g->w = sb_alloc_lines(g->nworkers * sizeof *g->w);
	if (!g->q || !g->w)
		goto oom;
	for (unsigned i = 0; i < g->nq; i++)
		if (sb_fifo_init(&g->q[i]))
			goto oom;
	for (unsigned i = 0; i < g->nworkers; i++)
		if (!(g->w[i].buf = malloc((size_t)p->batch * sizeof *g->w[i].buf)))
			goto oom;
	*state = g;
	return 0;
oom:
	global_destroy(g);
	snprintf(err, errlen, "out of memory creating the global queues (producer_slots=%lld)",
		 (long long)p->producer_slots);
	return -ENOMEM;
}

static void global_destroy(void *st)
{
	struct global *g = st;
	if (!g)
		return;
	if (g->q)
		for (unsigned i = 0; i < g->nq; i++)
			sb_fifo_fini(&g->q[i]);
	if (g->w)
		for (unsigned i = 0; i < g->nworkers; i++)
			free(g->w[i].buf);
	free(g->q);
	free(g->w);
	free(g);
}

static int global_submit(void *st, struct sb_thread *caller, struct sb_task *t)
{
	struct global *g = st;
	if (t->flags & SB_TF_COND)
		return SB_TO_WATCHER;
	struct sb_fifo *q = g->p.producer_tokens ? global_token_queue(g, caller, t) : &g->q[0];
	sb_fifo_push(q, t);
	return SB_TO_ANY;
}

static void add_own(_Atomic uint64_t *c, uint64_t n)
{
	/* owner-only counter: relaxed load+store (no locked instruction), read relaxed by stats */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

/* Also the policy's own "does any queue look non-empty" (w = -1): relaxed lengths, a hint; see
 * global_idle for the decisions that rest on it. */
size_t global_queued(void *st, int w)
{
	struct global *g = st;
	if (w >= 0)
		return atomic_load_explicit(&g->w[w].nbuf, memory_order_relaxed);
	size_t n = 0;
	unsigned span = atomic_load_explicit(&g->span, memory_order_relaxed);
	for (unsigned i = 0; i < span; i++)
		n += sb_fifo_len(&g->q[i]);
	return n;
}

/* Claim up to batch tasks from the first non-empty queue, round robin from me->pos. */
static inline __attribute__((always_inline)) struct sb_task *claim(struct global *g, struct global_worker *me)
{
	/* relaxed: see token_queue for why a stale span is harmless */
	unsigned span = atomic_load_explicit(&g->span, memory_order_relaxed);
	for (unsigned k = 0; k < span; k++) {
		unsigned i = (me->pos + k) % span;
		unsigned got = sb_fifo_pop_batch(&g->q[i], me->buf, (unsigned)g->p.batch);
		if (!got)
			continue;
		me->pos = i + 1;
		me->head = 1;
		me->n = got;
		atomic_store_explicit(&me->nbuf, got - 1, memory_order_relaxed);
		add_own(&me->nr_claims, 1);
		add_own(&me->nr_claimed, got);
		return me->buf[0];
	}
	return NULL;
}

static struct sb_task *global_pop(void *st, unsigned self)
{
	struct global *g = st;
	struct global_worker *me = &g->w[self];
	if (me->head < me->n) {
		struct sb_task *t = me->buf[me->head++];
		atomic_store_explicit(&me->nbuf, me->n - me->head, memory_order_relaxed);
		return t;
	}
	if (g->p.threads_low && !global_may_claim(g, self))
		return NULL;
	if (__builtin_expect(!g->p.claim_lock_ns, 1))
		return claim(g, me);
	if (!global_queued(g, -1))
		return NULL;
	/* test, then test-and-set. acquire: pairs with the release store below, so one round's
	 * claim happens after the previous holder's; the lock guards no memory of its own (the
	 * queues are lock-free), it serialises the rounds as Quartz's row lock does. */
	if (atomic_load_explicit(&g->claim_lock, memory_order_relaxed) ||
	    atomic_exchange_explicit(&g->claim_lock, true, memory_order_acquire)) {
		add_own(&me->nr_busy, 1);
		return NULL;
	}
	add_own(&me->nr_rounds, 1);
	/* Rounds in progress, for lock_holders_max. relaxed: the lock orders these for its holders;
	 * were it broken, the RMWs of overlapping rounds still meet in holders' one modification
	 * order (the later sees the earlier's 1), and the CAS keeps the larger maximum whatever the
	 * interleaving; it is read after the workers stop. It runs only when the maximum grows:
	 * once per run while the lock holds. */
	unsigned in = atomic_fetch_add_explicit(&g->holders, 1, memory_order_relaxed) + 1;
	unsigned mx = atomic_load_explicit(&g->holders_max, memory_order_relaxed);
	while (in > mx && !atomic_compare_exchange_weak_explicit(&g->holders_max, &mx, in, memory_order_relaxed,
								 memory_order_relaxed))
		;
	sb_work_ns((uint64_t)g->p.claim_lock_ns);
	struct sb_task *t = claim(g, me);
	atomic_fetch_sub_explicit(&g->holders, 1, memory_order_relaxed);
	/* release: pairs with the acquire exchange of the next holder */
	atomic_store_explicit(&g->claim_lock, false, memory_order_release);
	return t;
}

static void global_stats(void *st, sb_stat_emit_fn emit, void *ctx)
{
	struct global *g = st;
	uint64_t claims = 0, claimed = 0, rounds = 0, busy = 0;
	for (unsigned i = 0; i < g->nworkers; i++) {
		claims += atomic_load_explicit(&g->w[i].nr_claims, memory_order_relaxed);
		claimed += atomic_load_explicit(&g->w[i].nr_claimed, memory_order_relaxed);
		rounds += atomic_load_explicit(&g->w[i].nr_rounds, memory_order_relaxed);
		busy += atomic_load_explicit(&g->w[i].nr_busy, memory_order_relaxed);
	}
	emit(ctx, "claims", (double)claims);
	emit(ctx, "tasks_claimed", (double)claimed);
	emit(ctx, "tasks_per_claim", claims ? (double)claimed / (double)claims : 0.0);
	emit(ctx, "token_fallbacks", (double)atomic_load_explicit(&g->nr_fallback, memory_order_relaxed));
	emit(ctx, "queues_in_use", (double)atomic_load_explicit(&g->span, memory_order_relaxed));
	if (g->p.claim_lock_ns) {
		emit(ctx, "lock_rounds", (double)rounds);
		emit(ctx, "lock_busy", (double)busy);
		emit(ctx, "lock_holders_max", (double)atomic_load_explicit(&g->holders_max, memory_order_relaxed));
	}
	if (g->p.threads_low) {
		emit(ctx, "thread_changes", (double)atomic_load_explicit(&g->nr_changes, memory_order_relaxed));
		emit(ctx, "relaunches", (double)atomic_load_explicit(&g->nr_relaunch, memory_order_relaxed));
		emit(ctx, "active_threads", (double)atomic_load_explicit(&g->active, memory_order_relaxed));
	}
}

static void global_job_start(void *st, struct sb_job *j, struct sb_thread *caller)
{
	global_token_job_start(st, j, caller);
	global_threads_job_start(st);
}

const struct sb_policy_ops global_ops = {
	.create = global_create,
	.destroy = global_destroy,
	.submit = global_submit,
	.job_start = global_job_start,
	.pop = global_pop,
	.idle = global_idle,
	.help = global_help,
	.queued = global_queued,
	.stats = global_stats,
	.name = "global",
	.description = "DuckDB's TaskScheduler (memo 002): one global lock-free queue, optional producer tokens "
		       "and Quartz batch claims, lock-free or lock-bound (memo 003)",
	.version = 1,
	.params = global_param_table,
	.params_size = sizeof(struct global_params),
};
