/*
 * priority_job.c - the `priority` policy's per-job state (priority.c has the algorithm): made in
 * job_start, released from job_end, and the cancel handle job_cancel sends.
 *
 * Cancellation by handle. sb_job_cancel marks the job (core), then job_cancel queues the
 * job's one cancel handle at a level above every priority; whoever takes it hands the job's
 * queued subtasks to the core, which drops them, so a cancelled job's teardown does not wait
 * behind higher-priority work. As in Nebula the job's queued handles are left alone; when they
 * surface they find nothing and are skipped (stale_handles). Subtasks are never discarded
 * here: the job's count, and so its single teardown, needs every one to reach the core.
 *
 * Lifetime. Handles may still be queued or held after their job has ended, so the per-job
 * state is reference counted: the job until job_end, one per handle out, and a submitter that
 * does not otherwise keep the job open (the pushed subtask may end the job under it). A handle
 * never touches struct sb_job, which may be freed by then. job_cancel may race with job_end:
 * it enters through job->pword (started bit, ended bit, count of cancellers inside), and
 * job_end leaves the job's reference to the last canceller out. The last reference puts the
 * state back in the policy's pool, its queue emptied in place (sb_fifo_reset), and the next
 * job_start takes it from there. A state made and freed per job cost glibc's aligned
 * allocation, a free into the arena of the thread that made it and two trips to the queue
 * segments' pool: on `tiny` at 1 worker, where a job is one task, it held this policy to
 * three quarters of the rate it runs at now (PAPER.md §4.7, row 105).
 */
#include <stdlib.h>

#include "priority_impl.h"

/* The most ended jobs' states kept for reuse; past it they are freed. Live jobs need one each,
 * so the pool holds what the most jobs ever open at once left behind, up to this. */
#define POOL_MAX 1024

/* A state from the pool, or a new one; its queue empty, its other fields the caller's to set. */
static struct priority_job *state_get(struct priority *pr)
{
	pthread_mutex_lock(&pr->pool_lock);
	struct priority_job *pj = pr->pool;
	if (pj) {
		pr->pool = pj->next_free;
		pr->pool_len--;
	}
	pthread_mutex_unlock(&pr->pool_lock);
	if (pj)
		return pj;
	pj = sb_alloc_lines(sizeof *pj + pr->max_limit * sizeof pj->markers[0]);
	if (!pj)
		return NULL;
	sb_fifo_init(&pj->q);
	pj->pr = pr;
	count(&pr->nr_states);
	return pj;
}

void priority_job_recycle(struct priority_job *pj)
{
	struct priority *pr = pj->pr;
	/* every subtask was handed out (none is discarded here), and no thread holds the state */
	sb_fifo_reset(&pj->q);
	pthread_mutex_lock(&pr->pool_lock);
	bool keep = pr->pool_len < POOL_MAX;
	if (keep) {
		pj->next_free = pr->pool;
		pr->pool = pj;
		pr->pool_len++;
	}
	pthread_mutex_unlock(&pr->pool_lock);
	if (!keep) {
		sb_fifo_fini(&pj->q);
		free(pj);
	}
}

void priority_pool_init(struct priority *pr)
{
	pr->max_limit = pr->nworkers < PRIORITY_MAX_SERVERS ? pr->nworkers : PRIORITY_MAX_SERVERS;
	pthread_mutex_init(&pr->pool_lock, NULL);
}

void priority_pool_fini(struct priority *pr)
{
	struct priority_job *pj;
	while ((pj = pr->pool)) {
		pr->pool = pj->next_free;
		sb_fifo_fini(&pj->q);
		free(pj);
	}
	pr->pool_len = 0;
	pthread_mutex_destroy(&pr->pool_lock);
}

void priority_job_stats(struct priority *pr, sb_stat_emit_fn emit, void *ctx)
{
	emit(ctx, "jobs", (double)atomic_load_explicit(&pr->nr_jobs, memory_order_relaxed));
	emit(ctx, "cancel_handles", (double)atomic_load_explicit(&pr->nr_cancel, memory_order_relaxed));
	emit(ctx, "clamped_priorities", (double)atomic_load_explicit(&pr->nr_clamped, memory_order_relaxed));
	emit(ctx, "states_made", (double)atomic_load_explicit(&pr->nr_states, memory_order_relaxed));
}

void priority_job_start(void *st, struct sb_job *j, struct sb_thread *caller)
{
	struct priority *pr = st;
	(void)caller;
	unsigned limit = j->concurrency ? j->concurrency : (unsigned)pr->p.concurrency;
	if (!limit || limit > pr->nworkers)
		limit = pr->nworkers;
	if (limit > PRIORITY_MAX_SERVERS)
		limit = PRIORITY_MAX_SERVERS;
	int max = (int)pr->p.max_priority, prio = j->priority;
	if (prio > max || prio < -max) {
		count(&pr->nr_clamped);
		prio = prio > max ? max : -max;
	}
	struct priority_job *pj = state_get(pr);
	if (!pj)
		sb_policy_fatal(pr->rt, -ENOMEM, "out of memory for the state of job %llu", (unsigned long long)j->id);
	pj->limit = limit;
	pj->level = (unsigned)(prio + max);
	atomic_init(&pj->free, limit == 64 ? ~0ull : (1ull << limit) - 1);
	atomic_init(&pj->refs, 1);
	atomic_init(&pj->cancel_sent, false);
	for (unsigned i = 0; i <= limit; i++) {
		struct sb_task *m = i < limit ? &pj->markers[i] : &pj->cancel;
		m->flags = SB_TF_MARKER;
		m->arg = pj;
		m->pint = i < limit ? HANDLE_SERVER : HANDLE_CANCEL;
	}
	j->pdata = pj;
	count(&pr->nr_jobs);
	/* release: publishes pdata and the state; pairs with the acquire CAS in priority_job_cancel
	 * (submitters reach pdata through the job's tasks, published by the queues) */
	atomic_fetch_or_explicit(&j->pword, PW_STARTED, memory_order_release);
}

void priority_job_end(void *st, struct sb_job *j)
{
	(void)st;
	struct priority_job *pj = j->pdata;
	/* acq_rel: pairs with the cancellers' CAS and fetch_sub on pword; whoever sees the other
	 * side last drops the job's reference */
	uint64_t w = atomic_fetch_or_explicit(&j->pword, PW_ENDED, memory_order_acq_rel);
	if (pj && !(w & PW_INSIDE))
		job_unref(pj);
}

void priority_job_cancel(void *st, struct sb_job *j)
{
	struct priority *pr = st;
	/* enter: only between job_start and job_end. acquire: pairs with the release in
	 * job_start (pdata) and with job_end's fetch_or (an ended job is left alone). */
	uint64_t w = atomic_load_explicit(&j->pword, memory_order_relaxed);
	do {
		if (!(w & PW_STARTED) || (w & PW_ENDED))
			return;
	} while (!atomic_compare_exchange_weak_explicit(&j->pword, &w, w + 1, memory_order_acquire,
							memory_order_relaxed));
	struct priority_job *pj = j->pdata;
	/* relaxed: the exchange only elects the one canceller that sends the handle */
	if (!atomic_exchange_explicit(&pj->cancel_sent, true, memory_order_relaxed)) {
		job_ref(pj);
		count(&pr->nr_cancel);
		push_handle(pr, pr->nlevels, &pj->cancel);
	}
	/* leave. acq_rel: pairs with job_end's fetch_or; if the job ended while we were inside,
	 * the last one out drops the job's reference that job_end left */
	w = atomic_fetch_sub_explicit(&j->pword, 1, memory_order_acq_rel);
	if ((w & PW_ENDED) && (w & PW_INSIDE) == 1)
		job_unref(pj);
}
