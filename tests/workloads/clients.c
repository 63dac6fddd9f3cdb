/*
 * clients.c - what holds across every workload, through the clients they all run
 * (workloads/clients.c): the same seed gives every client the same sequence of jobs under
 * different policies, and a different seed a different one; bad parameter combinations are
 * refused at start, before any thread starts, with a message naming them.
 */
#include "run.h"
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
		{ "oltp", { "direct_commit_callback=true" }, "direct_commit_callback" }, /* with stored */
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
