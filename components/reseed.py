"""A new seed without a full run: the places a page keeps for the parts that show the weights' values.

A seed changes the weights' values and nothing else: not a shape, a parameter count, an explanation
or a line of code. A full run sends every element of the page again (~190 on the default page) and
the browser re-renders each, about 1 ms apiece on a 2-core laptop: most of a new seed's time. So the
main page is drawn in two kinds of parts. The full run draws what a seed leaves as it is and keeps a
place (an empty ``st.container``) for each part that shows values; the seed's field is a fragment
(``playground.new_seed``) that fills those places, last, in every full run, and alone when only the
seed changed, which sends ~55 elements. Parts with widgets of their own (the head picker, the grid's
stage, the downloads) are drawn there too; the two that are fragments stay fragments inside it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

import streamlit as st

from components import runner
from mha.batching import PaddingCheck
from mha.config import AttentionConfig
from mha.pipeline import AttentionRun
from mha.reference import BatchOrderCheck, TorchCheck

__all__ = ["Computed", "Part", "Places", "draw_or_keep"]


@dataclass(frozen=True)
class Computed:
    """What the page shows of one config's weights, each computed (once, cached) when a part asks for it."""

    config: AttentionConfig

    @cached_property
    def run(self) -> AttentionRun:
        """The traced run (steps 1-4)."""
        return runner.cached_run(self.config)

    @cached_property
    def check(self) -> TorchCheck:
        """The live check against ``torch.nn.MultiheadAttention``."""
        return runner.cached_check(self.config)

    @cached_property
    def batch_order(self) -> BatchOrderCheck:
        """The [L, B, E] pitfall, measured."""
        return runner.cached_batch_order(self.config)

    @cached_property
    def padding(self) -> PaddingCheck | None:
        """The padded batch of two sentences (``None`` where the page's text cannot make one)."""
        return runner.cached_padding(self.config)


Part = Callable[[Computed], None]  # draws one part of the page from what was computed for some weights
Shown = TypeVar("Shown")


@dataclass
class Places:
    """The places a full run kept, in page order, each with the part that fills it."""

    parts: list[tuple[st.delta_generator.DeltaGenerator, Part]] = field(default_factory=list)

    def add(self, place: st.delta_generator.DeltaGenerator, part: Part, first: bool = False) -> None:
        """Keep ``place`` (an empty ``st.container``) for ``part``; ``first``: fill it before the others (sent first).

        The seed's fragment writes into a place through a block of its own that each of its runs empties
        first, so a part may draw any number of elements. A full run sends the place again as the same kind
        of block, so the browser updates what is in it rather than building it anew (a chart keeps its
        canvas).
        """
        self.parts.insert(0 if first else len(self.parts), (place, part))

    def add_fragment(self, place: st.delta_generator.DeltaGenerator, part: Part, first: bool = False) -> None:
        """Keep ``place`` (an ``st.empty``) for a part that is a fragment of its own (the head picker, the grid).

        Streamlit draws a fragment in a block of its own, which the empty holds: each fill, and each rerun
        of the fragment alone, updates that one block in place (its charts keep their canvases). In a
        container instead, a rerun of the fragment alone would add a second block next to the first.
        """
        self.add(place, part, first)

    def fill(self, config: AttentionConfig) -> None:
        """Draw every part for ``config``'s weights in its place (what was there before goes)."""
        computed = Computed(config)
        for place, part in self.parts:
            with place:
                part(computed)


def draw_or_keep(
    box: st.delta_generator.DeltaGenerator,
    places: Places | None,
    draw: Callable[[Shown], None],
    shown: Shown,
    of: Callable[[Computed], Shown],
) -> None:
    """A part of ``box`` that shows the weights' values: ``draw(shown)`` now (no places: a teacher's slide), or
    a place kept for the seed's fragment, which draws ``draw(of(computed))``."""
    if places is None:
        with box:
            draw(shown)
    else:
        places.add(box.container(), lambda computed: draw(of(computed)))
