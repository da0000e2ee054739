#!/bin/sh
# The gold build of this task, as ProgramBench's build.sh: run in a copy of the
# reference source (reference/), it builds ./executable.
set -e
${CC:-cc} -O2 -Wall -Wextra -s -o executable strkit.c
