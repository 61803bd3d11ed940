"""Lab 2: the same layer split into 1, 2, 4, 8 and 16 heads."""

import streamlit as st

from components.i18n import t
from components.labs import heads
from components.language import select_language
from components.nav import render_nav

st.set_page_config(page_title=t("nav.lab.heads"), page_icon="🧩", layout="wide")
select_language()
render_nav()
heads.render()
