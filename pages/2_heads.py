"""Lab 2: the same layer split into 1, 2, 4, 8 and 16 heads."""

from components.labs import heads
from components.page import setup_page

setup_page("nav.lab.heads", "🧩")
heads.render()
