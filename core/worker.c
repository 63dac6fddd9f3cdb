/*
 * worker.c - the worker threads: where they run (topology and pinning), the worker loop, and
 * joining them. Their suspension and the wake protocol are idle.c's; a runtime's life is
 * runtime.c's.
 *
 * The worker loop is jogasaki's (memo 000): try local work; if none, try local work
 * stealing_wait x thread_count more times, then one steal sweep (a stolen task runs at once);
 * then the task_polling_wait pause (0 nothing, 1 yield, >= 2 sleep value-2 us). After
 * worker_try_count empty rounds a worker suspends until it is woken or worker_suspend_timeout
 * passes, yielding its core every worker_spin_yield of them (not jogasaki's: see spin_yield);
 * busy_worker never suspends. Local work means the worker's own serial queue (what the
 * policy sent SB_TO_CALLER from a task on this worker) and then the policy's pop.
 */
#include <errno.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

#include "idle.h"
#include "thread.h"

/* ---- the worker loop ---- */

#define SB_SWEEP_SAMPLE 16 /* steal sweeps per timed one (sweep_ns is an estimate from a sample) */

/* The busy or idle stretch ends now: its length moves into its counter and the next one starts
 * (`last`: none does, the worker is leaving). Inside the snapshot seqlock (rt.h), so that a reader
 * counts the stretch once, whether it reads before, during or after. */
static void stretch_turn(struct sb_worker *w, bool busy, bool last)
{
	struct sb_thread *tc = &w->tc;
	uint64_t now = sb_now_ns();
	uint32_t s = sb_snap_begin(w);
	sb_count(tc, tc->busy ? SB_C_BUSY_NS : SB_C_IDLE_NS, now - tc->since);
	tc->since = now;
	tc->busy = busy;
	/* relaxed: the seqlock orders it for a reader */
	atomic_store_explicit(&w->stretch, last ? 0 : sb_stretch_word(now, busy), memory_order_relaxed);
	sb_snap_end(w, s);
}

static void mark_busy(struct sb_worker *w)
{
	if (w->tc.busy)
		return;
	stretch_turn(w, true, false);
	/* relaxed: the watchdog's hint */
	atomic_store_explicit(&w->idle, 0, memory_order_relaxed);
}

static void mark_idle(struct sb_worker *w)
{
	if (!w->tc.busy)
		return;
	stretch_turn(w, false, false);
	atomic_store_explicit(&w->idle, 1, memory_order_relaxed);
}

static SB_COLD void became_busy(struct sb_worker *w, bool *after_suspend)
{
	if (w->searching)
		sb_found_work(w);
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
		/* under a virtual executor the polls' cost is owed and the last one pays it all, so the
		 * sweep below starts when it would with every poll paying at once (exec.h) */
		if (i + 1 < tries)
			sb_cpu_poll();
		else
			sb_cpu_relax();
	}
	sb_count(&w->tc, SB_C_STEAL_SWEEP, 1);
	/* sweep_ns from one sweep in SB_SWEEP_SAMPLE, counted that many times: two clock reads on
	 * every sweep cost a thief that sweeps back to back a few percent of its fork-join time */
	if (__builtin_expect(atomic_load_explicit(&w->tc.cnt.v[SB_C_STEAL_SWEEP], memory_order_relaxed) %
				     SB_SWEEP_SAMPLE,
			     1)) {
		t = sb_policy_steal(rt, w->idx);
	} else {
		uint64_t t0 = sb_now_ns();
		t = sb_policy_steal(rt, w->idx);
		sb_count(&w->tc, SB_C_SWEEP_NS, (sb_now_ns() - t0) * SB_SWEEP_SAMPLE);
	}
	*stolen = t != NULL;
	return t;
}

static void polling_wait(struct sb_worker *w, const struct sb_config *c)
{
	if (c->task_polling_wait == 1) {
		sb_exec_yield();
	} else if (c->task_polling_wait >= 2) {
		uint64_t nap = (uint64_t)(c->task_polling_wait - 2) * 1000;
		/* relaxed: the stall watchdog's sample; a nap that ends late because no core is free
		 * is the machine's delay, not a lost wake-up (core/monitor.c) */
		atomic_store_explicit(&w->nap_until, sb_now_ns() + nap, memory_order_relaxed);
		sb_exec_sleep_ns(nap);
		atomic_store_explicit(&w->nap_until, 0, memory_order_relaxed);
	}
}

/* Whether this empty round of the spin before a suspension ends in a yield: every
 * worker_spin_yield rounds. Linux runs a woken thread on its waker's core, ahead of it, and
 * a worker woken to take a task submitted from a running one (a job's child) then spins its
 * worker_try_count rounds there after running it, while the preempted submitter waits for the
 * core, the other cores idle: 150 us of a request's 2 us task on `wake`, its p99 232 us
 * against 78 us without the spin (PAPER §4.4). A yield lets whatever waits for the core run
 * and costs a system call when nothing does. Not with busy_worker, which never suspends and
 * keeps the memo's plain spin, nor in a policy's own wait (sb_idle's yield and stay_awake:
 * the distribution mode's busy loop has busy_yield). */
static inline bool spin_yield(const struct sb_config *c, int64_t empty)
{
	return c->worker_spin_yield > 0 && !c->busy_worker && (empty + 1) % c->worker_spin_yield == 0;
}

/* A worker thread's body. Longer than 60 lines on purpose: it is jogasaki's process_next read
 * top to bottom (local work, find_more, the idle step, the pause, sb_suspend), and each step is
 * already a function; what is left here is their order. */
void *sb_worker_main(void *arg)
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
	/* relaxed: the first stretch; a reader before it counts none */
	atomic_store_explicit(&w->stretch, sb_stretch_word(tc->since, false), memory_order_relaxed);
	/* relaxed: the watchdog's hint; a worker starts resting, not only once it has been busy
	 * (else one that never ran a task and naps instead of suspending is never seen resting) */
	atomic_store_explicit(&w->idle, 1, memory_order_relaxed);
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
		sb_start_searching(w);
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
		polling_wait(w, &rt->cfg);
		if (io.yield) {
			sb_count(tc, SB_C_IDLE_YIELD, 1);
			sb_exec_yield();
		} else if (!io.stay_awake && spin_yield(&rt->cfg, empty)) {
			sb_count(tc, SB_C_SPIN_YIELD, 1);
			sb_exec_yield();
		} else {
			sb_cpu_relax();
		}
		if (rt->cfg.busy_worker || io.stay_awake)
			continue;
		/* suspend_now: as with worker_try_count 0, which the wake protocol allows for any worker */
		if (++empty > rt->cfg.worker_try_count || io.suspend_now) {
			empty = 0;
			stolen = false;
			if ((t = sb_suspend(w, &after_suspend, &stolen)))
				run_here(w, t, stolen, &after_suspend);
			else if (after_suspend)
				/* Woken (or timed out) and the re-check found nothing: one round, then back
				 * to sleep, as a woken searcher that finds nothing does in Go (idle.c).
				 * Linux runs a woken worker on its waker's core, ahead of the waker; a
				 * searcher woken by a worker that has just found its task (sb_found_work)
				 * spun its worker_try_count rounds there while that task waited: 154 us of
				 * a wake-up's 157 at the median on 2 cores (PAPER §4.4). The wake protocol
				 * allows any worker to suspend after one round (worker_try_count 0, which
				 * is what models/ check). */
				empty = rt->cfg.worker_try_count;
		}
	}
	if (w->searching)
		sb_stop_searching(w);
	sb_tok_flush(tc);
	stretch_turn(w, false, true); /* the last stretch: counters read after the run stay put */
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


int sb_topology_init(struct sb_rt *rt, char *err, size_t errlen)
{
	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) != 0) {
		snprintf(err, errlen, "hwloc: cannot initialise the topology");
		return -EIO;
	}
	if (rt->cfg.topology && *rt->cfg.topology) {
		if (hwloc_topology_set_synthetic(topo, rt->cfg.topology) != 0) {
			hwloc_topology_destroy(topo);
			snprintf(err, errlen, "parameter 'topology': '%s' is not a valid hwloc synthetic topology "
				 "(example: \"package:2 core:2 pu:1\")", rt->cfg.topology);
			return -EINVAL;
		}
	}
	if (hwloc_topology_load(topo) != 0) {
		hwloc_topology_destroy(topo);
		snprintf(err, errlen, "hwloc: cannot load the topology");
		return -EIO;
	}
	rt->topo = topo;
	int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	if (npu <= 0)
		npu = 1;
	rt->dist = calloc((size_t)rt->n * rt->n, sizeof *rt->dist);
	if (!rt->dist) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
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
		return -ENOMEM;
	}
	return 0;
}

void sb_workers_join(struct sb_rt *rt)
{
	atomic_store_explicit(&rt->stopping, true, memory_order_relaxed);
	/* (P) for the stop: pairs with (W) in sb_suspend(), so a worker about to sleep either sees
	 * stopping or is woken by sb_wake_all (on x86 the stores are ordered anyway; not elsewhere) */
	atomic_thread_fence(memory_order_seq_cst);
	sb_wake_all(rt);
	for (unsigned i = 0; i < rt->n; i++)
		if (rt->w[i].started)
			sb_exec_thread_join(&rt->w[i].thread);
}
