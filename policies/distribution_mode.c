/*
 * distribution_mode.c - memo 001's task distribution mode itself (distribution.c's essay: the
 * steps (e), (i), (ii) and leaving the mode): placement, pops, and the idle step in which one
 * idle worker enters the mode and hands tasks to deactivated workers.
 */
#include "distribution_impl.h"

/* (e): enter the mode if nobody is in it. */
static bool try_enter(struct distribution *d, unsigned self)
{
	int nobody = NOBODY;
	/* acquire: pairs with the release store in leave(), so the in_mode decrement of the last
	 * distributor is seen by the increment below */
	if (!atomic_compare_exchange_strong_explicit(&d->distributor, &nobody, (int)self, memory_order_acquire,
						     memory_order_relaxed))
		return false;
	/* relaxed: ordered after the previous leave() by the CAS above; a non-zero value here means
	 * two workers are in the mode at once */
	if (atomic_fetch_add_explicit(&d->in_mode, 1, memory_order_relaxed) != 0)
		count(&d->nr_overlap);
	d->w[self].in_mode = true;
	count(&d->nr_enter);
	return true;
}

static void leave(struct distribution *d, unsigned self)
{
	d->w[self].in_mode = false;
	atomic_fetch_sub_explicit(&d->in_mode, 1, memory_order_relaxed);
	/* release: pairs with the acquire CAS in try_enter */
	atomic_store_explicit(&d->distributor, NOBODY, memory_order_release);
	count(&d->nr_exit);
}

/* Another worker that is not deactivated (a snapshot: the core's own count). The caller may
 * itself be counted as suspended -- the core runs the idle step again in suspend(), after the
 * worker has announced it -- and must not be counted twice (models/distribution.pml). */
static bool others_active(const struct distribution *d, unsigned self)
{
	unsigned resting = sb_nsuspended(d->rt);
	if (resting && sb_worker_suspended(d->rt, self))
		resting--;
	return resting + 1 < d->n;
}

/* The worker placement would choose, moved off worker 0 when it is the dedicated distributor. */
int distribution_submit(void *st, struct sb_thread *caller, struct sb_task *t)
{
	struct distribution *d = st;
	if (!d->dedicated)
		return ws_submit(d->ws, caller, t);
	unsigned w = ws_pick(d->ws, caller, t);
	if (w == 0)
		w = 1 + (unsigned)(sb_rand() % (d->n - 1));
	return ws_submit_to(d->ws, w, caller, t);
}

/* (c) */
struct sb_task *distribution_pop(void *st, unsigned self)
{
	struct distribution *d = st;
	struct dist_worker *me = &d->w[self];
	struct sb_task *t = ws_pop(d->ws, self);
	/* relaxed: a hint for the distributor's sweep (see steal_for_handoff). Lowered only once
	 * this worker has taken a task: lowered before the pop looks, the distributor could steal
	 * the handed task back in between and hand it on again, for ever (models/distribution.pml,
	 * defect-dist-bounce) */
	if (t && atomic_load_explicit(&me->handed, memory_order_relaxed))
		atomic_store_explicit(&me->handed, false, memory_order_relaxed);
	/* work of its own: this worker is not idle any more, so it stops distributing */
	if (t && me->in_mode && !d->dedicated)
		leave(d, self);
	return t;
}

/* (d): the distributor's stealing is (i), in idle; everyone else steals as in stealing. */
struct sb_task *distribution_steal(void *st, unsigned self)
{
	struct distribution *d = st;
	return d->w[self].in_mode ? NULL : ws_steal(d->ws, self);
}

/* (i): one task from the other workers' LTQs, sweeping from self+1. A worker that was just
 * handed a task and has not popped since is passed over: taking that task back before its new
 * owner wakes would only hand it on again and cost a second wake-up. */
static struct sb_task *steal_for_handoff(struct distribution *d, unsigned self)
{
	for (unsigned k = 1; k < d->n; k++) {
		unsigned v = (self + k) % d->n;
		if (atomic_load_explicit(&d->w[v].handed, memory_order_relaxed))
			continue;
		struct sb_task *t = ws_steal_from(d->ws, self, v);
		if (t)
			return t;
	}
	return NULL;
}

/* (ii): a deactivated worker other than self, scanning from self+1; -1 when there is none. */
static int find_deactivated(const struct distribution *d, unsigned self)
{
	for (unsigned k = 1; k < d->n; k++) {
		unsigned v = (self + k) % d->n;
		if (sb_worker_suspended(d->rt, v))
			return (int)v;
	}
	return -1;
}

struct sb_task *distribution_idle(void *st, unsigned self, struct sb_idle *out)
{
	struct distribution *d = st;
	/* the family's hint first: pending conditional tasks cap the suspension */
	ws_idle(d->ws, self, out);
	if (d->n < 2)
		return NULL;
	if (!d->w[self].in_mode) {
		/* (e) with (i-3) applied first: with no other worker active there is nothing to
		 * distribute from or to, and entering would only mean leaving again at once. And (f)
		 * is final, as in the memo ((f-1): only activation leads back to (c)): a worker that
		 * has announced its deactivation -- the core's re-check in suspend() -- does not enter.
		 * Entering there made the two last awake workers trade the mode for ever: the
		 * distributor sees the announcement and leaves at (i-3), the announcing worker's
		 * re-check finds the mode free and enters, stays awake for the other, and so on at
		 * every worker_try_count (1.5 of 2 cores busy on sparse arrivals; PAPER §4.4). */
		if (d->dedicated || sb_worker_suspended(d->rt, self) || !others_active(d, self) ||
		    !try_enter(d, self))
			return NULL; /* (f): the core deactivates this worker after its empty rounds */
	}

	/* (i): take a task from the other workers' LTQs */
	struct sb_task *t = steal_for_handoff(d, self);
	if (t) {
		/* (ii): hand it to a deactivated worker; the core wakes it (out->wake). That worker's
		 * suspend re-checks its LTQ after its barrier (W) and the wake-up takes the pairing
		 * barrier (P) before looking at its state (core/idle.c), so the push below is either seen by its
		 * re-check or answered by the wake: the task cannot sit in a sleeping worker's LTQ. */
		int v = find_deactivated(d, self);
		if (v >= 0)
			atomic_store_explicit(&d->w[v].handed, true, memory_order_relaxed);
		if (v >= 0 && ws_push(d->ws, (unsigned)v, sb_thread_self(), t) == v) {
			count(&d->nr_handoff);
			out->wake = v;
			out->stay_awake = true;
			return NULL; /* back to (i) on the next call */
		}
		/* (ii-2): nobody is deactivated (or its LTQ is full): leave the mode and run the task
		 * here. The memo's race: a worker may deactivate right after, with no distributor
		 * left. Harmless: every queued task sits in some LTQ, and whoever pushed it there
		 * woke that LTQ's owner (the core's wake-on-push; hand-offs name it in out->wake), so
		 * an owner never sleeps on a non-empty LTQ. What is lost is only balance: a sleeping
		 * worker helps again when a placement wakes it, when its worker_suspend_timeout
		 * passes, or when the next worker that runs dry enters the mode. */
		count(&d->nr_ran);
		if (!d->dedicated)
			leave(d, self);
		return t;
	}
	if (others_active(d, self)) {
		/* (i-2): another worker is active and may spawn; keep looking (the busy loop) */
		count(&d->nr_busy);
		for (uint64_t i = 0; i < d->busy_pause; i++)
			sb_cpu_relax();
		out->stay_awake = true;
		out->yield = d->busy_yield; /* distribution.c: the busy loop */
		return NULL;
	}
	/* (i-3): no other worker is active: leave the mode and deactivate. The memo's race: a
	 * worker woken just after the snapshot above is active with no distributor. Harmless for
	 * the same reason as (ii-2): it was woken because a task was pushed to its own LTQ, which
	 * it runs; nothing it spawns is out of reach of its own pops and of other workers' steals.
	 * The dedicated distributor, which no placement wakes, sleeps at most distributor_poll_us
	 * so that it comes back to distribute for that worker. */
	if (d->dedicated) {
		if (d->poll_us && (!out->max_suspend_us || d->poll_us < out->max_suspend_us))
			out->max_suspend_us = d->poll_us;
	} else {
		count(&d->nr_none_active);
		leave(d, self);
	}
	return NULL;
}
