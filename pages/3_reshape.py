"""Lab 3: splitting heads with view but no transpose, the classic bug."""

from components.labs import reshape
from components.page import setup_page

setup_page("nav.lab.reshape", "🐛")
reshape.render()
