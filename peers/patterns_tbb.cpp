/*
 * patterns_tbb.cpp - the patterns workload's task graphs on a oneTBB flow graph: one
 * continue_node per task, an edge per dependence, built once; an execution puts a message into
 * every node without inputs and waits for the graph. A continue_node fires when it has heard
 * from all its predecessors and then resets its count, so the same graph runs every execution.
 * Parallelism is capped at --threads with tbb::global_control (the waiting thread takes part).
 * Options and output: patterns_peer.h.
 */
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>

#include <memory>
#include <vector>

#include "patterns_peer.h"

namespace flow = tbb::flow;

struct tbb_state {
	std::unique_ptr<tbb::global_control> limit;
	flow::graph graph;
	std::vector<std::unique_ptr<flow::continue_node<flow::continue_msg>>> nodes; // graphs x n, null where no task
	std::vector<flow::continue_node<flow::continue_msg> *> roots;
};

static int tbb_setup(pp_ctx *c)
{
	auto *s = new tbb_state;
	s->limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, c->threads);
	s->nodes.resize((size_t)c->graphs * c->n);
	for (uint32_t gi = 0; gi < c->graphs; gi++) {
		const tg_graph *g = &c->g[gi];
		for (uint32_t k = 0; k < c->n; k++) {
			if (!g->active[k])
				continue;
			auto &node = s->nodes[(size_t)gi * c->n + k];
			node = std::make_unique<flow::continue_node<flow::continue_msg>>(
				s->graph, [c, gi, k](const flow::continue_msg &) { pp_task(c, gi, k); });
			for (uint32_t e = g->in_off[k]; e < g->in_off[k + 1]; e++)
				flow::make_edge(*s->nodes[(size_t)gi * c->n + g->in[e]], *node);
			if (g->in_off[k] == g->in_off[k + 1])
				s->roots.push_back(node.get());
		}
	}
	c->peer = s;
	return 0;
}

static void tbb_execute(pp_ctx *c)
{
	auto *s = static_cast<tbb_state *>(c->peer);
	for (auto *r : s->roots)
		r->try_put(flow::continue_msg());
	s->graph.wait_for_all();
}

static void tbb_teardown(pp_ctx *c)
{
	delete static_cast<tbb_state *>(c->peer);
}

int main(int argc, char **argv)
{
	static const pp_peer peer = { "patterns_tbb", tbb_setup, tbb_execute, tbb_teardown };
	return pp_main(argc, argv, &peer);
}
