/*
 * wake.c - the wake workload (workloads/wake.c) on every registered policy.
 */
#include "run.h"
SB_POLICY_PARAMS(workloads, wake)
ParameterizedTest(struct sb_tpol *pol, workloads, wake, .timeout = 60)
{
	static const char *const plain[] = { "clients=2", "gap_us=1500", "from_task_pct=50", NULL };
	static const char *const urgent[] = { "clients=2", "gap_us=1000", "from_task_pct=100", "urgent=true", NULL };
	struct t_out o;
	t_workload(pol->name, "wake", plain, 6, 12, &o);
	t_reconcile("wake", pol->name, &o);
	cr_assert_eq(o.wl_class[t_cls("wake", "from_request")], 12);
	cr_assert_leq(o.wl_class[t_cls("wake", "from_task")], 12);
	t_workload(pol->name, "wake", urgent, 7, 6, &o);
	t_reconcile("wake urgent", pol->name, &o);
	cr_assert_eq(o.wl_class[t_cls("wake", "from_task")], 6, "every job relays one");
}
