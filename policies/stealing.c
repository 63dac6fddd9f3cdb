/*
 * stealing.c - jogasaki's stealing scheduler (memo 000), the default policy, and the base of
 * the work-stealing family (stealing.h).
 *
 * Algorithm. Each worker has a main queue (its LTQ) and a sticky queue. A task goes to the
 * submitting thread's preferred worker (a worker's own queue for its own spawns); a sticky task
 * goes to its transaction's bound worker through the sticky word; a conditional task goes to
 * the watcher. A worker checks main and sticky in the order given by
 * dev_thousandths_ratio_check_local_first (100: main first one time in ten, sticky first
 * otherwise); the core then tries stealing_wait x thread_count more times and calls ws_steal:
 * one sweep over the other workers' main queues (never sticky), from the worker after the last
 * successful victim; the stolen task runs at once.
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
 * For family members with their own placement rules the file also offers the placement in
 * pieces (ws_pick, ws_submit_to) and the occupancy-guarded lane that memo 001's task processing
 * lanes and transaction slots share (ws_lane_*; stealing itself uses none of them).
 *
 * Invariants: a sticky task is only ever in the sticky queue of its transaction's bound
 * worker; nothing is stolen from sticky queues or PTLs; every task is in exactly one queue.
 * Limits: the sweep in jogasaki skips the last victim itself, this one visits it last. No queue
 * is ever full (core/queue.h), so no task runs on its spawner for want of room; a deque that
 * cannot grow (out of memory) ends the run with a message.
 */
#include "stealing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/queue.h"

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

/* Per worker. The queues are shared (see core/queue.h for who may do what); the block after
 * them is written by the owner only and read by others through relaxed atomics. */
struct ws_worker {
	struct sb_fifo ring;
	struct sb_deque dq;
	struct sb_mpsc sticky;
	_Alignas(SB_CACHELINE) unsigned last_victim;
	int64_t ratio_acc;
	unsigned fair;
	struct sb_list ptl;
	unsigned *victims;           /* distance order, nearest first */
	_Atomic uint64_t nr_ptl_requeue;
	_Atomic uint64_t nr_steal_extra;
};

struct ws {
	struct sb_rt *rt;
	struct ws_params p;
	unsigned n;
	bool own_queue_first;   /* a worker's own spawns go to its own queue (preferred = self) */
	bool cond_ptl;          /* p.conditional == WS_COND_PTL: pops may have to park a task */
	struct ws_worker *w;
};
SB_ASSERT_MALLOC_ALIGNED(struct ws); /* its per-worker array is the aligned part */

static void bump(_Atomic uint64_t *c)
{
	/* owner-only counter: relaxed load+store, read relaxed by ws_stats */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

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

/* ---- taking work ---- */

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
				bump(&me->nr_ptl_requeue);
				continue;
			}
			sb_fifo_push(&me->ring, t);
			bump(&me->nr_ptl_requeue);
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
		bump(&me->nr_steal_extra);
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

/* ---- occupancy-guarded queues (stealing.h explains the one-word protocol) ---- */

#define WS_LANE_HELD ((uintptr_t)1)
#define WS_LANE_ENDED ((uintptr_t)2)
#define WS_LANE_FLAGS (WS_LANE_HELD | WS_LANE_ENDED)
_Static_assert(_Alignof(struct sb_task) > WS_LANE_FLAGS, "a task pointer leaves the lane's flag bits free");

int ws_lane_txn_init(struct sb_txn *x)
{
	struct ws_lane *l = sb_alloc_lines(sizeof *l);
	if (!l)
		return -ENOMEM;
	atomic_init(&l->word, 0);
	l->marker.flags = SB_TF_MARKER;
	sb_txn_set_pdata(x, l);
	return 0;
}

bool ws_lane_push(struct sb_task *t)
{
	struct ws_lane *l = sb_txn_pdata(t->txn);
	uintptr_t old = atomic_load_explicit(&l->word, memory_order_relaxed);
	for (;;) {
		/* relaxed: the link is published by the CAS below */
		atomic_store_explicit(&t->node.next, (struct sb_node *)(old & ~WS_LANE_FLAGS), memory_order_relaxed);
		/* acq_rel. release: publishes t and its link; pairs with the acquire in ws_lane_take.
		 * acquire: when this push takes the right it reads the value the last holder's
		 * give_back CAS wrote (release), so the new holder sees that holder's `mine`. */
		if (atomic_compare_exchange_weak_explicit(&l->word, &old, (uintptr_t)t | (old & WS_LANE_FLAGS) | WS_LANE_HELD,
							  memory_order_acq_rel, memory_order_relaxed))
			return !(old & WS_LANE_HELD);
	}
}

struct sb_task *ws_lane_take(struct ws_lane *l)
{
	struct sb_task *t = sb_list_pop(&l->mine);
	if (t || !(atomic_load_explicit(&l->word, memory_order_relaxed) & ~WS_LANE_FLAGS))
		return t;
	/* acquire: pairs with the pushers' release; takes the whole stack and keeps the flag bits
	 * (the right stays held), so no CAS loop is needed */
	uintptr_t w = atomic_fetch_and_explicit(&l->word, WS_LANE_FLAGS, memory_order_acquire);
	struct sb_node *top = (struct sb_node *)(w & ~WS_LANE_FLAGS), *n = top, *rev = NULL;
	size_t k = 0;
	/* newest first on the stack: reverse it so that the lane runs oldest first */
	while (n) {
		struct sb_node *next = atomic_load_explicit(&n->next, memory_order_relaxed);
		atomic_store_explicit(&n->next, rev, memory_order_relaxed);
		rev = n;
		n = next;
		k++;
	}
	l->mine.head = rev;
	l->mine.tail = top;
	l->mine.len = k;
	return sb_list_pop(&l->mine);
}

bool ws_lane_give_back(struct ws_lane *l)
{
	if (l->mine.len)
		return false;
	uintptr_t old = atomic_load_explicit(&l->word, memory_order_relaxed);
	do {
		if (old & ~WS_LANE_FLAGS)
			return false; /* the lane refuses while tasks remain (memo 001, C-3-1) */
		/* acq_rel. release: the next holder's push (acquire) sees this holder's `mine`.
		 * acquire: when ws_lane_txn_fini came first, the free below follows all it did. */
	} while (!atomic_compare_exchange_weak_explicit(&l->word, &old, old & WS_LANE_ENDED, memory_order_acq_rel,
							memory_order_relaxed));
	if (old & WS_LANE_ENDED)
		free(l); /* the transaction ended while we held the right: the lane is ours to free */
	return true;
}

void ws_lane_txn_fini(struct sb_txn *x)
{
	struct ws_lane *l = sb_txn_pdata(x);
	/* acq_rel: exactly one of this and the holder's give_back sees the other's bit; whoever
	 * frees has acquired the other side's last accesses */
	if (!(atomic_fetch_or_explicit(&l->word, WS_LANE_ENDED, memory_order_acq_rel) & WS_LANE_HELD))
		free(l);
}

/* ---- the `stealing` policy: the component as it is ---- */

static int stealing_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	return ws_create(rt, params, (struct ws **)state, err, errlen);
}

static void stealing_destroy(void *st) { ws_destroy(st); }
static int stealing_submit(void *st, struct sb_thread *c, struct sb_task *t) { return submit_impl(st, c, t); }
static struct sb_task *stealing_pop(void *st, unsigned self) { return pop_impl(st, self); }
static struct sb_task *stealing_steal(void *st, unsigned self) { return ws_steal(st, self); }
static struct sb_task *stealing_idle(void *st, unsigned self, struct sb_idle *o) { return ws_idle(st, self, o); }
static size_t stealing_queued(void *st, int w) { return ws_queued(st, w); }
static void stealing_stats(void *st, sb_stat_emit_fn e, void *c) { ws_stats(st, e, c); }

const struct sb_policy_ops stealing_ops = {
	.create = stealing_create,
	.destroy = stealing_destroy,
	.submit = stealing_submit,
	.pop = stealing_pop,
	.steal = stealing_steal,
	.idle = stealing_idle,
	.queued = stealing_queued,
	.stats = stealing_stats,
	.name = "stealing",
	.description = "jogasaki's default (memo 000): per-worker main+sticky queues, steal sweep after the last victim",
	.version = 1,
	.flags = SB_POLICY_STICKY_EXCLUSIVE,
	.params = ws_param_table,
	.params_size = sizeof(struct ws_params),
};
