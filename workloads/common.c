/*
 * common.c - shared workload machinery (see common.h): random numbers, client threads,
 * counted jobs and tasks, the statement DAG, waiting and open-loop arrivals.
 *
 * Owns no workload state; every function here works on what its caller passes.
 */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A thread's count of the tasks it created for one client set. Written by its thread only
 * (relaxed load + store, no lock prefix), summed by wl_clients_counts (relaxed loads). */
struct wl_tcount {
	_Atomic uint64_t n;
	struct wl_tcount *next;
};

const char *const wl_dist_names[] = { "fixed", "exp", "lognormal", "uniform", NULL };

static uint64_t splitmix64(uint64_t *x)
{
	return wl_mix64(*x += 0x9e3779b97f4a7c15ull);
}

void wl_rng_seed(struct wl_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t wl_rng_next(struct wl_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double wl_rng_unit(struct wl_rng *r)
{
	return (double)(wl_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t wl_rng_below(struct wl_rng *r, uint64_t n)
{
	return n ? wl_rng_next(r) % n : 0;
}

double wl_rng_exp(struct wl_rng *r, double mean)
{
	return -mean * log1p(-wl_rng_unit(r));
}

uint64_t wl_cost(struct wl_rng *r, int dist, double mean_ns)
{
	double v;
	switch (dist) {
	case WL_EXP:
		v = wl_rng_exp(r, mean_ns);
		break;
	case WL_LOGNORMAL: {
		/* sigma 1: mean = exp(mu + 1/2), so mu = ln(mean) - 1/2 */
		double u1 = wl_rng_unit(r), u2 = wl_rng_unit(r);
		double z = sqrt(-2.0 * log1p(-u1)) * cos(2.0 * M_PI * u2);
		v = exp(log(mean_ns > 1 ? mean_ns : 1) - 0.5 + z);
		break;
	}
	case WL_UNIFORM:
		v = 2.0 * mean_ns * wl_rng_unit(r);
		break;
	default:
		v = mean_ns;
	}
	return v > 0 ? (uint64_t)v : 0;
}

int wl_pick(struct wl_rng *r, const int64_t *weights, int n)
{
	int64_t total = 0;
	for (int i = 0; i < n; i++)
		total += weights[i] > 0 ? weights[i] : 0;
	if (total <= 0)
		return -1;
	int64_t x = (int64_t)wl_rng_below(r, (uint64_t)total);
	for (int i = 0; i < n; i++) {
		if (weights[i] <= 0)
			continue;
		if (x < weights[i])
			return i;
		x -= weights[i];
	}
	return n - 1;
}

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
	out->jobs_submitted = atomic_load_explicit(&cs->jobs_submitted, memory_order_relaxed);
	out->jobs_done = atomic_load_explicit(&cs->jobs_done, memory_order_relaxed);
	out->jobs_failed = atomic_load_explicit(&cs->jobs_failed, memory_order_relaxed);
	uint64_t tasks = 0;
	pthread_mutex_lock(&cs->tcount_lock);
	for (struct wl_tcount *t = cs->tcounts; t; t = t->next)
		tasks += atomic_load_explicit(&t->n, memory_order_relaxed);
	pthread_mutex_unlock(&cs->tcount_lock);
	out->tasks_created = tasks;
	out->results_wrong = atomic_load_explicit(&cs->nr_wrong, memory_order_relaxed);
	out->wrong_text = cs->wrong_text;
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
	struct wl_tcount *t = calloc(1, sizeof *t);
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

static inline void tcount_inc(struct wl_tcount *t)
{
	atomic_store_explicit(&t->n, atomic_load_explicit(&t->n, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* the first count on a thread for a set: out of line, so the common case saves no registers */
static __attribute__((noinline, cold)) void count_first(struct wl_clients *cs)
{
	tcount_inc(tcount_register(cs));
}

void wl_count_task(struct wl_clients *cs)
{
	/* the generation, not the pointer, says whether this thread's block belongs to cs: a set
	 * freed and another allocated at the same address must not reuse the old block */
	if (__builtin_expect(my_tcount_gen != cs->gen, 0)) {
		count_first(cs);
		return;
	}
	tcount_inc(my_tcount);
}

struct sb_task *wl_task(struct wl_clients *cs, struct sb_job *j, sb_task_fn fn, void *arg)
{
	wl_count_task(cs);
	return sb_task_new(j, fn, arg);
}

void wl_submit(struct wl_clients *cs, struct sb_job *j, struct sb_task *root)
{
	atomic_fetch_add_explicit(&cs->jobs_submitted, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&cs->nr_class[j->cls], 1, memory_order_relaxed);
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

void wl_count_done(struct wl_clients *cs, struct sb_job *j)
{
	if (sb_job_status(j) != SB_JOB_OK)
		atomic_fetch_add_explicit(&cs->jobs_failed, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&cs->jobs_done, 1, memory_order_relaxed);
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

enum sb_result wl_work_task(struct sb_task *t)
{
	sb_work_ns(t->u[0]);
	return SB_DONE;
}

struct sb_task *wl_work(struct wl_clients *cs, struct sb_job *j, uint64_t ns, uint32_t flags)
{
	struct sb_task *t = wl_task(cs, j, wl_work_task, NULL);
	t->u[0] = ns;
	t->flags = j->txn ? flags : flags & ~(uint32_t)SB_TF_STICKY;
	return t;
}

/* Work between two looks at the yield request: short enough that a yield comes promptly. */
#define WL_SLICE_NS 10000

enum sb_result wl_spend(struct sb_task *t, bool yields, uint64_t yield_ns)
{
	uint64_t left = t->u[0];
	uint64_t t0 = yields && yield_ns ? sb_now_ns() : 0;
	while (left) {
		uint64_t s = left < WL_SLICE_NS ? left : WL_SLICE_NS;
		sb_work_ns(s);
		left -= s;
		if (!yields || !left)
			continue;
		if (sb_should_yield() || (yield_ns && sb_now_ns() - t0 >= yield_ns)) {
			t->u[0] = left;
			return SB_YIELD;
		}
	}
	return SB_DONE;
}

/* ---- the statement DAG ---- */

static enum sb_result dag_exchange(struct sb_task *t)
{
	struct wl_dag *d = t->arg;
	/* the DAG is complete once this ends: ask for the teardown now, as jogasaki's controller
	 * does; a teardown task waits for this task's end by rescheduling itself */
	sb_job_request_teardown(t->job);
	sb_work_ns(d->exchange_ns);
	return SB_DONE;
}

static enum sb_result dag_process(struct sb_task *t)
{
	struct wl_dag *d = t->arg;
	enum sb_result r = wl_spend(t, d->yields, d->yield_ns);
	if (r != SB_DONE)
		return r;
	/* acq_rel: the release publishes this task's work; the last one acquires all of it
	 * before the next DAG step; pairs with the other process tasks' decrements */
	if (atomic_fetch_sub_explicit(&d->pending, 1, memory_order_acq_rel) != 1)
		return SB_DONE;
	if (d->exchange) {
		struct sb_task *x = wl_task(d->cs, t->job, dag_exchange, d);
		sb_spawn(x);
	} else {
		sb_job_request_teardown(t->job);
	}
	return SB_DONE;
}

static enum sb_result dag_bootstrap(struct sb_task *t)
{
	struct wl_dag *d = t->arg;
	sb_work_ns(d->bootstrap_ns);
	uint32_t flags = t->job->txn ? d->proc_flags : d->proc_flags & ~(uint32_t)SB_TF_STICKY;
	for (unsigned i = 0; i < d->nproc; i++) {
		struct sb_task *p = wl_task(d->cs, t->job, dag_process, d);
		p->u[0] = d->proc_ns[i];
		p->flags = flags;
		sb_spawn(p);
	}
	return SB_DONE;
}

struct sb_task *wl_dag_root(struct sb_job *j, struct wl_dag *d)
{
	if (d->nproc < 1)
		d->nproc = 1;
	if (d->nproc > WL_DAG_MAX)
		d->nproc = WL_DAG_MAX;
	/* relaxed: published to the tasks by their submission */
	atomic_store_explicit(&d->pending, d->nproc, memory_order_relaxed);
	return wl_task(d->cs, j, dag_bootstrap, d);
}

uint64_t wl_dag_cost(const struct wl_dag *d)
{
	uint64_t sum = d->bootstrap_ns + (d->exchange ? d->exchange_ns : 0);
	for (unsigned i = 0; i < d->nproc; i++)
		sum += d->proc_ns[i];
	return sum;
}

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
