/*
 * idle.c - how threads sleep and are woken: the workers' suspension and the wake protocol that
 * makes it safe, and the watcher's eventcount. The worker loop (worker.c) calls sb_suspend after
 * worker_try_count empty rounds; producers (task.c, policies through sb_work_available) call
 * sb_publish (idle.h) or sb_wake_worker.
 *
 * The wake protocol: no lost wake-up and no lost parallelism (the searching-worker rule of Go's
 * scheduler and Tokio). Two counts on one line: nsuspended (workers announced asleep) and
 * nsearching (awake workers out of local work: polling, stealing). A worker counts itself as
 * searching at its first local miss and stops at the first task it finds.
 *
 *   producer (sb_publish): push (release); compiler barrier (P);
 *                          if nsearching == 0 && nsuspended != 0: sb_wake_searcher
 *   sb_wake_searcher:      CAS nsearching 0 -> 1 (elects one waker, counts the sleeper as
 *                          searching on its behalf); CAS one worker SUSPENDED -> SEARCH, futex_wake
 *   sleeper (suspend):     nsuspended++; state = SUSPENDED; if searching: nsearching--;
 *                          membarrier (W); re-check: pop, steal sweep, idle; if none: futex_wait
 *   searcher finding work: nsearching--; if it was the last and somebody sleeps:
 *                          sb_wake_searcher (the next one); a sleeper whose re-check finds
 *                          work does the same
 *
 * Work becomes available to others through sb_publish: a spawn onto one's own stealable queue,
 * a yield or resume that lands there, SB_TO_ANY, and policy-internal publication
 * (sb_work_available: steal-half surplus, a lane handed back). A push onto another worker's
 * queue wakes that worker if it sleeps (sb_wake_worker, also for sticky tasks, which nobody
 * else may take), as a searcher like every woken worker, and otherwise applies the same rule,
 * since a thief may take it.
 *
 * Why nothing is lost. A producer that sees a searcher leaves the task to it: that searcher
 * either finds work, or gives up through suspend(), whose re-check after (W) sees every task
 * pushed before the producer read the searcher's count. A producer that sees nobody searching
 * and nobody asleep needs nobody: a worker announcing its sleep after that read re-checks after
 * (W) and sees the task. The waker whose election finds no sleeper to wake (one timed out)
 * undoes its count and looks again after a full fence, because its count may have made another
 * producer skip its wake. models/wake.pml checks this with store buffers (README).
 * The last searcher wakes the next whether or not it sees more work queued: a producer that
 * read its count just before it dropped it left the task to it, and that push may not be
 * visible yet. So a sleeper is never left asleep beside queued work with nobody searching
 * (models/wake.pml checks that too, property PAR); the price is at most one wake-up that finds
 * nothing per burst, as in Go.
 *
 * The asymmetric barrier. (P) and (W) must order each side's stores before its loads (store
 * buffering is the one reordering x86 does). Instead of a seq_cst fence on every placement, the
 * sleeper -- which only suspends after worker_try_count empty rounds -- pays
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (~1 us): it runs a full barrier on every CPU
 * running a thread of this process, so every producer's earlier push is visible to the
 * re-check, or the producer's later loads see the announcement. A producer that is not running
 * at that moment is covered too: it was switched out, and a context switch is a full barrier.
 * So with every worker busy a spawn costs a compiler barrier and two loads of a line nobody
 * writes: no syscall, no RMW, no store. Registration happens once at creation; if it fails (or
 * wake_fence=true) producers take a seq_cst fence instead and the sleeper a seq_cst fence (one
 * predictable branch on rt->light_producer); policy stats say which (wake_membarrier).
 *
 * The futex word: a waker's CAS SUSPENDED -> SEARCH makes exactly one waker issue the
 * wake, and a futex_wait that starts after it returns at once because the word is no longer
 * SUSPENDED. busy_worker never suspends, so nobody sleeps and producers wake nobody.
 */
#include <stdlib.h>
#include <string.h>

#include "idle.h"

/* ---- wake-ups ---- */

/* Wake worker w if it is suspended, as a searcher: the caller has already counted it in
 * nsearching. Returns whether this call woke it. */
static bool try_wake(struct sb_worker *w)
{
	uint32_t s = SB_W_SUSPENDED;
	/* relaxed: a hint; the CAS decides */
	if (atomic_load_explicit(&w->state, memory_order_relaxed) != SB_W_SUSPENDED)
		return false;
	/* relaxed: the claim's time, for the wake-up latency counter only; the CAS's release
	 * orders it before the claim, so the woken worker's acquire exchange of its state (sb_suspend)
	 * sees this stamp or a later one (a waker that loses the CAS may overwrite it: the latency is
	 * then under-counted by the gap between the two claims, never over-counted) */
	atomic_store_explicit(&w->wake_claim, sb_now_ns(), memory_order_relaxed);
	/* release (see above); the CAS elects one waker (a SEARCH left by another waker is never
	 * overwritten, or its count would leak); the task itself is published by its queue */
	if (!atomic_compare_exchange_strong_explicit(&w->state, &s, SB_W_SEARCH, memory_order_release, memory_order_relaxed))
		return false;
	sb_exec_unpark(&w->state, 1);
	if (sb_self)
		sb_count(sb_self, SB_C_WAKES_SENT, 1);
	return true;
}

static bool wake_one(struct sb_rt *rt)
{
	/* relaxed: only spreads the wake-ups */
	unsigned start = atomic_fetch_add_explicit(&rt->wake_rr, 1, memory_order_relaxed);
	for (unsigned k = 0; k < rt->n; k++)
		if (try_wake(&rt->w[(start + k) % rt->n]))
			return true;
	return false;
}

/* Nobody searches and somebody sleeps: wake one sleeper as a searcher. The CAS 0 -> 1 elects
 * one waker and counts the sleeper as searching on its behalf, so that other producers see a
 * searcher at once and wake nobody else. Cold: only reached while some worker sleeps. */
SB_COLD void sb_wake_searcher(struct sb_rt *rt)
{
	for (unsigned spins = 0;; spins++) {
		unsigned zero = 0;
		/* relaxed: an election; ordering with the sleepers comes from the barriers */
		if (!atomic_compare_exchange_strong_explicit(&rt->nsearching, &zero, 1, memory_order_relaxed,
							     memory_order_relaxed))
			return; /* a searcher exists: it finds the work or re-checks before it sleeps */
		if (wake_one(rt))
			return;
		/* Counted but nobody found asleep (the sleeper just timed out, or is between its
		 * nsuspended and its state). Our count may have made another producer skip its
		 * wake, so look again after a full fence, which pairs with the sleepers' barrier:
		 * a sleeper whose nsuspended we still miss re-checks after our undo and sees that
		 * producer's task (models/idle.pml, UNDO). */
		atomic_fetch_sub_explicit(&rt->nsearching, 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		if (!atomic_load_explicit(&rt->nsuspended, memory_order_relaxed) ||
		    atomic_load_explicit(&rt->nsearching, memory_order_relaxed))
			return;
		if (spins > 64)
			sb_exec_yield(); /* the sleeper was preempted between its two stores */
		else
			sb_cpu_relax();
	}
}

/* A targeted wake: a task went onto worker i's queue (or a policy handed it work). A sleeping
 * target is woken as a searcher, counted like any other: when it finds its task it wakes the
 * next sleeper if it was the last searcher, because more may have been pushed to it while it
 * woke (models/wake.pml, PAR). An awake target needs nothing, unless the task is stealable
 * and a thief sleeps. */
void sb_wake_worker(struct sb_rt *rt, unsigned i, bool stealable)
{
	sb_producer_barrier(rt);
	struct sb_worker *w = &rt->w[i];
	/* relaxed: a hint; the CAS in try_wake decides */
	if (atomic_load_explicit(&w->state, memory_order_relaxed) == SB_W_SUSPENDED) {
		/* relaxed: counted before the wake, so the woken worker never drops a count that
		 * is not there yet */
		atomic_fetch_add_explicit(&rt->nsearching, 1, memory_order_relaxed);
		if (try_wake(w))
			return;
		/* it woke by itself: undo, and since our count may have made another producer
		 * skip its wake, look again after a full fence (as in sb_wake_searcher) */
		atomic_fetch_sub_explicit(&rt->nsearching, 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		sb_need_searcher(rt);
		return;
	}
	if (stealable)
		sb_need_searcher(rt); /* the target is awake: the task is a thief's if one sleeps */
}

void sb_work_available(struct sb_rt *rt)
{
	sb_publish(rt);
}

void sb_wake_all(struct sb_rt *rt)
{
	for (unsigned i = 0; i < rt->n; i++) {
		uint32_t s = SB_W_SUSPENDED;
		/* relaxed: a stop or cancel; SEARCH stays, so the woken worker drops its count */
		atomic_compare_exchange_strong_explicit(&rt->w[i].state, &s, SB_W_ACTIVE, memory_order_relaxed,
							memory_order_relaxed);
		sb_exec_unpark(&rt->w[i].state, 1);
	}
}

/* ---- the searching count (sb_start_searching, sb_stop_searching: idle.h) ---- */

/* The last searcher found work: if somebody sleeps, wake the next searcher, so that a burst
 * spreads over the sleepers one wake-up at a time (Go's resetspinning). Not only when more work
 * is seen queued: a producer that saw our count just before we dropped it left its task to us,
 * and its push may not be visible to us yet (models/wake.pml, PAR). A woken searcher that finds
 * nothing goes back to sleep without waking anyone, so the chain ends with the work. */
void sb_found_work(struct sb_worker *w)
{
	struct sb_rt *rt = w->rt;
	if (sb_stop_searching(w) == 1 && atomic_load_explicit(&rt->nsuspended, memory_order_relaxed))
		sb_wake_searcher(rt);
}

/* ---- suspension ---- */

static void trace_instant(struct sb_thread *tc, enum sb_trace_kind kind, uint64_t ts, uint64_t dur)
{
	struct sb_rt *rt = tc->rt;
	/* relaxed: settings (see trace_task) */
	if (ts < atomic_load_explicit(&rt->win_start, memory_order_relaxed) ||
	    ts >= atomic_load_explicit(&rt->win_end, memory_order_relaxed))
		return;
	struct sb_tev *ev = sb_rec_event(&tc->rec, atomic_load_explicit(&rt->trace_cap, memory_order_relaxed));
	if (ev)
		*ev = (struct sb_tev){ .ts = ts, .dur = dur, .kind = (uint8_t)kind };
}

/* (W), the sleeper's half of the Dekker pair: everything this thread stored before is visible
 * to every other thread, and everything they stored before is visible to our next loads. */
static void sleeper_barrier(const struct sb_rt *rt)
{
	if (!rt->membarrier) {
		atomic_thread_fence(memory_order_seq_cst); /* pairs with the producers' fence */
		return;
	}
	/* registered at creation, so it cannot fail; if it did, producers would be unordered */
	int e = sb_exec_membarrier();
	if (e) {
		fprintf(stderr, "%s:%d: membarrier failed after registration: %s\n", __FILE__, __LINE__, strerror(-e));
		abort();
	}
}

/* A suspension has ended: its length moves from susp_since into the counter, and the idle
 * stretch it interrupted resumes later by as much (idle_ns is time awake). The seqlock's writer
 * side (rt.h); the reader is sb_rt_worker_counters (stats.c). */
static void suspended_done(struct sb_worker *w, uint64_t ns)
{
	struct sb_thread *tc = &w->tc;
	uint32_t s = sb_snap_begin(w);
	sb_count(tc, SB_C_SUSPEND_NS, ns);
	tc->since += ns;
	/* relaxed, both: the seqlock orders them for a reader */
	atomic_store_explicit(&w->stretch, sb_stretch_word(tc->since, tc->busy), memory_order_relaxed);
	atomic_store_explicit(&w->susp_since, 0, memory_order_relaxed);
	sb_snap_end(w, s);
}

/* Suspend until woken or the suspend timeout passes. Returns a task found by the re-check, if
 * any (*stolen when a steal found it). The re-check after announcing the suspension is the
 * whole idle decision again -- pop, a steal sweep, then the policy's idle step -- so that the
 * sleep's length, and whether to sleep at all, are decided on what the re-check saw: a pop may
 * itself park work (a PTL) that then needs a capped sleep (models/idle.pml, PTL_FIX_CAP). */
struct sb_task *sb_suspend(struct sb_worker *w, bool *after_suspend, bool *stolen)
{
	struct sb_rt *rt = w->rt;
	struct sb_thread *tc = &w->tc;
	/* relaxed, all three: (W) below orders them before the re-check */
	atomic_fetch_add_explicit(&rt->nsuspended, 1, memory_order_relaxed);
	atomic_store_explicit(&w->state, SB_W_SUSPENDED, memory_order_relaxed);
	if (w->searching)
		sb_stop_searching(w); /* a searcher giving up: from now on producers wake a sleeper */
	/* (W): pairs with the producers' barrier (sb_producer_barrier); see the file comment */
	sleeper_barrier(rt);
	struct sb_task *t = sb_policy_pop(rt, w->idx);
	if (!t && sb_policy_can_steal(rt))
		*stolen = (t = sb_policy_steal(rt, w->idx)) != NULL;
	struct sb_idle io = { .wake = -1 };
	if (!t) {
		t = sb_policy_idle(rt, w->idx, &io);
		if (io.wake >= 0 && (unsigned)io.wake < rt->n && (unsigned)io.wake != w->idx)
			sb_wake_worker(rt, (unsigned)io.wake, false);
	}
	uint64_t us = (uint64_t)rt->cfg.worker_suspend_timeout;
	if (io.max_suspend_us && io.max_suspend_us < us)
		us = io.max_suspend_us;
	bool woken = false;
	uint64_t t1 = 0;
	if (!t && !io.stay_awake && !atomic_load_explicit(&rt->stopping, memory_order_relaxed)) {
		sb_count(tc, SB_C_SUSPEND, 1);
		uint64_t t0 = sb_now_ns();
		/* relaxed: a reader adds the part so far only when snap_seq was even and unchanged
		 * around its reads (suspended_done), so any value it sees here is consistent */
		atomic_store_explicit(&w->susp_since, t0, memory_order_relaxed);
		sb_exec_park(&w->state, SB_W_SUSPENDED, us * 1000);
		t1 = sb_now_ns();
		suspended_done(w, t1 - t0);
		if (rt->cfg.trace)
			trace_instant(tc, SB_EV_SUSPEND, t0, t1 - t0);
		*after_suspend = true;
		woken = true;
	}
	/* not SUSPENDED here means a waker got there first; SEARCH means it counted us as a
	 * searcher, and the count is ours to drop when we find work or give up. acquire: pairs
	 * with the waker's release CAS, for its wake_claim stamp (nothing else rides on it) */
	uint32_t prev = atomic_exchange_explicit(&w->state, SB_W_ACTIVE, memory_order_acquire);
	atomic_fetch_sub_explicit(&rt->nsuspended, 1, memory_order_relaxed);
	w->searching = prev == SB_W_SEARCH;
	/* The re-check found work after we dropped our searching count: a producer may have left
	 * more to us, so we finish as a searcher that found work does (sb_found_work, via worker.c's run_here) */
	if (t)
		sb_start_searching(w);
	if (woken && prev != SB_W_SUSPENDED) {
		sb_count(tc, SB_C_WOKEN, 1);
		/* relaxed: our own stamp to take (see try_wake); a stop's wake (ACTIVE) leaves none */
		uint64_t claim = atomic_exchange_explicit(&w->wake_claim, 0, memory_order_relaxed);
		if (prev == SB_W_SEARCH && claim && claim < t1)
			sb_count(tc, SB_C_WAKE_NS, t1 - claim);
		if (rt->cfg.trace)
			trace_instant(tc, SB_EV_WAKE, sb_now_ns(), 0);
	}
	return t;
}

/* ---- the watcher's wake-up: its mailbox (watcher.c) ---- */

void sb_watcher_push(struct sb_rt *rt, struct sb_task *t)
{
	sb_mpsc_push(&rt->cond_q, t);
	sb_helper_kick(&rt->watcher); /* the push is visible to the watcher's next snapshot */
}
