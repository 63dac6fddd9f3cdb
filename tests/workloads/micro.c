/*
 * micro.c - the micro workload (workloads/micro.c) on every registered policy.
 */
#include "run.h"
SB_POLICY_PARAMS(workloads, micro)
ParameterizedTest(struct sb_tpol *pol, workloads, micro, .timeout = 60)
{
	static const char *const patterns[] = { "chain", "pingpong", "spawn_many", "yield_many" };
	for (unsigned i = 0; i < 4; i++) {
		char pat[64];
		snprintf(pat, sizeof pat, "pattern=%s", patterns[i]);
		const char *const sets[] = { pat, "length=320", "clients=2", NULL };
		struct t_out o;
		t_workload(pol->name, "micro", sets, 12, 4, &o);
		t_reconcile(patterns[i], pol->name, &o);
		cr_assert_eq(o.wl_class[i], 4);
	}
}
