/*
 * worker.c - the runtime: worker threads, their idle path, suspension and wake-up, thread
 * contexts, placement helpers, topology, and create/stop/destroy.
 *
 * The worker loop is jogasaki's (memo 000): try local work; if none, try local work
 * stealing_wait x thread_count more times, then one steal sweep (a stolen task runs at once);
 * then the task_polling_wait pause (0 nothing, 1 yield, >= 2 sleep value-2 us). After
 * worker_try_count empty rounds a worker suspends until it is woken or worker_suspend_timeout
 * passes; busy_worker never suspends. Local work means the worker's own serial queue (what the
 * policy sent SB_TO_CALLER from a task on this worker) and then the policy's pop.
 *
 * Wake protocol: no lost wake-up and no lost parallelism (the searching-worker rule of Go's
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
#include <errno.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

/* ---- placement helpers (core/policy.h) ---- */

unsigned sb_nworkers(const struct sb_rt *rt)
{
	return rt->n;
}

unsigned sb_rt_nworkers(const struct sb_rt *rt)
{
	return rt->n;
}

const struct sb_config *sb_rt_config(const struct sb_rt *rt)
{
	return &rt->cfg;
}

const struct sb_policy_ops *sb_rt_policy(const struct sb_rt *rt)
{
	return rt->ops;
}

const char *sb_rt_failure(const struct sb_rt *rt)
{
	/* acquire: pairs with the release in sb_fail, which wrote the text first */
	return atomic_load_explicit(&((struct sb_rt *)rt)->failed, memory_order_acquire) ? rt->failure : NULL;
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

uint64_t sb_rand(void)
{
	struct sb_thread *tc = sb_self;
	static _Atomic uint64_t shared = 0x9e3779b97f4a7c15ull;
	if (!tc)
		return atomic_fetch_add_explicit(&shared, 0x9e3779b97f4a7c15ull, memory_order_relaxed);
	/* xorshift64*: per thread, no sharing */
	uint64_t x = tc->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	tc->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* ---- wake-ups ---- */

/* Wake worker w if it is suspended, as a searcher: the caller has already counted it in
 * nsearching. Returns whether this call woke it. */
static bool try_wake(struct sb_worker *w)
{
	uint32_t s = SB_W_SUSPENDED;
	/* relaxed: the CAS elects one waker (a SEARCH left by another waker is never overwritten,
	 * or its count would leak); the task itself is published by its queue */
	if (atomic_load_explicit(&w->state, memory_order_relaxed) != SB_W_SUSPENDED ||
	    !atomic_compare_exchange_strong_explicit(&w->state, &s, SB_W_SEARCH, memory_order_relaxed, memory_order_relaxed))
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

static void wake_all(struct sb_rt *rt)
{
	for (unsigned i = 0; i < rt->n; i++) {
		uint32_t s = SB_W_SUSPENDED;
		/* relaxed: a stop or cancel; SEARCH stays, so the woken worker drops its count */
		atomic_compare_exchange_strong_explicit(&rt->w[i].state, &s, SB_W_ACTIVE, memory_order_relaxed,
							memory_order_relaxed);
		sb_exec_unpark(&rt->w[i].state, 1);
	}
}

/* ---- thread contexts ---- */

void sb_thread_init(struct sb_rt *rt, struct sb_thread *tc, enum sb_thread_kind kind, int worker)
{
	memset(tc, 0, sizeof *tc);
	tc->rt = rt;
	tc->kind = kind;
	tc->worker = worker;
	tc->preferred = worker >= 0 ? (unsigned)worker : UINT32_MAX;
	tc->attached = true;
}

void sb_thread_register(struct sb_rt *rt, struct sb_thread *tc)
{
	pthread_mutex_lock(&rt->threads_lock);
	tc->id = rt->nthreads++;
	tc->next_all = rt->threads;
	rt->threads = tc;
	pthread_mutex_unlock(&rt->threads_lock);
	tc->rng = (rt->chaos_seed ? rt->chaos_seed : 0x853c49e6748fea9bull) ^ ((uint64_t)(tc->id + 1) * 0x9e3779b97f4a7c15ull);
	if (!tc->rng)
		tc->rng = 1;
}

struct sb_thread *sb_thread_attach(struct sb_rt *rt)
{
	if (sb_self) {
		if (sb_self->rt != rt) {
			fprintf(stderr, "%s:%d: thread is already attached to another runtime\n", __FILE__, __LINE__);
			abort();
		}
		return sb_self;
	}
	struct sb_thread *tc = sb_alloc_lines(sizeof *tc);
	if (!tc) {
		fprintf(stderr, "%s:%d: out of memory attaching a thread\n", __FILE__, __LINE__);
		abort();
	}
	sb_thread_init(rt, tc, SB_THREAD_REQUEST, -1);
	sb_thread_register(rt, tc);
	sb_exec_rcu_register();
	sb_self = tc;
	return tc;
}

void sb_thread_detach(void)
{
	struct sb_thread *tc = sb_self;
	if (!tc)
		return;
	/* whatever is left in our serial queue runs now (or is dropped, after a CANCEL stop) */
	sb_drain_serial(tc, SIZE_MAX);
	sb_tok_flush(tc);
	sb_thread_cache_release(tc);
	sb_exec_rcu_unregister();
	tc->attached = false;
	sb_self = NULL;
}

/* ---- the worker loop ---- */

static void mark_busy(struct sb_worker *w)
{
	struct sb_thread *tc = &w->tc;
	if (tc->busy)
		return;
	uint64_t now = sb_now_ns();
	sb_count(tc, SB_C_IDLE_NS, now - tc->since);
	tc->since = now;
	tc->busy = true;
	/* relaxed: the watchdog's hint */
	atomic_store_explicit(&w->idle, 0, memory_order_relaxed);
}

static void mark_idle(struct sb_worker *w)
{
	struct sb_thread *tc = &w->tc;
	if (!tc->busy)
		return;
	uint64_t now = sb_now_ns();
	sb_count(tc, SB_C_BUSY_NS, now - tc->since);
	tc->since = now;
	tc->busy = false;
	atomic_store_explicit(&w->idle, 1, memory_order_relaxed);
}

/* ---- the searching count ---- */

static void start_searching(struct sb_worker *w)
{
	if (w->searching)
		return;
	w->searching = true;
	/* relaxed: a count; the wake protocol orders it with the barriers */
	atomic_fetch_add_explicit(&w->rt->nsearching, 1, memory_order_relaxed);
}

/* Returns the count before ours left it. */
static unsigned stop_searching(struct sb_worker *w)
{
	w->searching = false;
	/* relaxed: as in start_searching */
	return atomic_fetch_sub_explicit(&w->rt->nsearching, 1, memory_order_relaxed);
}

/* The last searcher found work: if somebody sleeps, wake the next searcher, so that a burst
 * spreads over the sleepers one wake-up at a time (Go's resetspinning). Not only when more work
 * is seen queued: a producer that saw our count just before we dropped it left its task to us,
 * and its push may not be visible to us yet (models/wake.pml, PAR). A woken searcher that finds
 * nothing goes back to sleep without waking anyone, so the chain ends with the work. */
static void found_work(struct sb_worker *w)
{
	struct sb_rt *rt = w->rt;
	if (stop_searching(w) == 1 && atomic_load_explicit(&rt->nsuspended, memory_order_relaxed))
		sb_wake_searcher(rt);
}

static SB_COLD void became_busy(struct sb_worker *w, bool *after_suspend)
{
	if (w->searching)
		found_work(w);
	mark_busy(w);
	if (*after_suspend) {
		sb_count(&w->tc, SB_C_WAKEUP_RUN, 1);
		*after_suspend = false;
	}
}

static inline void run_here(struct sb_worker *w, struct sb_task *t, bool stolen, bool *after_suspend)
{
	if (__builtin_expect(!w->tc.busy || *after_suspend || w->searching, 0))
		became_busy(w, after_suspend);
	sb_run(&w->tc, t, stolen);
}

static inline struct sb_task *local(struct sb_worker *w)
{
	struct sb_task *t = sb_list_pop(&w->tc.serial);
	return t ? t : sb_policy_pop(w->rt, w->idx);
}

/* Tasks run back to back inside one RCU read-side critical section, renewed every
 * SB_RCU_SPAN tasks. The queues' own critical sections (sb_fifo) then nest inside it, and a
 * nested lock and unlock are a few plain instructions where an outermost pair costs about
 * twenty (liburcu's memb flavour: the grace-period counter, a barrier test, the waker test).
 * The span bounds how long the worker holds back a grace period, and so how long retired queue
 * segments wait: SB_RCU_SPAN tasks, or one long task. Nothing on a worker waits for a grace
 * period (only call_rcu, never synchronize_rcu or rcu_barrier), so holding one cannot block. */
#define SB_RCU_SPAN 256

static void run_local(struct sb_worker *w)
{
	struct sb_task *t;
	unsigned left = SB_RCU_SPAN;
	urcu_memb_read_lock();
	while ((t = local(w))) {
		sb_run(&w->tc, t, false);
		if (__builtin_expect(--left == 0, 0)) {
			urcu_memb_read_unlock(); /* lets a waiting grace period end */
			urcu_memb_read_lock();
			left = SB_RCU_SPAN;
		}
	}
	urcu_memb_read_unlock();
}

/* The rest of jogasaki's process_next after a local miss: stealing_wait x thread_count more
 * local tries, then one steal sweep. */
static SB_COLD struct sb_task *find_more(struct sb_worker *w, bool *stolen)
{
	struct sb_rt *rt = w->rt;
	struct sb_task *t;
	if (!sb_policy_can_steal(rt))
		return NULL;
	int64_t tries = rt->cfg.stealing_wait * (int64_t)rt->n;
	for (int64_t i = 0; i < tries; i++) {
		if ((t = local(w)))
			return t;
		sb_cpu_relax();
	}
	sb_count(&w->tc, SB_C_STEAL_SWEEP, 1);
	t = sb_policy_steal(rt, w->idx);
	*stolen = t != NULL;
	return t;
}

static void polling_wait(const struct sb_config *c)
{
	if (c->task_polling_wait == 1) {
		sb_exec_yield();
	} else if (c->task_polling_wait >= 2) {
		sb_exec_sleep_ns((uint64_t)(c->task_polling_wait - 2) * 1000);
	}
}

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

/* Suspend until woken or the suspend timeout passes. Returns a task found by the re-check, if
 * any (*stolen when a steal found it). The re-check after announcing the suspension is the
 * whole idle decision again -- pop, a steal sweep, then the policy's idle step -- so that the
 * sleep's length, and whether to sleep at all, are decided on what the re-check saw: a pop may
 * itself park work (a PTL) that then needs a capped sleep (models/idle.pml, PTL_FIX_CAP). */
static struct sb_task *suspend(struct sb_worker *w, bool *after_suspend, bool *stolen)
{
	struct sb_rt *rt = w->rt;
	struct sb_thread *tc = &w->tc;
	/* relaxed, all three: (W) below orders them before the re-check */
	atomic_fetch_add_explicit(&rt->nsuspended, 1, memory_order_relaxed);
	atomic_store_explicit(&w->state, SB_W_SUSPENDED, memory_order_relaxed);
	if (w->searching)
		stop_searching(w); /* a searcher giving up: from now on producers wake a sleeper */
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
	if (!t && !io.stay_awake && !atomic_load_explicit(&rt->stopping, memory_order_relaxed)) {
		sb_count(tc, SB_C_SUSPEND, 1);
		uint64_t t0 = sb_now_ns();
		sb_exec_park(&w->state, SB_W_SUSPENDED, us * 1000);
		uint64_t t1 = sb_now_ns();
		sb_count(tc, SB_C_SUSPEND_NS, t1 - t0);
		if (rt->cfg.trace)
			trace_instant(tc, SB_EV_SUSPEND, t0, t1 - t0);
		*after_suspend = true;
		woken = true;
	}
	/* relaxed: not SUSPENDED here means a waker got there first; SEARCH means it counted us
	 * as a searcher, and the count is ours to drop when we find work or give up */
	uint32_t prev = atomic_exchange_explicit(&w->state, SB_W_ACTIVE, memory_order_relaxed);
	atomic_fetch_sub_explicit(&rt->nsuspended, 1, memory_order_relaxed);
	w->searching = prev == SB_W_SEARCH;
	/* The re-check found work after we dropped our searching count: a producer may have left
	 * more to us, so we finish as a searcher that found work does (found_work, via run_here) */
	if (t)
		start_searching(w);
	if (woken && prev != SB_W_SUSPENDED) {
		sb_count(tc, SB_C_WOKEN, 1);
		if (rt->cfg.trace)
			trace_instant(tc, SB_EV_WAKE, sb_now_ns(), 0);
	}
	return t;
}

static void *worker_main(void *arg)
{
	struct sb_worker *w = arg;
	struct sb_rt *rt = w->rt;
	struct sb_thread *tc = &w->tc;
	sb_self = tc;
	sb_exec_rcu_register();
	if (rt->cfg.core_affinity && w->core >= 0 && !sb_exec_virtual()) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(rt->topo, HWLOC_OBJ_PU, (unsigned)w->core);
		if (pu)
			hwloc_set_cpubind(rt->topo, pu->cpuset, HWLOC_CPUBIND_THREAD);
	}
	tc->since = sb_now_ns();
	tc->busy = false;
	bool after_suspend = false;
	int64_t empty = 0;
	for (;;) {
		/* the hot path: local work back to back. After the first task the worker is busy,
		 * not searching and not just woken (nothing a task body does changes that), so the
		 * inner loop runs the rest without run_here's test. */
		struct sb_task *t = local(w);
		if (__builtin_expect(t != NULL, 1)) {
			run_here(w, t, false, &after_suspend);
			run_local(w);
			empty = 0;
		}
		/* out of local work: count ourselves as searching, so producers leave the sleepers be */
		start_searching(w);
		/* relaxed: a plain flag, looked at only when out of local work; a stop comes after
		 * every job has finished, so a worker always runs out of work before it */
		if (atomic_load_explicit(&rt->stopping, memory_order_relaxed))
			break;
		bool stolen = false;
		if ((t = find_more(w, &stolen))) {
			run_here(w, t, stolen, &after_suspend);
			empty = 0;
			continue;
		}
		/* nothing here: let go of cached job tokens so finished jobs can complete */
		sb_tok_flush(tc);
		mark_idle(w);
		struct sb_idle io = { .wake = -1 };
		t = sb_policy_idle(rt, w->idx, &io);
		if (io.wake >= 0 && (unsigned)io.wake < rt->n && (unsigned)io.wake != w->idx)
			sb_wake_worker(rt, (unsigned)io.wake, false);
		if (t) {
			run_here(w, t, false, &after_suspend);
			empty = 0;
			continue;
		}
		polling_wait(&rt->cfg);
		sb_cpu_relax();
		if (rt->cfg.busy_worker || io.stay_awake)
			continue;
		if (++empty > rt->cfg.worker_try_count) {
			empty = 0;
			stolen = false;
			if ((t = suspend(w, &after_suspend, &stolen)))
				run_here(w, t, stolen, &after_suspend);
		}
	}
	if (w->searching)
		stop_searching(w);
	sb_tok_flush(tc);
	mark_idle(w);
	sb_exec_rcu_unregister();
	sb_self = NULL;
	return NULL;
}

/* ---- topology ---- */

/* A virtual executor prices cache-line transfers by socket: each worker's package. */
static int exec_topology(struct sb_rt *rt)
{
	if (!sb_exec_virtual())
		return 0;
	unsigned *socket = calloc(rt->n, sizeof *socket);
	if (!socket)
		return -ENOMEM;
	for (unsigned i = 0; i < rt->n; i++) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(rt->topo, HWLOC_OBJ_PU, (unsigned)rt->w[i].core);
		hwloc_obj_t pkg = pu ? hwloc_get_ancestor_obj_by_type(rt->topo, HWLOC_OBJ_PACKAGE, pu) : NULL;
		socket[i] = pkg ? pkg->logical_index : 0;
	}
	sb_exec_topology(rt->n, socket, rt->ops->name);
	free(socket);
	return 0;
}


static int topology_init(struct sb_rt *rt, char *err, size_t errlen)
{
	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) != 0) {
		snprintf(err, errlen, "hwloc: cannot initialise the topology");
		return -1;
	}
	if (rt->cfg.topology && *rt->cfg.topology) {
		if (hwloc_topology_set_synthetic(topo, rt->cfg.topology) != 0) {
			hwloc_topology_destroy(topo);
			snprintf(err, errlen, "parameter 'topology': '%s' is not a valid hwloc synthetic topology "
				 "(example: \"package:2 core:2 pu:1\")", rt->cfg.topology);
			return -1;
		}
	}
	if (hwloc_topology_load(topo) != 0) {
		hwloc_topology_destroy(topo);
		snprintf(err, errlen, "hwloc: cannot load the topology");
		return -1;
	}
	rt->topo = topo;
	int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	if (npu <= 0)
		npu = 1;
	rt->dist = calloc((size_t)rt->n * rt->n, sizeof *rt->dist);
	if (!rt->dist) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < rt->n; i++)
		rt->w[i].core = (int)(((unsigned)rt->cfg.initial_core + i) % (unsigned)npu);
	for (unsigned a = 0; a < rt->n; a++) {
		for (unsigned b = 0; b < rt->n; b++) {
			hwloc_obj_t pa = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)rt->w[a].core);
			hwloc_obj_t pb = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)rt->w[b].core);
			unsigned d = a != b;
			if (pa && pb) {
				hwloc_obj_t anc = hwloc_get_common_ancestor_obj(topo, pa, pb);
				d = (unsigned)(pa->depth - anc->depth) + (a != b);
			}
			rt->dist[a * rt->n + b] = d;
		}
	}
	if (exec_topology(rt) != 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* ---- lifecycle ---- */

static void rt_free(struct sb_rt *rt)
{
	/* transactions first: their txn_fini still needs the policy's state */
	sb_txn_map_fini(rt);
	if (rt->pstate)
		sb_policy_destroy(rt);
	struct sb_thread *tc = rt->threads;
	while (tc) {
		struct sb_thread *next = tc->next_all;
		sb_rec_free(&tc->rec);
		if (tc->worker < 0)
			free(tc);
		tc = next;
	}
	sb_slabs_free(rt);
	free(rt->w);
	free(rt->dist);
	free(rt->pparams);
	if (rt->topo)
		hwloc_topology_destroy(rt->topo);
	pthread_mutex_destroy(&rt->threads_lock);
	pthread_mutex_destroy(&rt->depot_lock);
	free(rt);
}

static void join_workers(struct sb_rt *rt)
{
	atomic_store_explicit(&rt->stopping, true, memory_order_relaxed);
	/* (P) for the stop: pairs with (W) in suspend(), so a worker about to sleep either sees
	 * stopping or is woken by wake_all (on x86 the stores are ordered anyway; not elsewhere) */
	atomic_thread_fence(memory_order_seq_cst);
	wake_all(rt);
	for (unsigned i = 0; i < rt->n; i++)
		if (rt->w[i].started)
			sb_exec_thread_join(&rt->w[i].thread);
}

struct sb_rt *sb_rt_create(const struct sb_config *cfg, const struct sb_policy_ops *policy,
			   const void *pparams, char *err, size_t errlen)
{
	if (cfg->thread_count < 1 || cfg->thread_count > 1024) {
		snprintf(err, errlen, "parameter 'thread_count': %lld is out of range; valid range is 1..1024",
			 (long long)cfg->thread_count);
		return NULL;
	}
	sb_clock_calibrate();
	struct sb_rt *rt = sb_alloc_lines(sizeof *rt);
	if (!rt) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	rt->cfg = *cfg;
	rt->cfg.stall_limit = sb_config_stall_limit(cfg);
	rt->ops = policy;
	rt->n = (unsigned)cfg->thread_count;
	rt->chaos_seed = (uint64_t)cfg->chaos;
	atomic_init(&rt->slow, (cfg->check ? SB_SLOW_CHECK : 0) | (cfg->trace ? SB_SLOW_TRACE : 0) |
				       (cfg->preempt_threshold || rt->cfg.stall_limit ? SB_SLOW_MONITOR : 0) |
				       (cfg->chaos ? SB_SLOW_CHAOS : 0) | (sb_exec_virtual() ? SB_SLOW_VIRTUAL : 0));
	pthread_mutex_init(&rt->threads_lock, NULL);
	pthread_mutex_init(&rt->depot_lock, NULL);
	atomic_init(&rt->win_start, 0);
	atomic_init(&rt->win_end, UINT64_MAX);
	atomic_init(&rt->trace_cap, (uint64_t)1 << 24);
	/* the sleeper pays for the wake protocol's ordering when the kernel lets it (see the file
	 * comment) */
	rt->membarrier = !cfg->wake_fence && sb_exec_membarrier_register();
	rt->light_producer = rt->membarrier || cfg->busy_worker;
	sb_mpsc_init(&rt->cond_q);

	rt->w = sb_alloc_lines((size_t)rt->n * sizeof(struct sb_worker));
	if (!rt->w) {
		snprintf(err, errlen, "out of memory");
		free(rt);
		return NULL;
	}
	for (unsigned i = 0; i < rt->n; i++) {
		struct sb_worker *w = &rt->w[i];
		w->rt = rt;
		w->idx = i;
		w->core = -1;
		atomic_init(&w->state, SB_W_ACTIVE);
		sb_thread_init(rt, &w->tc, SB_THREAD_WORKER, (int)i);
		sb_thread_register(rt, &w->tc);
	}
	if (topology_init(rt, err, errlen) != 0 || sb_txn_map_init(rt) != 0) {
		if (!*err)
			snprintf(err, errlen, "cannot create the transaction map");
		rt_free(rt);
		return NULL;
	}
	if (sb_policy_create(rt, pparams, err, errlen) != 0) {
		rt_free(rt);
		return NULL;
	}
	for (unsigned i = 0; i < rt->n; i++) {
		char name[32];
		snprintf(name, sizeof name, "worker-%u", i);
		int e = sb_exec_thread_start(&rt->w[i].thread, name, worker_main, &rt->w[i]);
		if (e) {
			snprintf(err, errlen, "cannot create worker thread %u of %u: %s", i, rt->n, strerror(-e));
			join_workers(rt);
			rt_free(rt);
			return NULL;
		}
		rt->w[i].started = true;
	}
	if (sb_watcher_start(rt, err, errlen) != 0 || sb_monitor_start(rt, err, errlen) != 0) {
		join_workers(rt);
		sb_watcher_stop(rt);
		sb_monitor_stop(rt);
		rt_free(rt);
		return NULL;
	}
	return rt;
}

void sb_rt_cancel(struct sb_rt *rt)
{
	/* relaxed: sb_run polls it; dropping a little late is harmless */
	atomic_fetch_or_explicit(&rt->slow, SB_SLOW_CANCEL, memory_order_relaxed);
	wake_all(rt);
}

bool sb_rt_cancelled(const struct sb_rt *rt)
{
	return atomic_load_explicit(&((struct sb_rt *)rt)->slow, memory_order_relaxed) & SB_SLOW_CANCEL;
}

void sb_rt_stop(struct sb_rt *rt, enum sb_stop_mode mode)
{
	if (rt->stopped)
		return;
	struct sb_thread *tc = sb_self;
	if (tc && (tc->worker >= 0 || tc->kind == SB_THREAD_WATCHER)) {
		fprintf(stderr, "%s:%d: sb_rt_stop called from a task\n", __FILE__, __LINE__);
		abort();
	}
	if (mode == SB_STOP_CANCEL)
		sb_rt_cancel(rt);
	for (;;) {
		if (tc && tc->serial.len) {
			sb_drain_serial(tc, SIZE_MAX);
			continue;
		}
		if (tc) {
			sb_tok_flush(tc); /* may queue a teardown task in our own queue */
			if (tc->serial.len)
				continue;
		}
		uint32_t seq = atomic_load_explicit(&rt->live_seq, memory_order_acquire);
		/* acquire: pairs with the release decrement in teardown_now */
		if (atomic_load_explicit(&rt->live_jobs, memory_order_acquire) <= 0)
			break;
		if (atomic_load_explicit(&rt->failed, memory_order_relaxed)) {
			/* a failed run may never drain (a starved queue, a livelock): what is queued
			 * is dropped so the workers can stop; the failure is the result */
			sb_rt_cancel(rt);
			break;
		}
		sb_exec_park(&rt->live_seq, seq, 50 * 1000 * 1000);
	}
	join_workers(rt);
	sb_watcher_stop(rt);
	sb_monitor_stop(rt);
	rt->stopped = true;
}

void sb_rt_destroy(struct sb_rt *rt)
{
	if (!rt)
		return;
	sb_rt_stop(rt, SB_STOP_DRAIN);
	if (sb_self && sb_self->rt == rt)
		sb_thread_detach();
	/* another thread still attached would be left pointing at freed memory */
	pthread_mutex_lock(&rt->threads_lock);
	for (struct sb_thread *tc = rt->threads; tc; tc = tc->next_all) {
		if (tc->kind == SB_THREAD_REQUEST && tc->attached) {
			fprintf(stderr, "%s:%d: sb_rt_destroy with request thread %u still attached "
				"(call sb_thread_detach on it first)\n", __FILE__, __LINE__, tc->id);
			abort();
		}
	}
	pthread_mutex_unlock(&rt->threads_lock);
	rt_free(rt);
}
