"""The labs' Streamlit UI, one module per lab (``render()`` draws the lab), plus pure chart builders.

Each page in ``pages/`` sets up the page and calls one ``render()``; the numbers come from
:mod:`mha.experiments`, the charts from :mod:`components.labs.charts`; :mod:`components.labs.common`
holds what every lab shares and :mod:`components.labs.measure` the Measure button of the timing labs.
"""
