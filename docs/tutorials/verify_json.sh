# Two components, as JSON (one object per component), on a LETOR file of your own.
set -uo pipefail
python - <<'PY'
from twinrank.fast.data import load_mq2008
from twinrank.fast.letor import write_letor

_, _, test = load_mq2008(fold=1)
write_letor(test.take_queries(range(40)), "/tmp/my-queries.txt")   # stands for your file
PY
twinrank verify --data /tmp/my-queries.txt --component grow_tree --component "lambdarank[map]" --json --quiet
