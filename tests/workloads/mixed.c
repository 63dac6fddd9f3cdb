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
