/*
 * load.c - the load workload (workloads/load.c) on every registered policy.
 */
#include <string.h>

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

/* wait=block (DuckDB's TASK_BLOCKED): the load task parks while its statements are in flight and
 * the next one to finish resumes it, so it runs about once per statement, not once per poll.
 * The yield mode's count is the control: its load task polls for as long as statements are in
 * flight, many times per statement. A load task that never parked would run as often as that;
 * one that parked and was never resumed would hang the run (the watchdog fails it). */
SB_POLICY_PARAMS(workloads, load_blocked)
ParameterizedTest(struct sb_tpol *pol, workloads, load_blocked, .timeout = 60)
{
	static const char *const block[] = { "mode=transactional", "wait=block", "rows=3000", "bulk_size=64",
					     "write_ns=2000", "read_ns=0", NULL };
	static const char *const yield[] = { "mode=transactional", "wait=yield", "rows=3000", "bulk_size=64",
					     "write_ns=2000", "read_ns=0", NULL };
	struct t_out b, y;
	unsigned ins = t_cls("load", "insert");
	t_workload(pol->name, "load", block, 12, 2, &b);
	t_reconcile("load wait=block", pol->name, &b);
	cr_assert_eq(b.wl_class[ins], 2 * 3000);
	t_workload(pol->name, "load", yield, 12, 2, &y);
	t_reconcile("load wait=yield", pol->name, &y);
	/* runs of the load task: every task run that was not an INSERT's write */
	uint64_t runs_b = b.core[SB_C_RUN] - 2 * 3000, runs_y = y.core[SB_C_RUN] - 2 * 3000, bound = 2 * (2 * 3000 + 2);
	cr_expect(runs_b <= bound, "%s: the blocked load task ran %llu times for %d statements", pol->name,
		  (unsigned long long)runs_b, 2 * 3000);
	/* where statements run inline in their submit (serial, hybrid's serial path) nothing is ever
	 * in flight and neither mode waits; under the stealing family the yield mode polls and the
	 * block mode parks. Asserted on the modes, not on how many polls found statements still in
	 * flight: that count depends on how fast the writes finish (a run with 8,133 polls for 6,000
	 * statements is no failure of the mode) */
	if (!strcmp(pol->name, "stealing")) {
		cr_assert(y.core[SB_C_YIELD] > b.core[SB_C_YIELD] && y.core[SB_C_BLOCKED] == 0,
			  "stealing: wait=yield yielded %llu times (wait=block %llu) and parked %llu times",
			  (unsigned long long)y.core[SB_C_YIELD], (unsigned long long)b.core[SB_C_YIELD],
			  (unsigned long long)y.core[SB_C_BLOCKED]);
		cr_assert(b.core[SB_C_BLOCKED] > 0, "stealing: wait=block never parked");
	}
	if (runs_y > bound)
		cr_expect(b.core[SB_C_BLOCKED] > 0, "%s: the load task polled %llu times with wait=yield and never parked "
			  "with wait=block", pol->name, (unsigned long long)runs_y);
}
