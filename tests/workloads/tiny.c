/*
 * tiny.c - the tiny workload (workloads/tiny.c) on every registered policy: open-loop arrival times.
 */
#include "run.h"
SB_POLICY_PARAMS(workloads, tiny)
ParameterizedTest(struct sb_tpol *pol, workloads, tiny, .timeout = 60)
{
	static const char *const closed[] = { "producers=3", "window=4", NULL };
	static const char *const open[] = { "producers=3", "window=8", "rate=60000", "dist=exp", NULL };
	struct t_out o;
	t_workload(pol->name, "tiny", closed, 8, 600, &o);
	t_reconcile("tiny closed", pol->name, &o);
	cr_assert_eq(o.wl_class[0], 600);
	t_workload(pol->name, "tiny", open, 9, 600, &o);
	t_reconcile("tiny open", pol->name, &o);
	cr_assert_eq(o.wl_class[0], 600);
	cr_assert_eq(o.arrived_early[0], 600, "open loop: every job carries its intended arrival");
}
