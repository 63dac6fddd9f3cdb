/*
 * oltp.c - the oltp workload (workloads/oltp.c) on every registered policy: a small bounded run
 * reconciles with the core, and its class mix is what it promises.
 */
#include "run.h"
/* ---- every workload, every policy ---- */

static const char *const oltp_small[] = {
	"clients=3",	 "statements=2",	"statements_max=4", "epoch_us=1000",  "ltx_ratio=0.5",
	"mix_join=10",	 "mix_aggregate=10",	"mix_scan=10",	    "scan_ns=150000", "scan_yield_us=40",
	"join_ns=10000", "aggregate_ns=10000", "multi_ns=10000",   "filter_ns=5000", NULL,
};

SB_POLICY_PARAMS(workloads, oltp)
ParameterizedTest(struct sb_tpol *pol, workloads, oltp, .timeout = 60)
{
	const char *wl = "oltp";
	struct t_out o;
	/* closed loop, commits answered on durability */
	t_workload(pol->name, wl, oltp_small, 1, 12, &o);
	t_reconcile("oltp stored", pol->name, &o);
	unsigned begin = t_cls(wl, "begin"), commit = t_cls(wl, "commit"), dur = t_cls(wl, "durability");
	cr_assert_eq(o.wl_class[begin], 12, "one begin per transaction");
	cr_assert_eq(o.wl_class[commit], 12, "one commit per transaction");
	uint64_t statements = 0;
	for (unsigned c = begin + 1; c < commit; c++)
		statements += o.wl_class[c];
	cr_assert(statements >= 12 * 2 && statements <= 12 * 4, "%llu statements for 12 transactions of 2..4",
		  (unsigned long long)statements);
	cr_assert_gt(o.wl_class[dur], 0, "stored commits need durability notifications");
	cr_assert_eq(o.arrived_early[begin], 0, "closed loop: no intended arrival before the submission");

	/* open loop, commits answered when pre-committed */
	static const char *const avail[] = { "clients=3", "commit_response=available", "rate=3000", "epoch_us=1000", "ltx_ratio=0",
					     NULL };
	t_workload(pol->name, wl, avail, 2, 30, &o);
	t_reconcile("oltp available/open", pol->name, &o);
	cr_assert_eq(o.wl_class[begin], 30);
	cr_assert_eq(o.wl_class[commit], 30);
	cr_assert_eq(o.arrived_early[begin], 30, "open loop: every begin carries its intended arrival (%llu of 30 do)",
		     (unsigned long long)o.arrived_early[begin]);

	/* the same, the pre-commit task answering itself (no response task): every commit ends */
	static const char *const direct[] = { "clients=3", "commit_response=available", "direct_commit_callback=true",
					      "rate=3000", "epoch_us=1000", "ltx_ratio=0", NULL };
	t_workload(pol->name, wl, direct, 2, 30, &o);
	t_reconcile("oltp available/direct", pol->name, &o);
	cr_assert_eq(o.wl_class[begin], 30);
	cr_assert_eq(o.wl_class[commit], 30);
	cr_assert_eq(o.core_class[commit], 30, "every direct commit is torn down and recorded");
}
