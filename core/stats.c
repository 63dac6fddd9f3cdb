/*
 * stats.c - histograms, recordings and the read side of per-thread counters (see stats.h).
 */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#include "rt.h"

const char *const sb_counter_names[SB_NR_COUNTERS] = {
	[SB_C_RUN] = "tasks",
	[SB_C_STICKY] = "sticky",
	[SB_C_STOLEN] = "stolen",
	[SB_C_SPAWN] = "spawned",
	[SB_C_TO_CALLER] = "to_caller",
	[SB_C_YIELD] = "yields",
	[SB_C_BLOCKED] = "blocked",
	[SB_C_ERROR] = "errors",
	[SB_C_DROPPED] = "dropped",
	[SB_C_COND_CHECK] = "cond_checks",
	[SB_C_COND_FALSE] = "cond_not_ready",
	[SB_C_STEAL_SWEEP] = "steal_sweeps",
	[SB_C_SUSPEND] = "suspends",
	[SB_C_WOKEN] = "woken",
	[SB_C_WAKEUP_RUN] = "wakeup_runs",
	[SB_C_WAKES_SENT] = "wakes_sent",
	[SB_C_TEARDOWN] = "teardowns",
	[SB_C_UNFINISHED] = "unfinished",
	[SB_C_JOBS_SUBMITTED] = "jobs_submitted",
	[SB_C_PREEMPT_REQ] = "preempt_requests",
	[SB_C_BUSY_NS] = "busy_ns",
	[SB_C_IDLE_NS] = "idle_ns",
	[SB_C_SUSPEND_NS] = "suspended_ns",
	[SB_C_WAKE_NS] = "wake_ns",
	[SB_C_SWEEP_NS] = "sweep_ns",
	[SB_C_LOCK_WAITS] = "lock_waits",
	[SB_C_LOCK_NS] = "lock_wait_ns",
	[SB_C_IDLE_YIELD] = "idle_yields",
	[SB_C_SPIN_YIELD] = "spin_yields",
	[SB_C_JOB_WAIT] = "job_waits",
	[SB_C_JOB_WAKE] = "job_wakes",
};

/* What each counter counts, for `schedbed outputs` (workers.csv columns, summary.json counters). */
const char *const sb_counter_help[SB_NR_COUNTERS] = {
	[SB_C_RUN] = "tasks run (every kind; dropped ones not included)",
	[SB_C_STICKY] = "of those, sticky tasks",
	[SB_C_STOLEN] = "of those, tasks a steal sweep obtained",
	[SB_C_SPAWN] = "tasks this thread submitted",
	[SB_C_TO_CALLER] = "of those, tasks the policy handed back to the submitting thread to run itself",
	[SB_C_YIELD] = "task bodies that returned yield (re-queued)",
	[SB_C_BLOCKED] = "task bodies that returned blocked (resumed later)",
	[SB_C_ERROR] = "task bodies that returned an error",
	[SB_C_DROPPED] = "tasks of cancelled jobs dropped without running",
	[SB_C_COND_CHECK] = "conditional-task checks evaluated",
	[SB_C_COND_FALSE] = "of those, checks that said not yet",
	[SB_C_STEAL_SWEEP] = "steal sweeps over the other workers",
	[SB_C_SUSPEND] = "suspensions (futex waits)",
	[SB_C_WOKEN] = "suspensions ended by a wake-up rather than the timeout",
	[SB_C_WAKEUP_RUN] = "tasks run first after a suspension (jogasaki's wakeup_run)",
	[SB_C_WAKES_SENT] = "futex wake-ups this thread sent",
	[SB_C_TEARDOWN] = "job teardowns run",
	[SB_C_UNFINISHED] = "of those, jobs ended by a cancel (the drain ran out, a shutdown, a failed run)",
	[SB_C_JOBS_SUBMITTED] = "jobs this thread submitted",
	[SB_C_PREEMPT_REQ] = "yield requests the preemption monitor made of this worker's task",
	[SB_C_BUSY_NS] = "ns running tasks or looking for tasks it then found (workers only)",
	[SB_C_IDLE_NS] = "ns awake finding nothing (workers only)",
	[SB_C_SUSPEND_NS] = "ns suspended (workers only)",
	[SB_C_WAKE_NS] = "ns from a waker claiming this sleeping worker to the worker running again, summed over "
			 "woken (workers only; over woken: the mean wake-up latency)",
	[SB_C_SWEEP_NS] = "ns inside steal sweeps, found something or not (workers only; every 16th sweep timed and "
			  "counted 16 times, an estimate)",
	[SB_C_LOCK_WAITS] = "times this thread found one of the core's shared locks (task depot, queue segment pool) taken",
	[SB_C_LOCK_NS] = "ns this thread waited for those locks",
	[SB_C_IDLE_YIELD] = "times the worker, out of work, gave its CPU away because the policy said its wait needs another "
			    "thread to run (global's claim-lock waiters; workers only)",
	[SB_C_SPIN_YIELD] = "times the worker, spinning out of work before it suspends, offered its CPU to any thread "
			    "waiting for it (every worker_spin_yield empty rounds; workers only)",
	[SB_C_JOB_WAIT] = "times this thread parked waiting for a job to end (request threads; a park per wait, "
			  "however many jobs ended meanwhile)",
	[SB_C_JOB_WAKE] = "futex wake-ups this thread sent to threads waiting for a job it ended (not in wakes_sent, "
			  "which counts wake-ups of workers)",
};

unsigned sb_hist_bucket(uint64_t v)
{
	if (v < SB_HIST_LINEAR)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);  /* >= 6 */
	unsigned sub = (unsigned)(v >> (e - SB_HIST_SUB_BITS)) & ((1u << SB_HIST_SUB_BITS) - 1);
	return SB_HIST_LINEAR + (e - 6) * (1u << SB_HIST_SUB_BITS) + sub;
}

uint64_t sb_hist_bucket_high(unsigned b)
{
	if (b < SB_HIST_LINEAR)
		return b;
	unsigned k = b - SB_HIST_LINEAR;
	unsigned e = k / (1u << SB_HIST_SUB_BITS) + 6;
	uint64_t sub = k % (1u << SB_HIST_SUB_BITS);
	uint64_t lo = ((uint64_t)1 << e) | (sub << (e - SB_HIST_SUB_BITS));
	uint64_t width = (uint64_t)1 << (e - SB_HIST_SUB_BITS);
	return lo + width - 1;
}

void sb_hist_record(struct sb_hist *h, uint64_t v)
{
	if (h->count == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	h->sum += v;
	h->b[sb_hist_bucket(v)]++;
}

void sb_hist_merge(struct sb_hist *into, const struct sb_hist *from)
{
	if (!from->count)
		return;
	if (!into->count || from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
	into->count += from->count;
	into->sum += from->sum;
	for (unsigned i = 0; i < SB_HIST_BUCKETS; i++)
		into->b[i] += from->b[i];
}

uint64_t sb_hist_quantile(const struct sb_hist *h, double q)
{
	if (!h->count)
		return 0;
	if (q >= 1.0)
		return h->max;
	uint64_t rank = (uint64_t)(q * (double)h->count);
	if (rank >= h->count)
		rank = h->count - 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < SB_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen > rank) {
			uint64_t hi = sb_hist_bucket_high(i);
			return hi > h->max ? h->max : hi;
		}
	}
	return h->max;
}

struct sb_tev *sb_rec_event(struct sb_rec *r, size_t limit)
{
	if (r->nev >= limit) {
		r->ev_dropped++;
		return NULL;
	}
	if (r->nev == r->capev) {
		size_t cap = r->capev ? r->capev * 2 : 4096;
		struct sb_tev *ev = realloc(r->ev, cap * sizeof *ev);
		if (!ev) {
			r->ev_dropped++;
			return NULL;
		}
		r->ev = ev;
		r->capev = cap;
	}
	return &r->ev[r->nev++];
}

void sb_rec_free(struct sb_rec *r)
{
	for (unsigned i = 0; i < SB_MAX_CLASSES; i++)
		free(r->hist[i]);
	free(r->rows);
	free(r->ev);
	memset(r, 0, sizeof *r);
}

static void read_counters(const struct sb_thread *tc, uint64_t out[SB_NR_COUNTERS], bool add)
{
	for (unsigned c = 0; c < SB_NR_COUNTERS; c++) {
		/* relaxed: pairs with the owner's relaxed stores; a snapshot may be slightly stale */
		uint64_t v = atomic_load_explicit(&tc->cnt.v[c], memory_order_relaxed);
		out[c] = add ? out[c] + v : v;
	}
}

/* A worker's counters, its stretches in progress included (the seqlock's reader side; the
 * writers are worker.c's stretch_turn and idle.c's suspended_done): a window that opens or
 * closes while a worker runs, spins or sleeps counts the part of that stretch inside it, not the
 * whole stretch at the window its end falls in (a worker busy through a whole window read as
 * never busy in it). */
void sb_rt_worker_counters(const struct sb_rt *rt, unsigned i, uint64_t out[SB_NR_COUNTERS])
{
	const struct sb_worker *w = &rt->w[i];
	for (;;) {
		/* acquire: pairs with the writer's final release store */
		uint32_t s1 = atomic_load_explicit(&w->snap_seq, memory_order_acquire);
		read_counters(&w->tc, out, false);
		uint64_t st = atomic_load_explicit(&w->stretch, memory_order_relaxed);
		uint64_t susp = atomic_load_explicit(&w->susp_since, memory_order_relaxed);
		/* acquire fence: pairs with the writer's release fence; if the reads above saw its
		 * stores, the load below sees the odd sequence (or a later one) */
		atomic_thread_fence(memory_order_acquire);
		uint32_t s2 = atomic_load_explicit(&w->snap_seq, memory_order_relaxed);
		if (s1 != s2 || (s1 & 1))
			continue; /* a stretch was ending: read again */
		uint64_t now = st || susp ? sb_now_ns() : 0;
		if (susp && now > susp)
			out[SB_C_SUSPEND_NS] += now - susp;
		if (st) {
			/* an idle stretch stops at a suspension's start (idle_ns is time awake) */
			uint64_t since = (st >> 1) - 1, end = susp ? susp : now;
			if (end > since)
				out[st & 1 ? SB_C_BUSY_NS : SB_C_IDLE_NS] += end - since;
		}
		return;
	}
}

void sb_rt_other_counters(const struct sb_rt *rt, uint64_t out[SB_NR_COUNTERS])
{
	memset(out, 0, sizeof(uint64_t) * SB_NR_COUNTERS);
	pthread_mutex_lock((pthread_mutex_t *)&rt->threads_lock);
	for (const struct sb_thread *tc = rt->threads; tc; tc = tc->next_all)
		if (tc->worker < 0)
			read_counters(tc, out, true);
	pthread_mutex_unlock((pthread_mutex_t *)&rt->threads_lock);
}

void sb_rt_set_window(struct sb_rt *rt, uint64_t start, uint64_t end)
{
	/* relaxed: read at teardown; a job straddling the change may go either way */
	atomic_store_explicit(&rt->win_start, start, memory_order_relaxed);
	atomic_store_explicit(&rt->win_end, end, memory_order_relaxed);
}

void sb_rt_set_trace_cap(struct sb_rt *rt, size_t cap)
{
	atomic_store_explicit(&rt->trace_cap, cap, memory_order_relaxed);
}

void sb_rt_visit_recordings(const struct sb_rt *rt, sb_rec_visit_fn fn, void *ctx)
{
	pthread_mutex_lock((pthread_mutex_t *)&rt->threads_lock);
	for (const struct sb_thread *tc = rt->threads; tc; tc = tc->next_all)
		fn(ctx, tc->worker, tc->id, &tc->rec);
	pthread_mutex_unlock((pthread_mutex_t *)&rt->threads_lock);
}

uint64_t sb_rt_task_slabs(const struct sb_rt *rt)
{
	return atomic_load_explicit(&rt->nr_slabs, memory_order_relaxed);
}
