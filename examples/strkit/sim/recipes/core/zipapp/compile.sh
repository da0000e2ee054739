#!/bin/sh
# Builds ./executable: the strkit package under src/ as one runnable zip file, started by
# the python3 found here (named by its real path: a version manager's shim is slow to start).
set -e
cd "$(dirname "$0")"
python=$(python3 -c 'import sys; print(sys.executable)')
rm -f executable
python3 -m zipapp src -o executable -p "$python" -m 'strkit.main:main'
chmod +x executable
