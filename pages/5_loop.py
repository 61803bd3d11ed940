"""Lab 5: a loop over heads against the fused layer, and full-width heads, timed."""

from components.labs import loop
from components.page import setup_page

setup_page("nav.lab.loop", "⏱️")
loop.render()
