/*
 * distribution.c - memo 001's task distribution mode ("タスク配布モード") on the work-stealing
 * family, and the memo's idea of a dedicated distribution thread instead of the mode.
 *
 * Algorithm. As in memo 001, "タスクスケジューリングの流れ" (c)-(f) and "タスク配布モード" (i)-(ii).
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
 * Invariants. At most one worker is in the mode (one CAS on `distributor`; `in_mode` counts
 * the workers inside and any overlap is reported as distributor_overlaps); a task is in exactly
 * one LTQ or in the hands of exactly one worker, because a hand-off is a steal followed by a
 * push. No task is stranded: see (i-3) and (ii-2) below, where the memo's two races are.
 *
 * The busy loop (i-2) pauses once per round, as every idle round of the core does (one `pause`,
 * core/worker.c); busy_pause adds that many more, the memo's question of an mm_pause there. Each
 * round then yields the CPU (busy_yield): the distributor waits for the other workers, and Linux
 * often queues one of them on the distributor's own core -- a worker woken by the wake chain
 * preempts its waker there and enters the mode while the waker holds a task it has already
 * taken, so nobody can steal it. A plain spin held that task for up to the scheduler's slice,
 * 1 to 4 ms, on 2 cores with the other one idle (PAPER §4.4); a yield when nobody else is
 * queued returns at once.
 *
 * Limits. The distributor spins while any worker is active (as the memo says); a hand-off goes
 * to one deactivated worker at a time; with steal_half the extras stay with the distributor,
 * which then leaves the mode to run them (dedicated: runs them as the distributor).
 */
#include <stdlib.h>

#include "distribution_impl.h"

static const char *const distributor_names[] = { "mode", "dedicated", NULL };

#define P struct distribution_params
static const struct sb_param distribution_param_table[] = {
	SB_PARAM_INCLUDE(P, ws, ws_param_table),
	SB_PARAM_ENUM(P, distributor, DIST_MODE, distributor_names,
		      "who distributes: the first idle worker to enter the mode, or worker 0 for the whole run"),
	SB_PARAM_INT(P, distributor_poll_us, 1000, 0, 60000000,
		     "dedicated: longest sleep of worker 0 while no worker is active; 0 = worker_suspend_timeout"),
	SB_PARAM_INT(P, busy_pause, 0, 0, 1000000,
		     "(i-2): pause instructions in each empty round of the mode's busy loop, beyond the one every "
		     "idle round ends with (memo 001's mm_pause question)"),
	SB_PARAM_BOOL(P, busy_yield, 1,
		      "(i-2): end each round of the mode's busy loop with a yield, so that a worker queued on the "
		      "distributor's core runs (false: the memo's plain spin)"),
	SB_PARAM_END,
};
#undef P

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
	d->busy_pause = (uint64_t)p->busy_pause;
	d->busy_yield = p->busy_yield;
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

static size_t distribution_queued(void *st, int w) { return ws_queued(((struct distribution *)st)->ws, w); }

static void distribution_stats(void *st, sb_stat_emit_fn emit, void *ctx)
{
	struct distribution *d = st;
	ws_stats(d->ws, emit, ctx);
	emit(ctx, "mode_entries", (double)atomic_load_explicit(&d->nr_enter, memory_order_relaxed));
	emit(ctx, "mode_exits", (double)atomic_load_explicit(&d->nr_exit, memory_order_relaxed));
	emit(ctx, "handoffs", (double)atomic_load_explicit(&d->nr_handoff, memory_order_relaxed));
	/* (ii-2) exits: the windows of the memo's second race (a worker deactivating right after) */
	emit(ctx, "distributor_ran", (double)atomic_load_explicit(&d->nr_ran, memory_order_relaxed));
	emit(ctx, "exits_none_active", (double)atomic_load_explicit(&d->nr_none_active, memory_order_relaxed));
	emit(ctx, "distributor_overlaps", (double)atomic_load_explicit(&d->nr_overlap, memory_order_relaxed));
	emit(ctx, "busy_rounds", (double)atomic_load_explicit(&d->nr_busy, memory_order_relaxed));
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
