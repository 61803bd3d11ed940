"""Lab 5: the tutorials' per-head loop against the fused layer, timed."""

from components.labs import loop
from components.page import setup_page

setup_page("nav.lab.loop", "⏱️")
loop.render()
