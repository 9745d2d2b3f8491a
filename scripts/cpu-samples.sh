#!/usr/bin/env bash
# Samples the load and the 13 busiest processes (CPU %, command line) every minute into a file, until killed:
# where a test run's CPU goes (docs/develop/testing-measured.md, "Measured"). Usage: bash scripts/cpu-samples.sh [out] &
out="${1:-test-results/cpu-samples.txt}"
mkdir -p "$(dirname "$out")"
while true; do
  {
    echo "=== $(date +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)"
    top -b -n2 -d 3 -c -o %CPU -w 300 | awk '/^top -/{n++} n==2' | sed -n 8,20p |
      awk '{c=$9; $1=$2=$3=$4=$5=$6=$7=$8=$9=$10=$11=""; print c, substr($0,1,160)}'
  } >>"$out"
  sleep 55
done
