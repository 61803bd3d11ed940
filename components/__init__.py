"""Streamlit UI pieces of the playground. They import ``mha``; ``mha`` never imports them."""
