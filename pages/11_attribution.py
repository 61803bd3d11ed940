"""Lab 11: what did the layer really use? Attention weights next to what each key adds and what removing it does."""

from components.labs import attribution
from components.page import setup_page

setup_page("nav.lab.attribution", "🔎")
attribution.render()
