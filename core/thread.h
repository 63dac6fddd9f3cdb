/*
 * thread.h - the calling thread's context (thread.c).
 */
#ifndef SB_THREAD_H
#define SB_THREAD_H

#include "rt.h"

__attribute__((noreturn, cold)) void sb_not_attached(void);
/* The caller's context, or abort: inline, so the hot path pays one load and one test. */
static inline struct sb_thread *sb_tc(void)
{
	struct sb_thread *tc = sb_self;
	if (__builtin_expect(!tc, 0))
		sb_not_attached();
	return tc;
}

/* Take one of the core's shared locks (the task depot): a free lock costs the trylock alone; a
 * taken one is counted, with the time waited, on the caller's counters (lock_waits, lock_wait_ns),
 * so that contention on it shows in every run rather than only under a profiler. */
static inline void sb_lock_counted(struct sb_thread *tc, pthread_mutex_t *m)
{
	if (__builtin_expect(pthread_mutex_trylock(m) == 0, 1))
		return;
	uint64_t t0 = sb_now_ns();
	pthread_mutex_lock(m);
	sb_count(tc, SB_C_LOCK_WAITS, 1);
	sb_count(tc, SB_C_LOCK_NS, sb_now_ns() - t0);
}

void sb_thread_init(struct sb_rt *rt, struct sb_thread *tc, enum sb_thread_kind kind, int worker);
void sb_thread_register(struct sb_rt *rt, struct sb_thread *tc);

#endif
