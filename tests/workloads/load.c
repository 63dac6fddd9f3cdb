/*
 * load.c - the load workload (workloads/load.c) on every registered policy.
 */
#include "run.h"
SB_POLICY_PARAMS(workloads, load)
ParameterizedTest(struct sb_tpol *pol, workloads, load, .timeout = 60)
{
	static const char *const tx[] = { "mode=transactional", "rows=3000", "bulk_size=64", "write_ns=1000", "read_ns=100", NULL };
	static const char *const ntx[] = { "mode=nontransactional", "files=2", "blocks=3", "block_rows=10", "concurrent_blocks=4",
					   "clients=2", NULL };
	struct t_out o;
	unsigned ins = t_cls("load", "insert"), ld = t_cls("load", "load");
	t_workload(pol->name, "load", tx, 10, 2, &o);
	t_reconcile("load transactional", pol->name, &o);
	cr_assert_eq(o.wl_class[ld], 2);
	cr_assert_eq(o.wl_class[ins], 2 * 3000);
	t_workload(pol->name, "load", ntx, 11, 4, &o);
	t_reconcile("load nontransactional", pol->name, &o);
	cr_assert_eq(o.wl_class[ld], 4);
	cr_assert_eq(o.wl_class[ins], 4 * 2 * 3 * 10);
}
