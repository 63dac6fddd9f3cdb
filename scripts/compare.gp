# compare.gp - the main comparison figure with gnuplot: throughput and p99 latency per policy.
#
#   gnuplot -e "dir='results/compare-<time>'" scripts/compare.gp
#
# Reads dir/compare.csv, written by compare.py (one row per policy: median, min and max over the
# runs), and writes dir/compare_gnuplot.png and .pdf. Bars are medians, error bars min..max.
# Knows no policy by name: the rows are whatever the comparison ran.

if (!exists("dir")) {
	print "compare.gp: give the comparison directory: gnuplot -e \"dir='results/compare-...'\" scripts/compare.gp"
	exit status 2
}
csv = dir."/compare.csv"
if (system("test -r '".csv."' && echo yes") ne "yes") {
	print "compare.gp: ".csv." is missing; run scripts/compare.py ".dir." first"
	exit status 2
}

set datafile separator ","
set key noautotitle
set style data histograms
set style histogram errorbars gap 1 lw 1.2
set style fill solid 0.85 border -1
set boxwidth 0.8
set grid ytics lc rgb "#dddddd"
set xtics rotate by -25 nomirror
set ytics nomirror
set border 3
set yrange [0:*]

do for [fmt in "png pdf"] {
	if (fmt eq "png") {
		set terminal pngcairo size 1200,480 font "sans,10"
	} else {
		set terminal pdfcairo size 10in,4in font "sans,9"
	}
	set output dir."/compare_gnuplot.".fmt
	set multiplot layout 1,2 title "Policies side by side, ".dir." (median of the runs, error bars min..max)" noenhanced

	set title "throughput"
	set ylabel "jobs/s"
	plot csv using 3:4:5:xtic(1) skip 1 lc rgb "#1f77b4"

	set title "p99 latency, all job classes"
	set ylabel "p99 latency (µs, log scale)"
	set logscale y
	set yrange [*:*]
	plot csv using 6:7:8:xtic(1) skip 1 lc rgb "#d62728"
	unset logscale y
	set yrange [0:*]

	unset multiplot
	set output
}
print dir."/compare_gnuplot.png"
