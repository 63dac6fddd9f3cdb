"""busy-per-task.csv from runs.csv: per case and side, the runs' median worker busy time per task
(the one worker's busy_ns over its tasks) and median jobs/s. Run here: python3 summarize.py."""
import csv
import statistics as st
from collections import defaultdict

g = defaultdict(list)
for r in csv.DictReader(open('runs.csv')):
    g[(r['case'], r['side'], r['policy'], r['sets'])].append(r)
with open('busy-per-task.csv', 'w', newline='') as f:
    w = csv.writer(f)
    w.writerow(['case', 'side', 'policy', 'sets', 'runs', 'jobs_per_s', 'worker_busy_ns_per_task'])
    for k in sorted(g):
        rows = g[k]
        w.writerow(list(k) + [len(rows), round(st.median(float(r['jobs_per_s']) for r in rows)),
                              round(st.median(float(r['worker_busy_ns_per_task']) for r in rows))])
