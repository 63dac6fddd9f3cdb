/*
 * load.c - bulk loading, jogasaki's two modes (memo 000, "load").
 *
 * Models: `clients` request threads, each running loads back to back; a load is one job (class
 * load, never serial) whose statements are INSERT jobs (class insert, work level 10, one sticky
 * write task of write_ns, in-place teardown). Reading one row's parameters costs the loading
 * task read_ns.
 *   transactional     the whole load is one transaction. The load task keeps up to bulk_size
 *                     statements in flight (jogasaki's loader batch, 10000 by default): each run
 *                     it frees the slots of finished statements, fills the free ones, and while
 *                     any statement is still running or rows remain it returns SB_YIELD to be
 *                     scheduled again: jogasaki's busy wait, in task form. wait=block
 *                     replaces the busy wait by DuckDB's TASK_BLOCKED (memo 002): when it can
 *                     submit nothing more it returns SB_BLOCKED, and the next statement to
 *                     finish resumes it.
 *   nontransactional  files x blocks blocks of block_rows rows; each block is its own
 *                     transaction with one statement in flight at a time, and up to
 *                     concurrent_blocks blocks run at once. A statement's completion callback
 *                     schedules the block's next step (a task of the load job), as the batch
 *                     executor's callbacks do; the load job stays open with one hold per block
 *                     chain.
 * Bounded runs count loads. When the run is told to stop, a load reads no further rows: its
 * statements in flight complete and its transactions end.
 *
 * Does not model files or parsing beyond read_ns, nor failed loads.
 * Concurrency: a client's struct load_client is touched by its load job's tasks one at a time
 * (transactional: the one load task, re-run after each yield) or per chain (nontransactional:
 * a chain's steps follow each other through the statement callbacks, and a chain's `prev` is
 * the one field a step and its successor touch at once); `next_block` is the only field the
 * chains share.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "common.h"

enum { C_LOAD, C_INSERT };
static const char *const load_classes[] = { "load", "insert", NULL };

enum { M_TRANSACTIONAL, M_NONTRANSACTIONAL };
static const char *const modes[] = { "transactional", "nontransactional", NULL };
enum { W_YIELD, W_BLOCK };
static const char *const waits[] = { "yield", "block", NULL };

struct load_params {
	int mode;
	int wait;
	int64_t clients;
	int64_t rows;
	int64_t bulk_size;
	int64_t files, blocks, block_rows, concurrent_blocks;
	int64_t write_ns, read_ns;
	int dist;
};

#define P struct load_params
static const struct sb_param load_param_table[] = {
	SB_PARAM_ENUM(P, mode, M_TRANSACTIONAL, modes, "one transaction for the whole load, or one per block"),
	SB_PARAM_ENUM(P, wait, W_YIELD, waits,
		      "transactional: with statements in flight the load task yields and polls (jogasaki), or blocks "
		      "until one finishes (DuckDB's TASK_BLOCKED)"),
	SB_PARAM_INT(P, clients, 1, 1, 64, "request threads, each running loads one after another"),
	SB_PARAM_INT(P, rows, 100000, 1, 1000000000, "transactional: rows (INSERT statements) per load"),
	SB_PARAM_INT(P, bulk_size, 10000, 1, 10000000, "transactional: statements in flight at most (jogasaki's default 10000)"),
	SB_PARAM_INT(P, files, 4, 1, 100000, "nontransactional: files per load"),
	SB_PARAM_INT(P, blocks, 8, 1, 100000, "nontransactional: blocks per file"),
	SB_PARAM_INT(P, block_rows, 1000, 1, 100000000, "nontransactional: rows per block"),
	SB_PARAM_INT(P, concurrent_blocks, 4, 1, 100000, "nontransactional: blocks loading at once"),
	SB_PARAM_INT(P, write_ns, 2000, 0, 1000000000, "mean cost of an INSERT's write task, ns"),
	SB_PARAM_INT(P, read_ns, 500, 0, 1000000000, "cost to the loading task of reading one row, ns"),
	SB_PARAM_ENUM(P, dist, WL_EXP, wl_dist_names, "distribution of the write costs"),
	SB_PARAM_END,
};
#undef P

struct load;

/* nontransactional: one block after another, one statement at a time */
struct chain {
	struct load_client *lc;
	struct sb_txn *txn;      /* the current block's transaction, or NULL between blocks */
	uint64_t rows_left;      /* in the current block */
	bool in_flight;          /* a statement was submitted and not yet taken back */
	_Atomic(struct sb_job *) prev; /* that statement, handed over once its submit returned */
	struct wl_rng rng;       /* write costs of the current block, seeded by its number */
};

struct load_client {
	struct load *l;
	struct sb_job *job;          /* the load job in flight */
	uint64_t seed;               /* drawn by the client per load: the costs follow from it */
	struct wl_rng rng;           /* transactional: write costs, drawn by the one load task */
	/* transactional */
	struct sb_job **ring;        /* statements not yet given back, cap slots, oldest first */
	uint64_t cap;                /* bulk_size, twice that with wait=block (see bulk_task) */
	uint64_t head, tail;
	uint64_t rows_left;
	struct sb_txn *txn;
	/* wait=block: statements whose completion callback has run, and the load task while it is
	 * parked (SB_BLOCKED) waiting for one */
	_Atomic uint64_t finished;
	_Atomic(struct sb_task *) parked;
	/* nontransactional */
	_Atomic uint64_t next_block; /* blocks handed to chains so far */
	struct chain *chains;        /* concurrent_blocks of them */
};

struct load {
	struct wl_clients cs; /* first: see common.h */
	struct load_params p;
	struct load_client *lc;
	_Atomic uint64_t txn_ids;
};
_Static_assert(offsetof(struct load, cs) == 0, "workload state starts with its clients");

static uint64_t new_txn_id(struct load *l)
{
	/* relaxed: only uniqueness matters */
	return atomic_fetch_add_explicit(&l->txn_ids, 1, memory_order_relaxed) + 1;
}

static struct sb_job *insert_job(struct load *l, struct sb_txn *x, sb_job_done_fn done, void *arg)
{
	struct sb_job_desc d = { .cls = C_INSERT, .work_level = SB_WL_SIMPLE_WRITE, .txn = x,
				 .teardown = SB_TEARDOWN_INPLACE, .done = done, .arg = arg };
	return sb_job_create(l->cs.env->rt, &d);
}

/* ---- transactional ---- */

/* wait=block: a statement has finished; if the load task is parked waiting for one, it runs
 * again (DuckDB's callback that reschedules a TASK_BLOCKED task). */
static void insert_done(struct sb_job *j)
{
	struct load_client *lc = j->arg;
	wl_count_done(&lc->l->cs, j);
	/* seq_cst, both: with park_load()'s store of `parked` then load of `finished`, a Dekker
	 * pair: either the load task sees this statement finished, or this sees it parked */
	atomic_fetch_add_explicit(&lc->finished, 1, memory_order_seq_cst);
	struct sb_task *t = atomic_exchange_explicit(&lc->parked, NULL, memory_order_seq_cst);
	if (t)
		sb_task_resume(t);
}

/* wait=block: park until a statement finishes (seen: the callbacks counted when this run of the
 * load task began). */
static enum sb_result park_load(struct load_client *lc, struct sb_task *t, uint64_t seen)
{
	atomic_store_explicit(&lc->parked, t, memory_order_seq_cst);
	if (atomic_load_explicit(&lc->finished, memory_order_seq_cst) == seen)
		return SB_BLOCKED; /* the next callback resumes us */
	/* one finished meanwhile: take ourselves back, unless its callback already took us (then
	 * its resume is on the way, and the core lets a resume overtake the SB_BLOCKED return) */
	struct sb_task *expected = t;
	if (atomic_compare_exchange_strong_explicit(&lc->parked, &expected, NULL, memory_order_seq_cst,
						    memory_order_seq_cst))
		return SB_YIELD;
	return SB_BLOCKED;
}

/* The load task. The ring holds a reference to every statement submitted and not yet given
 * back, oldest first; a reference goes back once its job is done. In the yield mode a statement
 * is in flight until its job is done; in the block mode until its callback has run (which is
 * what resumes the task; the job is done a moment later), so the ring has room for twice
 * bulk_size: the references of statements finished but not yet given back. */
static enum sb_result bulk_task(struct sb_task *t)
{
	struct load_client *lc = t->arg;
	struct load *l = lc->l;
	bool block = l->p.wait == W_BLOCK;
	uint64_t bulk = (uint64_t)l->p.bulk_size, cap = lc->cap;
	/* seq_cst: the first half of park_load's Dekker pair with insert_done */
	uint64_t seen = block ? atomic_load_explicit(&lc->finished, memory_order_seq_cst) : 0;
	while (lc->head < lc->tail && sb_job_done(lc->ring[lc->head % cap]))
		sb_job_put(lc->ring[lc->head++ % cap]);
	if (wl_stopping(&l->cs))
		lc->rows_left = 0; /* the run is over: the rest of the file is not read */
	/* filling many free slots may take long (read_ns per row): a stop ends it between rows, so
	 * that the run's drain is not held up by one task that cannot be cancelled while it runs */
	while ((block ? lc->tail - seen : lc->tail - lc->head) < bulk && lc->tail - lc->head < cap && lc->rows_left &&
	       !wl_stopping(&l->cs)) {
		sb_work_ns((uint64_t)l->p.read_ns);
		struct sb_job *j = block ? insert_job(l, lc->txn, insert_done, lc) : insert_job(l, lc->txn, wl_job_done, l);
		uint64_t ns = wl_cost(&lc->rng, l->p.dist, (double)l->p.write_ns);
		lc->ring[lc->tail++ % cap] = j;
		lc->rows_left--;
		wl_submit(&l->cs, j, wl_work(&l->cs, j, ns, SB_TF_STICKY));
	}
	if (!block)
		return lc->head < lc->tail || lc->rows_left ? SB_YIELD : SB_DONE;
	/* every statement's callback has run: done (the client gives back the references left), or
	 * more to submit once the ring has room (a reference waiting for its job to be done) */
	if (lc->tail == seen)
		return lc->rows_left ? SB_YIELD : SB_DONE;
	return park_load(lc, t, seen); /* a statement in flight will resume us */
}

/* ---- nontransactional ---- */

static enum sb_result step_task(struct sb_task *t);

static void chain_done(struct sb_job *j)
{
	struct chain *ch = j->arg;
	struct load *l = ch->lc->l;
	wl_count_done(&l->cs, j);
	/* the block's next step, as a task of the load job (kept open by the chain's hold). It runs
	 * even in a cancelled run: it is what ends the block's transaction and releases the hold. */
	struct sb_task *t = wl_task(&l->cs, ch->lc->job, step_task, ch);
	t->flags |= SB_TF_CLEANUP;
	sb_spawn(t);
}

static enum sb_result step_task(struct sb_task *t)
{
	struct chain *ch = t->arg;
	struct load_client *lc = ch->lc;
	struct load *l = lc->l;
	if (ch->in_flight) {
		/* The callback that scheduled us runs before its job is fully torn down, and maybe
		 * inside the previous step's submit (a job run inline): wait for both to end.
		 * acquire: pairs with the release store at the end of the previous step. */
		struct sb_job *prev = atomic_load_explicit(&ch->prev, memory_order_acquire);
		if (!prev || !sb_job_done(prev))
			return SB_YIELD;
		atomic_store_explicit(&ch->prev, NULL, memory_order_relaxed); /* ours alone now */
		ch->in_flight = false;
		sb_job_put(prev);
	}
	if (wl_stopping(&l->cs) || sb_rt_cancelled(l->cs.env->rt))
		ch->rows_left = 0; /* the run is over: finish this block's transaction, start no other */
	if (ch->txn && !ch->rows_left) {
		sb_txn_end(ch->txn);
		ch->txn = NULL;
	}
	if (!ch->txn) {
		uint64_t total = (uint64_t)(l->p.files * l->p.blocks);
		/* relaxed: hands out block numbers; nothing else is ordered by it */
		uint64_t b = atomic_fetch_add_explicit(&lc->next_block, 1, memory_order_relaxed);
		if (b >= total || wl_stopping(&l->cs) || sb_rt_cancelled(l->cs.env->rt)) {
			sb_job_release(t->job); /* this chain is finished */
			return SB_DONE;
		}
		/* which chain gets a block depends on timing; its costs must not */
		wl_rng_seed(&ch->rng, lc->seed, b + 1);
		ch->txn = sb_txn_begin(l->cs.env->rt, new_txn_id(l));
		ch->rows_left = (uint64_t)l->p.block_rows;
	}
	sb_work_ns((uint64_t)l->p.read_ns);
	struct sb_job *j = insert_job(l, ch->txn, chain_done, ch);
	ch->rows_left--;
	ch->in_flight = true;
	/* The statement's callback may run the next step anywhere, even before the submit
	 * returns: from here on the chain is the next step's, except `prev`. We keep our reference
	 * to j through the submit (it may run j inline) and hand it over only then.
	 * release: pairs with the next step's acquire load. */
	wl_submit(&l->cs, j, wl_work(&l->cs, j, wl_cost(&ch->rng, l->p.dist, (double)l->p.write_ns), SB_TF_STICKY));
	atomic_store_explicit(&ch->prev, j, memory_order_release);
	return SB_DONE;
}

static enum sb_result blocks_task(struct sb_task *t)
{
	struct load_client *lc = t->arg;
	struct load *l = lc->l;
	uint64_t total = (uint64_t)(l->p.files * l->p.blocks);
	uint64_t n = (uint64_t)l->p.concurrent_blocks < total ? (uint64_t)l->p.concurrent_blocks : total;
	/* relaxed: the chains' spawns below publish it */
	atomic_store_explicit(&lc->next_block, 0, memory_order_relaxed);
	for (uint64_t i = 0; i < n; i++) {
		struct chain *ch = &lc->chains[i];
		ch->txn = NULL;
		ch->in_flight = false;
		atomic_store_explicit(&ch->prev, NULL, memory_order_relaxed); /* the spawn publishes it */
		ch->rows_left = 0;
		sb_job_hold(t->job); /* released when the chain runs out of blocks */
		struct sb_task *s = wl_task(&l->cs, t->job, step_task, ch);
		s->flags |= SB_TF_CLEANUP; /* see chain_done */
		sb_spawn(s);
	}
	return SB_DONE;
}

/* ---- clients ---- */

static void client(struct wl_client *c)
{
	struct load *l = c->set->user;
	struct load_client *lc = &l->lc[c->idx];
	while (wl_client_more(c)) {
		bool tx = l->p.mode == M_TRANSACTIONAL;
		struct sb_txn *x = tx ? sb_txn_begin(c->set->env->rt, new_txn_id(l)) : NULL;
		struct sb_job_desc d = { .cls = C_LOAD, .work_level = SB_WL_UNDEFINED, .txn = x, .done = wl_job_done,
					 .arg = l, .force_stealing = true };
		struct sb_job *j = sb_job_create(c->set->env->rt, &d);
		lc->job = j;
		lc->txn = x;
		lc->rows_left = (uint64_t)l->p.rows;
		lc->head = lc->tail = 0;
		/* relaxed, both: the root task's submit publishes them; no statement is in flight */
		atomic_store_explicit(&lc->finished, 0, memory_order_relaxed);
		atomic_store_explicit(&lc->parked, NULL, memory_order_relaxed);
		lc->seed = wl_rng_next(&c->rng);
		wl_rng_seed(&lc->rng, lc->seed, 0);
		struct sb_task *root = wl_task(&l->cs, j, tx ? bulk_task : blocks_task, lc);
		wl_client_submit(c, j, root, lc->seed);
		bool ok = wl_wait_put(j);
		/* a load task dropped in a cancelled run leaves statements in flight: the transaction
		 * ends only after them (they are being dropped too) */
		while (ok && tx && lc->head < lc->tail)
			ok = wl_wait_put(lc->ring[lc->head++ % lc->cap]);
		if (!ok)
			break;
		if (x)
			sb_txn_end(x);
	}
}

static int load_start(const struct wl_env *env, const void *params, void **state, char *err, size_t errlen)
{
	const struct load_params *p = params;
	struct load *l = calloc(1, sizeof *l);
	struct load_client *lc = calloc((size_t)p->clients, sizeof *lc);
	if (!l || !lc)
		goto oom;
	l->p = *p;
	l->lc = lc;
	for (int64_t i = 0; i < p->clients; i++) {
		lc[i].l = l;
		lc[i].cap = (uint64_t)p->bulk_size * (p->wait == W_BLOCK ? 2 : 1);
		if (p->mode == M_TRANSACTIONAL)
			lc[i].ring = calloc((size_t)lc[i].cap, sizeof *lc[i].ring);
		else
			lc[i].chains = calloc((size_t)p->concurrent_blocks, sizeof *lc[i].chains);
		if (!lc[i].ring && !lc[i].chains)
			goto oom;
		for (int64_t k = 0; k < p->concurrent_blocks && lc[i].chains; k++)
			lc[i].chains[k].lc = &lc[i];
	}
	*state = l;
	return wl_clients_start(&l->cs, env, (unsigned)p->clients, client, l, err, errlen);
oom:
	for (int64_t i = 0; lc && i < p->clients; i++) {
		free(lc[i].ring);
		free(lc[i].chains);
	}
	free(lc);
	free(l);
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

static void load_destroy(void *st)
{
	struct load *l = st;
	wl_clients_free(&l->cs);
	for (int64_t i = 0; i < l->p.clients; i++) {
		free(l->lc[i].ring);
		free(l->lc[i].chains);
	}
	free(l->lc);
	free(l);
}

const struct sb_workload load_workload = {
	.start = load_start,
	.done = wl_state_done,
	.stop = wl_state_stop,
	.counts = wl_state_counts,
	.destroy = load_destroy,
	.name = "load",
	.description = "bulk load: one transaction with up to bulk_size INSERTs in flight, or files x blocks of small transactions (memo 000)",
	.classes = load_classes,
	.params = load_param_table,
	.params_size = sizeof(struct load_params),
};
