/*
 * fifo.c - `fifo`, the baseline: the smallest complete policy, and the README's example of
 * adding one.
 *
 * Algorithm. One global unbounded lock-free FIFO (sb_fifo) that every thread pushes to and every
 * worker pops from; no stealing, no stickiness, conditional tasks to the watcher. Useful as the
 * baseline every other policy should beat.
 *
 * Invariants. FIFO in claim order.
 *
 * Limits. Every push and every pop of every thread meets on the one queue.
 */
#include <stdlib.h>

#include "../core/policy.h"
#include "../core/queue.h"

struct fifo {
	struct sb_fifo q;
};

static int fifo_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	(void)rt;
	(void)params;
	struct fifo *f = sb_alloc_lines(sizeof *f); /* sb_fifo is cache-line aligned */
	if (!f || sb_fifo_init(&f->q)) {
		free(f);
		return sb_policy_error(err, errlen, -ENOMEM, "out of memory");
	}
	*state = f;
	return 0;
}

static void fifo_destroy(void *st)
{
	struct fifo *f = st;
	sb_fifo_fini(&f->q);
	free(f);
}

static int fifo_submit(void *st, struct sb_thread *caller, struct sb_task *t)
{
	(void)caller;
	if (t->flags & SB_TF_COND)
		return SB_TO_WATCHER;
	sb_fifo_push(&((struct fifo *)st)->q, t);
	return SB_TO_ANY; /* queued where any worker may take it: the core wakes one */
}

static struct sb_task *fifo_pop(void *st, unsigned self)
{
	(void)self;
	return sb_fifo_pop(&((struct fifo *)st)->q);
}

static size_t fifo_queued(void *st, int w)
{
	return w < 0 ? sb_fifo_len(&((struct fifo *)st)->q) : 0;
}

const struct sb_policy_ops fifo_ops = {
	.create = fifo_create,
	.destroy = fifo_destroy,
	.submit = fifo_submit,
	.pop = fifo_pop,
	.queued = fifo_queued,
	.name = "fifo",
	.description = "baseline: one global lock-free FIFO, no stealing (the minimal example policy)",
	.version = 1,
};
