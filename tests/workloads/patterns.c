/*
 * patterns.c - the patterns workload (workloads/patterns.c) on every registered policy: verified task
 * graphs, and a planted wrong dependence is caught.
 */
#include "run.h"
#include "../../workloads/taskgraph.h"
SB_POLICY_PARAMS(workloads, patterns)
ParameterizedTest(struct sb_tpol *pol, workloads, patterns, .timeout = 60)
{
	/* every pattern, two graphs per job: each task checked its inputs, each job's outputs were
	 * checked after it, and the launcher plus every task of both graphs ran */
	for (unsigned p = 0; tg_pattern_names[p]; p++) {
		char pat[64];
		snprintf(pat, sizeof pat, "pattern=%s", tg_pattern_names[p]);
		const char *const sets[] = { pat, "width=5", "steps=12", "graphs=2", "iterations=8", "radix=4", NULL };
		struct t_out o;
		t_workload(pol->name, "patterns", sets, 13 + p, 3, &o);
		t_reconcile(tg_pattern_names[p], pol->name, &o);
		cr_assert_eq(o.verified, 3, "%s under %s: %llu of 3 executions verified", tg_pattern_names[p], pol->name,
			     (unsigned long long)o.verified);
		cr_assert_eq(o.wl_class[p], 3);
		/* only tree leaves columns out, and no pattern's task count depends on the seed */
		struct tg_graph g;
		char err[128];
		struct tg_shape sh = { .pattern = (int)p, .width = 5, .steps = 12, .radix = 4 };
		cr_assert_eq(tg_build(&g, &sh, err, sizeof err), 0, "%s", err);
		cr_assert_eq(o.wc.tasks_created, 3 * (1 + 2 * (uint64_t)g.nactive), "%s under %s: %llu tasks, expected %llu",
			     tg_pattern_names[p], pol->name, (unsigned long long)o.wc.tasks_created,
			     (unsigned long long)(3 * (1 + 2 * (uint64_t)g.nactive)));
		tg_free(&g);
	}
	/* the other kernels */
	static const char *const mem[] = { "kernel=memory_bound", "scratch_bytes=512", "iterations=4", "steps=8", NULL };
	static const char *const empty[] = { "kernel=empty", "pattern=nearest", "radix=3", "steps=30", NULL };
	struct t_out o;
	t_workload(pol->name, "patterns", mem, 40, 2, &o);
	t_reconcile("patterns memory_bound", pol->name, &o);
	cr_assert_eq(o.verified, 2);
	t_workload(pol->name, "patterns", empty, 41, 2, &o);
	t_reconcile("patterns empty", pol->name, &o);
	cr_assert_eq(o.verified, 2);
}

/* The checks are not vacuous: a planted bug in one task fails the run and names the task. */
SB_POLICY_PARAMS(workloads, patterns_fault)
ParameterizedTest(struct sb_tpol *pol, workloads, patterns_fault, .timeout = 60)
{
	/* width 5, 12 steps: the fault hits graph 0's task (step 6, column 2), whose stencil
	 * consumers are columns 1..3 of step 7 */
	static const char *const wrong[] = { "fault=wrong_output", "width=5", "steps=12", "iterations=8", NULL };
	static const char *const lost[] = { "fault=lost_task", "width=5", "steps=12", "iterations=8", NULL };
	struct t_out o;
	t_workload(pol->name, "patterns", wrong, 42, 2, &o);
	cr_assert_geq(o.wc.results_wrong, 2, "%s: a wrong output went unnoticed", pol->name);
	cr_assert(strstr(o.wrong, "(step 7, column") && strstr(o.wrong, "its input is not what") &&
			  strstr(o.wrong, "(step 6, column 2)"),
		  "%s: the message names the consumer and the producer: %s", pol->name, o.wrong);
	cr_assert_gt(o.wc.jobs_failed, 0, "%s: the consumer failed its job", pol->name);
	cr_assert_eq(o.verified, 0);

	t_workload(pol->name, "patterns", lost, 43, 2, &o);
	cr_assert_eq(o.wc.results_wrong, 2, "%s: a task that never enabled its consumers went unnoticed", pol->name);
	cr_assert(strstr(o.wrong, "(step 7, column") && strstr(o.wrong, "did not run"),
		  "%s: the message names the first consumer left out: %s", pol->name, o.wrong);
	cr_assert_eq(o.wc.jobs_failed, 0, "%s: no task failed; the job just ended early", pol->name);
	cr_assert_eq(o.verified, 0);
}
