/*
 * queue.c - the unbounded queues of core/queue.h, deque.h and fifo.h on their own (sb_deque, sb_fifo), and
 * the runtime property they exist for: a fork-join of millions of tasks never hands a task back
 * to its spawner for want of room, and queue memory stays bounded.
 *
 * The tasks here are bare struct sb_task values used as tokens: the queues only store pointers.
 * The concurrent drivers (queue_stress.h, shared with the sanitizer stress binary) check that
 * every token is taken exactly once, that nothing is lost, and for sb_fifo that each consumer
 * sees each producer's tokens in order.
 */
#include <dirent.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common.h"
#include "../queue_stress.h"

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

/* The owner pushes bursts (growing the array from 16 slots as it goes) and pops, publishing
 * eagerly now and then; two thieves steal all along. Every task is taken exactly once, and the
 * thieves took some: the owner starts once both are running and, before taking back the rest,
 * publishes its last token and waits for a steal (qs_deque), so a thief kept off the CPU for
 * the owner's whole run delays the test rather than failing it. */
Test(queues, deque_owner_against_thieves, .timeout = 120)
{
	uint64_t stolen = 0;
	const char *err = qs_deque(2000000, 2, &stolen);
	cr_assert_null(err, "%s", err);
	cr_assert_gt(stolen, 0, "the thieves got some work");
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

/* A queue emptied in place starts again at position 0 and holds nothing of its last life, after
 * a life in one segment and after one over three (the later segments go back to the pool). */
Test(queues, fifo_reset_forgets_everything)
{
	enum { N = 2 * SB_FIFO_SEG + 100 };
	rcu_on();
	struct sb_task *tk = tokens_new(N);
	struct sb_fifo q;
	cr_assert_eq(sb_fifo_init(&q), 0);
	size_t lives[] = { 5, N, 1, 0, SB_FIFO_SEG, 7 };
	for (unsigned l = 0; l < sizeof lives / sizeof lives[0]; l++) {
		for (size_t i = 0; i < lives[l]; i++)
			sb_fifo_push(&q, &tk[i]);
		for (size_t i = 0; i < lives[l]; i++)
			cr_assert_eq(sb_fifo_pop(&q), &tk[i], "life %u, task %zu", l, i);
		sb_fifo_reset(&q);
		cr_assert_eq(sb_fifo_len(&q), 0);
		/* a cell the last life left set would come out here as a task nobody pushed */
		cr_assert_null(sb_fifo_pop(&q), "life %u left a task behind", l);
		struct sb_fifo_seg *s = atomic_load(&q.head);
		for (unsigned i = 0; i < SB_FIFO_SEG; i++)
			cr_assert_null(atomic_load(&s->cells[i]), "life %u: cell %u still set", l, i);
		cr_assert_eq(sb_fifo_base(s), 0);
		cr_assert_null(atomic_load(&s->next));
		cr_assert_eq(atomic_load(&q.tail), s);
	}
	sb_fifo_fini(&q);
	free(tk);
	rcu_off();
}

/* A long stream through a short queue reuses segments: without reclamation 4M tasks would
 * take 4M / SB_FIFO_SEG fresh segments. Reclamation runs on liburcu's call_rcu thread, which a
 * loaded machine may starve, so the test waits for the retired segments' callbacks every 64
 * segments (urcu_memb_barrier): what it counts is reuse, not how fast that thread runs. */
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
		if (i % (64 * SB_FIFO_SEG) == 64 * SB_FIFO_SEG - 1)
			urcu_memb_barrier();
	}
	uint64_t fresh = sb_fifo_segments_allocated() - before;
	cr_assert_lt(fresh, N / SB_FIFO_SEG / 10, "%llu fresh segments for %d tasks: retired ones are not reused",
		     (unsigned long long)fresh, N);
	sb_fifo_fini(&q);
	rcu_off();
}

/* The reclamation thread must not take a busy worker's core (core/queue.c): the first retired
 * segment of the process lowers it to nice 19. After a segment has been retired and the
 * callbacks queued so far have run (urcu_memb_barrier), the thread named urcu-reclaim is the
 * one thread of this process at nice 19, and the test's own thread is where it was. */
Test(queues, reclaimer_runs_at_nice_19)
{
	rcu_on();
	errno = 0;
	int mine = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	cr_assert_eq(errno, 0);
	struct sb_task tk;
	struct sb_fifo q;
	sb_fifo_init(&q);
	for (int i = 0; i < 2 * SB_FIFO_SEG; i++) {
		sb_fifo_push(&q, &tk);
		cr_assert_eq(sb_fifo_pop(&q), &tk);
	}
	urcu_memb_barrier();
	DIR *d = opendir("/proc/self/task");
	cr_assert(d);
	int lowered = 0, named = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		int tid = atoi(e->d_name);
		char path[64], comm[32] = "";
		snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
		FILE *f = fopen(path, "r");
		cr_assert(f);
		cr_assert(fgets(comm, sizeof comm, f));
		fclose(f);
		bool reclaimer = !strcmp(comm, "urcu-reclaim\n");
		named += reclaimer;
		if (getpriority(PRIO_PROCESS, (id_t)tid) == 19) {
			lowered++;
			cr_assert(reclaimer, "thread %d (%s) is at nice 19, not the reclaimer", tid, comm);
		}
	}
	closedir(d);
	cr_assert_eq(named, 1, "%d threads named urcu-reclaim", named);
	cr_assert_eq(lowered, 1, "%d threads at nice 19", lowered);
	cr_assert_eq(getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)), mine, "the caller's own priority moved");
	sb_fifo_fini(&q);
	rcu_off();
}

/* ---- sb_fifo: producers against consumers ---- */

Test(queues, fifo_producers_against_consumers, .timeout = 120)
{
	rcu_on();
	const char *err = qs_fifo(2000000, 2, 2);
	cr_assert_null(err, "%s", err);
	rcu_off();
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
 * overflow path of bounded queues), every leaf runs, and the queues never hold more segments at
 * once than the widest level needs (checked on fifo segments, the order that queues a whole
 * level). Counted are the segments in queues, not those allocated: retired segments come back
 * after a grace period, when the reclamation thread at nice 19 gets a core, and on a loaded
 * machine that is late (a CI run allocated 7,202). */
ParameterizedTest(struct fj_case *c, queues, forkjoin_never_runs_on_spawner, .timeout = 120)
{
	enum { DEPTH = 21 };
	char order[32];
	snprintf(order, sizeof order, "local_order=%s", c->order);
	const char *sets[] = { order, "check=false", NULL };
	struct sb_rt *rt = t_rt("stealing", c->threads, sets);
	sb_thread_attach(rt);
	struct fj f = { 0 };
	(void)sb_fifo_segments_peak(true);
	struct sb_job_desc d = { .work_level = SB_WL_JOIN, .arg = &f };
	struct sb_task *root = NULL;
	struct sb_job *j = sb_job_create(rt, &d);
	root = sb_task_new(j, fj_node, NULL);
	root->u[0] = DEPTH;
	sb_job_submit(j, root);
	cr_assert(sb_job_wait(j));
	sb_job_put(j);
	uint64_t segs = sb_fifo_segments_peak(false);
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
	cr_log_info("%s, %d threads: at most %llu segments in the queues at once", c->order, c->threads,
		    (unsigned long long)segs);
	cr_assert_lt(segs, (2u << DEPTH) / SB_FIFO_SEG * 3 / 4, "%llu segments in the queues at once",
		     (unsigned long long)segs);
	t_done(rt);
}
