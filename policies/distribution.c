/*
 * distribution.c - memo 001's task distribution mode ("タスク配布モード") on the work-stealing
 * family, and the memo's idea of a dedicated distribution thread instead of the mode.
 *
 * Algorithm (memo 001, "タスクスケジューリングの流れ" (c)-(f) and "タスク配布モード" (i)-(ii)).
 * A worker (c) pops its own LTQ (ws_pop) and (d) steals from the others (ws_steal, the core's
 * sweep). Finding nothing, it reaches this policy's idle callback: (e) it enters distribution
 * mode if no worker is in it, else (f) it returns and the core deactivates (suspends) it in the
 * usual way. In the mode every idle call is one step: (i) steal a task from the other workers'
 * LTQs; (ii) hand it to a deactivated worker by pushing it to that worker's LTQ and naming it
 * in out->wake, and stay in the mode; (ii-2) with no worker deactivated, leave the mode and run
 * the task here. Finding nothing, (i-2) stay in the mode (out->stay_awake: the core keeps
 * calling, which is the memo's busy loop) while another worker is active, or (i-3) leave it and
 * deactivate when none is. While in the mode a worker does not steal for itself in (d): what it
 * steals it distributes in (i). A distributor that finds work in its own LTQ in (c) is no longer
 * idle and leaves the mode.
 *
 * distributor=dedicated: worker 0 is the distributor for the whole run (the memo's dedicated
 * distribution thread). Placement never gives it a task: whatever would go to worker 0 goes to
 * another worker, so worker 0 only runs what it steals and cannot hand on ((ii-2)), plus the
 * extras of steal_half (and, as everywhere in the family, a task of its own whose target queue
 * is full). It deactivates like the mode's distributor in (i-3), but for at most
 * distributor_poll_us, because no placement ever wakes it. With one worker there is nobody to
 * distribute to or from: worker 0 takes every task and the policy is plain stealing.
 *
 * Invariants: at most one worker is in the mode (one CAS on `distributor`; `in_mode` counts
 * the workers inside and any overlap is reported as distributor_overlaps); a task is in exactly
 * one LTQ or in the hands of exactly one worker, because a hand-off is a steal followed by a
 * push. No task is stranded: see (i-3) and (ii-2) below, where the memo's two races are.
 * Limits: the distributor spins while any worker is active (as the memo says); a hand-off goes
 * to one deactivated worker at a time; with steal_half the extras stay with the distributor,
 * which then leaves the mode to run them (dedicated: runs them as the distributor).
 */
#include <stdlib.h>

#include "stealing.h"

enum { DIST_MODE, DIST_DEDICATED };
static const char *const distributor_names[] = { "mode", "dedicated", NULL };

struct distribution_params {
	struct ws_params ws;
	int distributor; /* DIST_* */
	int64_t distributor_poll_us;
};

#define P struct distribution_params
static const struct sb_param distribution_param_table[] = {
	SB_PARAM_INCLUDE(P, ws, ws_param_table),
	SB_PARAM_ENUM(P, distributor, DIST_MODE, distributor_names,
		      "who distributes: the first idle worker to enter the mode, or worker 0 for the whole run"),
	SB_PARAM_INT(P, distributor_poll_us, 1000, 0, 60000000,
		     "dedicated: longest sleep of worker 0 while no worker is active; 0 = worker_suspend_timeout"),
	SB_PARAM_END,
};
#undef P

#define NOBODY (-1)

/* Per worker. `in_mode` is written by that worker only; `handed` is raised by the distributor
 * when it hands the worker a task and lowered by the worker's next pop. */
struct dist_worker {
	_Alignas(SB_CACHELINE) bool in_mode; /* this worker is the distributor */
	_Atomic bool handed;                 /* holds a hand-off it has not looked for yet */
};

/*
 * Shared state. `distributor` is CASed by idle workers entering the mode and stored by the one
 * leaving it; `in_mode` and the counters are touched by whoever is (or was) the distributor and
 * read by stats. Nothing here is held across a call.
 */
struct distribution {
	struct ws *ws;
	struct sb_rt *rt;
	unsigned n;
	bool dedicated;
	uint64_t poll_us;
	struct dist_worker *w;
	_Alignas(SB_CACHELINE) _Atomic int distributor; /* worker in the mode, or NOBODY */
	_Atomic int in_mode;                            /* workers between enter and leave */
	_Atomic uint64_t nr_enter, nr_exit, nr_handoff, nr_ran, nr_overlap;
};

static void count(_Atomic uint64_t *c)
{
	/* relaxed: a statistic; distributors follow each other, so this is an RMW */
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static void distribution_destroy(void *st)
{
	struct distribution *d = st;
	ws_destroy(d->ws);
	free(d->w);
	free(d);
}

static int distribution_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	const struct distribution_params *p = params;
	struct distribution *d = sb_alloc_lines(sizeof *d);
	unsigned n = sb_nworkers(rt);
	if (!d || !(d->w = sb_alloc_lines(n * sizeof *d->w))) {
		free(d);
		return sb_policy_error(err, errlen, -ENOMEM, "out of memory");
	}
	d->rt = rt;
	d->n = n;
	d->dedicated = p->distributor == DIST_DEDICATED && n > 1;
	d->poll_us = (uint64_t)p->distributor_poll_us;
	/* dedicated: worker 0 is in the mode before any worker asks for work, and never leaves */
	atomic_init(&d->distributor, d->dedicated ? 0 : NOBODY);
	atomic_init(&d->in_mode, d->dedicated ? 1 : 0);
	d->w[0].in_mode = d->dedicated;
	int e = ws_create(rt, &p->ws, &d->ws, err, errlen);
	if (e) {
		distribution_destroy(d);
		return e;
	}
	*state = d;
	return 0;
}

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
static int distribution_submit(void *st, struct sb_thread *caller, struct sb_task *t)
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
static struct sb_task *distribution_pop(void *st, unsigned self)
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
static struct sb_task *distribution_steal(void *st, unsigned self)
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

static struct sb_task *distribution_idle(void *st, unsigned self, struct sb_idle *out)
{
	struct distribution *d = st;
	/* the family's hint first: pending conditional tasks cap the suspension */
	ws_idle(d->ws, self, out);
	if (d->n < 2)
		return NULL;
	if (!d->w[self].in_mode) {
		/* (e) with (i-3) applied first: with no other worker active there is nothing to
		 * distribute from or to, and entering would only mean leaving again at once */
		if (d->dedicated || !others_active(d, self) || !try_enter(d, self))
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
		out->stay_awake = true;
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
		leave(d, self);
	}
	return NULL;
}

static size_t distribution_queued(void *st, int w) { return ws_queued(((struct distribution *)st)->ws, w); }

static void distribution_stats(void *st, sb_stat_emit_fn emit, void *ctx)
{
	struct distribution *d = st;
	ws_stats(d->ws, emit, ctx);
	emit(ctx, "mode_entries", (double)atomic_load_explicit(&d->nr_enter, memory_order_relaxed));
	emit(ctx, "mode_exits", (double)atomic_load_explicit(&d->nr_exit, memory_order_relaxed));
	emit(ctx, "handoffs", (double)atomic_load_explicit(&d->nr_handoff, memory_order_relaxed));
	emit(ctx, "distributor_ran", (double)atomic_load_explicit(&d->nr_ran, memory_order_relaxed));
	emit(ctx, "distributor_overlaps", (double)atomic_load_explicit(&d->nr_overlap, memory_order_relaxed));
}

static const char *const distribution_paths[] = { "handoffs", NULL };

const struct sb_policy_ops distribution_ops = {
	.create = distribution_create,
	.destroy = distribution_destroy,
	.submit = distribution_submit,
	.pop = distribution_pop,
	.steal = distribution_steal,
	.idle = distribution_idle,
	.queued = distribution_queued,
	.stats = distribution_stats,
	.name = "distribution",
	.description = "memo 001's task distribution mode: one idle worker steals and hands tasks to deactivated workers",
	.version = 1,
	.flags = SB_POLICY_STICKY_EXCLUSIVE,
	.params = distribution_param_table,
	.params_size = sizeof(struct distribution_params),
	.paths = distribution_paths,
	.degenerate_hint = "no task was handed off, so this ran as plain stealing: a hand-off needs a worker "
			   "deactivated while another has queued work, which 3 or more workers give (--threads 3)",
};
