# Sourced by scripts/gpu-check (step "timeline"): the kernel timeline as CUPTI
# gives it. verify's pairwise jobs (every mode and gap model, the automatic
# kernels), a small database search and hmmsearch (filters, and --max for the
# Forward kernel), each written with --timeline on gpu:0,
# then read back: the clock must be CUPTI's, every kernel event named in the
# kernel grammar (mode_gaps_family[group]_width, e.g. sw_affine_intra8_s16)
# whichever device function ran it, and the device function CUPTI reported in
# the event's detail (events CUDA events timed instead are counted). Prints, per name, the device functions that served it
# (global and semi-global share one). Uses gpu-check's CLI, LOGS, row and
# elapsed; returns non-zero on a failure. TIMELINE_DEVICE names the device
# (gpu:0).
gpu_timeline_step() {
    local t0 device=${TIMELINE_DEVICE:-gpu:0} dir="$LOGS/timeline"
    t0=$(date +%s)
    mkdir -p "$dir"
    if ! timeout -k 10 300 "$CLI" verify --device "$device" --pairs 2000 --seed 3 \
            --timeline "$dir/verify.json" >"$dir/verify.txt" 2>&1; then
        tail -n 5 "$dir/verify.txt"
        row timeline FAILED "verify --timeline ($(elapsed "$t0"))"
        return 1
    fi
    python3 - "$dir" <<'EOF'
import random, sys
d = sys.argv[1]
rng = random.Random(7)
def fasta(path, count, low, high, prefix):
    with open(path, "w") as f:
        for k in range(count):
            n = rng.randint(low, high)
            f.write(f">{prefix}{k}\n" + "".join(rng.choice("ACDEFGHIKLMNPQRSTVWY") for _ in range(n)) + "\n")
fasta(d + "/queries.fa", 8, 50, 400, "q")
fasta(d + "/db.fa", 4000, 30, 600, "t")
EOF
    if ! timeout -k 10 300 "$CLI" search -q "$dir/queries.fa" -d "$dir/db.fa" --device "$device" \
            --timeline "$dir/search.json" -o /dev/null >"$dir/search.txt" 2>&1; then
        tail -n 5 "$dir/search.txt"
        row timeline FAILED "search --timeline ($(elapsed "$t0"))"
        return 1
    fi
    # The profile kernels: hmmsearch with the filters (SSV/MSV, Viterbi) and
    # with --max (every target through the Forward filter kernel).
    local extra
    for extra in "" --max; do
        if ! timeout -k 10 120 "$CLI" hmmsearch --device "$device" $extra --noali -o /dev/null \
                --timeline "$dir/hmmsearch${extra}.json" "$ROOT/tests/data/profile/tiny.hmm" "$dir/db.fa" \
                >"$dir/hmmsearch${extra}.txt" 2>&1; then
            tail -n 5 "$dir/hmmsearch${extra}.txt"
            row timeline FAILED "hmmsearch $extra --timeline ($(elapsed "$t0"))"
            return 1
        fi
    done
    if python3 - "$dir/verify.json" "$dir/search.json" "$dir/hmmsearch.json" "$dir/hmmsearch--max.json" <<'EOF'
import json, re, sys
grammar = re.compile(r"^(sw|nw|sg)_(linear|affine)_[a-z]+([1-9][0-9]*)?_(s8|s16|s32|s64|s16x2)$")
failures = 0
for path in sys.argv[1:]:
    trace = json.load(open(path))
    clock = trace["otherData"]["clock_source"]
    kernels = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
    print(f"timeline: {path}: clock {clock}, {len(kernels)} kernel events")
    if not clock.startswith("cupti"):
        print(f"timeline: FAIL {path}: clock {clock}, not cupti")
        failures += 1
    if not kernels:
        print(f"timeline: FAIL {path}: no kernel events")
        failures += 1
    served, untimed = {}, 0
    for e in kernels:
        name, detail = e["name"], e.get("args", {}).get("detail", "")
        function = detail.split("; ")[-1] if detail else ""
        if not grammar.match(name):
            print(f"timeline: FAIL {path}: kernel event named {name!r}, not in the kernel grammar")
            failures += 1
        # No device function: CUPTI reported no kernel for the operation (CUDA
        # events timed it); counted, a failure only when it is every kernel.
        if "(" not in function:
            untimed += 1
        served.setdefault(name, set()).add(detail)
    if untimed:
        print(f"timeline: {path}: {untimed} of {len(kernels)} kernel events without a device function")
    if kernels and untimed == len(kernels):
        print(f"timeline: FAIL {path}: no kernel event has its device function from CUPTI")
        failures += 1
    for name in sorted(served):
        print(f"timeline:   {name:28} {' | '.join(sorted(served[name]))}")
sys.exit(1 if failures else 0)
EOF
    then
        row timeline ok "kernel names and device functions from CUPTI ($(elapsed "$t0"))"
    else
        row timeline FAILED "see the timeline: lines above ($(elapsed "$t0"))"
        return 1
    fi
}
