/*
 * queue.c - the cold paths of the queues in queue.h: creating and growing sb_deque, and the
 * segments of sb_fifo (a process-wide pool, refilled by RCU callbacks).
 *
 * The pool is shared by every sb_fifo of every runtime, so a segment retired by call_rcu never
 * refers back to a queue that may be gone by the time the callback runs. It holds at most
 * POOL_MAX segments; beyond that they are freed. Under ThreadSanitizer they are never freed:
 * the sanitizer cannot see liburcu's grace periods, and would report the free of a segment
 * that other threads read (atomically, long before) as a race. The pool's mutex is taken once
 * per SB_FIFO_SEG pushes.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "queue.h"

/* ---- sb_deque ---- */

static struct sb_deque_buf *buf_new(uint32_t cap)
{
	struct sb_deque_buf *b = malloc(sizeof *b + (size_t)cap * sizeof b->slot[0]);
	if (!b)
		return NULL;
	b->older = NULL;
	b->mask = cap - 1;
	for (uint32_t i = 0; i < cap; i++)
		atomic_init(&b->slot[i], NULL);
	return b;
}

int sb_deque_init(struct sb_deque *d, unsigned log2cap)
{
	memset(d, 0, sizeof *d);
	struct sb_deque_buf *b = buf_new((uint32_t)1 << log2cap);
	if (!b)
		return -ENOMEM;
	atomic_init(&d->ts, 0);
	atomic_init(&d->splitreq, 0);
	atomic_init(&d->buf, b);
	atomic_init(&d->head, 0);
	d->obuf = b;
	d->omask = b->mask;
	return 0;
}

void sb_deque_fini(struct sb_deque *d)
{
	struct sb_deque_buf *b = d->obuf;
	while (b) {
		struct sb_deque_buf *older = b->older;
		free(b);
		b = older;
	}
	d->obuf = NULL;
}

int sb_deque_grow(struct sb_deque *d)
{
	struct sb_deque_buf *ob = d->obuf;
	if (ob->mask >= (1u << 29))
		return -ENOMEM; /* 2^30 slots: the 32-bit indices need the rest of their range */
	struct sb_deque_buf *nb = buf_new(2 * (ob->mask + 1));
	if (!nb)
		return -ENOMEM;
	uint32_t h = atomic_load_explicit(&d->head, memory_order_relaxed);
	/* [otail, head) covers every live slot: the real tail is at or after otail. Slots that
	 * thieves took meanwhile are copied too, harmlessly: their CAS already moved the tail. */
	for (uint32_t i = d->otail; i != h; i++)
		atomic_store_explicit(&nb->slot[i & nb->mask],
				      atomic_load_explicit(&ob->slot[i & ob->mask], memory_order_relaxed),
				      memory_order_relaxed);
	nb->older = ob;
	d->obuf = nb;
	d->omask = nb->mask;
	/* release: publishes the copied slots; pairs with the thieves' acquire load of buf */
	atomic_store_explicit(&d->buf, nb, memory_order_release);
	return 0;
}

/* ---- sb_fifo segments ---- */

#define POOL_MAX 1024

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sb_fifo_seg *pool;  /* linked through `next` (relaxed: under pool_lock) */
static size_t pool_len;
static _Atomic uint64_t nr_seg_alloc; /* segments ever taken from the allocator */
/* Segments handed out and neither retired nor given back: what the queues hold. Segments
 * waiting for a grace period are not in it; how many those are depends on when the
 * reclamation thread gets a core, and is measured as memory (results/paper/reclaimer/). */
static _Atomic uint64_t nr_seg_live;
static _Atomic uint64_t seg_live_peak; /* written under pool_lock */

uint64_t sb_fifo_segments_allocated(void)
{
	/* relaxed: a statistic */
	return atomic_load_explicit(&nr_seg_alloc, memory_order_relaxed);
}

uint64_t sb_fifo_segments_peak(bool restart)
{
	pthread_mutex_lock(&pool_lock);
	/* relaxed: statistics; the lock orders the peak's writers */
	uint64_t p = atomic_load_explicit(&seg_live_peak, memory_order_relaxed);
	if (restart)
		atomic_store_explicit(&seg_live_peak, atomic_load_explicit(&nr_seg_live, memory_order_relaxed),
				      memory_order_relaxed);
	pthread_mutex_unlock(&pool_lock);
	return p;
}

struct sb_fifo_seg *sb_fifo_seg_new(uint64_t base)
{
	pthread_mutex_lock(&pool_lock);
	struct sb_fifo_seg *s = pool;
	if (s) {
		pool = atomic_load_explicit(&s->next, memory_order_relaxed);
		pool_len--;
	}
	/* relaxed: a statistic; the read-modify-write keeps the count exact across threads */
	uint64_t live = atomic_fetch_add_explicit(&nr_seg_live, 1, memory_order_relaxed) + 1;
	if (live > atomic_load_explicit(&seg_live_peak, memory_order_relaxed))
		atomic_store_explicit(&seg_live_peak, live, memory_order_relaxed);
	pthread_mutex_unlock(&pool_lock);
	if (!s) {
		atomic_fetch_add_explicit(&nr_seg_alloc, 1, memory_order_relaxed);
		/* aligned_alloc wants a size that is a multiple of the alignment */
		s = aligned_alloc(SB_CACHELINE, (sizeof *s + SB_CACHELINE - 1) / SB_CACHELINE * SB_CACHELINE);
		if (!s) {
			fprintf(stderr, "%s:%d: out of memory allocating a queue segment\n", __FILE__, __LINE__);
			abort();
		}
	}
	/* relaxed: nobody else can reach s until it is linked (release) or, for a reused one,
	 * every reader of its previous life has left its critical section (grace period) */
	atomic_store_explicit(&s->base, base, memory_order_relaxed);
	atomic_store_explicit(&s->next, NULL, memory_order_relaxed);
	for (unsigned i = 0; i < SB_FIFO_SEG; i++)
		atomic_store_explicit(&s->cells[i], NULL, memory_order_relaxed);
	return s;
}

static void seg_pool_put(struct sb_fifo_seg *s)
{
	bool keep = true;
	pthread_mutex_lock(&pool_lock);
#ifndef __SANITIZE_THREAD__
	keep = pool_len < POOL_MAX;
#endif
	if (keep) {
		atomic_store_explicit(&s->next, pool, memory_order_relaxed);
		pool = s;
		pool_len++;
	}
	pthread_mutex_unlock(&pool_lock);
	if (!keep)
		free(s);
}

void sb_fifo_seg_unused(struct sb_fifo_seg *s)
{
	atomic_fetch_sub_explicit(&nr_seg_live, 1, memory_order_relaxed); /* relaxed: a statistic */
	seg_pool_put(s);
}

static void seg_reclaim(struct rcu_head *h)
{
	seg_pool_put(caa_container_of(h, struct sb_fifo_seg, rcu));
}

/* liburcu's reclamation thread (its default call_rcu thread, created at the first call_rcu of
 * the process) runs a grace period for each batch of retired segments, some 100 us of CPU with
 * membarrier IPIs, hundreds of times a second while queues turn over. At the workers' priority
 * it took a worker's core in the middle of a task whenever the workers had every core: on 2 cores
 * 174 of a fifo `patterns` run's 200 worker stalls over 100 us were its turns, and a stalled task
 * on a job's critical path stretches the job (PAPER.md §4.11). So the thread runs at nice 19;
 * reclaiming later costs memory where queues turn over fastest (FIFO fork-join's peak 1.55 times
 * at 2 workers, results/paper/reclaimer/). Not SCHED_IDLE: with the tests' processes sharing
 * 2 cores its share was too small to reuse the segments a 4M-task fork-join retires
 * (queues::forkjoin_never_runs_on_spawner allocated 6,360 segments; its queues hold at most
 * 4,097 at once). Set from a callback because liburcu creates the thread itself; a kernel that
 * refuses leaves it at the process's priority, as before. */
static struct rcu_head reclaimer_head;
static pthread_once_t reclaimer_once = PTHREAD_ONCE_INIT;

static void reclaimer_lower(struct rcu_head *h)
{
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19); /* this thread only (Linux) */
	pthread_setname_np(pthread_self(), "urcu-reclaim");
}

static void reclaimer_setup(void)
{
	urcu_memb_call_rcu(&reclaimer_head, reclaimer_lower);
}

void sb_fifo_seg_retire(struct sb_fifo_seg *s)
{
	pthread_once(&reclaimer_once, reclaimer_setup);
	atomic_fetch_sub_explicit(&nr_seg_live, 1, memory_order_relaxed); /* relaxed: a statistic */
	urcu_memb_call_rcu(&s->rcu, seg_reclaim);
}

/* The segment holding position pos, from s (a segment at or before it), linking new segments
 * as needed and moving `tail` forward on the way. */
static struct sb_fifo_seg *seg_at(struct sb_fifo *q, struct sb_fifo_seg *s, uint64_t pos)
{
	while (pos - sb_fifo_base(s) >= SB_FIFO_SEG) {
		/* acquire: pairs with the release CAS that linked it (its base and empty cells) */
		struct sb_fifo_seg *next = atomic_load_explicit(&s->next, memory_order_acquire);
		if (!next) {
			struct sb_fifo_seg *n = sb_fifo_seg_new(sb_fifo_base(s) + SB_FIFO_SEG);
			/* release: publishes n's base and cells; acquire on failure: the winner's
			 * segment, as the load above */
			if (atomic_compare_exchange_strong_explicit(&s->next, &next, n, memory_order_release,
								    memory_order_acquire))
				next = n;
			else
				sb_fifo_seg_unused(n);
		}
		struct sb_fifo_seg *expect = s;
		/* release: a producer that loads tail (acquire) and then claims a position gets one
		 * at or after next's base, because our claim, which led us here, came first */
		atomic_compare_exchange_strong_explicit(&q->tail, &expect, next, memory_order_release,
							memory_order_relaxed);
		s = next;
	}
	return s;
}

void sb_fifo_push_far(struct sb_fifo *q, struct sb_fifo_seg *s, uint64_t pos, struct sb_task *t)
{
	s = seg_at(q, s, pos);
	/* release: as in sb_fifo_push */
	atomic_store_explicit(&s->cells[pos - sb_fifo_base(s)], t, memory_order_release);
	urcu_memb_read_unlock(); /* the lock is sb_fifo_push's */
}

struct sb_task *sb_fifo_pop_far(struct sb_fifo *q)
{
	struct sb_task *t = NULL;
	return sb_fifo_pop_batch(q, &t, 1) ? t : NULL;
}

int sb_fifo_init(struct sb_fifo *q)
{
	struct sb_fifo_seg *s = sb_fifo_seg_new(0);
	atomic_init(&q->enq, 0);
	atomic_init(&q->deq, 0);
	atomic_init(&q->head, s);
	atomic_init(&q->tail, s);
	return 0;
}

void sb_fifo_fini(struct sb_fifo *q)
{
	struct sb_fifo_seg *s = atomic_load_explicit(&q->head, memory_order_relaxed);
	while (s) {
		struct sb_fifo_seg *next = atomic_load_explicit(&s->next, memory_order_relaxed);
		sb_fifo_seg_unused(s);
		s = next;
	}
	atomic_store_explicit(&q->head, NULL, memory_order_relaxed);
	atomic_store_explicit(&q->tail, NULL, memory_order_relaxed);
}

void sb_fifo_reset(struct sb_fifo *q)
{
	/* relaxed throughout: the queue's users are gone (the caller's contract), and whoever
	 * uses it next gets it through a synchronising hand-over */
	struct sb_fifo_seg *s = atomic_load_explicit(&q->head, memory_order_relaxed);
	struct sb_fifo_seg *next = atomic_load_explicit(&s->next, memory_order_relaxed);
	uint64_t enq = atomic_load_explicit(&q->enq, memory_order_relaxed);
	uint64_t base = sb_fifo_base(s);
	while (next) {
		struct sb_fifo_seg *n = atomic_load_explicit(&next->next, memory_order_relaxed);
		sb_fifo_seg_unused(next);
		next = n;
	}
	/* no position at or past enq was written */
	uint64_t used = enq <= base ? 0 : enq - base >= SB_FIFO_SEG ? SB_FIFO_SEG : enq - base;
	for (uint64_t i = 0; i < used; i++)
		atomic_store_explicit(&s->cells[i], NULL, memory_order_relaxed);
	atomic_store_explicit(&s->base, 0, memory_order_relaxed);
	atomic_store_explicit(&s->next, NULL, memory_order_relaxed);
	atomic_store_explicit(&q->enq, 0, memory_order_relaxed);
	atomic_store_explicit(&q->deq, 0, memory_order_relaxed);
	atomic_store_explicit(&q->tail, s, memory_order_relaxed);
}
