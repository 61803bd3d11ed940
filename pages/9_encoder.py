"""Lab 9: attention inside a Transformer encoder block."""

from components.labs import encoder
from components.page import setup_page

setup_page("nav.lab.encoder", "🧱")
encoder.render()
