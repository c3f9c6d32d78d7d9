# 2026-11-22T07:38:44Z on vm
# cluster.sh up -n 4 --loss 0.01
/work/main/bench/../test/cluster/cluster.sh run -n 4 -- /tmp/b/bench/optireduce_bench --baseline mpi --mode bounded --algorithm transpose -f --warmup-large 16 -m 16777216:16777216 --iter-large 100 --csv /tmp/s4r-b-16M/latency.csv 
