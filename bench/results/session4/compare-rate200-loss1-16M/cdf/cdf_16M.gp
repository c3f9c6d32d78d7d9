set terminal pngcairo size 1200,650
set output '/work/main/bench/results/session4/compare-rate200-loss1-16M/cdf_16M.png'
set title "Allreduce completion time, 16M float32, 4 hosts, scenario rate200 (50 iterations)" noenhanced
set xlabel 'completion time (ms), log scale'
set ylabel 'fraction of iterations'
set logscale x
set yrange [0:1.02]
set grid
set key outside right top vertical noenhanced
plot '/work/main/bench/results/session4/compare-rate200-loss1-16M/cdf/16M_or-bounded-ring.dat' using 1:2 with steps linewidth 2 title 'liboptireduce bounded ring', \
  '/work/main/bench/results/session4/compare-rate200-loss1-16M/cdf/16M_or-bounded-transpose.dat' using 1:2 with steps linewidth 2 title 'liboptireduce bounded transpose', \
  '/work/main/bench/results/session4/compare-rate200-loss1-16M/cdf/16M_mpi.dat' using 1:2 with steps linewidth 2 title 'Open MPI MPI_Allreduce', \
  '/work/main/bench/results/session4/compare-rate200-loss1-16M/cdf/16M_gloo-ring.dat' using 1:2 with steps linewidth 2 title 'Gloo ring', \
  '/work/main/bench/results/session4/compare-rate200-loss1-16M/cdf/16M_gloo-ring-chunked.dat' using 1:2 with steps linewidth 2 title 'Gloo ring-chunked', \
  '/work/main/bench/results/session4/compare-rate200-loss1-16M/cdf/16M_gloo-halving-doubling.dat' using 1:2 with steps linewidth 2 title 'Gloo halving-doubling', \
  '/work/main/bench/results/session4/compare-rate200-loss1-16M/cdf/16M_gloo-bcube.dat' using 1:2 with steps linewidth 2 title 'Gloo bcube'
