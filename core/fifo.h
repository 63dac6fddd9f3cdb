/*
 * fifo.h - sb_fifo, the unbounded multi-producer multi-consumer FIFO: a segmented array queue
 * whose segments are recycled through RCU. Included through queue.h; segment allocation and
 * retirement are in queue.c.
 *
 * Positions are 64-bit and only grow: producers claim one with a fetch-and-add on `enq`,
 * consumers claim one with a CAS on `deq`. Position p lives in the segment whose `base` is
 * p - p % SB_FIFO_SEG; segments are linked oldest to newest, and a producer that claims a
 * position past the last segment links a new one (one CAS on the last segment's `next`; a
 * loser of that race gives its segment back unused). `head` and `tail` are hints: a segment at
 * or before the one holding `deq` (resp. `enq`), moved forward by CAS.
 *
 *   op                 who           cost
 *   sb_fifo_push       any thread    one fetch-and-add (+ a CAS per segment of pushes)
 *   sb_fifo_pop        any thread    one CAS
 *   sb_fifo_pop_batch  any thread    one CAS for up to a segment's worth of tasks
 *   sb_fifo_len        any thread    two relaxed loads; approximate
 *
 * Concurrency: everything with everything. Every caller must be a thread registered with
 * liburcu's memb flavour (every core thread is: workers, attached request threads, the
 * watcher): each operation is one RCU read-side critical section, which in the memb flavour is
 * two stores to the thread's own counter, no fence and no locked instruction.
 *
 * Reclamation. A segment leaves the queue when a consumer moves `head` past it (one CAS; only
 * after every position in it was claimed by a consumer, so no producer or consumer will use it
 * again), after moving `tail` past it too. The winner of that CAS retires it with call_rcu:
 * threads still reading it are inside their critical sections, and the segment is reused (or
 * freed) only after they have all left. Segments are type-stable while a reader can hold them,
 * and since positions never repeat, a CAS on `deq` with a stale position simply fails: there is
 * no ABA. Memory stays bounded by the queue's largest length plus the pool of free segments
 * (queue.c caps it).
 *
 * Visibility. A producer stores the task into its cell with a release store; a consumer loads
 * the cell with an acquire load before it claims the position, and claims only a non-empty
 * cell. A producer that has claimed a position but not yet stored into it holds up the
 * consumers at that position: pop returns NULL (as Vyukov's bounded queue does) until the
 * store lands, and the producer's own wake-up after the push makes sure a worker looks again.
 */
#ifndef SB_QUEUE_H
#error "include queue.h, not fifo.h"
#endif
#ifndef SB_FIFO_H
#define SB_FIFO_H

/* The read-side lock and unlock inline (memb flavour: no fence), as liburcu's LGPL terms allow
 * for these short functions. Not under ThreadSanitizer: liburcu's inline code synchronises with
 * plain accesses and barriers the sanitizer cannot see, so there the library's own (opaque,
 * uninstrumented) functions are called instead. */
#if !defined(_LGPL_SOURCE) && !defined(__SANITIZE_THREAD__)
#define _LGPL_SOURCE
#endif
#include <urcu/urcu-memb.h>

#define SB_FIFO_SEG 512

struct sb_fifo_seg {
	_Atomic uint64_t base;                      /* position of cells[0]; set before linking */
	_Atomic(struct sb_fifo_seg *) next;         /* the next newer segment, or NULL */
	struct rcu_head rcu;                        /* retirement (queue.c) */
	_Atomic(struct sb_task *) cells[SB_FIFO_SEG]; /* NULL until a producer stores */
};

struct sb_fifo {
	_Alignas(SB_CACHELINE) _Atomic uint64_t enq;  /* producers' fetch-and-add */
	_Atomic(struct sb_fifo_seg *) tail;
	_Alignas(SB_CACHELINE) _Atomic uint64_t deq;  /* consumers' CAS */
	_Atomic(struct sb_fifo_seg *) head;
};

/* 0 or -ENOMEM. */
int sb_fifo_init(struct sb_fifo *q);
/* Frees the segments still linked; the queue must be quiescent (no thread inside an
 * operation). Tasks still queued are not touched. */
void sb_fifo_fini(struct sb_fifo *q);
/* Empties a quiescent queue for another life, as sb_fifo_fini then sb_fifo_init would, but keeps
 * its head segment and clears only the cells its positions reached (a queue that lived for a
 * few tasks costs a few stores, not a segment's 4 KiB and two trips to the pool). Tasks still
 * queued are forgotten, not touched. */
void sb_fifo_reset(struct sb_fifo *q);
/* queue.c: a segment holding positions [base, base + SB_FIFO_SEG), all cells empty, from the
 * pool or the allocator (aborts with a message when out of memory: a push cannot fail). */
struct sb_fifo_seg *sb_fifo_seg_new(uint64_t base);
/* Segments taken from the allocator so far, by every queue of the process (memory checks). */
uint64_t sb_fifo_segments_allocated(void);
/* The most segments the queues of the process held at once (retired ones excluded) since the
 * last restart; `restart` starts a new high-water mark from what they hold now. */
uint64_t sb_fifo_segments_peak(bool restart);
/* queue.c: a segment that was never linked goes back to the pool at once. */
void sb_fifo_seg_unused(struct sb_fifo_seg *s);
/* queue.c: a segment unlinked from its queue goes back after an RCU grace period. */
void sb_fifo_seg_retire(struct sb_fifo_seg *s);

static inline uint64_t sb_fifo_base(struct sb_fifo_seg *s)
{
	/* relaxed: set before the segment was linked; the acquire that found the segment (a load
	 * of head, tail or next) orders this load after that store */
	return atomic_load_explicit(&s->base, memory_order_relaxed);
}

/* queue.c: the rest of a push whose position lies past segment s (once per SB_FIFO_SEG
 * pushes): walks and links segments, stores the task, leaves the critical section. */
void sb_fifo_push_far(struct sb_fifo *q, struct sb_fifo_seg *s, uint64_t pos, struct sb_task *t);

static inline __attribute__((always_inline)) void sb_fifo_push(struct sb_fifo *q, struct sb_task *t)
{
	urcu_memb_read_lock();
	/* acquire: pairs with the release CASes that move tail (see sb_fifo_push_far) */
	struct sb_fifo_seg *s = atomic_load_explicit(&q->tail, memory_order_acquire);
	/* relaxed: a read-modify-write reads the latest value, so the claimed position is at or
	 * after the base of the tail segment loaded above; the cell store publishes */
	uint64_t pos = atomic_fetch_add_explicit(&q->enq, 1, memory_order_relaxed);
	uint64_t i = pos - sb_fifo_base(s);
	if (__builtin_expect(i >= SB_FIFO_SEG, 0)) {
		/* a tail call: the common case keeps nothing across a call */
		sb_fifo_push_far(q, s, pos, t);
		return;
	}
	/* release: publishes the task's fields; pairs with the acquire load in the pops */
	atomic_store_explicit(&s->cells[i], t, memory_order_release);
	urcu_memb_read_unlock();
}

/* Consumer side: s is past its positions; move head (and tail) beyond it and retire it. */
static __attribute__((noinline, cold)) struct sb_fifo_seg *sb_fifo_leave(struct sb_fifo *q, struct sb_fifo_seg *s, struct sb_fifo_seg *next)
{
	struct sb_fifo_seg *expect = s;
	/* release: a consumer that loads head (acquire) and then deq reads a deq at or after
	 * next's base, because the claims that emptied s came first. acquire on failure: the
	 * head another consumer set, loaded as the load of head in the pops. */
	if (!atomic_compare_exchange_strong_explicit(&q->head, &expect, next, memory_order_acq_rel,
						     memory_order_acquire))
		return expect;
	expect = s;
	/* release: as in sb_fifo_push_far (queue.c); tail must not point at a segment that gets reused */
	atomic_compare_exchange_strong_explicit(&q->tail, &expect, next, memory_order_release, memory_order_relaxed);
	sb_fifo_seg_retire(s);
	return next;
}

/* Any thread: up to `max` tasks in FIFO order with one claim (never more than the rest of one
 * segment). Returns how many; 0 when empty (or when the next producer has not stored yet). */
static inline __attribute__((always_inline)) unsigned sb_fifo_pop_batch(struct sb_fifo *q, struct sb_task **out, unsigned max)
{
	unsigned k = 0;
	urcu_memb_read_lock();
	/* acquire: pairs with the release CAS in sb_fifo_leave */
	struct sb_fifo_seg *s = atomic_load_explicit(&q->head, memory_order_acquire);
	/* acquire: pairs with the release half of the claiming CAS below */
	uint64_t d = atomic_load_explicit(&q->deq, memory_order_acquire);
	for (;;) {
		uint64_t i = d - sb_fifo_base(s);
		if ((int64_t)i < 0) {
			/* d is older than the head we walked to: consumers moved on meanwhile.
			 * acquire: as the first load of deq; the head we hold came after it. */
			d = atomic_load_explicit(&q->deq, memory_order_acquire);
			continue;
		}
		if (i >= SB_FIFO_SEG) {
			/* acquire: as in sb_fifo_push_far (queue.c) */
			struct sb_fifo_seg *next = atomic_load_explicit(&s->next, memory_order_acquire);
			if (!next)
				break; /* empty, or the next segment's producer has not linked it yet */
			s = sb_fifo_leave(q, s, next);
			continue;
		}
		k = 0;
		while (k < max && i + k < SB_FIFO_SEG &&
		       /* acquire: pairs with the producer's release store of the cell */
		       (out[k] = atomic_load_explicit(&s->cells[i + k], memory_order_acquire)))
			k++;
		if (!k)
			break;
		/* acq_rel: claims positions d..d+k-1 (only the winner returns their tasks); pairs
		 * with the acquire load of deq in other consumers. On failure d is reloaded. */
		if (atomic_compare_exchange_weak_explicit(&q->deq, &d, d + k, memory_order_acq_rel, memory_order_acquire))
			break;
		k = 0;
	}
	urcu_memb_read_unlock();
	return k;
}

/* queue.c: sb_fifo_pop_batch for one task, out of line. */
struct sb_task *sb_fifo_pop_far(struct sb_fifo *q);

/* Any thread: the oldest task, or NULL when empty (or when the next producer has not stored
 * yet). The common case, inline: the position is inside the head segment and the claim
 * succeeds at the first try. Anything else (a segment to leave, consumers that moved on, a lost
 * claim) leaves the critical section and starts over in sb_fifo_pop_far, a tail call: nothing
 * read here is used there. */
static inline struct sb_task *sb_fifo_pop(struct sb_fifo *q)
{
	urcu_memb_read_lock();
	/* acquire: as in sb_fifo_pop_batch (pairs with the release CAS in sb_fifo_leave) */
	struct sb_fifo_seg *s = atomic_load_explicit(&q->head, memory_order_acquire);
	/* acquire: as in sb_fifo_pop_batch (pairs with the release half of the claiming CAS) */
	uint64_t d = atomic_load_explicit(&q->deq, memory_order_acquire);
	uint64_t i = d - sb_fifo_base(s);
	if (__builtin_expect(i < SB_FIFO_SEG, 1)) {
		/* acquire: pairs with the producer's release store of the cell */
		struct sb_task *t = atomic_load_explicit(&s->cells[i], memory_order_acquire);
		/* acq_rel: claims position d, as in sb_fifo_pop_batch; relaxed on failure: nothing
		 * loaded is used after a failure */
		if (!t || atomic_compare_exchange_strong_explicit(&q->deq, &d, d + 1, memory_order_acq_rel,
								  memory_order_relaxed)) {
			urcu_memb_read_unlock();
			return t;
		}
	}
	urcu_memb_read_unlock();
	return sb_fifo_pop_far(q);
}

static inline size_t sb_fifo_len(struct sb_fifo *q)
{
	/* relaxed: an estimate; deq is read first so that the difference is rarely negative */
	uint64_t d = atomic_load_explicit(&q->deq, memory_order_relaxed);
	uint64_t e = atomic_load_explicit(&q->enq, memory_order_relaxed);
	return e > d ? (size_t)(e - d) : 0;
}

#endif
