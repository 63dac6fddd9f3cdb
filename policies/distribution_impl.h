/*
 * distribution_impl.h - the `distribution` policy's state, shared by distribution.c (parameters
 * and life) and distribution_mode.c (the mode itself: placement, pops and the idle step).
 */
#ifndef SB_POLICIES_DISTRIBUTION_IMPL_H
#define SB_POLICIES_DISTRIBUTION_IMPL_H

#include "ws.h"

enum { DIST_MODE, DIST_DEDICATED };

struct distribution_params {
	struct ws_params ws;
	int distributor; /* DIST_* */
	int64_t distributor_poll_us;
	int64_t busy_pause;
	bool busy_yield;
};

#define NOBODY (-1)

/* Per worker. `in_mode` is written by that worker only; `handed` is raised by the distributor
 * when it hands the worker a task and lowered by the worker's next pop. */
struct dist_worker {
	_Alignas(SB_CACHELINE) bool in_mode; /* this worker is the distributor */
	_Atomic bool handed;                 /* holds a hand-off it has not looked for yet */
};

/*
 * Shared state. `distributor` is CASed by idle workers entering the mode and stored by the one
 * leaving it; `in_mode` and the counters are touched by whoever is (or was) the distributor and
 * read by stats. Nothing here is held across a call.
 */
struct distribution {
	struct ws *ws;
	struct sb_rt *rt;
	unsigned n;
	bool dedicated;
	uint64_t poll_us;
	uint64_t busy_pause; /* pause instructions per (i-2) round beyond the core's one */
	bool busy_yield;     /* (i-2) rounds end in a yield (out->yield) */
	struct dist_worker *w;
	_Alignas(SB_CACHELINE) _Atomic int distributor; /* worker in the mode, or NOBODY */
	_Atomic int in_mode;                            /* workers between enter and leave */
	_Atomic uint64_t nr_enter, nr_exit, nr_handoff, nr_ran, nr_overlap;
	_Atomic uint64_t nr_none_active; /* (i-3) exits: the windows of the memo's first race */
	_Atomic uint64_t nr_busy;        /* (i-2) rounds: the busy loop's length */
};

static inline void count(_Atomic uint64_t *c)
{
	/* relaxed: a statistic; distributors follow each other, so this is an RMW */
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* distribution_mode.c: the ops callbacks of the mode */
int distribution_submit(void *st, struct sb_thread *caller, struct sb_task *t);
struct sb_task *distribution_pop(void *st, unsigned self);
struct sb_task *distribution_steal(void *st, unsigned self);
struct sb_task *distribution_idle(void *st, unsigned self, struct sb_idle *out);

#endif
