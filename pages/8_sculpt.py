"""Lab 8: attention patterns made by hand-written W_q and W_k."""

from components.labs import sculpt
from components.page import setup_page

setup_page("nav.lab.sculpt", "🎨")
sculpt.render()
