# 2026-11-22T08:03:08Z on vm
# cluster.sh up -n 4 --rate none
/work/main/bench/../test/cluster/cluster.sh run -n 4 -- /tmp/b/bench/optireduce_bench --baseline mpi --mode bounded --algorithm transpose -f --warmup-large 16 -m 4194304:16777216 --iter-large 50 --csv /tmp/s4r-c-4M-16M/latency.csv 
