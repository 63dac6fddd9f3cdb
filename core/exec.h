/*
 * exec.h - the executor seam: everything in the core and the workloads that touches real time
 * or real threads goes through here.
 *
 * Two implementations. Native (the default, inline below and in exec.c): pthreads, futexes,
 * the TSC clock, calibrated busy work, pause/sched_yield/nanosleep, _Thread_local, membarrier.
 * Virtual (sim/exec_sim.cpp, SimGrid): the same operations on simulated actors and a virtual
 * clock, installed by sb_exec_use() before the runtime starts any thread. Policies and
 * workloads never see which one runs them.
 *
 * The native path must cost what it cost before the seam existed, so each primitive is an
 * inline that tests one read-mostly pointer (sb_exec_vt, NULL unless a virtual executor runs,
 * written once before any thread exists) with a branch predicted not taken; only then does it
 * call through the table. Nothing else in the tree may call pthread_create/join, futex,
 * nanosleep, sched_yield, clock_gettime or membarrier, or keep per-thread state in
 * _Thread_local (the harness's wall-clock date and the mutexes around short non-blocking
 * critical sections excepted: an actor never yields inside them, so they are never contended
 * under a cooperative executor).
 */
#ifndef SB_EXEC_H
#define SB_EXEC_H

#ifdef __cplusplus
/* for sim/exec_sim.cpp: the same layout under C++'s names */
#include <atomic>
#define SB_ATOMIC_U32 std::atomic<uint32_t>
#define SB_THREAD_LOCAL thread_local
extern "C" {
#else
#include <stdatomic.h>
#define SB_ATOMIC_U32 _Atomic uint32_t
#define SB_THREAD_LOCAL _Thread_local
#endif

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct sb_thread;

/* What a thread keeps for itself: the core's context (sb_self) and one slot for a workload
 * (workloads/clients.c's task counter block and its generation). */
struct sb_tls {
	struct sb_thread *self;
	void *wl_ptr;
	uint64_t wl_gen;
};

/* Costs a virtual executor charges for operations that take no simulated time by themselves
 * (the core's calls into the policy and its own idle path). The native executor ignores them:
 * there the operations cost what they cost. Names are the keys of the cost file. */
enum sb_cost {
	SB_COST_PUSH,        /* a submit through the policy, with the core's per-task overhead (every
	                        task is submitted; not every one is popped through the policy) */
	SB_COST_POP,         /* a local pop that found a task */
	SB_COST_POP_EMPTY,   /* a local pop that found nothing */
	SB_COST_STEAL,       /* a steal sweep that found a task */
	SB_COST_STEAL_EMPTY, /* a steal sweep that found nothing */
	SB_COST_WAKE,        /* issuing a wake-up (futex wake) */
	SB_COST_PARK,        /* waking up after a park (futex wait), from the wake to running */
	SB_COST_RELAX,       /* one spin-loop iteration */
	SB_COST_YIELD,       /* sched_yield with nobody else to run */
	SB_COST_LINE,        /* moving a contended cache line to another core of the same socket */
	SB_COST_LINE_REMOTE, /* ... to a core of another socket */
	SB_COST_COLD,        /* loading a task whose memory left the cache: more than cold_after other
	                        tasks touched since it was (fork-join's breadth-first frontier); a
	                        table with the cold_9 .. cold_22 curve below needs neither */
	SB_COST_COLD_AFTER,  /* a count, not ns: the cache's capacity in tasks */
	/* The spread of `park`, measured over every hand-off of the calibration: its 10th, 50th, 90th,
	 * 99th and 99.9th percentiles. Optional (all five or none): with them each park draws its cost
	 * from that distribution, without them it costs `park` every time. */
	SB_COST_PARK_P10,
	SB_COST_PARK_P50,
	SB_COST_PARK_P90,
	SB_COST_PARK_P99,
	SB_COST_PARK_P999,
	/* A park that slept at least park_long_after ns comes back slower or faster than a hand-off,
	 * by what its waker did meanwhile (sim/calibrate.c measures both on the machine): woken by a
	 * thread that has run at least as long (the machine stayed busy, the sleeper's CPU went deep
	 * into idle), it draws from park_busy_*; woken by one that itself came back from a sleep or
	 * a park less than park_long_after ago (the machine idled), from park_idle_*. Optional, all
	 * eleven or none; without them every park draws from park_p* (or costs `park`). */
	SB_COST_PARK_LONG_AFTER, /* ns, not a cost */
	SB_COST_PARK_BUSY_P10,
	SB_COST_PARK_BUSY_P50,
	SB_COST_PARK_BUSY_P90,
	SB_COST_PARK_BUSY_P99,
	SB_COST_PARK_BUSY_P999,
	SB_COST_PARK_IDLE_P10,
	SB_COST_PARK_IDLE_P50,
	SB_COST_PARK_IDLE_P90,
	SB_COST_PARK_IDLE_P99,
	SB_COST_PARK_IDLE_P999,
	/* How late a timed sleep (and a timed park's timeout) returns beyond the time asked (timer
	 * slack, a halted CPU's way back): percentiles measured for sleeps of 100 us and of 1 ms,
	 * interpolated between them by the sleep's length. Optional, all ten or none; without them a
	 * simulated sleep returns on time. */
	SB_COST_OVER_100US_P10,
	SB_COST_OVER_100US_P50,
	SB_COST_OVER_100US_P90,
	SB_COST_OVER_100US_P99,
	SB_COST_OVER_100US_P999,
	SB_COST_OVER_1MS_P10,
	SB_COST_OVER_1MS_P50,
	SB_COST_OVER_1MS_P90,
	SB_COST_OVER_1MS_P99,
	SB_COST_OVER_1MS_P999,
	/* How long a thread keeps a core that another runnable thread waits for (the OS scheduler's
	 * time slice; a thread woken from a park or a sleep takes a core at once). Optional; with it,
	 * a run that shares its cores (--sim-cores) hands them out in slices; without it SimGrid
	 * shares them evenly among the threads executing at once. */
	SB_COST_SLICE,
	/* Where the OS runs a thread woken by another while a core is idle: on its waker's core,
	 * ahead of the waker, which then waits for that core (it is not moved to the idle one), in a
	 * share (0 to 1) of such wake-ups that depends on how long the waker has run since it came
	 * back from a park or a sleep: wake_stack_<R>us for a waker that has run R us, for each R of
	 * SB_WAKE_STACK_US (linear between them, the last beyond). sim/calibrate.c measures each.
	 * Optional, all thirteen or none, and only with `slice` (the shared cores' time slices). */
	SB_COST_WAKE_STACK_0US,
	SB_COST_WAKE_STACK_5000US = SB_COST_WAKE_STACK_0US + 12,
	/* The same wake-up's share by how busy the wakee has lately been: wake_stack_duty_<D> is the
	 * share measured with the waker at 20 us and the wakee running D% of the time (its CPU time
	 * over the wall time, a decaying average with the kernel's 32 ms half-life, SB_WAKE_DUTY_PC);
	 * a wake-up's share is wake_stack_<R>us times wake_stack_duty at the wakee's duty over
	 * wake_stack_duty_5 (the wake_stack_<R>us runs' wakee ran 50 us a round, about 5%). Measured on
	 * the 2-core host: a wakee at 15% or more seldom runs on its waker's core. Optional, all five or
	 * none, and only with wake_stack_*. */
	SB_COST_WAKE_STACK_DUTY_5,
	SB_COST_WAKE_STACK_DUTY_60 = SB_COST_WAKE_STACK_DUTY_5 + 4,
	/* A job's own CPU beyond its tasks': creating, submitting, counting, recording and reaping
	 * it, all on one thread (serial's request thread runs its own jobs). Optional (0 without
	 * it); charged on the thread that runs the teardown when that thread also created the job. */
	SB_COST_JOB,
	/* A job that ends on another thread than its creator costs each more than `job` says: its
	 * memory and the counters it touches move between their cores. job_create: the creator's
	 * CPU per such job (beyond the push), charged as it lets go of the finished job; job_end:
	 * the finisher's (beyond its tasks' pops and pushes), charged at the teardown. Optional:
	 * without job_end a job ending anywhere costs `job` there, without job_create its creator
	 * pays nothing. */
	SB_COST_JOB_CREATE,
	SB_COST_JOB_END,
	/* The CPU a park costs the parked thread itself: the futex call, the switch away and the
	 * switch back (`park` is the wait, this is the work in it). Optional (0 without it). */
	SB_COST_PARK_CPU,
	/* A workload's own computation, which natively takes the CPU it takes and in a simulation
	 * takes no simulated time unless priced: patterns' kernels (workloads/taskgraph.c), per
	 * compute_bound iteration (16 FLOP) and per double of a memory_bound pass (over the default
	 * 8 KiB scratch: a larger one leaves the cache and costs more). Optional: without them a
	 * simulated kernel takes no time. */
	SB_COST_COMPUTE_ITER,
	SB_COST_MEMORY_DOUBLE,
	/* Not a price, a switch (0 or 1): 1 makes every operation on a line wait until the line is
	 * free, in the order the simulation reaches them; 0 (or absent) lets an operation that began
	 * before the line's previous one go without waiting (actors run up to SB_SIM_AHEAD_NS ahead
	 * of the clock, so under contention most do, and a line serves more than its span:
	 * meta.json's shared_line). Optional. */
	SB_COST_LINE_QUEUE,
	/* Also a switch (0 or 1), for cores shared in slices: 1 sends a thread woken while no core
	 * is idle back to the core it held last, whose holder it preempts, as Linux picks the
	 * wakee's previous CPU when none is idle; 0 (or absent) has it preempt the holder whose
	 * slice began first, which beside a busy worker is the worker: on tiny at 1 worker with 4
	 * request threads on 2 cores that took the worker's core some 25,000 times a second where
	 * the 2-core host's kernel took it 36 to 99 times under fifo, stealing, lanes and
	 * distribution, and 1 some 5,000 (summary.json's window_preempted_workers, PAPER.md §4.11,
	 * row 104). Optional. */
	SB_COST_WAKE_LAST_CORE,
	/* The CPU a wake-up takes from a core it must interrupt: the woken thread preempts a holder
	 * that is not its waker (the waker, in its wake call, lets the wakee run as the call returns,
	 * with no interrupt), or comes back from a timer onto a held core. Measured on the 2-core
	 * Intel host (sim/calibrate.c): such a woken thread's own CPU per wake-up, 21 to 31 us,
	 * against 1.7 to 2.5 us when its waker's call returns on that core (results/paper/
	 * wake-interrupt/). Charged to the wakee as it takes the core. Optional (0 without it);
	 * it acts only where cores are sliced (`slice`), the one place a wake-up preempts. */
	SB_COST_WAKE_INTERRUPT,
	/* Whether a thread woken while no core is idle preempts the holder of the core it goes to
	 * (with wake_last_core, its last one) or waits there until the holder leaves: the kernel
	 * (EEVDF) preempts a holder that has lately had more CPU than the wakee. wake_preempt_<R>:
	 * the share of wake-ups that preempt a holder when the wakee has lately been busy R% as
	 * much as it (SB_WAKE_PREEMPT_PC; linear between them, 0 beyond the last). Measured with a
	 * holder busy 15% (sim/calibrate.c); on the 2-core Intel host 0.84 to 0.89 at R = 0 for
	 * holders busy 5% to 60% alike, and 0 at R = 100. Optional, all five or none, only with
	 * `slice` and wake_last_core 1; without them a woken thread always preempts. */
	SB_COST_WAKE_PREEMPT_0,
	SB_COST_WAKE_PREEMPT_100 = SB_COST_WAKE_PREEMPT_0 + 4,
	/* What loading a task costs beyond an L1 hit, by how far back it lies: cold_K when more than
	 * 2^(K-1) and at most 2^K other tasks were touched since it was (its reuse distance), cold_22
	 * beyond; 2^8 or fewer cost nothing more. sim/calibrate.c walks a chain of 2^K tasks for
	 * each. Optional, all fourteen or none; without them a task costs `cold` beyond cold_after. */
	SB_COST_COLD_9,
	SB_COST_COLD_22 = SB_COST_COLD_9 + 13,
	/* What the machine takes from a running thread without the program asking: interrupts, the
	 * kernel's and the hypervisor's own work, other processes. sim/calibrate.c spins a thread on
	 * every CPU reading the clock and counts each gap of 2 us or more: noise_every is the mean CPU
	 * time between two such losses (ns, not a cost), noise_p10 .. noise_p999 their lengths. With
	 * them every simulated stretch of CPU time loses what falls in it, drawn as a Poisson process
	 * over the thread's CPU time, and ends that much later (counted as its CPU, as the kernel
	 * counts it natively): a task stopped in the middle holds back whatever waits for it.
	 * Optional, all six or none. */
	SB_COST_NOISE_EVERY,
	SB_COST_NOISE_P10,
	SB_COST_NOISE_P50,
	SB_COST_NOISE_P90,
	SB_COST_NOISE_P99,
	SB_COST_NOISE_P999,
	SB_NR_COSTS
};
extern const char *const sb_cost_names[SB_NR_COSTS];
/* the waker's run lengths, us, of the wake_stack_* costs */
#define SB_WAKE_STACK_US { 0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000 }
enum { SB_NR_WAKE_STACK = SB_COST_WAKE_STACK_5000US - SB_COST_WAKE_STACK_0US + 1 };
/* the wakee's duty, percent, of the wake_stack_duty_* costs */
#define SB_WAKE_DUTY_PC { 5, 10, 15, 30, 60 }
enum { SB_NR_WAKE_DUTY = SB_COST_WAKE_STACK_DUTY_60 - SB_COST_WAKE_STACK_DUTY_5 + 1 };
/* the wakee's duty, percent of the holder's, of the wake_preempt_* costs */
#define SB_WAKE_PREEMPT_PC { 0, 25, 50, 75, 100 }
enum { SB_NR_WAKE_PREEMPT = SB_COST_WAKE_PREEMPT_100 - SB_COST_WAKE_PREEMPT_0 + 1 };

struct sb_xthread {
	pthread_t pt;
	void *vt; /* the virtual executor's handle */
};

/* The virtual executor's table; every member is required. */
struct sb_exec_ops {
	const char *name;
	int (*thread_start)(struct sb_xthread *th, const char *name, void *(*fn)(void *), void *arg);
	void (*thread_join)(struct sb_xthread *th);
	void (*park)(SB_ATOMIC_U32 *addr, uint32_t val, uint64_t timeout_ns);
	void (*unpark)(SB_ATOMIC_U32 *addr, int n);
	uint64_t (*now)(void);
	void (*work)(uint64_t ns);
	void (*sleep)(uint64_t ns);
	void (*charge)(enum sb_cost c, int line, int self, const void *task);
	void (*topology)(unsigned nworkers, const unsigned *socket, const char *policy);
	void (*did)(enum sb_cost c, double units);
	void (*touch)(const void *task);
};

/* NULL: native. Written once by sb_exec_use before any thread starts; read-only afterwards. */
extern const struct sb_exec_ops *sb_exec_vt;
extern SB_THREAD_LOCAL struct sb_tls sb_tls_native;

static inline bool sb_exec_virtual(void)
{
	return __builtin_expect(sb_exec_vt != NULL, 0);
}

/* The calling thread's (or actor's) own state. A plain _Thread_local under both executors: the
 * virtual one saves and restores it around every switch between actors (sim/exec_sim.cpp). */
static inline struct sb_tls *sb_tls(void)
{
	return &sb_tls_native;
}

/* The calling thread's core context (an lvalue: `sb_self = tc` attaches). */
#define sb_self (sb_tls_native.self)

/* Start fn(arg) on a new thread (or actor); 0 or -errno. */
int sb_exec_thread_start(struct sb_xthread *th, const char *name, void *(*fn)(void *), void *arg);
void sb_exec_thread_join(struct sb_xthread *th);

/* Park while *addr == val, at most timeout_ns (0 = no limit). Callers re-check their condition
 * after every return: spurious wake-ups and timeouts are normal. The word never carries data. */
static inline void sb_exec_park(SB_ATOMIC_U32 *addr, uint32_t val, uint64_t timeout_ns)
{
	if (sb_exec_virtual()) {
		sb_exec_vt->park(addr, val, timeout_ns);
		return;
	}
	struct timespec ts = { .tv_sec = (time_t)(timeout_ns / 1000000000u),
			       .tv_nsec = (long)(timeout_ns % 1000000000u) };
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, timeout_ns ? &ts : NULL, NULL, 0);
}

/* Unpark up to n threads parked on addr. */
static inline void sb_exec_unpark(SB_ATOMIC_U32 *addr, int n)
{
	if (sb_exec_virtual()) {
		sb_exec_vt->unpark(addr, n);
		return;
	}
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* One iteration of a spin loop. Under a virtual executor it spends simulated time, so that a
 * spin-wait lets the clock (and the thread it waits for) move on. */
static inline void sb_cpu_relax(void)
{
	if (sb_exec_virtual()) {
		sb_exec_vt->charge(SB_COST_RELAX, -1, -1, NULL);
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Lines of charges: 0 .. n-1 the workers' queues, n the queue they share, n + 1 .. n +
 * SB_EXEC_JOB_LINES the jobs' own queues (SB_POLICY_JOB_QUEUES; core/policy.c's push_line). */
#define SB_EXEC_JOB_LINES 64

/* The line argument of a charge that names no line and is owed even for a spin iteration
 * (sb_cpu_poll). */
#define SB_EXEC_OWED (-2)

/* One iteration of a polling loop that ends by itself (the worker's local polls before a steal
 * sweep). Under a virtual executor its cost is owed like a queue operation's and paid with the
 * next wait, or once the actor is a microsecond ahead of the clock, instead of at once as a
 * spin-wait's is: a bounded loop needs no turn for the others at each iteration, and at hundreds
 * of simulated workers those turns were most of a simulation's wall time. A task pushed to the
 * poller's queue meanwhile is seen at most that microsecond later. */
static inline void sb_cpu_poll(void)
{
	if (sb_exec_virtual()) {
		sb_exec_vt->charge(SB_COST_RELAX, SB_EXEC_OWED, -1, NULL);
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Give the CPU to another runnable thread. */
static inline void sb_exec_yield(void)
{
	if (sb_exec_virtual()) {
		sb_exec_vt->charge(SB_COST_YIELD, -1, -1, NULL);
		return;
	}
	sched_yield();
}

/* Sleep for ns of (real or simulated) time. */
void sb_exec_sleep_ns(uint64_t ns);

/* A virtual executor charges cost c to the caller (worker `self`, or -1). The core charges
 * policy calls only on its wrapped slow path (rt->slow & SB_SLOW_VIRTUAL, core/policy.c), so
 * the native hot path does not even test for it. line >= 0 names a
 * contended cache line (a worker's queue by worker index; nworkers for a shared queue):
 * operations on one line serialise on it, and one from another core than the line's last user
 * pays a transfer, dearer across sockets. `task` (or NULL) is the task pushed, popped or
 * stolen: the executor remembers the line a push put it on, so that its pop or steal pays on
 * that line (the victim's queue, the shared queue), which the core cannot see. Native: nothing
 * (the hardware charges). */
static inline void sb_exec_charge(enum sb_cost c, int line, int self, const void *task)
{
	if (sb_exec_virtual())
		sb_exec_vt->charge(c, line, self, task);
}

/* The program loads or updates a task object outside the core's push, pop and run of it: a
 * task created long before its push (a join; otherwise the push prices the sb_task_new before
 * it), or a workload reaching into another task (a child adding into its parent's join task).
 * Not called from the core's own hot paths: a call there (sb_task_new, the caller's list's pop)
 * cost a 1-worker stealing chain 14% to 24%. A virtual executor prices the load by how far back
 * in the cache the task lies (cold_9 .. cold_22, sim/cache.h's task_cache); native: nothing (the
 * hardware charged it). */
static inline void sb_exec_touch(const void *task)
{
	if (sb_exec_virtual())
		sb_exec_vt->touch(task);
}

/* Work the program itself did: `units` of what cost c prices (a workload's own computation,
 * which took real CPU natively and moves no simulated clock). A virtual executor spends units x c
 * as work, in whole ns (nothing where its table leaves c out); native: nothing (the hardware
 * charged it). */
static inline void sb_exec_did(enum sb_cost c, double units)
{
	if (sb_exec_virtual())
		sb_exec_vt->did(c, units);
}

/* Tell a virtual executor the socket of each worker (for line transfers) and the policy (its
 * cost table may price a policy's pop apart). */
static inline void sb_exec_topology(unsigned nworkers, const unsigned *socket, const char *policy)
{
	if (sb_exec_virtual())
		sb_exec_vt->topology(nworkers, socket, policy);
}

/* The wake protocol's asymmetric barrier (core/worker.c). register: true when the sleeper's
 * barrier may be a membarrier (the producers then need only a compiler barrier); a virtual
 * executor runs one actor at a time, so every access is already ordered and both sides are
 * free. barrier: the sleeper's side; 0 or -errno. */
bool sb_exec_membarrier_register(void);
int sb_exec_membarrier(void);

/* urcu needs each thread that reads the transaction map registered; actors of a virtual
 * executor share the one OS thread, which the executor registers once. */
void sb_exec_rcu_register(void);
void sb_exec_rcu_unregister(void);

/* Install a virtual executor (NULL: native). Only before any runtime exists. */
void sb_exec_use(const struct sb_exec_ops *vt);
const char *sb_exec_name(void);

/* ---- the SimGrid executor (sim/exec_sim.cpp, linked into programs that offer it) ---- */

/* Run body(arg) as the first actor of a simulation whose costs come from costs_path (see
 * sim/costs-*.txt for the format); every thread it starts is an actor on the virtual clock.
 * policies: the NULL-terminated names a "NAME@POLICY" line may use (the core does not know the
 * registry), so that a misspelt policy is an error rather than a cost never charged.
 * policy: the one this run uses; its per-task cost (push@POLICY) must be in the table.
 * cores: the simulated machine's cores, which every actor's work shares (more busy actors than
 * cores run slower, as threads do on an oversubscribed machine: evenly, or in turns where the
 * table gives `slice`); 0 gives every actor a core.
 * Returns body's result, or -EINVAL with err set when the cost file is unusable (or, in a program
 * built without the simulator, always, saying so). */
int sb_sim_run(const char *costs_path, unsigned cores, const char *const *policies, const char *policy,
	       int (*body)(void *), void *arg, char *err, size_t errlen);
/* Whether this program has the simulator (false: built with NOSIM=1, sim/exec_none.c). */
bool sb_sim_built(void);
/* After sb_sim_run: the platform and the cost table it used, for meta.json. */
const char *sb_sim_platform(void);
double sb_sim_cost(enum sb_cost c);
/* After sb_sim_run: what happened on the line of the queue every worker shares (a global
 * policy's, SB_TO_ANY): its operations, those that began before the line's previous one began and
 * so did not wait behind it (actors run ahead of the clock by what they owe), the time the
 * operations held the line, and the time from the first one's start to the last one's end. A line
 * serves one operation at a time, so busy_ns above span_ns is a contention the model let through. */
struct sb_sim_line {
	uint64_t ops, out_of_order;
	double busy_ns, span_ns;
};
void sb_sim_shared_line(struct sb_sim_line *out);
/* Simulated CPU time so far: every ns actors spent working, charged or spinning. */
uint64_t sb_sim_cpu_ns(void);
/* Times so far a runnable actor lost its shared core to another (a woken one's preemption, a
 * slice's end, a wakee stacked on its waker's core): the workers' (worker-N) and the request
 * threads' (client-N). 0 unless the cores are shared in slices. Natively the same figure is the
 * kernel's count of their involuntary context switches (harness/run.c). */
void sb_sim_preemptions(uint64_t *workers, uint64_t *clients);
const char *sb_sim_costs_version(void);

#ifdef __cplusplus
}
#endif
#endif
