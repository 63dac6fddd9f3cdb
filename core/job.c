/*
 * job.c - jobs: creation, submission, holds, cancellation, waiting and the one teardown.
 *
 * A job's count is its live tasks plus tokens cached by threads plus holds (task.c explains
 * the tokens). The thread whose decrement takes it to zero finishes the job: it claims
 * teardown with one fetch_or on SB_JF_COMPLETING (memo 000's CAS on `completing`), then either
 * runs the teardown in place or submits a teardown task. A workload may also ask for the
 * teardown task early (sb_job_request_teardown, as jogasaki's DAG controller does); such a task
 * re-schedules itself until the count is zero. Either way the callback runs exactly once and
 * only after the job's last task has ended.
 *
 * The thread whose decrement takes the count to zero still touches the job once after it (the
 * fetch_or that claims the teardown). An early teardown task must not free the job before that
 * access, so it waits for SB_JF_ZEROED, which that same fetch_or sets, rather than for the count
 * alone: a decrementer that finds the teardown already claimed returns without touching the job
 * again.
 *
 * Teardown order: timestamps and recording, the completion callback, the hybrid txn unlock,
 * the policy's job_end, then SB_JF_DONE (release) and the wake-up of waiters, then the
 * runtime's reference is dropped. A waiter that sees DONE sees everything before it.
 */
#include <stdlib.h>
#include <string.h>

#include "thread.h"

SB_ASSERT_MALLOC_ALIGNED(struct sb_job);
SB_ASSERT_MALLOC_ALIGNED(struct sb_hist);

struct sb_job *sb_job_create(struct sb_rt *rt, const struct sb_job_desc *d)
{
	struct sb_job *j = calloc(1, sizeof *j);
	if (!j) {
		fprintf(stderr, "%s:%d: out of memory allocating a job\n", __FILE__, __LINE__);
		abort();
	}
	j->id = atomic_fetch_add_explicit(&rt->job_ids, 1, memory_order_relaxed) + 1;
	j->cls = d->cls < SB_MAX_CLASSES ? d->cls : SB_MAX_CLASSES - 1;
	j->work_level = d->work_level;
	j->txn = d->txn;
	j->teardown = d->teardown;
	j->done = d->done;
	j->arg = d->arg;
	j->priority = d->priority;
	j->concurrency = d->concurrency;
	j->force_stealing = d->force_stealing;
	j->t_arrival = d->t_arrival;
	j->rt = rt;
	j->end_thread = -1;
	if (sb_exec_virtual() && sb_self)
		j->creator = sb_self->id + 1;
	atomic_init(&j->refs, 1);
	return j;
}

void sb_job_ref_put(struct sb_job *j)
{
	/* acq_rel: the last holder sees every other holder's accesses before freeing */
	if (atomic_fetch_sub_explicit(&j->refs, 1, memory_order_acq_rel) == 1)
		free(j);
}

/* The creator's share of a job that ended on another thread (SB_COST_JOB_CREATE), charged as the
 * creator lets go of the finished job: reading what its finisher wrote, freeing what it touched.
 * A creator that lets go before the end (fire and forget) is not charged. */
static SB_COLD void charge_creator(struct sb_job *j)
{
	struct sb_thread *tc = sb_self;
	/* acquire: pairs with the release of SB_JF_DONE, after which ended_away is written */
	if (tc && j->creator == tc->id + 1 && (atomic_load_explicit(&j->flags, memory_order_acquire) & SB_JF_DONE) &&
	    j->ended_away)
		sb_exec_charge(SB_COST_JOB_CREATE, -1, tc->worker, NULL);
}

void sb_job_put(struct sb_job *j)
{
	if (sb_exec_virtual())
		charge_creator(j);
	sb_job_ref_put(j);
}

/* Run a job whose tasks all come to this thread's serial queue until it is done (the job was
 * marked run_inline by the policy). On a worker this nests inside the running task, as
 * jogasaki's hybrid scheduler does. */
static void run_here(struct sb_thread *tc, struct sb_job *j)
{
	struct sb_task *outer = tc->current;
	/* acquire: pairs with the release of SB_JF_DONE */
	while (!(atomic_load_explicit(&j->flags, memory_order_acquire) & SB_JF_DONE)) {
		if (atomic_load_explicit(&tc->rt->failed, memory_order_relaxed))
			break;
		if (!sb_drain_serial(tc, 64)) {
			/* flushing cached tokens may finish the job and queue its teardown task here;
			 * otherwise a conditional or parked task is outstanding: give the CPU away */
			sb_tok_flush(tc);
			if (!tc->serial.len)
				sb_exec_yield();
		}
	}
	tc->current = outer;
}

void sb_job_submit(struct sb_job *j, struct sb_task *root)
{
	struct sb_thread *tc = sb_tc();
	struct sb_rt *rt = j->rt;
	/* relaxed: only the submitter touches these flags before the root task is published */
	uint32_t f = atomic_fetch_or_explicit(&j->flags, SB_JF_SUBMITTED, memory_order_relaxed);
	if (f & SB_JF_SUBMITTED) {
		sb_fail(rt, "job %llu submitted twice", (unsigned long long)j->id);
		return;
	}
	atomic_fetch_add_explicit(&j->refs, 1, memory_order_relaxed);
	/* relaxed, by the owner alone: the root task's publication (release) orders it before the
	 * teardown's count of the job, and that before the stopper's read of this one (runtime.c,
	 * live_jobs) */
	atomic_store_explicit(&tc->jobs_in, atomic_load_explicit(&tc->jobs_in, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	j->t_submit = sb_now_ns();
	if (!j->t_arrival)
		j->t_arrival = j->t_submit;
	sb_count(tc, SB_C_JOBS_SUBMITTED, 1);
	sb_policy_job_start(tc, j);
	sb_spawn(root);
	if (j->run_inline)
		run_here(tc, j);
}

/* A job cut off by sb_rt_cancel keeps its row (status cancelled) but stays out of the latency
 * histograms: its "latency" would be the time until the cut, not until its answer. */
static void record(struct sb_thread *tc, struct sb_job *j, bool unfinished)
{
	struct sb_rt *rt = tc->rt;
	uint64_t ws = atomic_load_explicit(&rt->win_start, memory_order_relaxed);
	uint64_t we = atomic_load_explicit(&rt->win_end, memory_order_relaxed);
	if (j->t_submit < ws || j->t_submit >= we)
		return;
	struct sb_rec *rec = &tc->rec;
	struct sb_hist *h = rec->hist[j->cls];
	if (!h && !unfinished) {
		h = rec->hist[j->cls] = calloc(1, sizeof *h);
		if (!h)
			return;
	}
	if (!unfinished)
		sb_hist_record(h, j->t_end - j->t_arrival);
	if (rec->nrows >= SB_JOB_ROWS_CAP) {
		rec->rows_dropped++;
		return;
	}
	if (rec->nrows == rec->caprows) {
		size_t nc = rec->caprows ? rec->caprows * 2 : 1024;
		struct sb_jobrow *r = realloc(rec->rows, nc * sizeof *r);
		if (!r) {
			rec->rows_dropped++;
			return;
		}
		rec->rows = r;
		rec->caprows = nc;
	}
	rec->rows[rec->nrows++] = (struct sb_jobrow){
		.id = j->id,
		.t_arrival = j->t_arrival,
		.t_submit = j->t_submit,
		.t_start = atomic_load_explicit(&j->t_start, memory_order_relaxed),
		.t_end = j->t_end,
		.work_level = j->work_level,
		.end_thread = (int16_t)j->end_thread,
		.cls = (uint8_t)j->cls,
		.status = (uint8_t)sb_job_status(j),
	};
}

static void teardown_now(struct sb_thread *tc, struct sb_job *j)
{
	struct sb_rt *rt = tc->rt;
	if (rt->cfg.check) {
		if (atomic_fetch_add_explicit(&j->nr_teardown_runs, 1, memory_order_relaxed) != 0)
			sb_fail(rt, "invariant 'teardown runs once' violated: job %llu torn down again on thread %u",
				(unsigned long long)j->id, tc->id);
		int64_t c = atomic_load_explicit(&j->count, memory_order_relaxed);
		if (c != 0)
			sb_fail(rt, "invariant 'teardown after the last task' violated: job %llu torn down on "
				"thread %u with %lld tasks or holds outstanding", (unsigned long long)j->id, tc->id,
				(long long)c);
	}
	j->t_end = sb_now_ns();
	j->end_thread = tc->worker;
	/* relaxed: the flags are the job's own, final here; the cancel bit is monotonic */
	bool unfinished = (atomic_load_explicit(&j->flags, memory_order_relaxed) & SB_JF_CANCELLED) &&
			  (atomic_load_explicit(&rt->slow, memory_order_relaxed) & SB_SLOW_CANCEL);
	record(tc, j, unfinished);
	if (sb_exec_virtual()) {
		/* a job torn down where it was made (serial's) costs `job`; one that crossed threads
		 * costs its finisher job_end here and its creator job_create as it lets go */
		j->ended_away = j->creator != tc->id + 1;
		sb_exec_charge(j->ended_away ? SB_COST_JOB_END : SB_COST_JOB, -1, tc->worker, NULL);
	}
	sb_count(tc, SB_C_TEARDOWN, 1);
	if (unfinished)
		sb_count(tc, SB_C_UNFINISHED, 1);
	if (j->done)
		j->done(j);
	if (j->holds_txn_lock)
		sb_txn_unlock(j->txn);
	sb_policy_job_end(rt, j);
	/* release: the callback's effects and t_end happen before a waiter's acquire of DONE */
	uint32_t f = atomic_fetch_or_explicit(&j->flags, SB_JF_DONE, memory_order_release);
	if (f & SB_JF_WAITERS) {
		sb_count(tc, SB_C_JOB_WAKE, 1);
		sb_exec_unpark(&j->flags, INT_MAX);
	}
	/* seq_cst, with the load of live_waited: a store-load pair against sb_rt_stop's store of
	 * live_waited and its count (runtime.c, live_jobs), so either the count sees this job
	 * ended or this teardown sees the stopper waiting and wakes it; the store also releases the
	 * job's effects, and its creator's count of it, to the count's acquire. The owner alone
	 * writes jobs_out, on its own line: nobody waiting, a job's end writes no shared line.
	 * While the stopper waits, the first teardown after each of its counts takes live_kick and
	 * wakes it; the rest make no futex call (models/live.pml). */
	atomic_store_explicit(&tc->jobs_out, atomic_load_explicit(&tc->jobs_out, memory_order_relaxed) + 1,
			      memory_order_seq_cst);
	if (atomic_load_explicit(&rt->live_waited, memory_order_seq_cst) &&
	    !atomic_load_explicit(&rt->live_kick, memory_order_seq_cst) &&
	    !atomic_exchange_explicit(&rt->live_kick, true, memory_order_seq_cst)) {
		atomic_fetch_add_explicit(&rt->live_seq, 1, memory_order_release);
		sb_exec_unpark(&rt->live_seq, INT_MAX);
	}
	sb_job_ref_put(j);
}

static bool inplace(const struct sb_rt *rt, const struct sb_job *j)
{
	if (j->teardown == SB_TEARDOWN_DEFAULT)
		return rt->cfg.inplace_teardown;
	return j->teardown == SB_TEARDOWN_INPLACE;
}

static void submit_teardown_task(struct sb_thread *tc, struct sb_job *j)
{
	struct sb_task *t = sb_task_new(j, NULL, NULL);
	t->flags = SB_TF_TEARDOWN | SB_TF_URGENT;
	if (tc->rt->cfg.check)
		t->seq = atomic_fetch_add_explicit(&tc->rt->task_seq, 1, memory_order_relaxed) + 1;
	sb_place(tc, t);
}

void sb_job_sub(struct sb_thread *tc, struct sb_job *j, int64_t n)
{
	/* acq_rel: the release publishes this thread's work on the job; the thread reaching zero
	 * acquires every other thread's, so the teardown sees all of it */
	int64_t prev = atomic_fetch_sub_explicit(&j->count, n, memory_order_acq_rel);
	if (prev > n)
		return;
	if (prev < n) {
		sb_fail(tc->rt, "invariant 'job count' violated: job %llu count went below zero (%lld - %lld) "
			"on thread %u", (unsigned long long)j->id, (long long)prev, (long long)n, tc->id);
		return;
	}
	/* acq_rel: exactly one claimant; pairs with sb_job_request_teardown. ZEROED, set by the
	 * same operation, tells an early teardown task that this thread is done with the job (its
	 * acquire load pairs with this release, after our decrement acquired everyone else's) */
	uint32_t f = atomic_fetch_or_explicit(&j->flags, SB_JF_COMPLETING | SB_JF_ZEROED, memory_order_acq_rel);
	if (f & SB_JF_COMPLETING)
		return; /* a teardown task asked for earlier runs it; j may be freed from here on */
	if (inplace(tc->rt, j))
		teardown_now(tc, j);
	else
		submit_teardown_task(tc, j);
}

bool sb_job_try_lock_txn(struct sb_job *j)
{
	if (!sb_txn_try_lock(j->txn))
		return false;
	j->holds_txn_lock = true; /* teardown_now unlocks */
	return true;
}

void sb_job_request_teardown(struct sb_job *j)
{
	struct sb_thread *tc = sb_tc();
	if (inplace(tc->rt, j))
		return;
	uint32_t f = atomic_fetch_or_explicit(&j->flags, SB_JF_COMPLETING, memory_order_acq_rel);
	if (f & SB_JF_COMPLETING)
		return;
	submit_teardown_task(tc, j);
}

void sb_job_run_teardown_task(struct sb_thread *tc, struct sb_task *t)
{
	struct sb_job *j = t->job;
	struct sb_rt *rt = tc->rt;
	if (rt->cfg.check && !sb_check_run_begin(tc, t))
		return;
	/* our own cached tokens of this job must not keep it open */
	sb_tok_flush(tc);
	/* acquire: pairs with the release in the fetch_or of the decrement that reached zero, so
	 * the teardown sees every task's work and that thread no longer touches the job */
	if (!(atomic_load_explicit(&j->flags, memory_order_acquire) & SB_JF_ZEROED)) {
		/* memo 000: a teardown task that finds the job not ready reschedules itself */
		if (rt->cfg.check)
			sb_check_run_end(tc, t);
		t->flags |= SB_TF_AGAIN;
		sb_place(tc, t);
		return;
	}
	if (rt->cfg.check)
		sb_check_run_end(tc, t);
	sb_task_free(tc, t);
	teardown_now(tc, j);
}

bool sb_job_done(const struct sb_job *j)
{
	/* acquire: pairs with the release of SB_JF_DONE in teardown_now */
	return atomic_load_explicit(&((struct sb_job *)j)->flags, memory_order_acquire) & SB_JF_DONE;
}

bool sb_job_wait(struct sb_job *j)
{
	struct sb_thread *tc = sb_tc();
	struct sb_rt *rt = j->rt;
	if (tc->worker >= 0 || tc->kind == SB_THREAD_WATCHER) {
		sb_fail(rt, "sb_job_wait called from a task on thread %u: tasks must not wait", tc->id);
		return false;
	}
	for (;;) {
		/* acquire: pairs with the release of SB_JF_DONE */
		uint32_t f = atomic_load_explicit(&j->flags, memory_order_acquire);
		if (f & SB_JF_DONE)
			return true;
		if (atomic_load_explicit(&rt->failed, memory_order_relaxed))
			return false;
		if (tc->serial.len) {
			/* run our own serial work, a batch at a time between looks at the job */
			sb_drain_serial(tc, 64);
			continue;
		}
		/* flushing our cached tokens may finish the job and queue its teardown task here */
		sb_tok_flush(tc);
		if (tc->serial.len)
			continue;
		/* DuckDB's external threads (memo 002): the policy may give the waiter a task to run */
		struct sb_task *t = sb_policy_help(tc);
		if (t) {
			sb_run(tc, t, false);
			continue;
		}
		f = atomic_fetch_or_explicit(&j->flags, SB_JF_WAITERS, memory_order_acquire);
		if (f & SB_JF_DONE)
			return true;
		/* bounded sleep so that a run that failed elsewhere is noticed */
		sb_count(tc, SB_C_JOB_WAIT, 1);
		sb_exec_park(&j->flags, f | SB_JF_WAITERS, 50 * 1000 * 1000);
	}
}

enum sb_job_status sb_job_status(const struct sb_job *j)
{
	uint32_t f = atomic_load_explicit(&((struct sb_job *)j)->flags, memory_order_acquire);
	if (f & SB_JF_CANCELLED)
		return SB_JOB_CANCELLED;
	if (f & SB_JF_ERROR)
		return SB_JOB_ERROR;
	return SB_JOB_OK;
}

void sb_job_hold(struct sb_job *j)
{
	/* relaxed: the caller keeps the job open while it takes the hold (see sb.h) */
	int64_t prev = atomic_fetch_add_explicit(&j->count, 1, memory_order_relaxed);
	if (j->rt->cfg.check && prev <= 0 && (atomic_load_explicit(&j->flags, memory_order_relaxed) & SB_JF_COMPLETING))
		sb_fail(j->rt, "invariant 'hold an open job' violated: job %llu held after it finished",
			(unsigned long long)j->id);
}

void sb_job_release(struct sb_job *j)
{
	sb_job_sub(sb_tc(), j, 1);
}

void sb_job_cancel(struct sb_job *j)
{
	/* release: pairs with the acquire load in sb_run that decides to drop */
	atomic_fetch_or_explicit(&j->flags, SB_JF_CANCELLED, memory_order_release);
	sb_policy_job_cancel(j->rt, j);
}
