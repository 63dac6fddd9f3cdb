/*
 * place.c - the placement helpers core/policy.h offers policies: round-robin and preferred-worker
 * placement, the urgent scan for a sleeping worker, the idle counts as hints, and the distance
 * between two workers' cores (from the topology worker.c reads).
 */
#include "rt.h"

unsigned sb_nworkers(const struct sb_rt *rt)
{
	return rt->n;
}

static unsigned next_rr(struct sb_rt *rt)
{
	/* relaxed: any spread will do */
	return atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed) % rt->n;
}

unsigned sb_place_default(struct sb_rt *rt, struct sb_thread *caller)
{
	if (!rt->cfg.use_preferred_worker_for_current_thread || !caller)
		return next_rr(rt);
	if (caller->preferred == UINT32_MAX)
		caller->preferred = next_rr(rt);
	return caller->preferred;
}

unsigned sb_place_urgent(struct sb_rt *rt, struct sb_thread *caller)
{
	/* the preferred worker is likely busy, so the scan starts after it (memo 000) */
	unsigned base = (sb_place_default(rt, caller) + 1) % rt->n;
	for (unsigned k = 0; k < rt->n; k++) {
		unsigned i = (base + k) % rt->n;
		if (sb_worker_suspended(rt, i))
			return i;
	}
	return base;
}

bool sb_worker_suspended(const struct sb_rt *rt, unsigned i)
{
	/* relaxed: a snapshot, used as a hint */
	return atomic_load_explicit(&rt->w[i].state, memory_order_relaxed) == SB_W_SUSPENDED;
}

unsigned sb_nsuspended(const struct sb_rt *rt)
{
	return atomic_load_explicit(&((struct sb_rt *)rt)->nsuspended, memory_order_relaxed);
}

unsigned sb_nidle(const struct sb_rt *rt)
{
	struct sb_rt *r = (struct sb_rt *)rt;
	/* relaxed: a hint for policies; the wake protocol does not depend on it */
	return atomic_load_explicit(&r->nsuspended, memory_order_relaxed) +
	       atomic_load_explicit(&r->nsearching, memory_order_relaxed);
}

unsigned sb_worker_distance(const struct sb_rt *rt, unsigned a, unsigned b)
{
	return rt->dist ? rt->dist[a * rt->n + b] : (a != b);
}
