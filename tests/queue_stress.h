/*
 * queue_stress.h - concurrent drivers for the queues of core/queue.h, shared by the Criterion
 * suite (tests/core/queue.c) and the sanitizer stress binary (tests/stress/stress.c).
 *
 * qs_deque: an owner pushes bursts into an sb_deque that starts with 16 slots (so it grows many
 * times), pops part of each burst, and publishes eagerly now and then, while thieves steal all
 * along: the owner starts once every thief is running, and before it takes back what is left it
 * publishes its last token and waits (up to QS_STEAL_WAIT_S) until some thief has taken one, so
 * that "the thieves got work" follows from the deque and not from how the threads were
 * scheduled. qs_fifo: producers push into one sb_fifo while consumers pop, one of them in batches.
 * Tasks are bare struct sb_task values used as tokens (u[0] = index). Both check that every
 * token was taken exactly once and, for the FIFO, that each consumer saw each producer's tokens
 * in push order. They return NULL when all is well, else a static message.
 */
#ifndef SB_TESTS_QUEUE_STRESS_H
#define SB_TESTS_QUEUE_STRESS_H

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../core/queue.h"

#define QS_MAX_THREADS 8

struct qs_run {
	struct sb_deque dq;
	struct sb_fifo q;
	struct sb_task *tk;
	_Atomic unsigned char *hits;
	size_t n;
	unsigned producers;
	_Atomic unsigned producing;
	_Atomic int done;
	_Atomic unsigned thieves_up; /* qs_deque: thieves running */
	_Atomic bool stole;          /* qs_deque: some thief took a token */
	_Atomic bool out_of_order;
	uint64_t publishes;
};

struct qs_thread {
	struct qs_run *r;
	unsigned idx;
	uint64_t taken;
};

static inline void qs_hit(struct qs_run *r, struct qs_thread *me, struct sb_task *t)
{
	atomic_fetch_add_explicit(&r->hits[t->u[0]], 1, memory_order_relaxed);
	me->taken++;
}

static void *qs_thief(void *arg)
{
	struct qs_thread *me = arg;
	atomic_fetch_add(&me->r->thieves_up, 1);
	while (!atomic_load(&me->r->done)) {
		struct sb_task *t = sb_deque_take(&me->r->dq);
		if (t) {
			qs_hit(me->r, me, t);
			if (me->taken == 1)
				atomic_store(&me->r->stole, true);
		} else {
			sched_yield();
		}
	}
	return NULL;
}

static void *qs_producer(void *arg)
{
	struct qs_thread *me = arg;
	struct qs_run *r = me->r;
	size_t per = r->n / r->producers;
	urcu_memb_register_thread();
	for (size_t i = 0; i < per; i++)
		sb_fifo_push(&r->q, &r->tk[me->idx * per + i]);
	atomic_fetch_sub(&r->producing, 1);
	urcu_memb_unregister_thread();
	return NULL;
}

static void *qs_consumer(void *arg)
{
	struct qs_thread *me = arg;
	struct qs_run *r = me->r;
	size_t per = r->n / r->producers;
	int64_t last[QS_MAX_THREADS];
	for (unsigned p = 0; p < QS_MAX_THREADS; p++)
		last[p] = -1;
	urcu_memb_register_thread();
	for (;;) {
		struct sb_task *b[4];
		unsigned got = me->idx ? sb_fifo_pop_batch(&r->q, b, 4) : (b[0] = sb_fifo_pop(&r->q)) != NULL;
		if (!got) {
			if (!atomic_load(&r->producing) && !sb_fifo_len(&r->q))
				break;
			sched_yield();
			continue;
		}
		for (unsigned k = 0; k < got; k++) {
			uint64_t id = b[k]->u[0];
			unsigned p = (unsigned)(id / per);
			if ((int64_t)(id % per) <= last[p])
				atomic_store(&r->out_of_order, true);
			last[p] = (int64_t)(id % per);
			qs_hit(r, me, b[k]);
		}
	}
	urcu_memb_unregister_thread();
	return NULL;
}

static const char *qs_setup(struct qs_run *r, size_t n)
{
	r->n = n;
	r->tk = calloc(n, sizeof *r->tk);
	r->hits = calloc(n, sizeof *r->hits);
	if (!r->tk || !r->hits)
		return "out of memory";
	for (size_t i = 0; i < n; i++)
		r->tk[i].u[0] = i;
	return NULL;
}

static const char *qs_verify(struct qs_run *r, uint64_t taken)
{
	const char *err = NULL;
	for (size_t i = 0; i < r->n && !err; i++)
		if (atomic_load(&r->hits[i]) != 1)
			err = atomic_load(&r->hits[i]) ? "a token was taken twice" : "a token was lost";
	if (!err && taken != r->n)
		err = "the takers' counts do not add up";
	free(r->tk);
	free((void *)r->hits);
	return err;
}

/* How long the owner waits, its last token published, for a thief to have taken something: only
 * a deque whose steals never succeed waits it out (a scheduling delay is far shorter). */
#define QS_STEAL_WAIT_S 30

/* Owner against `thieves` thieves, n tokens (n >= 2). *stolen: how many the thieves took. */
static const char *qs_deque(size_t n, unsigned thieves, uint64_t *stolen)
{
	struct qs_run r = { 0 };
	const char *err = qs_setup(&r, n);
	if (err || sb_deque_init(&r.dq, 4))
		return err ? err : "out of memory";
	struct qs_thread th[QS_MAX_THREADS], own = { &r, 0, 0 };
	pthread_t tid[QS_MAX_THREADS];
	for (unsigned i = 0; i < thieves; i++) {
		th[i] = (struct qs_thread){ &r, i, 0 };
		pthread_create(&tid[i], NULL, qs_thief, &th[i]);
	}
	/* the thieves are running before the owner starts, or a loaded machine could let the owner
	 * push and pop everything before any of them got a core */
	while (atomic_load(&r.thieves_up) < thieves)
		sched_yield();
	uint64_t x = 88172645463325252ull;
	size_t next = 0, last = thieves ? n - 1 : n;
	bool pub = false;
	struct sb_task *t;
	while (next < last) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t burst = 1 + x % 3000;
		for (size_t k = 0; k < burst && next < last; k++)
			sb_deque_push(&r.dq, &r.tk[next++], (x >> 20) % 64 == 0);
		size_t pops = x >> 40 & 1 ? burst : burst / 2;
		for (size_t k = 0; k < pops && (t = sb_deque_pop(&r.dq, &pub)); k++)
			qs_hit(&r, &own, t);
	}
	if (thieves) {
		/* the last token published (at least it is shared), then nothing popped until a thief
		 * has taken a token: with thieves spinning on the deque that happens unless stealing
		 * is broken */
		sb_deque_push(&r.dq, &r.tk[next++], true);
		struct timespec nap = { 0, 1000000 };
		for (unsigned ms = 0; !atomic_load(&r.stole) && ms < QS_STEAL_WAIT_S * 1000; ms++)
			nanosleep(&nap, NULL);
	}
	while ((t = sb_deque_pop(&r.dq, &pub)))
		qs_hit(&r, &own, t);
	atomic_store(&r.done, 1);
	uint64_t taken = own.taken;
	*stolen = 0;
	for (unsigned i = 0; i < thieves; i++) {
		pthread_join(tid[i], NULL);
		*stolen += th[i].taken;
	}
	taken += *stolen;
	r.publishes = r.dq.nr_publish;
	sb_deque_fini(&r.dq);
	err = qs_verify(&r, taken);
	if (!err && thieves && !r.publishes)
		err = "the owner never published";
	return err;
}

/* `producers` producers against `consumers` consumers, n tokens (a multiple of producers). The
 * calling thread must be registered with liburcu. */
static const char *qs_fifo(size_t n, unsigned producers, unsigned consumers)
{
	struct qs_run r = { 0 };
	const char *err = qs_setup(&r, n);
	if (err)
		return err;
	sb_fifo_init(&r.q);
	r.producers = producers;
	atomic_store(&r.producing, producers);
	struct qs_thread pt[QS_MAX_THREADS], ct[QS_MAX_THREADS];
	pthread_t pid[QS_MAX_THREADS], cid[QS_MAX_THREADS];
	for (unsigned i = 0; i < consumers; i++) {
		ct[i] = (struct qs_thread){ &r, i, 0 };
		pthread_create(&cid[i], NULL, qs_consumer, &ct[i]);
	}
	for (unsigned i = 0; i < producers; i++) {
		pt[i] = (struct qs_thread){ &r, i, 0 };
		pthread_create(&pid[i], NULL, qs_producer, &pt[i]);
	}
	uint64_t taken = 0;
	for (unsigned i = 0; i < producers; i++)
		pthread_join(pid[i], NULL);
	for (unsigned i = 0; i < consumers; i++) {
		pthread_join(cid[i], NULL);
		taken += ct[i].taken;
	}
	sb_fifo_fini(&r.q);
	bool order = atomic_load(&r.out_of_order);
	err = qs_verify(&r, taken);
	if (!err && order)
		err = "a consumer saw a producer's tokens out of order";
	return err;
}

#endif
