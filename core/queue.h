/*
 * queue.h - the task queues every policy builds from. Header-only: these are the hot path.
 *
 * All hold `struct sb_task *` linked or stored by pointer; none allocates per operation.
 *
 *   queue      producers            consumers                 order   bound      length
 *   sb_list    the owning thread    the owning thread         FIFO    unbounded  exact
 *   sb_deque   the owner (push)     owner (pop, LIFO) and      both    capacity   approx
 *                                   anyone (steal, FIFO)
 *   sb_mpsc    any thread           one at a time: the owner,  FIFO    unbounded  approx
 *                                   or whoever wins try_lock
 *   sb_mpmc    any thread           any thread (also batches)  FIFO    capacity   approx
 *
 * Concurrency table (which operations may overlap):
 *   sb_deque:  push || steal, pop || steal, steal || steal.   push and pop: owner only.
 *   sb_mpsc:   push || push, push || pop.                      pop || pop: never (use the lock).
 *   sb_mpmc:   everything with everything.
 *
 * Every atomic names its memory order and the operation it pairs with. The publication
 * rule is the same everywhere: a producer writes the task's fields with plain stores, then
 * publishes the pointer with a release operation; a consumer obtains the pointer with an
 * acquire operation, after which the fields are visible. (The release is an operation, not a
 * lone fence, so ThreadSanitizer can see the edge.)
 */
#ifndef SB_QUEUE_H
#define SB_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sb.h"

#define SB_CACHELINE 64

/* `size` bytes of zeroes, cache-line aligned and rounded up to whole lines: every heap object of
 * a type that declares _Alignas(SB_CACHELINE) comes from here (core/alloc.c); free() releases it.
 * NULL when out of memory. */
void *sb_alloc_lines(size_t size);
/* For a type left on malloc/calloc: fails to compile once the type becomes over-aligned. */
#define SB_ASSERT_MALLOC_ALIGNED(T) \
	_Static_assert(_Alignof(T) <= _Alignof(max_align_t), #T " is over-aligned: allocate it with sb_alloc_lines")

static inline struct sb_task *sb_task_of(struct sb_node *n)
{
	return (struct sb_task *)n; /* node is the first member of struct sb_task */
}
_Static_assert(offsetof(struct sb_task, node) == 0, "sb_task_of() relies on node coming first");

/* ------------------------------------------------------------------------------------------ */
/* sb_list: a private FIFO. Links are atomics only because sb_node is shared with the
 * concurrent queues; every access here is relaxed and single-threaded. */

struct sb_list {
	struct sb_node *head, *tail;
	size_t len;
};

static inline void sb_list_push(struct sb_list *l, struct sb_task *t)
{
	atomic_store_explicit(&t->node.next, NULL, memory_order_relaxed);
	if (l->tail)
		atomic_store_explicit(&l->tail->next, &t->node, memory_order_relaxed);
	else
		l->head = &t->node;
	l->tail = &t->node;
	l->len++;
}

static inline struct sb_task *sb_list_pop(struct sb_list *l)
{
	struct sb_node *n = l->head;
	if (!n)
		return NULL;
	l->head = atomic_load_explicit(&n->next, memory_order_relaxed);
	if (!l->head)
		l->tail = NULL;
	l->len--;
	return sb_task_of(n);
}

/* ------------------------------------------------------------------------------------------ */
/* sb_deque: Chase-Lev work-stealing deque (Chase & Lev 2005; C11 orders after Le, Pop, Cohen
 * and Zappa Nardelli 2013), fixed capacity: a full deque refuses the push and the policy puts
 * the task elsewhere, so there is no resizing and no old buffer to reclaim. */

struct sb_deque {
	_Alignas(SB_CACHELINE) _Atomic int64_t top;    /* thieves (and FIFO owner) CAS it */
	_Alignas(SB_CACHELINE) _Atomic int64_t bottom; /* written by the owner only */
	_Atomic(struct sb_task *) *buf;
	int64_t mask;
};

static inline int sb_deque_init(struct sb_deque *d, unsigned log2cap)
{
	int64_t cap = (int64_t)1 << log2cap;
	d->buf = calloc((size_t)cap, sizeof *d->buf);
	if (!d->buf)
		return -1;
	d->mask = cap - 1;
	atomic_init(&d->top, 0);
	atomic_init(&d->bottom, 0);
	return 0;
}

static inline void sb_deque_fini(struct sb_deque *d)
{
	free(d->buf);
	d->buf = NULL;
}

/* Owner only. False when full. */
static inline bool sb_deque_push(struct sb_deque *d, struct sb_task *t)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	/* acquire: pairs with the thieves' CAS on top, so the slot they vacated is free to reuse */
	int64_t tp = atomic_load_explicit(&d->top, memory_order_acquire);
	if (b - tp > d->mask)
		return false;
	atomic_store_explicit(&d->buf[b & d->mask], t, memory_order_relaxed);
	/* release: publishes the slot and the task's fields; pairs with the acquire load of bottom
	 * in sb_deque_steal */
	atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
	return true;
}

/* Owner only: take the newest task (LIFO). */
static inline struct sb_task *sb_deque_pop(struct sb_deque *d)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
	atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
	/* seq_cst fence: pairs with the seq_cst fence in sb_deque_steal. Either the thief sees
	 * the lowered bottom or we see its raised top, so the last task is never taken twice. */
	atomic_thread_fence(memory_order_seq_cst);
	int64_t tp = atomic_load_explicit(&d->top, memory_order_relaxed);
	if (tp > b) { /* empty */
		atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
		return NULL;
	}
	struct sb_task *t = atomic_load_explicit(&d->buf[b & d->mask], memory_order_relaxed);
	if (tp == b) {
		/* last task: race the thieves for it with the same CAS they use */
		if (!atomic_compare_exchange_strong_explicit(&d->top, &tp, tp + 1, memory_order_seq_cst,
							     memory_order_relaxed))
			t = NULL;
		atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
	}
	return t;
}

enum { SB_STEAL_OK, SB_STEAL_EMPTY, SB_STEAL_RETRY };

/* Anyone (the owner too, for FIFO order): take the oldest task. */
static inline int sb_deque_steal(struct sb_deque *d, struct sb_task **out)
{
	/* acquire: pairs with the CAS of a previous thief, ordering our slot read after it */
	int64_t tp = atomic_load_explicit(&d->top, memory_order_acquire);
	/* seq_cst fence: pairs with the fence in sb_deque_pop (see there) */
	atomic_thread_fence(memory_order_seq_cst);
	/* acquire: pairs with the release store of bottom in sb_deque_push */
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_acquire);
	if (tp >= b)
		return SB_STEAL_EMPTY;
	struct sb_task *t = atomic_load_explicit(&d->buf[tp & d->mask], memory_order_relaxed);
	/* seq_cst CAS: claims slot tp against other thieves and the owner's last-task CAS */
	if (!atomic_compare_exchange_strong_explicit(&d->top, &tp, tp + 1, memory_order_seq_cst,
						     memory_order_relaxed))
		return SB_STEAL_RETRY;
	*out = t;
	return SB_STEAL_OK;
}

/* Steal, retrying lost races until the deque is seen empty. */
static inline struct sb_task *sb_deque_take(struct sb_deque *d)
{
	struct sb_task *t = NULL;
	int r;
	while ((r = sb_deque_steal(d, &t)) == SB_STEAL_RETRY)
		;
	return r == SB_STEAL_OK ? t : NULL;
}

/* Approximate length, any thread. */
static inline size_t sb_deque_len(struct sb_deque *d)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	int64_t tp = atomic_load_explicit(&d->top, memory_order_relaxed);
	return b > tp ? (size_t)(b - tp) : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* sb_mpsc: Vyukov's intrusive multi-producer single-consumer queue. Push is one exchange and
 * wait-free. Pop may return NULL while a producer is between its exchange and its link; that
 * producer then wakes the consumer (core/worker.c), so the task is not lost, only seen late.
 * Several consumers take turns through sb_mpsc_try_lock. */

struct sb_mpsc {
	_Alignas(SB_CACHELINE) _Atomic(struct sb_node *) head; /* producers exchange it */
	_Atomic uint64_t nr_in;                                 /* producers count pushes */
	_Alignas(SB_CACHELINE) struct sb_node *tail;            /* the consumer's */
	_Atomic uint64_t nr_out;                                /* written by the consumer */
	_Atomic uint32_t lock;                                  /* consumer turn, for MPMC use */
	struct sb_node stub;
};

static inline void sb_mpsc_init(struct sb_mpsc *q)
{
	atomic_init(&q->stub.next, NULL);
	atomic_init(&q->head, &q->stub);
	q->tail = &q->stub;
	atomic_init(&q->nr_in, 0);
	atomic_init(&q->nr_out, 0);
	atomic_init(&q->lock, 0);
}

static inline void sb_mpsc_push_node(struct sb_mpsc *q, struct sb_node *n)
{
	atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
	/* acq_rel: orders pushes among producers; the previous head is ours to link */
	struct sb_node *prev = atomic_exchange_explicit(&q->head, n, memory_order_acq_rel);
	/* release: publishes the node and the task's fields; pairs with the consumer's acquire
	 * loads of next in sb_mpsc_pop */
	atomic_store_explicit(&prev->next, n, memory_order_release);
}

static inline void sb_mpsc_push(struct sb_mpsc *q, struct sb_task *t)
{
	/* relaxed: a count, read by sb_mpsc_empty; the suspend/wake ordering comes from the
	 * seq_cst fences of the wake protocol (core/worker.c), which bracket this push */
	atomic_fetch_add_explicit(&q->nr_in, 1, memory_order_relaxed);
	sb_mpsc_push_node(q, &t->node);
}

/* The consumer only (or the holder of the consumer lock). */
static inline struct sb_task *sb_mpsc_pop(struct sb_mpsc *q)
{
	struct sb_node *tail = q->tail;
	/* acquire: pairs with the release link in sb_mpsc_push_node */
	struct sb_node *next = atomic_load_explicit(&tail->next, memory_order_acquire);
	if (tail == &q->stub) {
		if (!next)
			return NULL;
		q->tail = next;
		tail = next;
		next = atomic_load_explicit(&next->next, memory_order_acquire);
	}
	if (!next) {
		/* acquire: pairs with the producers' exchange */
		struct sb_node *head = atomic_load_explicit(&q->head, memory_order_acquire);
		if (tail != head)
			return NULL; /* a producer is mid-push; it will wake us */
		sb_mpsc_push_node(q, &q->stub);
		next = atomic_load_explicit(&tail->next, memory_order_acquire);
		if (!next)
			return NULL;
	}
	q->tail = next;
	/* relaxed: only a length estimate; the consumer is the only writer */
	atomic_store_explicit(&q->nr_out, atomic_load_explicit(&q->nr_out, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	return sb_task_of(tail);
}

/* Cheap emptiness test, any thread. Good enough for the suspend re-check: after the worker's
 * fence, a push counted before is seen here, and a producer counting after will see the
 * worker suspended and wake it (core/worker.c). */
static inline bool sb_mpsc_empty(struct sb_mpsc *q)
{
	/* relaxed: ordering comes from the caller's seq_cst fence */
	return atomic_load_explicit(&q->nr_in, memory_order_relaxed) ==
	       atomic_load_explicit(&q->nr_out, memory_order_relaxed);
}

static inline size_t sb_mpsc_len(struct sb_mpsc *q)
{
	uint64_t in = atomic_load_explicit(&q->nr_in, memory_order_relaxed);
	uint64_t out = atomic_load_explicit(&q->nr_out, memory_order_relaxed);
	return in > out ? (size_t)(in - out) : 0;
}

static inline bool sb_mpsc_try_lock(struct sb_mpsc *q)
{
	/* acquire: pairs with the release in sb_mpsc_unlock, handing over q->tail */
	return atomic_load_explicit(&q->lock, memory_order_relaxed) == 0 &&
	       atomic_exchange_explicit(&q->lock, 1, memory_order_acquire) == 0;
}

static inline void sb_mpsc_unlock(struct sb_mpsc *q)
{
	atomic_store_explicit(&q->lock, 0, memory_order_release);
}

/* Pop for one of several consumers: NULL when empty or another consumer has its turn. Because
 * of the turn, a consumer may see NULL while tasks are queued (the holder of the turn may have
 * been preempted): a worker re-checking before it sleeps could then sleep on them until the
 * suspend timeout. Policies use it only for overflow paths, never for their main queues. */
static inline struct sb_task *sb_mpsc_pop_shared(struct sb_mpsc *q)
{
	if (sb_mpsc_empty(q) || !sb_mpsc_try_lock(q))
		return NULL;
	struct sb_task *t = sb_mpsc_pop(q);
	sb_mpsc_unlock(q);
	return t;
}

/* ------------------------------------------------------------------------------------------ */
/* sb_mpmc: Vyukov's bounded multi-producer multi-consumer queue. Each cell carries a sequence
 * number saying whose turn it is; producers and consumers claim positions with a CAS on their
 * own counter. Lock-free, FIFO in claim order, and it can hand out a batch of ready cells with
 * one CAS (sb_mpmc_pop_batch). */

struct sb_mpmc_cell {
	_Atomic uint64_t seq;
	_Atomic(struct sb_task *) t;
};

struct sb_mpmc {
	_Alignas(SB_CACHELINE) _Atomic uint64_t enq;
	_Alignas(SB_CACHELINE) _Atomic uint64_t deq;
	_Alignas(SB_CACHELINE) struct sb_mpmc_cell *cells;
	uint64_t mask;
};

static inline int sb_mpmc_init(struct sb_mpmc *q, unsigned log2cap)
{
	uint64_t cap = (uint64_t)1 << log2cap;
	q->cells = malloc(cap * sizeof *q->cells);
	if (!q->cells)
		return -1;
	for (uint64_t i = 0; i < cap; i++) {
		atomic_init(&q->cells[i].seq, i);
		atomic_init(&q->cells[i].t, NULL);
	}
	q->mask = cap - 1;
	atomic_init(&q->enq, 0);
	atomic_init(&q->deq, 0);
	return 0;
}

static inline void sb_mpmc_fini(struct sb_mpmc *q)
{
	free(q->cells);
	q->cells = NULL;
}

/* Any thread. False when full. */
static inline bool sb_mpmc_push(struct sb_mpmc *q, struct sb_task *t)
{
	uint64_t pos = atomic_load_explicit(&q->enq, memory_order_relaxed);
	struct sb_mpmc_cell *c;
	for (;;) {
		c = &q->cells[pos & q->mask];
		/* acquire: pairs with the consumer's release of this cell (it is free again) */
		uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		int64_t diff = (int64_t)(seq - pos);
		if (diff == 0) {
			/* relaxed: the claim itself orders nothing; the cell's seq does */
			if (atomic_compare_exchange_weak_explicit(&q->enq, &pos, pos + 1, memory_order_relaxed,
								  memory_order_relaxed))
				break;
		} else if (diff < 0) {
			return false;
		} else {
			pos = atomic_load_explicit(&q->enq, memory_order_relaxed);
		}
	}
	atomic_store_explicit(&c->t, t, memory_order_relaxed);
	/* release: publishes the task; pairs with the consumer's acquire load of seq */
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	return true;
}

/* Any thread: take up to `max` tasks in FIFO order with one claim. Returns how many. */
static inline unsigned sb_mpmc_pop_batch(struct sb_mpmc *q, struct sb_task **out, unsigned max)
{
	uint64_t pos = atomic_load_explicit(&q->deq, memory_order_relaxed);
	for (;;) {
		unsigned k = 0;
		while (k < max) {
			struct sb_mpmc_cell *c = &q->cells[(pos + k) & q->mask];
			/* acquire: pairs with the producer's release of seq */
			uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
			if (seq != pos + k + 1)
				break;
			k++;
		}
		if (k == 0) {
			uint64_t now = atomic_load_explicit(&q->deq, memory_order_relaxed);
			if (now == pos)
				return 0; /* empty */
			pos = now;
			continue;
		}
		/* relaxed: cells pos..pos+k-1 stay ready until a consumer releases them, and only the
		 * winner of this CAS will */
		if (atomic_compare_exchange_weak_explicit(&q->deq, &pos, pos + k, memory_order_relaxed,
							  memory_order_relaxed)) {
			for (unsigned i = 0; i < k; i++) {
				struct sb_mpmc_cell *c = &q->cells[(pos + i) & q->mask];
				out[i] = atomic_load_explicit(&c->t, memory_order_relaxed);
				/* release: the cell is free; pairs with the producer's acquire of seq */
				atomic_store_explicit(&c->seq, pos + i + q->mask + 1, memory_order_release);
			}
			return k;
		}
	}
}

static inline struct sb_task *sb_mpmc_pop(struct sb_mpmc *q)
{
	struct sb_task *t = NULL;
	return sb_mpmc_pop_batch(q, &t, 1) ? t : NULL;
}

static inline size_t sb_mpmc_len(struct sb_mpmc *q)
{
	uint64_t e = atomic_load_explicit(&q->enq, memory_order_relaxed);
	uint64_t d = atomic_load_explicit(&q->deq, memory_order_relaxed);
	return e > d ? (size_t)(e - d) : 0;
}

#endif
