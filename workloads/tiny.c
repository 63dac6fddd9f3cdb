/*
 * tiny.c - many tiny independent jobs: the Quartz case (memo 003), where per-job overhead and
 * contention on the queues dominate and taking several due jobs per lock round pays off.
 *
 * Models: `producers` request threads, each keeping up to `window` one-task jobs (work_ns,
 * hundreds of ns) in flight. Closed loop (rate 0): a producer submits whenever its window has
 * room. Open loop: Poisson arrivals at `rate` jobs per second over all producers; an arrival
 * that finds the window full waits for the oldest job, is counted late, and its latency runs
 * from the intended arrival (t_arrival). Jobs carry no transaction and are reaped oldest first.
 *
 * Does not model triggers, calendars or misfires: only the job stream Quartz's scheduler sees.
 * Concurrency: each producer's window belongs to its thread alone.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "common.h"

static const char *const tiny_classes[] = { "tiny", NULL };

struct tiny_params {
	int64_t producers;
	int64_t work_ns;
	int dist;
	int64_t window;
	double rate;
};

#define P struct tiny_params
static const struct sb_param tiny_param_table[] = {
	SB_PARAM_INT(P, producers, 4, 1, 1024, "request threads submitting jobs"),
	SB_PARAM_INT(P, work_ns, 300, 0, 1000000000, "mean cost of a job's one task, ns"),
	SB_PARAM_ENUM(P, dist, WL_FIXED, wl_dist_names, "distribution of the task costs"),
	SB_PARAM_INT(P, window, 16, 1, 1000000, "jobs a producer keeps in flight at most"),
	SB_PARAM_DOUBLE(P, rate, 0, 0, 1e9, "open loop: jobs per second over all producers (Poisson); 0 = closed loop"),
	SB_PARAM_END,
};
#undef P

struct tiny {
	struct wl_clients cs; /* first: see common.h */
	struct tiny_params p;
	struct sb_job **ring; /* producer i's window: ring[i * window ...] */
};
_Static_assert(offsetof(struct tiny, cs) == 0, "workload state starts with its clients");

static void client(struct wl_client *c)
{
	struct tiny *ty = c->set->user;
	struct wl_window win = { .ring = ty->ring + c->idx * (uint64_t)ty->p.window, .cap = (uint64_t)ty->p.window };
	bool ok = true, open = ty->p.rate > 0;
	struct wl_arrivals arr;
	wl_arrivals_init(c, &arr, ty->p.rate / (double)ty->cs.n, 0);
	while (ok && wl_client_more(c)) {
		ok = wl_window_room(&win);
		uint64_t arrival = 0;
		if (!ok || (open && !(arrival = wl_arrival_next(c, &arr))))
			break;
		struct sb_job_desc d = { .cls = 0, .work_level = SB_WL_KEY_OPERATION, .done = wl_job_done, .arg = ty,
					 .t_arrival = arrival };
		struct sb_job *j = sb_job_create(c->set->env->rt, &d);
		uint64_t ns = wl_cost(&c->rng, ty->p.dist, (double)ty->p.work_ns);
		wl_client_submit(c, j, wl_work(&ty->cs, j, ns, 0), ns);
		wl_window_add(&win, j);
	}
	wl_arrivals_end(c, &arr);
	/* everything still in flight completes before the producer leaves */
	wl_window_drain(&win, ok);
}

static int tiny_start(const struct wl_env *env, const void *params, void **state, char *err, size_t errlen)
{
	const struct tiny_params *p = params;
	struct tiny *ty = calloc(1, sizeof *ty);
	struct sb_job **ring = calloc((size_t)(p->producers * p->window), sizeof *ring);
	if (!ty || !ring) {
		free(ty);
		free(ring);
		snprintf(err, errlen, "out of memory for %lld windows of %lld jobs", (long long)p->producers,
			 (long long)p->window);
		return -ENOMEM;
	}
	ty->p = *p;
	ty->ring = ring;
	*state = ty;
	return wl_clients_start(&ty->cs, env, (unsigned)p->producers, client, ty, err, errlen);
}

static void tiny_destroy(void *st)
{
	struct tiny *ty = st;
	wl_clients_free(&ty->cs);
	free(ty->ring);
	free(ty);
}

const struct sb_workload tiny_workload = {
	.start = tiny_start,
	.done = wl_state_done,
	.stop = wl_state_stop,
	.counts = wl_state_counts,
	.destroy = tiny_destroy,
	.name = "tiny",
	.description = "many tiny one-task jobs from several producers, open or closed loop (memo 003: Quartz)",
	.classes = tiny_classes,
	.params = tiny_param_table,
	.params_size = sizeof(struct tiny_params),
};
