/*
 * distribution.c - the `distribution` policy (memo 001): the distribution mode loses no task
 * while workers sleep (a 60 s suspend timeout against a 2 s stall watchdog) and never has two
 * distributors; the dedicated distributor only runs what it took itself.
 */
#include <pthread.h>

#include "../common.h"
/* ---- distribution: no task lost while workers sleep, one distributor at most ---- */

#define DX_CLIENTS 2
#define DX_JOBS 40
#define DX_MID 6
#define DX_LEAF 5

static _Atomic unsigned dx_ran;

static enum sb_result dx_leaf(struct sb_task *t)
{
	(void)t;
	sb_work_ns(2000);
	atomic_fetch_add(&dx_ran, 1);
	return SB_DONE;
}

static enum sb_result dx_mid(struct sb_task *t)
{
	for (unsigned i = 0; i < DX_LEAF; i++) {
		sb_spawn(sb_task_new(t->job, dx_leaf, NULL));
		sb_work_ns(1000); /* spawn over time, so that an idle worker has something to hand on */
	}
	atomic_fetch_add(&dx_ran, 1);
	return SB_DONE;
}

static enum sb_result dx_root(struct sb_task *t)
{
	for (unsigned i = 0; i < DX_MID; i++)
		sb_spawn(sb_task_new(t->job, dx_mid, NULL));
	atomic_fetch_add(&dx_ran, 1);
	return SB_DONE;
}

struct dx_client {
	struct sb_rt *rt;
	unsigned failed;
};

static void *dx_client_main(void *p)
{
	struct dx_client *c = p;
	sb_thread_attach(c->rt);
	for (unsigned k = 0; k < DX_JOBS; k++) {
		t_sleep_ms(k % 3); /* let workers deactivate in between, sometimes */
		struct sb_job_desc d = { .work_level = SB_WL_JOIN, .teardown = SB_TEARDOWN_TASK };
		struct sb_job *j = sb_job_create(c->rt, &d);
		sb_job_submit(j, sb_task_new(j, dx_root, NULL));
		c->failed += !sb_job_wait(j);
		sb_job_put(j);
	}
	sb_thread_detach();
	return NULL;
}

ParameterizedTestParameters(family, distribution_loses_nothing)
{
	static struct t_case cases[] = {
		{ "distribution", { "distributor=mode", "use_preferred_worker_for_current_thread=true" } },
		{ "distribution", { "distributor=mode", "use_preferred_worker_for_current_thread=false" } },
		/* a slow busy loop (memo 001's mm_pause): the distributor looks less often, loses nothing */
		{ "distribution", { "distributor=mode", "busy_pause=10000" } },
		{ "distribution", { "distributor=dedicated", "use_preferred_worker_for_current_thread=true" } },
		{ "distribution", { "distributor=dedicated", "use_preferred_worker_for_current_thread=false" } },
	};
	return cr_make_param_array(struct t_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct t_case *c, family, distribution_loses_nothing, .timeout = 90)
{
	/* Workers deactivate after 5 empty rounds and would sleep a minute unless woken; a task
	 * queued for 2 s while a worker rests fails the run. With preferred workers a job grows on
	 * one worker and the distributor hands its tasks to sleeping ones; with round robin per
	 * call, tasks land on sleeping workers directly and wake them. */
	static const char *const sets[] = { "worker_try_count=5", "worker_suspend_timeout=60000000", "stall_limit=2000",
					    NULL };
	atomic_store(&dx_ran, 0);
	bool dedicated = strstr(c->sets[0], "dedicated") != NULL;
	struct sb_rt *rt = case_rt(c, 4, sets);
	pthread_t th[DX_CLIENTS];
	struct dx_client cl[DX_CLIENTS];
	for (unsigned i = 0; i < DX_CLIENTS; i++) {
		cl[i] = (struct dx_client){ .rt = rt };
		pthread_create(&th[i], NULL, dx_client_main, &cl[i]);
	}
	for (unsigned i = 0; i < DX_CLIENTS; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(cl[i].failed, 0, "%s %s: %u jobs did not finish: %s", c->sets[0], c->sets[1], cl[i].failed,
			     sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	}
	cr_assert_eq(atomic_load(&dx_ran), DX_CLIENTS * DX_JOBS * (1 + DX_MID + DX_MID * DX_LEAF));
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_null(sb_rt_failure(rt), "%s", sb_rt_failure(rt));
	cr_assert_eq(stat_of(rt, "distributor_overlaps"), 0, "%s: two workers were in the mode at once", c->sets[0]);
	uint64_t enter = stat_of(rt, "mode_entries"), leave = stat_of(rt, "mode_exits");
	if (dedicated) {
		/* worker 0 never enters or leaves, and placement never gives it a task: it ran exactly
		 * the tasks it took from others and kept (teardown tasks are counted apart) */
		cr_assert_eq(enter, 0);
		cr_assert_eq(leave, 0);
		uint64_t w0[SB_NR_COUNTERS];
		sb_rt_worker_counters(rt, 0, w0);
		cr_assert_eq(w0[SB_C_RUN] + w0[SB_C_TEARDOWN], stat_of(rt, "distributor_ran"),
			     "the dedicated distributor ran %llu tasks and %llu teardowns but kept only %llu",
			     (unsigned long long)w0[SB_C_RUN], (unsigned long long)w0[SB_C_TEARDOWN],
			     (unsigned long long)stat_of(rt, "distributor_ran"));
	} else {
		/* four workers and two clients: some worker runs dry while another works */
		cr_assert_gt(enter, 0, "%s: the mode was never entered", c->sets[1]);
		cr_assert(leave == enter || leave + 1 == enter, "%llu entries but %llu exits", (unsigned long long)enter,
			  (unsigned long long)leave);
		/* the two race exits, (i-3) and (ii-2), are exits: never more of them than exits */
		uint64_t i3 = stat_of(rt, "exits_none_active"), ii2 = stat_of(rt, "distributor_ran");
		cr_assert_leq(i3 + ii2, leave, "%llu (i-3) and %llu (ii-2) exits of %llu", (unsigned long long)i3,
			      (unsigned long long)ii2, (unsigned long long)leave);
		/* every job ends with the workers running dry one after the other: the last
		 * distributor leaves because nobody else is active */
		cr_assert_gt(i3, 0, "no (i-3) exit counted");
	}
	sb_rt_destroy(rt);
}

/* ---- distribution: the workers fall asleep after sparse jobs, and the busy loop yields ---- */

#define DQ_EPISODES 40

static enum sb_result dq_work(struct sb_task *t)
{
	(void)t;
	sb_work_ns(2000000); /* long enough that the worker woken by the wake chain finds it busy */
	return SB_DONE;
}

/* DQ_EPISODES times: every worker asleep, one job of one task, every worker asleep again. */
static void dq_episodes(struct sb_rt *rt)
{
	struct sb_job_desc d = { .work_level = SB_WL_JOIN, .teardown = SB_TEARDOWN_TASK };
	sb_thread_attach(rt);
	for (unsigned k = 0; k < DQ_EPISODES; k++) {
		t_wait_all_asleep(rt);
		sb_job_put(t_run_job(rt, &d, dq_work, NULL));
	}
	sb_thread_detach();
	t_wait_all_asleep(rt);
}

Test(family, distribution_falls_asleep, .timeout = 120)
{
	/* The task's worker wakes the other as the next searcher; that one finds nothing, enters
	 * the mode and waits in (i-2) until the task's worker has run out of empty rounds and
	 * announced its deactivation, then leaves at (i-3) and deactivates too: one (i-3) exit per
	 * job at most (the other exits are (ii-2), the distributor taking the job's teardown task). A worker whose suspend() re-check could enter the mode (the announcing one,
	 * the moment the distributor left) traded the mode with the other for thousands of
	 * entries a second, until a race happened to put both to sleep (1,500 to 3,500 (i-3) exits
	 * here, in every one of 10 runs with that entry planted back). The plain spin: the
	 * distributor that sees the announcement first, which the trade needs, is the fastest. */
	static const char *const sets[] = { "worker_suspend_timeout=60000000", "busy_yield=false", NULL };
	struct sb_rt *rt = t_rt("distribution", 2, sets);
	dq_episodes(rt);
	uint64_t alone = stat_of(rt, "exits_none_active");
	/* + 1: the workers' start, the same fall into sleep without a job */
	cr_assert_leq(alone, DQ_EPISODES + 1, "%llu (i-3) exits for %d one-task jobs: the last two awake workers "
					      "traded the mode instead of falling asleep",
		      (unsigned long long)alone, DQ_EPISODES);
	cr_assert_eq(stat_of(rt, "mode_entries"), stat_of(rt, "mode_exits"), "every entry was left");
	t_done(rt);
}

ParameterizedTestParameters(family, distribution_busy_loop_yields)
{
	static struct t_case cases[] = {
		{ "distribution", { "busy_yield=true" } },
		{ "distribution", { "busy_yield=false" } },
	};
	return cr_make_param_array(struct t_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct t_case *c, family, distribution_busy_loop_yields, .timeout = 120)
{
	/* Each (i-2) round ends in a yield with busy_yield and never without; nothing else in
	 * this policy asks the core for one (task_polling_wait is 0), so the workers' yields are
	 * exactly the busy rounds or none. */
	static const char *const sets[] = { "worker_try_count=50", "worker_suspend_timeout=60000000", NULL };
	struct sb_rt *rt = case_rt(c, 2, sets);
	dq_episodes(rt);
	uint64_t busy = stat_of(rt, "busy_rounds"), yields = 0;
	for (unsigned w = 0; w < 2; w++) {
		uint64_t cnt[SB_NR_COUNTERS];
		sb_rt_worker_counters(rt, w, cnt);
		yields += cnt[SB_C_IDLE_YIELD];
	}
	cr_assert_gt(busy, 0, "the mode's busy loop never ran");
	bool yield = strcmp(c->sets[0], "busy_yield=true") == 0;
	cr_assert_eq(yields, yield ? busy : 0, "%s: %llu yields for %llu busy rounds", c->sets[0],
		     (unsigned long long)yields, (unsigned long long)busy);
	t_done(rt);
}
