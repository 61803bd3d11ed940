"""Lab 7: cross-attention, queries from one sentence, keys and values from another."""

import streamlit as st

from components.i18n import t
from components.labs import cross
from components.language import select_language
from components.nav import render_nav

st.set_page_config(page_title=t("nav.lab.cross"), page_icon="🔀", layout="wide")
select_language()
render_nav()
cross.render()
