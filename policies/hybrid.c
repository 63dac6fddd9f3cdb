/*
 * hybrid.c - jogasaki's hybrid scheduler (memo 000): serial or stealing, chosen per job.
 *
 * Algorithm. At a job's first schedule (job_start), if work_level <= lightweight_job_level and
 * the job's transaction lock can be taken at once (or it has no transaction), the job runs
 * serially on the submitting thread and keeps the transaction lock until its teardown;
 * otherwise it runs on the stealing scheduler. Every later task of the job follows the job's
 * mode (the mode lives in job->pword). Jobs marked force_stealing (begin, commit, load,
 * durability) always go to stealing. jogasaki compares work levels as signed integers, so an
 * undefined level (-1) counts as lightweight; the default threshold 0 therefore sends almost
 * everything to stealing, and the interesting settings are 10..60.
 *
 * Like jogasaki, a serial job runs to completion inside the schedule call (run_inline), on
 * whatever thread submits it: a request thread, or a worker when a task submits a job.
 *
 * Invariants. A job's mode is decided once and never changes; a serial job holds its
 * transaction's lock from job_start to the end of teardown, on the same thread (the lock is
 * recursive, so the job's own sticky tasks take it again there).
 *
 * Limits. At the default lightweight_job_level=0 only jobs without a work level (-1) run
 * serially, so hybrid is plain stealing for the rest; a serial job occupies the thread that
 * submits it until the job ends.
 */
#include <stdlib.h>

#include "ws.h"

enum { MODE_UNDECIDED = 0, MODE_SERIAL = 1, MODE_STEALING = 2 };

struct hybrid_params {
	struct ws_params ws;
	int64_t lightweight_job_level;
};

#define P struct hybrid_params
static const struct sb_param hybrid_param_table[] = {
	SB_PARAM_INCLUDE(P, ws, ws_param_table),
	SB_PARAM_INT(P, lightweight_job_level, 0, -1, 999,
		     "jobs with work_level <= this run serially on the request thread (jogasaki default 0)"),
	SB_PARAM_END,
};
#undef P

struct hybrid {
	struct ws *ws;
	int64_t level;
	_Atomic uint64_t nr_serial, nr_stealing, nr_lock_busy;
};
SB_ASSERT_MALLOC_ALIGNED(struct hybrid);

static int hybrid_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	const struct hybrid_params *p = params;
	struct hybrid *h = calloc(1, sizeof *h);
	if (!h)
		return sb_policy_error(err, errlen, -ENOMEM, "out of memory");
	h->level = p->lightweight_job_level;
	int e = ws_create(rt, &p->ws, &h->ws, err, errlen);
	if (e) {
		free(h);
		return e;
	}
	*state = h;
	return 0;
}

static void hybrid_destroy(void *st)
{
	struct hybrid *h = st;
	ws_destroy(h->ws);
	free(h);
}

static void hybrid_job_start(void *st, struct sb_job *j, struct sb_thread *caller)
{
	struct hybrid *h = st;
	uint64_t mode = MODE_STEALING;
	(void)caller;
	if (!j->force_stealing && j->work_level <= h->level) {
		if (!j->txn) {
			mode = MODE_SERIAL;
		} else if (sb_job_try_lock_txn(j)) {
			mode = MODE_SERIAL;
		} else {
			atomic_fetch_add_explicit(&h->nr_lock_busy, 1, memory_order_relaxed);
		}
	}
	atomic_fetch_add_explicit(mode == MODE_SERIAL ? &h->nr_serial : &h->nr_stealing, 1, memory_order_relaxed);
	/* a serial job runs to completion inside the schedule call, holding the txn lock, as in
	 * jogasaki; it never waits with the lock held for something else to happen */
	j->run_inline = mode == MODE_SERIAL;
	/* relaxed: written before the root task is submitted; every later reader got the task
	 * through a queue's release/acquire, which orders this store before it */
	atomic_store_explicit(&j->pword, mode, memory_order_relaxed);
}

static int hybrid_submit(void *st, struct sb_thread *caller, struct sb_task *t)
{
	struct hybrid *h = st;
	if (atomic_load_explicit(&t->job->pword, memory_order_relaxed) == MODE_SERIAL)
		return SB_TO_CALLER;
	return ws_submit(h->ws, caller, t);
}

static struct sb_task *hybrid_pop(void *st, unsigned self) { return ws_pop(((struct hybrid *)st)->ws, self); }
static struct sb_task *hybrid_steal(void *st, unsigned self) { return ws_steal(((struct hybrid *)st)->ws, self); }
static struct sb_task *hybrid_idle(void *st, unsigned self, struct sb_idle *o)
{
	return ws_idle(((struct hybrid *)st)->ws, self, o);
}
static size_t hybrid_queued(void *st, int w) { return ws_queued(((struct hybrid *)st)->ws, w); }

static void hybrid_stats(void *st, sb_stat_emit_fn emit, void *ctx)
{
	struct hybrid *h = st;
	ws_stats(h->ws, emit, ctx);
	emit(ctx, "jobs_serial", (double)atomic_load_explicit(&h->nr_serial, memory_order_relaxed));
	emit(ctx, "jobs_stealing", (double)atomic_load_explicit(&h->nr_stealing, memory_order_relaxed));
	emit(ctx, "serial_refused_txn_busy", (double)atomic_load_explicit(&h->nr_lock_busy, memory_order_relaxed));
}

static const char *const hybrid_paths[] = { "jobs_serial", "jobs_stealing", NULL };

const struct sb_policy_ops hybrid_ops = {
	.create = hybrid_create,
	.destroy = hybrid_destroy,
	.job_start = hybrid_job_start,
	.submit = hybrid_submit,
	.pop = hybrid_pop,
	.steal = hybrid_steal,
	.idle = hybrid_idle,
	.queued = hybrid_queued,
	.stats = hybrid_stats,
	.name = "hybrid",
	.description = "jogasaki's hybrid (memo 000): jobs with work_level <= lightweight_job_level run serially, others on stealing",
	.version = 1,
	.params = hybrid_param_table,
	.params_size = sizeof(struct hybrid_params),
	.paths = hybrid_paths,
	.degenerate_hint = "every job took one path: jobs with a work level up to lightweight_job_level run serially; "
			   "a threshold inside the workload's levels splits them (oltp: --set lightweight_job_level=20)",
};
