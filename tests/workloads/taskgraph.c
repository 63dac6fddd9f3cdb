/*
 * taskgraph.c - the task graphs of the patterns workload and its peers
 * (workloads/taskgraph.c): each pattern gives the inputs its definition says, both edge lists
 * agree, and the checks a task makes catch a stale or missing input and a second run.
 */
#include <errno.h>

#include "../../workloads/taskgraph.h"
#include "../common.h"

static struct tg_graph t_graph(int pattern, uint32_t width, uint32_t steps, uint32_t radix, uint64_t seed)
{
	struct tg_graph g;
	char err[128] = "";
	struct tg_shape s = { .pattern = pattern, .width = width, .steps = steps, .radix = radix, .seed = seed };
	cr_assert_eq(tg_build(&g, &s, err, sizeof err), 0, "%s", err);
	return g;
}

/* The inputs of task (t, i), as columns of step t-1, must be exactly cols[0..n). */
static void t_inputs(const struct tg_graph *g, uint32_t t, uint32_t i, const uint32_t *cols, unsigned n)
{
	uint32_t k = t * g->s.width + i, lo = g->in_off[k], hi = g->in_off[k + 1];
	cr_assert_eq(hi - lo, n, "%s (%u, %u): %u inputs, expected %u", tg_pattern_names[g->s.pattern], t, i, hi - lo, n);
	for (unsigned c = 0; c < n; c++) {
		bool found = false;
		for (uint32_t e = lo; e < hi; e++)
			found |= g->in[e] == (t - 1) * g->s.width + cols[c];
		cr_assert(found, "%s (%u, %u) lacks input column %u", tg_pattern_names[g->s.pattern], t, i, cols[c]);
	}
}

Test(taskgraph, patterns_follow_their_definitions)
{
	struct tg_graph g = t_graph(TG_TRIVIAL, 4, 5, 3, 0);
	cr_assert_eq(g.nroots, 20, "trivial: every task is a root");
	cr_assert_eq(g.nedges, 0);
	tg_free(&g);

	g = t_graph(TG_NO_COMM, 4, 5, 3, 0);
	t_inputs(&g, 3, 2, (uint32_t[]){ 2 }, 1);
	tg_free(&g);

	g = t_graph(TG_STENCIL_1D, 4, 5, 3, 0);
	t_inputs(&g, 1, 0, (uint32_t[]){ 0, 1 }, 2);
	t_inputs(&g, 1, 2, (uint32_t[]){ 1, 2, 3 }, 3);
	t_inputs(&g, 4, 3, (uint32_t[]){ 2, 3 }, 2);
	cr_assert_eq(g.nroots, 4, "only step 0 has no inputs");
	tg_free(&g);

	g = t_graph(TG_STENCIL_1D_PERIODIC, 4, 5, 3, 0);
	t_inputs(&g, 1, 0, (uint32_t[]){ 3, 0, 1 }, 3);
	t_inputs(&g, 2, 3, (uint32_t[]){ 2, 3, 0 }, 3);
	tg_free(&g);

	g = t_graph(TG_DOM, 4, 5, 3, 0);
	t_inputs(&g, 1, 0, (uint32_t[]){ 0 }, 1);
	t_inputs(&g, 1, 3, (uint32_t[]){ 2, 3 }, 2);
	tg_free(&g);

	/* tree on 4 columns: 1, 2, 4, 2, 1, 2 tasks per step */
	g = t_graph(TG_TREE, 4, 6, 3, 0);
	const unsigned active[] = { 1, 2, 4, 2, 1, 2 };
	for (uint32_t t = 0; t < 6; t++) {
		unsigned n = 0;
		for (uint32_t i = 0; i < 4; i++)
			n += g.active[t * 4 + i];
		cr_assert_eq(n, active[t], "tree step %u: %u tasks, expected %u", t, n, active[t]);
	}
	t_inputs(&g, 1, 1, (uint32_t[]){ 0 }, 1);
	t_inputs(&g, 2, 3, (uint32_t[]){ 1 }, 1);
	t_inputs(&g, 3, 1, (uint32_t[]){ 2, 3 }, 2);
	t_inputs(&g, 4, 0, (uint32_t[]){ 0, 1 }, 2);
	cr_assert_eq(g.nroots, 1);
	tg_free(&g);

	/* fft on 4 columns: partners at distance 1, 2, 1, 2, ... */
	g = t_graph(TG_FFT, 4, 5, 3, 0);
	t_inputs(&g, 1, 1, (uint32_t[]){ 1, 0 }, 2);
	t_inputs(&g, 2, 1, (uint32_t[]){ 1, 3 }, 2);
	t_inputs(&g, 3, 2, (uint32_t[]){ 2, 3 }, 2);
	tg_free(&g);

	g = t_graph(TG_NEAREST, 8, 3, 4, 0);
	t_inputs(&g, 1, 4, (uint32_t[]){ 3, 4, 5, 6 }, 4);
	t_inputs(&g, 1, 0, (uint32_t[]){ 0, 1, 2 }, 3);
	tg_free(&g);

	g = t_graph(TG_SPREAD, 8, 3, 2, 0);
	t_inputs(&g, 1, 1, (uint32_t[]){ 1, 5 }, 2);
	t_inputs(&g, 2, 6, (uint32_t[]){ 6, 2 }, 2);
	tg_free(&g);
}

Test(taskgraph, random_nearest_is_a_seeded_subset)
{
	struct tg_graph a = t_graph(TG_RANDOM_NEAREST, 16, 20, 5, 1), b = t_graph(TG_RANDOM_NEAREST, 16, 20, 5, 2),
			a2 = t_graph(TG_RANDOM_NEAREST, 16, 20, 5, 1);
	bool differs = false, some_dropped = false;
	for (uint32_t k = 16; k < a.n; k++) {
		uint32_t t = k / 16, i = k % 16, n = a.in_off[k + 1] - a.in_off[k];
		bool self = false;
		for (uint32_t e = a.in_off[k]; e < a.in_off[k + 1]; e++) {
			uint32_t c = a.in[e] - (t - 1) * 16;
			self |= c == i;
			cr_assert(c + 2 >= i && c <= i + 2, "(%u, %u) reads column %u, outside its radix-5 window", t, i, c);
		}
		cr_assert(self, "(%u, %u) always reads its own column", t, i);
		some_dropped |= n < (i >= 2 && i <= 13 ? 5u : 3u);
		differs |= n != b.in_off[k + 1] - b.in_off[k];
		cr_assert_eq(n, a2.in_off[k + 1] - a2.in_off[k], "the same seed gives the same graph");
	}
	cr_assert(some_dropped, "some neighbours are left out");
	cr_assert(differs, "another seed gives another graph");
	tg_free(&a);
	tg_free(&b);
	tg_free(&a2);
}

Test(taskgraph, edge_lists_agree)
{
	for (int p = 0; tg_pattern_names[p]; p++) {
		struct tg_graph g = t_graph(p, 7, 9, 4, 3);
		/* every input edge p -> k appears once among p's consumers, and the counts match */
		uint64_t outs = g.out_off[g.n];
		cr_assert_eq(outs, g.nedges, "%s: %llu consumer edges for %llu input edges", tg_pattern_names[p],
			     (unsigned long long)outs, (unsigned long long)g.nedges);
		for (uint32_t k = 0; k < g.n; k++)
			for (uint32_t e = g.in_off[k]; e < g.in_off[k + 1]; e++) {
				uint32_t src = g.in[e];
				unsigned seen = 0;
				for (uint32_t f = g.out_off[src]; f < g.out_off[src + 1]; f++)
					seen += g.out[f] == k;
				cr_assert_eq(seen, 1, "%s: edge %u -> %u listed %u times at the producer", tg_pattern_names[p],
					     src, k, seen);
				cr_assert(g.active[src], "%s: %u reads %u, which does not exist", tg_pattern_names[p], k, src);
			}
		tg_free(&g);
	}
}

Test(taskgraph, checks_catch_stale_inputs_and_second_runs)
{
	struct tg_graph g = t_graph(TG_STENCIL_1D, 3, 2, 3, 0);
	struct tg_kernel kn = { .kind = TG_COMPUTE_BOUND, .iterations = 4 };
	struct tg_out out[6];
	memset(out, 0, sizeof out);
	char why[200];
	/* run 1 in full */
	for (uint32_t k = 0; k < 6; k++)
		cr_assert_eq(tg_execute(&g, &kn, out, NULL, 1, 0, k, why, sizeof why), 0, "%s", why);
	cr_assert_eq(tg_verify(&g, out, 1, 0, why, sizeof why), 0, "%s", why);
	/* run 2: a consumer before its producers sees run 1's outputs */
	cr_assert_eq(tg_execute(&g, &kn, out, NULL, 2, 0, 4, why, sizeof why), -EPROTO);
	cr_assert(strstr(why, "(step 1, column 1)") && strstr(why, "(step 0, column 0)"), "%s", why);
	/* run 2, step 0 done, then a task of step 1 twice */
	for (uint32_t k = 0; k < 3; k++)
		cr_assert_eq(tg_execute(&g, &kn, out, NULL, 2, 0, k, why, sizeof why), 0, "%s", why);
	cr_assert_eq(tg_execute(&g, &kn, out, NULL, 2, 0, 3, why, sizeof why), 0, "%s", why);
	cr_assert_eq(tg_execute(&g, &kn, out, NULL, 2, 0, 3, why, sizeof why), -EPROTO);
	cr_assert(strstr(why, "ran twice"), "%s", why);
	/* tasks 4 and 5 never ran in run 2 */
	cr_assert_eq(tg_verify(&g, out, 2, 0, why, sizeof why), -EPROTO);
	cr_assert(strstr(why, "(step 1, column 1)") && strstr(why, "did not run"), "%s", why);
	/* the other graph's outputs are not this graph's */
	cr_assert_eq(tg_verify(&g, out, 1, 1, why, sizeof why), -EPROTO);
	tg_free(&g);
}

Test(taskgraph, bad_shapes_are_refused)
{
	struct tg_graph g;
	char err[128] = "";
	struct tg_shape s = { .pattern = TG_NEAREST, .width = 4, .steps = 4, .radix = TG_MAX_RADIX + 1 };
	cr_assert_eq(tg_build(&g, &s, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, "radix"), "%s", err);
	s = (struct tg_shape){ .pattern = TG_NO_COMM, .width = 4096, .steps = 1000000, .radix = 1 };
	cr_assert_eq(tg_build(&g, &s, err, sizeof err), -E2BIG);
	cr_assert(strstr(err, "at most"), "%s", err);
}
