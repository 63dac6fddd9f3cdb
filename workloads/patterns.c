/*
 * patterns.c - TaskBench's task graphs (Slaughter et al., SC 2020) run the engine's way: the
 * workload behind METG(50%), the smallest task granularity at which a scheduler still keeps the
 * machine at half of its peak FLOP/s (scripts/metg.py).
 *
 * One job is one execution of `graphs` independent graphs of `width` columns and `steps`
 * timesteps with the dependence pattern `pattern` (taskgraph.h defines the patterns and
 * kernels). A launcher task spawns every task without inputs; every other task has a counter of
 * inputs still missing, and the producer whose decrement takes it to zero spawns it: no barrier
 * between steps, exactly as a DAG controller enables a node when its last upstream finishes.
 * Every task checks that each input holds the output its producer writes in this execution and
 * that it has not run before; after the job the client checks every task's output. A wrong one
 * fails the job (SB_ERROR) and the run (wl_wrong, exit 1 with the task named). `fault` plants
 * such a bug, so tests can show the checks are not vacuous. One client runs the executions back
 * to back; each job's latency in jobs.csv is the execution's wall time. Classes: the patterns.
 *
 * Does not own the graph shapes (taskgraph.c, shared with peers/patterns_*) or the METG sweep.
 * Concurrency: the graphs are read-only; a task's output slot is written by that task only
 * and read by its consumers, which its counter orders after it; counters and slots are reset
 * by the client between jobs, while no task of the workload runs.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "../core/exec.h"
#include "common.h"
#include "taskgraph.h"

enum { F_NONE, F_WRONG_OUTPUT, F_LOST_TASK };
static const char *const fault_names[] = { "none", "wrong_output", "lost_task", NULL };

struct patterns_params {
	int pattern;
	int kernel;
	int64_t width;
	int64_t steps;
	int64_t graphs;
	int64_t iterations;
	int64_t radix;
	int64_t scratch_bytes;
	int fault;
};

#define P struct patterns_params
static const struct sb_param patterns_param_table[] = {
	SB_PARAM_ENUM(P, pattern, TG_STENCIL_1D, tg_pattern_names, "dependence pattern between consecutive steps"),
	SB_PARAM_ENUM(P, kernel, TG_COMPUTE_BOUND, tg_kernel_names, "what each task computes"),
	SB_PARAM_INT(P, width, 4, 1, 4096, "tasks per step (columns)"),
	SB_PARAM_INT(P, steps, 100, 1, 1000000, "timesteps"),
	SB_PARAM_INT(P, graphs, 1, 1, 16, "independent graphs in each job"),
	SB_PARAM_INT(P, iterations, 1024, 0, 1000000000,
		     "kernel iterations per task (compute_bound: 16 FLOP each; memory_bound: passes over scratch)"),
	SB_PARAM_INT(P, radix, 3, 1, TG_MAX_RADIX, "inputs per task of nearest, spread and random_nearest"),
	SB_PARAM_INT(P, scratch_bytes, 8192, 8, 1 << 26, "memory_bound: each task's scratch buffer, bytes"),
	SB_PARAM_ENUM(P, fault, F_NONE, fault_names,
		      "testing: one task writes a wrong output or never enables its consumers; the run must fail"),
	SB_PARAM_END,
};
#undef P

/* All graphs' scratch buffers together may not exceed this. */
#define SCRATCH_MAX (1ull << 30)

struct patterns {
	struct wl_clients cs; /* first: see common.h */
	struct patterns_params p;
	struct tg_kernel kern;
	struct tg_graph *g;          /* p.graphs graphs, all of the same shape */
	uint32_t n;                  /* slots per graph */
	struct tg_out *out;          /* graphs x n output slots */
	_Atomic uint32_t *pending;   /* graphs x n: inputs still missing; acq_rel decrements */
	double *scratch;             /* memory_bound: graphs x n buffers */
	int kernel_cost;             /* what prices a task's kernel in a simulation (enum sb_cost) ... */
	double kernel_units;         /* ... and how many of it: the iterations (x the scratch's doubles) */
	uint32_t fault_slot;         /* the task of graph 0 that `fault` breaks */
	uint64_t shape_sig;          /* hash of every graph's edges: the client's job shape */
	uint64_t run;                /* this execution's number; written by the client before the
	                                submit, which publishes it to the tasks */
};
_Static_assert(offsetof(struct patterns, cs) == 0, "workload state starts with its clients");

static enum sb_result pattern_task(struct sb_task *t)
{
	struct patterns *s = t->arg;
	uint32_t gi = (uint32_t)t->u[0], k = (uint32_t)t->u[1];
	const struct tg_graph *g = &s->g[gi];
	struct tg_out *out = s->out + (size_t)gi * s->n;
	double *scratch = s->scratch ? s->scratch + ((size_t)gi * s->n + k) * s->kern.scratch_doubles : NULL;
	char why[200];
	if (tg_execute(g, &s->kern, out, scratch, s->run, gi, k, why, sizeof why) != 0) {
		wl_wrong(&s->cs, "%s: %s", tg_pattern_names[s->p.pattern], why);
		return SB_ERROR;
	}
	/* natively the kernel took its CPU; a simulation charges what the cost table says it costs */
	if (s->kernel_units > 0)
		sb_exec_did((enum sb_cost)s->kernel_cost, s->kernel_units);
	if (gi == 0 && k == s->fault_slot) {
		if (s->p.fault == F_WRONG_OUTPUT)
			out[k].tag ^= 1;
		else if (s->p.fault == F_LOST_TASK)
			return SB_DONE;
	}
	_Atomic uint32_t *pending = s->pending + (size_t)gi * s->n;
	for (uint32_t e = g->out_off[k]; e < g->out_off[k + 1]; e++) {
		uint32_t c = g->out[e];
		/* acq_rel: the release publishes our output slot; the decrement that reaches zero
		 * acquires every producer's slot before it spawns the consumer; pairs with the other
		 * producers' decrements of the same counter */
		if (atomic_fetch_sub_explicit(&pending[c], 1, memory_order_acq_rel) == 1) {
			struct sb_task *n = wl_task(&s->cs, t->job, pattern_task, s);
			n->u[0] = gi;
			n->u[1] = c;
			sb_spawn(n);
		}
	}
	return SB_DONE;
}

/* The job's root: spawns every task without inputs, of every graph, in step order. */
static enum sb_result launch(struct sb_task *t)
{
	struct patterns *s = t->arg;
	for (uint32_t gi = 0; gi < (uint32_t)s->p.graphs; gi++) {
		const struct tg_graph *g = &s->g[gi];
		for (uint32_t k = 0; k < s->n; k++) {
			if (!g->active[k] || g->in_off[k] != g->in_off[k + 1])
				continue;
			struct sb_task *n = wl_task(&s->cs, t->job, pattern_task, s);
			n->u[0] = gi;
			n->u[1] = k;
			sb_spawn(n);
		}
	}
	return SB_DONE;
}

static void client(struct wl_client *c)
{
	struct patterns *s = c->set->user;
	uint64_t jobno = 0;
	while (wl_client_more(c)) {
		s->run = (c->set->env->seed << 32) + ++jobno;
		for (uint32_t gi = 0; gi < (uint32_t)s->p.graphs; gi++) {
			const struct tg_graph *g = &s->g[gi];
			for (uint32_t k = 0; k < s->n; k++)
				/* relaxed: no task of this workload runs now; the submit publishes it */
				atomic_store_explicit(&s->pending[(size_t)gi * s->n + k], g->in_off[k + 1] - g->in_off[k],
						      memory_order_relaxed);
		}
		/* one execution is one compute job: never lightweight */
		struct sb_job_desc d = { .cls = (unsigned)s->p.pattern, .work_level = SB_WL_INFINITY, .done = wl_job_done,
					 .arg = s };
		struct sb_job *j = sb_job_create(c->set->env->rt, &d);
		wl_client_submit(c, j, wl_task(&s->cs, j, launch, s), s->shape_sig ^ jobno);
		bool finished = sb_job_wait(j);
		/* a cancelled job (the drain ran out, or the run failed) dropped some of its tasks, and
		 * a failed one has reported its wrong input already: only a complete one is verified */
		bool complete = finished && sb_job_status(j) == SB_JOB_OK;
		sb_job_put(j);
		if (!finished)
			break;
		if (!complete)
			continue;
		bool right = true;
		for (uint32_t gi = 0; gi < (uint32_t)s->p.graphs && right; gi++) {
			char why[200];
			if (tg_verify(&s->g[gi], s->out + (size_t)gi * s->n, s->run, gi, why, sizeof why) != 0) {
				wl_wrong(&s->cs, "%s: %s", tg_pattern_names[s->p.pattern], why);
				right = false;
			}
		}
		if (right)
			/* relaxed: a count, read after the run */
			atomic_fetch_add_explicit(&s->cs.nr_verified, 1, memory_order_relaxed);
	}
}

/* Everything but the clients (which a failed start never started). */
static void free_state(struct patterns *s)
{
	for (int64_t gi = 0; s->g && gi < s->p.graphs; gi++)
		tg_free(&s->g[gi]);
	free(s->g);
	free(s->out);
	free(s->pending);
	free(s->scratch);
	free(s);
}

static void patterns_destroy(void *st)
{
	struct patterns *s = st;
	wl_clients_free(&s->cs);
	free_state(s);
}

static int patterns_start(const struct wl_env *env, const void *params, void **state, char *err, size_t errlen)
{
	const struct patterns_params *p = params;
	if ((uint64_t)p->width * (uint64_t)p->steps > TG_MAX_SLOTS) {
		snprintf(err, errlen, "parameters 'width' x 'steps' = %lld tasks; at most %u",
			 (long long)(p->width * p->steps), TG_MAX_SLOTS);
		return -EINVAL;
	}
	uint64_t slots = (uint64_t)p->graphs * (uint64_t)(p->width * p->steps);
	if (p->kernel == TG_MEMORY_BOUND && slots * (uint64_t)p->scratch_bytes > SCRATCH_MAX) {
		snprintf(err, errlen, "parameters 'graphs' x 'width' x 'steps' x 'scratch_bytes' = %llu bytes of scratch; at most %llu",
			 (unsigned long long)(slots * (uint64_t)p->scratch_bytes), SCRATCH_MAX);
		return -EINVAL;
	}
	struct patterns *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->p = *p;
	s->kern = (struct tg_kernel){ .kind = p->kernel, .iterations = (uint64_t)p->iterations,
				      .scratch_doubles = (uint32_t)(p->scratch_bytes / sizeof(double)) };
	s->n = (uint32_t)(p->width * p->steps);
	s->kernel_cost = p->kernel == TG_COMPUTE_BOUND ? SB_COST_COMPUTE_ITER : SB_COST_MEMORY_DOUBLE;
	s->kernel_units = p->kernel == TG_EMPTY ? 0
			  : (double)p->iterations * (p->kernel == TG_MEMORY_BOUND ? s->kern.scratch_doubles : 1);
	s->g = calloc((size_t)p->graphs, sizeof *s->g);
	s->out = calloc(slots, sizeof *s->out);
	s->pending = calloc(slots, sizeof *s->pending);
	if (p->kernel == TG_MEMORY_BOUND)
		s->scratch = calloc(slots * s->kern.scratch_doubles, sizeof(double));
	if (!s->g || !s->out || !s->pending || (p->kernel == TG_MEMORY_BOUND && !s->scratch)) {
		free_state(s);
		snprintf(err, errlen, "out of memory for %llu tasks", (unsigned long long)slots);
		return -ENOMEM;
	}
	for (int64_t gi = 0; gi < p->graphs; gi++) {
		struct tg_shape sh = { .pattern = p->pattern, .width = (uint32_t)p->width, .steps = (uint32_t)p->steps,
				       .radix = (uint32_t)p->radix, .seed = wl_mix64(env->seed ^ wl_mix64((uint64_t)gi)) };
		int r = tg_build(&s->g[gi], &sh, err, errlen);
		if (r) {
			free_state(s);
			return r;
		}
	}
	for (int64_t gi = 0; gi < p->graphs; gi++)
		for (uint64_t e = 0; e < s->g[gi].nedges; e++)
			s->shape_sig = wl_mix64(s->shape_sig ^ s->g[gi].in[e]);
	/* the fault hits a task in the middle of graph 0 (the first that exists from there on) */
	s->fault_slot = (uint32_t)((p->steps / 2) * p->width + p->width / 2);
	while (s->fault_slot + 1 < s->n && !s->g[0].active[s->fault_slot])
		s->fault_slot++;
	*state = s;
	return wl_clients_start(&s->cs, env, 1, client, s, err, errlen);
}

const struct sb_workload patterns_workload = {
	.start = patterns_start,
	.done = wl_state_done,
	.stop = wl_state_stop,
	.counts = wl_state_counts,
	.destroy = patterns_destroy,
	.name = "patterns",
	.description = "TaskBench task graphs (stencil, tree, fft, ...) with per-task input counters, every input checked (METG)",
	.classes = tg_pattern_names,
	.params = patterns_param_table,
	.params_size = sizeof(struct patterns_params),
};
