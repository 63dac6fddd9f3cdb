/*
 * queue.h - the task queues every policy builds from. Header-only where they are the hot path
 * (deque.h and fifo.h are included from here); the cold paths are in queue.c.
 *
 * All hold `struct sb_task *` linked or stored by pointer. None of them is ever full: a push
 * always queues the task, so no policy has to run a task on its spawner for want of room.
 *
 *   queue      producers            consumers                 order   bound      length
 *   sb_list    the owning thread    the owning thread         FIFO    unbounded  exact
 *   sb_deque   the owner (push)     owner (pop, LIFO) and      both    grows      approx
 *                                   anyone (steal, FIFO)
 *   sb_mpsc    any thread           one at a time: the owner,  FIFO    unbounded  approx
 *                                   or whoever wins try_lock
 *   sb_fifo    any thread           any thread (also batches)  FIFO    unbounded  approx
 *
 * Concurrency table (which operations may overlap):
 *   sb_deque:  push || steal, pop || steal, steal || steal.   push and pop: owner only.
 *   sb_mpsc:   push || push, push || pop.                      pop || pop: never (use the lock).
 *   sb_fifo:   everything with everything (callers registered with liburcu, memb flavour).
 *
 * Memory: sb_list and sb_mpsc link the tasks themselves; sb_deque doubles its array and keeps
 * the old ones until fini (together less than the current one); sb_fifo takes segments from a
 * pool and gives them back through RCU once consumers have passed them.
 *
 * Every atomic names its memory order and the operation it pairs with. The publication
 * rule is the same everywhere: a producer writes the task's fields with plain stores, then
 * publishes the pointer with a release operation; a consumer obtains the pointer with an
 * acquire operation, after which the fields are visible. (The release is an operation, not a
 * lone fence, so ThreadSanitizer can see the edge.)
 */
#ifndef SB_QUEUE_H
#define SB_QUEUE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sb.h"

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

#include "deque.h"
#include "fifo.h"

#endif
