#!/usr/bin/env bash
# An MPI job across several fake hosts on this one machine, over TCP:
#   scripts/fake-cluster.sh [-n HOSTS] [--ranks-per-host K] -- COMMAND ARGS...
# runs `mpirun --host 10.77.0.10:K,10.77.0.11:K,... -np HOSTS*K COMMAND ARGS...`, prints
# its output and exits with its status (124 when it runs past the time limit).
#
# Each fake host (HOSTS of them, 3 by default; K ranks each, 1 by default) is a process
# holding a network and UTS namespace of its own: host i is called node<i> and has lo and
# eth0, address 10.77.0.(10+i)/24, one end of a veth pair whose other end joins a bridge
# that lives in a namespace of its own too. mpirun runs inside host 0 and starts its
# daemons on the others through a launch agent that enters their namespaces (in place of
# ssh), so ranks on different hosts talk over TCP, and MPI_Get_processor_name tells them
# apart. Nothing is created in the machine's own network namespace, and on every exit
# (including Ctrl-C and SIGTERM) the script ends whatever still runs in the fake hosts,
# kills the holders (which removes the namespaces and their links) and removes its
# temporary directory; killed outright (SIGKILL), it leaves a watchdog that does so.
#
# Needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN), unshare, nsenter, ip (iproute2),
# timeout and Open MPI's mpirun. Every HASSIUM_* variable is forwarded to the ranks, and
# PATH; each rank's cpu engine uses one thread unless HASSIUM_ENGINES_CPU_THREADS says
# otherwise. HASSIUM_MPI_TIMEOUT (seconds, default 300) bounds the mpirun run.
set -euo pipefail

usage="usage: scripts/fake-cluster.sh [-n HOSTS] [--ranks-per-host K] -- COMMAND ARGS..."
die() {
    echo "fake-cluster: $*" >&2
    exit 2
}

hosts=3
per_host=1
while (($#)); do
    case $1 in
    -n | --hosts)
        (($# >= 2)) || die "$1 needs a value; $usage"
        hosts=$2
        shift 2
        ;;
    --ranks-per-host)
        (($# >= 2)) || die "$1 needs a value; $usage"
        per_host=$2
        shift 2
        ;;
    -h | --help)
        echo "$usage"
        exit 0
        ;;
    --)
        shift
        break
        ;;
    *) die "unexpected argument '$1'; $usage" ;;
    esac
done
(($#)) || die "no command given; $usage"
if ! [[ $hosts =~ ^[0-9]+$ ]] || ((hosts < 1 || hosts > 200)); then
    die "HOSTS must be a number from 1 to 200, not '$hosts'"
fi
if ! [[ $per_host =~ ^[0-9]+$ ]] || ((per_host < 1)); then
    die "ranks per host must be a positive number, not '$per_host'"
fi
timeout_s=${HASSIUM_MPI_TIMEOUT:-300}
[[ $timeout_s =~ ^[0-9]+$ ]] || die "HASSIUM_MPI_TIMEOUT must be a number of seconds"

for tool in unshare nsenter ip timeout mpirun; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "'$tool' not found (needs util-linux, iproute2, coreutils and Open MPI)"
done

# --- teardown: runs on every exit --------------------------------------------------
tmp=""
job=""
watchdog=""
bridge=""
holders=()
namespaces=() # net namespace ids (net:[inode]) of the bridge and every host

alive() { # a process that has not exited (a zombie has)
    local state=""
    read -r _ _ state _ 2>/dev/null <"/proc/$1/stat"
    [[ -n $state && $state != Z ]]
}

# Processes (other than the holders) inside the fake hosts' namespaces: mpirun, its
# daemons and the ranks, should any outlive the job.
# shellcheck disable=SC2329 # called by cleanup
stragglers() {
    local p ns id
    for p in /proc/[0-9]*; do
        ns=$(readlink "$p/ns/net" 2>/dev/null) || continue
        for id in "${namespaces[@]}"; do
            if [[ $ns == "$id" ]]; then
                echo "${p#/proc/}"
                break
            fi
        done
    done
}

# shellcheck disable=SC2329 # called by the traps
cleanup() {
    local rc=$? pid i left
    trap - EXIT INT TERM HUP
    set +e
    if [[ -n $watchdog ]]; then
        kill -KILL "$watchdog" 2>/dev/null
        wait "$watchdog" 2>/dev/null
    fi
    if [[ -n $job ]] && alive "$job"; then
        kill -TERM "$job" 2>/dev/null
        for ((i = 0; i < 50; i++)); do
            alive "$job" || break
            sleep 0.1
        done
        kill -KILL "$job" 2>/dev/null
        wait "$job" 2>/dev/null
    fi
    if ((${#namespaces[@]})); then
        for ((i = 0; i < 50; i++)); do
            left=()
            for pid in $(stragglers); do
                [[ " ${holders[*]} $bridge " == *" $pid "* ]] || left+=("$pid")
            done
            ((${#left[@]})) || break
            kill -KILL "${left[@]}" 2>/dev/null
            sleep 0.1
        done
    fi
    for pid in "${holders[@]}" "$bridge"; do
        [[ -n $pid ]] || continue
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    [[ -n $tmp ]] && rm -rf -- "$tmp"
    exit "$rc"
}
# shellcheck disable=SC2329 # started below
watchdog() { # runs cleanup once this script is gone, even if it was killed outright
    local ppid fd
    trap '' INT TERM HUP
    mkfifo "$tmp/watchdog" && exec {fd}<>"$tmp/watchdog" || exit 0
    # The parent changes the moment this script ends (a zombie not yet reaped counts).
    while read -r _ _ _ ppid _ <"/proc/$BASHPID/stat" && ((ppid == $$)); do
        read -rt 1 -u "$fd" _ || true # a pause without a sleep process to leave behind
    done
    cleanup
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fake-cluster.XXXXXX")

# A namespace holder: started in the background, it is ready once it execs sleep (after
# unshare and, for a host, hostname succeeded); it fails if it exits before that.
wait_ready() {
    local pid=$1 what=$2 err=$3 i comm
    for ((i = 0; i < 200; i++)); do
        comm=$(cat "/proc/$pid/comm" 2>/dev/null) || comm=""
        if [[ $comm == sleep ]]; then
            namespaces+=("$(readlink "/proc/$pid/ns/net")")
            return 0
        fi
        alive "$pid" || break
        sleep 0.05
    done
    die "cannot create the namespaces of $what (needs root or CAP_SYS_ADMIN): $(cat "$err" 2>/dev/null)"
}

in_ns() { # in_ns PID COMMAND...: run a command in the network namespace of PID
    local pid=$1
    shift
    nsenter --net="/proc/$pid/ns/net" -- "$@"
}

# --- the fake hosts ----------------------------------------------------------------
# Holders die with this script even if it is killed outright: a safety net, should the
# watchdog be killed too (the job then ends at its time limit).
hold=(sleep 3600)
command -v setpriv >/dev/null 2>&1 && hold=(setpriv --pdeathsig KILL sleep 3600)

unshare --net "${hold[@]}" </dev/null >/dev/null 2>"$tmp/bridge.err" &
bridge=$!
wait_ready "$bridge" "the bridge" "$tmp/bridge.err"
in_ns "$bridge" ip link add br0 type bridge ||
    die "cannot create a bridge (needs the bridge and veth kernel modules)"
in_ns "$bridge" ip link set br0 up

addrs=()
for ((i = 0; i < hosts; i++)); do
    unshare --net --uts sh -c "hostname node$i && exec ${hold[*]}" \
        </dev/null >/dev/null 2>"$tmp/node$i.err" &
    holders+=("$!")
    addrs+=("10.77.0.$((10 + i))")
done
for ((i = 0; i < hosts; i++)); do
    pid=${holders[i]}
    wait_ready "$pid" "node$i" "$tmp/node$i.err"
    # Both ends are made in the bridge's namespace and one moves straight into the host's.
    in_ns "$bridge" ip link add "veth$i" type veth peer name eth0 netns "$pid" ||
        die "cannot create a veth pair for node$i"
    in_ns "$bridge" ip link set "veth$i" master br0 up
    in_ns "$pid" ip addr add "${addrs[i]}/24" dev eth0
    in_ns "$pid" ip link set eth0 up
    in_ns "$pid" ip link set lo up
done

# The launch agent mpirun calls in place of ssh: `agent HOST COMMAND...` runs the command
# in the namespaces of that host (named by address or by node name).
agent="$tmp/agent"
{
    cat <<'EOF'
#!/bin/sh
# fake-cluster.sh's launch agent: HOST COMMAND... runs COMMAND on that fake host.
host=$1
shift
case $host in
EOF
    for ((i = 0; i < hosts; i++)); do
        echo "${addrs[i]} | node$i) pid=${holders[i]} ;;"
    done
    cat <<'EOF'
*)
    echo "fake-cluster agent: unknown host '$host'" >&2
    exit 1
    ;;
esac
exec nsenter --net="/proc/$pid/ns/net" --uts="/proc/$pid/ns/uts" -- /bin/sh -c "$*"
EOF
} >"$agent"
chmod +x "$agent"

# --- the job -----------------------------------------------------------------------
export TMPDIR="$tmp"
export OMPI_MCA_plm_rsh_agent="$agent"
export OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=eth0
export OMPI_MCA_oob_tcp_if_include=eth0
export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export HASSIUM_ENGINES_CPU_THREADS=${HASSIUM_ENGINES_CPU_THREADS:-1}

hostlist=""
for a in "${addrs[@]}"; do
    hostlist+="$a:$per_host,"
done
forward=(-x PATH)
while IFS= read -r name; do
    [[ $name == HASSIUM_* ]] && forward+=(-x "$name")
done < <(compgen -e)

# In the background (with our stdin) so that a signal reaches the traps at once.
timeout --kill-after=10 "$timeout_s" \
    nsenter --net="/proc/${holders[0]}/ns/net" --uts="/proc/${holders[0]}/ns/uts" -- \
    mpirun --host "${hostlist%,}" -np "$((hosts * per_host))" "${forward[@]}" "$@" <&0 &
job=$!
watchdog </dev/null >/dev/null 2>&1 &
watchdog=$!
status=0
wait "$job" || status=$?
job=""
exit "$status"
