set terminal pngcairo size 1200,650
set output '/work/main/bench/results/compare-v3/clean/cdf_1M.png'
set title "Allreduce completion time, 1M float32, 4 hosts, scenario clean (30 iterations)" noenhanced
set xlabel 'completion time (ms), log scale'
set ylabel 'fraction of iterations'
set logscale x
set yrange [0:1.02]
set grid
set key outside right top vertical noenhanced
plot '/work/main/bench/results/compare-v3/clean/cdf/1M_or-exact-ring.dat' using 1:2 with steps linewidth 2 title 'liboptireduce exact ring', \
  '/work/main/bench/results/compare-v3/clean/cdf/1M_or-exact-transpose.dat' using 1:2 with steps linewidth 2 title 'liboptireduce exact transpose', \
  '/work/main/bench/results/compare-v3/clean/cdf/1M_or-exact-recursive_doubling.dat' using 1:2 with steps linewidth 2 title 'liboptireduce exact recursive_doubling', \
  '/work/main/bench/results/compare-v3/clean/cdf/1M_or-bounded-transpose.dat' using 1:2 with steps linewidth 2 title 'liboptireduce bounded transpose', \
  '/work/main/bench/results/compare-v3/clean/cdf/1M_mpi.dat' using 1:2 with steps linewidth 2 title 'Open MPI MPI_Allreduce', \
  '/work/main/bench/results/compare-v3/clean/cdf/1M_gloo-ring.dat' using 1:2 with steps linewidth 2 title 'Gloo ring', \
  '/work/main/bench/results/compare-v3/clean/cdf/1M_gloo-ring-chunked.dat' using 1:2 with steps linewidth 2 title 'Gloo ring-chunked', \
  '/work/main/bench/results/compare-v3/clean/cdf/1M_gloo-halving-doubling.dat' using 1:2 with steps linewidth 2 title 'Gloo halving-doubling', \
  '/work/main/bench/results/compare-v3/clean/cdf/1M_gloo-bcube.dat' using 1:2 with steps linewidth 2 title 'Gloo bcube'
