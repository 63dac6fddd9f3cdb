/*
 * param.c - parameter tables (core/param.c): routing a `name=value` to the one table that has
 * the name, the tests' own settings going through the same routing (a misspelt name fails the
 * test instead of running it with the default), and the start-up check of a table.
 */
#include "../common.h"

struct blk {
	int64_t n;
	bool b;
	int e;
	double d;
};
static const char *const abc[] = { "a", "b", "c", NULL };
static const struct sb_param good[] = {
	SB_PARAM_INT(struct blk, n, 3, 0, 10, "n"),
	SB_PARAM_BOOL(struct blk, b, 0, "b"),
	SB_PARAM_ENUM(struct blk, e, 1, abc, "e"),
	SB_PARAM_DOUBLE(struct blk, d, 0.5, 0, 1, "d"),
	SB_PARAM_END,
};
static const struct sb_param other[] = {
	SB_PARAM_INT(struct blk, n, 3, 0, 10, "the same name as good's n"),
	SB_PARAM_END,
};

Test(param, a_setting_goes_to_the_one_table_that_has_it)
{
	struct blk x, y;
	sb_param_defaults(good, &x);
	sb_param_defaults(other, &y);
	const struct sb_param_scope sc[2] = { { "policy", "policy p", good, &x }, { "workload", "workload w", NULL, NULL } };
	char err[4096];
	void *where = NULL;
	cr_assert_eq(sb_param_route(sc, 2, "e=c", &where, err, sizeof err), 0, "%s", err);
	cr_assert_eq(x.e, 2);
	cr_assert_eq(where, (void *)&x.e);
	cr_assert_eq(sb_param_route(sc, 2, "policy.n=7", NULL, err, sizeof err), 0, "%s", err);
	cr_assert_eq(x.n, 7);

	cr_assert_eq(sb_param_route(sc, 2, "nn=7", NULL, err, sizeof err), -ENOENT);
	cr_assert(strstr(err, "unknown parameter 'nn'; valid parameters are: policy p: n, b, e, d; workload w: (none)"),
		  "%s", err);
	cr_assert_eq(sb_param_route(sc, 2, "n=11", NULL, err, sizeof err), -ERANGE);
	cr_assert(strstr(err, "policy p: parameter 'n'"), "%s", err);
	cr_assert_eq(sb_param_route(sc, 2, "planet.n=1", NULL, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, "unknown prefix 'planet'; valid prefixes are policy., workload."), "%s", err);
	cr_assert_eq(sb_param_route(sc, 2, "workload.n=1", NULL, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, "workload w has no parameters"), "%s", err);
	cr_assert_eq(sb_param_route(sc, 2, "n", NULL, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, "expected NAME=VALUE"), "%s", err);

	const struct sb_param_scope both[2] = { { "policy", "policy p", good, &x }, { "workload", "workload w", other, &y } };
	cr_assert_eq(sb_param_route(both, 2, "n=1", NULL, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, "exists in policy p and workload w; write policy.n=1 or workload.n=1"), "%s", err);
	cr_assert_eq(sb_param_route(both, 2, "workload.n=1", NULL, err, sizeof err), 0, "%s", err);
	cr_assert_eq(y.n, 1);
	cr_assert_eq(x.n, 7, "the other table is untouched");
}

/* The settings a test gives t_rt: another policy's parameter is skipped where this policy lacks
 * it, but a name that no table has is an error, so a misspelt setting fails its test. */
Test(param, a_misspelt_setting_fails_the_test)
{
	const struct sb_policy_ops *ops = sb_policy_find("hybrid");
	cr_assert(ops);
	struct sb_config cfg;
	sb_config_default(&cfg);
	void *pp = calloc(1, ops->params_size);
	sb_param_defaults(ops->params, pp);
	char err[8192] = "";

	const char *const misspelt[] = { "lightweight_job_levle=20", NULL };
	cr_assert_neq(t_apply_sets(ops, &cfg, pp, misspelt, err, sizeof err), 0, "a misspelt name is refused");
	cr_assert(strstr(err, "unknown parameter 'lightweight_job_levle'"), "%s", err);
	const char *const misspelt_core[] = { "thread_cuont=3", NULL };
	cr_assert_neq(t_apply_sets(ops, &cfg, pp, misspelt_core, err, sizeof err), 0, "a misspelt core name is refused");

	const char *const fine[] = { "lightweight_job_level=20", "thread_count=3", "lane_budget=4", NULL };
	cr_assert_eq(t_apply_sets(ops, &cfg, pp, fine, err, sizeof err), 0, "%s", err);
	size_t off = 0;
	cr_assert(sb_param_find(ops->params, "lightweight_job_level", &off));
	cr_assert_eq(*(int64_t *)((char *)pp + off), 20);
	cr_assert_eq(cfg.thread_count, 3);
	free(pp);
}

Test(param, the_check_refuses_a_malformed_table)
{
	char err[512];
	cr_assert_eq(sb_param_check(good, sizeof(struct blk), err, sizeof err), 0, "%s", err);
	cr_assert_eq(sb_param_check(NULL, 0, err, sizeof err), 0, "no table is a valid table");
	static const struct sb_param twice[] = { SB_PARAM_INT(struct blk, n, 3, 0, 10, ""),
						 { .name = "n", .type = SB_P_BOOL, .offset = offsetof(struct blk, b), .max = 1 },
						 SB_PARAM_END };
	static const struct sb_param def_out[] = { SB_PARAM_INT(struct blk, n, 11, 0, 10, ""), SB_PARAM_END };
	static const struct sb_param ddef_out[] = { SB_PARAM_DOUBLE(struct blk, d, 2, 0, 1, ""), SB_PARAM_END };
	static const struct sb_param enum_out[] = { SB_PARAM_ENUM(struct blk, e, 3, abc, ""), SB_PARAM_END };
	static const struct sb_param no_choices[] = { SB_PARAM_ENUM(struct blk, e, 0, NULL, ""), SB_PARAM_END };
	static const struct sb_param nameless[] = { { .type = SB_P_INT, .max = 1 }, SB_PARAM_END };
	static const struct sb_param inc[] = { SB_PARAM_INCLUDE(struct blk, n, good), SB_PARAM_END };
	static const struct sb_param inc_twice[] = { SB_PARAM_INCLUDE(struct blk, n, good),
						     { .name = "d", .type = SB_P_INT, .offset = 0, .max = 1 }, SB_PARAM_END };
	const struct {
		const struct sb_param *tbl;
		size_t size;
		const char *says;
	} bad[] = {
		{ twice, sizeof(struct blk), "parameter 'n' appears twice" },
		{ def_out, sizeof(struct blk), "parameter 'n': default 11 is outside 0..10" },
		{ ddef_out, sizeof(struct blk), "parameter 'd': default 2 is outside 0..1" },
		{ enum_out, sizeof(struct blk), "parameter 'e': default choice 3 is not one of its 3 choices" },
		{ no_choices, sizeof(struct blk), "parameter 'e': default choice 0 is not one of its 0 choices" },
		{ nameless, sizeof(struct blk), "has no name" },
		{ good, sizeof(int64_t), "parameter 'b' lies outside its 8-byte block" },
		{ inc, sizeof(struct blk) - 1, "parameter 'd' lies outside" },
		{ inc_twice, sizeof(struct blk), "parameter 'd' appears twice" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		err[0] = 0;
		cr_expect_eq(sb_param_check(bad[i].tbl, bad[i].size, err, sizeof err), -EINVAL, "case %zu accepted", i);
		cr_expect(strstr(err, bad[i].says), "case %zu: '%s' does not say '%s'", i, err, bad[i].says);
	}
}
