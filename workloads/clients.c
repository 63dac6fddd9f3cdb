/*
 * clients.c - client threads, and the jobs and tasks they submit, counted per thread (common.h).
 */
#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A thread's counts for one client set: the tasks it created, the jobs it submitted and the
 * jobs whose end it saw. Written by its thread only (relaxed load + store, no lock prefix), summed
 * by wl_clients_counts (relaxed loads), on cache lines of its own: a count that every request
 * thread and every worker adds to would put a contended line on every job and every task, which
 * the runs would then measure. */
struct wl_tcount {
	_Atomic uint64_t tasks, submitted, done, failed;
	_Atomic uint64_t cls_submitted[SB_MAX_CLASSES];
	_Atomic uint64_t arrivals_done[SB_MAX_CLASSES]; /* issued arrivals whose job ended ok */
	struct wl_tcount *next;
};

/* ---- clients ---- */

static void *client_main(void *arg)
{
	struct wl_client *c = arg;
	struct wl_clients *cs = c->set;
	sb_thread_attach(cs->env->rt);
	cs->body(c);
	/* whatever the client's own serial queue still holds runs before it leaves */
	sb_thread_detach();
	/* release: a harness that sees every client finished sees their counts */
	atomic_fetch_add_explicit(&cs->finished, 1, memory_order_release);
	return NULL;
}

int wl_clients_start(struct wl_clients *cs, const struct wl_env *env, unsigned n, void (*body)(struct wl_client *),
		     void *user, char *err, size_t errlen)
{
	if (!cs->gen)
		wl_clients_init(cs);
	cs->env = env;
	cs->n = n;
	cs->body = body;
	cs->user = user;
	cs->th = calloc(n, sizeof *cs->th);
	cs->c = calloc(n, sizeof *cs->c);
	if (!cs->th || !cs->c) {
		snprintf(err, errlen, "out of memory for %u clients", n);
		cs->n = 0;
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		struct wl_client *c = &cs->c[i];
		c->set = cs;
		c->idx = i;
		wl_rng_seed(&c->rng, env->seed, i + 1);
		c->quota = env->jobs > 0 ? env->jobs / n + ((int64_t)i < env->jobs % n) : -1;
	}
	for (unsigned i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "client-%u", i);
		int e = sb_exec_thread_start(&cs->th[i], name, client_main, &cs->c[i]);
		if (e) {
			snprintf(err, errlen, "cannot create client thread %u of %u: %s", i, n, strerror(-e));
			/* relaxed: the clients poll it relaxed; the joins below order the rest */
			atomic_store_explicit(env->stop, true, memory_order_relaxed);
			for (unsigned k = 0; k < i; k++)
				sb_exec_thread_join(&cs->th[k]);
			cs->n = 0;
			return e;
		}
	}
	return 0;
}

bool wl_stopping(const struct wl_clients *cs)
{
	/* relaxed: a flag polled between jobs; seeing it a job late is harmless */
	return atomic_load_explicit(cs->env->stop, memory_order_relaxed);
}

bool wl_client_stopping(const struct wl_client *c)
{
	return wl_stopping(c->set);
}

bool wl_client_more(struct wl_client *c)
{
	if (wl_client_stopping(c))
		return false;
	if (c->quota < 0)
		return true;
	if (c->quota == 0)
		return false;
	c->quota--;
	return true;
}

bool wl_clients_done(struct wl_clients *cs)
{
	return atomic_load_explicit(&cs->finished, memory_order_acquire) == cs->n;
}

void wl_clients_join(struct wl_clients *cs)
{
	if (cs->joined)
		return;
	for (unsigned i = 0; i < cs->n; i++)
		sb_exec_thread_join(&cs->th[i]);
	cs->joined = true;
}

void wl_clients_counts(struct wl_clients *cs, struct wl_counts *out)
{
	memset(out, 0, sizeof *out);
	uint64_t arrivals_done[SB_MAX_CLASSES] = { 0 };
	pthread_mutex_lock(&cs->tcount_lock);
	for (struct wl_tcount *t = cs->tcounts; t; t = t->next) {
		out->tasks_created += atomic_load_explicit(&t->tasks, memory_order_relaxed);
		out->jobs_submitted += atomic_load_explicit(&t->submitted, memory_order_relaxed);
		out->jobs_done += atomic_load_explicit(&t->done, memory_order_relaxed);
		out->jobs_failed += atomic_load_explicit(&t->failed, memory_order_relaxed);
		for (unsigned k = 0; k < SB_MAX_CLASSES; k++) {
			out->class_submitted[k] += atomic_load_explicit(&t->cls_submitted[k], memory_order_relaxed);
			arrivals_done[k] += atomic_load_explicit(&t->arrivals_done[k], memory_order_relaxed);
		}
	}
	pthread_mutex_unlock(&cs->tcount_lock);
	out->results_wrong = atomic_load_explicit(&cs->nr_wrong, memory_order_relaxed);
	out->wrong_text = cs->wrong_text;
	out->arrival_classes = atomic_load_explicit(&cs->arrival_classes, memory_order_relaxed);
	for (unsigned k = 0; k < SB_MAX_CLASSES; k++)
		out->arrivals[k] = (struct wl_arrival_counts){
			.offered = atomic_load_explicit(&cs->nr_offered[k], memory_order_relaxed),
			.issued = atomic_load_explicit(&cs->nr_issued[k], memory_order_relaxed),
			.unissued = atomic_load_explicit(&cs->nr_unissued[k], memory_order_relaxed),
			.completed = arrivals_done[k],
		};
	out->lag_max_ns = atomic_load_explicit(&cs->lag_max_ns, memory_order_relaxed);
}

void wl_clients_free(struct wl_clients *cs)
{
	for (struct wl_tcount *t = cs->tcounts, *next; t; t = next) {
		next = t->next;
		free(t);
	}
	cs->tcounts = NULL;
	pthread_mutex_destroy(&cs->tcount_lock);
	free(cs->th);
	free(cs->c);
	cs->th = NULL;
	cs->c = NULL;
}

bool wl_state_done(void *state)
{
	return wl_clients_done(wl_clients_of(state));
}

void wl_state_stop(void *state)
{
	wl_clients_join(wl_clients_of(state));
}

void wl_state_counts(void *state, struct wl_counts *out)
{
	wl_clients_counts(wl_clients_of(state), out);
}

/* ---- jobs and tasks, counted ---- */

/* All counters below are relaxed: they are read after the threads that wrote them are joined
 * (exact) or as a monotonic progress estimate. */

static _Atomic uint64_t wl_gens;
/* this thread's block and the generation of the set it belongs to (sb_tls: per actor under a
 * virtual executor) */
#define my_tcount (*(struct wl_tcount **)&sb_tls()->wl_ptr)
#define my_tcount_gen (sb_tls()->wl_gen)

static __attribute__((noinline)) struct wl_tcount *tcount_register(struct wl_clients *cs)
{
	struct wl_tcount *t = sb_alloc_lines(sizeof *t); /* no line shared with another thread's */
	if (!t) {
		fprintf(stderr, "%s:%d: out of memory counting tasks\n", __FILE__, __LINE__);
		abort();
	}
	pthread_mutex_lock(&cs->tcount_lock);
	t->next = cs->tcounts;
	cs->tcounts = t;
	pthread_mutex_unlock(&cs->tcount_lock);
	my_tcount = t;
	my_tcount_gen = cs->gen;
	return t;
}

void wl_clients_init(struct wl_clients *cs)
{
	pthread_mutex_init(&cs->tcount_lock, NULL);
	/* relaxed: only distinctness matters; generation 0 means "no block yet" in every thread */
	cs->gen = atomic_fetch_add_explicit(&wl_gens, 1, memory_order_relaxed) + 1;
}

static inline void bump(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* this thread's block for cs, made on its first count */
static inline struct wl_tcount *my_block(struct wl_clients *cs)
{
	return __builtin_expect(my_tcount_gen == cs->gen, 1) ? my_tcount : tcount_register(cs);
}

/* the first count on a thread for a set: out of line, so the common case saves no registers */
static __attribute__((noinline, cold)) void count_first(struct wl_clients *cs)
{
	bump(&tcount_register(cs)->tasks);
}

/* Counts a task in this thread's block for cs; false (nothing counted) when the thread has no
 * block for cs yet. The generation, not the pointer, says whether the block belongs to cs: a set
 * freed and another allocated at the same address must not reuse the old block. */
static inline bool count_cached(struct wl_clients *cs)
{
	if (__builtin_expect(my_tcount_gen != cs->gen, 0))
		return false;
	bump(&my_tcount->tasks);
	return true;
}

void wl_count_task(struct wl_clients *cs)
{
	if (!count_cached(cs))
		count_first(cs);
}

/* wl_task's first task on a thread for a set: out of line, so that the common case is a
 * count and a tail call, with no registers to save */
static __attribute__((noinline, cold)) struct sb_task *task_first(struct wl_clients *cs, struct sb_job *j,
								      sb_task_fn fn, void *arg)
{
	count_first(cs);
	return sb_task_new(j, fn, arg);
}

struct sb_task *wl_task(struct wl_clients *cs, struct sb_job *j, sb_task_fn fn, void *arg)
{
	if (!count_cached(cs))
		return task_first(cs, j, fn, arg);
	return sb_task_new(j, fn, arg);
}

void wl_submit(struct wl_clients *cs, struct sb_job *j, struct sb_task *root)
{
	struct wl_tcount *t = my_block(cs);
	bump(&t->submitted);
	bump(&t->cls_submitted[j->cls]);
	sb_job_submit(j, root);
}

void wl_client_note(struct wl_client *c, unsigned cls, uint64_t shape)
{
	c->sig = wl_mix64(c->sig ^ wl_mix64(((uint64_t)cls << 56) ^ shape));
}

void wl_client_submit(struct wl_client *c, struct sb_job *j, struct sb_task *root, uint64_t shape)
{
	wl_client_note(c, j->cls, shape);
	wl_submit(c->set, j, root);
}

bool wl_wait_put(struct sb_job *j)
{
	bool ok = sb_job_wait(j);
	/* a job that never finished stays referenced by the runtime; ours can go either way */
	sb_job_put(j);
	return ok;
}

bool wl_window_room(struct wl_window *w)
{
	while (w->head < w->tail && sb_job_done(w->ring[w->head % w->cap]))
		sb_job_put(w->ring[w->head++ % w->cap]);
	if (w->tail - w->head == w->cap)
		return wl_wait_put(w->ring[w->head++ % w->cap]);
	return true;
}

void wl_window_drain(struct wl_window *w, bool ok)
{
	while (w->head < w->tail) {
		struct sb_job *j = w->ring[w->head++ % w->cap];
		if (ok)
			ok = wl_wait_put(j);
		else
			sb_job_put(j);
	}
}

void wl_count_done(struct wl_clients *cs, struct sb_job *j)
{
	struct wl_tcount *t = my_block(cs);
	if (sb_job_status(j) != SB_JOB_OK)
		bump(&t->failed);
	else if (atomic_load_explicit(&cs->arrival_classes, memory_order_relaxed) >> j->cls & 1)
		bump(&t->arrivals_done[j->cls]);
	bump(&t->done);
}

void wl_job_done(struct sb_job *j)
{
	wl_count_done(wl_clients_of(j->arg), j);
}

void wl_wrong(struct wl_clients *cs, const char *fmt, ...)
{
	/* relaxed: only the value matters (who is first); the text is read after the threads are
	 * joined, which orders it */
	if (atomic_fetch_add_explicit(&cs->nr_wrong, 1, memory_order_relaxed) != 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cs->wrong_text, sizeof cs->wrong_text, fmt, ap);
	va_end(ap);
}
