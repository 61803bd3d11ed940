#!/usr/bin/env bash
# Mutation testing of the engine's and the labs' core modules, with mutmut (requirements-mutation.txt).
#
#   bash scripts/mutation.sh                 # every module below, smallest first (an hour or more on 2 cores)
#   bash scripts/mutation.sh rope masks      # only these
#   bash scripts/mutation.sh --list          # the modules and the tests each one is run against
#
# mutmut changes one operator, constant or call at a time in a copy of the code and runs the tests that reach
# the changed function. A mutant the tests kill is fine; one that survives is a change no test can see.
# Each module is run in a scratch copy of the working tree ($MUTATION_WORKDIR, default /tmp), never in the
# repository, with the few fast test files that cover it. It prints "module: killed/total" and the survivors;
# `cd $MUTATION_WORKDIR/<module> && mutmut show <name>` shows one survivor's diff.
# Not run by CI: it is slow. It runs at the lowest priority, one mutant at a time, on one thread.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$REPO/.venv/bin/python}"
WORKDIR="${MUTATION_WORKDIR:-${TMPDIR:-/tmp}/attention-playground-mutation}"

# name | file to mutate | tests (pytest arguments, space-separated; -k expressions without spaces)
MODULES=(
  "rope|mha/rope.py|tests/test_engine_today.py tests/test_mutants_rope.py"
  "masks|mha/masks.py|tests/test_engine_module.py tests/test_engine_reference.py tests/test_engine_torch.py tests/test_numerics.py tests/test_mutants_masks.py"
  "functional|mha/functional.py|tests/test_engine_module.py tests/test_engine_torch.py tests/test_numerics.py tests/test_mutants_functional.py"
  "kv_cache|mha/kv_cache.py|tests/test_kv_cache.py tests/test_mutants_kv_cache.py"
  "linear|mha/experiments/linear.py|tests/test_linear_sparse.py tests/test_mutants_linear.py"
  "reviews|mha/text/reviews.py|tests/test_reviews.py -k split_or_held_or_vocab_or_read tests/test_mutants_reviews.py"
  "flash|mha/experiments/flash.py|tests/test_flash.py tests/test_mutants_flash.py"
  "sparse|mha/experiments/sparse.py|tests/test_linear_sparse.py tests/test_mutants_sparse.py"
  "module|mha/module.py|tests/test_engine_module.py tests/test_engine_today.py tests/test_engine_torch.py tests/test_kv_cache.py"
  "tasks|mha/training/tasks.py|tests/test_training.py tests/test_mutants_tasks.py"
)

if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${MODULES[@]}" | tr '|' '\t'
  exit 0
fi
if ! "$PY" -c "import mutmut" 2>/dev/null; then
  echo "mutmut is not installed: $PY -m pip install -r requirements-mutation.txt" >&2
  exit 2
fi
MUTMUT="$(dirname "$PY")/mutmut"

run_module() {
  local name="$1" file="$2" tests="$3" dest="$WORKDIR/$1" args=() arg
  # Test files that do not exist (yet) are left out, so the command runs on any checkout.
  for arg in $tests; do
    if [[ "$arg" == tests/* && ! -e "$REPO/$arg" ]]; then continue; fi
    args+=("$arg")
  done
  rm -rf "$dest" && mkdir -p "$dest"
  # The working tree as it is (tracked and new files, not .venv or build outputs), so uncommitted tests count.
  (cd "$REPO" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$dest" 2>/dev/null || true)
  local copy=() entry
  for entry in "$dest"/* "$dest"/.ci; do
    entry="$(basename "$entry")"
    [[ "$entry" == mha || ! -e "$dest/$entry" ]] || copy+=("$entry")
  done
  {
    echo "[mutmut]"
    echo "source_paths = mha"
    echo "only_mutate = $file"
    echo "also_copy ="
    printf '    %s\n' "${copy[@]}"
    echo "pytest_add_cli_args = -p no:cacheprovider --timeout=120"
    echo "pytest_add_cli_args_test_selection ="
    printf '    %s\n' "${args[@]//_or_/ or }"
  } >"$dest/setup.cfg"
  echo "== $name: $file against ${args[*]//_or_/ or }"
  (
    cd "$dest"
    export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 ATTN_PLAYGROUND_THREADS=1
    nice -n 19 "$MUTMUT" run --max-children 1 >"$dest/run.log" 2>&1 || {
      tail -30 "$dest/run.log"
      echo "$name: mutmut failed (log: $dest/run.log)"
      return 1
    }
    "$MUTMUT" export-cicd-stats >/dev/null
    "$PY" - "$name" <<'EOF'
import json, sys
s = json.load(open("mutants/mutmut-cicd-stats.json"))
other = s["total"] - s["killed"] - s["survived"]
print(f"{sys.argv[1]}: {s['killed']}/{s['total']} killed, {s['survived']} survived"
      + (f", {other} other (timeout, suspicious, no tests, skipped)" if other else ""))
EOF
    "$MUTMUT" results 2>/dev/null | sed 's/^/    /'
  )
}

selected=("$@")
for spec in "${MODULES[@]}"; do
  IFS='|' read -r name file tests <<<"$spec"
  if ((${#selected[@]})) && [[ ! " ${selected[*]} " == *" $name "* ]]; then continue; fi
  run_module "$name" "$file" "$tests" || true
done
