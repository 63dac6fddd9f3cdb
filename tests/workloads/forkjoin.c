/*
 * forkjoin.c - the forkjoin workload (workloads/forkjoin.c) on every registered policy: results verified.
 */
#include "run.h"
SB_POLICY_PARAMS(workloads, forkjoin)
ParameterizedTest(struct sb_tpol *pol, workloads, forkjoin, .timeout = 60)
{
	static const char *const fib[] = { "which=fib", "n=12", "clients=2", "work_ns=0", NULL };
	static const char *const uts[] = { "which=uts", "uts_b0=30", "uts_m=5", "uts_q=0.18", "clients=2", "work_ns=50", NULL };
	struct t_out o;
	t_workload(pol->name, "forkjoin", fib, 4, 4, &o);
	t_reconcile("forkjoin fib", pol->name, &o);
	cr_assert_eq(o.verified, 4, "%s: %llu of 4 fib results verified", pol->name, (unsigned long long)o.verified);
	/* fib(12): 465 node tasks and 232 joins per computation */
	cr_assert_eq(o.wc.tasks_created, 4 * (465 + 232));
	t_workload(pol->name, "forkjoin", uts, 5, 4, &o);
	t_reconcile("forkjoin uts", pol->name, &o);
	cr_assert_eq(o.verified, 4, "%s: %llu of 4 tree sizes verified", pol->name, (unsigned long long)o.verified);
}
