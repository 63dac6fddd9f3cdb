/*
 * distribution.pml - memo 001's task distribution mode as policies/distribution.c implements
 * it on the work-stealing family, run by the core's worker loop and suspend() (core/worker.c),
 * with producers placing tasks through sb_place (core/task.c). Checked for: at most one worker
 * in the mode, no lost task, no deadlock, a terminating stop.
 *
 * N workers each own an LTQ (a stealing worker's main queue, an sb_mpmc ring) that the others
 * may steal from. A worker (c) pops its own LTQ, (d) steals from the others, then calls the
 * policy's idle step: (e) it enters the mode with a CAS on `distributor` if another worker is
 * active, else (f) returns and the core suspends it. In the mode each idle call is one step:
 * (i) steal a task from the other LTQs, skipping a worker that was just handed one; (ii) push
 * it to a deactivated (SUSPENDED) worker, name it in io.wake and stay awake, or (ii-2) with
 * none deactivated leave the mode and run the task; with nothing to steal, (i-2) stay awake
 * while another worker is active, or (i-3) leave the mode and deactivate. suspend() re-runs pop
 * and idle after announcing SUSPENDED (sched.pml, SUSPEND_RUNS_IDLE).
 *
 * A request thread submits REQ tasks, each to any worker; task bodies spawn up to SPAWN more,
 * each to any worker (a worker's own LTQ is the default placement; the others stand for
 * round robin placement and urgent tasks). Then the request thread stops the runtime.
 *
 * Options (spin -D...): N (2 or 3), REQ, SPAWN; DEDICATED (distributor=dedicated: worker 0 in
 * the mode for the whole run, never a placement target, its sleeps capped by
 * distributor_poll_us); TIMEOUTS (every futex wait may end on its own); FAST_POP (coarser
 * steps for N = 3: each pop and steal sweep is one step, and so is each IDLE_STEP below);
 * SPAWN_OWN (a spawn goes to the spawning worker's own LTQ, the default placement, instead
 * of any worker's; used for N = 3). FINITE_HANDOFFS adds the ghost that ltl all_run_fin uses.
 * Deliberately broken, must be refuted: BROKEN_PLAIN_ENTER (the mode entered by a plain read
 * then write of `distributor` instead of a CAS), BROKEN_HANDOFF_NO_WAKE (a hand-off without
 * io.wake). Observations of the memo's races, refuted when the race can happen: OBSERVE_I3,
 * OBSERVE_II2; BROKEN_RECHECK_ENTER (a worker may enter the mode in suspend()'s re-check, after
 * announcing its deactivation: the last two awake workers then trade the mode for ever, which
 * ltl quiet refutes). QUIET (N = 2): the request thread never stops the runtime, so that ltl
 * quiet can ask whether the workers all fall asleep once every task has run. HANDED_ON_TAKE: a variant of the `handed` hint (cleared only by a pop that takes
 * a task) that removes the endless hand-off the model finds (README, "findings").
 * models/README.md maps every step to the C code and lists the checks.
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
#ifdef DEDICATED
#define DED 1
#else
#define DED 0
#endif

#define NQ        N        /* one LTQ per worker, no SB_TO_ANY queue */
#define LOCAL(i)  (i)
#define SHARED    NQ
#define OWNER(q)  (q)
#define IS_MPSC(q) false   /* every LTQ is an sb_mpmc ring: stealable */
#define NOBODY    255      /* tc->worker of a request thread (-1) */
#define Q_RECYCLE          /* hand-offs move tasks between queues without bound */
#define HAS_POLICY_IDLE
#define POLICY_IDLE_WAKES
#define POLICY_STAYS_AWAKE
#define SUSPEND_RUNS_IDLE

#include "sched.pml"

#define DIST_NONE 255      /* distributor == NOBODY (-1) in distribution.c */
/* the worker k places after w in a sweep (steal_for_handoff, find_deactivated) */
#define AFTER(w, k) (((w) + (k)) % N)
/* placement never targets the dedicated distributor (distribution_submit) */
#define FIRST_TARGET DED

#ifdef FAST_POP
#define POP_STEP atomic
#define IDLE_STEP atomic
#else
#define POP_STEP
#define IDLE_STEP
#endif

/* FINITE_HANDOFFS: a ghost bit that is up for one state after each hand-off, so that an LTL
 * formula can assume "finitely many hand-offs" (<>[] !hoff) */
#ifdef FINITE_HANDOFFS
bool hoff;
#define HANDOFF_PULSE hoff = true
#define HANDOFF_PULSE_END hoff = false
#else
#define HANDOFF_PULSE skip
#define HANDOFF_PULSE_END skip
#endif

/* struct distribution and struct dist_worker */
#ifdef DEDICATED
byte distributor = 0;      /* d->distributor: worker 0 from distribution_create on */
#else
byte distributor = DIST_NONE;  /* d->distributor */
#endif
byte nmode = DED;          /* d->in_mode: workers between try_enter and leave */
bool handed[N];            /* d->w[i].handed */
/* d->w[i].in_mode is written and read by worker i only: it is the worker's local `inmode`,
 * which the inlines below name directly (they expand inside worker()), so that its tests
 * are local steps for spin's partial order reduction. Likewise `hpos`, the position a
 * hand-off push claimed. */

byte spawn_left = SPAWN;
byte nexit;                /* workers that have left worker_main */
bool submitted;            /* the request thread has submitted all of its tasks (ltl quiet) */

/* Observers (no counterpart in the C code): each asserts what the memo's race would break,
 * through a named bit so that check.sh can expect the assertion by name */
#ifdef OBSERVE_I3
bool i3_alone = true;      /* the mode is left at (i-3) while no other worker is active */
#endif
#ifdef OBSERVE_II2
byte ii2_by = NOBODY;      /* the worker that last left the mode at (ii-2), while nobody entered */
bool ii2_covered = true;   /* no other worker decides to sleep in that gap */
#endif
#ifdef HANDED_ON_TAKE
#define CLEAR_HANDED(me, got) if :: got -> handed[me] = false :: else -> skip fi
#endif

/* leave() (distribution.c:142-149): in_mode = false, in_mode counter--, release store of
 * NOBODY. One step: inmode is the owner's, and the counter is next read by an enterer
 * whose CAS has seen the NOBODY stored last. */
inline leave(me)
{
	atomic {
		inmode = false;
		nmode--;
		distributor = DIST_NONE
	}
}

/* try_enter() (distribution.c:125-140), (e): the CAS from NOBODY to self, then the counter's
 * fetch_add, which the C code counts as an overlap when it was not 0: here an assertion, the
 * property "at most one worker in the mode". The CAS is the only step another worker can
 * observe, so the three are one step. BROKEN_PLAIN_ENTER reads, then writes. */
inline try_enter(me)
{
#ifdef BROKEN_PLAIN_ENTER
	if
	:: distributor == DIST_NONE ->
		atomic {
			distributor = me;
			assert(nmode == 0);
			nmode++;
			inmode = true
		}
	:: else -> skip
	fi
#else
	atomic {
		if
		:: distributor == DIST_NONE ->
			distributor = me;
			assert(nmode == 0);     /* fetch_add(&d->in_mode, 1) != 0: count(nr_overlap) */
			nmode++;
			inmode = true;
#ifdef OBSERVE_II2
			ii2_by = NOBODY
#else
			skip
#endif
		:: else -> skip
		fi
	}
#endif
}

/* distribution_pop (distribution.c:170-182), (c): lower the `handed` hint (its load and store
 * are one step here: the store writes false whatever came between), ws_pop (the ring only:
 * the sticky queue, PTL and stash are not modelled), and a distributor that got work of its
 * own leaves the mode (not the dedicated one). */
inline policy_pop(me, got)
{
	POP_STEP {
#ifdef HANDED_ON_TAKE
		q_take(LOCAL(me), got);
		CLEAR_HANDED(me, got);
#else
		handed[me] = false;
		q_take(LOCAL(me), got);
#endif
		if
		:: got && inmode && !(DED && me == 0) -> leave(me)
		:: else -> skip
		fi
	}
}

/* distribution_steal (distribution.c:185-189), (d): nothing for the distributor, otherwise
 * ws_steal's sweep over the other rings (from the worker after the thief; its start only
 * decides which task a thief takes). */
inline policy_steal(me, got, k, v)
{
	if
	:: inmode -> got = 0
	:: else ->
		POP_STEP {
			got = 0;
			k = 1;
			do
			:: k < N && !got -> v = AFTER(me, k); q_take(LOCAL(v), got); k++
			:: else -> break
			od;
			k = 0;
			v = 0
		}
	fi
}

/* One victim of steal_for_handoff (distribution.c:194-205): skipped while its `handed` is
 * up (a relaxed load), else ws_steal_from (an sb_mpmc pop). */
inline handoff_from(me, k, got)
{
	if
	:: !got && !handed[AFTER(me, k)] -> q_take(LOCAL(AFTER(me, k)), got)
	:: else -> skip
	fi
}

/* One candidate of find_deactivated (distribution.c:208-216): sb_worker_suspended, a relaxed
 * load of the state word. */
#define DEACTIVATED(me, k, v) v = (v == NO_WORKER && state[AFTER(me, k)] == SUSPENDED -> AFTER(me, k) : v)

/* others_active(d, me) (distribution_mode.c): sb_nsuspended(rt) + 1 < n, not counting the
 * caller when it is itself suspended (suspend()'s re-check): two relaxed loads, one step. */
#define OTHERS_ACTIVE (nsusp - (nsusp > 0 && state[me] == SUSPENDED) + 1 < N)

/*
 * distribution_idle (distribution.c:218-278). got: the task returned (run by the caller);
 * iowake: out->wake; stay: out->stay_awake; cap: out->max_suspend_us != 0. ws_idle first sets
 * the cap only when the worker's PTL holds tasks: no PTL here. With FAST_POP each IDLE_STEP
 * is one step (README, "abstractions"); otherwise every shared read and write is a step.
 */
inline policy_idle(me, got, iowake, stay, cap)
{
	got = 0;
	stay = false;
	cap = false;
	iowake = NO_WORKER;
	if
	:: !inmode ->
		/* (e) with (i-3) applied first: others_active() && try_enter(); else (f), which a
		 * worker that has announced its deactivation (suspend()'s re-check) also takes */
		IDLE_STEP {
			if
#ifdef BROKEN_RECHECK_ENTER
			:: !DED && OTHERS_ACTIVE -> try_enter(me)
#else
			:: !DED && state[me] != SUSPENDED && OTHERS_ACTIVE -> try_enter(me)
#endif
			:: else -> skip
			fi
		}
	:: else -> skip
	fi;
	if
	:: inmode ->
		IDLE_STEP {
			/* (i), :233: steal_for_handoff, from self + 1 */
			POP_STEP {
				handoff_from(me, 1, got);
#if N >= 3
				handoff_from(me, 2, got);
#endif
				skip
			};
			/* nothing stolen: (i-2) if others_active(), :260 */
			if
			:: !got -> stay = OTHERS_ACTIVE
			:: else -> skip
			fi
		};
		if
		:: got ->
			IDLE_STEP {
				/* (ii), :239: find_deactivated, from self + 1 */
				POP_STEP {
					DEACTIVATED(me, 1, iowake);
#if N >= 3
					DEACTIVATED(me, 2, iowake);
#endif
					skip
				};
				if
				:: iowake != NO_WORKER ->
					/* :240-246: store handed, then ws_push (claim, publish), out->wake,
					 * out->stay_awake; the core wakes io.wake after the callback
					 * returns (worker_main, suspend_idle in sched.pml) */
					handed[iowake] = true;
					q_claim_moved(LOCAL(iowake), hpos);
					atomic { q_publish(LOCAL(iowake), hpos); HANDOFF_PULSE };
					got = 0;
					stay = true
				:: else -> skip
				fi
			};
			HANDOFF_PULSE_END;
#ifdef BROKEN_HANDOFF_NO_WAKE
			iowake = NO_WORKER;
#endif
			if
			:: got && !DED ->
				/* (ii-2), :255-258: nobody deactivated: leave the mode and run the task
				 * here (the dedicated distributor runs it without leaving) */
#ifdef OBSERVE_II2
				atomic { leave(me); ii2_by = me }
#else
				leave(me)
#endif
			:: else -> skip
			fi
		:: !got && !stay ->
			/* (i-3), :271-276: no other worker active: leave the mode and deactivate; the
			 * dedicated distributor stays and caps its sleep at distributor_poll_us */
			if
			:: DED -> cap = true
			:: else ->
#ifdef OBSERVE_I3
				/* the memo's race (i-3): is another worker active when the mode is left? */
				atomic { i3_alone = !OTHERS_ACTIVE; assert(i3_alone); leave(me) }
#else
				leave(me)
#endif
			fi
		:: else -> skip       /* (i-2), :262: the busy loop */
		fi
	:: else -> skip           /* (f) */
	fi;
#ifdef OBSERVE_II2
	/* the memo's race (ii-2): a worker other than the one that left the mode at (ii-2)
	 * decides to sleep (in suspend(): its state is SUSPENDED) while nobody has entered the
	 * mode since */
	atomic {
		ii2_covered = !(!got && !stay && state[me] == SUSPENDED && ii2_by != NOBODY && ii2_by != me);
		assert(ii2_covered)
	}
#else
	skip
#endif
}

/* The body of every task (sb_run): it may spawn one task (sb_spawn -> sb_place) to any
 * worker but a dedicated distributor, then returns and finish() counts it done. */
inline task_body(me, q, pos, early, k, v, prev)
{
	if
	:: atomic {
		spawn_left > 0 -> spawn_left--;
#ifdef SPAWN_OWN
		/* the default placement: the spawning worker's own LTQ (ws_submit); the dedicated
		 * distributor's spawns go to another worker (distribution_submit) */
		if
		:: DED && me == 0 -> select(q : 1 .. NQ - 1)
		:: else -> q = LOCAL(me)
		fi;
#else
		select(q : FIRST_TARGET .. NQ - 1);
#endif
		place_claim(q, pos, early)
	   };
		place_finish(q, me, pos, early, k, v, prev)
	:: skip
	fi;
	done++
}

active [N] proctype worker()
{
	byte me = _pid;
	byte got, rounds, q, pos, early, k, v, prev, iowake = NO_WORKER, hpos;
	bool cap, stay;
	bool inmode = (DED && _pid == 0);    /* distribution_create */
	worker_main(me, got, rounds, q, pos, early, k, v, prev, cap, iowake, stay);
	nexit++
}

active proctype request()
{
	byte i, q, pos, early, k, v, prev;
	do
	:: i < REQ ->
		atomic { select(q : FIRST_TARGET .. NQ - 1); place_claim(q, pos, early) };
		place_finish(q, NOBODY, pos, early, k, v, prev);
		i++
	:: else -> break
	od;
	submitted = true;
#ifdef QUIET
	(false);   /* never stops: what the workers do once every task has run is ltl quiet's */
#endif
	i = 0;
	/* sb_rt_stop: wait until every job has finished */
	(done == pushed);
	/* join_workers: stopping = true, (fence), wake_all, pthread_join each */
	stopping = true;
	wake_all(i);
	(nexit == N);
	do
	:: i < NQ -> assert(qout[i] == qcl[i]); i++
	:: else -> break
	od
}

/* No lost task: whenever a task is pending, eventually every task pushed so far has run. */
ltl all_run { [] ((done < pushed) -> <> (done == pushed)) }
/* The stop path terminates: every worker leaves worker_main. */
ltl stops { <> (nexit == N) }
/* The stop path, once begun, terminates (whether the jobs finish is all_run's question). */
ltl stop_ends { [] (stopping -> <> (nexit == N)) }
#ifdef FINITE_HANDOFFS
/* No lost task, unless tasks are handed off for ever (README, "findings") */
ltl all_run_fin { (<> [] !hoff) -> [] ((done < pushed) -> <> (done == pushed)) }
#endif
#if defined(QUIET) && N == 2
/* Once every task has run, the workers fall asleep: no endless trade of the mode between the
 * last two awake workers (BROKEN_RECHECK_ENTER) and no other busy loop without an end. */
ltl quiet { [] ((submitted && done == pushed) -> <> (fwait[0] && fwait[1])) }
#endif
