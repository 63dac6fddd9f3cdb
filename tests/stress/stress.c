/*
 * stress.c - a plain program (no Criterion: it forks, and ThreadSanitizer cannot follow) that
 * hammers every policy with concurrent request threads, check mode and chaos injection, for the
 * ThreadSanitizer and AddressSanitizer+LeakSanitizer builds.
 *
 * Scenarios per policy and thread count: fan-out jobs from several request threads with
 * yielding and blocked/resumed tasks; sticky tasks of shared transactions; conditional tasks;
 * a CANCEL stop with work queued; fork-join bursts with pauses long enough for workers to
 * suspend, which would sleep a minute unless the wake protocol woke them (with the sleeper's
 * membarrier and with the producers' fence). Before them, the queues of core/queue.h on their
 * own: the owner-private deque against thieves and the unbounded FIFO with producers against
 * consumers (tests/queue_stress.h). Every scenario verifies its own counts; any mismatch, check
 * violation or stall makes the exit status non-zero. The last line is "N passed, M failed".
 *
 * Usage: stress [--threads LIST] [--rounds N] [--chaos SEED] [--policy NAME]
 */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../core/config.h"
#include "../../core/sb.h"
#include "../../core/stats.h"
#include "../../policies/registry.h"
#include "../queue_stress.h"

static unsigned passed, failed;
static uint64_t total_tasks;

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "stress: FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
			return false;                                     \
		}                                                         \
	} while (0)

struct scen {
	_Atomic uint64_t ran, expect;
	_Atomic int inflight[5]; /* per transaction id */
	_Atomic unsigned overlaps;
	_Atomic int flag;
	struct sb_txn *txn[4];
	struct sb_task *parked[64];
	_Atomic unsigned nparked;
	pthread_mutex_t lock;
};

static struct scen S;

static enum sb_result leaf(struct sb_task *t)
{
	/* u[0]: yields left */
	if (t->u[0]) {
		t->u[0]--;
		return SB_YIELD;
	}
	atomic_fetch_add(&S.ran, 1);
	return SB_DONE;
}

static enum sb_result sticky(struct sb_task *t)
{
	_Atomic int *in = &S.inflight[sb_txn_id(t->txn)];
	if (atomic_fetch_add(in, 1) != 0)
		atomic_fetch_add(&S.overlaps, 1);
	sb_work_ns(500);
	atomic_fetch_sub(in, 1);
	atomic_fetch_add(&S.ran, 1);
	return SB_DONE;
}

static enum sb_result parked(struct sb_task *t)
{
	/* first run: park and let the root's sibling resume it; second run: done */
	if (!t->u[1]) {
		t->u[1] = 1;
		pthread_mutex_lock(&S.lock);
		unsigned k = atomic_load(&S.nparked);
		if (k < 64) {
			S.parked[k] = t;
			atomic_store(&S.nparked, k + 1);
			pthread_mutex_unlock(&S.lock);
			return SB_BLOCKED;
		}
		pthread_mutex_unlock(&S.lock);
	}
	atomic_fetch_add(&S.ran, 1);
	return SB_DONE;
}

/* Resumes one parked task; yields (goes round the scheduler again) until there is one. */
static enum sb_result resumer(struct sb_task *t)
{
	(void)t;
	pthread_mutex_lock(&S.lock);
	unsigned k = atomic_load(&S.nparked);
	struct sb_task *p = k ? S.parked[k - 1] : NULL;
	if (k)
		atomic_store(&S.nparked, k - 1);
	pthread_mutex_unlock(&S.lock);
	if (!p)
		return SB_YIELD;
	sb_task_resume(p);
	atomic_fetch_add(&S.ran, 1);
	return SB_DONE;
}

static bool cond_ready(struct sb_task *t)
{
	(void)t;
	return atomic_load(&S.flag) != 0;
}

static enum sb_result root(struct sb_task *t)
{
	unsigned kind = (unsigned)t->u[0];
	unsigned n = 20 + (unsigned)(t->u[1] % 40);
	for (unsigned i = 0; i < n; i++) {
		struct sb_task *c = sb_task_new(t->job, leaf, NULL);
		c->u[0] = i % 7 == 0 ? 2 : 0;
		if (i % 5 == 0 && t->job->txn) {
			c->fn = sticky;
			c->flags |= SB_TF_STICKY;
		}
		if (i % 11 == 0) {
			c->flags |= SB_TF_COND;
			c->check = cond_ready;
		}
		sb_spawn(c);
	}
	if (kind == 1) {
		struct sb_task *p = sb_task_new(t->job, parked, NULL);
		sb_spawn(p);
	}
	atomic_fetch_add(&S.ran, 1);
	return SB_DONE;
}

struct client {
	struct sb_rt *rt;
	unsigned id, jobs;
	uint64_t expect;
	unsigned failed;
};

static void *client_main(void *p)
{
	struct client *c = p;
	sb_thread_attach(c->rt);
	struct sb_job *js[64];
	for (unsigned k = 0; k < c->jobs; k++) {
		/* a job with a parked task must not run inline (hybrid serial): its resumer comes
		 * from this same thread afterwards */
		struct sb_job_desc d = { .work_level = (int)(k % 7) * 10, .txn = S.txn[(c->id + k) % 4],
					 .teardown = (enum sb_teardown)(k % 3), .force_stealing = k % 4 == 1 };
		js[k] = sb_job_create(c->rt, &d);
		struct sb_task *r = sb_task_new(js[k], root, NULL);
		r->u[0] = k % 4 == 1 ? 1 : 0;
		r->u[1] = c->id * 131 + k * 17;
		unsigned n = 20 + (unsigned)(r->u[1] % 40);
		c->expect += 1 + n + (r->u[0] == 1);
		sb_job_submit(js[k], r);
		if (k % 4 == 1) {
			/* a resumer job, for the parked task */
			struct sb_job_desc rd = { .work_level = SB_WL_INFINITY };
			struct sb_job *rj = sb_job_create(c->rt, &rd);
			sb_job_submit(rj, sb_task_new(rj, resumer, NULL));
			c->expect += 1;
			c->failed += !sb_job_wait(rj);
			sb_job_put(rj);
		}
	}
	for (unsigned k = 0; k < c->jobs; k++) {
		c->failed += !sb_job_wait(js[k]);
		sb_job_put(js[k]);
	}
	sb_thread_detach();
	return NULL;
}

static void *flag_setter(void *p)
{
	(void)p;
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
	atomic_store(&S.flag, 1);
	return NULL;
}

static void stress_config(struct sb_config *cfg, int threads, uint64_t chaos)
{
	sb_config_default(cfg);
	cfg->thread_count = threads;
	cfg->check = true;
	cfg->chaos = (int64_t)chaos;
	cfg->stall_limit = 10000;
	cfg->worker_try_count = 50;
}

static struct sb_rt *make_rt(const char *policy, int threads, uint64_t chaos, char *err, size_t errlen)
{
	struct sb_config cfg;
	stress_config(&cfg, threads, chaos);
	struct sb_rt *rt;
	sb_rt_create(&rt, &cfg, sb_policy_find(policy), NULL, err, errlen);
	return rt;
}

static uint64_t tasks_run(struct sb_rt *rt)
{
	uint64_t c[SB_NR_COUNTERS], n = 0;
	for (unsigned w = 0; w < sb_rt_nworkers(rt); w++) {
		sb_rt_worker_counters(rt, w, c);
		n += c[SB_C_RUN] + c[SB_C_DROPPED];
	}
	sb_rt_other_counters(rt, c);
	return n + c[SB_C_RUN] + c[SB_C_DROPPED];
}

/* Jobs from several request threads; every count must come out exact. */
static bool scenario_mixed(const char *policy, int threads, uint64_t chaos)
{
	char err[512] = "";
	memset(&S, 0, sizeof S);
	pthread_mutex_init(&S.lock, NULL);
	struct sb_rt *rt = make_rt(policy, threads, chaos, err, sizeof err);
	CHECK(rt, "%s: %s", policy, err);
	sb_thread_attach(rt);
	for (int i = 0; i < 4; i++)
		S.txn[i] = sb_txn_begin(rt, (uint64_t)i + 1);
	sb_thread_detach();
	enum { NC = 3 };
	struct client cl[NC];
	pthread_t th[NC], fs;
	pthread_create(&fs, NULL, flag_setter, NULL);
	for (unsigned i = 0; i < NC; i++) {
		cl[i] = (struct client){ .rt = rt, .id = i, .jobs = 24 };
		pthread_create(&th[i], NULL, client_main, &cl[i]);
	}
	uint64_t expect = 0;
	unsigned bad = 0;
	for (unsigned i = 0; i < NC; i++) {
		pthread_join(th[i], NULL);
		expect += cl[i].expect;
		bad += cl[i].failed;
	}
	pthread_join(fs, NULL);
	sb_thread_attach(rt);
	for (int i = 0; i < 4; i++)
		sb_txn_end(S.txn[i]);
	sb_thread_detach();
	sb_rt_stop(rt, SB_STOP_DRAIN);
	const char *f = sb_rt_failure(rt);
	uint64_t ran = atomic_load(&S.ran), core = tasks_run(rt);
	total_tasks += core;
	bool ok = !f && !bad && ran == expect && !atomic_load(&S.overlaps);
	if (!ok)
		fprintf(stderr, "stress: FAIL mixed %s threads=%d chaos=%llu: failure=%s waits_failed=%u ran=%llu expect=%llu overlaps=%u\n",
			policy, threads, (unsigned long long)chaos, f ? f : "none", bad, (unsigned long long)ran,
			(unsigned long long)expect, atomic_load(&S.overlaps));
	sb_rt_destroy(rt);
	pthread_mutex_destroy(&S.lock);
	return ok;
}

/* A CANCEL stop while jobs are queued and running: everything finishes, nothing leaks. */
static bool scenario_cancel(const char *policy, int threads, uint64_t chaos)
{
	char err[512] = "";
	memset(&S, 0, sizeof S);
	pthread_mutex_init(&S.lock, NULL);
	atomic_store(&S.flag, 1);
	struct sb_rt *rt = make_rt(policy, threads, chaos, err, sizeof err);
	CHECK(rt, "%s: %s", policy, err);
	sb_thread_attach(rt);
	struct sb_job *js[100];
	for (unsigned k = 0; k < 100; k++) {
		struct sb_job_desc d = { .work_level = SB_WL_INFINITY };
		js[k] = sb_job_create(rt, &d);
		struct sb_task *r = sb_task_new(js[k], root, NULL);
		r->u[1] = k;
		sb_job_submit(js[k], r);
	}
	sb_rt_stop(rt, SB_STOP_CANCEL);
	unsigned done = 0;
	for (unsigned k = 0; k < 100; k++) {
		done += sb_job_done(js[k]);
		sb_job_put(js[k]);
	}
	const char *f = sb_rt_failure(rt);
	total_tasks += tasks_run(rt);
	bool ok = !f && done == 100;
	if (!ok)
		fprintf(stderr, "stress: FAIL cancel %s threads=%d: failure=%s done=%u/100\n", policy, threads, f ? f : "none", done);
	sb_thread_detach();
	sb_rt_destroy(rt);
	pthread_mutex_destroy(&S.lock);
	return ok;
}

/* A fork-join node: u[0] levels below it, u[1] yields before it ends. */
static enum sb_result fj_node(struct sb_task *t)
{
	if (t->u[0]) {
		for (int k = 0; k < 2; k++) {
			struct sb_task *c = sb_task_new(t->job, fj_node, NULL);
			c->u[0] = t->u[0] - 1;
			c->u[1] = c->u[0] == 0;
			sb_spawn(c);
		}
		t->u[0] = 0;
	}
	if (t->u[1]) {
		t->u[1]--;
		return SB_YIELD;
	}
	atomic_fetch_add(&S.ran, 1);
	return SB_DONE;
}

struct fj_client {
	struct sb_rt *rt;
	unsigned id, failed;
};

static void *fj_client_main(void *p)
{
	struct fj_client *c = p;
	sb_thread_attach(c->rt);
	for (unsigned k = 0; k < 16; k++) {
		struct sb_job_desc d = { .work_level = SB_WL_JOIN };
		struct sb_job *j = sb_job_create(c->rt, &d);
		struct sb_task *r = sb_task_new(j, fj_node, NULL);
		r->u[0] = 6;
		sb_job_submit(j, r);
		c->failed += !sb_job_wait(j);
		sb_job_put(j);
		/* a pause of 0..1 ms: long enough, often, for idle workers to suspend */
		struct timespec ts = { 0, (long)((k * 7 + c->id * 3) % 11) * 100000 };
		nanosleep(&ts, NULL);
	}
	sb_thread_detach();
	return NULL;
}

/* Bursts of fork-join work after pauses: every task runs although workers suspend between
 * bursts and would not wake on their own for a minute (a lost wake-up is a stall). */
static bool scenario_sleepers(const char *policy, int threads, uint64_t chaos, bool fence)
{
	char err[512] = "";
	memset(&S, 0, sizeof S);
	struct sb_config cfg;
	stress_config(&cfg, threads, chaos);
	cfg.worker_try_count = 5;
	cfg.worker_suspend_timeout = 60000000;
	cfg.wake_fence = fence;
	struct sb_rt *rt;
	int rc = sb_rt_create(&rt, &cfg, sb_policy_find(policy), NULL, err, sizeof err);
	CHECK(rt && rc == 0, "%s: %s", policy, err);
	enum { NC = 2 };
	struct fj_client cl[NC];
	pthread_t th[NC];
	for (unsigned i = 0; i < NC; i++) {
		cl[i] = (struct fj_client){ .rt = rt, .id = i };
		pthread_create(&th[i], NULL, fj_client_main, &cl[i]);
	}
	unsigned bad = 0;
	for (unsigned i = 0; i < NC; i++) {
		pthread_join(th[i], NULL);
		bad += cl[i].failed;
	}
	sb_rt_stop(rt, SB_STOP_DRAIN);
	const char *f = sb_rt_failure(rt);
	uint64_t ran = atomic_load(&S.ran), expect = NC * 16 * 127;
	total_tasks += tasks_run(rt);
	bool ok = !f && !bad && ran == expect;
	if (!ok)
		fprintf(stderr, "stress: FAIL sleepers %s threads=%d chaos=%llu wake_fence=%d: failure=%s waits_failed=%u ran=%llu expect=%llu\n",
			policy, threads, (unsigned long long)chaos, fence, f ? f : "none", bad, (unsigned long long)ran,
			(unsigned long long)expect);
	sb_rt_destroy(rt);
	return ok;
}

static void record(bool ok)
{
	if (ok)
		passed++;
	else
		failed++;
}

int main(int argc, char **argv)
{
	const char *threads = "1,2,4,8";
	const char *only = NULL;
	int rounds = 1;
	uint64_t chaos = 1;
	static const struct option opts[] = {
		{ "threads", required_argument, 0, 't' }, { "rounds", required_argument, 0, 'r' },
		{ "chaos", required_argument, 0, 'c' },   { "policy", required_argument, 0, 'p' },
		{ "help", no_argument, 0, 'h' },          { 0, 0, 0, 0 },
	};
	int o;
	while ((o = getopt_long(argc, argv, "t:r:c:p:h", opts, NULL)) != -1) {
		switch (o) {
		case 't': threads = optarg; break;
		case 'r': rounds = atoi(optarg); break;
		case 'c': chaos = strtoull(optarg, NULL, 10); break;
		case 'p': only = optarg; break;
		default:
			printf("usage: stress [--threads 1,2,4,8] [--rounds N] [--chaos SEED] [--policy NAME]\n");
			return o == 'h' ? 0 : 2;
		}
	}
	for (int r = 0; r < rounds; r++) {
		uint64_t stolen = 0;
		const char *err = qs_deque(200000, 2, &stolen);
		if (err)
			fprintf(stderr, "stress: FAIL sb_deque, owner against 2 thieves: %s\n", err);
		record(!err);
		urcu_memb_register_thread();
		err = qs_fifo(200000, 2, 2);
		urcu_memb_unregister_thread();
		if (err)
			fprintf(stderr, "stress: FAIL sb_fifo, 2 producers against 2 consumers: %s\n", err);
		record(!err);
		fprintf(stderr, "stress: queues      deque stolen=%llu, fifo done\n", (unsigned long long)stolen);
		char list[128];
		snprintf(list, sizeof list, "%s", threads);
		for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
			int n = atoi(tok);
			for (const struct sb_policy_ops *const *p = sb_policies; *p; p++) {
				if (only && strcmp(only, (*p)->name))
					continue;
				uint64_t seed = chaos ? chaos + (uint64_t)r * 1000 + (uint64_t)n : 0;
				uint64_t t0 = sb_now_ns();
				record(scenario_mixed((*p)->name, n, seed));
				record(scenario_cancel((*p)->name, n, seed));
				record(scenario_sleepers((*p)->name, n, seed, ((p - sb_policies) + r) & 1)); /* alternate the barriers */
				fprintf(stderr, "stress: %-12s threads=%d chaos=%llu  %.2f s\n", (*p)->name, n,
					(unsigned long long)seed, (double)(sb_now_ns() - t0) / 1e9);
			}
		}
	}
	printf("stress: %llu tasks executed or dropped under check mode\n", (unsigned long long)total_tasks);
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
