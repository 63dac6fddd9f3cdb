/*
 * check.c - check mode (--check / check=true): run-time invariants verified on every policy,
 * and the one way a run fails.
 *
 * Verified at each task start and end, through the task's check state (queued -> running ->
 * free/parked/queued again):
 *   - each task runs exactly once per submission (a start finds it queued, nobody else's);
 *   - sticky tasks of a transaction never overlap, for policies that promise it
 *     (SB_POLICY_STICKY_EXCLUSIVE: a bound worker, a lane, a slot): a per-transaction count
 *     taken before the transaction lock, which would otherwise hide the overlap;
 *   - a sticky task counted in its transaction's sticky word runs on the bound worker;
 *   - a task submitted after its job was cancelled is never run (it must be dropped);
 *   - no task runs for a job whose count is already zero.
 * Teardown-once and teardown-after-last-task are checked in job.c where they happen.
 *
 * A violation calls sb_fail(): the first message is kept, printed once, and the runtime
 * reports failure (sb_rt_failure, sb_job_wait returning false), so the harness ends the run
 * with the task, job, worker and invariant named.
 */
#include <stdio.h>

#include "rt.h"

static const char *who(const struct sb_thread *tc, char *buf, size_t len)
{
	if (tc->worker >= 0)
		snprintf(buf, len, "worker %d", tc->worker);
	else
		snprintf(buf, len, "%s thread %u", tc->kind == SB_THREAD_WATCHER ? "watcher" : "request", tc->id);
	return buf;
}

bool sb_check_run_begin(struct sb_thread *tc, struct sb_task *t)
{
	struct sb_rt *rt = tc->rt;
	char w[48];
	uint32_t expect = SB_CS_QUEUED;
	/* acq_rel: two threads starting the same task cannot both win */
	if (!atomic_compare_exchange_strong_explicit(&t->cstate, &expect, SB_CS_RUNNING, memory_order_acq_rel,
						     memory_order_relaxed)) {
		sb_fail(rt, "invariant 'each task runs exactly once' violated: task %llu of job %llu started on %s "
			"in state %u (expected queued)", (unsigned long long)t->seq, (unsigned long long)t->job->id,
			who(tc, w, sizeof w), expect);
		return false; /* not run: a second run would corrupt the job's accounting */
	}
	if (!(t->flags & SB_TF_TEARDOWN) && atomic_load_explicit(&t->job->count, memory_order_relaxed) <= 0)
		sb_fail(rt, "invariant 'tasks run inside an open job' violated: task %llu of job %llu started on %s "
			"after the job's count reached zero", (unsigned long long)t->seq,
			(unsigned long long)t->job->id, who(tc, w, sizeof w));
	if ((t->flags & SB_TF_BOUND) && tc->worker >= 0) {
		uint64_t word = atomic_load_explicit(&t->txn->sticky, memory_order_relaxed);
		if ((word >> 32) == 0 || (word & 0xffffffffu) != (uint64_t)tc->worker)
			sb_fail(rt, "invariant 'sticky tasks run on the bound worker' violated: task %llu of job %llu "
				"(transaction %llu) ran on %s but the transaction is bound to worker %llu with %llu "
				"sticky tasks", (unsigned long long)t->seq, (unsigned long long)t->job->id,
				(unsigned long long)sb_txn_id(t->txn), who(tc, w, sizeof w),
				(unsigned long long)(word & 0xffffffffu), (unsigned long long)(word >> 32));
	}
	return true;
}

void sb_check_sticky_enter(struct sb_thread *tc, struct sb_task *t)
{
	char w[48];
	/* acq_rel: overlapping runs of one transaction's sticky tasks see each other. Policies
	 * that do not promise exclusivity leave it to the transaction lock, and then a second
	 * task waiting at the lock is normal. */
	if (atomic_fetch_add_explicit(&t->txn->running, 1, memory_order_acq_rel) != 0 &&
	    (tc->rt->ops->flags & SB_POLICY_STICKY_EXCLUSIVE))
		sb_fail(tc->rt, "invariant 'sticky tasks of a transaction never overlap' violated: task %llu of job "
			"%llu (transaction %llu) started on %s while another of its sticky tasks runs",
			(unsigned long long)t->seq, (unsigned long long)t->job->id,
			(unsigned long long)sb_txn_id(t->txn), who(tc, w, sizeof w));
}

void sb_check_sticky_leave(struct sb_thread *tc, struct sb_txn *x)
{
	(void)tc;
	atomic_fetch_sub_explicit(&x->running, 1, memory_order_acq_rel);
}

void sb_check_doomed(struct sb_thread *tc, struct sb_task *t)
{
	char w[48];
	sb_fail(tc->rt, "invariant 'cancelled jobs run no queued task' violated: task %llu of job %llu was "
		"submitted after the job was cancelled and its body was about to run on %s",
		(unsigned long long)t->seq, (unsigned long long)t->job->id, who(tc, w, sizeof w));
}

void sb_check_run_end(struct sb_thread *tc, struct sb_task *t)
{
	(void)tc;
	atomic_store_explicit(&t->cstate, SB_CS_FREE, memory_order_relaxed);
}
