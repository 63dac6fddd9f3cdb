/*
 * patterns_omp.c - the patterns workload's task graphs on OpenMP tasks (libgomp): one thread
 * creates every task of an execution in step order, each with `depend(in:)` on its inputs'
 * output slots and `depend(out:)` on its own, and the team runs them as the runtime resolves the
 * dependences. This is how an OpenMP program states a task graph, and the way TaskBench's
 * OpenMP implementation runs it. Options and output: patterns_peer.h.
 */
#include <omp.h>

#include "patterns_peer.h"

static void omp_execute(struct pp_ctx *c)
{
#pragma omp parallel num_threads(c->threads)
#pragma omp single
	for (uint32_t gi = 0; gi < c->graphs; gi++) {
		const struct tg_graph *g = &c->g[gi];
		struct tg_out *o = c->out + (size_t)gi * c->n;
		for (uint32_t k = 0; k < c->n; k++) {
			if (!g->active[k])
				continue;
			const uint32_t *in = g->in + g->in_off[k];
			uint32_t nin = g->in_off[k + 1] - g->in_off[k];
			/* used only inside the depend clauses, which gcc 12's unused-variable check does
			 * not see */
			(void)o;
			(void)nin;
#pragma omp task firstprivate(gi, k) depend(iterator(e = 0 : nin), in : o[in[e]]) depend(out : o[k])
			pp_task(c, gi, k);
		}
	}
	/* the parallel region's closing barrier waits for every task */
}

int main(int argc, char **argv)
{
	static const struct pp_peer peer = { .name = "patterns_omp", .execute = omp_execute };
	return pp_main(argc, argv, &peer);
}
