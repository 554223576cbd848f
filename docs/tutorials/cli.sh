# MQ2008 Fold1 from the command line, run from the repository root.
set -euo pipefail                         # stop at the first failing command
MQ2008=reference/datasets/mq2008          # the bundled parts S1..S5, gzip
WORK=$(mktemp -d)                         # a scratch folder

# Fold1 trains on S1-S3, validates on S4 and tests on S5 (gzip files concatenate).
cat $MQ2008/S1.txt.gz $MQ2008/S2.txt.gz $MQ2008/S3.txt.gz > $WORK/train.txt.gz

twinrank train --train $WORK/train.txt.gz --valid $MQ2008/S4.txt.gz \
    --model $WORK/model.json --trees 100 --leaves 15 --early-stopping 20 --quiet
twinrank predict --model $WORK/model.json --data $MQ2008/S5.txt.gz \
    --output $WORK/scores.txt
twinrank evaluate --data $MQ2008/S5.txt.gz --scores $WORK/scores.txt \
    --metric ndcg@10 --metric map --convention ranklib
