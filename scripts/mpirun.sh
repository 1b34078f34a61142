#!/usr/bin/env bash
# mpirun with the settings a small shared machine needs, under a time limit:
#   scripts/mpirun.sh NP COMMAND ARGS...
# Ranks may outnumber cores (oversubscribe), idle ranks yield the core instead of
# busy-polling (otherwise an 8-byte allreduce takes milliseconds on 2 cores), root may run
# it (containers), and each rank's cpu engine uses one thread unless
# HASSIUM_ENGINES_CPU_THREADS says otherwise. HASSIUM_MPI_TIMEOUT (seconds, default 300)
# bounds the whole run.
set -euo pipefail
np=${1:?usage: scripts/mpirun.sh NP COMMAND ARGS...}
shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
export HASSIUM_ENGINES_CPU_THREADS=${HASSIUM_ENGINES_CPU_THREADS:-1}
exec timeout --kill-after=10 "${HASSIUM_MPI_TIMEOUT:-300}" mpirun -np "$np" "$@"
