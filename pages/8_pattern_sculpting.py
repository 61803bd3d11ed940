"""Lab 8: attention patterns made by hand-written W_q and W_k."""

import streamlit as st

from components.i18n import t
from components.labs import sculpt
from components.language import select_language
from components.nav import render_nav

st.set_page_config(page_title=t("nav.lab.sculpt"), page_icon="🎨", layout="wide")
select_language()
render_nav()
sculpt.render()
