/*
 * lanes.c - memo 001's task processing lanes ("タスク実行レーン") on the work-stealing family.
 *
 * Algorithm. As in memo 001, "タスク実行レーン" (A)-(C). Every transaction has a lane: its own queue
 * and one occupancy right (struct ws_lane, lane.h). Lane items are the tasks that work on the
 * transaction (SB_TF_STICKY with t->txn); every other task goes through the stealing placement.
 * (A) Submitting an item enqueues it in its lane and (B) tries to take the right, in one step
 * (ws_lane_push); (B-1) the submitter that takes it pushes the lane task (the lane's marker entry)
 * onto the current worker's LTQ, a request thread onto its preferred worker's; (B-2) otherwise
 * nothing more is done, because the holder will see the item. (C) A worker that pops or steals a
 * lane task becomes the holder: (C-1, C-2) it returns up to lane_budget items, one per pop, and
 * (C-3) then offers the right back; (C-3-1) the lane refuses while items remain, and the lane
 * task goes back on the holder's LTQ, behind fresh work, where stealing can move it to another
 * worker; (C-3-2) otherwise the right is free again.
 *
 * Invariants. A lane has at most one holder, and only the holder takes items, one per pop of its
 * worker; a worker asks for its next task only after the previous one has returned (an item that
 * yields or is resumed comes back through submit into its lane), so no two items of a lane ever
 * run at once. A lane with items always has a holder (the one-word protocol in lane.h): its
 * lane task is in some LTQ or in the hand of a worker that returns an item
 * or gives the right back on each pop, and never returns nothing while it holds a lane.
 *
 * Limits. A conditional sticky task waits outside the lane (the family's watcher or PTL) and,
 * once ready, runs there, serialised with the lane's items only by the core's transaction lock,
 * as a conditional sticky task is under stealing. The LTQs are unbounded (core/queue.h), so a
 * lane task is never refused.
 */
#include <stdlib.h>

#include "lane.h"
#include "ws.h"

struct lanes_params {
	struct ws_params ws;
	int64_t lane_budget;
};

#define P struct lanes_params
static const struct sb_param lanes_param_table[] = {
	SB_PARAM_INCLUDE(P, ws, ws_param_table),
	SB_PARAM_INT(P, lane_budget, 8, 1, 1000000,
		     "lane items a holder runs (one per pop) before it offers the lane's right back (memo 001's K)"),
	SB_PARAM_END,
};
#undef P

/* Per worker, written by that worker only: the lane it holds, and items left in its turn. */
struct lanes_worker {
	_Alignas(SB_CACHELINE) struct ws_lane *held;
	int64_t left;
};

/* Shared state: relaxed counters updated by any thread. */
struct lanes {
	struct ws *ws;
	struct sb_rt *rt;
	int64_t budget;
	struct lanes_worker *w;
	_Alignas(SB_CACHELINE) _Atomic int64_t nr_items; /* items in lanes, not yet returned */
	_Atomic uint64_t nr_takes, nr_requeues, nr_releases;
};

static void count(_Atomic uint64_t *c)
{
	/* relaxed: a statistic */
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static void lanes_destroy(void *st)
{
	struct lanes *L = st;
	ws_destroy(L->ws);
	free(L->w);
	free(L);
}

static int lanes_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	const struct lanes_params *p = params;
	struct lanes *L = sb_alloc_lines(sizeof *L);
	if (!L || !(L->w = sb_alloc_lines(sb_nworkers(rt) * sizeof *L->w))) {
		free(L);
		return sb_policy_error(err, errlen, -ENOMEM, "out of memory");
	}
	L->budget = p->lane_budget;
	L->rt = rt;
	int e = ws_create(rt, &p->ws, &L->ws, err, errlen);
	if (e) {
		lanes_destroy(L);
		return e;
	}
	*state = L;
	return 0;
}

static int lanes_txn_init(void *st, struct sb_txn *x) { return ws_lane_txn_init(x); }
static void lanes_txn_fini(void *st, struct sb_txn *x) { ws_lane_txn_fini(x); }

static int lanes_submit(void *st, struct sb_thread *caller, struct sb_task *t)
{
	struct lanes *L = st;
	if ((t->flags & SB_TF_COND) && (t->flags & SB_TF_STICKY) && t->txn)
		return SB_TO_WATCHER; /* it comes back as a plain sticky task once its check holds */
	if (!ws_lane_item(t))
		return ws_submit(L->ws, caller, t);
	struct ws_lane *l = sb_txn_pdata(t->txn);
	/* relaxed: a length estimate for queued() */
	atomic_fetch_add_explicit(&L->nr_items, 1, memory_order_relaxed);
	/* enqueue and (B) try to take the right, in one CAS */
	if (!ws_lane_push(t))
		return SB_TO_NOWAKE; /* (B-2): the holder cannot give the right back before taking t */
	count(&L->nr_takes);
	/* (B-1): the lane task goes to the current worker's LTQ (a request thread's preferred one);
	 * the core wakes that worker when it is not the caller */
	int self = sb_thread_worker(caller);
	unsigned w = self >= 0 ? (unsigned)self : ws_pick(L->ws, caller, &l->marker);
	l->marker.flags = SB_TF_MARKER;
	return ws_push(L->ws, w, caller, &l->marker);
}

/* (C) The holder's turn: an item, or NULL once the lane is no longer held by this worker. */
static struct sb_task *serve(struct lanes *L, struct lanes_worker *me, unsigned self)
{
	struct ws_lane *l = me->held;
	for (;;) {
		struct sb_task *t;
		/* (C-1, C-2): the lane's oldest item, up to lane_budget per turn */
		if (me->left > 0 && (t = ws_lane_take(l))) {
			me->left--;
			atomic_fetch_sub_explicit(&L->nr_items, 1, memory_order_relaxed);
			return t;
		}
		/* (C-3): turn over or lane empty: offer the right back */
		if (ws_lane_give_back(l)) {
			me->held = NULL; /* (C-3-2): released; the lane may be gone already */
			count(&L->nr_releases);
			return NULL;
		}
		/* (C-3-1) refused: items remain */
		if (me->left > 0)
			continue; /* they arrived between the take and the offer: serve them */
		/* turn over: the lane task goes back on our LTQ behind fresh work (SB_TF_AGAIN), where
		 * thieves can take it; once pushed it belongs to whoever pops it */
		l->marker.flags = SB_TF_MARKER | SB_TF_AGAIN;
		ws_push(L->ws, self, sb_thread_self(), &l->marker);
		me->held = NULL;
		count(&L->nr_requeues);
		sb_work_available(L->rt); /* a thief may take the lane over */
		return NULL;
	}
}

static struct sb_task *hold(struct lanes *L, unsigned self, struct sb_task *marker)
{
	struct lanes_worker *me = &L->w[self];
	me->held = ws_lane_of(marker);
	me->left = L->budget;
	return serve(L, me, self);
}

static struct sb_task *lanes_pop(void *st, unsigned self)
{
	struct lanes *L = st;
	struct sb_task *t;
	if (L->w[self].held && (t = serve(L, &L->w[self], self)))
		return t;
	/* Each lane task found here either yields an item (a lane task in a queue always has
	 * one: it was queued with an item or after a refused offer, and only its holder takes
	 * items) or is given back, so this loop ends. */
	while ((t = ws_pop(L->ws, self))) {
		if (!(t->flags & SB_TF_MARKER))
			return t;
		if ((t = hold(L, self, t)))
			return t;
	}
	return NULL;
}

static struct sb_task *lanes_steal(void *st, unsigned self)
{
	struct lanes *L = st;
	struct sb_task *t = ws_steal(L->ws, self);
	/* a stolen lane task moves the lane to this worker */
	return t && (t->flags & SB_TF_MARKER) ? hold(L, self, t) : t;
}

static struct sb_task *lanes_idle(void *st, unsigned self, struct sb_idle *o)
{
	return ws_idle(((struct lanes *)st)->ws, self, o);
}

static size_t lanes_queued(void *st, int w)
{
	struct lanes *L = st;
	if (w >= 0)
		return ws_queued(L->ws, w);
	int64_t items = atomic_load_explicit(&L->nr_items, memory_order_relaxed);
	return items > 0 ? (size_t)items : 0;
}

static void lanes_stats(void *st, sb_stat_emit_fn emit, void *ctx)
{
	struct lanes *L = st;
	ws_stats(L->ws, emit, ctx);
	emit(ctx, "lane_takes", (double)atomic_load_explicit(&L->nr_takes, memory_order_relaxed));
	emit(ctx, "lane_requeues", (double)atomic_load_explicit(&L->nr_requeues, memory_order_relaxed));
	emit(ctx, "lane_releases", (double)atomic_load_explicit(&L->nr_releases, memory_order_relaxed));
}

const struct sb_policy_ops lanes_ops = {
	.create = lanes_create,
	.destroy = lanes_destroy,
	.txn_init = lanes_txn_init,
	.txn_fini = lanes_txn_fini,
	.submit = lanes_submit,
	.pop = lanes_pop,
	.steal = lanes_steal,
	.idle = lanes_idle,
	.queued = lanes_queued,
	.stats = lanes_stats,
	.name = "lanes",
	.description = "memo 001's task processing lanes: per-transaction queue + occupancy right, lane tasks move by stealing",
	.version = 1,
	.flags = SB_POLICY_STICKY_EXCLUSIVE,
	.params = lanes_param_table,
	.params_size = sizeof(struct lanes_params),
};
