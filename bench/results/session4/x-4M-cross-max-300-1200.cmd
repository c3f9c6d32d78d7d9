# 2026-11-22T07:12:33Z on vm
# cluster.sh up -n 4 --cross-traffic max --cross-onoff 300:1200
/work/main/bench/../test/cluster/cluster.sh run -n 4 -- /tmp/b/bench/optireduce_bench --baseline mpi --mode bounded --algorithm transpose -f -m 4194304:4194304 --iter-large 150 --warmup-large 16 --csv /tmp/s4-cross/latency.csv 
