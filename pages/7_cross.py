"""Lab 7: cross-attention, queries from one sentence, keys and values from another."""

from components.labs import cross
from components.page import setup_page

setup_page("nav.lab.cross", "🔀")
cross.render()
