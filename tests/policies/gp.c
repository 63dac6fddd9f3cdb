/*
 * gp.c - behaviour the `global` (memo 002/003) and `priority` (memo 004) policies share, beyond
 * the invariants every policy shares (tests/core/): each test runs on both. The two policies
 * share no source file, so these tests have a file of their own, named for what they share,
 * beside global.c and priority.c. The method: tests/policies/gp_common.h.
 */
#include "gp_common.h"

/* ---- both policies: "not finished" and "blocked" task results (memo 002) ---- */

enum { Y_TAG = 1, A_TAG = 2, B_TAG = 3 };

static enum sb_result yielder(struct sb_task *t)
{
	log_tag(Y_TAG);
	if (t->u[1]--)
		return SB_YIELD;
	return SB_DONE;
}

static enum sb_result yield_root(struct sb_task *t)
{
	sb_spawn(task_u(t->job, yielder, 0, 3)); /* yields three times */
	sb_spawn(task_u(t->job, tagged, A_TAG, 0));
	sb_spawn(task_u(t->job, tagged, B_TAG, 0));
	return SB_DONE;
}

ParameterizedTestParameters(gp, yield_requeues_behind_fresh_work)
{
	return cr_make_param_array(struct gp_case, both_cases, sizeof both_cases / sizeof both_cases[0]);
}

/* SB_YIELD re-enqueues at once, behind what is already queued: with one worker the order is
 * Y A B Y Y Y. A policy that put it back in front would give Y Y Y Y A B. */
ParameterizedTest(struct gp_case *c, gp, yield_requeues_behind_fresh_work, .timeout = 30)
{
	atomic_store(&log_n, 0);
	const char *buf[4];
	struct sb_rt *rt = t_rt(c->policy, 1, case_sets(c, buf));
	sb_thread_attach(rt);
	wait_put(rt, submit(rt, (struct jspec){ 0 }, yield_root, 0, 0));
	static const int want[] = { Y_TAG, A_TAG, B_TAG, Y_TAG, Y_TAG, Y_TAG };
	cr_assert_eq(atomic_load(&log_n), 6, "%s: %u task starts", c->policy, atomic_load(&log_n));
	for (unsigned i = 0; i < 6; i++)
		cr_assert_eq(atomic_load(&log_tags[i]), want[i], "%s %s: start %u is tag %d, expected %d", c->policy,
			     c->sets[0], i, atomic_load(&log_tags[i]), want[i]);
	cr_assert_eq(core_count(rt, SB_C_YIELD, false), 3);
	sb_thread_detach();
	t_done(rt);
}

static _Atomic(struct sb_task *) parked_task;
static _Atomic unsigned parked_runs, other_runs;

static enum sb_result parker(struct sb_task *t)
{
	atomic_fetch_add(&parked_runs, 1);
	if (!t->u[1]) {
		t->u[1] = 1;
		atomic_store(&parked_task, t); /* published before returning: a resume may come at once */
		return SB_BLOCKED;
	}
	return SB_DONE;
}

static enum sb_result other(struct sb_task *t)
{
	(void)t;
	atomic_fetch_add(&other_runs, 1);
	return SB_DONE;
}

static enum sb_result park_root(struct sb_task *t)
{
	sb_spawn(task_u(t->job, parker, 0, 0));
	for (unsigned i = 0; i < 4; i++)
		sb_spawn(task_u(t->job, other, 0, 0));
	return SB_DONE;
}

ParameterizedTestParameters(gp, blocked_task_runs_again_after_resume)
{
	return cr_make_param_array(struct gp_case, both_cases, sizeof both_cases / sizeof both_cases[0]);
}

/* SB_BLOCKED parks a task outside every queue; sb_task_resume puts it back. The job must not
 * finish before the resumed run, and the task must run exactly twice. */
ParameterizedTest(struct gp_case *c, gp, blocked_task_runs_again_after_resume, .timeout = 30)
{
	atomic_store(&parked_task, NULL);
	atomic_store(&parked_runs, 0);
	atomic_store(&other_runs, 0);
	const char *buf[4];
	struct sb_rt *rt = t_rt(c->policy, 2, case_sets(c, buf));
	sb_thread_attach(rt);
	struct sb_job *j = submit(rt, (struct jspec){ 0 }, park_root, 0, 0);
	struct sb_task *p;
	while (!(p = atomic_load(&parked_task)) && !sb_rt_failure(rt))
		sched_yield();
	cr_assert_not_null(p, "%s: the task parked (runtime failure: %s)", c->policy,
			   sb_rt_failure(rt) ? sb_rt_failure(rt) : "none");
	cr_assert(!sb_job_done(j), "%s: a job with a parked task is not finished", c->policy);
	sb_task_resume(p);
	wait_put(rt, j);
	cr_assert_eq(atomic_load(&parked_runs), 2, "%s: the parked task ran %u times", c->policy, atomic_load(&parked_runs));
	cr_assert_eq(atomic_load(&other_runs), 4);
	cr_assert_eq(core_count(rt, SB_C_BLOCKED, false), 1);
	sb_thread_detach();
	t_done(rt);
}

static _Atomic int wf_flag;
static _Atomic unsigned wf_polls;

/* Yields until a task of another job sets the flag (a busy wait in task form, like
 * jogasaki's load task); gives up after 1000 polls so that a starving policy fails the test
 * instead of hanging it. */
static enum sb_result wf_poller(struct sb_task *t)
{
	(void)t;
	if (!atomic_load(&wf_flag) && atomic_fetch_add(&wf_polls, 1) < 1000)
		return SB_YIELD;
	return SB_DONE;
}

static enum sb_result wf_setter(struct sb_task *t)
{
	(void)t;
	atomic_store(&wf_flag, 1);
	return SB_DONE;
}

ParameterizedTestParameters(gp, yielding_task_lets_other_jobs_run)
{
	return cr_make_param_array(struct gp_case, both_cases, sizeof both_cases / sizeof both_cases[0]);
}

/* One worker; a job whose task polls (yields) for a flag that only a second, later job of the
 * same priority sets. The yield must give the second job a turn: under `priority` the worker
 * serving the polling job puts it back behind the other. */
ParameterizedTest(struct gp_case *c, gp, yielding_task_lets_other_jobs_run, .timeout = 30)
{
	atomic_store(&wf_flag, 0);
	atomic_store(&wf_polls, 0);
	gates_reset();
	const char *buf[4];
	struct sb_rt *rt = t_rt(c->policy, 1, case_sets(c, buf));
	sb_thread_attach(rt);
	struct sb_job *g = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	struct sb_job *poll = submit(rt, (struct jspec){ 0 }, wf_poller, 0, 0);
	struct sb_job *set = submit(rt, (struct jspec){ 0 }, wf_setter, 0, 0);
	atomic_store(&gate_open[0], 1);
	wait_put(rt, g);
	wait_put(rt, poll);
	wait_put(rt, set);
	cr_assert_lt(atomic_load(&wf_polls), 1000, "%s %s: the polling task yielded %u times without the other job running",
		     c->policy, c->sets[0], atomic_load(&wf_polls));
	sb_thread_detach();
	t_done(rt);
}

/* ---- parameters: bad values get one line naming the parameter and what is valid ---- */

Test(gp, bad_parameters_are_refused_with_the_valid_range)
{
	struct {
		const char *policy, *name, *value, *mention;
		int err;
	} bad[] = {
		{ "global", "batch", "0", "1..1024", -ERANGE },
		{ "global", "producer_tokens", "maybe", "producer_tokens", -EINVAL },
		{ "global", "producer_slots", "-1", "1..4096", -ERANGE },
		{ "priority", "max_priority", "99", "0..31", -ERANGE },
		{ "priority", "concurrency", "x", "concurrency", -EINVAL },
		{ "priority", "no_such", "1", "max_priority", -ENOENT },
	};
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const struct sb_policy_ops *ops = sb_policy_find(bad[i].policy);
		cr_assert_not_null(ops);
		void *pp = calloc(1, ops->params_size);
		sb_param_defaults(ops->params, pp);
		char err[256] = "";
		int r = sb_param_set(ops->params, pp, bad[i].name, bad[i].value, err, sizeof err);
		cr_assert_eq(r, bad[i].err, "%s %s=%s: returned %d", bad[i].policy, bad[i].name, bad[i].value, r);
		cr_assert(strstr(err, bad[i].mention), "%s %s=%s: message '%s' mentions '%s'", bad[i].policy, bad[i].name,
			  bad[i].value, err, bad[i].mention);
		cr_assert_null(strchr(err, '\n'), "one line");
		free(pp);
	}
}
