/*
 * wake.c - sparse arrivals to idle workers: what a wake-up costs (memo 000's suspend/wake
 * path, worker_try_count and worker_suspend_timeout; memo 001's deactivated workers).
 *
 * Models: `clients` request threads, each pausing a gap (mean gap_us, long enough for the
 * workers to run out of empty rounds and suspend) before every job, so a job's start - submit
 * (recorded per job by the core) is the latency of waking a worker. Two origins, two classes:
 *   from_request  a one-task job submitted by the request thread;
 *   from_task     with probability from_task_pct, the from_request job's task, running on a
 *                 worker, first submits a one-task job of its own and then does its work: a
 *                 submission from inside the pool while the other workers sleep (its own worker
 *                 is busy, so the job waits for a wake-up, a steal, or the end of that task).
 * With urgent=true every task carries the suspended_worker hint (SB_TF_URGENT).
 *
 * Does not model bursts or load: at most two jobs per client are in flight, one after another.
 * Concurrency: a client's `child` is written by the task of its from_request job and read by the
 * client after that job is done (the job's completion orders the two).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "common.h"

enum { C_FROM_REQUEST, C_FROM_TASK };
static const char *const wake_classes[] = { "from_request", "from_task", NULL };

struct wake_params {
	int64_t clients;
	int64_t gap_us;
	int gap_dist;
	int64_t work_ns;
	int64_t from_task_pct;
	bool urgent;
};

#define P struct wake_params
static const struct sb_param wake_param_table[] = {
	SB_PARAM_INT(P, clients, 2, 1, 1024, "request threads, each submitting one job per gap"),
	SB_PARAM_INT(P, gap_us, 5000, 0, 60000000, "mean pause before each job, us (long enough for workers to suspend)"),
	SB_PARAM_ENUM(P, gap_dist, WL_EXP, wl_dist_names, "distribution of the gaps"),
	SB_PARAM_INT(P, work_ns, 2000, 0, 1000000000, "busy work of each job's one task, ns"),
	SB_PARAM_INT(P, from_task_pct, 50, 0, 100, "percent of jobs whose task submits a from_task job"),
	SB_PARAM_BOOL(P, urgent, 0, "tasks carry the suspended_worker hint (SB_TF_URGENT)"),
	SB_PARAM_END,
};
#undef P

struct wake_client {
	struct sb_job *child; /* the from_task job, set by the from_request job's task */
};

struct wake {
	struct wl_clients cs; /* first: see common.h */
	struct wake_params p;
	struct wake_client *wc;
};
_Static_assert(offsetof(struct wake, cs) == 0, "workload state starts with its clients");

static struct sb_job *new_job(struct wake *w, unsigned cls)
{
	/* a keyed operation: hybrid runs it serially only when told to (level >= 20) */
	struct sb_job_desc d = { .cls = cls, .work_level = SB_WL_KEY_OPERATION, .done = wl_job_done, .arg = w };
	return sb_job_create(w->cs.env->rt, &d);
}

/* u[0] = own cost, u[1] = 1 to submit a from_task job, u[2] = that job's cost */
static enum sb_result request_task(struct sb_task *t)
{
	struct wake *w = t->job->arg;
	struct wake_client *wc = t->arg;
	if (t->u[1]) {
		struct sb_job *j = new_job(w, C_FROM_TASK);
		wc->child = j; /* before the submit: a serial run may finish it inside */
		wl_submit(&w->cs, j, wl_work(&w->cs, j, t->u[2], w->p.urgent ? SB_TF_URGENT : 0));
	}
	sb_work_ns(t->u[0]);
	return SB_DONE;
}

static void client(struct wl_client *c)
{
	struct wake *w = c->set->user;
	struct wake_client *wc = &w->wc[c->idx];
	while (wl_client_more(c)) {
		uint64_t gap = wl_cost(&c->rng, w->p.gap_dist, (double)w->p.gap_us * 1000);
		bool relay = wl_rng_below(&c->rng, 100) < (uint64_t)w->p.from_task_pct;
		uint64_t ns = (uint64_t)w->p.work_ns;
		if (!wl_client_wait_until(c, sb_now_ns() + gap))
			break;
		struct sb_job *j = new_job(w, C_FROM_REQUEST);
		struct sb_task *t = wl_task(&w->cs, j, request_task, wc);
		t->u[0] = ns;
		t->u[1] = relay;
		t->u[2] = ns;
		t->flags = w->p.urgent ? SB_TF_URGENT : 0;
		wc->child = NULL;
		if (relay)
			wl_client_note(c, C_FROM_TASK, gap);
		wl_client_submit(c, j, t, gap);
		if (!wl_wait_put(j))
			break;
		if (relay && !wl_wait_put(wc->child))
			break;
	}
}

static int wake_start(const struct wl_env *env, const void *params, void **state, char *err, size_t errlen)
{
	const struct wake_params *p = params;
	struct wake *w = calloc(1, sizeof *w);
	struct wake_client *wc = calloc((size_t)p->clients, sizeof *wc);
	if (!w || !wc) {
		free(w);
		free(wc);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->p = *p;
	w->wc = wc;
	*state = w;
	return wl_clients_start(&w->cs, env, (unsigned)p->clients, client, w, err, errlen);
}

static void wake_destroy(void *st)
{
	struct wake *w = st;
	wl_clients_free(&w->cs);
	free(w->wc);
	free(w);
}

const struct sb_workload wake_workload = {
	.start = wake_start,
	.done = wl_state_done,
	.stop = wl_state_stop,
	.counts = wl_state_counts,
	.destroy = wake_destroy,
	.name = "wake",
	.description = "sparse one-task jobs to suspended workers, from a request thread and from a task (memo 000 suspend/wake)",
	.classes = wake_classes,
	.params = wake_param_table,
	.params_size = sizeof(struct wake_params),
};
