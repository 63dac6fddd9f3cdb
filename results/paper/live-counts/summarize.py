"""producers-summary.csv from producers.csv: per phase, build, executor and configuration, the runs' median
jobs/s (min, max) and median CPU per job. Run here: python3 summarize.py."""
import csv,statistics as st,collections
g=collections.defaultdict(list)
for r in csv.DictReader(open('producers.csv')):
    g[(r['phase'],r['build'],r['executor'],r['policy'],r['threads'],r['producers'])].append(r)
w=csv.writer(open('producers-summary.csv','w',newline=''))
w.writerow(['phase','build','executor','policy','threads','producers','runs','jobs_per_s','jobs_per_s_min','jobs_per_s_max','cpu_ns_per_job'])
for k in sorted(g):
    t=[float(r['jobs_per_s']) for r in g[k]]; c=[float(r['cpu_ns_per_job']) for r in g[k]]
    w.writerow(list(k)+[len(t),round(st.median(t)),round(min(t)),round(max(t)),round(st.median(c))])
