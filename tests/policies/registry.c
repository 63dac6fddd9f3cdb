/*
 * registry.c - the start-up check of the policy registry (policies/registry.c): the registry
 * passes it, and each kind of malformed entry planted in a list is refused with a line naming
 * it. Also the core's defaults for the optional ops: a policy that writes only submit runs.
 */
#include "../common.h"

static int to_caller(void *st, struct sb_thread *caller, struct sb_task *t)
{
	(void)st;
	(void)caller;
	(void)t;
	return SB_TO_CALLER;
}

static int no_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	(void)rt;
	(void)params;
	(void)err;
	(void)errlen;
	*state = NULL;
	return 0;
}

struct one {
	int64_t n;
};
static const struct sb_param bad_default[] = {
	SB_PARAM_INT(struct one, n, 5, 0, 4, ""),
	SB_PARAM_END,
};

static const struct sb_policy_ops minimal = { .submit = to_caller, .name = "minimal", .description = "d" };

Test(registry, the_policies_pass_the_start_up_check)
{
	char err[512] = "";
	cr_assert_eq(sb_policies_check(sb_policies, err, sizeof err), 0, "%s", err);
}

Test(registry, a_planted_bad_policy_is_refused)
{
	static const struct sb_policy_ops no_submit = { .name = "nosubmit", .description = "d" };
	static const struct sb_policy_ops unnamed = { .submit = to_caller, .description = "d" };
	static const struct sb_policy_ops undescribed = { .submit = to_caller, .name = "undescribed" };
	static const struct sb_policy_ops half = { .submit = to_caller, .create = no_create, .name = "half",
						   .description = "d" };
	static const struct sb_policy_ops bad_params = { .submit = to_caller, .name = "badparams", .description = "d",
							 .params = bad_default, .params_size = sizeof(struct one) };
	static const struct sb_policy_ops unsized = { .submit = to_caller, .name = "unsized", .description = "d",
						      .params = bad_default, .params_size = 0 };
	const struct {
		const struct sb_policy_ops *list[4];
		const char *says;
	} bad[] = {
		{ { &minimal, &no_submit }, "policy nosubmit has no submit" },
		{ { &minimal, &unnamed }, "policy (no name) has no name" },
		{ { &undescribed }, "policy undescribed has no description" },
		{ { &half }, "policy half has create or destroy without the other" },
		{ { &minimal, sb_policies[0], &minimal }, "policy minimal is registered twice" },
		{ { &bad_params }, "policy badparams: parameter 'n': default 5 is outside 0..4" },
		{ { &unsized }, "policy unsized: parameter 'n' lies outside its 0-byte block" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char err[512] = "";
		cr_expect_eq(sb_policies_check(bad[i].list, err, sizeof err), -EINVAL, "case %zu accepted", i);
		cr_expect(strstr(err, bad[i].says), "case %zu: '%s' does not say '%s'", i, err, bad[i].says);
	}
	const struct sb_policy_ops *const fine[] = { &minimal, NULL };
	char err[512] = "";
	cr_assert_eq(sb_policies_check(fine, err, sizeof err), 0, "%s", err);
}

/* Only submit written: the core's defaults stand in for create, destroy and pop. */
Test(registry, a_policy_needs_only_submit, .timeout = 30)
{
	struct sb_config cfg;
	sb_config_default(&cfg);
	cfg.thread_count = 2;
	cfg.check = true;
	cfg.stall_limit = 5000;
	char err[256] = "";
	struct sb_rt *rt;
	cr_assert_eq(sb_rt_create(&rt, &cfg, &minimal, NULL, err, sizeof err), 0, "%s", err);
	sb_thread_attach(rt);
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY };
	sb_job_put(t_run_job(rt, &d, t_work_leaf, NULL)); /* runs here, in the wait */
	sb_thread_detach();
	t_done(rt);
}
