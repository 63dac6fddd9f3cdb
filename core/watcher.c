/*
 * watcher.c - the watcher thread.
 *
 * The watcher (memo 000, jogasaki's conditional task worker): conditional tasks that the policy
 * sends SB_TO_WATCHER arrive on one MPSC queue. The watcher drains it into a private pending
 * list, runs on its own thread the body of every task whose check now holds (or drops it if
 * its job was cancelled) -- except a sticky one, which goes back to the policy to run where the
 * transaction's other sticky tasks run -- keeps the rest, and sleeps watcher_interval us if anything is left,
 * otherwise until the next arrival (helper.h's eventcount: snapshot, drain, wait for a kick).
 *
 * Tasks reach it through sb_watcher_push (idle.c, with the other wake-ups).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "thread.h"

static bool job_dropped(struct sb_rt *rt, struct sb_task *t)
{
	return (atomic_load_explicit(&t->job->flags, memory_order_acquire) & SB_JF_CANCELLED) ||
	       (atomic_load_explicit(&rt->slow, memory_order_relaxed) & SB_SLOW_CANCEL);
}

static void *watcher_main(void *arg)
{
	struct sb_rt *rt = arg;
	struct sb_thread *tc = rt->watcher_tc;
	sb_self = tc;
	sb_exec_rcu_register();
	struct sb_list pending = { 0 };
	uint32_t seq;
	while (sb_helper_next(&rt->watcher, &seq)) {
		struct sb_task *t;
		while ((t = sb_mpsc_pop(&rt->cond_q)))
			sb_list_push(&pending, t);
		for (size_t k = pending.len; k > 0; k--) {
			t = sb_list_pop(&pending);
			if (job_dropped(rt, t)) {
				sb_run(tc, t, false); /* the core drops it */
			} else if (sb_task_ready(t)) {
				t->flags &= ~(uint32_t)SB_TF_COND; /* checked here */
				if ((t->flags & SB_TF_STICKY) && t->txn) {
					/* a sticky body runs where the policy runs the transaction's sticky
					 * work (bound worker, lane, slot), not on this thread */
					t->flags |= SB_TF_AGAIN;
					sb_place(tc, t);
				} else {
					sb_run(tc, t, false);
				}
			} else {
				sb_list_push(&pending, t);
			}
		}
		sb_drain_serial(tc, SIZE_MAX);
		sb_tok_flush(tc);
		if (pending.len)
			sb_exec_sleep_ns((uint64_t)rt->cfg.watcher_interval * 1000);
		else
			sb_helper_wait(&rt->watcher, seq, 100 * 1000 * 1000);
	}
	/* Every job has finished before workers stop, so nothing conditional is left; if a failed
	 * run left some, they are dropped with their slabs. */
	sb_tok_flush(tc);
	sb_exec_rcu_unregister();
	sb_self = NULL;
	return NULL;
}

int sb_watcher_start(struct sb_rt *rt, char *err, size_t errlen)
{
	struct sb_thread *tc = sb_alloc_lines(sizeof *tc);
	if (!tc) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	sb_thread_init(rt, tc, SB_THREAD_WATCHER, -1);
	sb_thread_register(rt, tc);
	rt->watcher_tc = tc;
	return sb_helper_start(&rt->watcher, "watcher", watcher_main, rt, err, errlen);
}

void sb_watcher_stop(struct sb_rt *rt)
{
	sb_helper_stop(&rt->watcher);
}
