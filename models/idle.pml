/*
 * idle.pml - the worker idle path and the suspend/wake protocol of core/worker.c, with the
 * producers of core/task.c, checked for lost wake-ups, deadlock and a terminating stop.
 *
 * N workers run worker_main's loop: pop their own queue and the shared one, a steal sweep,
 * then (after TRY empty rounds) suspend(): announce SUSPENDED, re-check with a pop,
 * FUTEX_WAIT. Producers are a request thread (REQ tasks) and the workers themselves (a task
 * body may spawn; SPAWN spawns in all); each push goes to any queue and is followed by
 * sb_place's wake. Afterwards the request thread stops the runtime as sb_rt_stop and
 * join_workers do. One queue per worker plus one shared queue, of the kinds the policies use:
 *
 *   q = 0         worker 0's queue is an sb_mpsc (Vyukov), like a stealing worker's sticky
 *                 queue: only the owner pops it, nobody steals from it
 *   q = 1..N-1    worker q's queue is an sb_mpmc ring, like a stealing worker's main queue:
 *                 the owner pops it and the others' steal sweeps take from it
 *   q = N         the fifo policy's global sb_mpmc, reached through SB_TO_ANY
 *
 * (A stealing worker has both a sticky queue and a ring; giving each worker one of the two
 * keeps both kinds and both roles in the model at the cost of one queue per worker.)
 *
 * Options (spin -D...): N (2 or 3 workers), REQ, SPAWN, TRY (default 0, in sched.pml).
 * TIMEOUTS lets every futex wait end on its own (worker_suspend_timeout). FAST_POP makes a
 * pop or a steal sweep one step (used for N = 3; README, "abstractions"). BROKEN_NO_RECHECK,
 * BROKEN_EARLY_READ and BROKEN_WAKE_BEFORE_LINK break the protocol on purpose (sched.pml) and
 * must be refuted. PTL adds the stealing policy's conditional=ptl pending task lists, which
 * suspend() gets wrong (README, "findings"); PTL_FIX adds the repair, which checks clean
 * (PTL_FIX_POP and PTL_FIX_CAP: each half alone).
 * models/README.md lists the checks and maps every step to the C code.
 */

#ifndef N
#define N 2
#endif
#ifndef REQ
#define REQ 2      /* tasks the request thread submits */
#endif
#ifndef SPAWN
#define SPAWN 1    /* tasks task bodies may spawn, all workers together */
#endif
#ifdef PTL_FIX           /* the repair in both of its halves */
#define PTL_FIX_POP
#define PTL_FIX_CAP
#endif
#ifdef PTL_FIX_CAP
/* the repair, core half: suspend() takes the cap after its re-check, which may have parked
 * a task */
#define SUSPEND_CAP(me, cap) (cap || ptl[me] > 0)
#endif

#define NQ        (N + 1)
#define LOCAL(i)  (i)
#define SHARED    N
#define OWNER(q)  (q)
#define IS_MPSC(q) ((q) == 0)
#define NOBODY    255      /* tc->worker of a request thread (-1) */

#include "sched.pml"

byte spawn_left = SPAWN;
byte nexit;                /* workers that have left worker_main */

#ifdef FAST_POP
#define POP_STEP atomic
#else
#define POP_STEP
#endif

#ifdef PTL
/* The stealing policy with conditional=ptl: a conditional task taken from a queue before its
 * check holds is parked in the taker's pending task list (PTL), which its pop scans first. */
byte qcond[NQ];            /* bit p: position p of queue q holds a conditional task */
byte ptl[N];               /* tasks parked in worker i's PTL */
bool ready;                /* the conditional task's check (sb_task_ready) holds */
#define TOOK_COND(q) ((qcond[q] >> (qout[q] - 1)) & 1)

/* pop_impl's PTL steps around a pop of q: got = 2 means "parked, pop_impl returns NULL". */
inline ptl_take(me, q, got)
{
	atomic {
		q_take(q, got);
		if
		:: got && TOOK_COND(q) && !ready -> ptl[me]++; got = 2  /* sb_list_push(&me->ptl, t); return NULL */
		:: else -> skip                                         /* ready: flags &= ~COND, run it */
		fi
	}
}
#endif

/*
 * sb_policy_pop for worker me: its own queue (stealing's pop_impl: sticky_pop or main_pop),
 * then the shared one (fifo's pop). Each queue read is a step of its own; with FAST_POP the
 * whole pop is one. sticky_pop's sb_mpsc_empty test is folded into the pop (see q_claim).
 */
inline policy_pop(me, got)
{
	POP_STEP {
#ifdef PTL
		/* ptl_scan: a parked task whose check now holds is taken before the queues */
		atomic {
			if
			:: ptl[me] > 0 && ready -> ptl[me]--; got = 1
			:: else -> got = 0
			fi
		};
		if
		:: !got -> ptl_take(me, LOCAL(me), got)
		:: else -> skip
		fi;
#ifdef PTL_FIX_POP
		/* the repair, policy half: after parking a task, go on popping instead of
		 * returning NULL with work still queued behind it */
		if
		:: got == 2 -> ptl_take(me, LOCAL(me), got)
		:: else -> skip
		fi;
#endif
#else
		q_take(LOCAL(me), got);
#endif
		if
		:: !got -> q_take(SHARED, got)
		:: else -> skip
		fi;
		if
		:: got == 2 -> got = 0
		:: else -> skip
		fi
	}
}

/* ws_steal: one sweep over the other workers' rings, never sticky queues (so never worker
 * 0's queue here), from the worker after the last victim; a task found is run at once. */
inline policy_steal(me, got, k, v)
{
	POP_STEP {
		got = 0;
		k = 1;
		do
		:: k < N && !got ->
			v = (me + k) % N;
			if
			:: !IS_MPSC(LOCAL(v)) -> q_take(LOCAL(v), got)
			:: else -> skip
			fi;
			k++
		:: else -> break
		od;
		k = 0;
		v = 0
	}
}

/* The body of every task (sb_run): it may spawn one task anywhere (sb_spawn -> sb_place),
 * then returns SB_DONE and finish() gives its token back. */
inline task_body(me, q, pos, early, k, v, prev)
{
	if
	:: atomic {
		spawn_left > 0 -> spawn_left--;
		select(q : 0 .. NQ - 1);
		place_claim(q, pos, early)
	   };
		place_finish(q, me, pos, early, k, v, prev)
	:: skip
	fi;
	done++
}

/* sb_policy_idle: fifo has none; stealing's ws_idle moves no work and wakes nobody, it only
 * caps the next sleep at watcher_interval while the worker's PTL holds tasks, so it is only
 * modelled with PTL. */
#ifdef PTL
#define HAS_POLICY_IDLE
inline policy_idle(me, got, iowake, stay, cap)
{
	cap = ptl[me] > 0
}
#endif

/* Workers and the request thread all run from the start: the request thread may submit
 * before, during or after the workers' first idle rounds. */
active [N] proctype worker()
{
	byte me = _pid;
	byte got, rounds, q, pos, early, k, v, prev, iowake;
	bool cap, stay;
	worker_main(me, got, rounds, q, pos, early, k, v, prev, cap, iowake, stay);
	nexit++
}

active proctype request()
{
	byte i, q, pos, early, k, v, prev;
	/* sb_job_submit / sb_spawn from a request thread: tc->worker == -1, so every push to a
	 * worker's queue is followed by sb_wake_worker */
#ifdef PTL
	/* first a conditional task, on worker 0's queue (a thief that takes one before its time
	 * puts it back through sb_place: a path left out here) */
	atomic { q_claim(LOCAL(0), pos); qcond[LOCAL(0)] = qcond[LOCAL(0)] | (1 << pos) };
	q_publish(LOCAL(0), pos);
	wake_worker(OWNER(LOCAL(0)), prev);
	i = 1;
#endif
	do
	:: i < REQ ->
		atomic { select(q : 0 .. NQ - 1); place_claim(q, pos, early) };
		place_finish(q, NOBODY, pos, early, k, v, prev);
		i++
	:: else -> break
	od;
	i = 0;
#ifdef PTL
	/* the condition comes true (say a lock is released): nobody is woken for it, the PTL
	 * is polled */
	ready = true;
#endif
	/* sb_rt_stop: wait until no job is live (the live_seq eventcount); a job's count includes
	 * running tasks and the tasks they spawn, so this is "every claimed task has finished" */
	(done == pushed);
	/* join_workers: stopping = true, wake_all, pthread_join each */
	stopping = true;
	wake_all(i);
	(nexit == N);
	/* nothing was left behind in any queue */
	do
	:: i < NQ -> assert(qout[i] == qcl[i] && qpub[i] == (1 << qcl[i]) - 1); i++
	:: else -> break
	od
}

/* No lost wake-up: a task that has been pushed is eventually run. `pushed` grows while tasks
 * wait, so "done catches up with pushed" covers every task pending at the time. */
ltl all_run { [] ((done < pushed) -> <> (done == pushed)) }
/* The stop path terminates: every worker leaves worker_main. */
ltl stops { <> (nexit == N) }
