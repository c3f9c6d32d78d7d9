# 2026-11-22T08:05:25Z on vm
# cluster.sh up -n 4 
/work/main/bench/../test/cluster/cluster.sh run -n 4 -- /tmp/b/bench/optireduce_bench --mode bounded --algorithm transpose -f --warmup-large 16 -m 4194304:4194304 --iter-large 100 --param timeout_us=300000 --csv /tmp/s4r-a-4M-fixed300/latency.csv 
