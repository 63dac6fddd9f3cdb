/*
 * ws_impl.h - the work-stealing family's own state (ws.c, ws_take.c). Family members go through
 * ws.h; only the base's two files see inside struct ws.
 */
#ifndef SB_POLICIES_WS_IMPL_H
#define SB_POLICIES_WS_IMPL_H

#include "ws.h"

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

static inline void ws_bump(_Atomic uint64_t *c)
{
	/* owner-only counter: relaxed load+store, read relaxed by ws_stats */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* The ops-table entry points of the `stealing` policy, with the hot paths inlined (ws.c,
 * ws_take.c): the policy's table points straight at them, so a submit or pop costs no extra
 * call for being in another file. */
int ws_op_submit(void *st, struct sb_thread *caller, struct sb_task *t);
struct sb_task *ws_op_pop(void *st, unsigned self);

#endif
