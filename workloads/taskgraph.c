/*
 * taskgraph.c - TaskBench's dependence patterns, kernels and input checks (taskgraph.h).
 *
 * Owns no scheduling and no threads; everything here is a pure function of its arguments or
 * writes only what its caller hands it.
 */
#include "taskgraph.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mix.h"

const char *const tg_pattern_names[] = { "trivial", "no_comm", "stencil_1d", "stencil_1d_periodic", "dom",
					 "tree",    "fft",     "nearest",    "spread",              "random_nearest",
					 NULL };
const char *const tg_kernel_names[] = { "compute_bound", "memory_bound", "empty", NULL };

int tg_lookup(const char *const *names, const char *name)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

/* ---- shapes ---- */

static uint32_t ceil_log2(uint32_t w)
{
	uint32_t d = 0;
	while ((1ull << d) < w)
		d++;
	return d;
}

static uint32_t floor_log2(uint32_t w)
{
	uint32_t d = 0;
	while ((2ull << d) <= w)
		d++;
	return d;
}

/* tree: the level of step t, going 0, 1, .., D, D-1, .., 1, 0, 1, .. */
static uint32_t tree_level(uint32_t t, uint32_t depth)
{
	if (depth == 0)
		return 0;
	uint32_t p = t % (2 * depth);
	return p <= depth ? p : 2 * depth - p;
}

static uint32_t tree_active(const struct tg_shape *s, uint32_t t)
{
	uint32_t l = tree_level(t, ceil_log2(s->width));
	return l >= 31 || (1u << l) > s->width ? s->width : 1u << l;
}

static bool exists(const struct tg_shape *s, uint32_t t, uint32_t i)
{
	return s->pattern != TG_TREE || i < tree_active(s, t);
}

/* Add column c to cols[] unless it is out of range or already there. */
static void add(uint32_t *cols, unsigned *n, int64_t c, uint32_t width)
{
	if (c < 0 || c >= (int64_t)width)
		return;
	for (unsigned k = 0; k < *n; k++)
		if (cols[k] == (uint32_t)c)
			return;
	cols[(*n)++] = (uint32_t)c;
}

/* The input columns (at step t-1) of task (t, i), t >= 1, of an existing task. */
static unsigned inputs(const struct tg_shape *s, uint32_t t, uint32_t i, uint32_t *cols)
{
	unsigned n = 0;
	int64_t w = s->width, x = i, r = s->radix;
	switch (s->pattern) {
	case TG_TRIVIAL:
		break;
	case TG_NO_COMM:
		add(cols, &n, x, s->width);
		break;
	case TG_STENCIL_1D:
	case TG_STENCIL_1D_PERIODIC:
		for (int64_t d = -1; d <= 1; d++)
			add(cols, &n, s->pattern == TG_STENCIL_1D ? x + d : (x + d + w) % w, s->width);
		break;
	case TG_DOM:
		add(cols, &n, x - 1, s->width);
		add(cols, &n, x, s->width);
		break;
	case TG_TREE: {
		uint32_t depth = ceil_log2(s->width);
		if (depth == 0 || tree_level(t, depth) > tree_level(t - 1, depth)) {
			add(cols, &n, x / 2, s->width);
		} else {
			uint32_t below = tree_active(s, t - 1);
			add(cols, &n, 2 * x, below);
			add(cols, &n, 2 * x + 1, below);
		}
		break;
	}
	case TG_FFT: {
		uint32_t d = floor_log2(s->width);
		add(cols, &n, x, s->width);
		if (d > 0)
			add(cols, &n, x ^ (1ll << ((t - 1) % d)), s->width);
		break;
	}
	case TG_NEAREST:
		for (int64_t c = x - (r - 1) / 2; c <= x + r / 2; c++)
			add(cols, &n, c, s->width);
		break;
	case TG_SPREAD: {
		int64_t stride = w / r > 1 ? w / r : 1;
		for (int64_t k = 0; k < r && k < w; k++)
			add(cols, &n, (x + k * stride) % w, s->width);
		break;
	}
	case TG_RANDOM_NEAREST:
		add(cols, &n, x, s->width);
		for (int64_t c = x - (r - 1) / 2; c <= x + r / 2; c++)
			if (c != x && (wl_mix64(s->seed ^ wl_mix64(((uint64_t)t << 40) ^ ((uint64_t)i << 20) ^ (uint64_t)c)) & 1))
				add(cols, &n, c, s->width);
		break;
	}
	return n;
}

void tg_free(struct tg_graph *g)
{
	free(g->active);
	free(g->in_off);
	free(g->in);
	free(g->out_off);
	free(g->out);
	memset(g, 0, sizeof *g);
}

int tg_build(struct tg_graph *g, const struct tg_shape *s, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	if (s->pattern < 0 || s->pattern > TG_RANDOM_NEAREST || !s->width || !s->steps || !s->radix ||
	    s->radix > TG_MAX_RADIX) {
		snprintf(err, errlen, "task graph: pattern, width, steps and radix (1..%d) must all be valid", TG_MAX_RADIX);
		return -EINVAL;
	}
	if ((uint64_t)s->width * s->steps > TG_MAX_SLOTS) {
		snprintf(err, errlen, "task graph: width x steps = %" PRIu64 " tasks; at most %u",
			 (uint64_t)s->width * s->steps, TG_MAX_SLOTS);
		return -E2BIG;
	}
	g->s = *s;
	g->n = s->width * s->steps;
	uint32_t w = s->width, maxin = TG_MAX_RADIX > 3 ? TG_MAX_RADIX : 3;
	g->active = calloc(g->n, 1);
	g->in_off = calloc((size_t)g->n + 1, sizeof *g->in_off);
	g->out_off = calloc((size_t)g->n + 1, sizeof *g->out_off);
	uint32_t *cols = calloc(maxin, sizeof *cols);
	if (!g->active || !g->in_off || !g->out_off || !cols)
		goto oom;
	/* first pass: count inputs per task and consumers per task */
	for (uint32_t t = 0; t < s->steps; t++)
		for (uint32_t i = 0; i < w; i++) {
			uint32_t k = t * w + i;
			if (!exists(s, t, i))
				continue;
			g->active[k] = 1;
			g->nactive++;
			unsigned m = t ? inputs(s, t, i, cols) : 0;
			g->in_off[k + 1] = m;
			g->nroots += m == 0;
			g->nedges += m;
			for (unsigned c = 0; c < m; c++)
				g->out_off[(t - 1) * w + cols[c] + 1]++;
		}
	for (uint32_t k = 0; k < g->n; k++) {
		g->in_off[k + 1] += g->in_off[k];
		g->out_off[k + 1] += g->out_off[k];
	}
	g->in = calloc(g->nedges ? g->nedges : 1, sizeof *g->in);
	g->out = calloc(g->nedges ? g->nedges : 1, sizeof *g->out);
	uint32_t *fill = calloc(g->n, sizeof *fill);
	if (!g->in || !g->out || !fill) {
		free(fill);
		goto oom;
	}
	/* second pass: the edges, both ways */
	for (uint32_t t = 1; t < s->steps; t++)
		for (uint32_t i = 0; i < w; i++) {
			uint32_t k = t * w + i;
			if (!g->active[k])
				continue;
			unsigned m = inputs(s, t, i, cols);
			for (unsigned c = 0; c < m; c++) {
				uint32_t p = (t - 1) * w + cols[c];
				g->in[g->in_off[k] + c] = p;
				g->out[g->out_off[p] + fill[p]++] = k;
			}
		}
	free(fill);
	free(cols);
	return 0;
oom:
	free(cols);
	tg_free(g);
	snprintf(err, errlen, "out of memory for a task graph of %u x %u", s->width, s->steps);
	return -ENOMEM;
}

/* ---- kernels ---- */

uint64_t tg_task_flop(const struct tg_kernel *k)
{
	return k->kind == TG_COMPUTE_BOUND ? k->iterations * TG_FLOP_PER_ITER : 0;
}

/* 8 independent chains of x = x * a + b: 16 FLOP per iteration. With a < 1 every chain converges
 * to b / (1 - a), so the values stay normal whatever the iteration count. Eight named variables,
 * not an array: an array indexed in the loop stays in memory, and its store-to-load latency,
 * not the arithmetic, would set the speed. */
static double compute_bound(uint64_t iterations, double seed)
{
	const double a = 0.5 + seed * 0.25, b = 0.125 + seed;
	double x0 = seed, x1 = seed + 1, x2 = seed + 2, x3 = seed + 3, x4 = seed + 4, x5 = seed + 5, x6 = seed + 6,
	       x7 = seed + 7;
	for (uint64_t it = 0; it < iterations; it++) {
		x0 = x0 * a + b;
		x1 = x1 * a + b;
		x2 = x2 * a + b;
		x3 = x3 * a + b;
		x4 = x4 * a + b;
		x5 = x5 * a + b;
		x6 = x6 * a + b;
		x7 = x7 * a + b;
	}
	return x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

/* Each pass reads and writes every double of the buffer once. */
static double memory_bound(uint64_t iterations, double seed, double *scratch, uint32_t n)
{
	if (!n)
		return seed;
	for (uint64_t it = 0; it < iterations; it++)
		for (uint32_t j = 0; j < n; j++)
			scratch[j] = scratch[j] * 0.5 + seed;
	return scratch[n - 1];
}

uint64_t tg_tag(uint64_t run, uint32_t gi, uint32_t k)
{
	uint64_t t = wl_mix64(wl_mix64(run + 0x2545f4914f6cdd1dull) ^ ((uint64_t)gi << 32) ^ k);
	return t ? t : 1;
}

static int bad(char *why, size_t whylen, const struct tg_graph *g, uint32_t gi, uint32_t k, const char *what,
	       uint32_t other)
{
	uint32_t w = g->s.width;
	if (other == UINT32_MAX)
		snprintf(why, whylen, "graph %u task (step %u, column %u): %s", gi, k / w, k % w, what);
	else
		snprintf(why, whylen, "graph %u task (step %u, column %u): %s (step %u, column %u)", gi, k / w, k % w,
			 what, other / w, other % w);
	return -EPROTO;
}

int tg_execute(const struct tg_graph *g, const struct tg_kernel *kn, struct tg_out *out, double *scratch,
	       uint64_t run, uint32_t gi, uint32_t k, char *why, size_t whylen)
{
	double in = 0;
	for (uint32_t e = g->in_off[k]; e < g->in_off[k + 1]; e++) {
		uint32_t p = g->in[e];
		if (out[p].tag != tg_tag(run, gi, p))
			return bad(why, whylen, g, gi, k, "its input is not what this execution of its producer wrote:", p);
		in += out[p].value;
	}
	uint64_t tag = tg_tag(run, gi, k);
	if (out[k].tag == tag)
		return bad(why, whylen, g, gi, k, "ran twice", UINT32_MAX);
	/* the seed depends on the inputs, so the kernel's result is a function of the whole graph */
	double seed = (double)(tag >> 12) * 0x1.0p-52 * 0.5 + (in - (double)(int64_t)in) * 0.25;
	double v = seed;
	if (kn->kind == TG_COMPUTE_BOUND)
		v = compute_bound(kn->iterations, seed);
	else if (kn->kind == TG_MEMORY_BOUND)
		v = memory_bound(kn->iterations, seed, scratch, kn->scratch_doubles);
	out[k].value = v;
	out[k].tag = tag;
	return 0;
}

int tg_verify(const struct tg_graph *g, const struct tg_out *out, uint64_t run, uint32_t gi, char *why,
	      size_t whylen)
{
	for (uint32_t k = 0; k < g->n; k++)
		if (g->active[k] && out[k].tag != tg_tag(run, gi, k))
			return bad(why, whylen, g, gi, k, "did not run, or wrote a wrong output", UINT32_MAX);
	return 0;
}
