/*
 * exec.c - the native executor's out-of-line half (core/exec.h has the inline half and the
 * contract): threads, sleep, the membarrier, urcu registration, and the switch to a virtual
 * executor.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-memb.h>

#include "exec.h"

const struct sb_exec_ops *sb_exec_vt;
_Thread_local struct sb_tls sb_tls_native;

const char *const sb_cost_names[SB_NR_COSTS] = {
	[SB_COST_PUSH] = "push", [SB_COST_POP] = "pop", [SB_COST_POP_EMPTY] = "pop_empty",
	[SB_COST_STEAL] = "steal", [SB_COST_STEAL_EMPTY] = "steal_empty",
	[SB_COST_WAKE] = "wake", [SB_COST_PARK] = "park", [SB_COST_RELAX] = "relax",
	[SB_COST_YIELD] = "yield", [SB_COST_LINE] = "line", [SB_COST_LINE_REMOTE] = "line_remote",
	[SB_COST_COLD] = "cold", [SB_COST_COLD_AFTER] = "cold_after", [SB_COST_PARK_P10] = "park_p10",
	[SB_COST_PARK_P50] = "park_p50", [SB_COST_PARK_P90] = "park_p90", [SB_COST_PARK_P99] = "park_p99",
	[SB_COST_PARK_P999] = "park_p999", [SB_COST_PARK_LONG_AFTER] = "park_long_after",
	[SB_COST_PARK_BUSY_P10] = "park_busy_p10", [SB_COST_PARK_BUSY_P50] = "park_busy_p50",
	[SB_COST_PARK_BUSY_P90] = "park_busy_p90", [SB_COST_PARK_BUSY_P99] = "park_busy_p99",
	[SB_COST_PARK_BUSY_P999] = "park_busy_p999", [SB_COST_PARK_IDLE_P10] = "park_idle_p10",
	[SB_COST_PARK_IDLE_P50] = "park_idle_p50", [SB_COST_PARK_IDLE_P90] = "park_idle_p90",
	[SB_COST_PARK_IDLE_P99] = "park_idle_p99", [SB_COST_PARK_IDLE_P999] = "park_idle_p999",
	[SB_COST_OVER_100US_P10] = "over_100us_p10", [SB_COST_OVER_100US_P50] = "over_100us_p50",
	[SB_COST_OVER_100US_P90] = "over_100us_p90", [SB_COST_OVER_100US_P99] = "over_100us_p99",
	[SB_COST_OVER_100US_P999] = "over_100us_p999", [SB_COST_OVER_1MS_P10] = "over_1ms_p10",
	[SB_COST_OVER_1MS_P50] = "over_1ms_p50", [SB_COST_OVER_1MS_P90] = "over_1ms_p90",
	[SB_COST_OVER_1MS_P99] = "over_1ms_p99", [SB_COST_OVER_1MS_P999] = "over_1ms_p999",
	[SB_COST_SLICE] = "slice", [SB_COST_WAKE_STACK_0US] = "wake_stack_0us",
	[SB_COST_WAKE_STACK_0US + 1] = "wake_stack_1us",
	[SB_COST_WAKE_STACK_0US + 2] = "wake_stack_2us", [SB_COST_WAKE_STACK_0US + 3] = "wake_stack_5us",
	[SB_COST_WAKE_STACK_0US + 4] = "wake_stack_10us", [SB_COST_WAKE_STACK_0US + 5] = "wake_stack_20us",
	[SB_COST_WAKE_STACK_0US + 6] = "wake_stack_50us", [SB_COST_WAKE_STACK_0US + 7] = "wake_stack_100us",
	[SB_COST_WAKE_STACK_0US + 8] = "wake_stack_200us", [SB_COST_WAKE_STACK_0US + 9] = "wake_stack_500us",
	[SB_COST_WAKE_STACK_0US + 10] = "wake_stack_1000us", [SB_COST_WAKE_STACK_0US + 11] = "wake_stack_2000us",
	[SB_COST_WAKE_STACK_5000US] = "wake_stack_5000us",
	[SB_COST_WAKE_STACK_DUTY_5] = "wake_stack_duty_5", [SB_COST_WAKE_STACK_DUTY_5 + 1] = "wake_stack_duty_10",
	[SB_COST_WAKE_STACK_DUTY_5 + 2] = "wake_stack_duty_15", [SB_COST_WAKE_STACK_DUTY_5 + 3] = "wake_stack_duty_30",
	[SB_COST_WAKE_STACK_DUTY_60] = "wake_stack_duty_60", [SB_COST_JOB] = "job", [SB_COST_JOB_CREATE] = "job_create",
	[SB_COST_JOB_END] = "job_end", [SB_COST_PARK_CPU] = "park_cpu", [SB_COST_COMPUTE_ITER] = "compute_iter",
	[SB_COST_MEMORY_DOUBLE] = "memory_double", [SB_COST_LINE_QUEUE] = "line_queue", [SB_COST_WAKE_LAST_CORE] = "wake_last_core",
	[SB_COST_WAKE_INTERRUPT] = "wake_interrupt", [SB_COST_WAKE_PREEMPT_0] = "wake_preempt_0",
	[SB_COST_WAKE_PREEMPT_0 + 1] = "wake_preempt_25", [SB_COST_WAKE_PREEMPT_0 + 2] = "wake_preempt_50",
	[SB_COST_WAKE_PREEMPT_0 + 3] = "wake_preempt_75", [SB_COST_WAKE_PREEMPT_100] = "wake_preempt_100", [SB_COST_COLD_9] = "cold_9", [SB_COST_COLD_9 + 1] = "cold_10",
	[SB_COST_COLD_9 + 2] = "cold_11", [SB_COST_COLD_9 + 3] = "cold_12", [SB_COST_COLD_9 + 4] = "cold_13",
	[SB_COST_COLD_9 + 5] = "cold_14", [SB_COST_COLD_9 + 6] = "cold_15", [SB_COST_COLD_9 + 7] = "cold_16",
	[SB_COST_COLD_9 + 8] = "cold_17", [SB_COST_COLD_9 + 9] = "cold_18", [SB_COST_COLD_9 + 10] = "cold_19",
	[SB_COST_COLD_9 + 11] = "cold_20", [SB_COST_COLD_9 + 12] = "cold_21", [SB_COST_COLD_22] = "cold_22",
	[SB_COST_NOISE_EVERY] = "noise_every", [SB_COST_NOISE_P10] = "noise_p10", [SB_COST_NOISE_P50] = "noise_p50",
	[SB_COST_NOISE_P90] = "noise_p90", [SB_COST_NOISE_P99] = "noise_p99", [SB_COST_NOISE_P999] = "noise_p999",
};

void sb_exec_use(const struct sb_exec_ops *vt)
{
	sb_exec_vt = vt;
}

const char *sb_exec_name(void)
{
	return sb_exec_vt ? sb_exec_vt->name : "native";
}

int sb_exec_thread_start(struct sb_xthread *th, const char *name, void *(*fn)(void *), void *arg)
{
	if (sb_exec_virtual())
		return sb_exec_vt->thread_start(th, name, fn, arg);
	int e = pthread_create(&th->pt, NULL, fn, arg);
	if (e)
		return -e;
	/* perf, top and gdb show it; a name longer than the kernel's 15 bytes is cut, not refused */
	char comm[16];
	snprintf(comm, sizeof comm, "%s", name);
	pthread_setname_np(th->pt, comm);
	return 0;
}

void sb_exec_thread_join(struct sb_xthread *th)
{
	if (sb_exec_virtual())
		sb_exec_vt->thread_join(th);
	else
		pthread_join(th->pt, NULL);
}

void sb_exec_sleep_ns(uint64_t ns)
{
	if (sb_exec_virtual()) {
		sb_exec_vt->sleep(ns);
		return;
	}
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) };
	nanosleep(&ts, NULL);
}

bool sb_exec_membarrier_register(void)
{
	if (sb_exec_virtual())
		return true;
	/* registering twice in one process is harmless */
	return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

int sb_exec_membarrier(void)
{
	if (sb_exec_virtual())
		return 0;
	return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0 ? 0 : -errno;
}

void sb_exec_rcu_register(void)
{
	if (!sb_exec_virtual())
		urcu_memb_register_thread();
}

void sb_exec_rcu_unregister(void)
{
	if (!sb_exec_virtual())
		urcu_memb_unregister_thread();
}
