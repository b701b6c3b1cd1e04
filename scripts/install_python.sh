#!/usr/bin/env bash
# Builds the Python package and installs it for Debian's python3 into
# /usr/local/lib/python3.X/dist-packages/distflow, so that `import distflow`
# works from any directory (docs/python.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --target distflow_python
cmake --install build/release --component python
/usr/bin/python3 -c "import distflow; print('distflow', distflow.__version__, 'from', distflow.__file__)"
