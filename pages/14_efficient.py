"""Lab 14: attention that costs less, linear and sparse."""

from components.labs import efficient
from components.page import setup_page

setup_page("nav.lab.efficient", "🪶")
efficient.render()
