/*
 * common.h - helpers shared by the Criterion tests: a runtime per test with every policy from
 * the registry, and a few task bodies the invariant tests reuse.
 *
 * Tests include core/rt.h where they assert on internals (the sticky word, the worker a task
 * runs on). Every runtime is made with check=true and a stall limit, so a policy bug shows up
 * as a named invariant failure or a STALL, never as a hang.
 */
#ifndef SB_TESTS_COMMON_H
#define SB_TESTS_COMMON_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/rt.h"
#include "../policies/registry.h"

/* Every registered policy, as Criterion parameters. The name is copied into the parameter:
 * Criterion runs each test in a fresh process where pointers into the runner's memory mean
 * nothing. A test takes `struct sb_tpol *p` and uses p->name. */
struct sb_tpol {
	char name[32];
};

#define SB_POLICY_PARAMS(suite, test)                                                         \
	ParameterizedTestParameters(suite, test)                                              \
	{                                                                                     \
		static struct sb_tpol pols[64];                                               \
		size_t n = 0;                                                                 \
		for (const struct sb_policy_ops *const *p = sb_policies; *p && n < 64; p++) \
			snprintf(pols[n++].name, sizeof pols[0].name, "%s", (*p)->name);      \
		return cr_make_param_array(struct sb_tpol, pols, n);                          \
	}

/* A runtime for `policy` with check mode on and a stall watchdog; `sets` is a NULL-terminated
 * list of "name=value" for core or policy parameters. */
static inline struct sb_rt *t_rt(const char *policy, int threads, const char *const *sets)
{
	const struct sb_policy_ops *ops = sb_policy_find(policy);
	cr_assert(ops, "policy %s is registered", policy);
	struct sb_config cfg;
	sb_config_default(&cfg);
	cfg.thread_count = threads;
	cfg.check = true;
	cfg.stall_limit = 5000;
	void *pp = ops->params_size ? calloc(1, ops->params_size) : NULL;
	if (ops->params)
		sb_param_defaults(ops->params, pp);
	char err[512] = "";
	for (const char *const *s = sets; s && *s; s++) {
		char name[128];
		const char *eq = strchr(*s, '=');
		cr_assert(eq, "setting %s has a '='", *s);
		snprintf(name, sizeof name, "%.*s", (int)(eq - *s), *s);
		int r;
		if (sb_param_find(sb_core_params, name, NULL))
			r = sb_param_set(sb_core_params, &cfg, name, eq + 1, err, sizeof err);
		else if (ops->params && sb_param_find(ops->params, name, NULL))
			r = sb_param_set(ops->params, pp, name, eq + 1, err, sizeof err);
		else
			continue; /* a policy-specific setting that this policy does not have */
		cr_assert_eq(r, 0, "%s", err);
	}
	struct sb_rt *rt;
	int rc = sb_rt_create(&rt, &cfg, ops, pp, err, sizeof err);
	free(pp);
	cr_assert(rt && rc == 0, "runtime for %s: %s", policy, err);
	return rt;
}

/* Approximate queued tasks for worker w (-1: the shared queues), as the policy reports them. */
static inline size_t t_queued(const struct sb_rt *rt, int w)
{
	return sb_policy_queued(rt, w);
}

/* Stop, check that nothing failed, destroy. */
static inline void t_done(struct sb_rt *rt)
{
	sb_rt_stop(rt, SB_STOP_DRAIN);
	const char *f = sb_rt_failure(rt);
	cr_expect_null(f, "runtime failure: %s", f ? f : "");
	sb_rt_destroy(rt);
}

/* Submit a job whose root runs `fn` with arg, wait for it, return it (caller puts it). */
static inline struct sb_job *t_run_job(struct sb_rt *rt, const struct sb_job_desc *d, sb_task_fn fn, void *arg)
{
	struct sb_job *j = sb_job_create(rt, d);
	struct sb_task *t = sb_task_new(j, fn, arg);
	sb_job_submit(j, t);
	cr_assert(sb_job_wait(j), "job finished (runtime failure: %s)", sb_rt_failure(rt) ? sb_rt_failure(rt) : "none");
	return j;
}

/* One of the policy's counters (ops->stats); the test fails when the policy has no such key. */
struct t_stat {
	const char *key;
	double v;
	bool found;
};

static inline void t_stat_emit(void *ctx, const char *key, double v)
{
	struct t_stat *s = ctx;
	if (!strcmp(key, s->key)) {
		s->v = v;
		s->found = true;
	}
}

static inline double t_policy_stat(struct sb_rt *rt, const char *key)
{
	struct t_stat s = { key, 0, false };
	sb_rt_policy_stats(rt, t_stat_emit, &s);
	cr_assert(s.found, "policy %s reports %s", sb_rt_policy(rt)->name, key);
	return s.v;
}

#endif
