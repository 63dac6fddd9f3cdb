/*
 * idle.h - the idle, suspend and wake path (idle.c): the producer's half of the wake protocol
 * inline, for every placement, and the searching count the worker loop keeps.
 */
#ifndef SB_IDLE_H
#define SB_IDLE_H

#include "rt.h"

/* idle.c */
void sb_wake_worker(struct sb_rt *rt, unsigned i, bool stealable);
void sb_wake_searcher(struct sb_rt *rt);
void sb_wake_all(struct sb_rt *rt);
void sb_found_work(struct sb_worker *w);
struct sb_task *sb_suspend(struct sb_worker *w, bool *after_suspend, bool *stolen);
void sb_watcher_push(struct sb_rt *rt, struct sb_task *t); /* wakes the watcher */

/* The producer's half of the wake protocol (idle.c's file comment): work was just published
 * where other workers may take it. With every worker busy this is a compiler barrier and one
 * or two loads of a line nobody writes: no syscall, no RMW, no store. */
static inline void sb_producer_barrier(const struct sb_rt *rt)
{
	if (__builtin_expect(rt->light_producer, 1))
		atomic_signal_fence(memory_order_seq_cst); /* the sleeper's membarrier orders us */
	else
		atomic_thread_fence(memory_order_seq_cst); /* pairs with the sleeper's seq_cst fence */
}

/* After sb_producer_barrier: wake a searcher if nobody searches and somebody sleeps. */
static inline void sb_need_searcher(struct sb_rt *rt)
{
	/* relaxed: ordered after our push by the producer barrier (with the sleeper's barrier) */
	if (__builtin_expect(!atomic_load_explicit(&rt->nsearching, memory_order_relaxed) &&
			     atomic_load_explicit(&rt->nsuspended, memory_order_relaxed), 0))
		sb_wake_searcher(rt);
}

static inline void sb_publish(struct sb_rt *rt)
{
	sb_producer_barrier(rt);
	sb_need_searcher(rt);
}

/* ---- the searching count ---- */

static inline void sb_start_searching(struct sb_worker *w)
{
	if (w->searching)
		return;
	w->searching = true;
	/* relaxed: a count; the wake protocol orders it with the barriers */
	atomic_fetch_add_explicit(&w->rt->nsearching, 1, memory_order_relaxed);
}

/* Returns the count before ours left it. */
static inline unsigned sb_stop_searching(struct sb_worker *w)
{
	w->searching = false;
	/* relaxed: as in sb_start_searching */
	return atomic_fetch_sub_explicit(&w->rt->nsearching, 1, memory_order_relaxed);
}

#endif
