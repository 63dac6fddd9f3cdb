/*
 * monitor.c - the monitor thread: cooperative preemption and the stall watchdog.
 *
 * The monitor (memo 001's idea: a thread that walks the workers counting up while the same
 * task runs): every period it compares each worker's run sequence with the last sample. A task
 * seen running longer than preempt_threshold us gets a yield request (cooperative preemption:
 * the task polls sb_should_yield()). With a stall limit (stall_limit, or check mode's default)
 * it is also the stall watchdog, with two rules that each end the run with what was observed
 * and a dump of every worker:
 *   STARVATION  queued work has waited longer than the limit, no task of its job class has
 *               started for a whole limit, and tasks queued after it started meanwhile
 *               (workers are busy, with other work: neither a long FIFO backlog nor a
 *               fork-join running its own newest tasks first);
 *   STALL       a worker's queue has held runnable work longer than the limit while that
 *               worker rests (idle or suspended) and takes none of it, or the shared queues
 *               have while a worker rests and no task starts anywhere (a task dropped from
 *               a cancelled job counts as started: it left its queue): the shape of a lost
 *               wake-up.
 * The age of queued work comes from age buckets: every placement into a queue counts in the
 * placing thread's slot for (time / step, job class) and every start counts back in the same
 * slot (the slot rides in t->wslot), with step = limit / 4 and SB_WATCH_SLOTS slots. A slot
 * with more placements than starts holds work at least as old as the newest step that maps to
 * it: a lower bound, so the watchdog may judge a little late but never early. Both rules need
 * work seen that old in the buckets. Time a worker spends in an intended sleep between polls
 * (task_polling_wait >= 2) is added to the limit, and a worker whose nap has ended but which
 * has not got a core back yet (an overloaded machine) is not counted as waiting meanwhile: its
 * waiting clock pauses, it does not restart, so a worker that oversleeps now and then while its
 * queue's work is kept from it is still reported once its time waited on time adds up.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"


struct mon_worker {
	uint64_t seq;        /* last run sequence seen */
	uint64_t since;      /* when it last changed (or the worker was idle) */
	bool flagged;        /* yield already requested for this task */
	uint64_t waiting;    /* when its queue was first seen non-empty without progress */
};
SB_ASSERT_MALLOC_ALIGNED(struct mon_worker);

/* Sums of every thread's age buckets, and the state the starvation rule keeps between samples. */
_Static_assert(SB_MAX_CLASSES <= 32, "the starvation rule keeps classes in a 32-bit mask");

struct mon_watch {
	uint64_t placed[SB_WATCH_SLOTS][SB_MAX_CLASSES];
	uint64_t started[SB_WATCH_SLOTS][SB_MAX_CLASSES];
	uint64_t prev_started[SB_WATCH_SLOTS]; /* per slot, at the previous sample */
	uint64_t class_started[SB_MAX_CLASSES]; /* per class over all slots, at the previous sample */
	uint64_t last_start[SB_MAX_CLASSES];    /* when a task of the class was last seen starting */
	uint64_t overtaken;  /* tasks queued after the oldest waiting work that started meanwhile */
};

/* The limit in ns, with a worker's intended sleep between polls added: a task queued for it
 * waits that long by design. */
static uint64_t watch_limit_ns(const struct sb_rt *rt)
{
	uint64_t ns = (uint64_t)rt->cfg.stall_limit * 1000000;
	if (rt->cfg.task_polling_wait >= 2)
		ns += (uint64_t)(rt->cfg.task_polling_wait - 2) * 1000;
	return ns;
}

static uint64_t watch_step_ns(const struct sb_rt *rt)
{
	return watch_limit_ns(rt) / 4;
}

static void watch_add(_Atomic uint64_t *c)
{
	/* relaxed load+store: the owner is the only writer; the monitor tolerates staleness */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

void sb_watch_placed(struct sb_thread *tc, struct sb_task *t)
{
	/* conditional tasks wait for their check and markers are never started: neither is queued
	 * work in the watchdog's sense */
	if (t->flags & (SB_TF_COND | SB_TF_MARKER)) {
		t->wslot = 0;
		return;
	}
	unsigned slot = (unsigned)((sb_now_ns() / watch_step_ns(tc->rt)) % SB_WATCH_SLOTS);
	t->wslot = (uint16_t)(slot + 1);
	watch_add(&tc->watch.placed[slot][t->cls % SB_MAX_CLASSES]);
}

void sb_watch_started(struct sb_thread *tc, struct sb_task *t)
{
	watch_add(&tc->watch.started[t->wslot - 1][t->cls % SB_MAX_CLASSES]);
	t->wslot = 0;
}

static void watch_sum(struct sb_rt *rt, struct mon_watch *mw)
{
	memset(mw->placed, 0, sizeof mw->placed);
	memset(mw->started, 0, sizeof mw->started);
	/* Starts are read before placements: a task placed before a start we count is then counted
	 * placed as well, whichever threads did the two. relaxed: samples; an imbalance the other
	 * way lasts a period and only makes work look younger. */
	pthread_mutex_lock(&rt->threads_lock);
	for (struct sb_thread *tc = rt->threads; tc; tc = tc->next_all)
		for (unsigned k = 0; k < SB_WATCH_SLOTS; k++)
			for (unsigned c = 0; c < SB_MAX_CLASSES; c++)
				mw->started[k][c] += atomic_load_explicit(&tc->watch.started[k][c], memory_order_relaxed);
	for (struct sb_thread *tc = rt->threads; tc; tc = tc->next_all)
		for (unsigned k = 0; k < SB_WATCH_SLOTS; k++)
			for (unsigned c = 0; c < SB_MAX_CLASSES; c++)
				mw->placed[k][c] += atomic_load_explicit(&tc->watch.placed[k][c], memory_order_relaxed);
	pthread_mutex_unlock(&rt->threads_lock);
}

static int64_t slot_waiting(const struct mon_watch *mw, unsigned k, int cls)
{
	int64_t n = 0;
	for (unsigned c = 0; c < SB_MAX_CLASSES; c++)
		if (cls < 0 || (unsigned)cls == c)
			n += (int64_t)(mw->placed[k][c] - mw->started[k][c]);
	return n;
}

/* Steps back from now of the newest step that maps to slot k. */
static unsigned slot_back(uint64_t cur, unsigned k)
{
	return (unsigned)((cur % SB_WATCH_SLOTS + SB_WATCH_SLOTS - k) % SB_WATCH_SLOTS);
}

/* The oldest slot holding waiting work: its steps back, or -1 when nothing waits. */
static int oldest_back(const struct mon_watch *mw, uint64_t cur, unsigned *slot)
{
	int best = -1;
	for (unsigned k = 0; k < SB_WATCH_SLOTS; k++) {
		int b = (int)slot_back(cur, k);
		if (b > best && slot_waiting(mw, k, -1) > 0) {
			best = b;
			*slot = k;
		}
	}
	return best;
}

struct buf {
	char *p;
	size_t len, used;
};

static void __attribute__((format(printf, 2, 3))) put(struct buf *b, const char *fmt, ...)
{
	if (b->used + 1 >= b->len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b->p + b->used, b->len - b->used, fmt, ap);
	va_end(ap);
	if (k > 0)
		b->used = b->used + (size_t)k < b->len ? b->used + (size_t)k : b->len - 1;
}

static void class_name(const struct sb_rt *rt, unsigned c, struct buf *b)
{
	/* acquire: pairs with the release in sb_rt_set_class_names */
	const char *const *names = atomic_load_explicit(&((struct sb_rt *)rt)->class_names, memory_order_acquire);
	for (unsigned i = 0; names && names[i]; i++)
		if (i == c) {
			put(b, "'%s'", names[i]);
			return;
		}
	put(b, "class %u", c);
}

/* "N of class 'a', M of class 'b'": the classes (of the mask) waiting in slot k. */
static void slot_classes(const struct sb_rt *rt, const struct mon_watch *mw, unsigned k, unsigned mask, struct buf *b)
{
	bool first = true;
	for (unsigned c = 0; c < SB_MAX_CLASSES; c++) {
		int64_t n = slot_waiting(mw, k, (int)c);
		if (n <= 0 || !(mask & (1u << c)))
			continue;
		put(b, "%s%lld of ", first ? "" : ", ", (long long)n);
		class_name(rt, c, b);
		first = false;
	}
}

static bool worker_resting(const struct sb_rt *rt, unsigned i)
{
	return sb_worker_suspended(rt, i) || atomic_load_explicit(&rt->w[i].idle, memory_order_relaxed);
}

/* What every worker was doing, and which queues held work, as seen now. */
static void observed(const struct sb_rt *rt, struct buf *b)
{
	int64_t nap = rt->cfg.task_polling_wait - 2;
	put(b, "; workers:");
	for (unsigned i = 0; i < rt->n; i++) {
		const char *st = sb_worker_suspended(rt, i) ? "suspended"
				 : atomic_load_explicit(&rt->w[i].idle, memory_order_relaxed) ? "idle" : "busy";
		put(b, "%s %u %s", i ? "," : "", i, st);
		if (nap >= 0 && !strcmp(st, "idle"))
			put(b, " (sleeping %lld us between polls, task_polling_wait)", (long long)nap);
	}
	put(b, "; queues holding work:");
	bool any = false;
	for (unsigned i = 0; i < rt->n; i++) {
		size_t q = sb_policy_queued(rt, (int)i);
		if (q) {
			put(b, "%s worker %u's (%zu)", any ? "," : "", i, q);
			any = true;
		}
	}
	size_t shared = sb_policy_queued(rt, -1);
	if (shared) {
		put(b, "%s shared (%zu)", any ? "," : "", shared);
		any = true;
	}
	if (!any)
		put(b, " none counted by the policy");
}

static void dump_state(struct sb_rt *rt, struct buf *b)
{
	for (unsigned i = 0; i < rt->n; i++) {
		struct sb_worker *w = &rt->w[i];
		uint64_t c[SB_NR_COUNTERS];
		sb_rt_worker_counters(rt, i, c);
		put(b, "\n  worker %u: %s%s queued=%zu tasks=%llu suspends=%llu woken=%llu", i,
		    sb_worker_suspended(rt, i) ? "suspended" : "active",
		    atomic_load_explicit(&w->idle, memory_order_relaxed) ? " idle" : "", sb_policy_queued(rt, (int)i),
		    (unsigned long long)c[SB_C_RUN], (unsigned long long)c[SB_C_SUSPEND], (unsigned long long)c[SB_C_WOKEN]);
	}
	put(b, "\n  shared queues: queued=%zu", sb_policy_queued(rt, -1));
}

/* "limit 10 ms", plus the intended sleep between polls when there is one */
static void limit_text(const struct sb_rt *rt, struct buf *b)
{
	put(b, "limit %lld ms", (long long)rt->cfg.stall_limit);
	if (rt->cfg.task_polling_wait >= 2)
		put(b, " + %lld us of intended sleep between polls", (long long)rt->cfg.task_polling_wait - 2);
}

static void fail_with(struct sb_rt *rt, struct buf *b)
{
	dump_state(rt, b);
	sb_fail(rt, "%s", b->p);
}

/* Sum the buckets and find the oldest slot holding waiting work: how old that work is at least
 * (placed before the end of its step), 0 when nothing waits; its slot and steps back. */
static uint64_t oldest_age(struct sb_rt *rt, struct mon_watch *mw, uint64_t now, unsigned *slot, int *back)
{
	uint64_t step = watch_step_ns(rt), cur = now / step;
	watch_sum(rt, mw);
	*back = oldest_back(mw, cur, slot);
	return *back > 0 ? now - (cur - (uint64_t)*back + 1) * step : 0;
}

/* The starvation rule, once per sample. */
static void watch_starvation(struct sb_rt *rt, struct mon_watch *mw, uint64_t now, uint64_t limit_ns)
{
	uint64_t cur = now / watch_step_ns(rt);
	unsigned slot = 0;
	int back;
	uint64_t age = oldest_age(rt, mw, now, &slot, &back);
	uint64_t younger = 0;
	for (unsigned k = 0; k < SB_WATCH_SLOTS; k++) {
		uint64_t st = 0;
		for (unsigned c = 0; c < SB_MAX_CLASSES; c++)
			st += mw->started[k][c];
		if (back > 0 && (int)slot_back(cur, k) < back)
			younger += st - mw->prev_started[k];
		mw->prev_started[k] = st;
	}
	/* A class whose tasks keep starting is being served, however slowly (a long FIFO backlog)
	 * or in whatever order (newest first in a fork-join): only a class of which nothing has
	 * started for a whole limit is starved. */
	unsigned starved = 0;
	for (unsigned c = 0; c < SB_MAX_CLASSES; c++) {
		uint64_t st = 0;
		for (unsigned k = 0; k < SB_WATCH_SLOTS; k++)
			st += mw->started[k][c];
		if (st != mw->class_started[c])
			mw->last_start[c] = now;
		mw->class_started[c] = st;
		if (back > 0 && slot_waiting(mw, slot, (int)c) > 0 && now - mw->last_start[c] > limit_ns)
			starved |= 1u << c;
	}
	if (back <= 0 || age <= limit_ns || !starved) {
		mw->overtaken = 0;
		return;
	}
	mw->overtaken += younger;
	if (!mw->overtaken)
		return;
	char text[3072];
	struct buf b = { text, sizeof text, 0 };
	put(&b, "STARVATION: queued work has not started for at least %llu ms (", (unsigned long long)(age / 1000000));
	limit_text(rt, &b);
	put(&b, "), no task of its class started for as long, while %llu tasks queued after it started; waiting "
		"that long: ", (unsigned long long)mw->overtaken);
	slot_classes(rt, mw, slot, starved, &b);
	observed(rt, &b);
	fail_with(rt, &b);
	mw->overtaken = 0;
}

/* The lost wake-up rule for worker i's queue (or the shared queues, i < 0), once the policy's
 * count has stayed up for the limit. The verdict also needs a task seen waiting that long in
 * the age buckets: a count alone may be a policy's estimate or its own entries (markers,
 * tickets). Returns whether it failed the run. */
static bool stall(struct sb_rt *rt, struct mon_watch *mw, int i, uint64_t waited, uint64_t now)
{
	unsigned slot = 0;
	int back;
	uint64_t age = oldest_age(rt, mw, now, &slot, &back);
	if (age <= watch_limit_ns(rt))
		return false;
	char text[3072];
	struct buf b = { text, sizeof text, 0 };
	if (i >= 0)
		put(&b, "STALL: worker %d's queue has held %zu runnable tasks for %llu ms (", i, sb_policy_queued(rt, i),
		    (unsigned long long)(waited / 1000000));
	else
		put(&b, "STALL: the shared queues have held %zu runnable tasks for %llu ms (", sb_policy_queued(rt, -1),
		    (unsigned long long)(waited / 1000000));
	limit_text(rt, &b);
	if (i >= 0)
		put(&b, ") and worker %d, resting, started none of them", i);
	else
		put(&b, ") and no task started anywhere meanwhile, while a worker rests");
	put(&b, "; the oldest queued work (at least %llu ms old): ", (unsigned long long)(age / 1000000));
	slot_classes(rt, mw, slot, ~0u, &b);
	observed(rt, &b);
	fail_with(rt, &b);
	return true;
}

/* The monitor thread. Longer than 60 lines on purpose: one period samples every worker once and
 * applies preemption and both watchdog rules to the same sample, so the loop holds the sample;
 * the rules' own work is in stall() and watch_starvation(). */
static void *monitor_main(void *arg)
{
	struct sb_rt *rt = arg;
	struct mon_worker *m = calloc(rt->n, sizeof *m);
	struct mon_watch *mw = calloc(1, sizeof *mw);
	if (!m || !mw) {
		free(m);
		free(mw);
		return NULL;
	}
	uint64_t preempt_ns = (uint64_t)rt->cfg.preempt_threshold * 1000;
	uint64_t stall_ns = rt->cfg.stall_limit ? watch_limit_ns(rt) : 0;
	uint64_t period = 1000000; /* 1 ms: SB_STALL_RESOLUTION_MS is ten of these */
	if (preempt_ns && preempt_ns / 4 < period)
		period = preempt_ns / 4 > 50000 ? preempt_ns / 4 : 50000;
	uint64_t shared_since = 0, last_total = 0;
	uint64_t now = sb_now_ns(), last = now;
	for (unsigned i = 0; i < rt->n; i++)
		m[i].since = now;
	uint32_t seq;
	while (sb_helper_next(&rt->monitor, &seq)) {
		sb_helper_wait(&rt->monitor, seq, period); /* only the stop kicks it */
		last = now;
		now = sb_now_ns();
		uint64_t total = 0;
		bool resting = false;
		for (unsigned i = 0; stall_ns && i < rt->n && !resting; i++)
			resting = worker_resting(rt, i);
		for (unsigned i = 0; i < rt->n; i++) {
			struct sb_worker *w = &rt->w[i];
			/* relaxed: samples; a stale one only delays a decision by a period */
			uint64_t s = atomic_load_explicit(&w->run_seq, memory_order_relaxed);
			bool idle = worker_resting(rt, i);
			total += s;
			bool progressed = s != m[i].seq;
			if (progressed || idle) {
				m[i].seq = s;
				m[i].since = now;
				m[i].flagged = false;
			} else if (preempt_ns && !m[i].flagged && now - m[i].since >= preempt_ns) {
				atomic_store_explicit(&w->yield_req, 1, memory_order_relaxed);
				m[i].flagged = true;
			}
			if (!stall_ns)
				continue;
			/* a task queued for worker i while worker i rests and takes none of it (a worker
			 * busy with a long task, or off the CPU, is not waiting for a wake-up; nor is one
			 * whose nap between polls is over by more than a period: it waits for a core, and
			 * the time since the last sample is not counted, but what it waited before still
			 * is: resetting the clock there kept a STALL from ever being reported on a loaded
			 * machine, where some nap in every limit ends late). relaxed: a sample of the
			 * worker's hint, as before; m[] and last are this thread's own. */
			uint64_t nap_end = atomic_load_explicit(&w->nap_until, memory_order_relaxed);
			bool overslept = nap_end && now > nap_end + period;
			bool waiting = !progressed && idle && sb_policy_queued(rt, (int)i) > 0;
			if (!waiting) {
				m[i].waiting = 0;
			} else if (overslept) {
				if (m[i].waiting)
					m[i].waiting += now - last; /* paused */
			} else if (!m[i].waiting) {
				m[i].waiting = now;
			} else if (now - m[i].waiting > stall_ns && stall(rt, mw, (int)i, now - m[i].waiting, now)) {
				m[i].waiting = now; /* report once per limit */
			}
		}
		if (stall_ns) {
			bool shared_waiting = sb_policy_queued(rt, -1) > 0 && resting && total == last_total;
			if (!shared_waiting)
				shared_since = 0;
			else if (!shared_since)
				shared_since = now;
			else if (now - shared_since > stall_ns && stall(rt, mw, -1, now - shared_since, now))
				shared_since = now;
			watch_starvation(rt, mw, now, stall_ns);
		}
		last_total = total;
	}
	free(m);
	free(mw);
	return NULL;
}

void sb_rt_set_class_names(struct sb_rt *rt, const char *const *names)
{
	/* release: the names are published with the pointer */
	atomic_store_explicit(&rt->class_names, names, memory_order_release);
}

int sb_monitor_start(struct sb_rt *rt, char *err, size_t errlen)
{
	if (!rt->cfg.preempt_threshold && !rt->cfg.stall_limit)
		return 0;
	return sb_helper_start(&rt->monitor, "monitor", monitor_main, rt, err, errlen);
}

void sb_monitor_stop(struct sb_rt *rt)
{
	sb_helper_stop(&rt->monitor);
}
