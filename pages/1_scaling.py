"""Lab 1: why attention divides the scores by √d_k."""

from components.labs import scaling
from components.page import setup_page

setup_page("nav.lab.scaling", "🌡️")
scaling.render()
