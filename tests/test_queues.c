/*
 * test_queues.c - the unbounded queues of core/queue.h on their own (sb_deque, sb_fifo), and
 * the runtime property they exist for: a fork-join of millions of tasks never hands a task back
 * to its spawner for want of room, and queue memory stays bounded.
 *
 * The tasks here are bare struct sb_task values used as tokens: the queues only store pointers.
 * Concurrent tests check that every token is taken exactly once (a hit count per token), that
 * nothing is lost, and for sb_fifo that each consumer sees each producer's tokens in order.
 */
#include <pthread.h>

#include "common.h"

static void rcu_on(void) { urcu_memb_register_thread(); }
static void rcu_off(void) { urcu_memb_unregister_thread(); }

static struct sb_task *tokens_new(size_t n)
{
	struct sb_task *t = calloc(n, sizeof *t);
	cr_assert(t);
	for (size_t i = 0; i < n; i++)
		t[i].u[0] = i;
	return t;
}

/* ---- sb_deque: sequential ---- */

/* From 4 slots to 2^20 tasks (18 doublings): the owner gets them back newest first. */
Test(queues, deque_grows_and_pops_lifo)
{
	enum { N = 1 << 20 };
	struct sb_task *tk = tokens_new(N);
	struct sb_deque d;
	cr_assert_eq(sb_deque_init(&d, 2), 0);
	for (size_t i = 0; i < N; i++)
		cr_assert_eq(sb_deque_push(&d, &tk[i], false), 0, "push %zu neither fails nor publishes", i);
	cr_assert_eq(sb_deque_len(&d), N);
	cr_assert_eq(d.obuf->mask + 1, N, "the array doubled to exactly what was needed");
	cr_assert_eq(sb_deque_shared(&d), 0, "nothing is shared unless published");
	bool pub = false;
	for (size_t i = N; i-- > 0;) {
		struct sb_task *t = sb_deque_pop(&d, &pub);
		cr_assert_eq(t, &tk[i], "pop %zu", i);
	}
	cr_assert_null(sb_deque_pop(&d, &pub));
	cr_assert(!pub);
	sb_deque_fini(&d);
	free(tk);
}

/* Private tasks are invisible to thieves; a thief's request makes the owner publish the older
 * half at its next operation; thieves take oldest first; the owner takes back the rest. */
Test(queues, deque_split_request_and_take_back)
{
	struct sb_task *tk = tokens_new(8);
	struct sb_deque d;
	cr_assert_eq(sb_deque_init(&d, 4), 0);
	for (int i = 0; i < 7; i++)
		sb_deque_push(&d, &tk[i], false);
	struct sb_task *got;
	cr_assert_eq(sb_deque_steal(&d, &got), SB_STEAL_EMPTY, "private tasks cannot be stolen");
	cr_assert_eq(atomic_load(&d.splitreq), 1, "the failed steal asked for work");
	cr_assert_eq(sb_deque_push(&d, &tk[7], false), 1, "the next push served the request");
	cr_assert_eq(sb_deque_shared(&d), 4, "the older half of 8 is shared");
	cr_assert_eq(atomic_load(&d.splitreq), 0);
	cr_assert_eq(sb_deque_take(&d), &tk[0], "thieves take the oldest");
	cr_assert_eq(sb_deque_take(&d), &tk[1]);
	bool pub = false;
	for (int i = 7; i >= 4; i--)
		cr_assert_eq(sb_deque_pop(&d, &pub), &tk[i], "the owner's private part, newest first");
	/* private part empty: the owner takes back the shared part, newest first */
	cr_assert_eq(sb_deque_pop(&d, &pub), &tk[3]);
	cr_assert_eq(sb_deque_pop(&d, &pub), &tk[2]);
	cr_assert_null(sb_deque_pop(&d, &pub));
	cr_assert_eq(sb_deque_take(&d), NULL);
	/* eager: published at once */
	cr_assert_eq(sb_deque_push(&d, &tk[0], true), 1);
	cr_assert_eq(sb_deque_take(&d), &tk[0]);
	cr_assert(!pub);
	sb_deque_fini(&d);
	free(tk);
}

/* ---- sb_deque: owner against thieves ---- */

#define DQ_N 2000000
static _Atomic unsigned char dq_hits[DQ_N];
static _Atomic int dq_done;

struct dq_thief {
	struct sb_deque *d;
	uint64_t taken;
};

static void *dq_thief_main(void *arg)
{
	struct dq_thief *th = arg;
	while (!atomic_load(&dq_done)) {
		struct sb_task *t = sb_deque_take(th->d);
		if (t) {
			atomic_fetch_add(&dq_hits[t->u[0]], 1);
			th->taken++;
		} else {
			sched_yield();
		}
	}
	return NULL;
}

/* The owner pushes bursts (growing the array from 16 slots as it goes) and pops, publishing
 * eagerly now and then; two thieves steal all along. Every task is taken exactly once. */
Test(queues, deque_owner_against_thieves, .timeout = 120)
{
	struct sb_task *tk = tokens_new(DQ_N);
	struct sb_deque d;
	cr_assert_eq(sb_deque_init(&d, 4), 0);
	atomic_store(&dq_done, 0);
	struct dq_thief th[2] = { { &d, 0 }, { &d, 0 } };
	pthread_t tid[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&tid[i], NULL, dq_thief_main, &th[i]);
	uint64_t own = 0, x = 88172645463325252ull;
	size_t next = 0;
	bool pub = false;
	while (next < DQ_N) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t burst = 1 + x % 3000;
		for (size_t k = 0; k < burst && next < DQ_N; k++)
			sb_deque_push(&d, &tk[next++], (x >> 20) % 64 == 0);
		size_t pops = x >> 40 & 1 ? burst : burst / 2;
		for (size_t k = 0; k < pops; k++) {
			struct sb_task *t = sb_deque_pop(&d, &pub);
			if (!t)
				break;
			atomic_fetch_add(&dq_hits[t->u[0]], 1);
			own++;
		}
	}
	struct sb_task *t;
	while ((t = sb_deque_pop(&d, &pub))) {
		atomic_fetch_add(&dq_hits[t->u[0]], 1);
		own++;
	}
	atomic_store(&dq_done, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	for (size_t i = 0; i < DQ_N; i++)
		cr_assert_eq(atomic_load(&dq_hits[i]), 1, "task %zu taken %u times", i, atomic_load(&dq_hits[i]));
	cr_assert_eq(own + th[0].taken + th[1].taken, DQ_N);
	cr_assert_gt(th[0].taken + th[1].taken, 0, "the thieves got some work");
	cr_assert_gt(d.nr_publish, 0);
	sb_deque_fini(&d);
	free(tk);
}

/* ---- sb_fifo: sequential ---- */

/* Several segments' worth in and out, interleaved, in FIFO order; batches too. */
Test(queues, fifo_order_across_segments)
{
	enum { N = 5 * SB_FIFO_SEG + 17 };
	rcu_on();
	struct sb_task *tk = tokens_new(N);
	struct sb_fifo q;
	cr_assert_eq(sb_fifo_init(&q), 0);
	cr_assert_null(sb_fifo_pop(&q));
	size_t in = 0, out = 0;
	while (out < N) {
		for (int k = 0; k < 700 && in < N; k++)
			sb_fifo_push(&q, &tk[in++]);
		cr_assert_eq(sb_fifo_len(&q), in - out);
		for (int k = 0; k < 300 && out < in; k++)
			cr_assert_eq(sb_fifo_pop(&q), &tk[out++]);
		struct sb_task *b[64];
		unsigned got = sb_fifo_pop_batch(&q, b, 64);
		cr_assert_leq(got, 64);
		for (unsigned k = 0; k < got; k++)
			cr_assert_eq(b[k], &tk[out++], "batch element %u", k);
		if (in == N)
			while (out < N)
				cr_assert_eq(sb_fifo_pop(&q), &tk[out++]);
	}
	cr_assert_null(sb_fifo_pop(&q));
	cr_assert_eq(sb_fifo_len(&q), 0);
	sb_fifo_fini(&q);
	free(tk);
	rcu_off();
}

/* A long stream through a short queue reuses segments: without reclamation 4M tasks would
 * take 4M / SB_FIFO_SEG fresh segments. */
Test(queues, fifo_memory_stays_bounded, .timeout = 60)
{
	enum { N = 4000000 };
	rcu_on();
	struct sb_task tk[8];
	struct sb_fifo q;
	sb_fifo_init(&q);
	uint64_t before = sb_fifo_segments_allocated();
	for (size_t i = 0; i < N; i++) {
		sb_fifo_push(&q, &tk[i % 8]);
		if (i % 8 == 7)
			for (int k = 0; k < 8; k++)
				cr_assert_eq(sb_fifo_pop(&q), &tk[k]);
	}
	uint64_t fresh = sb_fifo_segments_allocated() - before;
	cr_assert_lt(fresh, N / SB_FIFO_SEG / 10, "%llu fresh segments for %d tasks: retired ones are not reused",
		     (unsigned long long)fresh, N);
	sb_fifo_fini(&q);
	rcu_off();
}

/* ---- sb_fifo: producers against consumers ---- */

#define FQ_PROD 2
#define FQ_CONS 2
#define FQ_PER 1000000
static _Atomic unsigned char fq_hits[FQ_PROD * FQ_PER];
static _Atomic int fq_producing;

struct fq_arg {
	struct sb_fifo *q;
	struct sb_task *tk;
	unsigned idx;
	uint64_t taken;
	bool order_ok;
};

static void *fq_producer(void *arg)
{
	struct fq_arg *a = arg;
	rcu_on();
	for (size_t i = 0; i < FQ_PER; i++)
		sb_fifo_push(a->q, &a->tk[a->idx * FQ_PER + i]);
	atomic_fetch_sub(&fq_producing, 1);
	rcu_off();
	return NULL;
}

static void *fq_consumer(void *arg)
{
	struct fq_arg *a = arg;
	int64_t last[FQ_PROD];
	for (int p = 0; p < FQ_PROD; p++)
		last[p] = -1;
	a->order_ok = true;
	rcu_on();
	for (;;) {
		struct sb_task *b[4];
		unsigned got = a->idx ? sb_fifo_pop_batch(a->q, b, 4) : (b[0] = sb_fifo_pop(a->q)) != NULL;
		if (!got) {
			if (!atomic_load(&fq_producing) && !sb_fifo_len(a->q))
				break;
			continue;
		}
		for (unsigned k = 0; k < got; k++) {
			uint64_t id = b[k]->u[0];
			unsigned p = (unsigned)(id / FQ_PER);
			/* FIFO: one producer's tokens reach any one consumer in push order */
			if ((int64_t)(id % FQ_PER) <= last[p])
				a->order_ok = false;
			last[p] = (int64_t)(id % FQ_PER);
			atomic_fetch_add(&fq_hits[id], 1);
			a->taken++;
		}
	}
	rcu_off();
	return NULL;
}

Test(queues, fifo_producers_against_consumers, .timeout = 120)
{
	struct sb_task *tk = tokens_new(FQ_PROD * FQ_PER);
	struct sb_fifo q;
	rcu_on();
	sb_fifo_init(&q);
	atomic_store(&fq_producing, FQ_PROD);
	struct fq_arg pa[FQ_PROD], ca[FQ_CONS];
	pthread_t pt[FQ_PROD], ct[FQ_CONS];
	for (unsigned i = 0; i < FQ_CONS; i++) {
		ca[i] = (struct fq_arg){ .q = &q, .tk = tk, .idx = i };
		pthread_create(&ct[i], NULL, fq_consumer, &ca[i]);
	}
	for (unsigned i = 0; i < FQ_PROD; i++) {
		pa[i] = (struct fq_arg){ .q = &q, .tk = tk, .idx = i };
		pthread_create(&pt[i], NULL, fq_producer, &pa[i]);
	}
	for (unsigned i = 0; i < FQ_PROD; i++)
		pthread_join(pt[i], NULL);
	uint64_t taken = 0;
	for (unsigned i = 0; i < FQ_CONS; i++) {
		pthread_join(ct[i], NULL);
		taken += ca[i].taken;
		cr_assert(ca[i].order_ok, "consumer %u saw a producer's tokens out of order", i);
	}
	for (size_t i = 0; i < FQ_PROD * FQ_PER; i++)
		cr_assert_eq(atomic_load(&fq_hits[i]), 1, "token %zu taken %u times", i, atomic_load(&fq_hits[i]));
	cr_assert_eq(taken, FQ_PROD * FQ_PER);
	sb_fifo_fini(&q);
	rcu_off();
	free(tk);
}

/* ---- the runtime: fork-join of millions of tasks ---- */

struct fj_case {
	char order[8];
	int threads;
};

ParameterizedTestParameters(queues, forkjoin_never_runs_on_spawner)
{
	static struct fj_case cases[] = { { "fifo", 1 }, { "fifo", 2 }, { "lifo", 1 }, { "lifo", 2 } };
	return cr_make_param_array(struct fj_case, cases, sizeof cases / sizeof cases[0]);
}

struct fj {
	_Atomic uint64_t leaves;
};

/* u[0] = depth left; a binary tree of tasks, each node spawning two children */
static enum sb_result fj_node(struct sb_task *t)
{
	if (!t->u[0]) {
		atomic_fetch_add_explicit(&((struct fj *)t->job->arg)->leaves, 1, memory_order_relaxed);
		return SB_DONE;
	}
	for (int i = 0; i < 2; i++) {
		struct sb_task *c = sb_task_new(t->job, fj_node, NULL);
		c->u[0] = t->u[0] - 1;
		sb_spawn(c);
	}
	return SB_DONE;
}

/* 2^21 leaves, 4M tasks in one job under stealing: no task goes back to its spawner (the
 * overflow path of bounded queues), every leaf runs, and the queue memory stays within what
 * the largest queue needs (checked on fifo segments, the order that queues a whole level). */
ParameterizedTest(struct fj_case *c, queues, forkjoin_never_runs_on_spawner, .timeout = 120)
{
	enum { DEPTH = 21 };
	char order[32];
	snprintf(order, sizeof order, "local_order=%s", c->order);
	const char *sets[] = { order, "check=false", NULL };
	struct sb_rt *rt = t_rt("stealing", c->threads, sets);
	sb_thread_attach(rt);
	struct fj f = { 0 };
	uint64_t seg0 = sb_fifo_segments_allocated();
	struct sb_job_desc d = { .work_level = SB_WL_JOIN, .arg = &f };
	struct sb_task *root = NULL;
	struct sb_job *j = sb_job_create(rt, &d);
	root = sb_task_new(j, fj_node, NULL);
	root->u[0] = DEPTH;
	sb_job_submit(j, root);
	cr_assert(sb_job_wait(j));
	sb_job_put(j);
	uint64_t segs = sb_fifo_segments_allocated() - seg0;
	sb_thread_detach();
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(atomic_load(&f.leaves), 1u << DEPTH);
	uint64_t v[SB_NR_COUNTERS], runs = 0, back = 0;
	for (unsigned w = 0; w < sb_rt_nworkers(rt); w++) {
		sb_rt_worker_counters(rt, w, v);
		runs += v[SB_C_RUN];
		back += v[SB_C_TO_CALLER];
	}
	cr_assert_eq(back, 0, "%s: %llu tasks went back to their spawner", c->order, (unsigned long long)back);
	cr_assert_geq(runs, (2u << DEPTH) - 1, "every node ran on a worker");
	/* the widest level holds 2^21 tasks, 4096 segments; all 4M tasks would need 8192 */
	cr_assert_lt(segs, (2u << DEPTH) / SB_FIFO_SEG * 3 / 4, "%llu segments allocated", (unsigned long long)segs);
	t_done(rt);
}
