# 2026-11-22T07:35:39Z on vm
# cluster.sh up -n 4 --loss 0.01
/work/main/bench/../test/cluster/cluster.sh run -n 4 -- /tmp/b/bench/optireduce_bench --baseline mpi --mode bounded --algorithm transpose -f --warmup-large 16 -m 1048576:4194304 --iter-large 100 --csv /tmp/s4r-b-1M-4M/latency.csv 
