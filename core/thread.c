/*
 * thread.c - the thread context (struct sb_thread, core/rt.h): which context the calling thread
 * has, and a new context's set-up and registration with its runtime. A leaf: whatever runs or
 * places tasks finds its context through sb_tc() (core/thread.h).
 */
#include <stdlib.h>
#include <string.h>

#include "thread.h"

struct sb_thread *sb_thread_self(void)
{
	return sb_self;
}

void sb_not_attached(void)
{
	fprintf(stderr, "%s:%d: schedbed core called from a thread that is not attached "
		"(call sb_thread_attach first)\n", __FILE__, __LINE__);
	abort();
}

int sb_self_worker(void)
{
	return sb_self ? sb_self->worker : -1;
}

struct sb_task *sb_current_task(void)
{
	return sb_self ? sb_self->current : NULL;
}

void sb_thread_init(struct sb_rt *rt, struct sb_thread *tc, enum sb_thread_kind kind, int worker)
{
	memset(tc, 0, sizeof *tc);
	tc->rt = rt;
	tc->kind = kind;
	tc->worker = worker;
	tc->preferred = worker >= 0 ? (unsigned)worker : UINT32_MAX;
	tc->attached = true;
}

void sb_thread_register(struct sb_rt *rt, struct sb_thread *tc)
{
	pthread_mutex_lock(&rt->threads_lock);
	tc->id = rt->nthreads++;
	tc->next_all = rt->threads;
	rt->threads = tc;
	pthread_mutex_unlock(&rt->threads_lock);
	tc->rng = (rt->chaos_seed ? rt->chaos_seed : 0x853c49e6748fea9bull) ^ ((uint64_t)(tc->id + 1) * 0x9e3779b97f4a7c15ull);
	if (!tc->rng)
		tc->rng = 1;
}
