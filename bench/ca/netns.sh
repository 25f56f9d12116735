# netns.sh - The network bench/ca/run.sh runs its MPI ranks across (sourced,
# not run): one network namespace per rank, each joined to a bridge in the
# root namespace by a veth pair, with a tbf rate limit on both directions of
# every veth. Needs root (ip, tc). Sets ca_ns (the namespaces' names, by
# rank), ca_if (the interface name inside every namespace), ca_cidr (the
# subnet, for Open MPI's if_include) and ca_hostip (the bridge's address:
# mpirun's out-of-band channel listens there).
#
#   ca_net_up RANKS RATE    e.g. ca_net_up 4 10gbit
#   ca_net_down             removes all of it (safe to call twice)
#
# Names carry this shell's pid, so two runs never share a namespace; the
# subnet is fixed (10.213.77.0/24), so run.sh takes a lock around the run.
# shellcheck shell=bash disable=SC2034 # sourced: sets ca_* for run.sh
ca_tag=${ca_tag:-$$}
ca_bridge="cabr$ca_tag"
ca_if=ca0
ca_cidr=10.213.77.0/24
ca_hostip=10.213.77.254
ca_ns=()

# tbf: rate, a burst of 256 KiB (four 64 KiB GSO segments; tbf splits larger
# GSO packets), and a queue of up to 10 ms at the rate before it drops.
ca_tbf() {
  tc qdisc add dev "$1" root tbf rate "$2" burst 256kb latency 10ms
}

ca_net_up() {
  local n=$1 rate=$2 k host
  ip link add "$ca_bridge" type bridge
  ip addr add "$ca_hostip/24" dev "$ca_bridge"
  ip link set "$ca_bridge" up
  for ((k = 0; k < n; ++k)); do
    ca_ns[k]="opdca$ca_tag-$k"
    host="ca${ca_tag}h$k"
    ip netns add "${ca_ns[k]}"
    ip link add "$host" type veth peer name "$ca_if" netns "${ca_ns[k]}"
    ip link set "$host" master "$ca_bridge"
    ip link set "$host" up
    ip -n "${ca_ns[k]}" addr add "10.213.77.$((k + 1))/24" dev "$ca_if"
    ip -n "${ca_ns[k]}" link set "$ca_if" up
    ip -n "${ca_ns[k]}" link set lo up
    ca_tbf "$host" "$rate"
    ip netns exec "${ca_ns[k]}" tc qdisc add dev "$ca_if" root tbf \
      rate "$rate" burst 256kb latency 10ms
  done
}

ca_net_down() {
  local k
  for ((k = 0; k < ${#ca_ns[@]}; ++k)); do
    ip netns del "${ca_ns[k]}" 2>/dev/null || true
    ip link del "ca${ca_tag}h$k" 2>/dev/null || true
  done
  ip link del "$ca_bridge" 2>/dev/null || true
  ca_ns=()
}
