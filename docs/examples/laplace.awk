# Laplace noise on the sum of the data: epsilon-DP for records in [0, 1] under add/remove
# (the sum moves by at most 1, the noise has scale sensitivity/epsilon with sensitivity 1).
# `-v sensitivity=0.5` is the classic bug, a sensitivity passed as half the truth: the
# mechanism is then 2 epsilon-DP, and an audit of its epsilon claim finds a violation.
# It answers requests of dpaudit's external protocol (dpaudit.mechanisms.external),
#     {"size":N,"seed":S,"data":[x1,x2,...]}   ->   {"outputs":[y1,...,yN]}
# one a line; serve.sh runs it once per request:
#
#     dpaudit audit --command 'sh docs/examples/serve.sh docs/examples/laplace.awk -v epsilon=1' --epsilon 1
#     dpaudit audit --command 'sh docs/examples/serve.sh docs/examples/laplace.awk -v epsilon=1 -v sensitivity=0.5' --epsilon 1
#
# Any POSIX awk (mawk, gawk, busybox). rand() has about 31 bits, so the noise ends near
# 21/epsilon, as any floating-point sampler's does somewhere; 10^6 trials cannot see that far.
BEGIN { if (epsilon == "") epsilon = 1; if (sensitivity == "") sensitivity = 1; scale = sensitivity / epsilon }
{
    line = $0
    gsub(/[][{}":,]/, " ", line)          # the flat request, as words: size N seed S data x1 x2 ...
    n = split(line, word, " ")
    size = 0; seed = 0; sum = 0; in_data = 0
    for (i = 1; i <= n; i++) {
        if (word[i] == "size") size = word[++i]
        else if (word[i] == "seed") seed = word[++i]
        else if (word[i] == "data") in_data = 1
        else if (in_data) sum += word[i]
    }
    srand(seed)                           # the same seed, the same outputs: audits are reproducible
    printf "{\"outputs\":["
    for (k = 1; k <= size; k++) {
        # Laplace(scale) is the difference of two Exponential(scale); 1 - rand() is in (0, 1].
        y = sum + scale * (log(1 - rand()) - log(1 - rand()))
        printf (k > 1 ? ",%.17g" : "%.17g"), y
    }
    print "]}"
    fflush()                              # a pipe is block-buffered: the reply must leave now
}
