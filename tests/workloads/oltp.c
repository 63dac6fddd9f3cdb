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

	/* the pre-commit task answering itself (direct_commit_callback): every commit ends, and each
	 * spawns no response task. Without scans (whose yields follow the clock) the same seed
	 * spawns the same tasks but for the responses and the teardowns (which a teardown that
	 * finds its job unfinished spawns again), so spawns less teardowns differ by the commits. */
	static const char *const task[] = { "clients=3", "commit_response=available", "rate=3000", "epoch_us=1000",
					    "ltx_ratio=0", "mix_scan=0", NULL };
	static const char *const direct[] = { "clients=3", "commit_response=available", "rate=3000", "epoch_us=1000",
					      "ltx_ratio=0", "mix_scan=0", "direct_commit_callback=true", NULL };
	t_workload(pol->name, wl, task, 3, 30, &o);
	t_reconcile("oltp available, response task", pol->name, &o);
	int64_t with_task = (int64_t)(o.core[SB_C_SPAWN] - o.core[SB_C_TEARDOWN]);
	t_workload(pol->name, wl, direct, 3, 30, &o);
	t_reconcile("oltp available, direct", pol->name, &o);
	cr_assert_eq(o.wl_class[begin], 30);
	cr_assert_eq(o.wl_class[commit], 30);
	cr_assert_eq(o.core_class[commit], 30, "every direct commit is torn down and recorded");
	int64_t direct_ = (int64_t)(o.core[SB_C_SPAWN] - o.core[SB_C_TEARDOWN]);
	cr_assert_eq(with_task - direct_, 30, "a direct commit spawns no response task: %lld spawns (less teardowns) "
		     "with the task, %lld without", (long long)with_task, (long long)direct_);
}
