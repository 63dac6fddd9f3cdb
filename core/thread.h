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

void sb_thread_init(struct sb_rt *rt, struct sb_thread *tc, enum sb_thread_kind kind, int worker);
void sb_thread_register(struct sb_rt *rt, struct sb_thread *tc);

#endif
