/*
 * global_tokens.c - `global`'s producer tokens and the external threads that take from them
 * (memo 002; global.c has the queues, claims and the policy's life).
 *
 * Owns. Nothing beyond struct global: the sub-queues q[1..] (global_impl.h), and with
 * token_scope=job each job's token in j->pword.
 *
 * Algorithm. producer_tokens=true: a token is a FIFO sub-queue, q[1 + id] for the thread with
 * attach id `id` (sb_thread_id: small, dense, stable), so one producer's tasks stay FIFO among
 * themselves, as with DuckDB's producer tokens. The table has producer_slots entries made at
 * create, so a sub-queue never has to come into existence on the submit path (no allocation, no
 * lock); a thread whose id is beyond the table uses the shared queue instead, counted as
 * token_fallbacks.
 *
 * token_scope=thread (the default): a task joins the queue of the thread that submits it, so a
 * task that comes back (yield, resume) joins the re-submitting thread's, and children spawned
 * on a worker join that worker's. token_scope=job: DuckDB's token belongs to a query's executor,
 * and every task the query schedules, on whatever thread, joins the query's queue. Here the job's
 * token is the queue of the thread that submits the job (job_start records it in j->pword) and
 * every task of the job, spawned, yielded or resumed anywhere, joins it.
 *
 * external_threads=true: DuckDB counts the thread that embeds it toward its thread total, and
 * that thread, waiting for its query, executes the query's tasks instead of sleeping. Here a
 * request thread in sb_job_wait takes tasks from its own queue q[1 + id], one pop at a time,
 * until it is empty or the job has ended; then it parks as usual. Its submissions still wake a
 * worker (the core's SB_TO_ANY), as DuckDB's ScheduleTask signals its semaphore, so the two race
 * for a task and the loser finds nothing. With token_scope=thread the waiter's queue holds what
 * it submitted and what those tasks spawn while it runs them; with token_scope=job it holds
 * every task of the jobs it submitted.
 *
 * Invariants. A task is pushed to exactly one queue; each sub-queue is FIFO in claim order.
 * With token_scope=job, every task of a job whose submitter has a slot is in that slot's queue.
 *
 * Limits. A job submitted by a thread beyond the table, and with token_scope=job a job submitted
 * from a task on a worker, uses that thread's own queue or the shared one like any of its tasks:
 * a waiting thread helps only with jobs it submitted.
 */
#include "global_impl.h"

const char *const global_token_scopes[] = { "thread", "job", NULL };

/* The queue of thread `id`'s token, q[1 + id], or 0 (the shared queue, counted as a fallback)
 * when the id is beyond the table. */
static unsigned slot_of(struct global *g, unsigned id)
{
	if (id + 1 >= g->nq) {
		atomic_fetch_add_explicit(&g->nr_fallback, 1, memory_order_relaxed);
		return 0;
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
	return id + 1;
}

void global_token_job_start(struct global *g, struct sb_job *j, struct sb_thread *caller)
{
	if (g->p.token_scope != GLOBAL_TOKEN_JOB)
		return;
	/* relaxed: every later reader runs a task of this job, which it obtained through the
	 * root's submission (a queue's release push and acquire pop), after this store */
	atomic_store_explicit(&j->pword, slot_of(g, sb_thread_id(caller)), memory_order_relaxed);
}

/* The queue a task joins: its job's token's, or the submitting thread's (see the top). */
struct sb_fifo *global_token_queue(struct global *g, struct sb_thread *caller, const struct sb_task *t)
{
	if (g->p.token_scope == GLOBAL_TOKEN_JOB)
		/* relaxed: see global_token_job_start */
		return &g->q[atomic_load_explicit(&t->job->pword, memory_order_relaxed)];
	return &g->q[slot_of(g, sb_thread_id(caller))];
}

/* A waiting request thread's task from its own producer queue (external_threads), or NULL. */
struct sb_task *global_help(void *st, struct sb_thread *caller)
{
	struct global *g = st;
	unsigned id = sb_thread_id(caller);
	if (!g->p.external_threads || id + 1 >= g->nq)
		return NULL;
	return sb_fifo_pop(&g->q[id + 1]);
}
