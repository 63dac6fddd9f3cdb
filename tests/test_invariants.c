/*
 * test_invariants.c - the scheduling invariants, on every registered policy.
 *
 * Each test is parameterised over the policy registry, so a new policy is tested by adding
 * its registry line. What is asserted: every task runs exactly once; teardown runs once and
 * only after the job's last task; sticky tasks of a transaction never overlap and run on the
 * bound worker while the transaction's sticky count is above zero; work submitted to suspended
 * workers still runs (no lost wake-up, with a suspend timeout far longer than the watchdog);
 * a conditional task runs once, after its check turns true; a stop with tasks queued finishes
 * every job and drops what was queued.
 */
#include <pthread.h>
#include <time.h>

#include "common.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

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

/* ---- sticky tasks: never overlapping, on the bound worker ---- */

struct st_shared {
	struct sb_txn *txn;
	_Atomic int inflight;
	_Atomic unsigned overlaps, off_bound, unbound, ran;
};

static struct st_shared st;

static enum sb_result st_sticky(struct sb_task *t)
{
	(void)t;
	if (atomic_fetch_add(&st.inflight, 1) != 0)
		atomic_fetch_add(&st.overlaps, 1);
	int w = sb_self_worker();
	uint64_t word = atomic_load(&st.txn->sticky);
	if (w >= 0) {
		if ((word >> 32) == 0)
			atomic_fetch_add(&st.unbound, 1);
		else if ((word & 0xffffffffu) != (uint64_t)w)
			atomic_fetch_add(&st.off_bound, 1);
	}
	sb_work_ns(3000);
	atomic_fetch_add(&st.ran, 1);
	atomic_fetch_sub(&st.inflight, 1);
	return SB_DONE;
}

static enum sb_result plain_work(struct sb_task *t)
{
	(void)t;
	sb_work_ns(2000);
	return SB_DONE;
}

static enum sb_result st_root(struct sb_task *t)
{
	for (unsigned i = 0; i < 40; i++) {
		struct sb_task *c = sb_task_new(t->job, st_sticky, NULL);
		c->flags |= SB_TF_STICKY;
		sb_spawn(c);
		/* and some plain work around it, to give stealing something to do */
		sb_spawn(sb_task_new(t->job, plain_work, NULL));
	}
	return SB_DONE;
}

struct st_arg {
	struct sb_rt *rt;
	_Atomic unsigned failed;
};

static void *st_client(void *p)
{
	struct st_arg *a = p;
	sb_thread_attach(a->rt);
	struct sb_job *jobs[8];
	for (unsigned k = 0; k < 8; k++) {
		struct sb_job_desc d = { .txn = st.txn, .work_level = SB_WL_JOIN };
		jobs[k] = sb_job_create(a->rt, &d);
		sb_job_submit(jobs[k], sb_task_new(jobs[k], st_root, NULL));
	}
	for (unsigned k = 0; k < 8; k++) {
		if (!sb_job_wait(jobs[k]))
			atomic_fetch_add(&a->failed, 1);
		sb_job_put(jobs[k]);
	}
	sb_thread_detach();
	return NULL;
}

SB_POLICY_PARAMS(invariants, sticky_exclusive_and_bound)
ParameterizedTest(struct sb_tpol *pol, invariants, sticky_exclusive_and_bound, .timeout = 60)
{
	memset(&st, 0, sizeof st);
	struct sb_rt *rt = t_rt(pol->name, 3, NULL);
	sb_thread_attach(rt);
	st.txn = sb_txn_begin(rt, 42);
	cr_assert_eq(sb_txn_find(rt, 42), st.txn, "the transaction map finds it");
	pthread_t th[3];
	struct st_arg a = { .rt = rt };
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, st_client, &a);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(atomic_load(&a.failed), 0, "%s: jobs did not finish: %s", pol->name, sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	cr_assert_eq(atomic_load(&st.ran), 3 * 8 * 40);
	cr_assert_eq(atomic_load(&st.overlaps), 0, "%s: sticky tasks of one transaction overlapped %u times", pol->name,
		     atomic_load(&st.overlaps));
	cr_assert_eq(atomic_load(&st.off_bound), 0, "%s: %u sticky tasks ran off the bound worker", pol->name,
		     atomic_load(&st.off_bound));
	/* the stealing family binds every sticky task it places on a worker */
	if (!strcmp(pol->name, "stealing") || !strcmp(pol->name, "hybrid"))
		cr_assert_eq(atomic_load(&st.unbound), 0, "%s: %u sticky tasks ran unbound", pol->name, atomic_load(&st.unbound));
	cr_assert_eq(atomic_load(&st.txn->sticky) >> 32, 0, "sticky count back to zero");
	sb_txn_end(st.txn);
	cr_assert_null(sb_txn_find(rt, 42), "an ended transaction is gone from the map");
	sb_thread_detach();
	t_done(rt);
}

/* ---- no lost wake-up ---- */

static _Atomic unsigned lw_ran;

static enum sb_result lw_leaf(struct sb_task *t)
{
	(void)t;
	atomic_fetch_add(&lw_ran, 1);
	return SB_DONE;
}

static enum sb_result lw_root(struct sb_task *t)
{
	sb_spawn(sb_task_new(t->job, lw_leaf, NULL));
	sb_spawn(sb_task_new(t->job, lw_leaf, NULL));
	atomic_fetch_add(&lw_ran, 1);
	return SB_DONE;
}

SB_POLICY_PARAMS(invariants, no_lost_wakeup)
ParameterizedTest(struct sb_tpol *pol, invariants, no_lost_wakeup, .timeout = 60)
{
	/* Workers suspend after 10 empty rounds and would sleep 60 s unless woken; the watchdog
	 * fails the run after 2 s of a queued task waiting, so a lost wake-up cannot hide. */
	static const char *const sets[] = { "worker_try_count=10", "worker_suspend_timeout=60000000", "stall_limit=2000",
					    NULL };
	atomic_store(&lw_ran, 0);
	struct sb_rt *rt = t_rt(pol->name, 3, sets);
	sb_thread_attach(rt);
	for (unsigned i = 0; i < 60; i++) {
		sleep_ms(i % 3); /* let the workers go to sleep in between, sometimes */
		struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .force_stealing = true };
		struct sb_job *j = sb_job_create(rt, &d);
		sb_job_submit(j, sb_task_new(j, lw_root, NULL));
		cr_assert(sb_job_wait(j), "%s: job %u finished (%s)", pol->name, i, sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
		sb_job_put(j);
	}
	cr_assert_eq(atomic_load(&lw_ran), 180);
	sb_thread_detach();
	t_done(rt);
}

/* ---- conditional tasks ---- */

static _Atomic int cond_flag;
static _Atomic unsigned cond_ran, cond_early;

static bool cond_check(struct sb_task *t)
{
	(void)t;
	return atomic_load(&cond_flag) != 0;
}

static enum sb_result cond_body(struct sb_task *t)
{
	(void)t;
	if (!atomic_load(&cond_flag))
		atomic_fetch_add(&cond_early, 1);
	atomic_fetch_add(&cond_ran, 1);
	return SB_DONE;
}

static enum sb_result cond_root(struct sb_task *t)
{
	struct sb_task *c = sb_task_new(t->job, cond_body, NULL);
	c->flags |= SB_TF_COND;
	c->check = cond_check;
	sb_spawn(c);
	return SB_DONE;
}

static void cond_case(const char *policy, const char *const *sets)
{
	atomic_store(&cond_flag, 0);
	atomic_store(&cond_ran, 0);
	atomic_store(&cond_early, 0);
	struct sb_rt *rt = t_rt(policy, 2, sets);
	sb_thread_attach(rt);
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .force_stealing = true };
	struct sb_job *j = sb_job_create(rt, &d);
	sb_job_submit(j, sb_task_new(j, cond_root, NULL));
	sleep_ms(20);
	sb_thread_run_pending(); /* serial: the check runs here and fails */
	cr_assert_eq(atomic_load(&cond_ran), 0, "%s: conditional body ran before its check held", policy);
	cr_assert(!sb_job_done(j));
	atomic_store(&cond_flag, 1);
	cr_assert(sb_job_wait(j));
	cr_assert_eq(atomic_load(&cond_ran), 1, "%s: body ran %u times", policy, atomic_load(&cond_ran));
	cr_assert_eq(atomic_load(&cond_early), 0);
	sb_job_put(j);
	sb_thread_detach();
	t_done(rt);
}

SB_POLICY_PARAMS(invariants, conditional_runs_once_when_ready)
ParameterizedTest(struct sb_tpol *pol, invariants, conditional_runs_once_when_ready, .timeout = 60)
{
	cond_case(pol->name, NULL);
	/* the stealing family can also keep them in per-worker pending task lists (memo 001) */
	static const char *const ptl[] = { "conditional=ptl", "ptl_requeue=3", NULL };
	cond_case(pol->name, ptl);
}

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

static enum sb_result busy_root(struct sb_task *t)
{
	for (unsigned i = 0; i < 5; i++)
		sb_spawn(sb_task_new(t->job, lw_leaf, NULL));
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
	atomic_store(&lw_ran, 0);
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
	cr_assert_eq(atomic_load(&lw_ran), 0, "%s: no queued task ran after the stop", pol->name);
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
