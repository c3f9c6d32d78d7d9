# 2026-11-22T08:09:10Z on vm
# cluster.sh up -n 4 --rate none
/work/main/bench/../test/cluster/cluster.sh run -n 4 -- /tmp/b/bench/optireduce_bench --baseline mpi --mode bounded --algorithm transpose -f --warmup-large 16 -m 4194304:4194304 --iter-large 100 --csv /tmp/s4r-c-4M-rerun/latency.csv 
