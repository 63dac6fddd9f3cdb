/*
 * job.c - jobs (core/job.c): counting, failure, cancellation and the one teardown, on every
 * registered policy.
 *
 * Each parameterised test runs once per policy in the registry, so a new policy is tested by
 * adding its registry line. What is asserted: every task runs exactly once (the core's run
 * counters agree); teardown runs once and only after the job's last task; an erroring task
 * fails only its own job; cancelling a job mid-flight drops its queued tasks and still tears it
 * down once.
 */
#include <pthread.h>

#include "../common.h"
/* ---- every task runs exactly once ---- */

#define EO_THREADS 4
#define EO_JOBS 25
#define EO_MID 10
#define EO_LEAF 19
#define EO_PER_JOB (1 + EO_MID + EO_MID * EO_LEAF)

static _Atomic uint32_t eo_hits[EO_THREADS * EO_JOBS * EO_PER_JOB];

static enum sb_result eo_leaf(struct sb_task *t)
{
	atomic_fetch_add(&eo_hits[t->u[0]], 1);
	return SB_DONE;
}

static enum sb_result eo_mid(struct sb_task *t)
{
	atomic_fetch_add(&eo_hits[t->u[0]], 1);
	for (unsigned i = 0; i < EO_LEAF; i++) {
		struct sb_task *c = sb_task_new(t->job, eo_leaf, NULL);
		c->u[0] = t->u[1] + i;
		sb_spawn(c);
	}
	return SB_DONE;
}

static enum sb_result eo_root(struct sb_task *t)
{
	uint64_t base = t->u[0];
	atomic_fetch_add(&eo_hits[base], 1);
	for (unsigned m = 0; m < EO_MID; m++) {
		struct sb_task *c = sb_task_new(t->job, eo_mid, NULL);
		c->u[0] = base + 1 + m;
		c->u[1] = base + 1 + EO_MID + (uint64_t)m * EO_LEAF;
		sb_spawn(c);
	}
	return SB_DONE;
}

struct eo_arg {
	struct sb_rt *rt;
	unsigned idx;
	unsigned failed; /* jobs whose wait failed; asserted on the test's own thread */
};

static void *eo_client(void *p)
{
	struct eo_arg *a = p;
	sb_thread_attach(a->rt);
	struct sb_job *jobs[EO_JOBS];
	for (unsigned k = 0; k < EO_JOBS; k++) {
		struct sb_job_desc d = { .work_level = SB_WL_JOIN };
		jobs[k] = sb_job_create(a->rt, &d);
		struct sb_task *t = sb_task_new(jobs[k], eo_root, NULL);
		t->u[0] = (uint64_t)(a->idx * EO_JOBS + k) * EO_PER_JOB;
		sb_job_submit(jobs[k], t);
	}
	for (unsigned k = 0; k < EO_JOBS; k++) {
		a->failed += !sb_job_wait(jobs[k]);
		sb_job_put(jobs[k]);
	}
	sb_thread_detach();
	return NULL;
}

SB_POLICY_PARAMS(invariants, exactly_once)
ParameterizedTest(struct sb_tpol *pol, invariants, exactly_once, .timeout = 60)
{
	memset(eo_hits, 0, sizeof eo_hits);
	struct sb_rt *rt = t_rt(pol->name, 3, NULL);
	pthread_t th[EO_THREADS];
	struct eo_arg args[EO_THREADS];
	for (unsigned i = 0; i < EO_THREADS; i++) {
		args[i] = (struct eo_arg){ rt, i };
		pthread_create(&th[i], NULL, eo_client, &args[i]);
	}
	for (unsigned i = 0; i < EO_THREADS; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(args[i].failed, 0, "%s: %u jobs of client %u did not finish: %s", pol->name, args[i].failed, i,
			     sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	}
	size_t n = sizeof eo_hits / sizeof eo_hits[0];
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(atomic_load(&eo_hits[i]), 1, "%s: task %zu ran %u times", pol->name, i, atomic_load(&eo_hits[i]));
	uint64_t total = 0, c[SB_NR_COUNTERS];
	for (unsigned w = 0; w < sb_rt_nworkers(rt); w++) {
		sb_rt_worker_counters(rt, w, c);
		total += c[SB_C_RUN];
	}
	sb_rt_other_counters(rt, c);
	total += c[SB_C_RUN];
	cr_assert_eq(total, n, "%s: the core counted %llu task runs for %zu tasks", pol->name, (unsigned long long)total, n);
	t_done(rt);
}

/* ---- teardown once, after the last task ---- */

struct td_job {
	_Atomic unsigned ran;
	_Atomic unsigned teardowns;
	unsigned expect;
	_Atomic unsigned late; /* tasks that ran after the teardown */
	bool early;
};

static enum sb_result td_leaf(struct sb_task *t)
{
	struct td_job *tj = t->job->arg;
	sb_work_ns(2000);
	if (atomic_load(&tj->teardowns))
		atomic_fetch_add(&tj->late, 1);
	atomic_fetch_add(&tj->ran, 1);
	return SB_DONE;
}

static enum sb_result td_root(struct sb_task *t)
{
	struct td_job *tj = t->job->arg;
	if (tj->early)
		sb_job_request_teardown(t->job); /* jogasaki's DAG controller style */
	for (unsigned i = 1; i < tj->expect; i++)
		sb_spawn(sb_task_new(t->job, td_leaf, NULL));
	atomic_fetch_add(&tj->ran, 1);
	return SB_DONE;
}

static void td_done(struct sb_job *j)
{
	struct td_job *tj = j->arg;
	cr_assert_eq(atomic_load(&tj->ran), tj->expect, "teardown ran after %u of %u tasks", atomic_load(&tj->ran), tj->expect);
	atomic_fetch_add(&tj->teardowns, 1);
}

SB_POLICY_PARAMS(invariants, teardown_once)
ParameterizedTest(struct sb_tpol *pol, invariants, teardown_once, .timeout = 60)
{
	struct sb_rt *rt = t_rt(pol->name, 2, NULL);
	sb_thread_attach(rt);
	const enum sb_teardown modes[] = { SB_TEARDOWN_TASK, SB_TEARDOWN_INPLACE, SB_TEARDOWN_TASK };
	for (unsigned m = 0; m < 3; m++) {
		struct td_job tj[16];
		struct sb_job *jobs[16];
		for (unsigned k = 0; k < 16; k++) {
			tj[k] = (struct td_job){ .expect = 1 + 8 * k, .early = m == 2 };
			struct sb_job_desc d = { .teardown = modes[m], .done = td_done, .arg = &tj[k], .work_level = SB_WL_JOIN };
			jobs[k] = sb_job_create(rt, &d);
			sb_job_submit(jobs[k], sb_task_new(jobs[k], td_root, NULL));
		}
		for (unsigned k = 0; k < 16; k++) {
			cr_assert(sb_job_wait(jobs[k]));
			cr_assert_eq(atomic_load(&tj[k].teardowns), 1, "%s mode %u: %u teardowns", pol->name, m, atomic_load(&tj[k].teardowns));
			cr_assert_eq(atomic_load(&tj[k].late), 0);
			cr_assert_eq(sb_job_status(jobs[k]), SB_JOB_OK);
			sb_job_put(jobs[k]);
		}
	}
	sb_thread_detach();
	t_done(rt);
}
/* ---- faults ---- */

static enum sb_result failing(struct sb_task *t)
{
	(void)t;
	return SB_ERROR;
}

static enum sb_result fail_some(struct sb_task *t)
{
	for (unsigned i = 0; i < 10; i++)
		sb_spawn(sb_task_new(t->job, i == 3 && t->u[0] ? failing : t_work_leaf, NULL));
	return SB_DONE;
}

static _Atomic unsigned seen_error, seen_ok;

static void status_cb(struct sb_job *j)
{
	atomic_fetch_add(sb_job_status(j) == SB_JOB_ERROR ? &seen_error : &seen_ok, 1);
}

SB_POLICY_PARAMS(faults, error_fails_only_its_job)
ParameterizedTest(struct sb_tpol *pol, faults, error_fails_only_its_job, .timeout = 60)
{
	atomic_store(&seen_error, 0);
	atomic_store(&seen_ok, 0);
	struct sb_rt *rt = t_rt(pol->name, 2, NULL);
	sb_thread_attach(rt);
	struct sb_job *js[12];
	for (unsigned k = 0; k < 12; k++) {
		struct sb_job_desc d = { .done = status_cb, .work_level = SB_WL_INFINITY };
		js[k] = sb_job_create(rt, &d);
		struct sb_task *r = sb_task_new(js[k], fail_some, NULL);
		r->u[0] = k % 3 == 0; /* jobs 0, 3, 6, 9 contain a failing task */
		sb_job_submit(js[k], r);
	}
	for (unsigned k = 0; k < 12; k++) {
		cr_assert(sb_job_wait(js[k]));
		cr_assert_eq(sb_job_status(js[k]), k % 3 == 0 ? SB_JOB_ERROR : SB_JOB_OK, "%s job %u", pol->name, k);
		sb_job_put(js[k]);
	}
	cr_assert_eq(atomic_load(&seen_error), 4);
	cr_assert_eq(atomic_load(&seen_ok), 8);
	sb_thread_detach();
	t_done(rt);
}

static _Atomic unsigned chain_ran;
static _Atomic int cancel_now;

static enum sb_result chain_link(struct sb_task *t)
{
	atomic_fetch_add(&chain_ran, 1);
	if (t->u[0] == 50)
		atomic_store(&cancel_now, 1); /* the request thread cancels now ... */
	if (t->u[0] > 50)
		while (atomic_load(&cancel_now) == 1)
			sched_yield(); /* ... and this link waits until it has */
	if (t->u[0] < 1000) {
		struct sb_task *n = sb_task_new(t->job, chain_link, NULL);
		n->u[0] = t->u[0] + 1;
		sb_spawn(n);
	}
	return SB_DONE;
}

static void cancel_cb(struct sb_job *j)
{
	atomic_fetch_add(sb_job_status(j) == SB_JOB_CANCELLED ? &seen_error : &seen_ok, 1);
}

SB_POLICY_PARAMS(faults, cancel_mid_flight)
ParameterizedTest(struct sb_tpol *pol, faults, cancel_mid_flight, .timeout = 60)
{
	if (!strcmp(pol->name, "serial"))
		cr_skip_test("serial runs the job inside the waiting thread; nothing is in flight to cancel");
	atomic_store(&chain_ran, 0);
	atomic_store(&cancel_now, 0);
	atomic_store(&seen_error, 0);
	atomic_store(&seen_ok, 0);
	struct sb_rt *rt = t_rt(pol->name, 2, NULL);
	sb_thread_attach(rt);
	struct sb_job_desc d = { .done = cancel_cb, .work_level = SB_WL_INFINITY, .force_stealing = true };
	struct sb_job *j = sb_job_create(rt, &d);
	sb_job_submit(j, sb_task_new(j, chain_link, NULL));
	while (atomic_load(&cancel_now) != 1)
		sched_yield();
	sb_job_cancel(j);
	atomic_store(&cancel_now, 2);
	cr_assert(sb_job_wait(j));
	cr_assert_eq(sb_job_status(j), SB_JOB_CANCELLED);
	cr_assert_eq(atomic_load(&seen_error), 1, "teardown ran once, seeing the cancellation");
	/* link 51 was waiting in its body when the cancel came; link 52 was spawned after it and
	 * must have been dropped, so at most 52 links ran */
	cr_assert_leq(atomic_load(&chain_ran), 52, "%s: %u links ran after a cancel at link 51", pol->name,
		      atomic_load(&chain_ran));
	sb_job_put(j);
	sb_thread_detach();
	t_done(rt);
}
