/*
 * global.c - `global`: DuckDB's TaskScheduler (memo 002), with Quartz's batch acquisition
 * (memo 003) as an option.
 *
 * Owns one shared task queue, optional per-producer sub-queues and a per-worker claim buffer.
 * Does not own waiting: DuckDB's workers block on a lightweight semaphore; here submit answers
 * SB_TO_ANY and the core wakes one suspended worker, so the semaphore is the core's. Nothing is
 * stolen. Conditional tasks go to the watcher; sticky tasks need no placement (the core's
 * transaction lock keeps them apart). Yielded tasks (DuckDB's TASK_NOT_FINISHED) and resumed
 * ones (TASK_BLOCKED, then rescheduled) come back through submit like new ones.
 *
 * Algorithm. Every thread pushes to one unbounded lock-free MPMC queue (sb_fifo, in place of
 * DuckDB's moodycamel ConcurrentQueue, which is unbounded too) and every worker pops from it.
 *
 * producer_tokens=true: each submitting thread gets a sub-queue of its own, indexed by its
 * attach id (sb_thread_id: small, dense, stable), so one producer's tasks stay FIFO among
 * themselves, as with DuckDB's producer tokens. The table has producer_slots entries made at
 * create, so a sub-queue never has to come into existence on the submit path (no allocation,
 * no lock); a thread whose id is beyond the table uses the shared queue instead, counted as
 * token_fallbacks. A task that comes back (yield, resume) joins the sub-queue of the thread
 * that re-submits it. Consumers visit the shared queue and the sub-queues in use round robin,
 * each worker from its own position, and move past a queue after claiming from it, so a busy
 * producer cannot starve the others.
 *
 * batch=N (Quartz's batchTriggerAcquisitionMaxCount, default 1): a worker claims up to N
 * tasks with one CAS (sb_fifo_pop_batch) into a private buffer and hands them out one per pop
 * before it claims again. The experiment: fewer claims per task, at the price of balance,
 * since buffered tasks wait for their worker while others may idle. `stats` reports claims and
 * tasks per claim.
 *
 * Invariants: a queued task is in exactly one place, one queue or one worker's buffer, and is
 * handed out once; each queue is FIFO in claim order (with a single consumer that is submission
 * order per producer); every buffered task is counted in queued(worker).
 * Limits: buffers are never stolen from, so with stall_limit set a buffer stuck behind a task
 * that runs longer than the limit while others idle is reported as a stall (it is one); DuckDB's
 * dynamic thread count and its idle allocator flushes are not modelled. The queues are unbounded,
 * as DuckDB's are: no task is ever refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/policy.h"
#include "../core/queue.h"

struct global_params {
	bool producer_tokens;
	int64_t producer_slots;
	int64_t batch;
};

#define P struct global_params
static const struct sb_param global_param_table[] = {
	SB_PARAM_BOOL(P, producer_tokens, 0, "one FIFO sub-queue per submitting thread (DuckDB producer tokens)"),
	SB_PARAM_INT(P, producer_slots, 64, 1, 4096,
		     "sub-queues made at start; threads with a larger attach id use the shared queue"),
	SB_PARAM_INT(P, batch, 1, 1, 1024, "tasks a worker claims at once (Quartz batchTriggerAcquisitionMaxCount)"),
	SB_PARAM_END,
};
#undef P

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
	struct global_worker *w;
};

static void global_destroy(void *st);

static size_t round_line(size_t n)
{
	return (n + SB_CACHELINE - 1) / SB_CACHELINE * SB_CACHELINE;
}

static int global_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	const struct global_params *p = params;
	struct global *g = aligned_alloc(SB_CACHELINE, round_line(sizeof *g));
	if (!g)
		goto oom;
	memset(g, 0, sizeof *g);
	g->p = *p;
	g->nworkers = sb_nworkers(rt);
	g->nq = 1 + (p->producer_tokens ? (unsigned)p->producer_slots : 0);
	atomic_init(&g->span, 1);
	size_t qsz = round_line(g->nq * sizeof *g->q);
	size_t wsz = round_line(g->nworkers * sizeof *g->w);
	g->q = aligned_alloc(SB_CACHELINE, qsz);
	g->w = aligned_alloc(SB_CACHELINE, wsz);
	if (!g->q || !g->w)
		goto oom;
	memset(g->q, 0, qsz);
	memset(g->w, 0, wsz);
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

/* The caller's own sub-queue, or the shared one when its id is beyond the table. */
static struct sb_fifo *token_queue(struct global *g, struct sb_thread *caller)
{
	unsigned id = sb_thread_id(caller);
	if (id + 1 >= g->nq) {
		atomic_fetch_add_explicit(&g->nr_fallback, 1, memory_order_relaxed);
		return &g->q[0];
	}
	/*
	 * Make the consumers' scan cover q[id + 1]. Relaxed: a consumer that reads an old span
	 * only skips this queue for one scan. The case that matters, a worker about to suspend,
	 * is covered by the core's wake protocol: this store comes before our push and the
	 * core's barrier (P) after it, and the worker's re-check pop comes after its barrier (W),
	 * so either the re-check sees span and task, or we see the worker asleep and wake one.
	 */
	unsigned span = atomic_load_explicit(&g->span, memory_order_relaxed);
	/* a failed CAS means another producer raised span; span only grows, so this ends */
	while (span < id + 2 &&
	       !atomic_compare_exchange_weak_explicit(&g->span, &span, id + 2, memory_order_relaxed,
						      memory_order_relaxed))
		;
	return &g->q[id + 1];
}

static int global_submit(void *st, struct sb_thread *caller, struct sb_task *t)
{
	struct global *g = st;
	if (t->flags & SB_TF_COND)
		return SB_TO_WATCHER;
	struct sb_fifo *q = g->p.producer_tokens ? token_queue(g, caller) : &g->q[0];
	sb_fifo_push(q, t);
	return SB_TO_ANY;
}

static void add_own(_Atomic uint64_t *c, uint64_t n)
{
	/* owner-only counter: relaxed load+store (no locked instruction), read relaxed by stats */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
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

static size_t global_queued(void *st, int w)
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

static void global_stats(void *st, sb_stat_emit_fn emit, void *ctx)
{
	struct global *g = st;
	uint64_t claims = 0, claimed = 0;
	for (unsigned i = 0; i < g->nworkers; i++) {
		claims += atomic_load_explicit(&g->w[i].nr_claims, memory_order_relaxed);
		claimed += atomic_load_explicit(&g->w[i].nr_claimed, memory_order_relaxed);
	}
	emit(ctx, "claims", (double)claims);
	emit(ctx, "tasks_claimed", (double)claimed);
	emit(ctx, "tasks_per_claim", claims ? (double)claimed / (double)claims : 0.0);
	emit(ctx, "token_fallbacks", (double)atomic_load_explicit(&g->nr_fallback, memory_order_relaxed));
	emit(ctx, "queues_in_use", (double)atomic_load_explicit(&g->span, memory_order_relaxed));
}

const struct sb_policy_ops global_ops = {
	.create = global_create,
	.destroy = global_destroy,
	.submit = global_submit,
	.pop = global_pop,
	.queued = global_queued,
	.stats = global_stats,
	.name = "global",
	.description = "DuckDB's TaskScheduler (memo 002): one global lock-free queue, optional producer tokens "
		       "and Quartz batch claims (memo 003)",
	.version = 1,
	.params = global_param_table,
	.params_size = sizeof(struct global_params),
};
