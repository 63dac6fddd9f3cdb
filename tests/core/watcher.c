/*
 * watcher.c - conditional tasks (core/watcher.c, and a policy's own conditional handling where
 * it has one) on every registered policy: a conditional task runs once, after its check turns
 * true.
 */
#include "../common.h"
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
	t_sleep_ms(20);
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
