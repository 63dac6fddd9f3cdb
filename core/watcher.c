/*
 * watcher.c - the core's two helper threads.
 *
 * The watcher (memo 000, jogasaki's conditional task worker): conditional tasks that the policy
 * sends SB_TO_WATCHER arrive on one MPSC queue. The watcher drains it into a private pending
 * list, runs on its own thread the body of every task whose check now holds (or drops it if
 * its job was cancelled) -- except a sticky one, which goes back to the policy to run where the
 * transaction's other sticky tasks run -- keeps the rest, and sleeps watcher_interval us if anything is left,
 * otherwise until the next arrival (an eventcount on cond_seq: read, drain, wait for a change).
 *
 * The monitor (memo 001's idea: a thread that walks the workers counting up while the same
 * task runs): every period it compares each worker's run sequence with the last sample. A task
 * seen running longer than preempt_threshold us gets a yield request (cooperative preemption:
 * the task polls sb_should_yield()). With stall_limit set it is also the stall watchdog: a
 * runnable task that waits longer than stall_limit ms while a worker idles or sleeps ends the
 * run with STALL and a dump of every worker (lost wake-ups become failures, not slow numbers).
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

void sb_watcher_push(struct sb_rt *rt, struct sb_task *t)
{
	sb_mpsc_push(&rt->cond_q, t);
	/* release: the push is visible to a watcher that sees the new sequence (eventcount) */
	atomic_fetch_add_explicit(&rt->cond_seq, 1, memory_order_release);
	sb_exec_unpark(&rt->cond_seq, 1);
}

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
	while (!atomic_load_explicit(&rt->stopping, memory_order_relaxed)) {
		/* acquire: pairs with the release increment in sb_watcher_push */
		uint32_t seq = atomic_load_explicit(&rt->cond_seq, memory_order_acquire);
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
		if (pending.len) {
			sb_exec_sleep_ns((uint64_t)rt->cfg.watcher_interval * 1000);
		} else if (!atomic_load_explicit(&rt->stopping, memory_order_relaxed)) {
			sb_exec_park(&rt->cond_seq, seq, 100 * 1000 * 1000);
		}
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
		return -1;
	}
	sb_thread_init(rt, tc, SB_THREAD_WATCHER, -1);
	sb_thread_register(rt, tc);
	rt->watcher_tc = tc;
	int e = sb_exec_thread_start(&rt->watcher, "watcher", watcher_main, rt);
	if (e) {
		snprintf(err, errlen, "cannot create the watcher thread: %s", strerror(-e));
		return -1;
	}
	rt->watcher_started = true;
	return 0;
}

void sb_watcher_stop(struct sb_rt *rt)
{
	if (!rt->watcher_started)
		return;
	atomic_store_explicit(&rt->stopping, true, memory_order_relaxed);
	atomic_fetch_add_explicit(&rt->cond_seq, 1, memory_order_release);
	sb_exec_unpark(&rt->cond_seq, 1);
	sb_exec_thread_join(&rt->watcher);
	rt->watcher_started = false;
}

/* ---- monitor ---- */

struct mon_worker {
	uint64_t seq;        /* last run sequence seen */
	uint64_t since;      /* when it last changed (or the worker was idle) */
	bool flagged;        /* yield already requested for this task */
	uint64_t waiting;    /* when its queue was first seen non-empty without progress */
};
SB_ASSERT_MALLOC_ALIGNED(struct mon_worker);

static void dump_state(struct sb_rt *rt, char *buf, size_t len)
{
	size_t used = 0;
	for (unsigned i = 0; i < rt->n && used + 1 < len; i++) {
		struct sb_worker *w = &rt->w[i];
		uint64_t c[SB_NR_COUNTERS];
		sb_rt_worker_counters(rt, i, c);
		int k = snprintf(buf + used, len - used, "\n  worker %u: %s%s queued=%zu tasks=%llu suspends=%llu woken=%llu",
				 i, sb_worker_suspended(rt, i) ? "suspended" : "active",
				 atomic_load_explicit(&w->idle, memory_order_relaxed) ? " idle" : "",
				 sb_policy_queued(rt, (int)i), (unsigned long long)c[SB_C_RUN],
				 (unsigned long long)c[SB_C_SUSPEND], (unsigned long long)c[SB_C_WOKEN]);
		if (k < 0)
			break;
		used += (size_t)k;
	}
	if (used + 1 < len)
		snprintf(buf + used, len - used, "\n  shared queues: queued=%zu", sb_policy_queued(rt, -1));
}

static bool someone_resting(struct sb_rt *rt)
{
	for (unsigned i = 0; i < rt->n; i++)
		if (sb_worker_suspended(rt, i) || atomic_load_explicit(&rt->w[i].idle, memory_order_relaxed))
			return true;
	return false;
}

static void *monitor_main(void *arg)
{
	struct sb_rt *rt = arg;
	struct mon_worker *m = calloc(rt->n, sizeof *m);
	if (!m)
		return NULL;
	uint64_t preempt_ns = (uint64_t)rt->cfg.preempt_threshold * 1000;
	uint64_t stall_ns = (uint64_t)rt->cfg.stall_limit * 1000000;
	uint64_t period = 1000000; /* 1 ms */
	if (preempt_ns && preempt_ns / 4 < period)
		period = preempt_ns / 4 > 50000 ? preempt_ns / 4 : 50000;
	uint64_t shared_since = 0, last_total = 0;
	uint64_t now = sb_now_ns();
	for (unsigned i = 0; i < rt->n; i++)
		m[i].since = now;
	while (!atomic_load_explicit(&rt->stopping, memory_order_relaxed)) {
		uint32_t seq = atomic_load_explicit(&rt->monitor_seq, memory_order_relaxed);
		sb_exec_park(&rt->monitor_seq, seq, period);
		now = sb_now_ns();
		uint64_t total = 0;
		bool resting = stall_ns ? someone_resting(rt) : false;
		for (unsigned i = 0; i < rt->n; i++) {
			struct sb_worker *w = &rt->w[i];
			/* relaxed: samples; a stale one only delays a decision by a period */
			uint64_t s = atomic_load_explicit(&w->run_seq, memory_order_relaxed);
			bool idle = atomic_load_explicit(&w->idle, memory_order_relaxed) || sb_worker_suspended(rt, i);
			total += s;
			bool progressed = s != m[i].seq;
			if (progressed || idle) {
				m[i].seq = s;
				m[i].since = now;
				m[i].flagged = false;
			} else if (preempt_ns && !m[i].flagged && now - m[i].since >= preempt_ns) {
				atomic_store_explicit(&w->yield_req, 1, memory_order_relaxed);
				m[i].flagged = true;
			}
			if (!stall_ns)
				continue;
			/* a task queued for worker i that nobody takes while some worker rests */
			bool waiting = !progressed && resting && sb_policy_queued(rt, (int)i) > 0;
			if (!waiting) {
				m[i].waiting = 0;
			} else if (!m[i].waiting) {
				m[i].waiting = now;
			} else if (now - m[i].waiting > stall_ns) {
				char dump[2048];
				dump_state(rt, dump, sizeof dump);
				sb_fail(rt, "STALL: worker %u has had runnable tasks queued for over %lld ms without taking "
					"one while a worker rests (a lost wake-up or a starved queue)%s",
					i, (long long)rt->cfg.stall_limit, dump);
				m[i].waiting = now; /* report once per limit */
			}
		}
		if (stall_ns) {
			bool shared_waiting = sb_policy_queued(rt, -1) > 0 && resting && total == last_total;
			if (!shared_waiting)
				shared_since = 0;
			else if (!shared_since)
				shared_since = now;
			else if (now - shared_since > stall_ns) {
				char dump[2048];
				dump_state(rt, dump, sizeof dump);
				sb_fail(rt, "STALL: shared queues have held runnable tasks for over %lld ms with no task "
					"started anywhere while a worker rests%s", (long long)rt->cfg.stall_limit, dump);
				shared_since = now;
			}
		}
		last_total = total;
	}
	free(m);
	return NULL;
}

int sb_monitor_start(struct sb_rt *rt, char *err, size_t errlen)
{
	if (!rt->cfg.preempt_threshold && !rt->cfg.stall_limit)
		return 0;
	int e = sb_exec_thread_start(&rt->monitor, "monitor", monitor_main, rt);
	if (e) {
		snprintf(err, errlen, "cannot create the monitor thread: %s", strerror(-e));
		return -1;
	}
	rt->monitor_started = true;
	return 0;
}

void sb_monitor_stop(struct sb_rt *rt)
{
	if (!rt->monitor_started)
		return;
	atomic_store_explicit(&rt->stopping, true, memory_order_relaxed);
	atomic_fetch_add_explicit(&rt->monitor_seq, 1, memory_order_relaxed);
	sb_exec_unpark(&rt->monitor_seq, 1);
	sb_exec_thread_join(&rt->monitor);
	rt->monitor_started = false;
}
