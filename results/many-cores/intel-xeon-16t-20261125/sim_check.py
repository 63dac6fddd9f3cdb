# sim_check.py - the simulator, charged with the 16-core cost table, against the native 16-core scaling runs
# of three cases (stealing): throughput per worker count. Run from the checkout root with /usr/bin/python3.
import json, subprocess, sys, statistics as st
sys.path.insert(0, 'scripts')
from scale import fib_calls
native = {}
import csv, gzip
for r in csv.DictReader(open('results/scale/intel-xeon-16t-20261125/scale.csv')):
    if r['case'] in ('fib-lifo', 'fib', 'uts-lifo', 'tiny') and r['system'] == 'stealing':
        native[(r['case'], int(r['workers']))] = float(r['throughput'])
cases = {'fib-lifo': ['which=fib', 'local_order=lifo'], 'fib': ['which=fib'], 'tiny': []}
for case, sets in cases.items():
    for w in (1, 2, 4, 8, 16):
        vals = []
        for seed in (1, 2, 3):
            out = f'/tmp/simfj/{case}-w{w}-s{seed}'
            args = ['build/release/schedbed', 'run', '--executor', 'sim', '--sim-costs', 'results/many-cores/intel-xeon-16t-20261125/costs.txt',
                    '--policy', 'stealing', '--workload', 'tiny' if case == 'tiny' else 'forkjoin', '--threads', str(w),
                    '--seed', str(seed), '--duration', '0.2', '--warmup', '0.05', '--quiet', '--rows', '0', '--out', out]
            for s in sets:
                args += ['--set', s]
            subprocess.run(args, check=True, capture_output=True)
            s = json.load(open(out + '/summary.json'))
            if case == 'tiny':
                vals.append(s['throughput'])
            else:
                r = s['reconciliation']
                vals.append(s['tasks_per_s'] * fib_calls(24) / (r['tasks_created'] / r['jobs_done']))
        sim = st.median(vals)
        nat = native[(case, w)]
        print(f'{case:9s} w{w:<3d} native {nat:12.4g}  sim {sim:12.4g}  error {100 * (sim - nat) / nat:+7.1f}%', flush=True)
