# 2026-11-22T07:44:51Z on vm
# cluster.sh up -n 4 
/work/main/bench/../test/cluster/cluster.sh run -n 4 -- /tmp/b/bench/optireduce_bench --baseline mpi --mode bounded --algorithm transpose -f --warmup-large 16 -m 4194304:4194304 --iter-large 200 --delay 3:1000000:0.1 --csv /tmp/s4r-d4-4M-straggler/latency.csv 
