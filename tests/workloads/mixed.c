/*
 * mixed.c - the mixed workload (workloads/mixed.c) on every registered policy.
 */
#include "run.h"
SB_POLICY_PARAMS(workloads, mixed)
ParameterizedTest(struct sb_tpol *pol, workloads, mixed, .timeout = 60)
{
	static const char *const sets[] = { "light_clients=3", "heavy_clients=1", "partitions=6", "process_ns=20000",
					    "light_think_us=0", "heavy_share=80", NULL };
	struct t_out o;
	t_workload(pol->name, "mixed", sets, 3, 40, &o);
	t_reconcile("mixed", pol->name, &o);
	/* 40 jobs over 4 clients: the heavy client's 10, the light ones' 30 */
	cr_assert_eq(o.wl_class[t_cls("mixed", "heavy")], 10);
	cr_assert_eq(o.wl_class[t_cls("mixed", "light")], 30);
}

/*
 * Cancellation by handle: with heavy_cancel=100 every heavy job is its client's to cancel, and
 * with cancel_after_us=0 the cancel comes right after the submit, before most of the job ran.
 * Every heavy job is in class heavy_cancelled, the cancels end jobs (cancelled status, tasks
 * dropped unrun) and the accounting holds with the dropped tasks counted. Under serial the job
 * runs on the client's own thread inside the submit, before the cancel: nothing to cancel.
 */
SB_POLICY_PARAMS(workloads, mixed_cancel)
ParameterizedTest(struct sb_tpol *pol, workloads, mixed_cancel, .timeout = 60)
{
	static const char *const sets[] = { "light_clients=1", "heavy_clients=2", "partitions=8", "process_ns=50000",
					    "light_think_us=0", "heavy_share=100", "heavy_cancel=100",
					    "cancel_after_us=0", NULL };
	struct t_out o;
	t_workload(pol->name, "mixed", sets, 5, 40, &o);
	uint64_t heavy = o.wl_class[t_cls("mixed", "heavy_cancelled")];
	cr_assert_eq(o.wl_class[t_cls("mixed", "heavy")], 0, "heavy_cancel=100: no heavy job left uncancelled");
	cr_assert_gt(heavy, 0);
	cr_assert_leq(o.wc.jobs_failed, heavy, "only the cancelled class ends cancelled");
	if (strcmp(pol->name, "serial")) {
		cr_assert_gt(o.wc.jobs_failed, 0, "%s: no cancel ended a job", pol->name);
		cr_assert_gt(o.core[SB_C_DROPPED], 0, "%s: no task of a cancelled job was dropped", pol->name);
	}
	o.wc.jobs_failed = 0; /* the rest of the accounting, with the cancelled ones allowed */
	t_reconcile("mixed with cancels", pol->name, &o);
}

/*
 * Partial processing (memo 002, DuckDB's scheduler_process_partial): with heavy_slice_us=20 each
 * 100 us heavy task yields after a slice and is queued again with the rest. Every policy runs
 * each task to its end exactly once (runs - yields == tasks created, t_reconcile), and the
 * slices show as yields: at least one per heavy task, since every one is longer than a slice.
 */
SB_POLICY_PARAMS(workloads, mixed_partial)
ParameterizedTest(struct sb_tpol *pol, workloads, mixed_partial, .timeout = 60)
{
	static const char *const sets[] = { "light_clients=2", "heavy_clients=1", "partitions=4", "process_ns=100000",
					    "dist=fixed", "light_think_us=0", "heavy_share=100", "heavy_slice_us=20", NULL };
	struct t_out o;
	t_workload(pol->name, "mixed", sets, 3, 30, &o);
	t_reconcile("mixed with partial processing", pol->name, &o);
	uint64_t heavy = o.wl_class[t_cls("mixed", "heavy")];
	cr_assert_gt(heavy, 0);
	cr_assert_geq(o.core[SB_C_YIELD], heavy * 4, "%s: %llu yields for %llu heavy jobs of 4 tasks of 100 us",
		      pol->name, (unsigned long long)o.core[SB_C_YIELD], (unsigned long long)heavy);
}
