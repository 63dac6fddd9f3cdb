/*
 * ws.c - the work-stealing family's base: its parameters, its queues and where a task goes
 * (ws.h is the interface; ws_take.c takes work out again).
 *
 * Queues. local_order=fifo (default) is jogasaki's tbb::concurrent_queue: one unbounded FIFO
 * per worker that everyone pushes to and anyone may pop from, every task stealable at once
 * (sb_fifo). local_order=lifo adds an owner-private growable deque for the worker's own spawns
 * (sb_deque: newest first, thieves take the oldest), the usual work-first order of fork-join
 * runtimes; the owner's push and pop there are plain loads and stores. Its tasks are private
 * until the owner publishes them: at once while some worker is idle (sb_nidle), otherwise when a
 * thief asks (it found the shared part empty), at the owner's next push or pop. A long task
 * therefore keeps the private siblings spawned before it from thieves that came later, until it
 * ends. The FIFO then holds what other threads submit and what comes back (yielded or resumed
 * tasks), and is looked at first one pop in 32 so it cannot starve. The sticky queue is an unbounded MPSC queue only its owner
 * pops. Unlike the tbb queue these know their approximate length, so placement can prefer the
 * least-loaded worker (least_loaded=true), which memo 000 names as impossible in jogasaki.
 *
 * Options from memo 001's ideas: steal_half (take half the victim's main queue, as Go does;
 * the extra tasks land in the thief's own queue), victim_order next|same|random|distance
 * (distance = hwloc distance between the workers' cores, nearest first), conditional=ptl (the
 * pending task list: a conditional task taken from the LTQ before its time is parked in the
 * taker's PTL, scanned before the LTQ, and moved back to the LTQ after ptl_requeue failed
 * checks so that stealing can move it).
 *
 * For family members with their own placement rules the base also offers the placement in
 * pieces (ws_pick, ws_submit_to); the lane that lanes and txslot share is lane.c's.
 *
 * Invariants: a sticky task is only ever in the sticky queue of its transaction's bound
 * worker; nothing is stolen from sticky queues or PTLs; every task is in exactly one queue.
 * Limits: the sweep in jogasaki skips the last victim itself, this one visits it last. No queue
 * is ever full (core/queue.h), so no task runs on its spawner for want of room; a deque that
 * cannot grow (out of memory) ends the run with a message.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ws_impl.h"

static const char *const order_names[] = { "fifo", "lifo", NULL };
static const char *const victim_names[] = { "next", "same", "random", "distance", NULL };
static const char *const cond_names[] = { "watcher", "ptl", NULL };

#define P struct ws_params
const struct sb_param ws_param_table[] = {
	SB_PARAM_INT(P, dev_thousandths_ratio_check_local_first, 100, 0, 1000,
		     "thousandths of local checks that look at main before sticky"),
	SB_PARAM_ENUM(P, local_order, WS_FIFO, order_names, "order a worker takes its own main queue in"),
	SB_PARAM_BOOL(P, steal_half, 0, "a steal takes half the victim's main queue (Go), not one task"),
	SB_PARAM_ENUM(P, victim_order, WS_VICTIM_NEXT, victim_names,
		      "sweep start: after the last victim, the last victim, random, or nearest by hwloc distance"),
	SB_PARAM_ENUM(P, conditional, WS_COND_WATCHER, cond_names,
		      "conditional tasks through the watcher thread or per-worker pending task lists"),
	SB_PARAM_INT(P, ptl_requeue, 64, 0, 1000000, "failed checks before a PTL task goes back to the LTQ; 0 never"),
	SB_PARAM_BOOL(P, least_loaded, 0, "request threads submit to the worker with the fewest queued tasks"),
	SB_PARAM_INT(P, queue_log2, 10, 4, 24, "log2 of the lifo deque's initial capacity (it doubles as needed)"),
	SB_PARAM_END,
};
#undef P

/* Order victims nearest first by hwloc distance, ties by how far after `self` they come. */
static void sort_by_distance(const struct sb_rt *rt, unsigned self, unsigned *v, unsigned k)
{
	for (unsigned i = 1; i < k; i++) {
		unsigned x = v[i], j = i;
		while (j > 0 && sb_worker_distance(rt, self, v[j - 1]) > sb_worker_distance(rt, self, x)) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

int ws_create(struct sb_rt *rt, const struct ws_params *p, struct ws **out, char *err, size_t errlen)
{
	struct ws *ws = calloc(1, sizeof *ws);
	if (!ws)
		goto oom;
	ws->rt = rt;
	ws->p = *p;
	ws->n = sb_nworkers(rt);
	ws->own_queue_first = sb_rt_config(rt)->use_preferred_worker_for_current_thread;
	ws->cond_ptl = p->conditional == WS_COND_PTL;
	ws->w = sb_alloc_lines(ws->n * sizeof *ws->w);
	if (!ws->w)
		goto oom;
	for (unsigned i = 0; i < ws->n; i++) {
		struct ws_worker *w = &ws->w[i];
		if (sb_fifo_init(&w->ring) || sb_deque_init(&w->dq, (unsigned)p->queue_log2))
			goto oom;
		sb_mpsc_init(&w->sticky);
		w->last_victim = i;
		w->victims = malloc(ws->n * sizeof *w->victims);
		if (!w->victims)
			goto oom;
		unsigned k = 0;
		for (unsigned v = 1; v < ws->n; v++)
			w->victims[k++] = (i + v) % ws->n;
		sort_by_distance(rt, i, w->victims, k);
	}
	*out = ws;
	return 0;
oom:
	ws_destroy(ws);
	return sb_policy_error(err, errlen, -ENOMEM, "out of memory creating the stealing queues");
}

void ws_destroy(struct ws *ws)
{
	if (!ws)
		return;
	if (ws->w) {
		for (unsigned i = 0; i < ws->n; i++) {
			sb_fifo_fini(&ws->w[i].ring);
			sb_deque_fini(&ws->w[i].dq);
			free(ws->w[i].victims);
		}
		free(ws->w);
	}
	free(ws);
}

/* ---- placement ---- */

static unsigned least_loaded(struct ws *ws, unsigned pref)
{
	unsigned best = pref;
	size_t best_len = ws_main_len(ws, pref);
	for (unsigned k = 1; k < ws->n && best_len; k++) {
		unsigned i = (pref + k) % ws->n;
		size_t len = ws_main_len(ws, i);
		if (len < best_len) {
			best = i;
			best_len = len;
		}
	}
	return best;
}

static unsigned pick(struct ws *ws, struct sb_thread *caller, const struct sb_task *t)
{
	if (t->flags & SB_TF_URGENT)
		return sb_place_urgent(ws->rt, caller);
	unsigned w = sb_place_default(ws->rt, caller);
	if (ws->p.least_loaded && sb_thread_worker(caller) < 0)
		w = least_loaded(ws, w);
	return w;
}

static __attribute__((noinline, cold, noreturn)) void no_room(struct ws *ws, unsigned w)
{
	sb_policy_fatal(ws->rt, -ENOMEM, "out of memory growing the deque of worker %u", w);
}

/* own_push's rare cases: a full array, or a publication (eager or asked for). */
static __attribute__((noinline)) int own_push_slow(struct ws *ws, struct ws_worker *q, int w, struct sb_task *t,
						    bool pushed)
{
	if (pushed)
		sb_deque_publish(&q->dq);
	else if (sb_deque_push(&q->dq, t, sb_nidle(ws->rt) != 0) < 0)
		no_room(ws, (unsigned)w);
	return w;
}

/* The owner's own spawn into its deque; returns w. Publication is the core's business to
 * announce: the caller returns w == self, and the core tells idle workers that work became
 * available. Every call on the way out is a tail call, so the common case saves no registers. */
static inline __attribute__((always_inline)) int own_push(struct ws *ws, struct ws_worker *q, int w, struct sb_task *t)
{
	if (__builtin_expect(!sb_deque_push_private(&q->dq, t), 0))
		return own_push_slow(ws, q, w, t, false);
	if (__builtin_expect(sb_nidle(ws->rt) != 0 || sb_deque_asked(&q->dq), 0))
		return own_push_slow(ws, q, w, t, true);
	return w;
}

static inline int push_impl(struct ws *ws, unsigned w, struct sb_thread *caller, struct sb_task *t)
{
	struct ws_worker *q = &ws->w[w];
	if (ws->p.local_order == WS_LIFO && sb_thread_worker(caller) == (int)w && !(t->flags & SB_TF_AGAIN))
		return own_push(ws, q, (int)w, t);
	sb_fifo_push(&q->ring, t);
	return (int)w;
}

int ws_push(struct ws *ws, unsigned w, struct sb_thread *caller, struct sb_task *t)
{
	return push_impl(ws, w, caller, t);
}

/* Worker w was chosen: sticky tasks follow their transaction's binding, the rest go to w. */
static inline int place_on(struct ws *ws, unsigned w, struct sb_thread *caller, struct sb_task *t)
{
	if ((t->flags & SB_TF_STICKY) && t->txn) {
		w = sb_txn_bind(t, w);
		sb_mpsc_push(&ws->w[w].sticky, t);
		return (int)w;
	}
	return push_impl(ws, w, caller, t);
}

/* Everything but a worker's plain spawn onto its own queue: conditional, sticky, urgent and
 * re-submitted tasks, and submissions from other threads. Out of line, so that the common case
 * below needs no callee-saved registers. */
static __attribute__((noinline)) int submit_other(struct ws *ws, struct sb_thread *caller, struct sb_task *t)
{
	if ((t->flags & SB_TF_COND) && ws->p.conditional == WS_COND_WATCHER)
		return SB_TO_WATCHER;
	return place_on(ws, pick(ws, caller, t), caller, t);
}

/* local_order=fifo's own spawn: out of line (a tail call), so that the FIFO's segment handling
 * does not make the lifo path save registers. */
static __attribute__((noinline)) int own_fifo_push(struct ws_worker *q, int self, struct sb_task *t)
{
	sb_fifo_push(&q->ring, t);
	return self;
}

static inline __attribute__((always_inline)) int submit_impl(struct ws *ws, struct sb_thread *caller, struct sb_task *t)
{
	int self = sb_thread_worker(caller);
	/* the common case first: a plain task spawned on a worker stays on that worker. This
	 * repeats push_impl's choice on purpose: going through it costs ~10 instructions per task
	 * (measured with callgrind on micro chains). */
	if (__builtin_expect(self >= 0 && ws->own_queue_first &&
			     !(t->flags & (SB_TF_STICKY | SB_TF_COND | SB_TF_URGENT | SB_TF_AGAIN)), 1)) {
		struct ws_worker *q = &ws->w[self];
		if (ws->p.local_order == WS_LIFO)
			return own_push(ws, q, self, t);
		return own_fifo_push(q, self, t);
	}
	return submit_other(ws, caller, t);
}

int ws_submit(struct ws *ws, struct sb_thread *caller, struct sb_task *t)
{
	return submit_impl(ws, caller, t);
}

unsigned ws_pick(struct ws *ws, struct sb_thread *caller, const struct sb_task *t)
{
	return pick(ws, caller, t);
}

int ws_submit_to(struct ws *ws, unsigned w, struct sb_thread *caller, struct sb_task *t)
{
	if ((t->flags & SB_TF_COND) && ws->p.conditional == WS_COND_WATCHER)
		return SB_TO_WATCHER;
	return place_on(ws, w, caller, t);
}

int ws_op_submit(void *st, struct sb_thread *caller, struct sb_task *t)
{
	return submit_impl(st, caller, t);
}

size_t ws_main_len(struct ws *ws, unsigned w)
{
	return sb_fifo_len(&ws->w[w].ring) + sb_deque_len(&ws->w[w].dq);
}

size_t ws_queued(struct ws *ws, int w)
{
	if (w < 0)
		return 0;
	struct ws_worker *q = &ws->w[w];
	return ws_main_len(ws, (unsigned)w) + sb_mpsc_len(&q->sticky);
}

void ws_stats(struct ws *ws, sb_stat_emit_fn emit, void *ctx)
{
	uint64_t requeue = 0, extra = 0;
	for (unsigned i = 0; i < ws->n; i++) {
		requeue += atomic_load_explicit(&ws->w[i].nr_ptl_requeue, memory_order_relaxed);
		extra += atomic_load_explicit(&ws->w[i].nr_steal_extra, memory_order_relaxed);
	}
	emit(ctx, "ptl_requeues", (double)requeue);
	emit(ctx, "steal_half_extra", (double)extra);
}
