"""Lab 4's case: the first tutorial's section-5 causal mask in its section-2 module.

Computed by :mod:`mha.experiments.tutorial_causal`. Shown: the tutorial's two lines as it writes them, the
weights they give for the learner's sentence and seed next to the intended causal weights (NaN cells marked),
the pattern read from those weights, why, and the two fixes with their check against this engine.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from components import cache
from components.i18n import t
from components.labs.charts import Titles, weights_marking_nan
from components.labs.common import show_chart
from components.safe_text import md_escape
from mha.experiments.tutorial_causal import (
    FIX_CODE,
    TOLERANCE,
    FixCheck,
    MixedCausal,
    mixed_causal,
    section2_lines,
    section5_line,
)

__all__ = ["ANCHOR", "render"]

ANCHOR = "tutorial1_causal"  # the case's heading, for links inside the lab's page


@cache.results(max_entries=64)
def _cached_case(tokens: tuple[str, ...], d_model: int, num_heads: int, seed: int) -> MixedCausal:
    return mixed_causal(tokens, d_model, num_heads, seed)


def _fix_code(fix: str) -> str:
    """The code a fix puts in place of the tutorial's: section 5's line, or section 2's ``masked_fill`` line."""
    if fix == "tril":
        return FIX_CODE["tril"]
    if_line, fill_line = section2_lines().splitlines()
    return "\n".join((if_line, fill_line.replace(fill_line.strip(), FIX_CODE["additive"])))


def _fix_verdict(check: FixCheck) -> None:
    numbers = {"weights": f"{check.weights_diff:.1e}", "output": f"{check.output_diff:.1e}", "tol": f"{TOLERANCE:.0e}"}
    if check.agrees:
        st.success(t("lab.masks.mixup.fix_ok", **numbers))
    else:
        st.error(t("lab.masks.mixup.fix_bad", **numbers))


def _pattern_text(case: MixedCausal, labels: list[str]) -> str:
    """What the computed weights show, row by row: keys only after the query, NaN rows."""

    def named(rows: tuple[int, ...]) -> str:
        return md_escape(", ".join(labels[i] for i in rows), limit=300)

    parts = []
    if case.pattern.future_only:
        parts.append(t("lab.masks.mixup.future_only", rows=named(case.pattern.future_only)))
    if case.pattern.nan:
        parts.append(t("lab.masks.mixup.nan_rows", rows=named(case.pattern.nan)))
    return "\n\n".join(parts)


def render(tokens: list[str], labels: list[str], d_model: int, num_heads: int, seed: int) -> None:
    """Draw the case for the learner's ``tokens`` (axis ``labels``) with a ``d_model`` x ``num_heads`` layer
    seeded by ``seed``."""
    case = _cached_case(tuple(tokens), d_model, num_heads, seed)
    st.subheader(t("lab.masks.mixup.title"), anchor=ANCHOR)
    st.markdown(t("lab.masks.mixup.intro", d_model=d_model, heads=num_heads))
    st.markdown(t("lab.masks.mixup.section5"))
    st.code(section5_line(), language="python")
    st.markdown(t("lab.masks.mixup.section2"))
    st.code(section2_lines(), language="python")

    panels, values = [], []
    for head in range(num_heads):
        panels += [t("lab.masks.mixup.as_written", head=head), t("lab.masks.mixup.intended", head=head)]
        values += [case.as_written[head].numpy(), case.intended[head].numpy()]
    titles = Titles(x=t("lab.common.key"), y=t("lab.common.query"), color=t("lab.common.weight"))
    legend = t("lab.masks.mixup.nan_legend")
    show_chart(weights_marking_nan(np.stack(values), labels, panels, titles, legend, most_per_row=2, largest=36))
    st.caption(t("lab.masks.mixup.caption"))
    pattern = _pattern_text(case, labels)
    if pattern:
        st.warning(pattern)
    st.markdown(t("lab.masks.mixup.why"))

    st.markdown(t("lab.masks.mixup.fixes_title"))
    for number, check in enumerate(case.fixes, start=1):
        st.markdown(f"{number}. {t(f'lab.masks.mixup.fix.{check.fix}')}")
        st.code(_fix_code(check.fix), language="python")
        _fix_verdict(check)
