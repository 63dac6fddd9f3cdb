/*
 * wake.pml - the searching-worker wake protocol of core/worker.c (sb_publish,
 * sb_wake_searcher, sb_wake_worker, suspend, found_work) under store buffering, the one
 * reordering x86 does and the one the protocol's barriers exist for.
 *
 * Memory. Every thread (workers 0..N-1, the request thread N) has a store buffer for its task
 * pushes: buf[p] pushes are visible to p (store forwarding: the owner pops its own queue) but
 * to nobody else until the `memory` process drains them, at any moment, or p drains them
 * itself: a locked RMW (the counts, the CASes) or a seq_cst fence (mfence). The counts and the
 * worker state words are written only by RMWs and by stores followed by an RMW of the same
 * thread (suspend's state store comes before its nsearching decrement or its barrier), so they
 * are modelled as visible at once. The sleeper's barrier (W) is membarrier: it drains every
 * thread's buffer (the IPI runs a full barrier on each CPU running a thread of the process; a
 * thread not running has passed a context switch, which is one). With FENCE it is the fallback:
 * the producer drains its own buffer after its push ((P) = seq_cst fence), the sleeper only its
 * own. Tasks have no identity and every queue here is stealable: one pool, `avail`, plus the
 * buffers (sticky, owner-only queues are idle.pml's subject).
 *
 * Options: N (2 or 3), REQ (request-thread pushes: each targeted at worker 0, as a push to its
 * queue, or untargeted, as SB_TO_ANY), SPAWN (pushes by task bodies onto the spawner's own
 * queue), TRY (worker_try_count), TIMEOUTS (any futex wait may end on its own), FENCE (the
 * fallback barriers). Broken on purpose, and refuted: BROKEN_NO_BARRIER (membarrier mode, but
 * the sleeper skips it: store buffering loses a wake-up), BROKEN_OLD_RULE (a spawn onto one's
 * own queue wakes nobody, as before issue 9: work waits beside a sleeper), BROKEN_NO_UNDO_RECHECK
 * (an elected waker that finds nobody asleep undoes its count and leaves).
 *
 * Properties: the safety run checks the `monitor` assertions -- IDLE: never work queued, a
 * worker blocked in FUTEX_WAIT, and nobody awake, searching, re-checking or publishing (issue
 * 9's "nobody running or searching"); with PAR the stronger: never more tasks queued than
 * awake workers not running a task, beside a blocked worker, while nobody searches, re-checks
 * or publishes (no lost parallelism) -- and,
 * through invalid end states, that nothing deadlocks and the stop ends. LTL: all_run (every
 * pushed task runs) and stops (every worker leaves), under weak fairness.
 */

#ifndef N
#define N 2
#endif
#ifndef REQ
#define REQ 1
#endif
#ifndef SPAWN
#define SPAWN 2
#endif
#ifndef TRY
#define TRY 0
#endif

#define ACTIVE    0
#define SUSPENDED 1
#define SEARCH    2
#define NP        (N + 1)      /* threads with a store buffer; the request thread is N */

byte state[N];     /* w->state, the futex word */
bool fwait[N];     /* blocked in FUTEX_WAIT */
byte nsusp;        /* rt->nsuspended */
byte nsearch;      /* rt->nsearching */
bool stopping;
byte avail;        /* pushed tasks visible to all */
byte buf[NP];      /* pushes still in thread p's store buffer */

/* bookkeeping for the properties */
byte pushed, done, nexit;
byte spawn_left = SPAWN;
bool aw[N];        /* awake, not counted as searching, will pop again before it sleeps */
bool inbody[N];       /* running a task body */
byte inpub;        /* threads between a push (or a dropped count) and the end of their wake check */
byte nrecheck;     /* sleepers between dropping their count and committing to the wait */

#define BLOCKED_ANY (fwait[0] || fwait[1] || (N > 2 && fwait[N - 1]))
#define AW_ANY      (aw[0] || aw[1] || (N > 2 && aw[N - 1]))
#define IDLE_AW(i)  (aw[i] && !inbody[i])
/* awake workers that are not running a task: each will take a queued task before it sleeps */
#define NIDLE_AW    (IDLE_AW(0) + IDLE_AW(1) + (N > 2 && IDLE_AW(N - 1)))

inline drain(p)
{
	avail = avail + buf[p];
	buf[p] = 0
}

inline drain_all()
{
	drain(0); drain(1); drain(2);
	if
	:: N > 2 -> drain(3)
	:: else -> skip
	fi
}

/* sb_futex_wake: the woken worker is awake (a waker that does this holds it counted as
 * searching when it set SEARCH: see the exchange after the wait) */
inline futex_wake(i)
{
	skip;
	atomic {
		if
		:: fwait[i] -> fwait[i] = false; aw[i] = true
		:: else -> skip
		fi
	}
}

/* one pop or steal sweep: own buffer (forwarded), else any visible task */
inline pop(me, got)
{
	atomic {
		if
		:: buf[me] > 0 -> buf[me]--; got = 1
		:: avail > 0 -> avail--; got = 1
		:: else -> got = 0
		fi
	}
}

/* sb_wake_searcher, run by thread p */
inline wake_searcher(p, k, v, won)
{
	do
	:: /* CAS nsearching 0 -> 1 (locked: drains p's buffer) */
		atomic {
			drain(p);
			if
			:: nsearch == 0 -> nsearch = 1; won = 1
			:: else -> won = 0
			fi
		};
		if
		:: !won -> break           /* a searcher exists */
		:: else -> skip
		fi;
		/* wake_one: from any start, CAS SUSPENDED -> SEARCH, then FUTEX_WAKE */
		atomic { select(v : 0 .. N - 1) };
		k = 0;
		won = 0;
		do
		:: k < N && !won ->
			atomic {
				if
				:: state[v] == SUSPENDED -> state[v] = SEARCH; won = 1
				:: else -> skip
				fi
			};
			if
			:: won -> futex_wake(v)
			:: else -> skip
			fi;
			k++;
			v = (v + 1) % N
		:: else -> break
		od;
		if
		:: won -> break
		:: else -> skip
		fi;
		/* nobody asleep after all: undo, full fence, look again */
		atomic { drain(p); nsearch-- };
#ifdef BROKEN_NO_UNDO_RECHECK
		break
#else
		if
		:: nsusp == 0 || nsearch > 0 -> break
		:: else -> skip
		fi
#endif
	od;
	k = 0; v = 0; won = 0
}

/* sb_need_searcher: two relaxed loads, in either order (relaxed loads of two locations may be
 * reordered; the code loads nsearching first), then the wake */
inline need_searcher(p, k, v, won)
{
	skip;
	if
	:: true -> /* nsuspended first, as the code */
		if
		:: nsusp > 0 ->
			if
			:: nsearch == 0 -> wake_searcher(p, k, v, won)
			:: else -> skip
			fi
		:: else -> skip
		fi
	:: true -> /* nsearching first */
		if
		:: nsearch == 0 ->
			if
			:: nsusp > 0 -> wake_searcher(p, k, v, won)
			:: else -> skip
			fi
		:: else -> skip
		fi
	fi
}

/* sb_place for a push onto the caller's own queue: push (store into the buffer), (P), check */
inline publish_own(me, k, v, won)
{
	atomic { buf[me]++; pushed++; inpub++ };
#ifdef FENCE
	atomic { drain(me) };     /* (P) atomic_thread_fence(seq_cst) */
#endif
	/* (P) otherwise a compiler barrier: the sleepers' membarrier orders us */
#ifndef BROKEN_OLD_RULE
	need_searcher(me, k, v, won);
#endif
	inpub--
}

/* suspend() and the wake-up exchange; got = a task found by the re-check */
inline suspend(me, got, searching, prev, k, v, won)
{
	atomic { drain(me); nsusp++ };           /* fetch_add: locked */
	state[me] = SUSPENDED;
	if
	:: searching -> atomic { drain(me); nsearch--; searching = 0; aw[me] = true; nrecheck++ }
	:: else -> nrecheck++
	fi;
	/* (W) */
#ifdef FENCE
	atomic { drain(me) }
#else
#ifndef BROKEN_NO_BARRIER
	atomic { drain_all() }                  /* membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) */
#endif
#endif
	skip;
	pop(me, got);                           /* the re-check: pop, steal sweep (one pool) */
	if
	:: !got && !stopping ->
		atomic {
			nrecheck--;
			if
			:: state[me] == SUSPENDED -> fwait[me] = true; aw[me] = false
			:: else -> skip              /* EAGAIN */
			fi
		};
		if
		:: !fwait[me] -> skip
#ifdef TIMEOUTS
		:: atomic { fwait[me] -> fwait[me] = false; aw[me] = true }
#endif
		fi
	:: else -> nrecheck--
	fi;
	atomic {
		prev = state[me]; state[me] = ACTIVE;
		if
		:: prev == SEARCH -> searching = 1; aw[me] = false   /* counted by the waker */
		:: else -> skip
		fi
	};
	atomic { drain(me); nsusp-- };
	/* a re-check that found work finishes as a searcher that found work */
	if
	:: got && !searching -> atomic { drain(me); nsearch++; searching = 1; aw[me] = false }
	:: else -> skip
	fi;
	prev = 0
}

proctype worker(byte me)
{
	byte got, rounds, prev, k, v, won, c;
	bool searching;
top:
	pop(me, got);
	if
	:: got -> goto found
	:: else -> skip
	fi;
	/* local miss: start_searching */
	if
	:: !searching -> atomic { drain(me); nsearch++; searching = 1; aw[me] = false }
	:: else -> skip
	fi;
	if
	:: stopping -> goto finished
	:: else -> skip
	fi;
	pop(me, got);                           /* find_more: the steal sweep */
	if
	:: got -> goto found
	:: else -> skip
	fi;
	if
	:: rounds >= TRY -> rounds = 0
	:: else -> rounds++; goto top
	fi;
	suspend(me, got, searching, prev, k, v, won);
	if
	:: got -> goto found
	:: else -> goto top
	fi;
found:
	rounds = 0;
	if
	:: searching ->
		/* found_work: drop the count; the last searcher wakes the next if somebody sleeps */
		atomic { drain(me); c = nsearch; nsearch--; searching = 0; aw[me] = true; inpub++ };
		if
		:: c == 1 && nsusp > 0 -> wake_searcher(me, k, v, won)
		:: else -> skip
		fi;
		inpub--;
		c = 0
	:: else -> skip
	fi;
	/* the task body: may spawn onto our own queue */
	inbody[me] = true;
	if
	:: atomic { spawn_left > 0 -> spawn_left-- }; publish_own(me, k, v, won)
	:: skip
	fi;
	atomic { done++; inbody[me] = false };
	got = 0;
	goto top;
finished:
	if
	:: searching -> atomic { nsearch--; searching = 0 }
	:: else -> skip
	fi;
	aw[me] = false;
	nexit++
}

init {
	byte i;
	atomic {
		i = 0;
		do
		:: i < N -> aw[i] = true; run worker(i); i++
		:: else -> break
		od;
		i = 0
	}
}

active proctype request()
{
	byte i, k, v, won;
	do
	:: i < REQ ->
		atomic { buf[N]++; pushed++; inpub++ };
#ifdef FENCE
		atomic { drain(N) };
#endif
		if
		:: /* onto worker 0's queue: sb_wake_worker(rt, 0, stealable) */
			if
			:: state[0] == SUSPENDED ->
				atomic { drain(N); nsearch++ };     /* counted before the wake */
				atomic {
					if
					:: state[0] == SUSPENDED -> state[0] = SEARCH; won = 1
					:: else -> won = 0
					fi
				};
				if
				:: won -> futex_wake(0)
				:: else ->
					/* it woke by itself: undo, fence, look again */
					atomic { drain(N); nsearch-- };
					need_searcher(N, k, v, won)
				fi
			:: else -> need_searcher(N, k, v, won)
			fi
		:: /* SB_TO_ANY: sb_publish */
			need_searcher(N, k, v, won)
		fi;
		won = 0;
		inpub--;
		i++
	:: else -> break
	od;
	(done == pushed);
	/* join_workers: stopping, seq_cst fence, wake_all */
	stopping = true;
	atomic { drain(N) };
	i = 0;
	do
	:: i < N ->
		atomic {
			if
			:: state[i] == SUSPENDED -> state[i] = ACTIVE
			:: else -> skip
			fi
		};
		futex_wake(i);
		i++
	:: else -> break
	od;
	(nexit == N);
	assert(avail == 0 && buf[0] == 0 && buf[1] == 0 && buf[N] == 0)
}

/* the hardware: any buffered store may reach memory at any moment */
active proctype memory()
{
end:
	do
	:: atomic { buf[0] > 0 -> buf[0]--; avail++ }
	:: atomic { buf[1] > 0 -> buf[1]--; avail++ }
	:: atomic { buf[2] > 0 -> buf[2]--; avail++ }
	:: atomic { N > 2 && buf[3] > 0 -> buf[3]--; avail++ }
	od
}

active proctype monitor()
{
end:
	atomic {
		!stopping && avail > 0 && BLOCKED_ANY && nsearch == 0 && inpub == 0 && nrecheck == 0 &&
#ifdef PAR
		avail > NIDLE_AW
#else
		!AW_ANY
#endif
		-> assert(false)
	}
}

ltl all_run { [] ((done < pushed) -> <> (done == pushed)) }
ltl stops { <> (nexit == N) }
