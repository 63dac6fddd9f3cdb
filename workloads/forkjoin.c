/*
 * forkjoin.c - fork-join computations in continuation style: the fine-grained, dynamically
 * unfolding task graphs that memo 001's design ("everything is a task"; children run on the
 * parent's worker unless others are idle) is meant to balance.
 *
 * Models, one job per computation, `clients` request threads running them back to back:
 *   fib  fib(n) as a binary tree of tasks. A node task with n >= 2 makes its join task at once,
 *        unspawned, and spawns its two children; each child adds its value into the join task
 *        and does one atomic decrement of its pending count; the one that takes it to zero
 *        spawns the join task, which delivers the sum to its own parent. No task ever waits,
 *        and a join costs one task from the core's per-thread free list, not a malloc.
 *   uts  an unbalanced tree search (UTS, binomial variant): the root has uts_b0 children, every
 *        other node has uts_m children with probability uts_q and none otherwise, decided by a
 *        hash of the node's id, so the tree is fixed by the seed. Delivered values count nodes.
 * Each node task spends work_ns. The client knows the right answer (fib by iteration, the UTS
 * size by a sequential walk at start); the job's last task compares, counts a right result in
 * nr_verified and fails the job (SB_ERROR) and the run (wl_wrong) on a wrong one.
 *
 * Does not model database work; it exercises spawn, steal and join paths under load imbalance.
 * Concurrency: a join task's sum is added to by its children, each before its acq_rel
 * decrement of the pending count, and read by the join task itself, spawned after the last
 * decrement.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "common.h"

enum { W_FIB, W_UTS };
static const char *const forkjoin_classes[] = { "fib", "uts", NULL };

struct forkjoin_params {
	int which;
	int64_t clients;
	int64_t n;
	int64_t work_ns;
	int64_t uts_b0;
	int64_t uts_m;
	double uts_q;
};

#define P struct forkjoin_params
static const struct sb_param forkjoin_param_table[] = {
	SB_PARAM_ENUM(P, which, W_FIB, forkjoin_classes, "the computation: fib(n) or an unbalanced tree search"),
	SB_PARAM_INT(P, clients, 1, 1, 1024, "request threads, each running one computation at a time"),
	SB_PARAM_INT(P, n, 24, 0, 35, "fib: the argument (tasks grow as 1.6^n)"),
	SB_PARAM_INT(P, work_ns, 100, 0, 1000000000, "busy work of each node task, ns"),
	SB_PARAM_INT(P, uts_b0, 200, 1, 1000000, "uts: children of the root"),
	SB_PARAM_INT(P, uts_m, 5, 1, 1024, "uts: children of a node that has any"),
	SB_PARAM_DOUBLE(P, uts_q, 0.198, 0, 1, "uts: probability that a node has children (uts_q x uts_m < 1)"),
	SB_PARAM_END,
};
#undef P

/* A UTS tree larger than this is refused at start: the sequential count alone would dominate. */
#define UTS_MAX_NODES 100000000ull

struct forkjoin {
	struct wl_clients cs; /* first: see common.h */
	struct forkjoin_params p;
	uint64_t uts_root;    /* id of the root node: the tree follows from it */
	uint64_t expect;      /* the right answer of every computation */
};
_Static_assert(offsetof(struct forkjoin, cs) == 0, "workload state starts with its clients");

/* A join task, from its node's run until the last child spawns it: au[0] the sum so far
 * (starting with what the node adds itself: 1 per UTS node, 0 for fib), u[1] the parent's join
 * task (0: this node is the job's root), au[2] the children not yet delivered. */
enum { J_SUM = 0, J_PARENT = 1, J_PENDING = 2 };

/* ---- the trees ---- */

static uint64_t uts_child(uint64_t id, uint64_t i)
{
	return wl_mix64(id ^ wl_mix64(i + 0x632be59bd9b4e019ull));
}

static uint64_t uts_children(const struct forkjoin *f, uint64_t id, bool root)
{
	if (root)
		return (uint64_t)f->p.uts_b0;
	double u = (double)(wl_mix64(id) >> 11) * 0x1.0p-53;
	return u < f->p.uts_q ? (uint64_t)f->p.uts_m : 0;
}

static bool push(uint64_t **stack, size_t *cap, size_t *top, uint64_t id)
{
	if (*top == *cap) {
		uint64_t *s = realloc(*stack, 2 * *cap * sizeof *s);
		if (!s)
			return false;
		*stack = s;
		*cap *= 2;
	}
	(*stack)[(*top)++] = id;
	return true;
}

/* The tree's size by a depth-first walk with an explicit stack; 0 if above UTS_MAX_NODES. */
static uint64_t uts_count(const struct forkjoin *f)
{
	size_t cap = 1024, top = 0;
	uint64_t *stack = malloc(cap * sizeof *stack);
	uint64_t nodes = 0;
	bool root = true;
	if (!stack || !push(&stack, &cap, &top, f->uts_root))
		goto fail;
	while (top) {
		uint64_t id = stack[--top];
		if (++nodes > UTS_MAX_NODES)
			goto fail;
		uint64_t k = uts_children(f, id, root);
		root = false;
		for (uint64_t i = 0; i < k; i++)
			if (!push(&stack, &cap, &top, uts_child(id, i)))
				goto fail;
	}
	free(stack);
	return nodes;
fail:
	free(stack);
	return 0;
}

static uint64_t fib_value(int64_t n)
{
	uint64_t a = 0, b = 1;
	for (int64_t i = 0; i < n; i++) {
		uint64_t s = a + b;
		a = b;
		b = s;
	}
	return a;
}

/* ---- tasks: a node task's u[0] = the node (fib's n or a UTS id), u[1] = its parent's join ---- */

/* Hand a node's value to its parent: the last of the parent's children spawns it. */
static enum sb_result deliver(struct sb_task *t, struct sb_task *parent, uint64_t v)
{
	struct forkjoin *f = t->arg;
	if (!parent) {
		if (v != f->expect) {
			wl_wrong(&f->cs, "%s computed %llu, expected %llu", forkjoin_classes[f->p.which],
				 (unsigned long long)v, (unsigned long long)f->expect);
			return SB_ERROR;
		}
		/* relaxed: a count, read after the run */
		atomic_fetch_add_explicit(&f->cs.nr_verified, 1, memory_order_relaxed);
		return SB_DONE;
	}
	sb_exec_touch(parent); /* breadth first, the parent's join has long left the cache */
	/* relaxed: the sum is read by the join task only, after the decrement below, whose release
	 * orders this add before the last sibling's acquire */
	atomic_fetch_add_explicit(&parent->au[J_SUM], v, memory_order_relaxed);
	/* acq_rel: the release publishes our add; the last decrement acquires every sibling's before
	 * it spawns the join (whose submission publishes them on to the worker that runs it) */
	if (atomic_fetch_sub_explicit(&parent->au[J_PENDING], 1, memory_order_acq_rel) == 1) {
		wl_count_task(&f->cs);
		sb_spawn(parent);
	}
	return SB_DONE;
}

static enum sb_result join_task(struct sb_task *t)
{
	/* relaxed: every child's add happened before the spawn that handed us this task */
	uint64_t sum = atomic_load_explicit(&t->au[J_SUM], memory_order_relaxed);
	return deliver(t, (struct sb_task *)(uintptr_t)t->u[J_PARENT], sum);
}

static enum sb_result node_task(struct sb_task *t)
{
	struct forkjoin *f = t->arg;
	struct sb_task *parent = (struct sb_task *)(uintptr_t)t->u[1];
	sb_work_ns((uint64_t)f->p.work_ns);
	uint64_t kids, self;
	if (f->p.which == W_FIB) {
		if (t->u[0] < 2)
			return deliver(t, parent, t->u[0]);
		kids = 2;
		self = 0;
	} else {
		kids = uts_children(f, t->u[0], parent == NULL);
		if (!kids)
			return deliver(t, parent, 1);
		self = 1;
	}
	/* counted when spawned: the join of a cancelled job's dropped children never is */
	struct sb_task *jn = sb_task_new(t->job, join_task, f);
	sb_exec_touch(jn); /* a join is pushed only once its children are done: its new is priced here */
	/* relaxed: not shared yet; the children's submission publishes it */
	atomic_store_explicit(&jn->au[J_SUM], self, memory_order_relaxed);
	atomic_store_explicit(&jn->au[J_PENDING], kids, memory_order_relaxed);
	jn->u[J_PARENT] = (uint64_t)(uintptr_t)parent;
	for (uint64_t i = 0; i < kids; i++) {
		struct sb_task *c = wl_task(&f->cs, t->job, node_task, f);
		c->u[0] = f->p.which == W_FIB ? t->u[0] - 1 - i : uts_child(t->u[0], i);
		c->u[1] = (uint64_t)(uintptr_t)jn;
		sb_spawn(c);
	}
	return SB_DONE;
}

/* ---- clients ---- */

static void client(struct wl_client *c)
{
	struct forkjoin *f = c->set->user;
	while (wl_client_more(c)) {
		/* a computation is one compute-bound job: never lightweight */
		struct sb_job_desc d = { .cls = (unsigned)f->p.which, .work_level = SB_WL_INFINITY, .done = wl_job_done,
					 .arg = f };
		struct sb_job *j = sb_job_create(c->set->env->rt, &d);
		struct sb_task *root = wl_task(&f->cs, j, node_task, f);
		root->u[0] = f->p.which == W_FIB ? (uint64_t)f->p.n : f->uts_root;
		wl_client_submit(c, j, root, f->expect);
		if (!wl_wait_put(j))
			break;
	}
}

static int forkjoin_start(const struct wl_env *env, const void *params, void **state, char *err, size_t errlen)
{
	const struct forkjoin_params *p = params;
	struct forkjoin *f = calloc(1, sizeof *f);
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f->p = *p;
	if (p->which == W_FIB) {
		f->expect = fib_value(p->n);
	} else {
		if (p->uts_q * (double)p->uts_m >= 1) {
			snprintf(err, errlen, "parameters 'uts_q' x 'uts_m' = %g: the tree is infinite on average; keep it below 1",
				 p->uts_q * (double)p->uts_m);
			free(f);
			return -EINVAL;
		}
		f->uts_root = wl_mix64(env->seed ^ 0x5bd1e9955bd1e995ull);
		f->expect = uts_count(f);
		if (!f->expect) {
			snprintf(err, errlen, "parameters 'uts_*': this seed's tree has over %llu nodes; lower uts_q or uts_b0",
				 UTS_MAX_NODES);
			free(f);
			return -EINVAL;
		}
	}
	*state = f;
	return wl_clients_start(&f->cs, env, (unsigned)p->clients, client, f, err, errlen);
}

static void forkjoin_destroy(void *st)
{
	struct forkjoin *f = st;
	wl_clients_free(&f->cs);
	free(f);
}

const struct sb_workload forkjoin_workload = {
	.start = forkjoin_start,
	.done = wl_state_done,
	.stop = wl_state_stop,
	.counts = wl_state_counts,
	.destroy = forkjoin_destroy,
	.name = "forkjoin",
	.description = "fib(n) and unbalanced tree search in continuation style, results verified (memo 001: everything is a task)",
	.classes = forkjoin_classes,
	.params = forkjoin_param_table,
	.params_size = sizeof(struct forkjoin_params),
};
