#!/usr/bin/env bash
# Mutation testing of the engine's and the labs' core modules, with mutmut (pip install -r requirements-mutation.txt).
#
#   bash scripts/mutation.sh                 # every module below, smallest first (an hour or more on 2 cores)
#   bash scripts/mutation.sh rope masks      # only these
#   bash scripts/mutation.sh --list          # the modules and the tests each one is run against
#   MUTANTS='mha.rope.x_check_rope__mutmut_7 mha.rope.*_4' bash scripts/mutation.sh rope
#                                            # only these mutants (names or globs), e.g. last run's survivors
#
# mutmut changes one operator, constant or call at a time in a copy of the code and runs the tests that reach
# the changed function. A mutant the tests kill is fine; one that survives is a change no test can see.
# Each module is run in a scratch copy of the working tree ($MUTATION_WORKDIR, default /tmp), never in the
# repository, with the few fast test files that cover it. It prints "module: killed/run" and the survivors;
# `cd $MUTATION_WORKDIR/<module> && mutmut show <name>` shows one survivor's diff.
# Not run by CI: it is slow. It runs at the lowest priority, one mutant at a time, on one thread.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$REPO/.venv/bin/python}"
WORKDIR="${MUTATION_WORKDIR:-${TMPDIR:-/tmp}/attention-playground-mutation}"

# name | file to mutate | tests (pytest arguments: files or test ids, space-separated)
MODULES=(
  "rope|mha/rope.py|tests/test_engine_today.py tests/test_mutants_rope.py"
  "masks|mha/masks.py|tests/test_engine_module.py tests/test_engine_once.py tests/test_engine_reference.py tests/test_engine_torch.py tests/test_numerics.py tests/test_mutants_masks.py"
  "functional|mha/functional.py|tests/test_engine_module.py tests/test_engine_once.py tests/test_engine_torch.py tests/test_numerics.py tests/test_mutants_functional.py"
  "kv_cache|mha/kv_cache.py|tests/test_kv_cache.py tests/test_mutants_kv_cache.py"
  "linear|mha/experiments/linear.py|tests/test_linear_sparse.py tests/test_mutants_linear.py"
  "reviews|mha/text/reviews.py|tests/test_reviews.py::test_the_file_is_the_one_the_script_and_the_readme_describe tests/test_reviews.py::test_the_splits_are_disjoint_and_every_review_is_cut_as_the_script_cuts_it tests/test_reviews.py::test_the_vocabulary_comes_from_the_training_split_alone tests/test_reviews.py::test_the_example_sentences_are_of_both_kinds_and_none_is_a_bundled_review tests/test_reviews.py::test_a_sentence_is_read_as_characters_cut_to_the_length_with_what_was_left_out_counted tests/test_mutants_reviews.py"
  "flash|mha/experiments/flash.py|tests/test_flash.py tests/test_mutants_flash.py"
  "sparse|mha/experiments/sparse.py|tests/test_linear_sparse.py tests/test_mutants_sparse.py"
  "module|mha/module.py|tests/test_engine_module.py tests/test_engine_once.py tests/test_engine_today.py tests/test_engine_torch.py tests/test_kv_cache.py tests/test_mutants_module.py"
  "tasks|mha/training/tasks.py|tests/test_training.py::test_targets_follow_the_tasks_rule tests/test_training.py::test_a_tasks_relation_points_where_its_target_comes_from tests/test_training.py::test_induction_sequences_repeat_a_stretch_at_varying_distances tests/test_training.py::test_examples_show_the_task_relations_apart_from_the_previous_token tests/test_training.py::test_the_learners_text_is_read_when_it_is_a_sequence_of_the_task tests/test_training.py::test_task_sizes_and_masks tests/test_training.py::test_unscramble_sets_aside_a_quarter_of_the_orders_at_most_1024 tests/test_training.py::test_unscramble_never_draws_a_held_out_order tests/test_training.py::test_two_words_set_nothing_aside_and_evaluate_on_both_orders tests/test_training.py::test_unscrambles_accuracy_is_measured_on_orders_no_training_batch_contained tests/test_training.py::test_fresh_evaluation_sequences_are_not_training_sequences tests/test_mutants_tasks.py"
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
    if [[ "$arg" == tests/* && ! -e "$REPO/${arg%%::*}" ]]; then continue; fi
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
    printf '    %s\n' "${args[@]}"
  } >"$dest/setup.cfg"
  echo "== $name: $file against ${args[*]}"
  (
    cd "$dest"
    export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 ATTN_PLAYGROUND_THREADS=1
    # shellcheck disable=SC2086  # MUTANTS: names or globs, split on spaces
    nice -n 19 "$MUTMUT" run --max-children 1 ${MUTANTS:-} >"$dest/run.log" 2>&1 || {
      tail -30 "$dest/run.log"
      echo "$name: mutmut failed (log: $dest/run.log)"
      return 1
    }
    "$MUTMUT" export-cicd-stats >/dev/null
    "$PY" - "$name" <<'EOF'
import json, sys
s = json.load(open("mutants/mutmut-cicd-stats.json"))
keys = ("survived", "no_tests", "timeout", "suspicious", "skipped", "segfault")
checked = s["killed"] + sum(s[k] for k in keys)
left = ", ".join(f"{s[k]} {k.replace('_', ' ')}" for k in keys if s[k])
scope = f" (of {s['total']} mutants, {s['total'] - checked} not run)" if checked < s["total"] else ""
print(f"{sys.argv[1]}: {s['killed']}/{checked} killed{scope}" + (f"; {left}" if left else ""))
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
