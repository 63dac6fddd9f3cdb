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

void wl_arrivals_init(struct wl_client *c, struct wl_arrivals *a, double per_second, unsigned cls)
{
	/* the schedule begins at the workload's start, common to every client (env->start_ns; a
	 * client thread that starts late finds its first arrivals due), or at the first draw */
	*a = (struct wl_arrivals){ .next = c->set->env->start_ns, .mean_gap_ns = per_second > 0 ? 1e9 / per_second : 0,
				   .cls = cls };
	/* relaxed: read by the completion callbacks of this class's jobs, which this client submits
	 * only after this point (the submit and the task's hand-over order it before them) */
	if (per_second > 0)
		atomic_fetch_or_explicit(&c->set->arrival_classes, 1u << cls, memory_order_relaxed);
}

static void draw(struct wl_client *c, struct wl_arrivals *a, uint64_t now)
{
	if (!a->next) /* no common start (wl_arrivals_init): the schedule begins now */
		a->next = now;
	a->next += (uint64_t)wl_rng_exp(&c->rng, a->mean_gap_ns);
	a->pending = true;
}

uint64_t wl_arrival_next(struct wl_client *c, struct wl_arrivals *a)
{
	uint64_t now = sb_now_ns();
	draw(c, a, now);
	if (a->next <= now) {
		if (wl_client_stopping(c))
			return 0;
		/* the client was still busy when this arrival came: it waited in the client's queue */
		atomic_fetch_add_explicit(&c->set->nr_late, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->set->nr_late_ns, now - a->next, memory_order_relaxed);
	} else if (!wl_client_wait_until(c, a->next)) {
		return 0;
	} else {
		now = sb_now_ns();
	}
	/* how far behind its schedule the client issues this one (0 when on time) */
	if (now > a->next && now - a->next > a->lag_max_ns)
		a->lag_max_ns = now - a->next;
	a->pending = false;
	a->issued++;
	return a->next;
}

/* Past this many unissued arrivals of one client, the rest up to the stop are counted by their
 * expected number rather than drawn one by one (a rate of 1e9/s would otherwise draw for minutes). */
#define UNISSUED_DRAWN_MAX (1u << 20)

static void lag_publish(_Atomic uint64_t *max, uint64_t v)
{
	/* relaxed: a maximum read after every client is joined */
	uint64_t cur = atomic_load_explicit(max, memory_order_relaxed);
	while (v > cur && !atomic_compare_exchange_weak_explicit(max, &cur, v, memory_order_relaxed,
								 memory_order_relaxed))
		;
}

void wl_arrivals_end(struct wl_client *c, struct wl_arrivals *a)
{
	if (a->mean_gap_ns <= 0)
		return;
	struct wl_clients *cs = c->set;
	uint64_t unissued = 0;
	/* a bounded run whose client used its quota offered nothing more; otherwise the run stopped
	 * (or failed) and every arrival due before the stop that was not issued counts */
	if (c->quota != 0) {
		uint64_t stop_ns = 0;
		/* acquire: pairs with the harness's seq_cst store of *stop, made after *stop_ns */
		if (atomic_load_explicit(cs->env->stop, memory_order_acquire) && cs->env->stop_ns)
			stop_ns = atomic_load_explicit(cs->env->stop_ns, memory_order_relaxed);
		if (!stop_ns)
			stop_ns = sb_now_ns();
		if (!a->pending)
			draw(c, a, sb_now_ns());
		if (a->next < stop_ns && stop_ns - a->next > a->lag_max_ns)
			a->lag_max_ns = stop_ns - a->next; /* the oldest arrival still waiting at the stop */
		while (a->next < stop_ns && unissued < UNISSUED_DRAWN_MAX) {
			unissued++;
			draw(c, a, a->next);
		}
		if (a->next < stop_ns)
			unissued += (uint64_t)((double)(stop_ns - a->next) / a->mean_gap_ns) + 1;
	}
	/* relaxed: read after every client is joined (wl_clients_counts) */
	atomic_fetch_add_explicit(&cs->nr_issued[a->cls], a->issued, memory_order_relaxed);
	atomic_fetch_add_explicit(&cs->nr_unissued[a->cls], unissued, memory_order_relaxed);
	atomic_fetch_add_explicit(&cs->nr_offered[a->cls], a->issued + unissued, memory_order_relaxed);
	lag_publish(&cs->lag_max_ns, a->lag_max_ns);
}
