/*
 * run.c - a bounded run of a workload and its reconciliation, for the workload tests (run.h).
 */
#include "run.h"
static void t_visit(void *ctx, int worker, unsigned thread_id, const struct sb_rec *r)
{
	struct t_out *o = ctx;
	(void)worker;
	(void)thread_id;
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++)
		if (r->hist[k])
			o->core_class[k] += r->hist[k]->count;
	for (size_t i = 0; i < r->nrows; i++)
		o->arrived_early[r->rows[i].cls] += r->rows[i].t_arrival < r->rows[i].t_submit;
}

void *t_params(const struct sb_workload *w, const char *const *sets)
{
	void *pp = calloc(1, w->params_size ? w->params_size : 1);
	cr_assert(pp);
	sb_param_defaults(w->params, pp);
	const struct sb_param_scope sc = { "workload", w->name, w->params, pp };
	for (const char *const *s = sets; s && *s && **s; s++) {
		char err[4096] = "";
		int r = sb_param_route(&sc, 1, *s, NULL, err, sizeof err);
		cr_assert_eq(r, 0, "setting %s: %s", *s, err);
	}
	return pp;
}

void t_workload(const char *policy, const char *wl, const char *const *sets, uint64_t seed, int64_t jobs,
		struct t_out *out)
{
	static const char *const core_sets[] = { "lightweight_job_level=40", "preempt_threshold=200",
						 "worker_try_count=200", NULL };
	memset(out, 0, sizeof *out);
	const struct sb_workload *w = sb_workload_find(wl);
	cr_assert(w, "workload %s is registered", wl);
	void *pp = t_params(w, sets);
	struct sb_rt *rt = t_rt(policy, 3, core_sets);
	_Atomic bool stop = false;
	struct wl_env env = { .rt = rt, .seed = seed, .jobs = jobs, .stop = &stop };
	void *st = NULL;
	char err[512] = "";
	int r = w->start(&env, pp, &st, err, sizeof err);
	cr_assert_eq(r, 0, "%s under %s did not start: %s", wl, policy, err);
	while (!w->done(st) && !sb_rt_failure(rt))
		t_sleep_us(1000);
	/* relaxed: the clients poll it; stop() joins them */
	atomic_store_explicit(&stop, true, memory_order_relaxed);
	w->stop(st);
	w->counts(st, &out->wc);
	sb_rt_stop(rt, SB_STOP_DRAIN);
	const char *f = sb_rt_failure(rt);
	cr_assert_null(f, "%s under %s: runtime failure: %s", wl, policy, f ? f : "");

	uint64_t c[SB_NR_COUNTERS];
	for (unsigned i = 0; i < sb_rt_nworkers(rt); i++) {
		sb_rt_worker_counters(rt, i, c);
		for (unsigned k = 0; k < SB_NR_COUNTERS; k++)
			out->core[k] += c[k];
	}
	sb_rt_other_counters(rt, c);
	for (unsigned k = 0; k < SB_NR_COUNTERS; k++)
		out->core[k] += c[k];
	sb_rt_visit_recordings(rt, t_visit, out);

	/* relaxed: every thread that counted has been joined */
	struct wl_clients *cs = wl_clients_of(st);
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++)
		out->wl_class[k] = out->wc.class_submitted[k];
	out->nclients = cs->n < T_MAX_CLIENTS ? cs->n : T_MAX_CLIENTS;
	for (unsigned i = 0; i < out->nclients; i++)
		out->sig[i] = cs->c[i].sig;
	out->verified = atomic_load_explicit(&cs->nr_verified, memory_order_relaxed);
	snprintf(out->wrong, sizeof out->wrong, "%s", out->wc.results_wrong ? out->wc.wrong_text : "");
	w->destroy(st);
	free(pp);
	sb_rt_destroy(rt);
}

void t_reconcile(const char *what, const char *policy, const struct t_out *o)
{
	const uint64_t *k = o->core;
	cr_assert_gt(o->wc.jobs_submitted, 0, "%s under %s submitted nothing", what, policy);
	cr_assert_eq(o->wc.jobs_done, o->wc.jobs_submitted, "%s under %s: %llu callbacks for %llu jobs", what, policy,
		     (unsigned long long)o->wc.jobs_done, (unsigned long long)o->wc.jobs_submitted);
	cr_assert_eq(k[SB_C_TEARDOWN], o->wc.jobs_submitted, "%s under %s: %llu teardowns for %llu jobs", what, policy,
		     (unsigned long long)k[SB_C_TEARDOWN], (unsigned long long)o->wc.jobs_submitted);
	cr_assert_eq(k[SB_C_JOBS_SUBMITTED], o->wc.jobs_submitted, "%s under %s: the core saw %llu submissions, the workload %llu",
		     what, policy, (unsigned long long)k[SB_C_JOBS_SUBMITTED], (unsigned long long)o->wc.jobs_submitted);
	cr_assert_eq(o->wc.jobs_failed, 0, "%s under %s: %llu jobs failed", what, policy, (unsigned long long)o->wc.jobs_failed);
	cr_assert_eq(o->wc.results_wrong, 0, "%s under %s: wrong results: %s", what, policy, o->wrong);
	uint64_t ran = k[SB_C_RUN] - k[SB_C_YIELD] - k[SB_C_BLOCKED] + k[SB_C_DROPPED];
	cr_assert_eq(o->wc.tasks_created, ran,
		     "%s under %s: %llu tasks created, but run %llu - yields %llu - blocks %llu + dropped %llu = %llu", what, policy,
		     (unsigned long long)o->wc.tasks_created, (unsigned long long)k[SB_C_RUN], (unsigned long long)k[SB_C_YIELD],
		     (unsigned long long)k[SB_C_BLOCKED], (unsigned long long)k[SB_C_DROPPED], (unsigned long long)ran);
	for (unsigned c = 0; c < SB_MAX_CLASSES; c++)
		cr_assert_eq(o->wl_class[c], o->core_class[c], "%s under %s: class %u: %llu submitted, %llu recorded", what,
			     policy, c, (unsigned long long)o->wl_class[c], (unsigned long long)o->core_class[c]);
}

unsigned t_cls(const char *wl, const char *name)
{
	const struct sb_workload *w = sb_workload_find(wl);
	cr_assert(w);
	for (unsigned i = 0; w->classes[i]; i++)
		if (!strcmp(w->classes[i], name))
			return i;
	cr_assert_fail("%s has no class %s", wl, name);
	return 0;
}
