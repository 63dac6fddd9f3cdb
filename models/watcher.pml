/*
 * watcher.pml - the conditional-task watcher's eventcount (core/watcher.c over core/helper.h):
 * producers push to the cond_q MPSC queue and kick the watcher (bump its seq); the watcher takes
 * a snapshot of seq, then reads its stop flag, drains the queue and sleeps in FUTEX_WAIT only
 * while seq still holds the snapshot. Checked for lost wake-ups (every pushed task is run),
 * deadlock and a terminating sb_watcher_stop (the stop is a kick after the flag).
 *
 * Two producers push one conditional task each, at the same time (a request thread and a
 * worker whose task placed one SB_TO_WATCHER), so the second can sit in the mpsc mid-push
 * window behind the first. Every task's check holds when the watcher looks: a task that is not
 * ready keeps the watcher in its timed watcher_interval poll (a nanosleep, which always ends),
 * and what the watcher does with a ready task (run it, or hand a sticky one back through
 * sb_place, the producer path idle.pml checks) involves no wake-up of the watcher.
 *
 * Options: TIMEOUTS (the 100 ms bound of the watcher's futex wait); BROKEN_SEQ_AFTER_DRAIN
 * (the watcher reads cond_seq after draining instead of before), BROKEN_BUMP_BEFORE_LINK
 * (a producer bumps cond_seq inside its push window) and BROKEN_STOP_BEFORE_SNAPSHOT (the stop
 * flag read before the snapshot: a stop in between is lost to a wait without timeout) must be
 * refuted.
 */

#define N         1        /* no workers here; sched.pml's worker words stay unused */
#define NQ        1
#define CONDQ     0        /* rt->cond_q */
#define SHARED    NQ       /* no SB_TO_ANY queue */
#define OWNER(q)  0
#define IS_MPSC(q) true
#define NOBODY    255

#include "sched.pml"

byte cond_seq;             /* rt->watcher.seq, the watcher's futex word */
bool wwait;                /* the watcher is blocked in FUTEX_WAIT on it */
bool wexit;                /* watcher_main has returned */

/* sb_watcher_push */
inline watcher_push(pos)
{
	q_claim(CONDQ, pos);                 /* sb_mpsc_push: nr_in++, exchange of head */
#ifdef BROKEN_BUMP_BEFORE_LINK
	cond_seq++;
	wwait = false;
	q_publish(CONDQ, pos);
#else
	q_publish(CONDQ, pos);               /* the release link prev->next */
	cond_seq++;                          /* sb_helper_kick: fetch_add(&seq, 1, release) */
	wwait = false                        /* and FUTEX_WAKE */
#endif
}

active proctype watcher()
{
	byte seq, got, pend;
	do
	:: true ->
#ifdef BROKEN_STOP_BEFORE_SNAPSHOT
		if
		:: stopping -> break
		:: else -> skip
		fi;
		seq = cond_seq;
#else
#ifndef BROKEN_SEQ_AFTER_DRAIN
		seq = cond_seq;              /* sb_helper_next: the acquire load of seq, */
#endif
		if
		:: stopping -> break         /* then the stop flag */
		:: else -> skip
		fi;
#endif
		/* while ((t = sb_mpsc_pop(&rt->cond_q))) sb_list_push(&pending, t); */
		do
		:: q_take(CONDQ, got);
			if
			:: got -> pend++
			:: else -> break
			fi
		od;
#ifdef BROKEN_SEQ_AFTER_DRAIN
		seq = cond_seq;
#endif
		/* every pending task is ready: sb_run runs it */
		done = done + pend;
		pend = 0;
		got = 0;
		/* pending is empty: sb_helper_wait(&rt->watcher, seq, 100 ms) */
		atomic {
			if
			:: cond_seq == seq -> wwait = true
			:: else -> skip
			fi
		};
		if
		:: !wwait -> skip
#ifdef TIMEOUTS
		:: atomic { wwait -> wwait = false }
#endif
		fi;
		seq = 0
	od;
	wexit = true
}

/* a worker running a task that placed a conditional task (SB_TO_WATCHER) */
active proctype worker()
{
	byte pos;
	watcher_push(pos)
}

active proctype request()
{
	byte pos;
	watcher_push(pos);
	/* sb_rt_stop waits for the jobs, which need their conditional tasks run */
	(done == 2);
	/* sb_helper_stop: stop = true, kick (bump seq, FUTEX_WAKE), join */
	stopping = true;
	cond_seq++;
	wwait = false;
	wexit;
	assert(qout[CONDQ] == qcl[CONDQ])
}

ltl all_run { [] ((done < pushed) -> <> (done == pushed)) }
ltl stops { <> wexit }
