# 2026-11-22T07:27:15Z on vm
# cluster.sh up -n 4 
/work/main/bench/../test/cluster/cluster.sh run -n 4 -- /tmp/b/bench/optireduce_bench --baseline mpi --mode bounded --algorithm transpose -f --warmup-large 16 -m 1048576:4194304 --iter-large 100 --csv /tmp/s4r-a-1M-4M/latency.csv 
