/*
 * global_threads.c - `global`'s run-time thread count, DuckDB's SET threads (memo 002; global.c
 * has the queues and claims): the job-count schedule, the stop and relaunch of a shrink, who may
 * claim, and the idle step (which also keeps a waiter for the claim lock awake, see global.c).
 *
 * Owns. The thread count (active, target, gen) and each worker's acknowledgement of a shrink
 * (seen_gen), kept in struct global (global_impl.h).
 *
 * Algorithm. threads_low=N (DuckDB's SET threads at run time; 0, the default, keeps the count
 * fixed): every resize_every jobs (counted in job_start, so the schedule is the same for every run
 * of a seed) the thread count alternates between thread_count and N, starting with a shrink. Only
 * workers [0, active) claim. A grow raises `active` at once (DuckDB launches the extra threads) and
 * asks the core to wake a sleeper. A shrink does what DuckDB's RelaunchThreads does: it stops every
 * thread, joining each after its current task, and then launches N. Here `active` drops to 0, so
 * nobody claims, and each worker acknowledges the stop (seen_gen) when it comes back for work; once
 * every worker has acknowledged or sleeps, the last one relaunches: active becomes N. Until then
 * queued tasks wait: that wait is the price of a shrink. A worker beyond `active` claims nothing;
 * when it is woken (the core wakes any sleeper for a new task) or finds tasks queued, it passes the
 * wake-up on to a sleeping worker below `active` (idle: out->wake), so a task never waits on an
 * inactive worker while an active one sleeps, and it suspends at once (out->suspend_now) instead of
 * polling.
 *
 * Invariants. With threads_low, a worker at or beyond `active` claims nothing (its buffer, claimed
 * before the change, is still run). The stop of a shrink is DuckDB's, not a barrier: a claim that
 * read the old count just before the stop may still take a task (as a DuckDB thread finishes the
 * loop it is in), and a worker in its re-check before suspending reads as stopped, so the relaunch
 * may come while it runs a task claimed in that re-check.
 *
 * Limits. The thread count changes on a job-count schedule, not on a client's command, and
 * threads are not created or joined (the stopped ones sleep): the price of a shrink measured is
 * the stop, not thread creation; in check mode a shrink that waits behind a task longer than
 * stall_limit is reported as a stall (tasks queued while workers rest).
 */
#include "global_impl.h"

/*
 * The boundary job of each resize_every changes the count: odd boundaries shrink, even ones
 * grow. One thread reaches each boundary (the fetch_add), and resize_every >= 100 keeps two
 * boundaries from overlapping in practice; if they did, the later target would simply win.
 */
void global_threads_job_start(struct global *g)
{
	if (!g->p.threads_low)
		return;
	/* relaxed: a count; only its value matters */
	uint64_t n = atomic_fetch_add_explicit(&g->njobs, 1, memory_order_relaxed) + 1;
	uint64_t every = (uint64_t)g->p.resize_every;
	if (n % every)
		return;
	bool shrink = (n / every) % 2 == 1;
	unsigned to = shrink ? (unsigned)g->p.threads_low : g->nworkers;
	atomic_fetch_add_explicit(&g->nr_changes, 1, memory_order_relaxed);
	/* seq_cst, the target and a grow's load of active: against a relaunch that sets active
	 * and then reads target (see relaunch), one side sees the other's store */
	atomic_store_explicit(&g->target, to, memory_order_seq_cst);
	if (shrink) {
		atomic_fetch_add_explicit(&g->gen, 1, memory_order_relaxed);
		/* release: pairs with the acquire load in global_may_claim, so a worker that sees the stop
		 * sees this shrink's gen and target too */
		atomic_store_explicit(&g->active, 0, memory_order_release);
		return;
	}
	/* a grow: start the extra workers now, unless a shrink's relaunch is pending (it starts
	 * `target`) */
	unsigned a = atomic_load_explicit(&g->active, memory_order_seq_cst);
	while (a && !atomic_compare_exchange_weak_explicit(&g->active, &a, to, memory_order_seq_cst,
							   memory_order_seq_cst))
		;
	sb_work_available(g->rt); /* a sleeper may now claim what waits */
}

/*
 * A shrink is pending (active == 0): acknowledge it, and relaunch if every other worker has
 * acknowledged it too or sleeps (a sleeping worker runs no task). seq_cst on the ack and the
 * loads of the others': two workers finishing their last tasks together must not both miss the
 * other's ack (store buffering), or neither would relaunch and the queue would wait for the
 * next submit's wake-up. Returns whether self may claim after it.
 */
static bool relaunch(struct global *g, unsigned self)
{
	/* relaxed: ordered after the acquire load of active == 0 that brought us here */
	uint32_t gen = atomic_load_explicit(&g->gen, memory_order_relaxed);
	atomic_store_explicit(&g->w[self].seen_gen, gen, memory_order_seq_cst);
	for (unsigned v = 0; v < g->nworkers; v++)
		if (v != self && atomic_load_explicit(&g->w[v].seen_gen, memory_order_seq_cst) != gen &&
		    !sb_worker_suspended(g->rt, v))
			return false; /* v is still in a task it took before the stop */
	unsigned stopped = 0, to = atomic_load_explicit(&g->target, memory_order_seq_cst);
	/* one of the workers that get here relaunches, the others see its count */
	if (atomic_compare_exchange_strong_explicit(&g->active, &stopped, to, memory_order_seq_cst,
						    memory_order_relaxed)) {
		atomic_fetch_add_explicit(&g->nr_relaunch, 1, memory_order_relaxed);
		/* A grow that stored its target after our load saw active == 0 and left the count to
		 * us (seq_cst on both sides: it sees our count, or we see its target). Follow the
		 * target until it holds still; a CAS that fails means a grow or a new shrink has
		 * already set the count itself. */
		for (;;) {
			unsigned now = atomic_load_explicit(&g->target, memory_order_seq_cst), was = to;
			if (now == to || !atomic_compare_exchange_strong_explicit(&g->active, &was, now,
										  memory_order_seq_cst,
										  memory_order_relaxed))
				break;
			to = now;
		}
		sb_work_available(g->rt); /* the stopped workers slept: one wakes to look at the queue */
	}
	return self < atomic_load_explicit(&g->active, memory_order_relaxed);
}

bool global_may_claim(struct global *g, unsigned self)
{
	/* acquire: pairs with the release store of a shrink (see global_job_start) */
	unsigned a = atomic_load_explicit(&g->active, memory_order_acquire);
	if (self < a)
		return true;
	return a ? false : relaunch(g, self);
}

/* The first sleeping worker below the count, to pass a wake-up on to; -1 if none sleeps. */
static int active_sleeper(struct global *g, unsigned active)
{
	for (unsigned v = 0; v < active; v++)
		if (sb_worker_suspended(g->rt, v))
			return (int)v;
	return -1;
}

/*
 * Out of work with claim_lock_ns set: while a queue holds tasks, stay awake and try the lock
 * again (the holder claims at most `batch` and may leave the rest). Whether the queues are
 * empty is read relaxed and may be stale: read empty while a task is being pushed, we may
 * suspend, and the push's own wake-up covers us (the core's wake protocol, as for any
 * SB_TO_ANY submit); read non-empty after the last task is taken, we poll once more.
 */
struct sb_task *global_idle(void *st, unsigned self, struct sb_idle *out)
{
	struct global *g = st;
	if (g->p.threads_low) {
		/* relaxed: a stale count only moves a wake-up to a worker that finds nothing, or
		 * lets this one poll once more */
		unsigned a = atomic_load_explicit(&g->active, memory_order_relaxed);
		if (self >= a) { /* a == 0: stopped by a shrink, whose last worker back relaunches */
			/* Beyond the count with tasks queued: we may have been woken for them, or a
			 * producer left them to us as a searcher; hand the wake-up to an active
			 * sleeper. Only from the re-check before suspending (we read as suspended
			 * there), which runs after the barrier (W) and so sees every task queued
			 * before a producer counted us: one hand-off per visit, not two. */
			if (a && sb_worker_suspended(g->rt, self) && global_queued(g, -1))
				out->wake = active_sleeper(g, a);
			/* a stopped thread does not poll: suspend without the empty rounds, or every
			 * wake-up that lands here would spin a core DuckDB's smaller pool does not have */
			out->suspend_now = true;
			return NULL;
		}
	}
	/* Quartz's threads wait on the row lock asleep in the database, not on a core: a waiter
	 * that kept its core would starve the holder whenever threads outnumber cores (24 workers on
	 * 2 cores took 81 s to drop 1,056 cancelled tasks), so it yields between tries */
	if (g->p.claim_lock_ns && global_queued(g, -1))
		out->stay_awake = out->yield = true;
	return NULL;
}
