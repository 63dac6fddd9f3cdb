/*
 * test_workloads.c - every workload generator, on every registered policy.
 *
 * Each workload runs as a small bounded run (env->jobs) with check mode and the stall watchdog
 * on (tests/common.h t_rt), and hybrid's lightweight_job_level at 40 so that its serial path
 * (jobs run inline on the submitting thread) is exercised beside its stealing one. What is
 * asserted after every run: the workload's counts reconcile exactly with the core's (jobs
 * submitted == completion callbacks == teardowns == the core's submissions; tasks created ==
 * tasks run - yields - blocks + dropped; jobs per class == jobs the core recorded per class)
 * and no job failed and no result was wrong; then what each workload promises (its class mix,
 * verified fork-join results and task graphs, open-loop arrival times; a planted wrong
 * dependence is caught). Separately: the same seed gives every client the same
 * sequence of jobs under different policies, and a different seed a different one; and bad
 * parameter combinations are refused at start with a message naming them.
 *
 * Runs are kept to a few tens of milliseconds each so the file stays well under a minute.
 */
#include <time.h>

#include "../workloads/common.h"
#include "../workloads/taskgraph.h"
#include "common.h"

#define T_MAX_CLIENTS 8

/* One bounded run's outcome, asserted on the test's own thread. */
struct t_out {
	struct wl_counts wc;
	uint64_t core[SB_NR_COUNTERS];          /* summed over every thread context */
	uint64_t wl_class[SB_MAX_CLASSES];      /* jobs the workload submitted, per class */
	uint64_t core_class[SB_MAX_CLASSES];    /* jobs the core tore down and recorded, per class */
	uint64_t arrived_early[SB_MAX_CLASSES]; /* recorded jobs with t_arrival before t_submit */
	uint64_t sig[T_MAX_CLIENTS];
	unsigned nclients;
	uint64_t verified;
	char wrong[256];                        /* the workload's first wrong result, "" if none */
};

static void t_sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

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

/* Fill a workload's parameter block from its defaults and "name=value" settings. */
static void *t_params(const struct sb_workload *w, const char *const *sets)
{
	void *pp = calloc(1, w->params_size ? w->params_size : 1);
	cr_assert(pp);
	sb_param_defaults(w->params, pp);
	for (const char *const *s = sets; s && *s && **s; s++) {
		char name[64], err[512] = "";
		const char *eq = strchr(*s, '=');
		cr_assert(eq, "setting %s has a '='", *s);
		snprintf(name, sizeof name, "%.*s", (int)(eq - *s), *s);
		int r = sb_param_set(w->params, pp, name, eq + 1, err, sizeof err);
		cr_assert_eq(r, 0, "%s: %s", w->name, err);
	}
	return pp;
}

/* Run workload `wl` under `policy` until its bounded run is done, stop it, and collect. */
static void t_workload(const char *policy, const char *wl, const char *const *sets, uint64_t seed, int64_t jobs,
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
		out->wl_class[k] = atomic_load_explicit(&cs->nr_class[k], memory_order_relaxed);
	out->nclients = cs->n < T_MAX_CLIENTS ? cs->n : T_MAX_CLIENTS;
	for (unsigned i = 0; i < out->nclients; i++)
		out->sig[i] = cs->c[i].sig;
	out->verified = atomic_load_explicit(&cs->nr_verified, memory_order_relaxed);
	snprintf(out->wrong, sizeof out->wrong, "%s", out->wc.results_wrong ? out->wc.wrong_text : "");
	w->destroy(st);
	free(pp);
	sb_rt_destroy(rt);
}

/* The accounting every run must satisfy (workload.h). */
static void t_reconcile(const char *what, const char *policy, const struct t_out *o)
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

/* Index of a class by name in a workload's list. */
static unsigned t_cls(const char *wl, const char *name)
{
	const struct sb_workload *w = sb_workload_find(wl);
	cr_assert(w);
	for (unsigned i = 0; w->classes[i]; i++)
		if (!strcmp(w->classes[i], name))
			return i;
	cr_assert_fail("%s has no class %s", wl, name);
	return 0;
}

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
}

SB_POLICY_PARAMS(workloads, mixed)
ParameterizedTest(struct sb_tpol *pol, workloads, mixed, .timeout = 60)
{
	static const char *const sets[] = { "light_clients=3", "heavy_clients=1", "partitions=6", "process_ns=20000",
					    "light_think_us=0", "heavy_share=80", NULL };
	struct t_out o;
	t_workload(pol->name, "mixed", sets, 3, 40, &o);
	t_reconcile("mixed", pol->name, &o);
	/* 40 jobs over 4 clients: the heavy client's 10, the light ones' 30 */
	cr_assert_eq(o.wl_class[t_cls("mixed", "heavy")], 10);
	cr_assert_eq(o.wl_class[t_cls("mixed", "light")], 30);
}

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

SB_POLICY_PARAMS(workloads, wake)
ParameterizedTest(struct sb_tpol *pol, workloads, wake, .timeout = 60)
{
	static const char *const plain[] = { "clients=2", "gap_us=1500", "from_task_pct=50", NULL };
	static const char *const urgent[] = { "clients=2", "gap_us=1000", "from_task_pct=100", "urgent=true", NULL };
	struct t_out o;
	t_workload(pol->name, "wake", plain, 6, 12, &o);
	t_reconcile("wake", pol->name, &o);
	cr_assert_eq(o.wl_class[t_cls("wake", "from_request")], 12);
	cr_assert_leq(o.wl_class[t_cls("wake", "from_task")], 12);
	t_workload(pol->name, "wake", urgent, 7, 6, &o);
	t_reconcile("wake urgent", pol->name, &o);
	cr_assert_eq(o.wl_class[t_cls("wake", "from_task")], 6, "every job relays one");
}

SB_POLICY_PARAMS(workloads, tiny)
ParameterizedTest(struct sb_tpol *pol, workloads, tiny, .timeout = 60)
{
	static const char *const closed[] = { "producers=3", "window=4", NULL };
	static const char *const open[] = { "producers=3", "window=8", "rate=60000", "dist=exp", NULL };
	struct t_out o;
	t_workload(pol->name, "tiny", closed, 8, 600, &o);
	t_reconcile("tiny closed", pol->name, &o);
	cr_assert_eq(o.wl_class[0], 600);
	t_workload(pol->name, "tiny", open, 9, 600, &o);
	t_reconcile("tiny open", pol->name, &o);
	cr_assert_eq(o.wl_class[0], 600);
	cr_assert_eq(o.arrived_early[0], 600, "open loop: every job carries its intended arrival");
}

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

SB_POLICY_PARAMS(workloads, micro)
ParameterizedTest(struct sb_tpol *pol, workloads, micro, .timeout = 60)
{
	static const char *const patterns[] = { "chain", "pingpong", "spawn_many", "yield_many" };
	for (unsigned i = 0; i < 4; i++) {
		char pat[64];
		snprintf(pat, sizeof pat, "pattern=%s", patterns[i]);
		const char *const sets[] = { pat, "length=320", "clients=2", NULL };
		struct t_out o;
		t_workload(pol->name, "micro", sets, 12, 4, &o);
		t_reconcile(patterns[i], pol->name, &o);
		cr_assert_eq(o.wl_class[i], 4);
	}
}

SB_POLICY_PARAMS(workloads, patterns)
ParameterizedTest(struct sb_tpol *pol, workloads, patterns, .timeout = 60)
{
	/* every pattern, two graphs per job: each task checked its inputs, each job's outputs were
	 * checked after it, and the launcher plus every task of both graphs ran */
	for (unsigned p = 0; tg_pattern_names[p]; p++) {
		char pat[64];
		snprintf(pat, sizeof pat, "pattern=%s", tg_pattern_names[p]);
		const char *const sets[] = { pat, "width=5", "steps=12", "graphs=2", "iterations=8", "radix=4", NULL };
		struct t_out o;
		t_workload(pol->name, "patterns", sets, 13 + p, 3, &o);
		t_reconcile(tg_pattern_names[p], pol->name, &o);
		cr_assert_eq(o.verified, 3, "%s under %s: %llu of 3 executions verified", tg_pattern_names[p], pol->name,
			     (unsigned long long)o.verified);
		cr_assert_eq(o.wl_class[p], 3);
		/* only tree leaves columns out, and no pattern's task count depends on the seed */
		struct tg_graph g;
		char err[128];
		struct tg_shape sh = { .pattern = (int)p, .width = 5, .steps = 12, .radix = 4 };
		cr_assert_eq(tg_build(&g, &sh, err, sizeof err), 0, "%s", err);
		cr_assert_eq(o.wc.tasks_created, 3 * (1 + 2 * (uint64_t)g.nactive), "%s under %s: %llu tasks, expected %llu",
			     tg_pattern_names[p], pol->name, (unsigned long long)o.wc.tasks_created,
			     (unsigned long long)(3 * (1 + 2 * (uint64_t)g.nactive)));
		tg_free(&g);
	}
	/* the other kernels */
	static const char *const mem[] = { "kernel=memory_bound", "scratch_bytes=512", "iterations=4", "steps=8", NULL };
	static const char *const empty[] = { "kernel=empty", "pattern=nearest", "radix=3", "steps=30", NULL };
	struct t_out o;
	t_workload(pol->name, "patterns", mem, 40, 2, &o);
	t_reconcile("patterns memory_bound", pol->name, &o);
	cr_assert_eq(o.verified, 2);
	t_workload(pol->name, "patterns", empty, 41, 2, &o);
	t_reconcile("patterns empty", pol->name, &o);
	cr_assert_eq(o.verified, 2);
}

/* The checks are not vacuous: a planted bug in one task fails the run and names the task. */
SB_POLICY_PARAMS(workloads, patterns_fault)
ParameterizedTest(struct sb_tpol *pol, workloads, patterns_fault, .timeout = 60)
{
	/* width 5, 12 steps: the fault hits graph 0's task (step 6, column 2), whose stencil
	 * consumers are columns 1..3 of step 7 */
	static const char *const wrong[] = { "fault=wrong_output", "width=5", "steps=12", "iterations=8", NULL };
	static const char *const lost[] = { "fault=lost_task", "width=5", "steps=12", "iterations=8", NULL };
	struct t_out o;
	t_workload(pol->name, "patterns", wrong, 42, 2, &o);
	cr_assert_geq(o.wc.results_wrong, 2, "%s: a wrong output went unnoticed", pol->name);
	cr_assert(strstr(o.wrong, "(step 7, column") && strstr(o.wrong, "its input is not what") &&
			  strstr(o.wrong, "(step 6, column 2)"),
		  "%s: the message names the consumer and the producer: %s", pol->name, o.wrong);
	cr_assert_gt(o.wc.jobs_failed, 0, "%s: the consumer failed its job", pol->name);
	cr_assert_eq(o.verified, 0);

	t_workload(pol->name, "patterns", lost, 43, 2, &o);
	cr_assert_eq(o.wc.results_wrong, 2, "%s: a task that never enabled its consumers went unnoticed", pol->name);
	cr_assert(strstr(o.wrong, "(step 7, column") && strstr(o.wrong, "did not run"),
		  "%s: the message names the first consumer left out: %s", pol->name, o.wrong);
	cr_assert_eq(o.wc.jobs_failed, 0, "%s: no task failed; the job just ended early", pol->name);
	cr_assert_eq(o.verified, 0);
}

/* ---- determinism ---- */

/* A workload and settings, as values (Criterion re-runs each test in a fresh process). */
struct t_det {
	char wl[16];
	char sets[12][40];
	int64_t jobs;
	bool seeded; /* the seed changes the jobs (random costs, classes or tree) */
};

ParameterizedTestParameters(workloads, deterministic)
{
	static struct t_det cases[] = {
		{ "oltp", { "clients=3", "epoch_us=1000", "statements_max=6", "mix_scan=0", "ltx_ratio=0.3" }, 12, true },
		{ "mixed", { "light_clients=2", "heavy_clients=1", "process_ns=10000", "light_think_us=0" }, 15, true },
		{ "forkjoin", { "which=uts", "uts_b0=20", "uts_q=0.15", "clients=2" }, 4, true },
		{ "wake", { "clients=2", "gap_us=500" }, 10, true },
		{ "tiny", { "producers=2", "dist=exp" }, 200, true },
		{ "load", { "mode=nontransactional", "files=2", "blocks=2", "block_rows=5" }, 2, true },
		{ "micro", { "clients=2", "length=100" }, 4, false },
		{ "patterns", { "pattern=random_nearest", "width=6", "steps=10", "radix=5", "iterations=4" }, 3, true },
	};
	return cr_make_param_array(struct t_det, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct t_det *d, workloads, deterministic, .timeout = 60)
{
	const char *sets[13] = { 0 };
	for (unsigned i = 0; i < 12 && d->sets[i][0]; i++)
		sets[i] = d->sets[i];
	/* the first and the last registered policies: at least serial against a pool */
	size_t np = 0;
	while (sb_policies[np])
		np++;
	const char *a = sb_policies[0]->name, *b = sb_policies[np - 1]->name;
	struct t_out o1, o2, o3;
	t_workload(a, d->wl, sets, 77, d->jobs, &o1);
	t_workload(b, d->wl, sets, 77, d->jobs, &o2);
	cr_assert_eq(o1.nclients, o2.nclients);
	for (unsigned i = 0; i < o1.nclients; i++)
		cr_assert_eq(o1.sig[i], o2.sig[i], "%s: client %u's jobs differ between %s and %s with the same seed", d->wl, i,
			     a, b);
	t_workload(a, d->wl, sets, 78, d->jobs, &o3);
	bool differs = false;
	for (unsigned i = 0; i < o1.nclients; i++)
		differs |= o1.sig[i] != o3.sig[i];
	if (d->seeded)
		cr_assert(differs, "%s: another seed gave every client the same jobs", d->wl);
	else
		cr_assert(!differs, "%s: its jobs do not depend on the seed, yet they changed", d->wl);
}

/* ---- bad parameters are refused before any thread starts ---- */

struct t_bad {
	char wl[16];
	char sets[8][40];
	char names[24]; /* the parameter the message must name */
};

ParameterizedTestParameters(workloads, bad_params)
{
	static struct t_bad cases[] = {
		{ "oltp", { "statements=5", "statements_max=3" }, "statements_max" },
		{ "oltp",
		  { "mix_insert=0", "mix_point=0", "mix_filter=0", "mix_multi=0", "mix_join=0", "mix_aggregate=0", "mix_scan=0" },
		  "mix_" },
		{ "forkjoin", { "which=uts", "uts_m=8", "uts_q=0.5" }, "uts_q" },
		{ "mixed", { "light_clients=0", "heavy_clients=0" }, "light_clients" },
	};
	return cr_make_param_array(struct t_bad, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct t_bad *b, workloads, bad_params, .timeout = 10)
{
	const struct sb_workload *w = sb_workload_find(b->wl);
	cr_assert(w);
	const char *sets[9] = { 0 };
	for (unsigned i = 0; i < 8 && b->sets[i][0]; i++)
		sets[i] = b->sets[i];
	void *pp = t_params(w, sets);
	_Atomic bool stop = false;
	struct wl_env env = { .rt = NULL, .seed = 1, .jobs = 1, .stop = &stop };
	void *st = NULL;
	char err[512] = "";
	int r = w->start(&env, pp, &st, err, sizeof err);
	cr_assert_lt(r, 0, "%s accepted %s", b->wl, b->sets[0]);
	cr_assert(strstr(err, b->names), "%s's message names %s: %s", b->wl, b->names, err);
	free(pp);
}
