/*
 * priority.c - `priority`: Nebula Graph's task manager (memo 004). Jobs wait as handles in
 * queues ordered by priority; each job keeps its subtasks in a queue of its own, which up to N
 * workers serve at once.
 *
 * Owns. The handle queues (one per clamped priority level), the per-job state (job->pdata: the
 * subtask queue and the job's handles; taken from the policy's pool in job_start, back to it
 * with the last reference) and the handle each worker holds. Does not own waiting and
 * wake-ups (the core's), the cancellation mark and the dropping of cancelled tasks (the core's:
 * sb_job_cancel marks the job, and the core drops its tasks as they reach it), or sticky
 * exclusion (the core's transaction lock).
 *
 * Algorithm. As in memo 004, "solution three". Every task of a job is a subtask and goes to the
 * job's queue (an unbounded sb_fifo). A *handle* is a marker entry (SB_TF_MARKER, owned by the
 * per-job state, never returned to the core) queued at the job's level: job->priority clamped
 * to -max_priority..max_priority, higher levels first, FIFO within a level. A worker that takes
 * a handle serves that job: each pop returns the job's next subtask, and when the job's queue
 * is empty the worker drops the handle. A job has at most N handles out (queued or held),
 * N = min(job->concurrency, or the `concurrency` parameter when the job gives 0; the workers;
 * 64), and one more is put out only while fewer than the job's queued subtasks are out: N
 * follows the workers, the subtasks and the per-job parameter, as the memo asks.
 * A worker puts its handle back at the tail of its level when a task of the job comes back
 * unfinished (SB_YIELD, which DuckDB re-enqueues at once: here the job is what queues, so jobs
 * it may be waiting for get a turn) and, with yield_to_higher, when a handle of a higher level
 * is waiting, so a VIP job overtakes between two subtasks instead of after a whole job.
 * Cancellation and the per-job state's lifetime: priority_job.c.
 *
 * Teardown and shutdown. A job's first teardown task goes to a front queue served before
 * anything (nothing of its job is left to run, and it carries the response); one that found
 * its job unfinished comes back with SB_TF_AGAIN and joins the job's queue, behind the work it
 * waits for. sb_rt_stop returns only after every teardown, a teardown only after the job's
 * count reaches zero, and running subtasks are in that count; the core never interrupts a
 * body, so running subtasks finish before the workers stop (after a CANCEL stop, the queued
 * ones are handed out and dropped). Conditional tasks go to the watcher.
 *
 * Invariants. A subtask is in exactly one queue and is returned once; at most N subtasks of a
 * job run at once (the cancel handle only feeds the core tasks it drops); a job with queued
 * subtasks has a handle out; markers never leave the policy.
 *
 * Limits. The queues are unbounded (sb_fifo), so neither a subtask nor a handle is ever
 * refused (Nebula's queues refuse nothing either); a task spawned into a job before
 * sb_job_submit runs on its submitter (unstarted). queued() reports teardowns and handles,
 * not subtasks: a subtask held back by its job's limit while workers idle is not a stall.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "priority_impl.h"

#define P struct priority_params
static const struct sb_param priority_param_table[] = {
	SB_PARAM_INT(P, max_priority, 4, 0, 31, "priorities are clamped to -max..max; one handle queue per level"),
	SB_PARAM_INT(P, concurrency, 0, 0, 1024,
		     "workers serving one job at once when the job gives 0; 0 = all (at most 64)"),
	SB_PARAM_BOOL(P, yield_to_higher, 1, "a worker puts its job back when a higher-priority job is waiting"),
	SB_PARAM_END,
};
#undef P

/* ---- serving ---- */

/* The held job's next subtask; on an empty queue, drop the handle (the Dekker pair: priority_impl.h). */
static struct sb_task *serve(struct priority_worker *me)
{
	struct sb_task *h = me->held;
	struct priority_job *pj = job_of(h);
	struct sb_task *t = sb_fifo_pop(&pj->q);
	if (t) {
		me->fresh = false;
		return t;
	}
	me->held = NULL;
	if (h->pint == HANDLE_SERVER) {
		/* release: our last use of the marker happens before its next taker's acquire CAS */
		atomic_fetch_or_explicit(&pj->free, 1ull << (h - pj->markers), memory_order_release);
		/* (D): pairs with (S) in priority_submit; see the file comment */
		atomic_thread_fence(memory_order_seq_cst);
		size_t len = sb_fifo_len(&pj->q);
		if (len && (h = server_add(pj, len < pj->limit ? (unsigned)len : pj->limit))) {
			/* a subtask came in meanwhile: serve it ourselves, keeping our reference. If
			 * its producer has not published it yet, we hold the handle and stay awake. */
			bump(&me->nr_retakes);
			me->held = h;
			me->fresh = false;
			return sb_fifo_pop(&pj->q);
		}
	}
	if (me->fresh)
		bump(&me->nr_stale); /* a handle skipped: its job's queue was drained by others */
	job_unref(pj);
	return NULL;
}

static struct sb_task *priority_pop(void *st, unsigned self)
{
	struct priority *pr = st;
	struct priority_worker *me = &pr->w[self];
	struct sb_task *t = sb_fifo_pop(&pr->front);
	if (t)
		return t;
	if (me->held && me->rotate) {
		/* a task of this job yielded: the job goes to the back of its level, so that jobs
		 * it may be waiting for get a turn (DuckDB re-enqueues an unfinished task at once;
		 * here its job is what queues) */
		push_handle(pr, me->held_level, me->held);
		bump(&me->nr_rotations);
		me->held = NULL;
	}
	if (me->held) {
		if (pr->p.yield_to_higher && me->held_level < pr->nlevels) {
			struct sb_task *h = take_handle(pr, me->held_level + 1);
			if (h) {
				push_handle(pr, me->held_level, me->held);
				bump(&me->nr_yields);
				hold(pr, me, h);
			}
		}
		if ((t = serve(me)) || me->held)
			return t;
	}
	/* each round uses up one handle, so this ends when the queues are empty */
	for (;;) {
		struct sb_task *h = take_handle(pr, 0);
		if (!h)
			return NULL;
		hold(pr, me, h);
		if ((t = serve(me)) || me->held)
			return t;
	}
}

static struct sb_task *priority_idle(void *st, unsigned self, struct sb_idle *out)
{
	struct priority *pr = st;
	/* A held handle here means its next subtask is being published: the work is about to be
	 * visible, so poll (the core's loop) instead of suspending. */
	if (pr->w[self].held)
		out->stay_awake = true;
	return NULL;
}

static int priority_submit(void *st, struct sb_thread *caller, struct sb_task *t)
{
	struct priority *pr = st;
	if (t->flags & SB_TF_COND)
		return SB_TO_WATCHER;
	if ((t->flags & (SB_TF_TEARDOWN | SB_TF_AGAIN)) == SB_TF_TEARDOWN) {
		sb_fifo_push(&pr->front, t);
		return SB_TO_ANY;
	}
	struct priority_job *pj = t->job->pdata;
	if (__builtin_expect(!pj, 0)) {
		count(&pr->nr_unstarted);
		return SB_TO_CALLER;
	}
	/*
	 * Once t is pushed it may run and end its job, and job_end may drop the job's reference,
	 * while we still look at pj below. A thread running another task of the same job (the
	 * usual spawn) keeps the job open with that task; any other submitter (a yielded or
	 * resumed task, a request thread, the watcher) holds a reference meanwhile.
	 */
	struct sb_task *cur = sb_current_task();
	bool pin = !cur || cur == t || cur->job != t->job;
	if (pin)
		job_ref(pj);
	bool again = t->flags & SB_TF_AGAIN; /* read now: once pushed, t belongs to its taker */
	int where = SB_TO_NOWAKE;
	sb_fifo_push(&pj->q, t);
	int self = sb_thread_worker(caller);
	/* a worker re-submitting a task of the job it serves is this thread: its own state */
	if (again && self >= 0 && pr->w[self].held && job_of(pr->w[self].held) == pj)
		pr->w[self].rotate = true;
	/* (S): pairs with (D) in serve; see the file comment */
	atomic_thread_fence(memory_order_seq_cst);
	size_t len = sb_fifo_len(&pj->q);
	struct sb_task *h = server_add(pj, len < pj->limit ? (unsigned)len : pj->limit);
	if (h) {
		job_ref(pj);
		push_handle(pr, pj->level, h);
		where = SB_TO_ANY;
	} /* else enough handles are out, and their workers will get to it */
	if (pin)
		job_unref(pj);
	return where;
}

/* ---- lifecycle, introspection ---- */

static void priority_destroy(void *st)
{
	struct priority *pr = st;
	if (!pr)
		return;
	/* Every job has ended; what is left are handles of ended jobs (stale ones, cancel handles
	 * nobody took). Each owns a reference to its job's state. */
	if (pr->w)
		for (unsigned i = 0; i < pr->nworkers; i++)
			if (pr->w[i].held)
				job_unref(job_of(pr->w[i].held));
	struct sb_task *h;
	if (pr->lv) {
		for (unsigned i = 0; i <= pr->nlevels; i++) {
			struct priority_level *l = &pr->lv[i];
			if (!atomic_load_explicit(&l->q.head, memory_order_relaxed))
				continue; /* create failed before this level */
			while ((h = sb_fifo_pop(&l->q)))
				job_unref(job_of(h));
			sb_fifo_fini(&l->q);
		}
	}
	if (atomic_load_explicit(&pr->front.head, memory_order_relaxed))
		sb_fifo_fini(&pr->front);
	priority_pool_fini(pr);
	free(pr->lv);
	free(pr->w);
	free(pr);
}

static int priority_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	const struct priority_params *p = params;
	struct priority *pr = sb_alloc_lines(sizeof *pr);
	if (!pr)
		goto oom;
	pr->p = *p;
	pr->rt = rt;
	pr->nworkers = sb_nworkers(rt);
	pr->nlevels = 2 * (unsigned)p->max_priority + 1;
	priority_pool_init(pr);
	pr->lv = sb_alloc_lines((pr->nlevels + 1) * sizeof *pr->lv);
	pr->w = sb_alloc_lines(pr->nworkers * sizeof *pr->w);
	if (!pr->lv || !pr->w)
		goto oom;
	if (sb_fifo_init(&pr->front))
		goto oom;
	for (unsigned i = 0; i <= pr->nlevels; i++)
		if (sb_fifo_init(&pr->lv[i].q))
			goto oom;
	*state = pr;
	return 0;
oom:
	priority_destroy(pr);
	snprintf(err, errlen, "out of memory creating %lld priority levels", 2 * (long long)p->max_priority + 1);
	return -ENOMEM;
}

static size_t priority_queued(void *st, int w)
{
	struct priority *pr = st;
	if (w >= 0)
		return 0; /* subtasks belong to jobs; no worker owns any */
	/* first teardowns and ordinary handles: each stands for work some worker must take.
	 * Cancel handles are left out: job_cancel cannot ask for a wake-up, and the job's own
	 * handles already answer for its subtasks. */
	size_t n = sb_fifo_len(&pr->front);
	for (unsigned i = 0; i < pr->nlevels; i++)
		n += sb_fifo_len(&pr->lv[i].q);
	return n;
}

static void priority_stats(void *st, sb_stat_emit_fn emit, void *ctx)
{
	struct priority *pr = st;
	uint64_t handles = 0, stale = 0, yields = 0, retakes = 0, rotations = 0;
	for (unsigned i = 0; i < pr->nworkers; i++) {
		handles += atomic_load_explicit(&pr->w[i].nr_handles, memory_order_relaxed);
		stale += atomic_load_explicit(&pr->w[i].nr_stale, memory_order_relaxed);
		yields += atomic_load_explicit(&pr->w[i].nr_yields, memory_order_relaxed);
		retakes += atomic_load_explicit(&pr->w[i].nr_retakes, memory_order_relaxed);
		rotations += atomic_load_explicit(&pr->w[i].nr_rotations, memory_order_relaxed);
	}
	emit(ctx, "handles_taken", (double)handles);
	emit(ctx, "stale_handles", (double)stale);
	emit(ctx, "yields_to_higher", (double)yields);
	emit(ctx, "drops_undone", (double)retakes);
	emit(ctx, "rotations", (double)rotations);
	emit(ctx, "unstarted", (double)atomic_load_explicit(&pr->nr_unstarted, memory_order_relaxed));
	priority_job_stats(pr, emit, ctx);
}

const struct sb_policy_ops priority_ops = {
	.create = priority_create,
	.destroy = priority_destroy,
	.job_start = priority_job_start,
	.job_end = priority_job_end,
	.job_cancel = priority_job_cancel,
	.submit = priority_submit,
	.pop = priority_pop,
	.idle = priority_idle,
	.queued = priority_queued,
	.stats = priority_stats,
	.name = "priority",
	.description = "Nebula Graph's task manager (memo 004): job handles by priority, per-job subtask queues "
		       "served by up to N workers",
	.version = 1,
	.flags = SB_POLICY_JOB_QUEUES,
	.params = priority_param_table,
	.params_size = sizeof(struct priority_params),
};
