/*
 * taskgraph.h - the task graphs of the `patterns` workload and of its peers: TaskBench's
 * dependence patterns (Slaughter et al., SC 2020) over a grid of `width` columns and `steps`
 * timesteps, its kernels, and the check every task makes of its inputs.
 *
 * Owns the shape of a graph (which task feeds which), the kernels, the tags that tie an output
 * to the task and execution that wrote it, and the verification. Does not own how a graph is
 * scheduled: workloads/patterns.c runs it on schedbed's core (per-task counters of missing
 * inputs, the last producer spawns the consumer), peers/patterns_omp.c with OpenMP `depend`
 * clauses and peers/patterns_tbb.cpp with a oneTBB flow graph. Plain C with no runtime in it,
 * so that all three compile the same definitions and do the same work per task.
 *
 * Task (t, i) is slot k = t * width + i. Step 0 has no inputs. For t >= 1 the inputs are tasks
 * of step t - 1 (columns clipped to [0, width) unless said otherwise):
 *   trivial              none: every task is independent
 *   no_comm              i
 *   stencil_1d           i-1, i, i+1
 *   stencil_1d_periodic  i-1, i, i+1 modulo width
 *   dom                  i-1, i (a wavefront: column i cannot run ahead of column i-1)
 *   tree                 a binary tree that fans out from column 0 to the full width over
 *                        ceil(log2 width) steps, then folds back to one task, and again: on the
 *                        way out (t, i) reads i/2, on the way in 2i and 2i+1; the columns a
 *                        level does not use do not exist at that step
 *   fft                  i and i XOR 2^s, s = (t-1) mod floor(log2 width): the butterfly
 *   nearest              the `radix` columns centred on i: i-(radix-1)/2 .. i+radix/2
 *   spread               `radix` columns spaced width/radix apart, starting at i, modulo width
 *   random_nearest       i, and each other column of the nearest window with probability 1/2,
 *                        decided by a hash of (seed, t, i, column)
 *
 * Kernels: compute_bound runs `iterations` of a loop of 8 independent multiply-adds (16 FLOP
 * per iteration, exactly: floating point cannot be reassociated, so the compiler keeps them
 * all); memory_bound makes `iterations` passes over the task's own scratch buffer; empty does
 * nothing. Every task writes one output slot: a tag derived from (execution, graph, slot) and
 * the kernel's value, so a consumer that reads a stale, foreign or missing output notices.
 *
 * Concurrency: a built graph is read-only and shared by every thread. An output slot is written
 * by its task only and read by its consumers, which the scheduler must order after it: that
 * ordering is what the check tests.
 */
#ifndef SB_WORKLOADS_TASKGRAPH_H
#define SB_WORKLOADS_TASKGRAPH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tg_pattern {
	TG_TRIVIAL,
	TG_NO_COMM,
	TG_STENCIL_1D,
	TG_STENCIL_1D_PERIODIC,
	TG_DOM,
	TG_TREE,
	TG_FFT,
	TG_NEAREST,
	TG_SPREAD,
	TG_RANDOM_NEAREST,
};
extern const char *const tg_pattern_names[]; /* NULL-terminated, in enum order */

enum tg_kernel_kind { TG_COMPUTE_BOUND, TG_MEMORY_BOUND, TG_EMPTY };
extern const char *const tg_kernel_names[];

/* Most inputs a task can have (radix is capped to it). */
#define TG_MAX_RADIX 64
/* Largest graph: width x steps task slots. */
#define TG_MAX_SLOTS (1u << 24)
/* FLOP per compute_bound iteration. */
#define TG_FLOP_PER_ITER 16

struct tg_shape {
	int pattern;      /* enum tg_pattern */
	uint32_t width;   /* columns, >= 1 */
	uint32_t steps;   /* timesteps, >= 1 */
	uint32_t radix;   /* nearest, spread, random_nearest: inputs per task, 1..TG_MAX_RADIX */
	uint64_t seed;    /* random_nearest */
};

struct tg_graph {
	struct tg_shape s;
	uint32_t n;         /* slots: width x steps */
	uint32_t nactive;   /* tasks that exist (all slots except tree's unused columns) */
	uint32_t nroots;    /* tasks without inputs */
	uint64_t nedges;
	uint8_t *active;    /* n flags */
	uint32_t *in_off;   /* n + 1 offsets into in[]: the inputs of slot k, as slots of step t-1 */
	uint32_t *in;
	uint32_t *out_off;  /* n + 1 offsets into out[]: the consumers of slot k, slots of step t+1 */
	uint32_t *out;
};

struct tg_kernel {
	int kind;                /* enum tg_kernel_kind */
	uint64_t iterations;
	uint32_t scratch_doubles; /* memory_bound: doubles in each task's scratch buffer */
};

/* One output slot. */
struct tg_out {
	uint64_t tag;
	double value;
};

/* Build the graph of `s` (0), or -EINVAL / -E2BIG / -ENOMEM with one line in err. */
int tg_build(struct tg_graph *g, const struct tg_shape *s, char *err, size_t errlen);
void tg_free(struct tg_graph *g);

/* FLOP of one task of kernel k (0 unless compute_bound). */
uint64_t tg_task_flop(const struct tg_kernel *k);

/* The tag slot k of graph gi holds after execution `run`; never 0. */
uint64_t tg_tag(uint64_t run, uint32_t gi, uint32_t k);

/*
 * Run task k of graph gi in execution `run`: check that every input slot holds the tag its
 * producer writes in this run and that k's own slot does not already (the task ran before),
 * run the kernel (scratch: k's buffer, memory_bound only), write k's output. Returns 0, or
 * -EPROTO with one line in why naming the task and the input that was wrong.
 */
int tg_execute(const struct tg_graph *g, const struct tg_kernel *kn, struct tg_out *out, double *scratch,
	       uint64_t run, uint32_t gi, uint32_t k, char *why, size_t whylen);

/* After an execution: every existing task's slot holds its tag. 0, or -EPROTO naming the first
 * task whose slot does not (it never ran, or wrote the wrong output). */
int tg_verify(const struct tg_graph *g, const struct tg_out *out, uint64_t run, uint32_t gi, char *why,
	      size_t whylen);

/* Index of `name` in a NULL-terminated list, or -1. */
int tg_lookup(const char *const *names, const char *name);

#ifdef __cplusplus
}
#endif

#endif
