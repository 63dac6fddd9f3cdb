/*
 * micro.c - microbenchmarks of the scheduler's own costs: how much a spawn, a hand-off, a
 * fan-out from outside the pool and a yield cost under each policy.
 *
 * Patterns (one job each, closed loop per client):
 *   chain       each task spawns the next: spawn + run per task, nothing else.
 *   pingpong    the same chain with the suspended_worker hint (SB_TF_URGENT), which sends each
 *               task to another worker: the cross-worker hand-off and wake-up path.
 *   spawn_many  the request thread itself spawns `length` tasks into one job (holding the job
 *               open while it does): submission from outside the pool.
 *   yield_many  16 tasks that each return SB_YIELD length/16 times: the re-submission path.
 *   forward     memo 001's forwarded child: a producer makes `length` chunks one after another,
 *               and its child, spawned first, consumes each chunk as it appears; a child that
 *               finds nothing new re-registers itself as a conditional task (SB_TF_COND, then
 *               SB_YIELD) until the last chunk. Where conditional tasks wait (the watcher, a
 *               PTL) decides whether the two run side by side.
 * Each task spends work_ns of busy work. Classes are the pattern names. A client waits for each
 * job before the next unless `window` lets it keep more in flight: one-task chains (length 1)
 * from one client to a worker that never sleeps then measure what a job costs its creator and
 * its finisher when the two are different threads (scripts/calibrate.py's job_create, job_end).
 */
#include <stddef.h>
#include <errno.h>
#include <stdlib.h>

#include "common.h"

enum { P_CHAIN, P_PINGPONG, P_SPAWN_MANY, P_YIELD_MANY, P_FORWARD };
static const char *const patterns[] = { "chain", "pingpong", "spawn_many", "yield_many", "forward", NULL };

struct micro_params {
	int pattern;
	int64_t length;
	int64_t work_ns;
	int64_t clients;
	int64_t window;
};

#define P struct micro_params
static const struct sb_param micro_param_table[] = {
	SB_PARAM_ENUM(P, pattern, P_CHAIN, patterns, "what each job does"),
	SB_PARAM_INT(P, length, 10000, 1, 100000000, "tasks per job (yields per job for yield_many, chunks for forward)"),
	SB_PARAM_INT(P, work_ns, 0, 0, 1000000000, "busy work per task (per chunk made and per chunk used for forward), ns"),
	SB_PARAM_INT(P, clients, 1, 1, 1024, "request threads, each running jobs back to back"),
	SB_PARAM_INT(P, window, 1, 1, 1000000, "jobs a client keeps in flight at most (1: it waits for each)"),
	SB_PARAM_END,
};
#undef P

struct micro {
	struct wl_clients cs; /* first: see common.h */
	struct micro_params p;
	struct sb_job **ring; /* client i's window: ring[i * window ...] */
};
_Static_assert(offsetof(struct micro, cs) == 0, "workload state starts with its clients");

static enum sb_result step(struct sb_task *t)
{
	struct micro *m = t->job->arg;
	sb_work_ns((uint64_t)m->p.work_ns);
	if (t->u[0] > 1) {
		struct sb_task *n = wl_task(&m->cs, t->job, step, NULL);
		n->u[0] = t->u[0] - 1;
		n->flags = t->flags & SB_TF_URGENT;
		sb_spawn(n);
	}
	return SB_DONE;
}

static enum sb_result leaf(struct sb_task *t)
{
	struct micro *m = t->job->arg;
	sb_work_ns((uint64_t)m->p.work_ns);
	return SB_DONE;
}

static enum sb_result yielder(struct sb_task *t)
{
	struct micro *m = t->job->arg;
	sb_work_ns((uint64_t)m->p.work_ns);
	if (t->u[0]) {
		t->u[0]--;
		return SB_YIELD;
	}
	return SB_DONE;
}

static enum sb_result yield_root(struct sb_task *t)
{
	struct micro *m = t->job->arg;
	uint64_t each = (uint64_t)m->p.length / 16;
	for (unsigned i = 0; i < 16; i++) {
		struct sb_task *c = wl_task(&m->cs, t->job, yielder, NULL);
		c->u[0] = each;
		sb_spawn(c);
	}
	return SB_DONE;
}

/* forward: the child's state, in its own task, which lives until the last chunk is used: au[0] the
 * chunks made (the producer's), u[1] the chunks used (the child's). */
static bool forward_ready(struct sb_task *t)
{
	/* acquire: pairs with the producer's release store */
	return atomic_load_explicit(&t->au[0], memory_order_acquire) > t->u[1];
}

static enum sb_result forward_child(struct sb_task *t)
{
	struct micro *m = t->job->arg;
	/* acquire: pairs with the producer's release store; the chunks up to it are made */
	uint64_t made = atomic_load_explicit(&t->au[0], memory_order_acquire);
	for (; t->u[1] < made; t->u[1]++)
		sb_work_ns((uint64_t)m->p.work_ns);
	if (made == (uint64_t)m->p.length)
		return SB_DONE;
	/* nothing more yet: wait as a conditional task again (memo 001) */
	t->flags |= SB_TF_COND;
	return SB_YIELD;
}

static enum sb_result forward_producer(struct sb_task *t)
{
	struct micro *m = t->job->arg;
	struct sb_task *child = wl_task(&m->cs, t->job, forward_child, NULL);
	child->flags |= SB_TF_COND;
	child->check = forward_ready;
	atomic_init(&child->au[0], 0);
	child->u[1] = 0;
	sb_spawn(child);
	/* the child ends only after the last store below, so it is alive for each of them */
	for (uint64_t i = 1; i <= (uint64_t)m->p.length; i++) {
		sb_work_ns((uint64_t)m->p.work_ns);
		/* release: the chunk's work is done before the child sees it */
		atomic_store_explicit(&child->au[0], i, memory_order_release);
	}
	return SB_DONE;
}

static void client(struct wl_client *c)
{
	struct micro *m = c->set->user;
	struct wl_window win = { .ring = m->ring + c->idx * (uint64_t)m->p.window, .cap = (uint64_t)m->p.window };
	bool ok = true;
	/* room first: with a window of 1 the previous job has ended before the next is decided */
	while (ok && (ok = wl_window_room(&win)) && wl_client_more(c)) {
		struct sb_job_desc d = { .cls = (unsigned)m->p.pattern, .work_level = SB_WL_INFINITY, .done = wl_job_done,
					 .arg = m };
		struct sb_job *j = sb_job_create(c->set->env->rt, &d);
		struct sb_task *root;
		switch (m->p.pattern) {
		case P_SPAWN_MANY:
			/* the job stays open while this thread spawns into it from outside */
			sb_job_hold(j);
			wl_client_submit(c, j, wl_task(&m->cs, j, leaf, NULL), (uint64_t)m->p.length);
			for (int64_t i = 1; i < m->p.length; i++)
				sb_spawn(wl_task(&m->cs, j, leaf, NULL));
			sb_job_release(j);
			break;
		case P_YIELD_MANY:
			wl_client_submit(c, j, wl_task(&m->cs, j, yield_root, NULL), (uint64_t)m->p.length);
			break;
		case P_FORWARD:
			wl_client_submit(c, j, wl_task(&m->cs, j, forward_producer, NULL), (uint64_t)m->p.length);
			break;
		default:
			root = wl_task(&m->cs, j, step, NULL);
			root->u[0] = (uint64_t)m->p.length;
			if (m->p.pattern == P_PINGPONG)
				root->flags |= SB_TF_URGENT;
			wl_client_submit(c, j, root, (uint64_t)m->p.length);
		}
		wl_window_add(&win, j);
	}
	wl_window_drain(&win, ok);
}

static int micro_start(const struct wl_env *env, const void *params, void **state, char *err, size_t errlen)
{
	struct micro *m = calloc(1, sizeof *m);
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->p = *(const struct micro_params *)params;
	m->ring = calloc((size_t)(m->p.clients * m->p.window), sizeof *m->ring);
	if (!m->ring) {
		snprintf(err, errlen, "out of memory for %lld windows of %lld jobs", (long long)m->p.clients,
			 (long long)m->p.window);
		free(m);
		return -ENOMEM;
	}
	*state = m;
	return wl_clients_start(&m->cs, env, (unsigned)m->p.clients, client, m, err, errlen);
}

static void micro_destroy(void *st)
{
	struct micro *m = st;
	wl_clients_free(&m->cs);
	free(m->ring);
	free(m);
}

const struct sb_workload micro_workload = {
	.start = micro_start,
	.done = wl_state_done,
	.stop = wl_state_stop,
	.counts = wl_state_counts,
	.destroy = micro_destroy,
	.name = "micro",
	.description = "scheduler costs: spawn chains, cross-worker ping-pong, spawns from outside, yields, a forwarded child",
	.classes = patterns,
	.params = micro_param_table,
	.params_size = sizeof(struct micro_params),
};
