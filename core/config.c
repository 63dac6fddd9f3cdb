/*
 * config.c - the core's parameters: names from the memos, jogasaki's defaults.
 *
 * The table is the single definition: defaults, validation, `schedbed list` and meta.json all
 * come from it. Ranges are what the core can honour, not what is sensible; the harness does
 * not add its own.
 */
#include "config.h"

#include <stddef.h>

#define C struct sb_config
const struct sb_param sb_core_params[] = {
	SB_PARAM_INT(C, thread_count, 5, 1, 1024, "worker threads (jogasaki default 5)"),
	SB_PARAM_BOOL(C, core_affinity, 0, "pin each worker to a core with hwloc"),
	SB_PARAM_INT(C, initial_core, 1, 0, 4095, "core of worker 0 when pinning; worker i gets initial_core+i"),
	SB_PARAM_INT(C, stealing_wait, 1, 0, 1000000, "extra local tries before a steal sweep, times thread_count"),
	SB_PARAM_INT(C, task_polling_wait, 0, 0, 1000000, "after an empty round: 0 nothing, 1 yield, n>=2 sleep n-2 us"),
	SB_PARAM_BOOL(C, busy_worker, 0, "never suspend idle workers"),
	SB_PARAM_BOOL(C, wake_fence, 0, "wake checks pay a seq_cst fence per placement instead of a membarrier per suspension"),
	SB_PARAM_INT(C, worker_try_count, 1000, 0, 1000000000, "empty rounds before a worker suspends"),
	/* not jogasaki's: its spin never yields, which holds a core that a preempted worker or
	 * request thread needs whenever threads outnumber cores (PAPER §4.4) */
	SB_PARAM_INT(C, worker_spin_yield, 32, 0, 1000000000, "empty rounds between yields of the core while spinning before a suspension; 0 never (the memo's plain spin)"),
	SB_PARAM_INT(C, worker_suspend_timeout, 1000000, 1, 3600000000, "us a suspended worker sleeps unless woken"),
	SB_PARAM_INT(C, watcher_interval, 1000, 1, 60000000, "us the conditional-task watcher sleeps between checks"),
	SB_PARAM_BOOL(C, use_preferred_worker_for_current_thread, 1, "a thread submits to its fixed preferred worker (else round robin)"),
	SB_PARAM_BOOL(C, inplace_teardown, 0, "jobs that do not choose run teardown in place (else as a task)"),
	SB_PARAM_INT(C, preempt_threshold, 0, 0, 3600000000, "us a task may run before it is asked to yield; 0 off"),
	SB_PARAM_INT(C, stall_limit, 0, 0, 86400000, "ms queued work may wait, starved or with a worker resting, before the run fails; 0 off (check mode: 1000); at least 10"),
	SB_PARAM_BOOL(C, check, 0, "verify scheduling invariants at run time"),
	SB_PARAM_BOOL(C, trace, 0, "record one event per task for trace.json"),
	SB_PARAM_INT(C, chaos, 0, 0, INT64_MAX, "seed for random yields/delays at policy call sites; 0 off"),
	SB_PARAM_STR(C, topology, "", "hwloc synthetic topology, e.g. \"package:2 core:2 pu:1\"; empty = this machine"),
	SB_PARAM_END,
};
#undef C

void sb_config_default(struct sb_config *cfg)
{
	sb_param_defaults(sb_core_params, cfg);
}

int64_t sb_config_stall_limit(const struct sb_config *cfg)
{
	if (!cfg->stall_limit)
		return cfg->check ? SB_STALL_CHECK_DEFAULT_MS : 0;
	return cfg->stall_limit < SB_STALL_RESOLUTION_MS ? SB_STALL_RESOLUTION_MS : cfg->stall_limit;
}
