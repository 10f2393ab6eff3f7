#!/usr/bin/env bash
# galaxy-importer on the tarball `make collection` built, as Galaxy and Automation Hub run it on an upload
# (settings: galaxy-importer.cfg beside this file). The importer only logs what ansible-lint finds and carries
# on, so any WARNING or ERROR line fails this run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$root/.venv/importer
tarball=$(ls "$root"/kubewin-nodes-*.tar.gz)
out=$root/.build/importer
mkdir -p "$out"
# importer_result.json goes to the working directory.
cd "$out"
status=0
PATH=$venv/bin:$PATH GALAXY_IMPORTER_CONFIG=$root/tests/importer/galaxy-importer.cfg \
  "$venv/bin/python" -m galaxy_importer.main "$tarball" >"$out/importer.log" 2>&1 || status=$?
grep -v '^Loading ' "$out/importer.log"
if [ "$status" -ne 0 ] || grep -qE '^(WARNING|ERROR|CRITICAL)' "$out/importer.log"; then
  echo "galaxy-importer: the import failed or reported the WARNING/ERROR lines above (full log: $out/importer.log)"
  exit 1
fi
echo "galaxy-importer: $(basename "$tarball") imported with no warning"
