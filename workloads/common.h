/*
 * common.h - what every workload generator shares: a deterministic random generator, cost
 * distributions, client threads with quotas, open-loop arrivals, job/task helpers that keep the
 * counts the harness reconciles (workload.h), and the statement DAG that several workloads
 * build (bootstrap, parallel process tasks, exchange, teardown; memo 000).
 *
 * Implemented by concern: random.c (random numbers, cost distributions), clients.c (client
 * threads, counted jobs and tasks), work.c (busy work), dag.c (the statement DAG), pacing.c
 * (waiting, open-loop arrivals).
 *
 * Does not own any workload's shape or parameters: those live in the workload's own file.
 *
 * Layout rule: every workload's state struct begins with its struct wl_clients (each file
 * asserts it), so tests and the harness reach the shared records of any workload through
 * wl_clients_of(state) without knowing the workload.
 *
 * Thread rules: a struct wl_client belongs to its thread (its rng, quota and sig are touched by
 * no one else until the thread is joined); struct wl_clients' counters are atomics updated from
 * any thread (completion callbacks run on whichever thread tears down) and read relaxed.
 */
#ifndef SB_WORKLOADS_COMMON_H
#define SB_WORKLOADS_COMMON_H

#include <pthread.h>

#include "mix.h"
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
	uint64_t sig;         /* fold of (class, shape) of every job this client decided, in order:
	                         equal seeds must give equal sigs whatever the policy */
};

struct wl_clients {
	const struct wl_env *env;
	unsigned n;
	struct sb_xthread *th;
	struct wl_client *c;
	void (*body)(struct wl_client *);
	void *user;           /* the workload's state */
	/* tasks created, jobs submitted and ended, counted per thread (struct wl_tcount, one per
	 * thread that counted, on lines of its own): a shared counter would put a contended atomic
	 * on every task and job, which the runs would then measure */
	pthread_mutex_t tcount_lock;   /* guards the list, not the counts */
	struct wl_tcount *tcounts;
	uint64_t gen;                  /* tells this set's per-thread blocks from an older set's */
	_Atomic uint64_t nr_late;                  /* open-loop arrivals found already due */
	_Atomic uint64_t nr_late_ns;               /* ... and how late, summed */
	/* open-loop accounting (wl_counts): each client adds its own tallies once, at
	 * wl_arrivals_end; completions are counted as they come, per thread (wl_count_done) */
	_Atomic uint32_t arrival_classes;
	_Atomic uint64_t nr_offered[SB_MAX_CLASSES], nr_issued[SB_MAX_CLASSES], nr_unissued[SB_MAX_CLASSES];
	_Atomic uint64_t lag_max_ns;
	_Atomic uint64_t nr_verified;              /* results a workload checked and found right
	                                              (a wrong one fails its job instead) */
	_Atomic uint64_t nr_wrong;                 /* results a workload checked and found wrong:
	                                              the harness fails the run (wl_wrong) */
	char wrong_text[256];                      /* the first of them: written once, by the thread
	                                              whose increment took nr_wrong from 0; read
	                                              after every thread is joined */
	_Atomic unsigned finished;
	bool joined;
};

/* The shared records of any workload's state (see the layout rule above). */
static inline struct wl_clients *wl_clients_of(void *state)
{
	return state;
}

/* sb_workload callbacks for any state that follows the layout rule. wl_state_stop only joins
 * the clients: enough for a workload with no threads of its own. */
bool wl_state_done(void *state);
void wl_state_stop(void *state);
void wl_state_counts(void *state, struct wl_counts *out);

/* Start n client threads, each attached to env->rt, running body(client) once. A bounded run's
 * env->jobs is split evenly (the first clients take the remainder). `cs` arrives zeroed (in the
 * calloc'd workload state); its counters are left alone, so a workload's own threads may count
 * into them while this runs. On failure the clients already started are stopped and joined. */
int wl_clients_start(struct wl_clients *cs, const struct wl_env *env, unsigned n, void (*body)(struct wl_client *),
		     void *user, char *err, size_t errlen);
/* Another job for this client? False once its quota is used or the harness said stop. */
bool wl_client_more(struct wl_client *c);
/* The harness said stop (any thread may ask). */
bool wl_stopping(const struct wl_clients *cs);
bool wl_client_stopping(const struct wl_client *c);
bool wl_clients_done(struct wl_clients *cs);
void wl_clients_join(struct wl_clients *cs);
void wl_clients_counts(struct wl_clients *cs, struct wl_counts *out);
void wl_clients_free(struct wl_clients *cs);

/* ---- jobs and tasks, counted ---- */

/* Ready the counters before any thread of the workload makes a task (wl_clients_start does it
 * when nobody did; a workload that starts a thread of its own first calls it itself). */
void wl_clients_init(struct wl_clients *cs);
/* A task of j, counted in tasks_created. */
struct sb_task *wl_task(struct wl_clients *cs, struct sb_job *j, sb_task_fn fn, void *arg);
/* Count in tasks_created a task made with sb_task_new() that is handed over only now: one made
 * ahead and spawned later (a join), so that one never spawned (its job cancelled) is not
 * counted as created and then missing. */
void wl_count_task(struct wl_clients *cs);
/* Count j (in total and per class) and submit it with its root task. Any attached thread. */
void wl_submit(struct wl_clients *cs, struct sb_job *j, struct sb_task *root);
/* The same from a client thread for a job the client decided: also folds (class, shape) into
 * the client's sig. `shape` is any value drawn for the job (a cost, a count). */
void wl_client_submit(struct wl_client *c, struct sb_job *j, struct sb_task *root, uint64_t shape);
/* Record a job this client decided that a task will submit later (folds it into sig only). */
void wl_client_note(struct wl_client *c, unsigned cls, uint64_t shape);
/* Wait for a job this thread submitted, then drop its reference. False when the runtime failed
 * before the job finished: the caller should stop submitting. Request threads only. */
bool wl_wait_put(struct sb_job *j);
/* A request thread's jobs in flight, oldest first: ring[head % cap .. tail % cap). The caller
 * points ring at cap slots of its own and zeroes head and tail. */
struct wl_window {
	struct sb_job **ring;
	uint64_t head, tail, cap;
};
/* Give back the finished jobs at the front and, if the window is still full, wait for the
 * oldest. False when the runtime failed: the caller should stop submitting. */
bool wl_window_room(struct wl_window *w);
/* Note a job just submitted (wl_window_room said there is room). */
static inline void wl_window_add(struct wl_window *w, struct sb_job *j)
{
	w->ring[w->tail++ % w->cap] = j;
}
/* Before the thread leaves: wait for every job still in flight (ok) or, after a failure, give
 * them back unwaited. */
void wl_window_drain(struct wl_window *w, bool ok);
/* Count a completion (call from the job's completion callback). */
void wl_count_done(struct wl_clients *cs, struct sb_job *j);
/* A completion callback for jobs whose arg is the workload's state (see the layout rule). */
void wl_job_done(struct sb_job *j);
/* A result the workload checked is wrong (a scheduling bug showed): count it in nr_wrong and
 * keep the first message, which the harness prints when it fails the run. Any thread. */
void wl_wrong(struct wl_clients *cs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A task that spends t->u[0] ns and ends. */
enum sb_result wl_work_task(struct sb_task *t);
/* A counted wl_work_task of j costing ns, with `flags` (SB_TF_STICKY is dropped when j has no
 * transaction: stickiness means nothing without one). */
struct sb_task *wl_work(struct wl_clients *cs, struct sb_job *j, uint64_t ns, uint32_t flags);
/* Spend the task's remaining cost t->u[0] in short slices. With `yields`, give the worker up
 * (SB_YIELD, the remainder kept in u[0]) when the preemption monitor asks (sb_should_yield) or,
 * if yield_ns > 0, after yield_ns of work in this run. */
enum sb_result wl_spend(struct sb_task *t, bool yields, uint64_t yield_ns);

/* ---- the statement DAG (memo 000: bootstrap -> process tasks -> exchange -> teardown) ---- */

#define WL_DAG_MAX 64

/*
 * One statement's DAG: a bootstrap task spawns nproc process tasks (parallel, costs proc_ns[],
 * `proc_flags` e.g. SB_TF_STICKY for tasks that read storage); the last one to finish spawns
 * the exchange task, or with no exchange asks for the teardown itself, as jogasaki's DAG
 * controller does once every node is done. Bootstrap and exchange are never sticky.
 *
 * The owner fills the fields before submitting and must not touch the struct again until the
 * job is done; the job's tasks share it and only `pending` is written concurrently.
 */
struct wl_dag {
	struct wl_clients *cs;
	uint64_t bootstrap_ns;
	uint64_t exchange_ns;
	bool exchange;            /* an exchange step after the process tasks */
	bool yields;              /* process tasks yield their remainder (wl_spend) */
	uint64_t yield_ns;
	uint32_t proc_flags;
	unsigned nproc;           /* 1..WL_DAG_MAX */
	uint64_t proc_ns[WL_DAG_MAX];
	_Atomic unsigned pending; /* process tasks not finished; acq_rel decrements */
};

/* The bootstrap task (counted) of job j running DAG d. */
struct sb_task *wl_dag_root(struct sb_job *j, struct wl_dag *d);
/* Sum of the DAG's costs (a shape for wl_client_submit). */
uint64_t wl_dag_cost(const struct wl_dag *d);

/* ---- waiting and open-loop arrivals ---- */

/* Open loop: sleep until `when` (sb_now_ns time), running the thread's own serial work (serial
 * and hybrid policies put jobs there) meanwhile. */
void wl_wait_until(uint64_t when);
/* The same for a client, returning early (false) when the harness says stop. */
bool wl_client_wait_until(struct wl_client *c, uint64_t when);

/* Poisson arrivals for one client (owned by its thread). */
struct wl_arrivals {
	uint64_t next;       /* intended time of the latest arrival drawn */
	double mean_gap_ns;
	unsigned cls;        /* the class of the job each arrival submits */
	bool pending;        /* `next` was drawn and not issued */
	uint64_t issued, lag_max_ns;
};

/* per_second 0: a closed loop, nothing is drawn or counted. Otherwise class cls's jobs are
 * arrivals (wl_counts.arrival_classes). */
void wl_arrivals_init(struct wl_client *c, struct wl_arrivals *a, double per_second, unsigned cls);
/* Draw the next arrival from the client's stream and wait for it. An arrival already due (the
 * client was busy) is queued: counted in nr_late / nr_late_ns and returned at once. Returns the
 * intended arrival time (for the job's t_arrival), or 0 when the harness says stop. */
uint64_t wl_arrival_next(struct wl_client *c, struct wl_arrivals *a);
/* The client's last word on its arrivals, after its loop (any way it ended): the arrivals due
 * before the stop that it never issued are counted unissued, and its tallies added to the set's. */
void wl_arrivals_end(struct wl_client *c, struct wl_arrivals *a);

#endif
