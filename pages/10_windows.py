"""Lab 10: windows and shifted windows (Swin) on an image's patches."""

from components.labs import windows
from components.page import setup_page

setup_page("nav.lab.windows", "🪟")
windows.render()
