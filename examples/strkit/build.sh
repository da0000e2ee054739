#!/bin/sh
# Builds the reference executable from reference/ (the gold build of this task).
set -e
cd "$(dirname "$0")"
${CC:-cc} -O2 -Wall -Wextra -s -o "${1:-executable}" reference/strkit.c
