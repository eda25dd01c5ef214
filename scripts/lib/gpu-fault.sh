# Sourced by scripts/gpu-check (step "fault"): injected device failures
# (ALIGNSCOPE_FAULT, kernels/common/fault_injection.hpp). Uses gpu-check's CLI,
# LOGS, row and elapsed; returns non-zero when a run failed badly.
gpu_fault_step() {
    local t0 fdir rc injected errors leftovers verdict spec job fault_ok fault_bad fault_unreached fault_recovered
    # Injected device failures (ALIGNSCOPE_FAULT, kernels/common/fault_injection.hpp):
    # the Nth allocation or kernel launch fails mid-batch in align (several
    # batches: a small --gpu-mem), search, align --long and hmmsearch (the
    # tests' small protein model; its filters run on the GPU). Each run must end
    # with exit status 2 and one error line naming the CUDA failure, leave the
    # earlier output as it was, no temporary file and the project whole; or,
    # when the job never reached the Nth call, succeed.
    t0=$(date +%s)
    fdir=$(mktemp -d)
    python3 - "$fdir" <<'PY'
import random, sys
d = sys.argv[1]
rng = random.Random(5)
aa = "ACDEFGHIKLMNPQRSTVWY"
def prot(n):
    return "".join(rng.choice(aa) for _ in range(n))
def mutate(s, rate, letters):
    return "".join(rng.choice(letters) if rng.random() < rate else c for c in s)
with open(d + "/q.fa", "w") as q, open(d + "/t.fa", "w") as t:
    for i in range(6000):
        s = prot(rng.randint(80, 400))
        q.write(f">q{i}\n{s}\n")
        t.write(f">t{i}\n{mutate(s, 0.3, aa)}\n")
with open(d + "/db.fa", "w") as db:
    for i in range(20000):
        db.write(f">d{i}\n{prot(rng.randint(50, 600))}\n")
with open(d + "/sq.fa", "w") as sq:
    for i in range(4):
        sq.write(f">s{i}\n{prot(rng.randint(100, 400))}\n")
dna = "".join(rng.choice("ACGT") for _ in range(150000))
with open(d + "/lq.fa", "w") as f:
    f.write(">lq\n" + dna + "\n")
with open(d + "/lt.fa", "w") as f:
    f.write(">lt\n" + mutate(dna, 0.1, "ACGT") + "\n")
PY
    fault_args() {  # the command line of job $1 (without -o)
        case $1 in
            align) echo align "$fdir/q.fa" "$fdir/t.fa" --zip --device gpu:0 --gpu-mem 64M --mode local --format tsv \
                        --project "$fdir/p.alsproj" ;;
            search) echo search -q "$fdir/sq.fa" -d "$fdir/db.fa" --device gpu:0 --db-cache off ;;
            long) echo align --long "$fdir/lq.fa" "$fdir/lt.fa" --device gpu:0 --format tsv ;;
            hmmsearch) echo hmmsearch --device gpu:0 "$ROOT/tests/data/profile/tiny.hmm" "$fdir/db.fa" ;;
        esac
    }
    # The results without a fault, to compare a job that recovered with.
    for job in align search long hmmsearch; do
        timeout -k 10 180 "$CLI" $(fault_args $job) -o "$fdir/expected.$job" >/dev/null 2>&1 ||
            echo "fault: $job without a fault failed, bad"
    done | tee "$LOGS/fault.txt"
    for spec in alloc:1 alloc:2 alloc:4 alloc:9 launch:1 launch:2 launch:5 launch:17; do
        for job in align search long hmmsearch; do
            echo "an earlier output" >"$fdir/out"
            rc=0
            ALIGNSCOPE_FAULT=$spec timeout -k 10 180 "$CLI" $(fault_args $job) -o "$fdir/out" >/dev/null 2>"$fdir/err" || rc=$?
            injected=$(grep -c '^ALIGNSCOPE_FAULT: failing' "$fdir/err")
            errors=$(grep -c 'error:' "$fdir/err")
            leftovers=$(find "$fdir" -name '.out.tmp.*' | wc -l)
            verdict=bad
            # (hmmsearch's report says its time on '#' lines.)
            if (( rc == 0 )) && cmp -s <(grep -v '^#' "$fdir/out") <(grep -v '^#' "$fdir/expected.$job"); then
                # Never reached, or the backend recovered (same results as without the fault).
                verdict=$( (( injected == 0 )) && echo unreached || echo recovered)
            elif (( injected == 1 && rc == 2 && errors == 1 && leftovers == 0 )) &&
                 grep -q 'error:.*CUDA error.*\(cudaErrorMemoryAllocation\|cudaErrorLaunchFailure\)' "$fdir/err" &&
                 [[ "$(cat "$fdir/out")" == "an earlier output" ]]; then
                verdict=ok
            fi
            if [[ $job == align ]] && ! "$CLI" project "$fdir/p.alsproj" check >/dev/null 2>&1; then
                verdict=bad
            fi
            echo "fault $spec $job: exit $rc, $verdict: $(grep 'error:' "$fdir/err" | head -1)"
            [[ $verdict == bad ]] && sed 's/^/    /' "$fdir/err" | tail -n 5
        done
    done | tee -a "$LOGS/fault.txt"
    fault_ok=$(grep -c ', ok:' "$LOGS/fault.txt"); fault_bad=$(grep -c ', bad:\|failed, bad$' "$LOGS/fault.txt")
    fault_unreached=$(grep -c ', unreached:' "$LOGS/fault.txt"); fault_recovered=$(grep -c ', recovered:' "$LOGS/fault.txt")
    rm -rf "$fdir"
    if (( fault_bad == 0 && fault_ok > 0 )); then
        row fault ok "$fault_ok failed cleanly, $fault_recovered recovered, $fault_unreached not reached ($(elapsed $t0))"
    else
        row fault FAILED "$fault_bad bad, $fault_ok clean, $fault_recovered recovered, $fault_unreached not reached ($(elapsed $t0))"
        return 1
    fi
}
