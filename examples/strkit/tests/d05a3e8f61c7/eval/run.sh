#!/bin/sh
# Runs this branch's tests against ./executable and writes JUnit XML to eval/results.xml.
cd "$(dirname "$0")/.." || exit 1
python3 -m pytest eval/tests --rootdir=. -p no:cacheprovider -q --junitxml=eval/results.xml || true
