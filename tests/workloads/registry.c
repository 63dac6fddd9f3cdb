/*
 * registry.c - the start-up check of the workload registry (workloads/registry.c): the registry
 * passes it, and each kind of malformed entry planted in a list is refused with a line naming it.
 */
#include "../common.h"
#include "../../workloads/workload.h"

Test(registry, the_workloads_pass_the_start_up_check)
{
	char err[512] = "";
	cr_assert_eq(sb_workloads_check(sb_workloads, err, sizeof err), 0, "%s", err);
}

Test(registry, a_planted_bad_workload_is_refused)
{
	struct sb_workload no_stop = *sb_workloads[0], no_classes = *sb_workloads[0], unnamed = *sb_workloads[0];
	struct sb_workload bad_params = *sb_workloads[0];
	no_stop.name = "nostop";
	no_stop.stop = NULL;
	no_classes.name = "noclasses";
	no_classes.classes = NULL;
	unnamed.name = NULL;
	bad_params.name = "badparams";
	bad_params.params_size = 1;
	const struct {
		const struct sb_workload *list[3];
		const char *says;
	} bad[] = {
		{ { &no_stop }, "workload nostop lacks one of start, done, stop, counts, destroy" },
		{ { &no_classes }, "workload noclasses has no job classes" },
		{ { &unnamed }, "workload (no name) has no name" },
		{ { sb_workloads[0], sb_workloads[1], sb_workloads[0] }, "is registered twice" },
		{ { &bad_params }, "workload badparams: parameter" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char err[512] = "";
		cr_expect_eq(sb_workloads_check(bad[i].list, err, sizeof err), -EINVAL, "case %zu accepted", i);
		cr_expect(strstr(err, bad[i].says), "case %zu: '%s' does not say '%s'", i, err, bad[i].says);
	}
}
