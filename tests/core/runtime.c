/*
 * runtime.c - a runtime's life (core/runtime.c) on every registered policy: a stop with tasks
 * queued finishes every job and drops what was queued.
 */
#include <pthread.h>

#include "../common.h"
/* ---- stopping with tasks queued ---- */

static _Atomic int gate_open;
static _Atomic unsigned gate_started;

static enum sb_result gate_task(struct sb_task *t)
{
	(void)t;
	atomic_fetch_add(&gate_started, 1);
	while (!atomic_load(&gate_open))
		sched_yield();
	return SB_DONE;
}

/* A queued task that must never run once the stop has come: it counts itself. */
static _Atomic unsigned queued_ran;

static enum sb_result queued_leaf(struct sb_task *t)
{
	(void)t;
	atomic_fetch_add(&queued_ran, 1);
	return SB_DONE;
}

static enum sb_result busy_root(struct sb_task *t)
{
	for (unsigned i = 0; i < 5; i++)
		sb_spawn(sb_task_new(t->job, queued_leaf, NULL));
	return SB_DONE;
}

struct stop_arg {
	struct sb_rt *rt;
};

static void *stopper(void *p)
{
	sb_rt_stop(((struct stop_arg *)p)->rt, SB_STOP_CANCEL);
	return NULL;
}

SB_POLICY_PARAMS(invariants, stop_with_tasks_queued)
ParameterizedTest(struct sb_tpol *pol, invariants, stop_with_tasks_queued, .timeout = 60)
{
	atomic_store(&gate_open, 0);
	atomic_store(&gate_started, 0);
	atomic_store(&queued_ran, 0);
	/* one worker, held by a gate task, with 100 jobs queued behind it */
	struct sb_rt *rt = t_rt(pol->name, 1, NULL);
	sb_thread_attach(rt);
	enum { N = 100 };
	struct sb_job *jobs[N];
	struct sb_job_desc gd = { .work_level = SB_WL_INFINITY, .force_stealing = true };
	struct sb_job *gate = sb_job_create(rt, &gd);
	sb_job_submit(gate, sb_task_new(gate, gate_task, NULL));
	bool serial = !strcmp(pol->name, "serial");
	while (!serial && !atomic_load(&gate_started))
		sched_yield();
	for (unsigned k = 0; k < N; k++) {
		struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .force_stealing = true };
		jobs[k] = sb_job_create(rt, &d);
		sb_job_submit(jobs[k], sb_task_new(jobs[k], busy_root, NULL));
	}
	if (serial) {
		/* everything waits in this thread's own queue: the stop drains it */
		atomic_store(&gate_open, 1);
		sb_rt_stop(rt, SB_STOP_CANCEL);
	} else {
		pthread_t th;
		struct stop_arg a = { rt };
		pthread_create(&th, NULL, stopper, &a);
		while (!(atomic_load(&rt->slow) & SB_SLOW_CANCEL))
			sched_yield();
		atomic_store(&gate_open, 1);
		pthread_join(th, NULL);
	}
	cr_assert(sb_job_done(gate), "the running task finished");
	unsigned cancelled = 0;
	for (unsigned k = 0; k < N; k++) {
		cr_assert(sb_job_done(jobs[k]), "%s: job %u finished its teardown", pol->name, k);
		cancelled += sb_job_status(jobs[k]) == SB_JOB_CANCELLED;
		sb_job_put(jobs[k]);
	}
	sb_job_put(gate);
	cr_assert_eq(cancelled, N, "%s: %u of %u queued jobs were cancelled", pol->name, cancelled, N);
	cr_assert_eq(atomic_load(&queued_ran), 0, "%s: no queued task ran after the stop", pol->name);
	uint64_t c[SB_NR_COUNTERS], dropped = 0;
	for (unsigned w = 0; w < sb_rt_nworkers(rt); w++) {
		sb_rt_worker_counters(rt, w, c);
		dropped += c[SB_C_DROPPED];
	}
	sb_rt_other_counters(rt, c);
	dropped += c[SB_C_DROPPED];
	/* under serial the gate itself was still queued in this thread, so it is dropped too */
	cr_assert_eq(dropped, N + serial, "%s: %llu tasks dropped", pol->name, (unsigned long long)dropped);
	cr_assert_null(sb_rt_failure(rt));
	sb_thread_detach();
	sb_rt_destroy(rt);
}

/* ---- a drain stop waits for every job, wherever it ends ---- */

/* Jobs are counted per thread and the stop sums the counts (core/runtime.c, live_jobs). Each
 * parent's task submits a child job and works a little, so children are submitted while the
 * stop counts and end on another thread than their parent; nobody waits for any job but the
 * stop. When sb_rt_stop returns, every teardown (the done callback) has run: 2 x N of them. */
static _Atomic unsigned drain_done;

static void drain_job_done(struct sb_job *j)
{
	(void)j;
	atomic_fetch_add(&drain_done, 1);
}

static enum sb_result drain_child(struct sb_task *t)
{
	(void)t;
	sb_work_ns(20000);
	return SB_DONE;
}

static enum sb_result drain_parent(struct sb_task *t)
{
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .done = drain_job_done };
	struct sb_job *c = sb_job_create(t->job->rt, &d);
	sb_job_submit(c, sb_task_new(c, drain_child, NULL));
	sb_job_put(c);
	sb_work_ns(20000);
	return SB_DONE;
}

SB_POLICY_PARAMS(invariants, drain_stop_waits_for_every_job)
ParameterizedTest(struct sb_tpol *pol, invariants, drain_stop_waits_for_every_job, .timeout = 60)
{
	enum { N = 200 };
	atomic_store(&drain_done, 0);
	struct sb_rt *rt = t_rt(pol->name, 2, NULL);
	sb_thread_attach(rt);
	for (unsigned k = 0; k < N; k++) {
		struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .done = drain_job_done };
		struct sb_job *j = sb_job_create(rt, &d);
		sb_job_submit(j, sb_task_new(j, drain_parent, NULL));
		sb_job_put(j);
	}
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(atomic_load(&drain_done), 2 * N, "%s: %u of %u jobs torn down when the stop returned",
		     pol->name, atomic_load(&drain_done), 2 * N);
	cr_assert_null(sb_rt_failure(rt));
	sb_thread_detach();
	sb_rt_destroy(rt);
}
