/*
 * pacing.c - waiting until a time and open-loop arrivals (common.h).
 */
#include "common.h"

#include <math.h>
#include <time.h>

/* ---- waiting and open-loop arrivals ---- */

/* Sleep until `when`, running this thread's serial work meanwhile; stop early once *stop is
 * raised (when given). Returns false if it stopped early. */
static bool wait_until(uint64_t when, _Atomic bool *stop)
{
	for (;;) {
		uint64_t now = sb_now_ns();
		if (now >= when)
			return true;
		/* relaxed: a flag polled every ms at most */
		if (stop && atomic_load_explicit(stop, memory_order_relaxed))
			return false;
		if (sb_thread_run_pending())
			continue;
		uint64_t d = when - now;
		if (d > 1000000)
			d = 1000000; /* look at our own serial queue (and the stop flag) at least every ms */
		sb_exec_sleep_ns(d);
	}
}

void wl_wait_until(uint64_t when)
{
	wait_until(when, NULL);
}

bool wl_client_wait_until(struct wl_client *c, uint64_t when)
{
	return wait_until(when, c->set->env->stop);
}

void wl_arrivals_init(struct wl_arrivals *a, double per_second)
{
	a->next = 0;
	a->mean_gap_ns = per_second > 0 ? 1e9 / per_second : 0;
}

uint64_t wl_arrival_next(struct wl_client *c, struct wl_arrivals *a)
{
	uint64_t now = sb_now_ns();
	if (!a->next)
		a->next = now;
	a->next += (uint64_t)wl_rng_exp(&c->rng, a->mean_gap_ns);
	if (a->next <= now) {
		/* the client was still busy when this arrival came: it waited in the client's queue */
		atomic_fetch_add_explicit(&c->set->nr_late, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->set->nr_late_ns, now - a->next, memory_order_relaxed);
		return wl_client_stopping(c) ? 0 : a->next;
	}
	return wl_client_wait_until(c, a->next) ? a->next : 0;
}
