# MQ2008 Fold1 from the command line.
set -euo pipefail                         # stop at the first failing command
WORK=$(mktemp -d)                         # a scratch folder

# The bundled MQ2008 as LETOR's files: Fold1 trains on S1-S3, validates on S4, tests on S5.
twinrank data mq2008 --fold 1 --out $WORK

twinrank train --train $WORK/train.txt --valid $WORK/vali.txt \
    --model $WORK/model.json --trees 100 --leaves 15 --early-stopping 20 --quiet
twinrank predict --model $WORK/model.json --data $WORK/test.txt \
    --output $WORK/scores.txt
twinrank evaluate --data $WORK/test.txt --scores $WORK/scores.txt \
    --metric ndcg@10 --metric map --convention ranklib
twinrank inspect --model $WORK/model.json --top 5
