/*
 * workload.h - the workload interface: a generator of jobs that drives a runtime.
 *
 * A workload owns its client threads (request threads, attached with sb_thread_attach) and the
 * jobs they submit; it never knows which policy runs them. The harness starts it, lets it run
 * through warm-up and the measurement window, then raises *env->stop and calls stop(), which
 * must return only when every job the workload submitted has finished (callback seen) and its
 * threads are joined. Bounded runs (env->jobs > 0) split the job count across clients and report
 * done() when all of them have completed.
 *
 * Determinism: each client draws from its own generator seeded from (env->seed, client index),
 * so the same seed gives every client the same sequence of jobs whatever the policy.
 *
 * Accounting (the harness reconciles it against the core's counters): tasks_created counts
 * every sb_task_new the workload made; jobs_submitted every sb_job_submit; jobs_done every
 * completion callback. After stop() they must satisfy
 *   jobs_done == jobs_submitted == teardowns counted by the core, and
 *   tasks_created == tasks run - yields - blocks + tasks dropped, summed over all threads.
 */
#ifndef SB_WORKLOADS_WORKLOAD_H
#define SB_WORKLOADS_WORKLOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../core/param.h"
#include "../core/sb.h"

struct wl_env {
	struct sb_rt *rt;
	uint64_t seed;
	int64_t jobs;           /* total jobs for a bounded run, split over the clients; 0 = until stop */
	_Atomic bool *stop;     /* raised by the harness at the end of the run */
	/* The time *stop stands for (sb_now_ns: the window's end), stored before *stop is raised
	 * (a seq_cst store, so a client that reads *stop true with acquire sees it); NULL or 0: the
	 * moment a client notices *stop. Open-loop clients count the arrivals due before it that they
	 * never issued. */
	_Atomic uint64_t *stop_ns;
	/* The workload's start (sb_now_ns), where every open-loop client's arrival schedule begins,
	 * so that the arrivals offered over a run are the rate over the run's span however late a
	 * client thread first runs (its first arrivals are then issued late, as lag); 0: each
	 * client's schedule begins at its own first draw. */
	uint64_t start_ns;
};

/* Open-loop arrivals of one job class (the class of the job an arrival submits: oltp's begin,
 * tiny's job), over the run until the stop: every arrival the schedule offered was issued
 * (submitted, however late) or not (still due when the run stopped); offered = issued +
 * unissued, and completed counts the issued ones whose job ended ok. */
struct wl_arrival_counts {
	uint64_t offered, issued, unissued, completed;
};

struct wl_counts {
	uint64_t jobs_submitted;
	uint64_t jobs_done;     /* completion callbacks seen */
	uint64_t jobs_failed;   /* of which with status error or cancelled */
	uint64_t class_submitted[SB_MAX_CLASSES]; /* jobs_submitted per job class */
	uint64_t tasks_created;
	uint64_t results_wrong; /* results the workload checked and found wrong: the run fails */
	const char *wrong_text; /* the first of them, "" when none; valid until destroy */
	/* Open loop (exact after stop(); all zero in a closed loop): per class, and the most any
	 * client was behind its schedule: an issued arrival's submit time minus its intended time,
	 * or for one never issued, the stop time minus its intended time. */
	uint32_t arrival_classes;  /* bit k: class k's jobs are arrivals */
	struct wl_arrival_counts arrivals[SB_MAX_CLASSES];
	uint64_t lag_max_ns;
};

struct sb_workload {
	/* Create the state and start the client threads. Return 0, or -errno with one line in err. */
	int (*start)(const struct wl_env *env, const void *params, void **state, char *err, size_t errlen);
	/* Bounded runs: true once every client has finished its share and seen it complete. */
	bool (*done)(void *state);
	/* *env->stop is set: stop submitting, wait for every outstanding job, join the threads. */
	void (*stop)(void *state);
	/* Counters; exact after stop(), approximate (but monotonic) before. */
	void (*counts)(void *state, struct wl_counts *out);
	void (*destroy)(void *state);

	const char *name;
	const char *description;          /* one line, with the memo it models */
	const char *const *classes;       /* job class names, NULL-terminated; a job's cls indexes it */
	const struct sb_param *params;
	size_t params_size;
};

extern const struct sb_workload *const sb_workloads[];
const struct sb_workload *sb_workload_find(const char *name);
void sb_workload_names(char *buf, size_t len);
/* The start-up check of a workload list (sb_workloads, or a test's): names present and unique,
 * a description and job classes, every op present, parameter tables well-formed
 * (sb_param_check). 0, or -EINVAL with one line naming the entry. */
int sb_workloads_check(const struct sb_workload *const *list, char *err, size_t errlen);

#endif
