# Sourced by scripts/gpu-check (step "mpi"): all against all and search under
# mpirun, one rank per GPU, against one process on one GPU. Uses gpu-check's
# CLI, LOGS, DEPS, row and elapsed; returns non-zero when a run failed or the
# outputs differ. The set is the real 16S set when .devdeps/bench/data has it
# (MPI_SET=N takes its first N records), else random DNA. MPI_ONE and MPI_ALL
# (gpu:0 and gpu) name the devices, e.g. cpu to try the step without a GPU.
seconds_since() {  # seconds since a `date +%s%N` stamp, to the millisecond
    local ms=$(( ($(date +%s%N) - $1) / 1000000 ))
    printf '%d.%03d' $(( ms / 1000 )) $(( ms % 1000 ))
}

without_device() {  # a search table without its device column (found by its header)
    awk -F'\t' -v OFS='\t' 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "device") d = i }
        { out = ""; for (i = 1; i <= NF; ++i) if (i != d) out = out (out == "" ? "" : OFS) $i; print out }' "$1"
}

gpu_mpi_step() {
    local t0 dir gpus ranks set scheme one_s mpi_s rc=0
    t0=$(date +%s)
    if ! command -v mpirun >/dev/null; then
        row mpi skipped "no mpirun (scripts/gpu-check --fetch-deps puts Open MPI in .devdeps/mpi; carry it)"
        return 0
    fi
    if ! "$CLI" --version | grep -q '^MPI: built in'; then
        row mpi FAILED "alignscope-cli was built without MPI although mpirun is here"
        return 1
    fi
    dir=$(mktemp -d)
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    ranks=$(( gpus >= 2 ? gpus : 2 ))
    if [[ -f "$DEPS/bench/data/rRNA16S.fasta.gz" ]]; then
        gunzip -c "$DEPS/bench/data/rRNA16S.fasta.gz" |
            awk -v n="${MPI_SET:-0}" '/^>/{k++} n==0||k<=n' >"$dir/set.fa"
        set="16S rRNA, $(grep -c '^>' "$dir/set.fa") records"
    else
        python3 - "$dir/set.fa" <<'PY'
import random, sys
rng = random.Random(9)
base = "".join(rng.choice("ACGT") for _ in range(1500))
with open(sys.argv[1], "w") as f:
    for i in range(2000):
        s = "".join(rng.choice("ACGT") if rng.random() < 0.15 else c for c in base[: rng.randint(1200, 1500)])
        f.write(f">r{i}\n{s}\n")
PY
        set="random DNA, 2000 records"
    fi
    scheme=(--matrix EDNAFULL --gap-open 10 --gap-extend 1)
    # --bind-to none: each rank's host threads may use every core.
    # PMIx of the host may be another version than Open MPI's own: quiet its
    # plugin warnings (harmless) so that the log shows the runs.
    export PMIX_MCA_pcompress_base_silence_warning=1 PMIX_MCA_mca_base_component_show_load_errors=0
    local mpirun=(mpirun --allow-run-as-root --bind-to none -np "$ranks")
    local log="$LOGS/mpi.txt"
    {
        echo "mpi: $set; $gpus GPU(s), $ranks ranks"
        mpirun --version | head -1
        local s0
        s0=$(date +%s%N)
        timeout -k 10 300 "$CLI" allvsall "$dir/set.fa" --device "${MPI_ONE:-gpu:0}" "${scheme[@]}" -o "$dir/one.tsv" || rc=1
        one_s=$(seconds_since "$s0")
        s0=$(date +%s%N)
        timeout -k 10 300 "${mpirun[@]}" "$CLI" allvsall "$dir/set.fa" --device "${MPI_ALL:-gpu}" "${scheme[@]}" -o "$dir/mpi.tsv" || rc=1
        mpi_s=$(seconds_since "$s0")
        echo "mpi: allvsall one process on ${MPI_ONE:-gpu:0} ${one_s} s, mpirun -np $ranks ${mpi_s} s (wall, reading and writing included)"
        if cmp "$dir/one.tsv" "$dir/mpi.tsv"; then
            echo "mpi: allvsall tables identical ($(wc -l <"$dir/one.tsv") lines)"
        else
            diff "$dir/one.tsv" "$dir/mpi.tsv" | head -n 6 | cut -c1-300
            rc=1
        fi
        # search: the database dealt across ranks, hits merged on rank 0.
        awk '/^>/{k++} k<=4' "$dir/set.fa" >"$dir/q.fa"
        timeout -k 10 300 "$CLI" search -q "$dir/q.fa" -d "$dir/set.fa" --device "${MPI_ONE:-gpu:0}" "${scheme[@]}" --db-cache off \
            --top 50 -o "$dir/one.search" || rc=1
        timeout -k 10 300 "${mpirun[@]}" "$CLI" search -q "$dir/q.fa" -d "$dir/set.fa" --device "${MPI_ALL:-gpu}" "${scheme[@]}" \
            --db-cache off --top 50 -o "$dir/mpi.search" || rc=1
        # The device column names the GPU each hit ran on (gpu:1 on rank 1):
        # everything else must be the same bytes.
        if cmp <(without_device "$dir/one.search") <(without_device "$dir/mpi.search"); then
            echo "mpi: search hits identical but for the device column ($(wc -l <"$dir/one.search") lines)"
        else
            diff <(without_device "$dir/one.search") <(without_device "$dir/mpi.search") | head -n 6 | cut -c1-300
            rc=1
        fi
        echo "mpi: status $rc"
    } >"$log" 2>&1
    cat "$log"
    rm -rf "$dir"
    if grep -q '^mpi: status 0$' "$log"; then
        row mpi ok "one process ${one_s} s, mpirun -np $ranks ${mpi_s} s, same table and hits ($(elapsed $t0))"
    else
        row mpi FAILED "$(elapsed $t0); see $log"
        return 1
    fi
}
