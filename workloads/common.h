/*
 * common.h - what every workload generator shares: a deterministic random generator, cost
 * distributions, client threads with quotas, and job/task helpers that keep the counts the
 * harness reconciles (workload.h).
 *
 * Thread rules: a struct wl_client belongs to its thread; struct wl_clients' counters are
 * atomics updated from any thread (completion callbacks run on whichever thread tears down).
 */
#ifndef SB_WORKLOADS_COMMON_H
#define SB_WORKLOADS_COMMON_H

#include <pthread.h>

#include "workload.h"

/* ---- random numbers: xoshiro256**, seeded through splitmix64 ---- */

struct wl_rng {
	uint64_t s[4];
};

void wl_rng_seed(struct wl_rng *r, uint64_t seed, uint64_t stream);
uint64_t wl_rng_next(struct wl_rng *r);
double wl_rng_unit(struct wl_rng *r);                 /* [0, 1) */
uint64_t wl_rng_below(struct wl_rng *r, uint64_t n);  /* [0, n) */
double wl_rng_exp(struct wl_rng *r, double mean);

/* Task cost distributions (parameter `dist` of the workloads). */
enum wl_dist { WL_FIXED, WL_EXP, WL_LOGNORMAL, WL_UNIFORM };
extern const char *const wl_dist_names[];
/* A cost in ns with the given mean: fixed, exponential, lognormal with sigma 1, or uniform on
 * [0, 2 mean]. */
uint64_t wl_cost(struct wl_rng *r, int dist, double mean_ns);
/* Pick an index from integer weights (percentages or any scale); -1 when all are zero. */
int wl_pick(struct wl_rng *r, const int64_t *weights, int n);

/* ---- clients ---- */

struct wl_clients;

struct wl_client {
	struct wl_clients *set;
	unsigned idx;
	struct wl_rng rng;
	int64_t quota;        /* jobs left in a bounded run; < 0 = unbounded */
	void *user;           /* per-client state of the workload */
};

struct wl_clients {
	const struct wl_env *env;
	unsigned n;
	pthread_t *th;
	struct wl_client *c;
	void (*body)(struct wl_client *);
	void *user;           /* the workload's state */
	_Atomic uint64_t jobs_submitted, jobs_done, jobs_failed, tasks_created;
	_Atomic unsigned finished;
	bool joined;
};

/* Start n client threads, each attached to env->rt, running body(client) once. A bounded run's
 * env->jobs is split evenly (the first clients take the remainder). */
int wl_clients_start(struct wl_clients *cs, const struct wl_env *env, unsigned n, void (*body)(struct wl_client *),
		     void *user, char *err, size_t errlen);
/* Another job for this client? False once its quota is used or the harness said stop. */
bool wl_client_more(struct wl_client *c);
bool wl_clients_done(struct wl_clients *cs);
void wl_clients_join(struct wl_clients *cs);
void wl_clients_counts(struct wl_clients *cs, struct wl_counts *out);
void wl_clients_free(struct wl_clients *cs);

/* A task of j, counted in tasks_created. */
struct sb_task *wl_task(struct wl_clients *cs, struct sb_job *j, sb_task_fn fn, void *arg);
/* Count a submitted job (call right before sb_job_submit). */
void wl_count_submit(struct wl_clients *cs);
/* Count a completion (call from the job's completion callback). */
void wl_count_done(struct wl_clients *cs, struct sb_job *j);

/* Open loop: sleep until `when` (sb_now_ns time), running the thread's own serial work (serial
 * and hybrid policies put jobs there) meanwhile. */
void wl_wait_until(uint64_t when);

#endif
