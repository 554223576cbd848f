# Bad input: the message names the file and the line; the exit status is 2.
set -uo pipefail
printf '2 qid:1 1:0.5 2:0.1\n0 qid:1 1:0.2 2:abc\n' > /tmp/broken.txt
twinrank verify --data /tmp/broken.txt
echo "exit status: $?"
