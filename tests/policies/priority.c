/*
 * priority.c - behaviour of the `priority` policy (memo 004), beyond the invariants every
 * policy shares (tests/core/). The method: tests/policies/gp_common.h; what `global` and
 * `priority` share is tested in tests/policies/gp.c.
 */
#include "gp_common.h"

/* ---- priority: order (memo 004, "VIPs jump the queue") ---- */

/*
 * One worker held by a gate; then low (-1), normal (0), two high (3) and one beyond the range
 * (100, clamped to max_priority 4) queue up. They start highest first, FIFO within a level.
 */
Test(priority, higher_priority_overtakes_queued_jobs, .timeout = 30)
{
	atomic_store(&log_n, 0);
	gates_reset();
	struct sb_rt *rt = t_rt("priority", 1, NULL);
	sb_thread_attach(rt);
	struct sb_job *g = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	struct { int prio, tag; } spec[] = { { -1, 10 }, { -1, 11 }, { 0, 20 }, { -1, 12 }, { 3, 30 }, { 0, 21 },
					     { 3, 31 }, { 100, 40 } };
	enum { N = sizeof spec / sizeof spec[0] };
	struct sb_job *jobs[N];
	for (unsigned k = 0; k < N; k++)
		jobs[k] = submit(rt, (struct jspec){ .priority = spec[k].prio }, tagged, (uint64_t)spec[k].tag, 0);
	atomic_store(&gate_open[0], 1);
	wait_put(rt, g);
	for (unsigned k = 0; k < N; k++)
		wait_put(rt, jobs[k]);
	static const int want[] = { 40, 30, 31, 20, 21, 10, 11, 12 };
	cr_assert_eq(atomic_load(&log_n), N);
	for (unsigned i = 0; i < N; i++)
		cr_assert_eq(atomic_load(&log_tags[i]), want[i], "start %u is job %d, expected %d", i,
			     atomic_load(&log_tags[i]), want[i]);
	cr_assert_eq(t_policy_stat(rt, "clamped_priorities"), 1);
	sb_thread_detach();
	t_done(rt);
}

enum { YH_ROOT = 100, YH_HIGH = 200 };

static enum sb_result yh_root(struct sb_task *t)
{
	log_tag(YH_ROOT);
	sb_spawn(task_u(t->job, gate_body, 0, 1)); /* subtask 0: gate 0, logged as tag 0 */
	for (int i = 1; i <= 5; i++)
		sb_spawn(task_u(t->job, tagged, (uint64_t)i, 0));
	return SB_DONE;
}

ParameterizedTestParameters(priority, waiting_higher_job)
{
	return cr_make_param_array(struct onoff, onoff_cases, 2);
}

/*
 * One worker serves a normal job of six subtasks; while it is inside the first (a gate), a
 * high-priority job arrives. With yield_to_higher the worker puts the normal job back after
 * that subtask and the high job starts next; without, it finishes the normal job first.
 */
ParameterizedTest(struct onoff *yield, priority, waiting_higher_job, .timeout = 30)
{
	atomic_store(&log_n, 0);
	gates_reset();
	static const char *const on[] = { "yield_to_higher=true", NULL }, *const off[] = { "yield_to_higher=false", NULL };
	struct sb_rt *rt = t_rt("priority", 1, yield->on ? on : off);
	sb_thread_attach(rt);
	struct sb_job *low = submit(rt, (struct jspec){ 0 }, yh_root, 0, 0);
	wait_started(rt, 0);
	struct sb_job *high = submit(rt, (struct jspec){ .priority = 3 }, tagged, YH_HIGH, 0);
	atomic_store(&gate_open[0], 1);
	wait_put(rt, low);
	wait_put(rt, high);
	cr_assert_eq(atomic_load(&log_n), 8);
	cr_assert_eq(log_pos(YH_ROOT), 0);
	cr_assert_eq(log_pos(0), 1);
	cr_assert_eq(log_pos(YH_HIGH), yield->on ? 2 : 7, "yield_to_higher=%d: the high job started at %d",
		     yield->on, log_pos(YH_HIGH));
	for (int i = 2; i <= 5; i++)
		cr_assert_lt(log_pos(i - 1), log_pos(i), "the job's own subtasks stay FIFO");
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(t_policy_stat(rt, "yields_to_higher"), yield->on ? 1 : 0);
	sb_thread_detach();
	t_done(rt);
}

/* ---- priority: per-job concurrency (memo 004, N workers per job) ---- */

struct cc_job {
	_Atomic int inflight;
	_Atomic unsigned overlaps, ran, peak;
};

static enum sb_result cc_sub(struct sb_task *t)
{
	struct cc_job *cj = t->job->arg;
	unsigned now = (unsigned)atomic_fetch_add(&cj->inflight, 1) + 1;
	unsigned peak = atomic_load(&cj->peak);
	while (now > peak && !atomic_compare_exchange_weak(&cj->peak, &peak, now))
		;
	sb_work_ns(20000);
	atomic_fetch_add(&cj->ran, 1);
	atomic_fetch_sub(&cj->inflight, 1);
	return SB_DONE;
}

static enum sb_result cc_root(struct sb_task *t)
{
	for (unsigned i = 0; i < 40; i++)
		sb_spawn(sb_task_new(t->job, cc_sub, NULL));
	return SB_DONE;
}

struct cc_case {
	unsigned job_concurrency;
	char set[32];
	unsigned limit;
};

ParameterizedTestParameters(priority, concurrency_limit_holds)
{
	static struct cc_case cases[] = {
		{ 1, "", 1 },
		{ 0, "concurrency=1", 1 },
		{ 2, "", 2 },
	};
	return cr_make_param_array(struct cc_case, cases, 3);
}

/* Three workers, three jobs of forty subtasks at once: none of a job's subtasks overlap beyond
 * its limit, given by the job or by the policy's default. */
ParameterizedTest(struct cc_case *c, priority, concurrency_limit_holds, .timeout = 60)
{
	const char *sets[] = { c->set[0] ? c->set : NULL, NULL };
	struct sb_rt *rt = t_rt("priority", 3, sets);
	sb_thread_attach(rt);
	struct cc_job cj[3];
	struct sb_job *jobs[3];
	for (unsigned k = 0; k < 3; k++) {
		cj[k] = (struct cc_job){ 0 };
		jobs[k] = submit(rt, (struct jspec){ .concurrency = c->job_concurrency, .arg = &cj[k] }, cc_root, 0, 0);
	}
	for (unsigned k = 0; k < 3; k++) {
		wait_put(rt, jobs[k]);
		cr_assert_eq(atomic_load(&cj[k].ran), 40);
		cr_assert_leq(atomic_load(&cj[k].peak), c->limit, "job %u: %u subtasks ran at once, limit %u", k,
			      atomic_load(&cj[k].peak), c->limit);
	}
	sb_thread_detach();
	t_done(rt);
}

static _Atomic unsigned rv_arrived;

static enum sb_result rv_sub(struct sb_task *t)
{
	(void)t;
	atomic_fetch_add(&rv_arrived, 1);
	while (atomic_load(&rv_arrived) < 2)
		sched_yield();
	return SB_DONE;
}

static enum sb_result rv_root(struct sb_task *t)
{
	sb_spawn(sb_task_new(t->job, rv_sub, NULL));
	sb_spawn(sb_task_new(t->job, rv_sub, NULL));
	return SB_DONE;
}

/* Two subtasks that only finish together: the job's two workers must serve it at once (a
 * policy that let only one worker serve would hang here until the timeout). */
Test(priority, two_workers_share_one_job, .timeout = 30)
{
	atomic_store(&rv_arrived, 0);
	struct sb_rt *rt = t_rt("priority", 2, NULL);
	sb_thread_attach(rt);
	wait_put(rt, submit(rt, (struct jspec){ .concurrency = 2 }, rv_root, 0, 0));
	cr_assert_eq(atomic_load(&rv_arrived), 2);
	sb_thread_detach();
	t_done(rt);
}

static _Atomic unsigned pp_ran;

static enum sb_result pp_sub(struct sb_task *t)
{
	(void)t;
	atomic_fetch_add(&pp_ran, 1);
	return SB_DONE;
}

/*
 * Ping-pong: this thread submits a subtask the moment the previous one has run, which is when
 * the job's worker finds the queue empty and drops its handle. Every submit races with a
 * drop, thousands of times; a lost race leaves a subtask with no handle out and the loop stuck
 * (the test's timeout ends it). The wait for the previous subtask spins briefly, as before, so
 * that the submit follows the run closely, and then yields the core: on a loaded 2-core machine
 * a plain spin holds a core the worker may need, and 20,000 rounds of that could run into the
 * timeout without any race lost.
 */
Test(priority, handle_drop_races_submit, .timeout = 60)
{
	atomic_store(&pp_ran, 0);
	struct sb_rt *rt = t_rt("priority", 2, NULL);
	sb_thread_attach(rt);
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY };
	struct sb_job *j = sb_job_create(rt, &d);
	sb_job_hold(j); /* keeps the job open between subtasks */
	sb_job_submit(j, sb_task_new(j, pp_sub, NULL));
	enum { ROUNDS = 20000 };
	for (unsigned i = 1; i <= ROUNDS && !sb_rt_failure(rt); i++) {
		for (unsigned spins = 0; atomic_load(&pp_ran) < i && !sb_rt_failure(rt); spins++)
			if (spins >= 1000)
				sched_yield(); /* the worker is off its core: let it have ours */
		/* a delay that sweeps the submit across the worker's drop */
		for (volatile unsigned k = (i * 7919u) % 1024u; k; k--)
			;
		sb_spawn(sb_task_new(j, pp_sub, NULL));
		if (i % 7 == 0) /* sometimes two, so that a second handle is put out and dropped too */
			sb_spawn(sb_task_new(j, pp_sub, NULL));
	}
	sb_job_release(j);
	wait_put(rt, j);
	cr_assert_eq(atomic_load(&pp_ran), 1 + ROUNDS + ROUNDS / 7);
	sb_thread_detach();
	t_done(rt);
}

/* The queues refuse nothing: 40 jobs of 40 subtasks queued behind a busy worker all run on the
 * worker, none on the thread that spawned them. */
Test(priority, queues_refuse_nothing, .timeout = 30)
{
	gates_reset();
	struct sb_rt *rt = t_rt("priority", 1, NULL);
	sb_thread_attach(rt);
	struct sb_job *g = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	struct cc_job cj[40];
	struct sb_job *jobs[40];
	for (unsigned k = 0; k < 40; k++) {
		cj[k] = (struct cc_job){ 0 };
		jobs[k] = submit(rt, (struct jspec){ .arg = &cj[k] }, cc_root, 0, 0);
	}
	atomic_store(&gate_open[0], 1);
	wait_put(rt, g);
	for (unsigned k = 0; k < 40; k++) {
		wait_put(rt, jobs[k]);
		cr_assert_eq(atomic_load(&cj[k].ran), 40);
	}
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(core_count(rt, SB_C_RUN, false), core_count(rt, SB_C_RUN, true),
		     "every subtask ran on the worker, none on a submitter");
	sb_thread_detach();
	t_done(rt);
}

/* ---- priority: per-job states come back ---- */

static enum sb_result rs_sub(struct sb_task *t)
{
	atomic_fetch_add(&((struct cc_job *)t->job->arg)->ran, 1);
	return SB_DONE;
}

static enum sb_result rs_root(struct sb_task *t)
{
	for (uint64_t i = 0; i < t->u[0]; i++)
		sb_spawn(sb_task_new(t->job, rs_sub, NULL));
	return SB_DONE;
}

/* 120 jobs one after another, every tenth with 1,300 subtasks (its queue spans three segments),
 * the rest with 3: every subtask runs once, in the job it was spawned into, and the states of
 * ended jobs are reused (a state made per job would make 120). */
Test(priority, ended_jobs_states_are_reused, .timeout = 60)
{
	struct sb_rt *rt = t_rt("priority", 2, NULL);
	sb_thread_attach(rt);
	for (unsigned k = 0; k < 120; k++) {
		struct cc_job cj = { 0 };
		unsigned n = k % 10 == 3 ? 1300 : 3;
		wait_put(rt, submit(rt, (struct jspec){ .arg = &cj }, rs_root, n, 0));
		cr_assert_eq(atomic_load(&cj.ran), n, "job %u: %u of %u subtasks ran", k, atomic_load(&cj.ran), n);
	}
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(t_policy_stat(rt, "jobs"), 120);
	cr_assert_leq(t_policy_stat(rt, "states_made"), 8, "%.0f states made for 120 jobs, one open at a time",
		      t_policy_stat(rt, "states_made"));
	sb_thread_detach();
	t_done(rt);
}

/* ---- priority: cancellation by handle (memo 004) ---- */

struct cn_job {
	_Atomic unsigned teardowns, ran;
	_Atomic int status;
};

static void cn_done(struct sb_job *j)
{
	struct cn_job *cj = j->arg;
	atomic_store(&cj->status, (int)sb_job_status(j));
	atomic_fetch_add(&cj->teardowns, 1);
}

static enum sb_result cn_body(struct sb_task *t)
{
	atomic_fetch_add(&((struct cn_job *)t->job->arg)->ran, 1);
	return SB_DONE;
}

/*
 * One worker held by gate 0. A low-priority job (-3) with six queued subtasks is cancelled
 * while a high-priority job (3, a second gate) waits. When gate 0 opens, the cancel handle
 * hands the six subtasks to the core, which drops them, and the job's in-place teardown runs
 * when the worker moves on, before the high job's body starts: cancellation does not wait for
 * the job's own handle to come up behind higher priorities. That handle is skipped later.
 */
Test(priority, cancelled_job_is_dropped_promptly, .timeout = 30)
{
	gates_reset();
	struct sb_rt *rt = t_rt("priority", 1, NULL);
	sb_thread_attach(rt);
	struct sb_job *g = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	struct cn_job cj = { 0 };
	struct sb_job *c = submit(rt, (struct jspec){ .priority = -3, .teardown = SB_TEARDOWN_INPLACE, .done = cn_done, .arg = &cj },
				  cn_body, 0, 0);
	for (unsigned i = 0; i < 5; i++)
		sb_spawn(sb_task_new(c, cn_body, NULL)); /* more subtasks, from this request thread */
	struct sb_job *h = submit_gate(rt, (struct jspec){ .priority = 3, .teardown = SB_TEARDOWN_INPLACE }, 1, -1);
	sb_job_cancel(c);
	atomic_store(&gate_open[0], 1);
	wait_started(rt, 1);
	cr_assert(sb_job_done(c), "the cancelled job finished before the high-priority job's body started");
	cr_assert_eq(atomic_load(&cj.teardowns), 1);
	cr_assert_eq(atomic_load(&cj.status), SB_JOB_CANCELLED, "the callback saw status %d", atomic_load(&cj.status));
	cr_assert_eq(atomic_load(&cj.ran), 0, "%u subtasks of the cancelled job ran", atomic_load(&cj.ran));
	atomic_store(&gate_open[1], 1);
	wait_put(rt, h);
	wait_put(rt, g);
	cr_assert_eq(sb_job_status(c), SB_JOB_CANCELLED);
	sb_job_put(c);
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(core_count(rt, SB_C_DROPPED, false), 6);
	cr_assert_eq(t_policy_stat(rt, "cancel_handles"), 1);
	cr_assert_geq(t_policy_stat(rt, "stale_handles"), 1, "the job's own handle was skipped when it surfaced");
	cr_assert_eq(atomic_load(&cj.teardowns), 1);
	sb_thread_detach();
	t_done(rt);
}

static enum sb_result cn_root(struct sb_task *t)
{
	atomic_fetch_add(&((struct cn_job *)t->job->arg)->ran, 1);
	for (unsigned i = 0; i < 200; i++)
		sb_spawn(sb_task_new(t->job, cn_body, NULL));
	sb_job_cancel(t->job); /* the job cancels itself with its subtasks queued */
	for (unsigned i = 0; i < 20; i++)
		sb_spawn(sb_task_new(t->job, cn_body, NULL)); /* submitted after the cancel: never run */
	return SB_DONE;
}

/* A job cancelled while it runs, with a teardown task: every subtask either ran or was dropped,
 * none submitted after the cancel ran (check mode fails the run otherwise), the teardown ran
 * once and saw the job cancelled. */
Test(priority, cancel_in_flight_tears_down_once, .timeout = 30)
{
	struct sb_rt *rt = t_rt("priority", 3, NULL);
	sb_thread_attach(rt);
	struct cn_job cj = { 0 };
	struct sb_job *c = submit(rt, (struct jspec){ .teardown = SB_TEARDOWN_TASK, .done = cn_done, .arg = &cj }, cn_root, 0, 0);
	cr_assert(sb_job_wait(c), "job finished (runtime failure: %s)", sb_rt_failure(rt) ? sb_rt_failure(rt) : "none");
	cr_assert_eq(atomic_load(&cj.teardowns), 1);
	cr_assert_eq(atomic_load(&cj.status), SB_JOB_CANCELLED);
	sb_rt_stop(rt, SB_STOP_DRAIN);
	uint64_t dropped = core_count(rt, SB_C_DROPPED, false);
	cr_assert_eq(atomic_load(&cj.ran) + dropped, 1 + 200 + 20, "%u ran, %llu dropped", atomic_load(&cj.ran),
		     (unsigned long long)dropped);
	cr_assert_geq(dropped, 20);
	sb_job_put(c);
	sb_thread_detach();
	t_done(rt);
}
