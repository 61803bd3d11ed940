"""The seam between a panel and the values it shows: :class:`ValueParts`.

A panel draws its frame at once -- its heading, what the step does, the engine's code, the labs --
which no control changes. Everything that one of the learner's choices changes (a shape, a count, a
chart, a note quoting a number, a measured difference) is a *part*: a function of the run's
:class:`Results` that the panel hands to :meth:`ValueParts.add`. The page fills every part from one
config (:meth:`ValueParts.fill`):

- on the main page, the values' fragment fills them (:mod:`components.live_controls`): in every
  full run, and in a fragment run when a control that changes only values changed (the values' fragment alone
  for a seed; the controls' and the values' for the mask, the sizes, the text), so such a
  change sends the parts and not the page around them;
- on a teacher's slide, the slide fills them at once, in the same run.

So a value can only reach the page through a part, and a part only reads the run it is given: nothing
the page shows can be left stale by a change that redraws only the parts (``tests/test_panels.py``
checks that every frame is the same whatever the values).

Charts that follow the head picker (:meth:`ValueParts.add_head_chart`) are drawn by the head's own
fragment; their cells count together against :data:`HEAD_SWITCH_CELLS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import canvas, runner
from components.head_picker import picked_on_server, select_head
from components.heatmap import Figure, Heads
from components.i18n import t
from mha.batching import PaddingCheck
from mha.config import AttentionConfig
from mha.counting import count_parameters
from mha.dropout import DropoutExample, dropout_example
from mha.pipeline import AttentionRun
from mha.reference import BatchOrderCheck, TorchCheck
from mha.score_scale import ScoreSpread, score_spread
from mha.vision.analysis import ImageAnalysis
from mha.vision.upload import Upload

__all__ = ["HEAD_SWITCH_CELLS", "PART_KEY", "Draw", "HeadChart", "Results", "ValueParts", "heads_fit"]

#: The charts that follow the head send every head's panels (and the browser switches heads itself) up to
#: this many cells in all, 256 KB a run as float32, about half that as the four decimals most panels go with:
#: the default page (11 tokens x 8 heads) is 20 k, 24 tokens x 8 heads 51 k. Beyond, the bytes cost more than
#: the instant switch saves, and the charts carry the shown head only (a pick then asks the server).
HEAD_SWITCH_CELLS = 65_536
PART_KEY = "value_part_"  # each part's place: value_part_0, value_part_1, ... in page order
DROPOUT_P = 0.1  # the tutorials' usual attention dropout (step 2's example)
DROPOUT_HEAD = 0  # the dropout example's head: the note says which, and it stays as the browser switches heads


@dataclass(frozen=True)
class Results:
    """What the page shows of one config, each thing computed (once, cached per process) when a part asks.

    ``upload``: the learner's own image, read instead of ``config.image`` by a run that reads an image.
    """

    config: AttentionConfig
    upload: Upload | None = None

    @cached_property
    def run(self) -> AttentionRun:
        """The traced run (steps 1-4)."""
        return runner.cached_run(self.config, self.upload)

    @cached_property
    def check(self) -> TorchCheck:
        """The live check against ``torch.nn.MultiheadAttention`` (GQA or RoPE: ``F.scaled_dot_product_attention``)."""
        return runner.cached_check(self.config, self.upload)

    @cached_property
    def batch_order(self) -> BatchOrderCheck | None:
        """The [L, B, E] pitfall, measured (``None`` where ``nn.MultiheadAttention`` cannot hold the layer)."""
        return runner.cached_batch_order(self.config, self.upload)

    @cached_property
    def padding(self) -> PaddingCheck | None:
        """The padded batch of two sentences (``None`` where the page's text cannot make one)."""
        return runner.cached_padding(self.config)

    @cached_property
    def image_analysis(self) -> ImageAnalysis | None:
        """A run on an image: each head's attention distance, rollout, the heads' means (``None`` on text)."""
        return runner.cached_image_analysis(self.config, self.upload)

    @cached_property
    def score_spread(self) -> ScoreSpread:
        """The spreads behind step 2's "why divide by √d_k", over every head."""
        a = self.run.trace.attend
        queries, keys = a.queries, a.keys  # what the scores read: after RoPE, K/V heads repeated (GQA)
        assert queries is not None and keys is not None  # the engine's traced forward always fills them
        return score_spread(queries[0], keys[0], a.raw_scores[0], a.scale)  # (H, L, Dh), (H, Lq, Lk)

    @cached_property
    def dropout_example(self) -> DropoutExample:
        """One row of head :data:`DROPOUT_HEAD`'s weights before and after training-mode dropout (p = 0.1)."""
        weights = self.run.trace.attend.weights[0]  # (H, Lq, Lk)
        return dropout_example(weights, DROPOUT_P, seed=self.config.seed, head=DROPOUT_HEAD)

    @cached_property
    def counted(self) -> int:
        """Parameters the model holds."""
        return count_parameters(self.run.model)


Draw = Callable[[Results], None]  # draws one part of the page from what one config computed
Shown = Callable[[], bool]  # whether a chart is shown now (a learner may answer before seeing it)


class HeadChart(Protocol):
    """A chart that shows one head at a time and follows the head picker."""

    key: str  # the chart's element key: a rerun updates the same chart

    def cells(self, run: AttentionRun) -> int:
        """Cells one head's panels take (summed over the page's head charts against :data:`HEAD_SWITCH_CELLS`)."""
        ...

    def figure(self, run: AttentionRun, heads: Heads) -> Figure:
        """The figure holding the heads in ``heads`` (every head, or the shown one)."""
        ...


@dataclass
class ValueParts:
    """The parts of a page that show values, in page order, and the charts that follow the head.

    Args:
        hide_picker: no head picker is drawn (a teacher's ``hide=head``): the link's head is shown.
    """

    hide_picker: bool = False
    _picker: DeltaGenerator | None = None
    _parts: list[tuple[DeltaGenerator, Draw]] = field(default_factory=list)
    _head_charts: list[tuple[DeltaGenerator, HeadChart, Shown | None]] = field(default_factory=list)

    def add_head_picker(self, box: DeltaGenerator) -> None:
        """Keep a place at the end of ``box`` for the head picker of the charts that follow the head."""
        self._picker = box.empty()

    def add(self, box: DeltaGenerator, draw: Draw) -> None:
        """Keep a place at the end of ``box`` for ``draw``, drawn by :meth:`fill`.

        ``draw`` writes at least one element, an invisible ``st.empty()`` where it has nothing to show for these
        values: a fragment's later runs can write only into the outside containers it wrote to in the last full run
        (Streamlit reserves a slot there on the first write). Each place is keyed ``value_part_<n>``, so tests can
        find it (``tests/test_panels.py`` checks that none is left empty).
        """
        self._parts.append((box.container(key=f"{PART_KEY}{len(self._parts)}"), draw))

    def add_fragment(self, box: DeltaGenerator, fragment: Draw) -> None:
        """Keep a place at the end of ``box`` for ``fragment``, an ``st.fragment`` with widgets of its own.

        Its place is an ``st.empty``: Streamlit draws a fragment in a block of its own, which the empty holds,
        so a rerun of the fragment alone updates that block in place (in a container, it would add a second).
        """
        self._parts.append((box.empty(), fragment))

    def add_head_chart(self, box: DeltaGenerator, chart: HeadChart, shown: Shown | None = None) -> None:
        """Keep a place at the end of ``box`` for ``chart``, drawn for the picked head; where ``shown()`` says no
        (a learner predicting before seeing), the place says why instead."""
        self._head_charts.append((box.empty(), chart, shown))

    @property
    def empty(self) -> bool:
        """Whether no part was kept (a page with nothing that follows the values)."""
        return not self._parts and not self._head_charts

    def fill(self, results: Results) -> None:
        """Draw every part for ``results`` in its place, the head picker and its charts first."""
        if self._head_charts:
            run = results.run
            every = heads_fit(run, [chart for _, chart, _ in self._head_charts])
            drawn = select_head(run.num_heads, hidden=True, every=every)  # this run's head
            if self._picker is None:
                raise ValueError("a page with charts that follow the head needs a place for the head picker")
            with self._picker:
                _follow_head(run, drawn, tuple(self._head_charts), self.hide_picker)
        for place, draw in self._parts:
            with place:
                draw(results)


def heads_fit(run: AttentionRun, charts: Iterable[HeadChart]) -> bool:
    """Whether ``charts`` can hold every head of ``run`` (at most :data:`HEAD_SWITCH_CELLS` cells in all)."""
    return run.num_heads * sum(chart.cells(run) for chart in charts) <= HEAD_SWITCH_CELLS


@st.fragment
def _follow_head(
    run: AttentionRun, drawn: Heads, charts: tuple[tuple[DeltaGenerator, HeadChart, Shown | None], ...], hidden: bool
) -> None:
    """The head picker and the charts that follow it (a fragment may fill places outside it that it filled in
    the last full run, and fills them again in each of its reruns).

    A pick redraws the charts in the browser and reruns this fragment a moment later to tell the server, which
    writes the head into the link and sends the charts as the full run drew them (``drawn``): the same bytes,
    which the page already holds. Where the charts are too big to hold every head, the pick reruns this
    fragment at once, and it draws them for the new head.
    """
    heads = select_head(run.num_heads, hidden=hidden, every=drawn.every)
    shown = heads if picked_on_server(heads) else drawn
    for slot, chart, show in charts:
        if show is None or show():
            canvas.draw(slot, chart.figure(run, shown), key=chart.key)
        else:
            slot.info(t("quiz.predict_hidden"), icon=":material/visibility_off:")
