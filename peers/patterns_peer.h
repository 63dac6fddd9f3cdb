/*
 * patterns_peer.h - what the task-graph peers share: the command line, the graphs, the output
 * slots, timing each execution, checking it, and printing one line per execution.
 *
 * A peer (patterns_omp.c: OpenMP tasks with `depend` clauses; patterns_tbb.cpp: a oneTBB flow
 * graph) supplies only how one execution of the graphs is scheduled. The graphs, kernels and
 * checks are workloads/taskgraph.c, the same code the `patterns` workload runs, so a peer does
 * exactly the work per task that schedbed's policies do.
 *
 * Usage: PEER [--threads N] [--pattern P] [--kernel K] [--width W] [--steps S] [--graphs G]
 *             [--iterations I] [--radix R] [--scratch-bytes B] [--reps N] [--seed S]
 * Prints "rep,wall_ns,tasks,flop" and one row per execution; exits 1 naming the task when an
 * input was wrong, 2 on bad options.
 */
#ifndef SB_PEERS_PATTERNS_PEER_H
#define SB_PEERS_PATTERNS_PEER_H

#include <stdint.h>

#include "../workloads/taskgraph.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pp_ctx {
	unsigned threads;
	unsigned graphs;
	uint32_t n;             /* slots per graph */
	struct tg_graph *g;     /* graphs */
	struct tg_kernel kern;
	struct tg_out *out;     /* graphs x n output slots */
	double *scratch;        /* memory_bound: graphs x n buffers */
	uint64_t run;           /* the execution under way; set before the peer's execute() */
	void *peer;             /* the peer's own state */
};

struct pp_peer {
	const char *name;
	/* Once, before the first execution (a flow graph is built here). 0 or -errno. */
	int (*setup)(struct pp_ctx *c);
	/* One execution of every graph: every task runs pp_task once, after its inputs' tasks;
	 * returns when all have run. */
	void (*execute)(struct pp_ctx *c);
	void (*teardown)(struct pp_ctx *c);
};

/* The body of task k of graph gi (any thread): tg_execute, remembering the first failure. */
void pp_task(struct pp_ctx *c, uint32_t gi, uint32_t k);

int pp_main(int argc, char **argv, const struct pp_peer *peer);

#ifdef __cplusplus
}
#endif

#endif
