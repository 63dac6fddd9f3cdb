#!/usr/bin/python3
"""placement.py - where the kernel ran each thread schedbed woke, from `perf script -F
comm,tid,cpu,time,event,trace` of sched:sched_switch and sched:sched_waking on stdin.

For every wake-up of one schedbed thread by another (sched_waking, emitted on the waker's CPU) it
finds the wakee's next switch-in: on the waker's CPU or another, how long after the wake, and
whether another CPU was idle at the wake. Then, for every schedbed thread switched out while
runnable (preempted), how long until it ran again and where. Threads are told apart by their
role in the wake-ups (no names: every thread is `schedbed`)."""
import collections
import re
import sys

LINE = re.compile(r"\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)")


def pct(v):
    v = sorted(v)
    return " / ".join(f"{v[min(len(v) - 1, int(q * len(v)))]:.0f}" for q in (0.1, 0.5, 0.9)) if v else "-"


def main():
    cur, pend, pre = {}, {}, {}
    wakes, back = collections.defaultdict(list), collections.defaultdict(list)
    for line in sys.stdin:
        m = LINE.match(line)
        if not m:
            continue
        comm, _, cpu, t, ev, rest = m.groups()
        cpu, t = int(cpu), float(t) * 1e6
        idle_other = any(c != cpu and not p for c, p in cur.items())
        if ev == "sched_waking" and comm == "schedbed":
            w = re.search(r"comm=(\S+) pid=(\d+)", rest)
            if w.group(1) == "schedbed":
                pend[int(w.group(2))] = (t, cpu, idle_other)
        elif ev == "sched_switch":
            s = re.search(r"prev_comm=(.*?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=.*? next_pid=(\d+)", rest)
            nxt = int(s.group(4))
            if nxt in pend:
                t0, wcpu, idle = pend.pop(nxt)
                wakes[("on the waker's CPU" if cpu == wcpu else "on another CPU",
                       "another CPU idle" if idle else "every other CPU busy")].append(t - t0)
            if nxt in pre:
                t0, c0, idle = pre.pop(nxt)
                back[("on its own CPU" if cpu == c0 else "moved", "another CPU idle" if idle else "every other CPU busy")].append(t - t0)
            if s.group(1) == "schedbed" and s.group(3).startswith("R"):
                pre[int(s.group(2))] = (t, cpu, idle_other)
            cur[cpu] = nxt
    print("wake-ups of a schedbed thread by another: where the wakee ran | at the wake | count | us to run p10 / p50 / p90")
    for k, v in sorted(wakes.items()):
        print(f"  {k[0]:20s} | {k[1]:21s} | {len(v):5d} | {pct(v)}")
    print("preempted schedbed threads: where they ran again | at the preemption | count | us waiting p10 / p50 / p90")
    for k, v in sorted(back.items()):
        print(f"  {k[0]:20s} | {k[1]:21s} | {len(v):5d} | {pct(v)}")


main()
