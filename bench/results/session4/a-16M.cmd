# 2026-11-22T07:29:59Z on vm
# cluster.sh up -n 4 
/work/main/bench/../test/cluster/cluster.sh run -n 4 -- /tmp/b/bench/optireduce_bench --baseline mpi --mode bounded --algorithm transpose -f --warmup-large 16 -m 16777216:16777216 --iter-large 100 --csv /tmp/s4r-a-16M/latency.csv 
