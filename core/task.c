/*
 * task.c - task memory, submission and execution: the per-task hot path.
 *
 * Owns: per-thread task free lists (refilled from type-stable slabs through a locked depot, one
 * lock per SB_FREE_BATCH tasks), the job-token cache, sb_spawn and the run step every thread
 * uses (workers, request threads draining their serial queue, the watcher).
 *
 * Job tokens. jogasaki counts a job's tasks with one atomic increment per schedule and one
 * decrement per finished task. Here a thread running tasks of job J caches tokens of J's count:
 * a spawn into J takes a cached token (refilling SB_TOKEN_BATCH at a time with one atomic add),
 * a finished task of J returns its token to the cache, and the cache is flushed (one atomic
 * subtract) when the thread moves to another job or runs out of work. J's count is therefore
 * "live tasks + cached tokens + holds", it only reaches zero when no task of J is queued or
 * running and no thread is inside J, and a chain of tasks on one thread costs no atomic at all.
 * A cache is only ever held by a thread that is running or has just run a task of J, and is
 * flushed before that thread runs anything else or goes idle, so completion is seen as soon
 * as it would be with per-task counting.
 *
 * Does not own: where tasks go (the policy, through core/policy.c), idling and wake-ups (idle.c),
 * teardown (job.c).
 */
#include <stdlib.h>
#include <string.h>

#include "idle.h"
#include "thread.h"

/* ---- task memory ----
 *
 * A thread keeps two free lists: `free` (nfree tasks, at most SB_FREE_BATCH) and `spare` (a full
 * batch or NULL), as Bonwick's magazines. The depot holds whole batches, so that a thread that
 * allocates more than it frees (or the reverse) moves SB_FREE_BATCH tasks with one pointer
 * swap under depot_lock, not a walk over the chain: in a fork-join run whose tasks are spawned
 * on one worker and freed on another, the walk (a cache miss per task, under the lock) made
 * the depot the whole process's bottleneck. A batch is a NULL-terminated chain through
 * node.next; its first task's `arg` links the next batch in the depot and its u[0] counts the
 * chain (a free task's fields are the allocator's). A thread touches the depot at most once
 * per SB_FREE_BATCH tasks of imbalance either way, as before. */

static inline struct sb_node *batch_next(struct sb_node *b) { return sb_task_of(b)->arg; }
static inline unsigned batch_len(struct sb_node *b) { return (unsigned)sb_task_of(b)->u[0]; }

/* Caller holds depot_lock. */
static void depot_put(struct sb_rt *rt, struct sb_node *b, unsigned n)
{
	struct sb_task *t = sb_task_of(b);
	t->arg = rt->depot;
	t->u[0] = n;
	rt->depot = b;
}

static SB_COLD void refill(struct sb_thread *tc)
{
	struct sb_rt *rt = tc->rt;
	if (tc->spare) {
		tc->free = tc->spare;
		tc->nfree = SB_FREE_BATCH;
		tc->spare = NULL;
		return;
	}
	sb_lock_counted(tc, &rt->depot_lock);
	struct sb_node *b = rt->depot;
	if (b) {
		rt->depot = batch_next(b);
		tc->nfree = batch_len(b);
	}
	pthread_mutex_unlock(&rt->depot_lock);
	if (b) {
		tc->free = b;
		return;
	}
	struct sb_slab *s = sb_alloc_lines(sizeof *s);
	if (!s) {
		fprintf(stderr, "%s:%d: out of memory allocating tasks\n", __FILE__, __LINE__);
		abort();
	}
	for (unsigned i = 0; i < SB_SLAB_TASKS; i++) {
		struct sb_node *n = &s->tasks[i].node;
		atomic_store_explicit(&n->next, tc->free, memory_order_relaxed);
		tc->free = n;
	}
	tc->nfree = SB_SLAB_TASKS;
	sb_lock_counted(tc, &rt->depot_lock);
	s->next = rt->slabs;
	rt->slabs = s;
	pthread_mutex_unlock(&rt->depot_lock);
	atomic_fetch_add_explicit(&rt->nr_slabs, 1, memory_order_relaxed);
}

/* `free` is full: it becomes the spare, and a spare already there goes to the depot whole. */
static SB_COLD void spill(struct sb_thread *tc)
{
	struct sb_node *full = tc->spare;
	tc->spare = tc->free;
	tc->free = NULL;
	tc->nfree = 0;
	if (!full)
		return;
	struct sb_rt *rt = tc->rt;
	sb_lock_counted(tc, &rt->depot_lock);
	depot_put(rt, full, SB_FREE_BATCH);
	pthread_mutex_unlock(&rt->depot_lock);
}

/* Back to the thread's free list. In check mode the callers have already marked it free. */
SB_HOT_INLINE void sb_task_free(struct sb_thread *tc, struct sb_task *t)
{
	if (__builtin_expect(tc->nfree == SB_FREE_BATCH, 0))
		spill(tc);
	atomic_store_explicit(&t->node.next, tc->free, memory_order_relaxed);
	tc->free = &t->node;
	tc->nfree++;
}

void sb_thread_cache_release(struct sb_thread *tc)
{
	if (!tc->free && !tc->spare)
		return;
	struct sb_rt *rt = tc->rt;
	sb_lock_counted(tc, &rt->depot_lock);
	if (tc->free)
		depot_put(rt, tc->free, tc->nfree);
	if (tc->spare)
		depot_put(rt, tc->spare, SB_FREE_BATCH);
	pthread_mutex_unlock(&rt->depot_lock);
	tc->free = tc->spare = NULL;
	tc->nfree = 0;
}

void sb_slabs_free(struct sb_rt *rt)
{
	struct sb_slab *s = rt->slabs;
	while (s) {
		struct sb_slab *next = s->next;
		free(s);
		s = next;
	}
	rt->slabs = NULL;
	rt->depot = NULL;
}

/* A task off the thread's free list, which is not empty. */
static inline __attribute__((always_inline)) struct sb_task *task_take(struct sb_thread *tc, struct sb_job *j,
								      sb_task_fn fn, void *arg)
{
	struct sb_node *n = tc->free;
	tc->free = atomic_load_explicit(&n->next, memory_order_relaxed);
	tc->nfree--;
	struct sb_task *t = sb_task_of(n);
	/* check and pint are only read once a flag has set them */
	t->fn = fn;
	t->arg = arg;
	t->u[0] = t->u[1] = t->u[2] = 0;
	t->job = j;
	t->txn = j->txn;
	t->flags = 0;
	t->cls = (uint16_t)j->cls;
	t->wslot = 0;
	return t;
}

/* sb_task_new with an empty free list: a tail call, so the common case saves no registers. */
static SB_COLD struct sb_task *task_new_refill(struct sb_thread *tc, struct sb_job *j, sb_task_fn fn, void *arg)
{
	refill(tc);
	return task_take(tc, j, fn, arg);
}

struct sb_task *sb_task_new(struct sb_job *j, sb_task_fn fn, void *arg)
{
	struct sb_thread *tc = sb_tc();
	if (__builtin_expect(!tc->free, 0))
		return task_new_refill(tc, j, fn, arg);
	return task_take(tc, j, fn, arg);
}

/* ---- job tokens ---- */

void sb_tok_flush(struct sb_thread *tc)
{
	struct sb_job *j = tc->tok_job;
	if (!j)
		return;
	int64_t n = tc->tok_n;
	tc->tok_job = NULL;
	tc->tok_n = 0;
	if (n)
		sb_job_sub(tc, j, n);
}

static inline void tok_bind(struct sb_thread *tc, struct sb_job *j)
{
	if (tc->tok_job != j) {
		sb_tok_flush(tc);
		tc->tok_job = j;
	}
}

/* One token for a new task of j. */
static inline void tok_take(struct sb_thread *tc, struct sb_job *j)
{
	if (tc->tok_job == j) {
		if (tc->tok_n > 0) {
			tc->tok_n--;
			return;
		}
		/* relaxed: we hold a token of j (we are running one of its tasks), so the count
		 * cannot reach zero underneath us; completion ordering comes from the decrements */
		atomic_fetch_add_explicit(&j->count, SB_TOKEN_BATCH, memory_order_relaxed);
		tc->tok_n = SB_TOKEN_BATCH - 1;
		return;
	}
	/* relaxed: the caller holds the job open (a task of it, a hold, or it is not yet
	 * submitted); see sb_job_hold() */
	atomic_fetch_add_explicit(&j->count, 1, memory_order_relaxed);
}

/* A task of j has ended: its token goes back. */
static inline void tok_give(struct sb_thread *tc, struct sb_job *j)
{
	if (tc->tok_job == j) {
		if (++tc->tok_n > 2 * SB_TOKEN_BATCH) {
			/* keep a batch: the count stays above zero because we still hold tokens */
			tc->tok_n -= SB_TOKEN_BATCH;
			sb_job_sub(tc, j, SB_TOKEN_BATCH);
		}
		return;
	}
	sb_job_sub(tc, j, 1);
}

/* ---- submission ---- */

static SB_COLD void place_special(struct sb_thread *tc, struct sb_task *t, int where)
{
	struct sb_rt *rt = tc->rt;
	switch (where) {
	case SB_TO_CALLER:
		sb_list_push(&tc->serial, t);
		break;
	case SB_TO_WATCHER:
		sb_watcher_push(rt, t);
		break;
	case SB_TO_ANY:
		sb_publish(rt);
		break;
	case SB_TO_NOWAKE:
		break;
	default:
		sb_fail(rt, "policy %s returned placement %d for task %llu of job %llu; valid are a worker "
			"index 0..%u or SB_TO_*", rt->ops->name, where, (unsigned long long)t->seq,
			(unsigned long long)t->job->id, rt->n - 1);
		sb_list_push(&tc->serial, t); /* keep it runnable: the run ends on the failure anyway */
	}
}

/* Check mode: number the submission (for messages) and note a job already cancelled. The
 * stall watchdog: note when the task entered a queue. */
static void place_note(struct sb_thread *tc, struct sb_task *t)
{
	struct sb_rt *rt = tc->rt;
	if (rt->cfg.stall_limit)
		sb_watch_placed(tc, t);
	if (!rt->cfg.check)
		return;
	if (!(t->flags & SB_TF_AGAIN))
		t->seq = atomic_fetch_add_explicit(&rt->task_seq, 1, memory_order_relaxed) + 1;
	atomic_store_explicit(&t->cstate, SB_CS_QUEUED, memory_order_relaxed);
	if (atomic_load_explicit(&t->job->flags, memory_order_acquire) & SB_JF_CANCELLED)
		t->flags |= SB_TF_DOOMED;
}

static SB_COLD void bad_placement(struct sb_rt *rt, struct sb_task *t, int where)
{
	sb_fail(rt, "policy %s placed task %llu of job %llu on worker %d; valid workers are 0..%u",
		rt->ops->name, (unsigned long long)t->seq, (unsigned long long)t->job->id, where, rt->n - 1);
}

/* After the policy's submit: check the placement and wake whoever it calls for. */
static inline void place_wake(struct sb_thread *tc, struct sb_task *t, int where, bool stealable)
{
	struct sb_rt *rt = tc->rt;
	if (__builtin_expect(where >= 0, 1)) {
		/* A task on our own queue is work for others only if they may steal it (a sticky
		 * task is bound to us); one on another worker's queue wakes that worker, and if it
		 * is awake already, a thief (worker.c's wake protocol). */
		if (__builtin_expect(where == tc->worker, 1)) {
			if (__builtin_expect(stealable, 1))
				sb_publish(rt);
			return;
		}
		if (__builtin_expect(where >= (int)rt->n, 0)) {
			bad_placement(rt, t, where);
			return; /* the task is wherever the policy put it; there is no such worker to wake */
		}
		sb_wake_worker(rt, (unsigned)where, stealable);
		return;
	}
	if (where == SB_TO_CALLER) {
		sb_count(tc, SB_C_TO_CALLER, 1);
		sb_list_push(&tc->serial, t);
		return;
	}
	place_special(tc, t, where);
}

/* sb_place with check mode, chaos, the monitor (the stall watchdog) or a virtual executor on,
 * or for a sticky task. */
static SB_COLD void place_wrapped(struct sb_thread *tc, struct sb_task *t)
{
	struct sb_rt *rt = tc->rt;
	/* relaxed: configuration bits, set before workers start */
	uint32_t slow = atomic_load_explicit(&rt->slow, memory_order_relaxed);
	if (slow & (SB_SLOW_WRAP | SB_SLOW_MONITOR))
		place_note(tc, t);
	bool stealable = !(t->flags & SB_TF_STICKY);
	place_wake(tc, t, sb_policy_submit(tc, t, slow & SB_SLOW_WRAP), stealable);
}

/* Everything after a plain submit that did not land on the caller's own queue. Out of line, so
 * that the common case keeps nothing but tc across the policy's call. */
static __attribute__((noinline)) void place_elsewhere(struct sb_thread *tc, struct sb_task *t, int where)
{
	place_wake(tc, t, where, true);
}

SB_HOT_INLINE void sb_place(struct sb_thread *tc, struct sb_task *t)
{
	/* One test for the rare cases: a run-wide mode that wraps the policy's call, or a sticky task
	 * (bound to its transaction's worker, never work for others). Past it the task is
	 * stealable, so nothing read before the submit is needed after it (once queued, the task
	 * may already be running elsewhere: it is not read again).
	 * relaxed: configuration bits, set before workers start */
	if (__builtin_expect((atomic_load_explicit(&tc->rt->slow, memory_order_relaxed) & (SB_SLOW_WRAP | SB_SLOW_MONITOR)) |
				     (t->flags & SB_TF_STICKY),
			     0)) {
		place_wrapped(tc, t);
		return;
	}
	int where = sb_policy_submit(tc, t, false);
	if (__builtin_expect(where == tc->worker && where >= 0, 1)) {
		/* our own queue, and the task may be stolen: work for others (idle.c's protocol) */
		sb_publish(tc->rt);
		return;
	}
	place_elsewhere(tc, t, where);
}

void sb_spawn(struct sb_task *t)
{
	struct sb_thread *tc = sb_tc();
	tok_take(tc, t->job);
	SB_HOT_INC(tc, SB_C_SPAWN);
	t->flags &= ~(uint32_t)SB_TF_AGAIN;
	sb_place(tc, t);
}

void sb_task_resume(struct sb_task *t)
{
	struct sb_thread *tc = sb_tc();
	if (tc->rt->cfg.check) {
		/* acq_rel: pairs with the CAS in finish(); RUNNING = its body is returning SB_BLOCKED */
		uint32_t was = atomic_exchange_explicit(&t->cstate, SB_CS_QUEUED, memory_order_acq_rel);
		if (was != SB_CS_RUNNING && was != SB_CS_PARKED)
			sb_fail(tc->rt, "invariant 'resume only blocked tasks' violated: task %llu of job %llu "
				"resumed by thread %u while not blocked (state %u)", (unsigned long long)t->seq,
				(unsigned long long)t->job->id, tc->id, was);
	}
	t->flags |= SB_TF_AGAIN;
	sb_place(tc, t);
}

bool sb_should_yield(void)
{
	struct sb_thread *tc = sb_self;
	if (!tc || tc->worker < 0)
		return false;
	/* relaxed: a hint from the monitor; seeing it late only delays the yield */
	return atomic_load_explicit(&tc->rt->w[tc->worker].yield_req, memory_order_relaxed) != 0;
}

bool sb_task_ready(struct sb_task *t)
{
	struct sb_thread *tc = sb_self;
	bool ok = t->check(t);
	if (tc) {
		sb_count(tc, SB_C_COND_CHECK, 1);
		if (!ok)
			sb_count(tc, SB_C_COND_FALSE, 1);
	}
	return ok;
}

/* ---- execution ---- */

static void trace_task(struct sb_thread *tc, struct sb_job *j, uint32_t cls, uint64_t t0, uint64_t t1,
		       bool stolen, enum sb_result r)
{
	struct sb_rt *rt = tc->rt;
	/* relaxed: the window and the cap are settings; a task straddling a change goes either way */
	if (t0 < atomic_load_explicit(&rt->win_start, memory_order_relaxed) ||
	    t0 >= atomic_load_explicit(&rt->win_end, memory_order_relaxed))
		return;
	struct sb_tev *ev = sb_rec_event(&tc->rec, atomic_load_explicit(&rt->trace_cap, memory_order_relaxed));
	if (ev)
		*ev = (struct sb_tev){ .ts = t0, .dur = t1 - t0, .job = j->id, .cls = cls, .kind = SB_EV_TASK,
				       .stolen = stolen, .result = (uint8_t)r };
}

static SB_COLD void first_start(struct sb_job *j)
{
	uint64_t zero = 0;
	/* relaxed: the first start wins; a racing later start sees non-zero and leaves it */
	atomic_compare_exchange_strong_explicit(&j->t_start, &zero, sb_now_ns(), memory_order_relaxed,
						memory_order_relaxed);
}

/* What happens after a body returns anything but SB_DONE (or on the slow path). `j` is passed in
 * because after SB_BLOCKED the task may already be resumed elsewhere: it must not be touched. */
static SB_COLD void finish(struct sb_thread *tc, struct sb_task *t, struct sb_job *j, enum sb_result r)
{
	struct sb_rt *rt = tc->rt;
	switch (r) {
	case SB_ERROR:
		sb_count(tc, SB_C_ERROR, 1);
		/* relaxed: read by the teardown thread after the count's acq_rel decrement */
		atomic_fetch_or_explicit(&j->flags, SB_JF_ERROR, memory_order_relaxed);
		/* fall through */
	case SB_DONE:
		sb_task_free(tc, t);
		tok_give(tc, j);
		break;
	case SB_YIELD:
		/* the task keeps its token: the job's count does not change */
		sb_count(tc, SB_C_YIELD, 1);
		t->flags |= SB_TF_AGAIN;
		sb_place(tc, t);
		break;
	case SB_BLOCKED:
		/* parked with its token until sb_task_resume(), which may already have happened: the
		 * body published the task before returning. Only the check state is touched, by CAS
		 * (running -> parked), so a resume that came first (parked or running -> queued) wins. */
		sb_count(tc, SB_C_BLOCKED, 1);
		if (rt->cfg.check) {
			uint32_t running = SB_CS_RUNNING;
			atomic_compare_exchange_strong_explicit(&t->cstate, &running, SB_CS_PARKED, memory_order_acq_rel,
								memory_order_relaxed);
		}
		break;
	default:
		sb_fail(rt, "task %llu of job %llu returned %d; valid results are SB_DONE, SB_YIELD, "
			"SB_BLOCKED, SB_ERROR", (unsigned long long)t->seq, (unsigned long long)j->id, (int)r);
		sb_task_free(tc, t);
		tok_give(tc, j);
	}
}

static SB_COLD void drop(struct sb_thread *tc, struct sb_task *t)
{
	struct sb_job *j = t->job;
	sb_count(tc, SB_C_DROPPED, 1);
	/* A drop takes a task off its queue as a start does, and its age bucket already counts it
	 * started (run_slow): the watchdog's run sequence must count it too, or draining a
	 * cancelled backlog through a slow pop (global's claim lock: 2 ms a task) reads as no task
	 * taken anywhere, a STALL. relaxed: as in run_slow, the monitor only compares values. */
	if (tc->worker >= 0) {
		struct sb_worker *w = &tc->rt->w[tc->worker];
		atomic_store_explicit(&w->run_seq, atomic_load_explicit(&w->run_seq, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	}
	/* a stop in CANCEL mode drops tasks of jobs nobody cancelled: their callbacks must say so */
	atomic_fetch_or_explicit(&j->flags, SB_JF_CANCELLED, memory_order_relaxed);
	if (t->flags & SB_TF_BOUND)
		sb_txn_unbind(t->txn);
	if (tc->rt->cfg.check)
		sb_check_run_end(tc, t);
	sb_task_free(tc, t);
	tok_give(tc, j);
}

/* Everything the fast path leaves out: teardown tasks, cancellation, conditional and sticky
 * tasks, check mode, tracing and the monitor's bookkeeping. Longer than 60 lines on purpose:
 * the order of these steps around the body is what check mode verifies, and it reads top to
 * bottom here; each step that has a body of its own is already a function. */
static SB_COLD void run_slow(struct sb_thread *tc, struct sb_task *t, bool stolen)
{
	struct sb_rt *rt = tc->rt;
	struct sb_job *j = t->job;

	if (t->wslot)
		sb_watch_started(tc, t);
	if (t->flags & SB_TF_TEARDOWN) {
		sb_job_run_teardown_task(tc, t);
		return;
	}
	tok_bind(tc, j);
	if (rt->cfg.check && !sb_check_run_begin(tc, t))
		return;
	/* acquire: pairs with the release in sb_job_cancel */
	if (((atomic_load_explicit(&j->flags, memory_order_acquire) & SB_JF_CANCELLED) ||
	     (atomic_load_explicit(&rt->slow, memory_order_relaxed) & SB_SLOW_CANCEL)) &&
	    !(t->flags & SB_TF_CLEANUP)) {
		drop(tc, t);
		return;
	}
	if (rt->cfg.check && (t->flags & SB_TF_DOOMED) && !(t->flags & SB_TF_CLEANUP))
		sb_check_doomed(tc, t);
	if ((t->flags & SB_TF_COND) && !sb_task_ready(t)) {
		/* memo 001: a conditional task taken before its time goes back as if not taken */
		if (t->flags & SB_TF_BOUND) {
			sb_txn_unbind(t->txn);
			t->flags &= ~(uint32_t)SB_TF_BOUND;
		}
		t->flags |= SB_TF_AGAIN;
		sb_place(tc, t);
		return;
	}
	if (!atomic_load_explicit(&j->t_start, memory_order_relaxed))
		first_start(j);

	/* Everything needed after the body is read now: once a body returns SB_BLOCKED, another
	 * thread may be running the task again. */
	struct sb_txn *txn = t->txn;
	bool sticky = (t->flags & SB_TF_STICKY) && txn;
	bool bound = t->flags & SB_TF_BOUND;
	t->flags &= ~(uint32_t)SB_TF_BOUND;
	uint32_t cls = t->cls;
	if (sticky) {
		/* counted before the lock: the lock serialises sticky tasks whatever the policy does,
		 * so only a count taken outside it can show that a policy let two in at once */
		if (rt->cfg.check)
			sb_check_sticky_enter(tc, t);
		sb_txn_lock(tc, txn);
		sb_count(tc, SB_C_STICKY, 1);
	}
	if (tc->worker >= 0) {
		struct sb_worker *w = &rt->w[tc->worker];
		/* relaxed: the monitor only compares successive values */
		atomic_store_explicit(&w->run_seq, atomic_load_explicit(&w->run_seq, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		if (atomic_load_explicit(&w->yield_req, memory_order_relaxed)) {
			/* the previous task was asked to yield; count the request, clear it for this one */
			atomic_store_explicit(&w->yield_req, 0, memory_order_relaxed);
			sb_count(tc, SB_C_PREEMPT_REQ, 1);
		}
	}
	if (stolen)
		sb_count(tc, SB_C_STOLEN, 1);
	SB_HOT_INC(tc, SB_C_RUN);

	struct sb_task *outer = tc->current;
	tc->current = t;
	uint64_t t0 = rt->cfg.trace ? sb_now_ns() : 0;
	enum sb_result r = t->fn(t);
	if (rt->cfg.trace)
		trace_task(tc, j, cls, t0, sb_now_ns(), stolen, r);
	tc->current = outer;

	if (sticky)
		sb_txn_unlock(txn);
	if (rt->cfg.check) {
		if (sticky)
			sb_check_sticky_leave(tc, txn);
		if (r != SB_BLOCKED)
			sb_check_run_end(tc, t);
	}
	if (bound)
		sb_txn_unbind(txn);
	finish(tc, t, j, r);
}

SB_HOT_INLINE void sb_run(struct sb_thread *tc, struct sb_task *t, bool stolen)
{
	struct sb_rt *rt = tc->rt;
	struct sb_job *j = t->job;
	/* One test for everything unusual: special task kinds, a run-wide mode, a cancelled job.
	 * acquire on the job's flags: pairs with the release in sb_job_cancel. */
	if (__builtin_expect((t->flags & (SB_TF_TEARDOWN | SB_TF_COND | SB_TF_STICKY | SB_TF_BOUND)) |
				     atomic_load_explicit(&rt->slow, memory_order_relaxed) |
				     (atomic_load_explicit(&j->flags, memory_order_acquire) & SB_JF_CANCELLED),
			     0)) {
		run_slow(tc, t, stolen);
		return;
	}
	tok_bind(tc, j);
	if (__builtin_expect(!atomic_load_explicit(&j->t_start, memory_order_relaxed), 0))
		first_start(j);
	if (stolen)
		sb_count(tc, SB_C_STOLEN, 1);
	SB_HOT_INC(tc, SB_C_RUN);
	struct sb_task *outer = tc->current; /* non-NULL only for a job run inline inside a task */
	tc->current = t;
	enum sb_result r = t->fn(t);
	tc->current = outer;
	if (__builtin_expect(r == SB_DONE, 1)) {
		sb_task_free(tc, t);
		tok_give(tc, j);
		return;
	}
	finish(tc, t, j, r);
}

size_t sb_drain_serial(struct sb_thread *tc, size_t max)
{
	size_t n = 0, waiting = 0;
	struct sb_task *t;
	while (n < max && (t = sb_list_pop(&tc->serial))) {
		n++;
		if (__builtin_expect(!(t->flags & SB_TF_COND), 1)) {
			sb_run(tc, t, false);
			waiting = 0;
			continue;
		}
		/* A not-ready conditional task goes back to the tail (memo 000, serial scheduler).
		 * When a whole round of the queue was nothing but those, stop and give the CPU away
		 * instead of spinning on them; the caller comes back. */
		uint64_t not_ready = atomic_load_explicit(&tc->cnt.v[SB_C_COND_FALSE], memory_order_relaxed);
		sb_run(tc, t, false);
		if (atomic_load_explicit(&tc->cnt.v[SB_C_COND_FALSE], memory_order_relaxed) == not_ready) {
			waiting = 0;
		} else if (++waiting >= tc->serial.len) {
			sb_exec_yield();
			break;
		}
	}
	return n;
}

size_t sb_thread_run_pending(void)
{
	struct sb_thread *tc = sb_tc();
	size_t n = 0, before;
	do {
		n += sb_drain_serial(tc, SIZE_MAX);
		/* flushing cached tokens may finish a job and queue its teardown task here */
		before = tc->serial.len;
		sb_tok_flush(tc);
	} while (tc->serial.len > before);
	return n;
}
