"""Lab 6: time and memory of attention against the sequence length."""

from components.labs import complexity
from components.page import setup_page

setup_page("nav.lab.complexity", "📈")
complexity.render()
