#!/usr/bin/env bash
# run.sh - Communication avoidance measured in a latency-bound regime made
# real: MPI ranks on this machine, each in its own network namespace, joined
# by veth pairs to a bridge with a tbf rate limit, Open MPI over TCP across
# them, and a one-way latency L per message added by a PMPI shim
# (bench/ca/delay_shim.c: this kernel has no netem; see README.md).
#
# For every rank count and latency, runs the program built with
# --comm-avoid=off and --comm-avoid=on (best of --reps runs each) and prints
# (report.py) the time per chain, the messages per chain from --profile, the
# cost model's prediction from -Rpass=comm-avoid next to the measurement,
# and the crossover latency where CA starts to win; then the STREAM triad of
# the same run and a ping-pong that checks the latency and rate the ranks see.
#
# usage: bench/ca/run.sh [--program=bench/ca/chain2d.opd] [--args="..."]
#        [--ranks=2,4] [--latencies=0,20,50,100] [--gbits=10] [--reps=3]
#        [--steps-arg=niter] [--rt=1] [--nice=-15] [--pingpong-reps=200]
#        [--collective-delay=1]
# --args are the program's arguments (default for chain2d: --nx=256
# --ny=256 --niter=1000); the program must print "time = S s" for its timed
# region, and either take --<steps-arg>=N (the chains it times) or print
# "time = S s for N steps" (examples/shallow_water). Needs root (ip netns,
# tc), mpicc/mpirun (Open MPI) and build/ (scripts/build.sh). Work files go
# to build/bench/ca/. The ranks (and mpirun) run at real-time FIFO priority
# 1 (chrt -f 1), else (--rt=0) at nice --nice: on a shared machine a rank
# waiting behind other work for a scheduler tick (4 ms here) would swamp
# latencies of tens of microseconds. Other work gets little CPU meanwhile.
# --collective-delay=0: collectives (MPI_Allreduce...) without the shim's
# ceil(log2 ranks) x L (to see what they cost; a real network charges it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OPDC_BUILD:-$root/build}
program=$root/bench/ca/chain2d.opd
args=""
ranks=2,4
latencies=0,20,50,100
gbits=10
reps=3
stepsArg=niter
niceness=-15
rt=1
ppreps=200
for a in "$@"; do
  case $a in
    --program=*) program=$(realpath "${a#--program=}") ;;
    --args=*) args=${a#--args=} ;;
    --ranks=*) ranks=${a#--ranks=} ;;
    --latencies=*) latencies=${a#--latencies=} ;;
    --gbits=*) gbits=${a#--gbits=} ;;
    --reps=*) reps=${a#--reps=} ;;
    --steps-arg=*) stepsArg=${a#--steps-arg=} ;;
    --nice=*) niceness=${a#--nice=} ;;
    --rt=*) rt=${a#--rt=} ;;
    --collective-delay=*) export OPD_DELAY_COLLECTIVES=${a#--collective-delay=} ;;
    --pingpong-reps=*) ppreps=${a#--pingpong-reps=} ;;
    *) echo "run.sh: error: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
if [[ -z $args && $program == "$root/bench/ca/chain2d.opd" ]]; then
  args="--nx=256 --ny=256 --niter=1000"
fi
steps=$(sed -n "s/.*--$stepsArg=\([0-9]*\).*/\1/p" <<<"$args")
# Else the program must say "time = S s for N steps" (report.py reads N).
steps=${steps:-0}
if [[ $(id -u) -ne 0 ]]; then
  echo "run.sh: error: needs root (network namespaces, tc)" >&2
  exit 2
fi
for tool in ip tc mpicc mpirun; do
  if ! command -v "$tool" >/dev/null; then
    echo "run.sh: error: '$tool' not found" >&2
    exit 2
  fi
done
if [[ ! -x $build/bin/opdc ]]; then
  echo "run.sh: error: no $build/bin/opdc (run scripts/build.sh)" >&2
  exit 2
fi

work=$build/bench/ca
mkdir -p "$work"
cd "$work"
rm -f ./*.txt ./*.yaml
# One run at a time: the subnet is fixed.
exec 9>/tmp/opdc-bench-ca.lock
if ! flock -n 9; then
  echo "run.sh: error: another bench/ca/run.sh is running" >&2
  exit 2
fi

echo "== machine"
lscpu | grep -E "^(Model name|CPU\(s\)|L2 cache|L3 cache|Thread\(s\) per core|Core\(s\) per socket|Hypervisor)" || true
echo "kernel $(uname -r); $(mpirun --version | head -1); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# The shim and the ping-pong: the build's (bench/CMakeLists.txt), else
# compiled here.
if [[ -f $build/bench/libopd-delay-shim.so && -x $build/bench/opd-ca-pingpong ]]; then
  cp "$build/bench/libopd-delay-shim.so" libopd_delay_shim.so
  cp "$build/bench/opd-ca-pingpong" pingpong
else
  echo "== shim and ping-pong (mpicc)"
  mpicc -O2 -shared -fPIC -Wall -Wextra -o libopd_delay_shim.so \
    "$root/bench/ca/delay_shim.c"
  mpicc -O2 -Wall -Wextra -o pingpong "$root/bench/ca/pingpong.c"
fi

echo "== STREAM triad"
"$build/bench/opd-stream" --threads=1,2 | tee stream.txt
triad1=$(sed -n 's/^stream-triad threads=1 .*GBps=\([0-9.]*\).*/\1/p' stream.txt)

name=$(basename "$program" .opd)
opdc=("$build/bin/opdc")
help=$("${opdc[@]}" --help 2>&1 || true)
if grep -q -- "--comm-avoid" <<<"$help"; then
  variants=(off on)
else
  echo "== this opdc has no --comm-avoid: one build, no model"
  variants=(plain)
fi
# shellcheck source=bench/ca/netns.sh
source "$root/bench/ca/netns.sh"
IFS=, read -ra lats <<<"$latencies"
IFS=, read -ra counts <<<"$ranks"
maxRanks=$(tr , '\n' <<<"$ranks" | sort -n | tail -1)
trap ca_net_down EXIT
trap 'exit 130' INT TERM
echo "== network: $maxRanks namespaces on bridge $ca_bridge, veth + tbf $gbits Gbit/s each way"
ca_net_up "$maxRanks" "${gbits}gbit"

export OPD_CA_NS_PREFIX="opdca$ca_tag-"
export OPD_CA_PRELOAD="$work/libopd_delay_shim.so"
export OPD_DELAY_GBITS=$gbits
export OPD_DELAY_COLLECTIVES=${OPD_DELAY_COLLECTIVES:-1}
# mpirun's PMIx server and out-of-band channel listen on the bridge (the
# namespaces have no other way to the root namespace); the ranks talk TCP
# over their veths only (no shared memory).
export PMIX_MCA_ptl_tcp_if_include=$ca_bridge
# shellcheck disable=SC2054 # "tcp,self" is one argument
mpiflags=(--allow-run-as-root --oversubscribe --bind-to none
  --mca btl tcp,self --mca btl_tcp_if_include "$ca_cidr"
  --mca oob_tcp_if_include "$ca_bridge" --mca mpi_event_tick_rate 1
  -x OPD_CA_NS_PREFIX -x OPD_CA_PRELOAD -x OPD_DELAY_US -x OPD_DELAY_GBITS
  -x OPD_DELAY_YIELD -x OPD_DELAY_COLLECTIVES -x PMIX_MCA_ptl_tcp_if_include)
# Waiting ranks spin (Open MPI's progress and the shim's deadlines) unless
# there are more ranks than cores: then they yield the core at every turn.
# mpi_event_tick_rate 1: Open MPI polls its TCP sockets every microsecond
# (by default about every 10 ms when it thinks it idle: one-way times of
# 10-12 ms; 0 means never, and connections then take a minute to open).
cores=$(nproc)
# Scheduling: real-time FIFO priority 1 (default), so that the ranks run the
# moment their message is there instead of a scheduler tick (4 ms) later
# behind other work; the kernel keeps 5 % of each second for everything
# else (sched_rt_runtime_us). --rt=0: nice --nice instead.
if ((rt)); then sched=(chrt -f 1); else sched=(nice -n "$niceness"); fi
launch() {
  local np=$1 yield=0
  shift
  ((np > cores)) && yield=1
  OPD_DELAY_YIELD=$yield "${sched[@]}" mpirun "${mpiflags[@]}" \
    -np "$np" --mca mpi_yield_when_idle "$yield" \
    "$root/bench/ca/inns.sh" "$@"
}

echo "== ping-pong, 2 ranks: one-way time per message size, rate, overlap"
before=$(ip netns exec "${ca_ns[0]}" tc -s qdisc show dev "$ca_if" |
  sed -n 's/.*Sent \([0-9]*\) bytes.*/\1/p')
for L in "${lats[@]}"; do
  OPD_DELAY_US=$L launch 2 ./pingpong "$ppreps" >"pingpong-L$L.txt"
  echo "-- requested one-way latency $L us, $gbits Gbit/s"
  cat "pingpong-L$L.txt"
done
after=$(ip netns exec "${ca_ns[0]}" tc -s qdisc show dev "$ca_if" |
  sed -n 's/.*Sent \([0-9]*\) bytes.*/\1/p')
echo "(rank 0's veth carried $(((after - before) / 1000000)) MB through its tbf: the ranks talk over the veths)"

# A target profile per latency: this machine (native) with the emulated
# network as measured by the ping-pong (one-way time of 8 bytes; every rank
# its own node) and the one-core triad as the memory bandwidth a rank has;
# the cost model reads them.
for L in "${lats[@]}"; do
  oneway=$(sed -n 's/^pingpong bytes=8 oneway_us=\([0-9.]*\).*/\1/p' "pingpong-L$L.txt")
  cat >"net-$L.yaml" <<EOF
# Written by bench/ca/run.sh: this machine, the emulated network.
name: ca-bench-L$L
extends: native
cpu:
  memory_bandwidth_gbs: $triad1
network:
  latency_us: $oneway
  bandwidth_gbs: $(python3 -c "print($gbits / 8)")
  ranks_per_node: 1
EOF
  for v in "${variants[@]}"; do
    flags=(--mpi --target="$work/net-$L.yaml")
    [[ $v != plain ]] && flags+=(--comm-avoid="$v" -Rpass=comm-avoid)
    "${opdc[@]}" build "${flags[@]}" "$program" -o "$name-$v-L$L" \
      >"remarks-$v-L$L.txt" 2>&1 || { cat "remarks-$v-L$L.txt"; exit 1; }
  done
done
echo "== opdc build --mpi $(basename "$program") (${variants[*]}), remarks at L=${lats[-1]} us:"
grep "remark:" "remarks-${variants[-1]}-L${lats[-1]}.txt" || echo "(none)"

read -ra progArgs <<<"$args"
for np in "${counts[@]}"; do
  for L in "${lats[@]}"; do
    for v in "${variants[@]}"; do
      for ((r = 1; r <= reps; ++r)); do
        out="run-$np-L$L-$v-$r.txt"
        OPD_DELAY_US=$L launch "$np" "./$name-$v-L$L" "${progArgs[@]}" \
          --threads=1 --profile >"$out" 2>&1 || { cat "$out"; exit 1; }
      done
      echo "   ran $np ranks, L=$L us, $v: $(grep -h '^time = ' run-"$np"-L"$L"-"$v"-*.txt | tr '\n' ' ')"
    done
  done
done
echo "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== results"
python3 "$root/bench/ca/report.py" --work="$work" --name="$name" \
  --ranks="$ranks" --latencies="$latencies" --variants="$(
    IFS=,
    echo "${variants[*]}"
  )" --reps="$reps" --steps="$steps" --gbits="$gbits"
