# 2026-11-22T08:01:05Z on vm
# cluster.sh up -n 4 --rate none --loss 0.01
/work/main/bench/../test/cluster/cluster.sh run -n 4 -- /tmp/b/bench/optireduce_bench --baseline mpi --mode bounded --algorithm transpose -f --warmup-large 16 -m 65536:1048576 --iter-large 200 --csv /tmp/s4r-d-64K-1M/latency.csv 
