/*
 * txslot.c - memo 001's transaction slots ("トランザクションスロット", kept there as an idea) on
 * the work-stealing family.
 *
 * Algorithm. As in memo 001, "トランザクションスロット" (A)-(F). Every transaction has a slot: its own
 * queue and one ticket, the occupancy right (struct ws_lane, lane.h, with its marker entry as
 * the ticket). Slot tasks are the tasks that work on the transaction (SB_TF_STICKY with t->txn);
 * every other task goes through the stealing placement. (A) Submitting a slot task enqueues it in
 * the slot; if the ticket is not issued, the same step issues it, and (A-2-1) the submitter
 * puts the ticket on the global I/O queue (GIOQ) and asks the core to wake a deactivated worker.
 * (B) Every worker looks at the GIOQ before its own LTQ; (C) a worker that takes a ticket runs the
 * slot's tasks, any number, one per pop, and (D, E) returns the ticket when the slot is empty,
 * which the slot refuses while tasks remain (then the holder simply goes on). (F) Without a
 * ticket a worker goes on with its LTQ and stealing as in stealing.
 *
 * Invariants. A slot has at most one ticket holder and only the holder takes its tasks, one per
 * pop, so two tasks of a slot never run at once (a worker asks for its next task only after the
 * previous one returned; a yielded or resumed slot task comes back through submit). A slot with
 * tasks always has its ticket issued, and an issued ticket is on the GIOQ or in
 * the hand of a worker that returns a task or the ticket on each pop (the one-word protocol in
 * lane.h), so no slot task waits with nobody to run it. Tickets never enter an LTQ, so they
 * are never stolen: any idle worker takes them from the GIOQ instead.
 *
 * Limits. The memo's own doubts: every pop looks at one global queue; a holder serves its slot
 * until it is empty, so while a slot is fed faster than it drains, its holder's LTQ waits for
 * thieves (with one worker it waits, full stop). A conditional sticky task waits outside the slot
 * (the family's watcher or PTL) and runs there, serialised with the slot's tasks only by the
 * core's transaction lock, as under stealing. The GIOQ is unbounded (sb_fifo): a ticket is
 * never refused.
 */
#include <stdlib.h>

#include "lane.h"
#include "ws.h"

struct txslot_params {
	struct ws_params ws;
};

#define P struct txslot_params
static const struct sb_param txslot_param_table[] = {
	SB_PARAM_INCLUDE(P, ws, ws_param_table),
	SB_PARAM_END,
};
#undef P

/* Per worker, written by that worker only: the slot whose ticket it holds. */
struct txslot_worker {
	_Alignas(SB_CACHELINE) struct ws_lane *held;
};

/* Shared state: the GIOQ (sb_fifo: any thread pushes, any worker pops), relaxed counters. */
struct txslot {
	struct ws *ws;
	struct txslot_worker *w;
	struct sb_fifo gioq;
	_Alignas(SB_CACHELINE) _Atomic int64_t nr_items; /* slot tasks not yet returned */
	_Atomic uint64_t nr_issued, nr_returned;
};

static void count(_Atomic uint64_t *c)
{
	/* relaxed: a statistic */
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static void txslot_destroy(void *st)
{
	struct txslot *S = st;
	ws_destroy(S->ws);
	if (atomic_load_explicit(&S->gioq.head, memory_order_relaxed))
		sb_fifo_fini(&S->gioq);
	free(S->w);
	free(S);
}

static int txslot_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	const struct txslot_params *p = params;
	struct txslot *S = sb_alloc_lines(sizeof *S);
	if (!S || !(S->w = sb_alloc_lines(sb_nworkers(rt) * sizeof *S->w)) ||
	    sb_fifo_init(&S->gioq)) {
		if (S)
			txslot_destroy(S);
		return sb_policy_error(err, errlen, -ENOMEM, "out of memory");
	}
	int e = ws_create(rt, &p->ws, &S->ws, err, errlen);
	if (e) {
		txslot_destroy(S);
		return e;
	}
	*state = S;
	return 0;
}

static int txslot_txn_init(void *st, struct sb_txn *x) { return ws_lane_txn_init(x); }
static void txslot_txn_fini(void *st, struct sb_txn *x) { ws_lane_txn_fini(x); }

static int txslot_submit(void *st, struct sb_thread *caller, struct sb_task *t)
{
	struct txslot *S = st;
	if ((t->flags & SB_TF_COND) && (t->flags & SB_TF_STICKY) && t->txn)
		return SB_TO_WATCHER; /* it comes back as a plain sticky task once its check holds */
	if (!ws_lane_item(t))
		return ws_submit(S->ws, caller, t);
	struct ws_lane *slot = sb_txn_pdata(t->txn);
	/* relaxed: a length estimate for queued() */
	atomic_fetch_add_explicit(&S->nr_items, 1, memory_order_relaxed);
	/* (A): enqueue, and issue the ticket if it is not issued, in one CAS */
	if (!ws_lane_push(t))
		return SB_TO_NOWAKE; /* the holder cannot return the ticket before taking t */
	count(&S->nr_issued);
	/* (A-2-1): the ticket goes on the GIOQ; from here on it belongs to whoever takes it */
	sb_fifo_push(&S->gioq, &slot->marker);
	/* the core wakes one deactivated worker unless one is searching; every awake worker
	 * looks at the GIOQ before its LTQ, also in the re-check before it would sleep */
	return SB_TO_ANY;
}

/* (C)-(E): a task of the held slot, or NULL once the ticket is returned. */
static struct sb_task *serve(struct txslot *S, struct txslot_worker *me)
{
	for (;;) {
		struct sb_task *t = ws_lane_take(me->held);
		if (t) {
			atomic_fetch_sub_explicit(&S->nr_items, 1, memory_order_relaxed);
			return t;
		}
		/* (D): the slot looks empty: return the ticket; (E) the slot takes it back unless a
		 * task arrived meanwhile, and then there is one to take */
		if (ws_lane_give_back(me->held)) {
			me->held = NULL; /* the slot may be gone already */
			count(&S->nr_returned);
			return NULL;
		}
	}
}

/* (B): a ticket from the GIOQ (the length test first: two loads, cheaper than a pop's claim) */
static struct sb_task *ticket_pop(struct txslot *S)
{
	return sb_fifo_len(&S->gioq) ? sb_fifo_pop(&S->gioq) : NULL;
}

static struct sb_task *txslot_pop(void *st, unsigned self)
{
	struct txslot *S = st;
	struct txslot_worker *me = &S->w[self];
	struct sb_task *t, *m;
	if (me->held && (t = serve(S, me)))
		return t;
	/* (B) GIOQ before the LTQ. A ticket on the GIOQ always has a task (it was issued with one,
	 * and only its holder takes tasks), so this loop ends at the first ticket. */
	while ((m = ticket_pop(S))) {
		me->held = ws_lane_of(m);
		if ((t = serve(S, me)))
			return t;
	}
	/* (F) */
	return ws_pop(S->ws, self);
}

static struct sb_task *txslot_steal(void *st, unsigned self) { return ws_steal(((struct txslot *)st)->ws, self); }
static struct sb_task *txslot_idle(void *st, unsigned self, struct sb_idle *o)
{
	return ws_idle(((struct txslot *)st)->ws, self, o);
}

static size_t txslot_queued(void *st, int w)
{
	struct txslot *S = st;
	if (w >= 0)
		return ws_queued(S->ws, w);
	int64_t items = atomic_load_explicit(&S->nr_items, memory_order_relaxed);
	return (items > 0 ? (size_t)items : 0) + sb_fifo_len(&S->gioq);
}

static void txslot_stats(void *st, sb_stat_emit_fn emit, void *ctx)
{
	struct txslot *S = st;
	ws_stats(S->ws, emit, ctx);
	emit(ctx, "tickets_issued", (double)atomic_load_explicit(&S->nr_issued, memory_order_relaxed));
	emit(ctx, "tickets_returned", (double)atomic_load_explicit(&S->nr_returned, memory_order_relaxed));
}

const struct sb_policy_ops txslot_ops = {
	.create = txslot_create,
	.destroy = txslot_destroy,
	.txn_init = txslot_txn_init,
	.txn_fini = txslot_txn_fini,
	.submit = txslot_submit,
	.pop = txslot_pop,
	.steal = txslot_steal,
	.idle = txslot_idle,
	.queued = txslot_queued,
	.stats = txslot_stats,
	.name = "txslot",
	.description = "memo 001's transaction slots: per-transaction slot + ticket, tickets on a global I/O queue checked first",
	.version = 1,
	.flags = SB_POLICY_STICKY_EXCLUSIVE,
	.params = txslot_param_table,
	.params_size = sizeof(struct txslot_params),
};
