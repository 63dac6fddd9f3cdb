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
 * every resize_every jobs (counted in job_start, so the schedule is the same for every run of a
 * seed) the thread count alternates between thread_count and N, starting with a shrink. Only
 * workers [0, active) claim. A grow raises `active` at once (DuckDB launches the extra threads)
 * and asks the core to wake a sleeper. A shrink does what DuckDB's RelaunchThreads does: it
 * stops every thread, joining each after its current task, and then launches N. Here `active`
 * drops to 0, so nobody claims, and each worker acknowledges the stop (seen_gen) when it comes
 * back for work; once every worker has acknowledged or sleeps, the last one relaunches: active
 * becomes N. Until then queued tasks wait: that wait is the price of a shrink. A worker beyond
 * `active` claims nothing; when it is woken (the core wakes any sleeper for a new task) or
 * finds tasks queued, it passes the wake-up on to a sleeping worker below `active` (idle:
 * out->wake), so a task never waits on an inactive worker while an active one sleeps, and it
 * suspends at once (out->suspend_now) instead of polling.
 *
 * Invariants. A queued task is in exactly one place, one queue or one worker's buffer, and is
 * handed out once; each queue is FIFO in claim order (with a single consumer that is submission
 * order per producer); every buffered task is counted in queued(worker).
 * With claim_lock_ns, at most one claim is in progress at a time (lock_rounds = claims +
 * the rounds that found the queues emptied meanwhile).
 * With threads_low, a worker at or beyond `active` claims nothing (its buffer, claimed before
 * the change, is still run). The stop of a shrink is DuckDB's, not a barrier: a claim that read
 * the old count just before the stop may still take a task (as a DuckDB thread finishes the
 * loop it is in), and a worker in its re-check before suspending reads as stopped, so the
 * relaunch may come while it runs a task claimed in that re-check.
 *
 * Limits. Buffers are never stolen from, so with stall_limit set a buffer stuck behind a task
 * that runs longer than the limit while others idle is reported as a stall (it is one); the
 * thread count changes on a job-count schedule, not on a client's command, and threads are not
 * created or joined (the stopped ones sleep): the price of a shrink measured is the stop, not
 * thread creation; in check mode a shrink that waits behind a task longer than stall_limit is
 * reported as a stall (tasks queued while workers rest); DuckDB's idle allocator flushes are
 * not modelled. The queues are unbounded, as DuckDB's are: no task is ever refused.
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
	int64_t claim_lock_ns;
	int64_t threads_low;
	int64_t resize_every;
};

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
	g->rt = rt;
	atomic_init(&g->active, g->nworkers);
	atomic_init(&g->target, g->nworkers);
	if (p->threads_low && (unsigned)p->threads_low >= g->nworkers) {
		int r = sb_policy_error(err, errlen, -EINVAL, "threads_low=%lld: must be below thread_count (%u), "
					"or 0 for a fixed count", (long long)p->threads_low, g->nworkers);
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

/* Also the policy's own "does any queue look non-empty" (w = -1): relaxed lengths, a hint; see
 * global_idle for the decisions that rest on it. */
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

/* ---- threads_low: the thread count changed at run time (see the file comment) ---- */

/*
 * The boundary job of each resize_every changes the count: odd boundaries shrink, even ones
 * grow. One thread reaches each boundary (the fetch_add), and resize_every >= 100 keeps two
 * boundaries from overlapping in practice; if they did, the later target would simply win.
 */
static void global_job_start(void *st, struct sb_job *j, struct sb_thread *caller)
{
	(void)j;
	(void)caller;
	struct global *g = st;
	if (!g->p.threads_low)
		return;
	/* relaxed: a count; only its value matters */
	uint64_t n = atomic_fetch_add_explicit(&g->njobs, 1, memory_order_relaxed) + 1;
	uint64_t every = (uint64_t)g->p.resize_every;
	if (n % every)
		return;
	bool shrink = (n / every) % 2 == 1;
	unsigned to = shrink ? (unsigned)g->p.threads_low : g->nworkers;
	atomic_fetch_add_explicit(&g->nr_changes, 1, memory_order_relaxed);
	/* seq_cst, the target and a grow's load of active: against a relaunch that sets active
	 * and then reads target (see relaunch), one side sees the other's store */
	atomic_store_explicit(&g->target, to, memory_order_seq_cst);
	if (shrink) {
		atomic_fetch_add_explicit(&g->gen, 1, memory_order_relaxed);
		/* release: pairs with the acquire load in may_claim, so a worker that sees the stop
		 * sees this shrink's gen and target too */
		atomic_store_explicit(&g->active, 0, memory_order_release);
		return;
	}
	/* a grow: start the extra workers now, unless a shrink's relaunch is pending (it starts
	 * `target`) */
	unsigned a = atomic_load_explicit(&g->active, memory_order_seq_cst);
	while (a && !atomic_compare_exchange_weak_explicit(&g->active, &a, to, memory_order_seq_cst,
							   memory_order_seq_cst))
		;
	sb_work_available(g->rt); /* a sleeper may now claim what waits */
}

/*
 * A shrink is pending (active == 0): acknowledge it, and relaunch if every other worker has
 * acknowledged it too or sleeps (a sleeping worker runs no task). seq_cst on the ack and the
 * loads of the others': two workers finishing their last tasks together must not both miss the
 * other's ack (store buffering), or neither would relaunch and the queue would wait for the
 * next submit's wake-up. Returns whether self may claim after it.
 */
static bool relaunch(struct global *g, unsigned self)
{
	/* relaxed: ordered after the acquire load of active == 0 that brought us here */
	uint32_t gen = atomic_load_explicit(&g->gen, memory_order_relaxed);
	atomic_store_explicit(&g->w[self].seen_gen, gen, memory_order_seq_cst);
	for (unsigned v = 0; v < g->nworkers; v++)
		if (v != self && atomic_load_explicit(&g->w[v].seen_gen, memory_order_seq_cst) != gen &&
		    !sb_worker_suspended(g->rt, v))
			return false; /* v is still in a task it took before the stop */
	unsigned stopped = 0, to = atomic_load_explicit(&g->target, memory_order_seq_cst);
	/* one of the workers that get here relaunches, the others see its count */
	if (atomic_compare_exchange_strong_explicit(&g->active, &stopped, to, memory_order_seq_cst,
						    memory_order_relaxed)) {
		atomic_fetch_add_explicit(&g->nr_relaunch, 1, memory_order_relaxed);
		/* A grow that stored its target after our load saw active == 0 and left the count to
		 * us (seq_cst on both sides: it sees our count, or we see its target). Follow the
		 * target until it holds still; a CAS that fails means a grow or a new shrink has
		 * already set the count itself. */
		for (;;) {
			unsigned now = atomic_load_explicit(&g->target, memory_order_seq_cst), was = to;
			if (now == to || !atomic_compare_exchange_strong_explicit(&g->active, &was, now,
										  memory_order_seq_cst,
										  memory_order_relaxed))
				break;
			to = now;
		}
		sb_work_available(g->rt); /* the stopped workers slept: one wakes to look at the queue */
	}
	return self < atomic_load_explicit(&g->active, memory_order_relaxed);
}

static bool may_claim(struct global *g, unsigned self)
{
	/* acquire: pairs with the release store of a shrink (see global_job_start) */
	unsigned a = atomic_load_explicit(&g->active, memory_order_acquire);
	if (self < a)
		return true;
	return a ? false : relaunch(g, self);
}

/* The first sleeping worker below the count, to pass a wake-up on to; -1 if none sleeps. */
static int active_sleeper(struct global *g, unsigned active)
{
	for (unsigned v = 0; v < active; v++)
		if (sb_worker_suspended(g->rt, v))
			return (int)v;
	return -1;
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
	if (g->p.threads_low && !may_claim(g, self))
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
	sb_work_ns((uint64_t)g->p.claim_lock_ns);
	struct sb_task *t = claim(g, me);
	/* release: pairs with the acquire exchange of the next holder */
	atomic_store_explicit(&g->claim_lock, false, memory_order_release);
	return t;
}

/*
 * Out of work with claim_lock_ns set: while a queue holds tasks, stay awake and try the lock
 * again (the holder claims at most `batch` and may leave the rest). Whether the queues are
 * empty is read relaxed and may be stale: read empty while a task is being pushed, we may
 * suspend, and the push's own wake-up covers us (the core's wake protocol, as for any
 * SB_TO_ANY submit); read non-empty after the last task is taken, we poll once more.
 */
static struct sb_task *global_idle(void *st, unsigned self, struct sb_idle *out)
{
	struct global *g = st;
	if (g->p.threads_low) {
		/* relaxed: a stale count only moves a wake-up to a worker that finds nothing, or
		 * lets this one poll once more */
		unsigned a = atomic_load_explicit(&g->active, memory_order_relaxed);
		if (self >= a) { /* a == 0: stopped by a shrink, whose last worker back relaunches */
			/* Beyond the count with tasks queued: we may have been woken for them, or a
			 * producer left them to us as a searcher; hand the wake-up to an active
			 * sleeper. Only from the re-check before suspending (we read as suspended
			 * there), which runs after the barrier (W) and so sees every task queued
			 * before a producer counted us: one hand-off per visit, not two. */
			if (a && sb_worker_suspended(g->rt, self) && global_queued(g, -1))
				out->wake = active_sleeper(g, a);
			/* a stopped thread does not poll: suspend without the empty rounds, or every
			 * wake-up that lands here would spin a core DuckDB's smaller pool does not have */
			out->suspend_now = true;
			return NULL;
		}
	}
	/* Quartz's threads wait on the row lock asleep in the database, not on a core: a waiter
	 * that kept its core would starve the holder whenever threads outnumber cores (24 workers on
	 * 2 cores took 81 s to drop 1,056 cancelled tasks), so it yields between tries */
	if (g->p.claim_lock_ns && global_queued(g, -1))
		out->stay_awake = out->yield = true;
	return NULL;
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
	}
	if (g->p.threads_low) {
		emit(ctx, "thread_changes", (double)atomic_load_explicit(&g->nr_changes, memory_order_relaxed));
		emit(ctx, "relaunches", (double)atomic_load_explicit(&g->nr_relaunch, memory_order_relaxed));
		emit(ctx, "active_threads", (double)atomic_load_explicit(&g->active, memory_order_relaxed));
	}
}

const struct sb_policy_ops global_ops = {
	.create = global_create,
	.destroy = global_destroy,
	.submit = global_submit,
	.job_start = global_job_start,
	.pop = global_pop,
	.idle = global_idle,
	.queued = global_queued,
	.stats = global_stats,
	.name = "global",
	.description = "DuckDB's TaskScheduler (memo 002): one global lock-free queue, optional producer tokens "
		       "and Quartz batch claims, lock-free or lock-bound (memo 003)",
	.version = 1,
	.params = global_param_table,
	.params_size = sizeof(struct global_params),
};
