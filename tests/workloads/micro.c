/*
 * micro.c - the micro workload (workloads/micro.c) on every registered policy: every pattern's
 * jobs end and reconcile, the forwarded child's re-registrations as a conditional task included.
 */
#include "run.h"
SB_POLICY_PARAMS(workloads, micro)
ParameterizedTest(struct sb_tpol *pol, workloads, micro, .timeout = 60)
{
	static const char *const patterns[] = { "chain", "pingpong", "spawn_many", "yield_many", "forward" };
	for (unsigned i = 0; i < 5; i++) {
		char pat[64];
		snprintf(pat, sizeof pat, "pattern=%s", patterns[i]);
		/* forward: chunks of work, so that the child catches up and waits as a conditional task */
		const char *const sets[] = { pat, "length=320", "clients=2", i == 4 ? "work_ns=2000" : NULL, NULL };
		struct t_out o;
		t_workload(pol->name, "micro", sets, 12, 4, &o);
		t_reconcile(patterns[i], pol->name, &o);
		cr_assert_eq(o.wl_class[i], 4);
		/* the forwarded child is spawned conditional: every job's is checked before it runs */
		if (i == 4)
			cr_assert_geq(o.core[SB_C_COND_CHECK], 4, "forward: %llu conditional checks for 4 jobs",
				      (unsigned long long)o.core[SB_C_COND_CHECK]);
	}
}
