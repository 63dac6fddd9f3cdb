/*
 * common.c - shared workload machinery (see common.h).
 */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const wl_dist_names[] = { "fixed", "exp", "lognormal", "uniform", NULL };

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
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
	memset(cs, 0, sizeof *cs);
	cs->env = env;
	cs->n = n;
	cs->body = body;
	cs->user = user;
	cs->th = calloc(n, sizeof *cs->th);
	cs->c = calloc(n, sizeof *cs->c);
	if (!cs->th || !cs->c) {
		snprintf(err, errlen, "out of memory for %u clients", n);
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
		int e = pthread_create(&cs->th[i], NULL, client_main, &cs->c[i]);
		if (e) {
			snprintf(err, errlen, "cannot create client thread %u of %u: %s", i, n, strerror(e));
			atomic_store(env->stop, true);
			for (unsigned k = 0; k < i; k++)
				pthread_join(cs->th[k], NULL);
			cs->n = 0;
			return -e;
		}
	}
	return 0;
}

bool wl_client_more(struct wl_client *c)
{
	if (atomic_load_explicit(c->set->env->stop, memory_order_relaxed))
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
		pthread_join(cs->th[i], NULL);
	cs->joined = true;
}

void wl_clients_counts(struct wl_clients *cs, struct wl_counts *out)
{
	out->jobs_submitted = atomic_load_explicit(&cs->jobs_submitted, memory_order_relaxed);
	out->jobs_done = atomic_load_explicit(&cs->jobs_done, memory_order_relaxed);
	out->jobs_failed = atomic_load_explicit(&cs->jobs_failed, memory_order_relaxed);
	out->tasks_created = atomic_load_explicit(&cs->tasks_created, memory_order_relaxed);
}

void wl_clients_free(struct wl_clients *cs)
{
	free(cs->th);
	free(cs->c);
	cs->th = NULL;
	cs->c = NULL;
}

struct sb_task *wl_task(struct wl_clients *cs, struct sb_job *j, sb_task_fn fn, void *arg)
{
	/* relaxed: counts, read after the run */
	atomic_fetch_add_explicit(&cs->tasks_created, 1, memory_order_relaxed);
	return sb_task_new(j, fn, arg);
}

void wl_count_submit(struct wl_clients *cs)
{
	atomic_fetch_add_explicit(&cs->jobs_submitted, 1, memory_order_relaxed);
}

void wl_count_done(struct wl_clients *cs, struct sb_job *j)
{
	if (sb_job_status(j) != SB_JOB_OK)
		atomic_fetch_add_explicit(&cs->jobs_failed, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&cs->jobs_done, 1, memory_order_relaxed);
}

void wl_wait_until(uint64_t when)
{
	for (;;) {
		uint64_t now = sb_now_ns();
		if (now >= when)
			return;
		if (sb_thread_run_pending())
			continue;
		uint64_t d = when - now;
		if (d > 1000000)
			d = 1000000; /* look at our own serial queue at least every ms */
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)d };
		nanosleep(&ts, NULL);
	}
}
