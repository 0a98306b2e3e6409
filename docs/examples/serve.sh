#!/bin/sh
# Serve dpaudit's external protocol (dpaudit.mechanisms.external) with an awk program:
# one JSON request a line on stdin, one JSON reply a line on stdout, one awk run per request.
#
#     sh docs/examples/serve.sh PROGRAM.awk [AWK OPTIONS ...]
#     dpaudit audit --command 'sh docs/examples/serve.sh docs/examples/laplace.awk -v epsilon=1' --epsilon 1
#
# Why a shell loop rather than one awk reading every request: the shell's `read` stops at the end
# of the line, while mawk (Debian's awk) fills a whole block of a pipe before it hands over the first
# line, a block that never comes while dpaudit waits for the reply (it would stop awk at its timeout).
# Starting awk costs about a millisecond a batch; a batch is thousands of outputs.
program=$1
shift
while IFS= read -r request; do
    printf '%s\n' "$request" | awk "$@" -f "$program" || exit $?
done
