#!/bin/bash
# Total CPU ticks of PostgreSQL: live processes' own, plus reaped children's (held by the postmaster).
# Used around a run to take PostgreSQL's CPU per call on this machine: run it
# before and after, subtract, divide by the calls (ticks are 1/100 s).
total=0
for p in $(pgrep -u postgres); do
  read -r ppid u s cu cs < <(awk '{print $4, $14, $15, $16, $17}' /proc/$p/stat 2>/dev/null) || continue
  total=$((total + u + s))
  [ "$(ps -o user= -p "$ppid" 2>/dev/null | tr -d ' ')" = postgres ] || total=$((total + cu + cs))
done
echo $total
