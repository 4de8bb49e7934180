#!/usr/bin/env bash
# Seeded outputs of a dp-mcmc binary, for checking that a change which should not move any
# result did not: `fit` for all four models at ε = 1 and 8 (noise-aware) and once with
# DP-MCMC, `sample` for every sampler on three Table 5.1 experiments (tuned and `--auto`),
# `iterations` for two accountants. Wall times and paths are stripped; draws are compared by
# their parquet's md5.
#
#   bash scripts/seeded-outputs.sh BINARY OUT     then   diff -r OLD_OUT NEW_OUT
#
# Run it with the binary before and after the change (e.g. `git stash`, build, run; `git stash
# pop`, build, run) and diff the two folders; fit.json differs only in its `files` paths.
set -uo pipefail
[ $# -eq 2 ] || { sed -n '2,11p' "$0"; exit 2; }
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); O=$2
rm -rf "$O"; mkdir -p "$O"; O=$(cd "$O" && pwd)
cd "$(dirname "$0")/.."
F=lncoins,idp,lpi,fmde,physlm,disea,hlthg,hlthf,hlthp
BD=lncoins=0:4.6151206,idp=0:1,lpi=0:7.3132,fmde=0:8.2940497,physlm=0:1,disea=0:60,hlthg=0:1,hlthf=0:1,hlthp=0:1
strip() { python3 -c "
import json,sys
def s(o):
    if isinstance(o,dict): return {k:s(v) for k,v in o.items() if 'seconds' not in k and k not in ('files',)}
    if isinstance(o,list): return [s(v) for v in o]
    return o
for line in sys.stdin:
    line=line.strip()
    try: print(json.dumps(s(json.loads(line)),sort_keys=True))
    except Exception: print(line)
"; }
for e in 1 8; do
 $B fit --data data/randhie.csv --model poisson --response mdvis --features $F --bounds mdvis=0:30,$BD --clamp --epsilon $e --delta 1e-6 --seed 3 --out $O/pois$e 2>$O/pois$e.err | strip > $O/pois$e.json
 $B fit --data data/randhie.csv --model logistic --response idp --features lncoins,physlm,disea --bounds lncoins=0:4.6151206,physlm=0:1,disea=0:60 --epsilon $e --delta 1e-6 --seed 4 --out $O/logit$e 2>$O/logit$e.err | strip > $O/logit$e.json || true
 $B fit --data data/randhie.csv --model linear --response lpi --bounds lpi=0:7.3132,idp=0:1,physlm=0:1 --features idp,physlm --epsilon $e --delta 1e-6 --seed 5 --out $O/lin$e 2>$O/lin$e.err | strip > $O/lin$e.json
 $B fit --data data/randhie.csv --model gaussian-mean --response lpi --bounds lpi=0:7.3132 --epsilon $e --delta 1e-6 --seed 6 --out $O/gm$e 2>$O/gm$e.err | strip > $O/gm$e.json
done
$B fit --data data/randhie.csv --model logistic --response idp --features physlm,hlthg --bounds physlm=0:1,hlthg=0:1 --method dp-mcmc --epsilon 2 --delta 1e-6 --seed 7 --out $O/mcmc 2>$O/mcmc.err | strip > $O/mcmc.json || true
for a in dp-barker dp-penalty dp-penalty-ocu dp-penalty-gwmh dp-hmc minibatch-penalty minibatch-penalty-gwmh dp-sgld dp-sgnht dp-fast-mh rwmh hmc; do for x in easy-2d circle gauss-30d; do $B sample --experiment $x --algorithm $a --epsilon 2 --seed 3 --chains 2 2>/dev/null; done; $B sample --experiment easy-2d --algorithm $a --auto --epsilon 4 --seed 3 --chains 2 2>/dev/null; done | strip > $O/sample.txt || true
$B iterations --help >/dev/null; for t in 1 5 20; do $B iterations --epsilon 1 --delta 1e-6 --n 100000 --algorithm dp-penalty --tau $t; $B iterations --epsilon 1 --delta 1e-6 --n 100000 --algorithm minibatch-penalty --tau $t --batch-size 1000; done > $O/iter.txt 2>&1 || true
for d in $O/*/; do [ -f $d/draws.parquet ] && md5sum $d/draws.parquet | cut -c1-32 > ${d%/}.draws.md5; [ -f $d/summary.csv ] && cp $d/summary.csv ${d%/}.summary.csv; [ -f $d/ledger.json ] && python3 -c "import json;print(json.dumps(json.load(open('$d/ledger.json')),sort_keys=True))" > ${d%/}.ledger.json; done
ls $O | wc -l
