/*
 * run.h - what the workload tests share (tests/workloads/run.c): one small bounded run of a
 * workload under a policy, with check mode and the stall watchdog on (tests/common.h t_rt) and
 * hybrid's lightweight_job_level at 40 so that its serial path (jobs run inline on the
 * submitting thread) is exercised beside its stealing one; and the accounting every such run
 * must satisfy: the workload's counts reconcile exactly with the core's (jobs submitted ==
 * completion callbacks == teardowns == the core's submissions; tasks created == tasks run -
 * yields - blocks + dropped; jobs per class == jobs the core recorded per class), no job failed
 * and no result was wrong.
 */
#ifndef SB_TESTS_WORKLOADS_RUN_H
#define SB_TESTS_WORKLOADS_RUN_H

#include "../../workloads/common.h"
#include "../common.h"

#define T_MAX_CLIENTS 8

/* One bounded run's outcome, asserted on the test's own thread. */
struct t_out {
	struct wl_counts wc;
	uint64_t core[SB_NR_COUNTERS];          /* summed over every thread context */
	uint64_t wl_class[SB_MAX_CLASSES];      /* jobs the workload submitted, per class */
	uint64_t core_class[SB_MAX_CLASSES];    /* jobs the core tore down and recorded, per class */
	uint64_t arrived_early[SB_MAX_CLASSES]; /* recorded jobs with t_arrival before t_submit */
	uint64_t sig[T_MAX_CLIENTS];
	unsigned nclients;
	uint64_t verified;
	char wrong[256];                        /* the workload's first wrong result, "" if none */
};

/* Fill a workload's parameter block from its defaults and "name=value" settings. */
void *t_params(const struct sb_workload *w, const char *const *sets);
/* Run workload `wl` under `policy` until its bounded run is done, stop it, and collect. */
void t_workload(const char *policy, const char *wl, const char *const *sets, uint64_t seed, int64_t jobs,
		struct t_out *out);
/* The accounting every run must satisfy (workload.h). */
void t_reconcile(const char *what, const char *policy, const struct t_out *o);
/* Index of a class by name in a workload's list. */
unsigned t_cls(const char *wl, const char *name);

#endif
