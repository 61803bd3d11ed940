"""Lab 13: FlashAttention, the same numbers tile by tile."""

from components.labs import flash
from components.page import setup_page

setup_page("nav.lab.flash", "⚡")
flash.render()
