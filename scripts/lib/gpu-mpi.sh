# Sourced by scripts/gpu-check (step "mpi"): all against all on one GPU, on
# every GPU in one process, and under mpirun with one rank per GPU (each run
# MPI_REPEAT times, default 3: the median score phase and the speed-ups are
# printed, with each rank's times from --stats), the three tables compared
# byte for byte; then search under mpirun against one process. Uses
# gpu-check's CLI, LOGS, DEPS, row and elapsed; returns non-zero when a run
# failed or the outputs differ. The set is the real 16S set when
# .devdeps/bench/data has it (MPI_SET=N takes its first N records), else
# random DNA. MPI_ONE and MPI_ALL (gpu:0 and gpu) name the devices, e.g. cpu
# to try the step without a GPU.
seconds_since() {  # seconds since a `date +%s%N` stamp, to the millisecond
    local ms=$(( ($(date +%s%N) - $1) / 1000000 ))
    printf '%d.%03d' $(( ms / 1000 )) $(( ms % 1000 ))
}

without_device() {  # a search table without its device column (found by its header)
    awk -F'\t' -v OFS='\t' 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "device") d = i }
        { out = ""; for (i = 1; i <= NF; ++i) if (i != d) out = out (out == "" ? "" : OFS) $i; print out }' "$1"
}

# allvsall_runs WAY TABLE COMMAND...: runs COMMAND $repeat times (the first
# with -o TABLE, the others -o /dev/null), keeping each run's stderr in
# $dir/WAY.err.N and its score-phase and wall seconds in $dir/WAY.score, WAY.wall.
allvsall_runs() {
    local way=$1 table=$2 k s0 out
    shift 2
    : >"$dir/$way.score"
    : >"$dir/$way.wall"
    for (( k = 1; k <= repeat; ++k )); do
        out=/dev/null
        (( k == 1 )) && out=$table
        s0=$(date +%s%N)
        if ! timeout -k 10 300 "$@" -o "$out" 2>"$dir/$way.err.$k"; then
            echo "mpi: $way run $k failed:"
            tail -n 5 "$dir/$way.err.$k"
            return 1
        fi
        echo "$(seconds_since "$s0")" >>"$dir/$way.wall"
        sed -n 's/^allvsall: .* in \([0-9.]*\) s (.*/\1/p' "$dir/$way.err.$k" >>"$dir/$way.score"
        echo "mpi: $way run $k: $(grep -h '^allvsall: [0-9]* pairs' "$dir/$way.err.$k")"
    done
}
median_of() { [[ -s "$1" ]] && sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
median_score() { median_of "$dir/$1.score"; }
median_wall() { median_of "$dir/$1.wall"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }'; }

gpu_mpi_step() {
    local t0 dir gpus ranks set scheme rc=0
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
    local log="$LOGS/mpi.txt" repeat=${MPI_REPEAT:-3}
    local one="${MPI_ONE:-gpu:0}" all="${MPI_ALL:-gpu}"
    {
        echo "mpi: $set; $gpus GPU(s), $ranks ranks; each timing the median of $repeat runs"
        mpirun --version | head -1
        # Three ways, each run $repeat times; the first writes the table that is
        # compared, the others -o /dev/null. "score" is the summary line's time
        # (the self-scores and every tile's scores, after the inputs are read),
        # "wall" the whole command.
        allvsall_runs one "$dir/one.tsv" "$CLI" allvsall "$dir/set.fa" --device "$one" "${scheme[@]}" || rc=1
        if (( gpus >= 2 )) || [[ "$one" != "$all" ]]; then
            allvsall_runs all "$dir/all.tsv" "$CLI" allvsall "$dir/set.fa" --device "$all" "${scheme[@]}" || rc=1
        fi
        allvsall_runs mpi "$dir/mpi.tsv" "${mpirun[@]}" "$CLI" allvsall "$dir/set.fa" --device "$all" "${scheme[@]}" \
            --stats || rc=1
        for way in all mpi; do
            [[ -f "$dir/$way.tsv" ]] || continue
            if cmp "$dir/one.tsv" "$dir/$way.tsv"; then
                echo "mpi: allvsall table of '$way' identical to one process ($(wc -l <"$dir/one.tsv") lines)"
            else
                diff "$dir/one.tsv" "$dir/$way.tsv" | head -n 6 | cut -c1-300
                rc=1
            fi
        done
        grep -h '^allvsall: rank' "$dir/mpi.err.1" | sed 's/^/mpi: first mpirun run: /'
        local s1 s2 sm
        s1=$(median_score one) s2=$(median_score all) sm=$(median_score mpi)
        echo "mpi: score phase (median): one process on $one ${s1} s;" \
            "$([[ -n "$s2" ]] && echo "one process on $all ${s2} s ($(ratio "$s1" "$s2")x);")" \
            "mpirun -np $ranks on $all ${sm} s ($(ratio "$s1" "$sm")x);" \
            "$( ((gpus >= 2)) && awk -v a="$s1" -v b="$sm" 'BEGIN { print "target 1.8x:", (b > 0 && a / b >= 1.8) ? "met" : "NOT met" }')"
        echo "mpi: wall (median): one $(median_wall one) s; $([[ -n "$s2" ]] && echo "one process on $all $(median_wall all) s;") mpirun $(median_wall mpi) s"
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
        row mpi ok "$(grep -h '^mpi: score phase' "$log" | sed 's/^mpi: score phase (median): //'); same table and hits ($(elapsed $t0))"
    else
        row mpi FAILED "$(elapsed $t0); see $log"
        return 1
    fi
}
