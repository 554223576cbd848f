# `twinrank verify` on the bundled MQ2008 (no --data), from the repository root.
set -uo pipefail
twinrank verify --quiet
echo "exit status: $?"
