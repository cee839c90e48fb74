# Plots for docs/PERFORMANCE.md from the CSVs of sk_bench_suite.
#   gnuplot -e "dir='build/bench-results'; img='docs/img'" bench/plot.gp
# (scripts/bench.sh runs this.) Error bars are min-max over the repetitions.
if (!exists("dir")) dir = 'build/bench-results'
if (!exists("img")) img = 'docs/img'
set datafile separator ','
set terminal pngcairo size 900,500 font ',10' noenhanced
set grid ytics
set key top left

# 1. Overhead per op boundary by sync kind.
set output img.'/boundary_overhead.png'
set title 'Cost per op boundary (chain minus the unsynchronized ideal, / K); error bars clipped at 1.5 us (preemptions)'
set ylabel 'µs per boundary'
set style fill solid 0.6 border -1
set boxwidth 0.6
set xtics rotate by -25
set yrange [-0.6:1.5]
plot dir.'/boundary.csv' skip 1 using 0:6:7:8:(0.3):xtic(1) with boxerrorbars lc rgb '#4477aa' notitle, \
     0.1 with lines dt 2 lc rgb '#cc3311' title 'DESIGN §8 target 0.1 µs'

# 2. Decode step time (a)-(e), one panel per stack.
set output img.'/decode_step.png'
set terminal pngcairo size 1100,500 font ',10' noenhanced
set multiplot layout 1,2
set ylabel 'µs per decode step'
set yrange [*:*]
set logscale y
set title 'shared weights (cache resident)'
plot dir.'/decode_decode_stack_shared_weights.csv' skip 1 using 0:2:3:4:(0.3):xtic(1) with boxerrorbars lc rgb '#228833' notitle
set title 'distinct weights per layer (about 0.3 GiB, memory bound)'
plot dir.'/decode_decode_stack.csv' skip 1 using 0:2:3:4:(0.3):xtic(1) with boxerrorbars lc rgb '#aa3377' notitle
unset multiplot
unset logscale y
set yrange [*:*]

# 4. Speedup against op size.
set output img.'/speedup_vs_opsize.png'
set terminal pngcairo size 900,500 font ',10' noenhanced
set title 'SuperKernel speedup against op size (counter chain)'
set xlabel 'op duration, ideal (µs, log)'
set ylabel 'speedup (×)'
set logscale x
set xtics norotate
set key top right
plot dir.'/sweep.csv' skip 1 using 3:7:8:9 with yerrorlines lw 2 title 'over one executor launch per op (a)', \
     dir.'/sweep.csv' skip 1 using 3:10:11:12 with yerrorlines lw 2 title 'over pool + barrier per op (b)', \
     1 with lines dt 2 lc rgb 'black' title 'no gain'
