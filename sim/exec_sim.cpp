/*
 * exec_sim.cpp - the virtual-time executor: core/exec.h's primitives on SimGrid (S4U).
 *
 * Every thread the core or a workload starts is an actor; actors run one at a time on the
 * one OS thread, each until it blocks or spends simulated time, so a run is deterministic: the
 * same seed gives the same interleaving and the same result files. The simulated clock counts
 * nanoseconds (one simulated "second" of SimGrid is one ns here: whole-ns arithmetic stays
 * exact in a double up to about 100 simulated days).
 *
 * The platform is one host with as many cores as actors, so every actor has a core of its own
 * (work is a delay of its length, as on an idle machine), unless the run names the machine's
 * cores (sb_sim_run's cores, --sim-cores): then work is an execution on a host of that many
 * cores, which SimGrid shares among the actors executing at once, so that more busy threads than
 * cores (clients beside workers, spinning workers beside the clients that feed them) slow each
 * other down as on a real machine. With the cost table's `slice` the shared cores are handed out
 * as an OS scheduler does instead (see take_core): a thread keeps its core for a slice while
 * others wait, and one woken from a park or a sleep takes a core at once, putting its holder back
 * in line. Parked and sleeping actors take no core either way. Sockets
 * come from the runtime's hwloc topology (sb_exec_topology) and only price cache-line transfers.
 *
 * What the simulation cannot show by itself, it charges (sb_exec_charge, from the cost file):
 * policy calls, the core's per-task overhead, wake-ups and parks, spin iterations and yields
 * (so a spin-wait moves the clock and lets the awaited actor run), and contention: an
 * operation on a queue's line (a worker's, the shared one, a job's) serialises behind the
 * previous one on that line and pays a transfer when its last user was another core. Memory-order bugs cannot show at all: every
 * access is sequentially consistent here (native runs and the sanitizers remain the truth).
 *
 * The traps: parking is a per-actor semaphore in a per-address wait queue (futex semantics,
 * with timeouts), never a condition variable (sg_cond_wait_for takes its mutex itself);
 * per-thread state (struct sb_tls: sb_self, a workload's slot) is kept in the actor's data,
 * since _Thread_local is shared by every actor of the OS thread: an actor loses the OS thread
 * only inside a SimGrid call, and each one here is wrapped in switch_out/switch_in, which save
 * the thread's sb_tls into the actor and put it back (so the native fast path, a plain
 * _Thread_local, stays as it is); urcu is registered once for that OS thread.
 */
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u.hpp>
#include <simgrid/version.h>
#include <urcu/urcu-memb.h>

#include "../core/exec.h"
#include "cache.h"

namespace sg4 = simgrid::s4u;

namespace {

/* How far an actor's owed costs may run ahead of the clock before it pays them (see charge):
 * a few queue operations' worth, small beside any task or wait it would otherwise pay with. */
constexpr double SB_SIM_AHEAD_NS = 1000;

enum { K_OTHER, K_WORKER, K_CLIENT, NR_KINDS };

struct actor_state {
	struct sb_tls tls = {};
	sg4::SemaphorePtr sem = sg4::Semaphore::create(0); /* parking */
	sg4::ActorPtr actor;
	double debt = 0; /* charged but not yet slept (see spend) */
	double up_since = 0;   /* when it last came back from a park or a sleep: how long it has run */
	bool by_timer = false; /* ... and whether a timer brought it back (a sleep's or a timeout's) */
	int woken_as = -1;     /* the group its unpark chose for its way back (G_PARK_BUSY or _IDLE) */
	/* how busy it has lately been (wake_stack_duty_*): the share of time it ran, a decaying
	 * average with DUTY_HALF_NS's half-life, as of duty_at (its last park or sleep) */
	double duty = 0, duty_at = 0;
	/* time slices (S.sliced): the core it holds, and how it stands in line for one */
	sg4::SemaphorePtr cpu = sg4::Semaphore::create(0); /* granted a core (see grant) */
	int core = -1;
	int last_core = -1;    /* the core it held last (S.wake_last_core: a woken thread goes back there) */
	int kind = K_OTHER;    /* a worker, a request thread or neither (the preemption counts) */
	actor_state *woken_by = nullptr; /* its last unpark's waker; null after a timer (wake_interrupt) */
	bool fresh = true;     /* back from a park or a sleep (or new) and not on a core since: it preempts */
	int pinned = -1;       /* put off its core by a wakee stacked on it: waits in S.pinq for that core */
	bool queued = false;   /* in S.runq */
	bool waiting = false;  /* blocked on cpu */
	bool in_stretch = false; /* inside busy_ns's sleep: a preemption there is paid when it ends */
	bool yield = false;    /* a sched_yield: the slice ends now if anyone waits */
	double slice_start = 0;
	double off_since = -1; /* preempted inside a stretch at this time, not given a core back yet */
	double off_total = 0;  /* ... and the time it spent so inside this stretch, owed at its end */
	double noise_left = -1; /* CPU time until the machine next takes its core (S.has[G_NOISE]); <0: not drawn */
};

/* Where a queued task was pushed: its pop or steal pays on that line. */
struct placement {
	int line;
	double at; /* simulated ns when its push ended: no pop or steal takes it sooner */
};

struct line_state {
	double free_at = 0;  /* simulated ns when the last operation on it ends */
	double last_at = 0;  /* ... and when it began */
	int owner = -1;      /* worker that used it last */
};

/* The optional groups of the cost table, each five consecutive costs: the 10th, 50th, 90th, 99th
 * and 99.9th percentiles of one latency (core/exec.h). */
enum { G_PARK, G_PARK_BUSY, G_PARK_IDLE, G_OVER_100US, G_OVER_1MS, G_NOISE, NR_GROUPS };
constexpr int spread_first[NR_GROUPS] = { SB_COST_PARK_P10, SB_COST_PARK_BUSY_P10, SB_COST_PARK_IDLE_P10,
					   SB_COST_OVER_100US_P10, SB_COST_OVER_1MS_P10, SB_COST_NOISE_P10 };
constexpr int SPREAD = 5;
/* costs a table may leave out, each on its own (the percentile groups above go by five) */
constexpr int OPTIONAL[] = { SB_COST_SLICE,    SB_COST_JOB,          SB_COST_JOB_CREATE,    SB_COST_JOB_END,
			     SB_COST_PARK_CPU, SB_COST_COMPUTE_ITER, SB_COST_MEMORY_DOUBLE, SB_COST_LINE_QUEUE,
			     SB_COST_WAKE_LAST_CORE, SB_COST_WAKE_INTERRUPT };
constexpr double WAKE_STACK_US[SB_NR_WAKE_STACK] = SB_WAKE_STACK_US;
constexpr double WAKE_DUTY[SB_NR_WAKE_DUTY] = SB_WAKE_DUTY_PC;
constexpr double WAKE_PREEMPT[SB_NR_WAKE_PREEMPT] = SB_WAKE_PREEMPT_PC;
/* The kernel's load tracking (PELT) halves a thread's past every 32 ms; its wake-up placement reads
 * that average, and the wake_stack_duty_* runs settle in it (sim/calibrate.c). */
constexpr double DUTY_HALF_NS = 32e6;

struct sim_state {
	double cost[SB_NR_COSTS] = {};
	/* "NAME@POLICY" lines of the cost file, applied by topology() once the policy is known */
	std::unordered_map<std::string, std::vector<std::pair<int, double>>> policy_cost;
	std::string version = "unknown";
	std::string platform;
	std::unordered_map<const void *, std::deque<actor_state *>> waiters;
	std::vector<line_state> lines;
	sb_sim_line shared = {};   /* the shared line's account (sb_sim_shared_line) */
	double shared_first = -1; /* when its first operation began */
	/* the line each queued task was pushed on (see charge): its pop or steal pays there */
	addr_map<placement> placed;
	task_cache cache; /* how far back each task's memory lies (see touch) */
	std::vector<double> cold_by_level; /* what loading a task costs at each of cache's levels */
	bool cold_curve = false; /* the table gives cold_9 .. cold_22 (else cold beyond cold_after) */
	bool stack_given = false; /* the table gives wake_stack_0us .. wake_stack_5000us */
	bool duty_given = false;  /* ... and wake_stack_duty_5 .. wake_stack_duty_60 */
	bool preempt_given = false; /* the table gives wake_preempt_0 .. wake_preempt_100 (see may_preempt) */
	std::vector<unsigned> socket;
	sg4::Host *host = nullptr;
	unsigned cores = 0; /* 0: a core per actor (work is a delay); else work shares this many */
	bool given[SB_NR_COSTS] = {}; /* which of the OPTIONAL costs (and cold, cold_after) the table gives */
	bool sliced = false; /* shared cores in time slices (the table's `slice`), not SimGrid's sharing */
	std::vector<actor_state *> holder; /* sliced: each core's holder */
	std::deque<actor_state *> runq;    /* sliced: the actors waiting for a core, the next first */
	std::vector<std::deque<actor_state *>> pinq; /* sliced: per core, those waiting for that one only */
	bool stacking = false; /* sliced, and the table gives wake_stack_* (see stack_on_waker) */
	bool wake_last_core = false; /* sliced, and the table's wake_last_core is 1 (see take_core) */
	uint64_t preempted[NR_KINDS] = {}; /* sliced: times a runnable actor of each kind lost its core */
	double busy = 0; /* simulated CPU time: every ns spent, none slept or parked */
	bool has[NR_GROUPS] = {}; /* which optional percentile groups (spread_first) the table gives */
	uint64_t rng = 0x9e3779b97f4a7c15ull; /* the draws from them: a fixed start, so a seed replays */
};

sim_state S;
/* The actor running now: set by switch_in, which every actor passes through when it starts and
 * after every SimGrid call that may have run others (asking SimGrid took a TLS lookup and three
 * calls per charge). */
actor_state *cur;

actor_state *me()
{
	return cur;
}

/* Around every SimGrid call that may run other actors (see the file comment). */
actor_state *switch_out()
{
	actor_state *a = me();
	a->tls = sb_tls_native;
	return a;
}

void switch_in(actor_state *a)
{
	cur = a;
	sb_tls_native = a->tls;
}

void sleep_ns(double ns)
{
	actor_state *a = switch_out();
	sg4::this_actor::sleep_for(ns);
	switch_in(a);
}

void drop_waiter(std::deque<actor_state *> &q, actor_state *a)
{
	for (auto it = q.begin(); it != q.end(); ++it)
		if (*it == a) {
			q.erase(it);
			return;
		}
}

/* ---- shared cores in time slices (S.sliced) ----
 * Measured on a 2-core AMD EPYC KVM guest under Linux 6.18 (sim/calibrate.c for the slice): two
 * spinning threads on one CPU take turns of 4 ms, while a thread woken from a park runs within
 * 7 us though every CPU spins, or two spinners take turns on its own (4 us on an idle machine). So a runnable thread keeps its core for a slice while others wait, and a woken
 * one takes a core at once: its holder goes back to the head of the line. A holder preempted in
 * the middle of a stretch of work (busy_ns's one sleep) is not interrupted; the stretch ends as
 * planned and the time it was off its core is added to the work then (its end comes as late as
 * if it had stopped; nothing else about it is observable meanwhile). Measured there too
 * (results/paper/wake-placement/, sim/calibrate.c's wake_stack): a thread woken by one just back
 * from a park often runs on its waker's CPU ahead of it though the other CPU is idle, and the
 * waker waits for its own CPU (nothing pulls it to the idle one); so with the table's wake_stack_*
 * such a wakee takes its waker's core in the measured share, the waker waiting in that core's pinq. */

/* Core c to h: h stops waiting (or, preempted inside a stretch, stops being off its core). */
void grant(int c, actor_state *h)
{
	double t = sg4::Engine::get_clock();
	S.holder[(size_t)c] = h;
	h->core = c;
	h->slice_start = t;
	h->fresh = false;
	h->queued = false;
	h->pinned = -1;
	if (h->off_since >= 0) {
		h->off_total += t - h->off_since;
		h->off_since = -1;
	}
	if (h->waiting) {
		h->waiting = false;
		actor_state *self = switch_out();
		h->cpu->release();
		switch_in(self);
	}
}

/* Free core c to the next in line: one waiting for c alone first. */
void hand_on(int c)
{
	auto &pin = S.pinq[(size_t)c];
	auto &q = pin.empty() ? S.runq : pin;
	if (q.empty())
		return;
	actor_state *h = q.front();
	q.pop_front();
	grant(c, h);
}

/* Off the CPU (a park, a sleep, a join, the end): its core to the next in line, its place in line
 * given up. Back, it is fresh. */
void leave_core(actor_state *a)
{
	if (!S.sliced)
		return;
	if (a->queued) {
		drop_waiter(S.runq, a);
		a->queued = false;
	}
	if (a->pinned >= 0) {
		drop_waiter(S.pinq[(size_t)a->pinned], a);
		a->pinned = -1;
	}
	int c = a->core;
	a->core = -1;
	a->fresh = true;
	if (c < 0)
		return;
	a->last_core = c;
	S.holder[(size_t)c] = nullptr;
	hand_on(c);
}

void wait_core(actor_state *a)
{
	if (a->pinned < 0 && !a->queued) {
		S.runq.push_back(a);
		a->queued = true;
	}
	a->waiting = true;
	switch_out();
	a->cpu->acquire();
	switch_in(a);
}

double duty_now(const actor_state *a);
double duty_running(const actor_state *a, double *at);
static double uniform();

/* With the table's wake_preempt_*: whether wakee a preempts holder h (else it waits for h's core),
 * in the share the table gives for a's duty as a percentage of h's: the kernel preempts a holder
 * that has lately had more CPU than the wakee. h's duty counts the run it is in (it may not have
 * parked for long: a spinning worker), a's is as of its park. */
bool may_preempt(const actor_state *h, const actor_state *a)
{
	double now, held = duty_running(h, &now);
	double r = held > 0 ? 100 * duty_now(a) / held : 100; /* the wakee's duty, percent of the holder's */
	const double *at = &S.cost[SB_COST_WAKE_PREEMPT_0];
	double share = 0; /* beyond the last: a wakee busier than the holder waits */
	for (int j = 1; j < SB_NR_WAKE_PREEMPT; j++)
		if (r <= WAKE_PREEMPT[j]) {
			double f = std::max(0.0, r - WAKE_PREEMPT[j - 1]) / (WAKE_PREEMPT[j] - WAKE_PREEMPT[j - 1]);
			share = at[j - 1] + (at[j] - at[j - 1]) * f;
			break;
		}
	return uniform() < share;
}

/* A core for a: the one it waits for if pinned, else a free one, else a woken thread's preemption
 * of the holder whose slice began first (or of its last core's holder, S.wake_last_core, which it
 * may instead wait for: may_preempt), else a place at the end of the line. */
void take_core(actor_state *a)
{
	double t = sg4::Engine::get_clock();
	if (a->pinned >= 0) {
		if (!S.holder[(size_t)a->pinned])
			grant(a->pinned, a); /* not expected: a freed core goes to its pinned first */
		else
			wait_core(a);
		return;
	}
	int oldest = -1;
	for (size_t c = 0; c < S.holder.size(); c++) {
		if (!S.holder[c]) {
			if (a->queued) {
				drop_waiter(S.runq, a);
				a->queued = false;
			}
			S.holder[c] = a;
			a->core = (int)c;
			a->slice_start = t;
			a->fresh = false;
			return;
		}
		if (oldest < 0 || S.holder[c]->slice_start < S.holder[(size_t)oldest]->slice_start)
			oldest = (int)c;
	}
	/* Linux's choice when no CPU is idle (select_task_rq_fair): the wakee's previous CPU, so a
	 * request thread woken beside a busy worker takes its own core back, not the worker's */
	if (S.wake_last_core && a->fresh && a->last_core >= 0)
		oldest = a->last_core;
	if (a->fresh && oldest >= 0 && S.wake_last_core && S.preempt_given && !may_preempt(S.holder[(size_t)oldest], a)) {
		a->pinned = oldest; /* the kernel queues it on that CPU; a hot thread is not pulled away */
		S.pinq[(size_t)oldest].push_back(a);
		wait_core(a);
		return;
	}
	if (a->fresh && oldest >= 0) {
		actor_state *v = S.holder[(size_t)oldest];
		S.preempted[v->kind]++;
		v->last_core = oldest;
		v->core = -1;
		if (v->in_stretch)
			v->off_since = t;
		S.runq.push_front(v);
		v->queued = true;
		S.holder[(size_t)oldest] = a;
		a->core = oldest;
		a->slice_start = t;
		a->fresh = false;
		/* its waker in its wake call lets it run as the call returns; any other holder is
		 * interrupted, and that costs the core what wake_interrupt says */
		if (v != a->woken_by)
			a->debt += S.cost[SB_COST_WAKE_INTERRUPT];
		return;
	}
	wait_core(a);
}

void sliced_busy(actor_state *a, double ns)
{
	const double slice = S.cost[SB_COST_SLICE];
	while (ns > 0) {
		if (a->core < 0)
			take_core(a);
		double t = sg4::Engine::get_clock();
		if (t >= a->slice_start + slice || a->yield) {
			a->yield = false;
			int c = a->core;
			if (!S.runq.empty() || !S.pinq[(size_t)c].empty()) {
				S.preempted[a->kind]++;
				a->last_core = c;
				a->core = -1;
				S.holder[(size_t)c] = nullptr;
				hand_on(c);
				wait_core(a);
				continue;
			}
			a->slice_start = t;
		}
		double d = std::min(ns, a->slice_start + slice - t);
		a->in_stretch = true;
		sleep_ns(d);
		a->in_stretch = false;
		ns -= d;
		if (a->off_since >= 0) { /* preempted, and no core back yet */
			a->off_total += sg4::Engine::get_clock() - a->off_since;
			a->off_since = -1;
		}
		ns += a->off_total;
		a->off_total = 0;
	}
}

/* CPU time: a delay on a core of its own, or on the shared cores: an execution (the host runs one
 * flop per simulated ns per core, shared evenly) or, sliced, a turn on one of them */
void busy_ns(double ns)
{
	if (!S.cores) {
		sleep_ns(ns);
		return;
	}
	if (S.sliced) {
		sliced_busy(me(), ns);
		return;
	}
	actor_state *a = switch_out();
	sg4::this_actor::execute(ns);
	switch_in(a);
}

static double quantile(int g, double u);

/* What the machine takes from a's core while it runs d ns of CPU (noise_every, noise_p*): the
 * losses are a Poisson process over the actor's own CPU time (a thread off its CPU loses
 * nothing), each as long as a draw from the measured lengths; 0 without the group, and then no
 * draw is made, so a table without it replays as before. */
static double noise(actor_state *a, double d)
{
	if (!S.has[G_NOISE])
		return 0;
	const double every = S.cost[SB_COST_NOISE_EVERY];
	auto next = [every] { return -every * std::log(1.0 - uniform()); };
	if (a->noise_left < 0)
		a->noise_left = next();
	double lost = 0;
	while (d >= a->noise_left) {
		d -= a->noise_left;
		lost += quantile(G_NOISE, uniform());
		a->noise_left = next();
	}
	a->noise_left -= d;
	return lost;
}

/* Costs are owed, then paid with the next piece of work or wait in one sleep: a simcall per
 * task rather than one per charge, which is what lets a million tasks simulate in seconds.
 * An actor's operations then happen at the start of the stretch they pay for; spin iterations
 * and yields pay at once, so no loop can run without letting the clock move. */
void spend(actor_state *a, double ns)
{
	double d = a->debt + ns;
	a->debt = 0;
	if (d > 0) {
		/* the losses count as the thread's CPU, as they do natively: 2 workers on `patterns`
		 * use 1.98 to 1.99 of 2 cores while a spinning thread loses 1.6% to 2.5% of its time */
		d += noise(a, d);
		S.busy += d;
		busy_ns(d);
	}
}

int thread_start(struct sb_xthread *th, const char *name, void *(*fn)(void *), void *arg)
{
	auto *a = new actor_state;
	/* core/runtime.c and workloads/clients.c name their threads so */
	a->kind = !strncmp(name, "worker-", 7) ? K_WORKER : !strncmp(name, "client-", 7) ? K_CLIENT : K_OTHER;
	th->vt = a;
	/* creating is a simcall: the new actor may run before it returns, so it sets its own data */
	actor_state *self = switch_out();
	a->actor = sg4::Actor::create(name, S.host, [a, fn, arg] {
		sg4::Actor::self()->set_data(a);
		a->up_since = sg4::Engine::get_clock();
		switch_in(a);
		fn(arg);
		leave_core(a);
	});
	switch_in(self);
	return 0;
}

void thread_join(struct sb_xthread *th)
{
	auto *a = static_cast<actor_state *>(th->vt);
	leave_core(me());
	actor_state *self = switch_out();
	a->actor->join();
	switch_in(self);
	delete a;
	th->vt = nullptr;
}

/* A uniform draw in [0, 1) from the one generator (xorshift64*) with a fixed start: the same run
 * replays the same costs. */
static double uniform()
{
	uint64_t x = S.rng;
	x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
	S.rng = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

/* The value at quantile u of the distribution a group's percentiles describe: between the 10th,
 * 50th, 90th, 99th and 99.9th, the 10th below and the 99.9th above them, so that one draw in a
 * hundred pays the machine's tail and not only its median. Between two percentiles the value is
 * geometric (linear in its logarithm) for the groups added with the long parks: their tails span
 * decades (a long park's 99th percentile is 0.1 ms and its 99.9th 2.8 ms), and a straight line
 * would put most of that gap's draws in milliseconds. park_p* stays linear, as the runs made with
 * it were drawn (its tail spans 5x). */
static double quantile(int g, double u)
{
	static const double at[SPREAD] = { 0.10, 0.50, 0.90, 0.99, 0.999 };
	const double *q = &S.cost[spread_first[g]];
	if (u <= at[0])
		return q[0];
	for (int i = 1; i < SPREAD; i++)
		if (u <= at[i]) {
			double f = (u - at[i - 1]) / (at[i] - at[i - 1]);
			if (g != G_PARK && q[i - 1] > 0)
				return q[i - 1] * std::pow(q[i] / q[i - 1], f);
			return q[i - 1] + (q[i] - q[i - 1]) * f;
		}
	return q[SPREAD - 1];
}

/* The way back from a park that slept `slept` ns; `as` is what its waker was (see unpark). A short
 * park is a hand-off (park_p*, or `park` without them); a long one draws from park_idle_* when its
 * waker had just come back from a timer (a sleep's end: the machine idled) and from park_busy_*
 * otherwise. sim/calibrate.c measures both; on the 2-core host the first is 7 us at the median and
 * the second 79 us, and the workloads agree: in `wake`, the request thread back from its pause
 * wakes a worker in 19 us on average (the worker's wake_ns), and that worker, back from a park,
 * wakes the next in 86 us. */
static double park_cost(double slept, int as)
{
	if (S.has[G_PARK_BUSY] && slept >= S.cost[SB_COST_PARK_LONG_AFTER] && as >= 0)
		return quantile(as, uniform());
	if (S.has[G_PARK])
		return quantile(G_PARK, uniform());
	return S.cost[SB_COST_PARK];
}

/* How late a timed sleep of ns returns: drawn from the 100 us and the 1 ms sleeps' percentiles at
 * one quantile, interpolated between the two by log(ns) (the nearer one outside them); 0 when the
 * table has none. */
static double oversleep(double ns)
{
	if (!S.has[G_OVER_100US])
		return 0;
	double u = uniform(), x = std::log10(ns / 1e5);
	x = x < 0 ? 0 : x > 1 ? 1 : x;
	double a = quantile(G_OVER_100US, u);
	return a + (quantile(G_OVER_1MS, u) - a) * x;
}

/* a's duty now: it has not run since duty_at */
double duty_now(const actor_state *a)
{
	return a->duty * std::exp2(-(sg4::Engine::get_clock() - a->duty_at) / DUTY_HALF_NS);
}

/* a's duty with the run it is in: the run since up_since, counting what it owes (natively its
 * operations took that long), and the idle time before it; as of the returned *at */
double duty_running(const actor_state *a, double *at)
{
	double t = sg4::Engine::get_clock() + a->debt, ran = std::max(0.0, t - a->up_since);
	double d = a->duty * std::exp2(-(t - a->duty_at) / DUTY_HALF_NS) + 1 - std::exp2(-ran / DUTY_HALF_NS);
	*at = t; /* last: at may be &a->duty_at */
	return d;
}

/* a stops running (a park or a sleep): its duty takes in the run it ends */
void duty_stop(actor_state *a)
{
	if (!S.duty_given && !S.preempt_given)
		return;
	a->duty = duty_running(a, &a->duty_at);
}

void park(SB_ATOMIC_U32 *addr, uint32_t val, uint64_t timeout_ns)
{
	/* no other actor runs between this check and the enqueue: the futex's atomicity */
	actor_state *a = me();
	spend(a, 0);
	if (addr->load(std::memory_order_relaxed) != val)
		return;
	S.waiters[addr].push_back(a);
	duty_stop(a);
	/* queued first: an unpark while the core is handed on (a simcall) finds it there */
	leave_core(a);
	double parked_at = sg4::Engine::get_clock();
	bool timed_out = false;
	switch_out();
	if (timeout_ns)
		timed_out = a->sem->acquire_timeout((double)timeout_ns);
	else
		a->sem->acquire();
	switch_in(a);
	auto it = S.waiters.find(addr);
	bool queued = false;
	if (it != S.waiters.end()) {
		for (actor_state *w : it->second)
			queued |= w == a;
		drop_waiter(it->second, a);
		if (it->second.empty())
			S.waiters.erase(it);
	}
	/* timed out, but an unpark took us off the queue meanwhile: its release is ours to eat */
	bool woken = !timed_out || !queued;
	if (timed_out && !queued) {
		switch_out();
		a->sem->acquire();
		switch_in(a);
	}
	/* The way back to running: a wait before the woken actor does anything, an unpark's the
	 * wake-up, a timeout's the timer's lateness (a hand-off's park where the table has no
	 * lateness). Not a debt: its first actions would happen at the wake, and a thread woken for
	 * one finished job would see the world as it was then, not the jobs that finished while it
	 * came back (tiny's producers then paid a park per job: 114,000 jobs/s simulated on 1 worker
	 * against 230,000 to 510,000 natively), nor would a wake-up ever show in a latency. */
	double slept = sg4::Engine::get_clock() - parked_at;
	double back = woken ? park_cost(slept, a->woken_as)
		      : S.has[G_PARK_BUSY] || S.has[G_OVER_100US] ? oversleep((double)timeout_ns)
							     : park_cost(slept, -1);
	if (back > 0)
		sleep_ns(back);
	/* the park's own CPU (the futex call, the switches), paid with the actor's next work: on a
	 * shared core it takes a turn like any work (tiny's producers park about once per 5 jobs) */
	a->debt += S.cost[SB_COST_PARK_CPU];
	a->woken_as = -1;
	a->up_since = sg4::Engine::get_clock();
	a->by_timer = !woken;
	if (!woken)
		a->woken_by = nullptr;
}

/* Sliced, with the table's wake_stack_*: a waker with a core idle beside its own (the case
 * sim/calibrate.c measures) has its first wakee put on its core ahead of it in the share the table
 * gives for how long the waker has run since it came back from a park or a sleep: the wakee comes back
 * (its park's way back) on that core and the waker, put in the core's pinq, runs again only when
 * the wakee leaves it or its slice ends. Returns the wakee so stacked, or null. */
actor_state *stack_on_waker(actor_state *waker, actor_state *wakee)
{
	if (!S.stacking)
		return nullptr;
	/* how long the waker has run since it came back: its clock and what it owes (natively its
	 * operations since took that long) */
	double ran_us = (sg4::Engine::get_clock() + waker->debt - waker->up_since) / 1000;
	const double *at = &S.cost[SB_COST_WAKE_STACK_0US];
	int k = 1;
	while (k < SB_NR_WAKE_STACK - 1 && ran_us > WAKE_STACK_US[k])
		k++;
	double f = std::min(1.0, (ran_us - WAKE_STACK_US[k - 1]) / (WAKE_STACK_US[k] - WAKE_STACK_US[k - 1]));
	double share = at[k - 1] + (at[k] - at[k - 1]) * f; /* linear between two runs, the last beyond */
	/* by the wakee's duty, relative to the wake_stack_<R>us runs' wakee (about 5%): linear
	 * between the measured duties, the first below them and the last beyond */
	if (S.duty_given && share > 0) {
		const double *d = &S.cost[SB_COST_WAKE_STACK_DUTY_5];
		double u = 100 * duty_now(wakee);
		int j = 1;
		while (j < SB_NR_WAKE_DUTY - 1 && u > WAKE_DUTY[j])
			j++;
		double g = std::clamp((u - WAKE_DUTY[j - 1]) / (WAKE_DUTY[j] - WAKE_DUTY[j - 1]), 0.0, 1.0);
		double at_u = d[j - 1] + (d[j] - d[j - 1]) * g;
		share = d[0] > 0 ? share * std::min(1.0, at_u / d[0]) : share;
	}
	/* a share of 0 touches nothing: such a table replays the runs made without one */
	if (!(share > 0))
		return nullptr;
	auto free_cores = [] { return std::count(S.holder.begin(), S.holder.end(), nullptr); };
	/* still owing the costs of its way back, the waker has not taken a core yet: natively it runs */
	if (waker->core < 0 && waker->pinned < 0 && free_cores() > 0)
		take_core(waker);
	if (waker->core < 0 || free_cores() == 0 || !(uniform() < share))
		return nullptr;
	int c = waker->core;
	double t = sg4::Engine::get_clock();
	S.preempted[waker->kind]++;
	waker->last_core = c;
	waker->core = -1;
	waker->pinned = c;
	S.pinq[(size_t)c].push_back(waker);
	S.holder[(size_t)c] = wakee;
	wakee->core = c;
	wakee->slice_start = t;
	wakee->fresh = false;
	return wakee;
}

void unpark(SB_ATOMIC_U32 *addr, int n)
{
	/* take them off the queue first: a release is a simcall, and the woken may run inside it */
	std::vector<actor_state *> woken;
	auto it = S.waiters.find(addr);
	if (it != S.waiters.end()) {
		for (; n > 0 && !it->second.empty(); n--) {
			woken.push_back(it->second.front());
			it->second.pop_front();
		}
		if (it->second.empty())
			S.waiters.erase(it);
	}
	actor_state *waker = me();
	bool idle = waker->by_timer && sg4::Engine::get_clock() - waker->up_since < S.cost[SB_COST_PARK_LONG_AFTER];
	actor_state *stacked = woken.empty() ? nullptr : stack_on_waker(waker, woken.front());
	actor_state *self = woken.empty() ? nullptr : switch_out();
	for (actor_state *a : woken) {
		a->woken_as = idle ? G_PARK_IDLE : G_PARK_BUSY;
		a->woken_by = waker;
		a->sem->release();
	}
	if (self)
		switch_in(self);
	/* behind its wakee, on its own core (stack_on_waker), unless the wakee left it already */
	if (stacked && waker->core < 0)
		wait_core(waker);
	if (!woken.empty())
		me()->debt += S.cost[SB_COST_WAKE];
}

void charge(enum sb_cost c, int line, int self, const void *task)
{
	actor_state *a = me();
	double cost = c == SB_COST_JOB_END && !S.given[c] ? S.cost[SB_COST_JOB] : S.cost[c];
	double ready = 0;    /* a taken task's push ended then */
	placement *pushed = nullptr;
	if (task) {
		/* a push notes its line; a pop or steal takes the task from the line it was pushed on:
		 * the shared queue for a global policy, the victim's queue for a steal. A task run from
		 * its caller's own list (no line) is never popped through the policy: not noted. */
		if (c == SB_COST_PUSH) {
			/* A push follows its task's sb_task_new, which loaded the free list's link from
			 * where the task's last life left it (a task freed long ago comes from memory),
			 * and is charged here: a call to the executor in the core's hot paths cost a
			 * 1-worker chain 14% to 24% (core/exec.h, sb_exec_touch). A task pushed again
			 * after its own pop (a yield, a conditional task) was touched just before and
			 * costs nothing more. */
			cost += S.cold_by_level[S.cache.touch(task)];
			if (line >= 0)
				pushed = &(S.placed.put(task) = placement{ line, 0 });
			else
				S.placed.erase(task);
		} else {
			if (placement at; S.placed.take(task, &at)) {
				line = at.line;
				ready = at.at;
			}
			/* the run reads the task: one pushed long ago comes back from far down the
			 * caches (FIFO fork-join holds its whole frontier) */
			cost += S.cold_by_level[S.cache.touch(task)];
		}
	}
	/* an empty sweep looks at every other worker's queue; the cost is per victim */
	if (c == SB_COST_STEAL_EMPTY && S.socket.size() > 1)
		cost *= (double)(S.socket.size() - 1);
	if (line >= 0 && (size_t)line < S.lines.size()) {
		line_state &l = S.lines[(size_t)line];
		if (l.owner != self && l.owner >= 0 && self >= 0) {
			bool remote = (size_t)self < S.socket.size() && (size_t)l.owner < S.socket.size() &&
				      S.socket[(size_t)self] != S.socket[(size_t)l.owner];
			cost += S.cost[remote ? SB_COST_LINE_REMOTE : SB_COST_LINE];
		}
		/* An actor's operation happens once it has paid what it owes (t), so the operation
		 * charged last on a line may lie ahead of this one. This one waits for the task it takes
		 * to have been pushed, and behind the line's previous operation if that began first,
		 * but not for a later one: a pop of an old task does not wait for a push of a new one
		 * whose pusher still owes a wake-up. With line_queue every operation waits its turn. */
		double t = sg4::Engine::get_clock() + a->debt;
		double start = std::max(t, ready);
		if (S.cost[SB_COST_LINE_QUEUE] != 0 || start >= l.last_at) {
			start = std::max(start, l.free_at);
			l.last_at = start;
			l.owner = self;
		}
		l.free_at = std::max(l.free_at, start + cost);
		if ((size_t)line == S.socket.size()) {
			S.shared.ops++;
			S.shared.out_of_order += l.last_at > start;
			S.shared.busy_ns += cost;
			if (S.shared_first < 0)
				S.shared_first = start;
			S.shared.span_ns = l.free_at - S.shared_first;
		}
		if (pushed)
			pushed->at = start + cost;
		cost = start + cost - t;
	}
	/* Spin iterations and yields pay at once (a bounded poll's, SB_EXEC_OWED, does not); anything
	 * else pays with the next work or wait, or here once the actor is SB_SIM_AHEAD_NS ahead of
	 * the clock. Without that bound a loop that only calls the policy (a conditional task
	 * popped before its time and queued again, a task yielding at once) would never give the
	 * clock, and the awaited actor, a turn. */
	a->debt += cost;
	a->yield |= c == SB_COST_YIELD;
	if ((c == SB_COST_RELAX && line != SB_EXEC_OWED) || c == SB_COST_YIELD || a->debt >= SB_SIM_AHEAD_NS)
		spend(a, 0);
}

void topology(unsigned n, const unsigned *socket, const char *policy)
{
	auto pc = S.policy_cost.find(policy);
	if (pc != S.policy_cost.end())
		for (auto &kv : pc->second)
			S.cost[kv.first] = kv.second;
	/* a new run: nothing of another in the cache. Levels at 2^8 .. 2^22 tasks with the curve,
	 * else one at cold_after */
	std::vector<uint32_t> caps;
	S.cold_by_level.assign(1, 0.0);
	if (S.cold_curve) {
		for (int k = 8; k <= 22; k++)
			caps.push_back(1u << k);
		for (int c = SB_COST_COLD_9; c <= SB_COST_COLD_22; c++)
			S.cold_by_level.push_back(S.cost[c]);
		S.cold_by_level.push_back(S.cost[SB_COST_COLD_22]); /* beyond 2^22, or never touched */
	} else if (S.cost[SB_COST_COLD_AFTER] >= 1) {
		caps.push_back((uint32_t)std::min(S.cost[SB_COST_COLD_AFTER], (double)UINT32_MAX - 1));
		S.cold_by_level.push_back(S.cost[SB_COST_COLD]);
	}
	S.cache.reset(caps);
	S.socket.assign(socket, socket + n);
	/* one per worker queue, one shared, the jobs' (core/exec.h) */
	S.lines.assign((size_t)n + 1 + SB_EXEC_JOB_LINES, line_state{});
	S.shared = {};
	S.shared_first = -1;
	unsigned nsock = 0;
	for (unsigned i = 0; i < n; i++)
		nsock = socket[i] + 1 > nsock ? socket[i] + 1 : nsock;
	char buf[256];
	char cores[64] = "a core per actor";
	if (S.cores)
		snprintf(cores, sizeof cores, "%u cores shared by every actor%s", S.cores,
			 S.sliced ? " in time slices" : "");
	snprintf(buf, sizeof buf, "SimGrid %d.%d: one host, %s, %u workers on %u socket%s", SIMGRID_VERSION_MAJOR,
		 SIMGRID_VERSION_MINOR, cores, n, nsock, nsock == 1 ? "" : "s");
	S.platform = buf;
}

/* The one clock, not the caller's clock plus what it owes: a timestamp ahead by its owner's
 * debt could precede, in the files, an event another actor stamps later (negative latency). */
uint64_t now(void)
{
	return (uint64_t)std::llround(sg4::Engine::get_clock());
}

void work(uint64_t ns)
{
	spend(me(), (double)ns);
}

void sleep(uint64_t ns)
{
	actor_state *a = me();
	spend(a, 0);
	if (ns) {
		duty_stop(a);
		leave_core(a);
		sleep_ns((double)ns + oversleep((double)ns));
	}
	a->up_since = sg4::Engine::get_clock();
	a->by_timer = ns > 0;
	a->woken_by = nullptr;
}

/* A workload's own computation (sb_exec_did), as work of whole ns like busy work's: none where the
 * table does not price it (an optional cost left out), so such a run simulates as before. */
void did(enum sb_cost c, double units)
{
	double ns = std::llround(units * S.cost[c]);
	if (ns > 0)
		spend(me(), ns);
}

/* The program loaded or updated a task object outside its push, pop and run (sb_exec_touch): a
 * miss in the cache waits for memory. */
void touch(const void *task)
{
	me()->debt += S.cold_by_level[S.cache.touch(task)];
}

const struct sb_exec_ops sim_ops = {
	"sim", thread_start, thread_join, park, unpark, now, work, sleep, charge, topology, did, touch,
};

bool known(const char *const *names, const char *name)
{
	for (; *names; names++)
		if (!strcmp(*names, name))
			return true;
	return false;
}

/* The cost file: "# comment", "version V", one "name ns" line per cost (sb_cost_names), and
 * optional "name@policy ns" lines that replace one cost for one policy. */
int load_costs(const char *path, const char *const *policies, const char *policy, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read the cost file %s: %s", path, strerror(errno));
		return -EINVAL;
	}
	bool seen[SB_NR_COSTS] = {};
	/* a line of any length (calibrate.py's comments run long): a fixed buffer read the rest of a
	 * long comment as a line of its own and refused the table */
	char *line = nullptr;
	size_t cap = 0;
	int lineno = 0, rc = 0;
	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		lineno++;
		char key[64], val[128];
		if (line[0] == '#' || sscanf(line, "%63s %127s", key, val) != 2)
			continue;
		if (!strcmp(key, "version")) {
			S.version = val;
			continue;
		}
		char *at = strchr(key, '@');
		if (at)
			*at = 0;
		int k = -1;
		for (int c = 0; c < SB_NR_COSTS; c++)
			if (!strcmp(key, sb_cost_names[c]))
				k = c;
		char *end;
		double v = strtod(val, &end);
		if (k < 0 || *end || !(v >= 0) || (at && !at[1])) {
			snprintf(err, errlen, "%s:%d: expected 'NAME NS' or 'NAME@POLICY NS' with NAME one of the costs "
				 "(push, pop, ...) and NS >= 0", path, lineno);
			rc = -EINVAL;
			break;
		}
		/* a spin iteration or a yield that takes no time would never let the clock move */
		if ((k == SB_COST_RELAX || k == SB_COST_YIELD) && v <= 0) {
			snprintf(err, errlen, "%s:%d: relax and yield must cost more than 0 ns", path, lineno);
			rc = -EINVAL;
			break;
		}
		if (at && !known(policies, at + 1)) {
			std::string names;
			for (const char *const *p = policies; *p; p++)
				names += (names.empty() ? "" : ", ") + std::string(*p);
			snprintf(err, errlen, "%s:%d: unknown policy '%s' after '@'; valid policies are: %s", path, lineno,
				 at + 1, names.c_str());
			rc = -EINVAL;
			break;
		}
		if (at) {
			S.policy_cost[at + 1].emplace_back(k, v);
			continue;
		}
		S.cost[k] = v;
		seen[k] = true;
	}
	free(line);
	fclose(f);
	/* The percentile groups are optional (older tables have none), each all five or none, and a
	 * long park's two groups come with park_long_after, the over-sleeps' two with each other. */
	for (int g = 0; g < NR_GROUPS; g++) {
		int n = 0;
		for (int i = 0; i < SPREAD; i++)
			n += seen[spread_first[g] + i];
		S.has[g] = n > 0;
		if (rc == 0 && n && n < SPREAD) {
			snprintf(err, errlen, "%s: %s .. %s go together: give all five percentiles or none", path,
				 sb_cost_names[spread_first[g]], sb_cost_names[spread_first[g] + SPREAD - 1]);
			rc = -EINVAL;
		}
		for (int i = 1; rc == 0 && S.has[g] && i < SPREAD; i++)
			if (S.cost[spread_first[g] + i] < S.cost[spread_first[g] + i - 1]) {
				snprintf(err, errlen, "%s: %s is below %s: percentiles cannot fall", path,
					 sb_cost_names[spread_first[g] + i], sb_cost_names[spread_first[g] + i - 1]);
				rc = -EINVAL;
			}
		for (int i = 0; i < SPREAD; i++)
			seen[spread_first[g] + i] = true;
	}
	/* optional, each alone: a table without them simulates as before it had them. Without
	 * job_end a job ending on another thread than its creator costs `job` there, as every job
	 * did before the two were measured apart. */
	for (int c : OPTIONAL) {
		S.given[c] = seen[c];
		seen[c] = true;
	}
	for (int c : { SB_COST_LINE_QUEUE, SB_COST_WAKE_LAST_CORE })
		if (rc == 0 && S.cost[c] != 0 && S.cost[c] != 1) {
			snprintf(err, errlen, "%s: %s is a switch: 0 or 1", path, sb_cost_names[c]);
			rc = -EINVAL;
		}
	if (rc == 0 && S.given[SB_COST_SLICE] && !(S.cost[SB_COST_SLICE] > 0)) {
		snprintf(err, errlen, "%s: slice must be more than 0 ns", path);
		rc = -EINVAL;
	}
	/* a group of shares (first .. last): how many the table gives, each 0 to 1 */
	auto shares = [&](int first, int last) {
		int n = 0;
		for (int c = first; c <= last; c++) {
			n += seen[c];
			if (rc == 0 && seen[c] && S.cost[c] > 1) {
				snprintf(err, errlen, "%s: %s is a share: 0 to 1", path, sb_cost_names[c]);
				rc = -EINVAL;
			}
			seen[c] = true;
		}
		return n;
	};
	/* the stacking shares: all thirteen or none, and only where cores are sliced; by the wakee's
	 * duty: all five or none, and only with the thirteen */
	int nstack = shares(SB_COST_WAKE_STACK_0US, SB_COST_WAKE_STACK_5000US);
	int nduty = shares(SB_COST_WAKE_STACK_DUTY_5, SB_COST_WAKE_STACK_DUTY_60);
	int npreempt = shares(SB_COST_WAKE_PREEMPT_0, SB_COST_WAKE_PREEMPT_100);
	S.stack_given = nstack > 0;
	S.duty_given = nduty > 0;
	S.preempt_given = npreempt > 0;
	if (rc == 0 && npreempt && (npreempt < SB_NR_WAKE_PREEMPT || !S.given[SB_COST_SLICE] || S.cost[SB_COST_WAKE_LAST_CORE] != 1)) {
		snprintf(err, errlen, "%s: wake_preempt_0 .. wake_preempt_100 go together (all five or none), and with slice "
			 "and wake_last_core 1", path);
		rc = -EINVAL;
	}
	if (rc == 0 && ((nstack && nstack < SB_NR_WAKE_STACK) || (nstack && !S.given[SB_COST_SLICE]))) {
		snprintf(err, errlen, "%s: wake_stack_0us .. wake_stack_5000us go together (all thirteen or none), "
			 "and with slice", path);
		rc = -EINVAL;
	}
	if (rc == 0 && ((nduty && nduty < SB_NR_WAKE_DUTY) || (nduty && !nstack))) {
		snprintf(err, errlen, "%s: wake_stack_duty_5 .. wake_stack_duty_60 go together (all five or none), "
			 "and with wake_stack_*", path);
		rc = -EINVAL;
	}
	/* the cold curve: all fourteen or none; with it cold and cold_after are not needed */
	int ncold = 0;
	for (int c = SB_COST_COLD_9; c <= SB_COST_COLD_22; c++)
		ncold += seen[c];
	S.cold_curve = ncold > 0;
	if (rc == 0 && ncold && ncold < SB_COST_COLD_22 - SB_COST_COLD_9 + 1) {
		snprintf(err, errlen, "%s: cold_9 .. cold_22 go together: give all fourteen or none", path);
		rc = -EINVAL;
	}
	for (int c = SB_COST_COLD_9; c <= SB_COST_COLD_22; c++)
		seen[c] = true;
	S.given[SB_COST_COLD] = seen[SB_COST_COLD];
	S.given[SB_COST_COLD_AFTER] = seen[SB_COST_COLD_AFTER];
	if (S.cold_curve)
		seen[SB_COST_COLD] = seen[SB_COST_COLD_AFTER] = true;
	bool long_after = seen[SB_COST_PARK_LONG_AFTER];
	if (rc == 0 && (S.has[G_PARK_BUSY] != long_after || S.has[G_PARK_IDLE] != long_after)) {
		snprintf(err, errlen, "%s: park_long_after, park_busy_* and park_idle_* go together: give all eleven or none",
			 path);
		rc = -EINVAL;
	}
	if (rc == 0 && S.has[G_OVER_100US] != S.has[G_OVER_1MS]) {
		snprintf(err, errlen, "%s: over_100us_* and over_1ms_* go together: give all ten or none", path);
		rc = -EINVAL;
	}
	if (rc == 0 && (S.has[G_NOISE] != seen[SB_COST_NOISE_EVERY] ||
			(S.has[G_NOISE] && !(S.cost[SB_COST_NOISE_EVERY] > 0)))) {
		snprintf(err, errlen, "%s: noise_every (more than 0 ns) and noise_p10 .. noise_p999 go together: give all "
			 "six or none", path);
		rc = -EINVAL;
	}
	seen[SB_COST_PARK_LONG_AFTER] = true;
	seen[SB_COST_NOISE_EVERY] = true;
	for (int c = 0; rc == 0 && c < SB_NR_COSTS; c++)
		if (!seen[c]) {
			snprintf(err, errlen, "%s: cost '%s' is missing", path, sb_cost_names[c]);
			rc = -EINVAL;
		}
	/* The deque's bare push is a floor, not a policy's per-task cost (8 to 46 ns measured against
	 * its 0.6): a table without the policy's own line would silently charge the floor. */
	bool has_push = false;
	auto pc = S.policy_cost.find(policy);
	if (pc != S.policy_cost.end())
		for (auto &kv : pc->second)
			has_push |= kv.first == SB_COST_PUSH;
	if (rc == 0 && !has_push) {
		snprintf(err, errlen, "%s: no 'push@%s' line: policy %s's per-task cost is not in this table; measure "
			 "it with `make calibrate` (scripts/calibrate.py), which writes one for every policy", path, policy,
			 policy);
		rc = -EINVAL;
	}
	return rc;
}

} // namespace

extern "C" int sb_sim_run(const char *costs_path, unsigned cores, const char *const *policies, const char *policy,
			  int (*body)(void *), void *arg, char *err, size_t errlen)
{
	int rc = load_costs(costs_path, policies, policy, err, errlen);
	if (rc)
		return rc;
	static char prog[] = "schedbed", quiet[] = "--log=root.thresh:warning";
	char *argv[] = { prog, quiet, nullptr };
	int argc = 2;
	sg4::Engine e(&argc, argv);
	/* one host: cores enough for any number of actors (work never competes for a core), or the
	 * machine's cores, shared */
	S.cores = cores;
	S.sliced = cores && S.given[SB_COST_SLICE];
	S.holder.assign(cores, nullptr);
	S.runq.clear();
	S.pinq.assign(cores, {});
	S.stacking = S.sliced && S.stack_given;
	S.wake_last_core = S.sliced && S.cost[SB_COST_WAKE_LAST_CORE] == 1;
	std::fill(std::begin(S.preempted), std::end(S.preempted), 0);
	auto *zone = sg4::create_full_zone("machine");
	S.host = zone->create_host("cpu", 1.0);
	S.host->set_core_count(cores ? (int)cores : 4096);
	zone->seal();
	S.platform = cores ? "SimGrid: one host, " + std::to_string(cores) + " cores shared by every actor" +
				     (S.sliced ? " in time slices" : "")
			   : "SimGrid: one host, a core per actor";
	/* the actors share this OS thread: urcu sees one reader, registered once */
	urcu_memb_register_thread();
	auto *first = new actor_state;
	first->actor = sg4::Actor::create("main", S.host, [&rc, first, body, arg] {
		sg4::Actor::self()->set_data(first);
		switch_in(first);
		sb_exec_use(&sim_ops);
		rc = body(arg);
		leave_core(first);
	});
	e.run();
	sb_exec_use(nullptr);
	urcu_memb_unregister_thread();
	first->actor = nullptr;
	delete first;
	return rc;
}

extern "C" bool sb_sim_built(void)
{
	return true;
}

extern "C" const char *sb_sim_platform(void)
{
	return S.platform.c_str();
}

extern "C" void sb_sim_shared_line(struct sb_sim_line *out)
{
	*out = S.shared;
}

extern "C" uint64_t sb_sim_cpu_ns(void)
{
	return (uint64_t)std::llround(S.busy);
}

extern "C" void sb_sim_preemptions(uint64_t *workers, uint64_t *clients)
{
	*workers = S.preempted[K_WORKER];
	*clients = S.preempted[K_CLIENT];
}

extern "C" double sb_sim_cost(enum sb_cost c)
{
	/* optional costs the table does not give: not a cost of 0 (meta.json writes null) */
	for (int g = 0; g < NR_GROUPS; g++)
		if (c >= spread_first[g] && c < spread_first[g] + SPREAD && !S.has[g])
			return NAN;
	if (c == SB_COST_PARK_LONG_AFTER && !S.has[G_PARK_BUSY])
		return NAN;
	if (c == SB_COST_NOISE_EVERY && !S.has[G_NOISE])
		return NAN;
	for (int o : OPTIONAL)
		if (c == o && !S.given[c])
			return NAN;
	if (c >= SB_COST_COLD_9 && c <= SB_COST_COLD_22 && !S.cold_curve)
		return NAN;
	if (c >= SB_COST_WAKE_STACK_0US && c <= SB_COST_WAKE_STACK_5000US && !S.stack_given)
		return NAN;
	if (c >= SB_COST_WAKE_STACK_DUTY_5 && c <= SB_COST_WAKE_STACK_DUTY_60 && !S.duty_given)
		return NAN;
	if ((c == SB_COST_COLD || c == SB_COST_COLD_AFTER) && !S.given[c])
		return NAN; /* a table with the curve may leave them out */
	return S.cost[c];
}

extern "C" const char *sb_sim_costs_version(void)
{
	return S.version.c_str();
}
