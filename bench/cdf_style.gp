# SPDX-License-Identifier: BSD-3-Clause
# Axes and key of the completion-time CDF plots; compare.sh and plot_cdf.sh copy it into
# the gnuplot scripts they write, so a kept script still runs on its own.
set xlabel 'completion time (ms), log scale'
set ylabel 'fraction of iterations'
set logscale x
set yrange [0:1.02]
set grid
set key outside right top vertical noenhanced
