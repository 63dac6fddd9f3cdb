/*
 * sched.pml - what every schedbed model shares: the worker state word and its futex, the
 * task queues with their publication windows, the producer's half of the wake protocol
 * (sb_place, sb_wake_worker, sb_wake_any), suspend() and the worker loop (core/worker.c,
 * core/queue.h, core/task.c). Before including it a model defines N (workers) and its queue
 * layout: NQ, SHARED (the SB_TO_ANY queue, or NQ if none), OWNER(q), IS_MPSC(q), NOBODY (the
 * caller index of a thread that is no worker); afterwards it supplies its policy as the
 * inlines worker_main names (policy_pop, policy_steal, task_body, policy_idle) and writes its
 * producers from place_claim and place_finish. models/README.md, "adding a model".
 *
 * Memory model: Spin interleaves whole statements, so every model is sequentially consistent.
 * models/README.md says for which variables the seq_cst fences of the C code make that exact
 * and where it is an abstraction. The fences themselves appear as comments: under SC they
 * order nothing that is not already ordered.
 *
 * Tasks carry no identity: a queue is a count of claimed positions, a bit per position that
 * says "published", and a count of positions taken. That is all the wake protocol looks at.
 */

/* enum sb_worker_state (core/rt.h) */
#define ACTIVE    0
#define SUSPENDED 1

/* One waiter per futex word: only worker i ever calls futex_wait on w[i].state, so
 * FUTEX_WAKE(1) on that word means "clear worker i's waiting flag". */
byte state[N];     /* rt->w[i].state, the futex word */
bool fwait[N];     /* worker i is blocked in FUTEX_WAIT on state[i] */
byte nsusp;        /* rt->nsuspended */
bool stopping;     /* rt->stopping */

/* Queues. Position p of queue q is claimed when a producer has taken its place in the
 * queue's order (sb_mpmc: the CAS on enq; sb_mpsc: nr_in++ and the exchange of head) and
 * published when a consumer can reach it (sb_mpmc: the release store of the cell's seq;
 * sb_mpsc: the release store linking prev->next). Between the two is the producer's window:
 * the task is counted but a pop returns NULL. */
byte qcl[NQ];      /* positions claimed */
byte qpub[NQ];     /* bit p: position p published */
byte qout[NQ];     /* positions taken (the consumer's tail / deq) */

/* Bookkeeping for the properties (no counterpart in the C code). */
byte pushed;       /* tasks claimed so far, every queue */
byte done;         /* tasks whose body has returned (finish(): the job's count drops) */

#define PUB(q, p) ((qpub[q] >> (p)) & 1)

/*
 * Can a pop of q return a task now?
 *  sb_mpmc_pop_batch: the cell at deq is ready (seq == pos + 1), whatever follows it.
 *  sb_mpsc_pop (Vyukov): the node at tail must be linked in, and it is handed out only when
 *  its own next is linked too or it is the head (then the consumer pushes the stub behind it).
 *  So an mpsc consumer also sees nothing when position p is fully published but the producer
 *  of p + 1 is between its exchange and its link: "a producer is mid-push; it will wake us".
 */
#define TAKEABLE(q) (qout[q] < qcl[q] && PUB(q, qout[q]) && \
                     (!IS_MPSC(q) || qout[q] + 1 >= qcl[q] || PUB(q, qout[q] + 1)))

/* One pop attempt on q, as one step. The pops of core/queue.h read several words, but the
 * outcome is fixed by the first read that finds a position unpublished (returns NULL) or the
 * read that finds it published (returns it); placing the whole pop at that read gives the same
 * interleaving for everything the wake protocol observes. */
inline q_take(q, got)
{
	atomic {
		if
		:: TAKEABLE(q) -> qout[q]++; got = 1
#ifdef Q_RECYCLE
			/* An emptied queue starts again at position 0. Sound: when every claimed
			 * position has been taken, each was published and no producer is inside its
			 * window (its position would still be untaken), so an empty queue is the same
			 * whatever its history. Needed by models whose tasks move between queues
			 * without bound (distribution.pml's hand-offs); idle.pml leaves it off. */
			if
			:: qout[q] == qcl[q] -> qcl[q] = 0; qout[q] = 0; qpub[q] = 0
			:: else -> skip
			fi
#endif
		:: else -> got = 0
		fi
	}
}

/* The producer's first half: sb_mpmc_push's CAS on enq, or sb_mpsc_push's nr_in++ and
 * exchange of head (merged: a consumer between the two sees the same NULL as after the
 * exchange, and sb_mpsc_empty's nr_in test only decides whether to call pop at all). */
inline q_claim(q, pos)
{
	atomic {
		pos = qcl[q];
		qcl[q]++;
		pushed++;
		assert(qcl[q] <= 7)
	}
}

/* q_claim for a task that moves from one queue to another (a distributor's hand-off: it was
 * taken from a queue and is pushed again): the same claim, but not a new task for `pushed`. */
inline q_claim_moved(q, pos)
{
	atomic {
		pos = qcl[q];
		qcl[q]++;
		assert(qcl[q] <= 7)
	}
}

/* The producer's second half: the release store that lets a consumer reach the task. */
inline q_publish(q, pos)
{
	qpub[q] = qpub[q] | (1 << pos);
	pos = 0
}

/* sb_futex_wake(&w[i].state, 1) */
inline futex_wake(i)
{
	fwait[i] = false
}

/*
 * sb_futex_wait(&w[me].state, SUSPENDED, timeout): the kernel compares the word and queues
 * the waiter as one step (the hash-bucket lock makes the compare and a concurrent FUTEX_WAKE
 * mutually exclusive), then the thread blocks until a FUTEX_WAKE clears its flag. With
 * TIMEOUTS defined the wait may also end on its own at any moment (worker_suspend_timeout
 * passing, or a spurious return such as EINTR); without it, only a wake-up ends it, which is
 * what makes a lost wake-up visible as a worker blocked for ever. `capped` enables the
 * timeout for this one wait (a policy's max_suspend_us, which is part of the design).
 */
inline futex_wait(me, capped)
{
	atomic {
		if
		:: state[me] == SUSPENDED -> fwait[me] = true
		:: else -> skip /* EAGAIN: the word changed before the call */
		fi
	};
	if
	:: !fwait[me] -> skip
#ifdef TIMEOUTS
	:: atomic { fwait[me] -> fwait[me] = false }
#endif
	:: atomic { capped && fwait[me] -> fwait[me] = false }
	fi
}

/* wake() in core/worker.c: the exchange elects one waker, which alone issues FUTEX_WAKE. */
inline wake(i, prev)
{
	atomic { prev = state[i]; state[i] = ACTIVE };
	if
	:: prev == SUSPENDED -> futex_wake(i)
	:: else -> skip
	fi;
	prev = 0
}

/*
 * What the producer's fence-then-read sees. Correct code reads after its fence (P), so after
 * its push; with BROKEN_EARLY_READ the value is read before the push (in place_claim), which
 * is what dropping the fence permits on real hardware: the load passes the buffered stores of
 * the push.
 */
#ifdef BROKEN_EARLY_READ
#define SEEN_SUSPENDED(i) (early != 0)
#define SEEN_NSUSP        (early != 0)
#else
#define SEEN_SUSPENDED(i) (state[i] == SUSPENDED)
#define SEEN_NSUSP        (nsusp != 0)
#endif

/* sb_wake_worker(rt, i), called by sb_place after the push. */
inline wake_worker(i, prev)
{
	/* (P) atomic_thread_fence(seq_cst): pairs with (W) in suspend() */
	if
	:: SEEN_SUSPENDED(i) -> wake(i, prev)
	:: else -> skip
	fi
}

/* sb_wake_any(rt), called by place_special for SB_TO_ANY after the push. The scan starts at
 * wake_rr++ % n; any start is allowed here, which covers every value of the counter. A worker
 * is taken only if the load sees it SUSPENDED and the exchange still does (another waker may
 * have come between). */
inline wake_any(k, v, prev)
{
	/* (P) atomic_thread_fence(seq_cst): pairs with (W) in suspend() through nsuspended */
	if
	:: !SEEN_NSUSP -> skip
	:: else ->
		atomic { select(v : 0 .. N - 1) };
		k = 0;
		do
		:: k < N ->
			if
			:: state[v] == SUSPENDED ->
				atomic { prev = state[v]; state[v] = ACTIVE };
				if
				:: prev == SUSPENDED -> futex_wake(v); break
				:: else -> skip
				fi
			:: else -> skip
			fi;
			k++;
			v = (v + 1) % N
		:: else -> break
		od
	fi;
	k = 0;
	v = 0;
	prev = 0
}

/* wake_all(rt) in core/worker.c (the stop path): a plain store of ACTIVE, then FUTEX_WAKE. */
inline wake_all(i)
{
	i = 0;
	do
	:: i < N ->
		state[i] = ACTIVE;
		futex_wake(i);
		i++
	:: else -> break
	od;
	i = 0
}

/* The wake half of sb_place (core/task.c): a worker target other than the caller gets
 * sb_wake_worker; SB_TO_ANY gets sb_wake_any (place_special); the caller's own queue nothing. */
inline place_wake(q, caller, early, k, v, prev)
{
	if
	:: q == SHARED -> wake_any(k, v, prev)
	:: q != SHARED && OWNER(q) != caller -> wake_worker(OWNER(q), prev)
	:: else -> skip /* where == tc->worker: the caller is that worker and will pop it */
	fi;
	early = 0
}

/*
 * sb_place (core/task.c), in two parts. place_claim is the start of sb_policy_submit's push;
 * the caller runs it in one atomic step together with its choice of queue (which only the
 * calling thread sees). place_finish publishes the task and then wakes: (P) in sb_wake_worker
 * or sb_wake_any comes after the push has completed.
 */
inline place_claim(q, pos, early)
{
#ifdef BROKEN_EARLY_READ
	early = (q == SHARED -> nsusp != 0 : state[OWNER(q)] == SUSPENDED);
#endif
	q_claim(q, pos)
}

inline place_finish(q, caller, pos, early, k, v, prev)
{
#ifdef BROKEN_WAKE_BEFORE_LINK
	/* the wake issued inside the producer's window, before the task can be reached */
	place_wake(q, caller, early, k, v, prev);
	q_publish(q, pos);
#else
	q_publish(q, pos);
	/* (P) atomic_thread_fence(seq_cst) in sb_wake_worker / sb_wake_any */
	place_wake(q, caller, early, k, v, prev);
#endif
	q = 0
}

/*
 * suspend() in core/worker.c. `policy_pop` is the including model's sb_policy_pop. Returns
 * (in got) a task found by the re-check. `capped`: the policy asked for a bounded sleep
 * (io.max_suspend_us), which lets the wait time out even when TIMEOUTS is not defined.
 */
inline suspend(me, got, prev, capped)
{
	nsusp++;                  /* atomic_fetch_add(&rt->nsuspended, 1) */
	state[me] = SUSPENDED;    /* atomic_store(&w->state, SB_W_SUSPENDED) */
	/* (W) atomic_thread_fence(seq_cst): pairs with (P) in sb_wake_worker / sb_wake_any */
#ifdef BROKEN_NO_RECHECK
	got = 0;
#else
	policy_pop(me, got);      /* t = sb_policy_pop(rt, w->idx) */
#endif
	if
	:: !got && !stopping ->   /* if (!t && !stopping) */
		futex_wait(me, capped)
	:: else -> skip
	fi;
	atomic { prev = state[me]; state[me] = ACTIVE };  /* atomic_exchange(&w->state, ACTIVE) */
	nsusp--;                  /* atomic_fetch_sub(&rt->nsuspended, 1) */
	prev = 0
}

#ifndef TRY
#define TRY 0            /* worker_try_count: empty rounds before suspending */
#endif
#ifndef SUSPEND_CAP
#define SUSPEND_CAP(me, cap) cap
#endif
#define NO_WORKER 255    /* io.wake == -1 */

#ifdef SUSPEND_RUNS_IDLE
/*
 * suspend() as core/worker.c has it since the PTL repair: after (W) the re-check is the whole
 * idle decision again, the policy's pop and then its idle step, and whether to sleep at all
 * and for how long is taken from that idle step (io.stay_awake, io.max_suspend_us), which may
 * also hand work to another worker (io.wake). For models whose policy_idle does more than cap
 * the sleep (distribution.pml); idle.pml models the same code through SUSPEND_CAP instead,
 * because stealing's idle step only sets the cap. Requires HAS_POLICY_IDLE.
 */
inline suspend_idle(me, got, prev, iowake, stay, cap)
{
	nsusp++;                  /* atomic_fetch_add(&rt->nsuspended, 1) */
	state[me] = SUSPENDED;    /* atomic_store(&w->state, SB_W_SUSPENDED) */
	/* (W) atomic_thread_fence(seq_cst): pairs with (P) in sb_wake_worker / sb_wake_any */
	policy_pop(me, got);      /* t = sb_policy_pop(rt, w->idx) */
	if
	:: !got ->
		policy_idle(me, got, iowake, stay, cap);   /* t = sb_policy_idle(rt, w->idx, &io) */
#ifdef POLICY_IDLE_WAKES
		if
		:: iowake != NO_WORKER && iowake != me -> wake_worker(iowake, prev)
		:: else -> skip
		fi;
		iowake = NO_WORKER
#else
		skip
#endif
	:: else -> skip
	fi;
	if
	:: !got && !stay && !stopping ->   /* if (!t && !io.stay_awake && !stopping) */
		futex_wait(me, cap)            /* us capped by io.max_suspend_us */
	:: else -> skip
	fi;
	stay = false;
	cap = false;
	atomic { prev = state[me]; state[me] = ACTIVE };  /* atomic_exchange(&w->state, ACTIVE) */
	nsusp--;                  /* atomic_fetch_sub(&rt->nsuspended, 1) */
	prev = 0
}
#endif

/*
 * worker_main (core/worker.c) for worker me, the loop only (start-up and exit bookkeeping
 * change no shared state). The including model supplies the policy and the tasks:
 * policy_pop(me, got), policy_steal(me, got, k, v), task_body(me, q, pos, early, k, v, prev)
 * and, if it defines HAS_POLICY_IDLE, policy_idle(me, got, iowake, stay, cap); got is 0 or 1
 * (a task). The arguments are the worker's locals (an inline has none of its own); cap is
 * io.max_suspend_us != 0. TRY is worker_try_count.
 */
inline worker_main(me, got, rounds, q, pos, early, k, v, prev, cap, iowake, stay)
{
	rounds = 0;     /* int64_t empty = 0; */
top:
	/* local(): sb_list_pop(&w->tc.serial) -- private to the worker, so left out (README) --
	 * then sb_policy_pop */
	policy_pop(me, got);
	if
	:: got -> goto running
	:: else -> skip
	fi;
	/* if (atomic_load(&rt->stopping)) break; */
	if
	:: stopping -> goto finished
	:: else -> skip
	fi;
	/* find_more: stealing_wait x thread_count more local tries (repeats of the pop above,
	 * left out), then one steal sweep */
	policy_steal(me, got, k, v);
	if
	:: got -> goto running
	:: else -> skip
	fi;
	/* t = sb_policy_idle(rt, w->idx, &io): only with HAS_POLICY_IDLE, and io.wake and
	 * io.stay_awake only with POLICY_IDLE_WAKES and POLICY_STAYS_AWAKE, so that a model
	 * whose policy uses none of them pays no states for them. policy_idle assigns each output
	 * it uses on every call (io starts as { .wake = -1 } each round). polling_wait and
	 * sb_cpu_relax change no state. */
#ifdef HAS_POLICY_IDLE
	policy_idle(me, got, iowake, stay, cap);
#ifdef POLICY_IDLE_WAKES
	if
	:: iowake != NO_WORKER && iowake != me -> wake_worker(iowake, prev)
	:: else -> skip
	fi;
	iowake = NO_WORKER;
#endif
	if
	:: got -> goto running                 /* if (t) run_here(w, t, ...) */
	:: else -> skip
	fi;
#ifdef POLICY_STAYS_AWAKE
	if
	:: stay -> stay = false; goto top      /* busy_worker || io.stay_awake */
	:: else -> skip
	fi;
#endif
#endif
	if
	:: rounds >= TRY -> rounds = 0         /* if (++empty > worker_try_count) */
	:: else -> rounds++; goto top
	fi;
#ifdef SUSPEND_RUNS_IDLE
	cap = false;   /* the main loop's io is not used by suspend(), which asks again */
	suspend_idle(me, got, prev, iowake, stay, cap);
#else
	suspend(me, got, prev, SUSPEND_CAP(me, cap));   /* us capped by io.max_suspend_us */
#endif
	if
	:: got -> goto running                 /* run_here(w, t, ...) */
	:: else -> goto top
	fi;
running:
	got = 0;
	rounds = 0;
	task_body(me, q, pos, early, k, v, prev);
	goto top;
finished:
	skip
}
