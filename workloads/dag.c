/*
 * dag.c - the statement DAG: exchange, process and bootstrap tasks of one statement (common.h).
 */
#include "common.h"

#include <stdlib.h>

/* ---- the statement DAG ---- */

static enum sb_result dag_exchange(struct sb_task *t)
{
	struct wl_dag *d = t->arg;
	/* the DAG is complete once this ends: ask for the teardown now, as jogasaki's controller
	 * does; a teardown task waits for this task's end by rescheduling itself */
	sb_job_request_teardown(t->job);
	sb_work_ns(d->exchange_ns);
	return SB_DONE;
}

static enum sb_result dag_process(struct sb_task *t)
{
	struct wl_dag *d = t->arg;
	enum sb_result r = wl_spend(t, d->yields, d->yield_ns);
	if (r != SB_DONE)
		return r;
	/* acq_rel: the release publishes this task's work; the last one acquires all of it
	 * before the next DAG step; pairs with the other process tasks' decrements */
	if (atomic_fetch_sub_explicit(&d->pending, 1, memory_order_acq_rel) != 1)
		return SB_DONE;
	if (d->exchange) {
		struct sb_task *x = wl_task(d->cs, t->job, dag_exchange, d);
		sb_spawn(x);
	} else {
		sb_job_request_teardown(t->job);
	}
	return SB_DONE;
}

static enum sb_result dag_bootstrap(struct sb_task *t)
{
	struct wl_dag *d = t->arg;
	sb_work_ns(d->bootstrap_ns);
	uint32_t flags = t->job->txn ? d->proc_flags : d->proc_flags & ~(uint32_t)SB_TF_STICKY;
	for (unsigned i = 0; i < d->nproc; i++) {
		struct sb_task *p = wl_task(d->cs, t->job, dag_process, d);
		p->u[0] = d->proc_ns[i];
		p->flags = flags;
		sb_spawn(p);
	}
	return SB_DONE;
}

struct sb_task *wl_dag_root(struct sb_job *j, struct wl_dag *d)
{
	if (d->nproc < 1)
		d->nproc = 1;
	if (d->nproc > WL_DAG_MAX)
		d->nproc = WL_DAG_MAX;
	/* relaxed: published to the tasks by their submission */
	atomic_store_explicit(&d->pending, d->nproc, memory_order_relaxed);
	return wl_task(d->cs, j, dag_bootstrap, d);
}

uint64_t wl_dag_cost(const struct wl_dag *d)
{
	uint64_t sum = d->bootstrap_ns + (d->exchange ? d->exchange_ns : 0);
	for (unsigned i = 0; i < d->nproc; i++)
		sum += d->proc_ns[i];
	return sum;
}
