/*
 * ws_take.c - the work-stealing family's base, taking work: a worker's own queues in the
 * configured order, the pending task lists (conditional=ptl), the steal sweep and the idle hint.
 */
#include <stdlib.h>

#include "ws_impl.h"

static __attribute__((noinline, cold)) void published(struct ws *ws)
{
	sb_work_available(ws->rt);
}

/* local_order=lifo's pop, all of it: the FIFO first when `fair` (one pop in 32, so that what
 * others submit cannot starve), then the deque, then the FIFO. */
static __attribute__((noinline)) struct sb_task *lifo_pop_full(struct ws *ws, struct ws_worker *me, bool fair)
{
	struct sb_task *t;
	if (fair && (t = sb_fifo_pop(&me->ring)))
		return t;
	bool pub = false;
	t = sb_deque_pop(&me->dq, &pub);
	if (__builtin_expect(pub, 0))
		published(ws); /* a thief asked, and the pop gave it the older half of our tasks */
	return t ? t : sb_fifo_pop(&me->ring);
}

/* A thief asked while the owner popped a private task: publish, then hand the task back. */
static __attribute__((noinline, cold)) struct sb_task *lifo_pop_publish(struct ws *ws, struct ws_worker *me,
									 struct sb_task *t)
{
	if (sb_deque_publish(&me->dq))
		published(ws);
	return t;
}

/* The owner's main queue. For lifo the common case is a private task and nothing else to do;
 * every rare case is a tail call, so the common case saves no registers. */
static inline __attribute__((always_inline)) struct sb_task *main_pop(struct ws *ws, struct ws_worker *me)
{
	if (ws->p.local_order == WS_FIFO)
		return sb_fifo_pop(&me->ring);
	if (__builtin_expect((++me->fair & 31) == 0, 0))
		return lifo_pop_full(ws, me, true);
	struct sb_task *t = sb_deque_pop_private(&me->dq);
	if (__builtin_expect(!t, 0))
		return lifo_pop_full(ws, me, false);
	if (__builtin_expect(sb_deque_asked(&me->dq), 0))
		return lifo_pop_publish(ws, me, t);
	return t;
}

static bool dropped(const struct sb_task *t)
{
	return sb_job_cancelled(t->job);
}

/* Memo 001's pending task list: scanned before the LTQ; a ready task (or one of a cancelled
 * job, which the core will drop) is taken; after ptl_requeue failed checks a task goes back to
 * the main queue where thieves can reach it. */
static __attribute__((noinline, cold)) struct sb_task *ptl_scan(struct ws *ws, struct ws_worker *me)
{
	for (size_t k = me->ptl.len; k > 0; k--) {
		struct sb_task *t = sb_list_pop(&me->ptl);
		if (dropped(t) || sb_task_ready(t)) {
			t->flags &= ~(uint32_t)SB_TF_COND;
			return t;
		}
		if (ws->p.ptl_requeue && ++t->pint >= ws->p.ptl_requeue) {
			t->pint = 0;
			/* a sticky task is bound to this worker: back to its sticky queue, never stealable */
			if ((t->flags & SB_TF_STICKY) && t->txn) {
				sb_mpsc_push(&me->sticky, t);
				ws_bump(&me->nr_ptl_requeue);
				continue;
			}
			sb_fifo_push(&me->ring, t);
			ws_bump(&me->nr_ptl_requeue);
			continue;
		}
		sb_list_push(&me->ptl, t);
	}
	return NULL;
}

static inline struct sb_task *sticky_pop(struct ws_worker *me)
{
	/* the emptiness test is two loads; a pop of an empty MPSC queue is more */
	return sb_mpsc_empty(&me->sticky) ? NULL : sb_mpsc_pop(&me->sticky);
}

/* jogasaki's check order: accumulate thousandths; below one whole, sticky goes first */
static inline __attribute__((always_inline)) struct sb_task *queues_pop(struct ws *ws, struct ws_worker *me)
{
	struct sb_task *t;
	me->ratio_acc += ws->p.dev_thousandths_ratio_check_local_first;
	if (me->ratio_acc < 1000) {
		if (!(t = sticky_pop(me)))
			t = main_pop(ws, me);
	} else {
		me->ratio_acc -= 1000;
		if (!(t = main_pop(ws, me)))
			t = sticky_pop(me);
	}
	return t;
}

static inline bool ptl_candidate(struct ws *ws, const struct sb_task *t)
{
	return (t->flags & SB_TF_COND) && ws->p.conditional == WS_COND_PTL && !dropped(t);
}

/* Memo 001: a conditional task taken from the LTQ before its time goes to the PTL, and the
 * worker goes on looking. It must not return NULL with other work still queued behind the
 * parked task: a worker re-checking before it sleeps would sleep on it (models/idle.pml). */
static __attribute__((noinline, cold)) struct sb_task *ptl_take(struct ws *ws, struct ws_worker *me,
								   struct sb_task *t)
{
	do {
		if (sb_task_ready(t)) {
			t->flags &= ~(uint32_t)SB_TF_COND;
			return t;
		}
		t->pint = 0;
		sb_list_push(&me->ptl, t);
		t = queues_pop(ws, me);
	} while (t && ptl_candidate(ws, t));
	return t;
}

/* The full pop: pending list, then main and sticky in jogasaki's check order, parking an early
 * conditional task. Out of line, for the same reason as submit_other. */
static __attribute__((noinline)) struct sb_task *pop_full(struct ws *ws, struct ws_worker *me)
{
	struct sb_task *t;
	if (me->ptl.len != 0 && (t = ptl_scan(ws, me)))
		return t;
	t = queues_pop(ws, me);
	if (t && __builtin_expect(ptl_candidate(ws, t), 0))
		return ptl_take(ws, me, t);
	return t;
}

static inline __attribute__((always_inline)) struct sb_task *pop_impl(struct ws *ws, unsigned self)
{
	struct ws_worker *me = &ws->w[self];
	/* One combined test: with no pending list, no pending-list mode and an empty sticky queue
	 * the check order has nothing to order, so the main queue alone answers. The ratio
	 * accumulator then advances only on pops where sticky work competed with main work, which
	 * keeps jogasaki's one-in-ten among the checks where the order matters. */
	if (__builtin_expect(!(me->ptl.len | (size_t)ws->cond_ptl) && sb_mpsc_empty(&me->sticky), 1))
		return main_pop(ws, me);
	return pop_full(ws, me);
}

struct sb_task *ws_pop(struct ws *ws, unsigned self)
{
	return pop_impl(ws, self);
}

struct sb_task *ws_steal_from(struct ws *ws, unsigned self, unsigned victim)
{
	struct ws_worker *v = &ws->w[victim];
	struct ws_worker *me = &ws->w[self];
	if (!ws->p.steal_half) {
		struct sb_task *t = NULL;
		if (ws->p.local_order == WS_LIFO)
			t = sb_deque_take(&v->dq);
		return t ? t : sb_fifo_pop(&v->ring);
	}
	/* Go's runqsteal: half of what the victim has, at least one, at most 64 at a time */
	size_t len = ws_main_len(ws, victim);
	unsigned want = (unsigned)((len + 1) / 2);
	if (want > 64)
		want = 64;
	if (want == 0)
		want = 1;
	struct sb_task *got[64];
	unsigned k = 0;
	if (ws->p.local_order == WS_LIFO)
		while (k < want && (got[k] = sb_deque_take(&v->dq)))
			k++;
	if (k < want)
		k += sb_fifo_pop_batch(&v->ring, got + k, want - k);
	if (!k)
		return NULL;
	/* the extras go to our own FIFO, where they are stealable at once (the deque would keep
	 * them private); a woken thief may take them from there */
	for (unsigned i = 1; i < k; i++) {
		ws_bump(&me->nr_steal_extra);
		sb_fifo_push(&me->ring, got[i]);
	}
	if (k > 1)
		sb_work_available(ws->rt); /* the surplus in our queues is stealable again */
	return got[0];
}

struct sb_task *ws_steal(struct ws *ws, unsigned self)
{
	struct ws_worker *me = &ws->w[self];
	unsigned n = ws->n;
	if (n < 2)
		return NULL;
	if (ws->p.victim_order == WS_VICTIM_DISTANCE) {
		for (unsigned k = 0; k < n - 1; k++) {
			struct sb_task *t = ws_steal_from(ws, self, me->victims[k]);
			if (t) {
				me->last_victim = me->victims[k];
				return t;
			}
		}
		return NULL;
	}
	unsigned start;
	switch (ws->p.victim_order) {
	case WS_VICTIM_SAME:
		start = me->last_victim;
		break;
	case WS_VICTIM_RANDOM:
		start = (unsigned)(sb_rand() % n);
		break;
	default:
		start = me->last_victim + 1;
		break;
	}
	for (unsigned k = 0; k < n; k++) {
		unsigned v = (start + k) % n;
		if (v == self)
			continue;
		struct sb_task *t = ws_steal_from(ws, self, v);
		if (t) {
			me->last_victim = v;
			return t;
		}
	}
	return NULL;
}

struct sb_task *ws_idle(struct ws *ws, unsigned self, struct sb_idle *out)
{
	if (ws->w[self].ptl.len)
		out->max_suspend_us = (uint64_t)sb_rt_config(ws->rt)->watcher_interval;
	return NULL;
}

struct sb_task *ws_op_pop(void *st, unsigned self)
{
	return pop_impl(st, self);
}
