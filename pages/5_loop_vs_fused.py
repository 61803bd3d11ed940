"""Lab 5: the tutorials' per-head loop against the fused layer, timed."""

import streamlit as st

from components.i18n import t
from components.labs import loop
from components.language import select_language
from components.nav import render_nav

st.set_page_config(page_title=t("nav.lab.loop"), page_icon="⏱️", layout="wide")
select_language()
render_nav()
loop.render()
