"""Lab 4: one mask in four spellings, and the fully masked row."""

from components.labs import masks
from components.page import setup_page

setup_page("nav.lab.masks", "🎭")
masks.render()
