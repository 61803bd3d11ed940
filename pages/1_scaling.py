"""Lab 1: why attention divides the scores by √d_k."""

import streamlit as st

from components.i18n import t
from components.labs import scaling
from components.language import select_language
from components.nav import render_nav

st.set_page_config(page_title=t("nav.lab.scaling"), page_icon="🌡️", layout="wide")
select_language()
render_nav()
scaling.render()
