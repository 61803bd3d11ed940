"""Lab 6: time and memory of attention against the sequence length."""

import streamlit as st

from components.i18n import t
from components.labs import complexity
from components.language import select_language
from components.nav import render_nav

st.set_page_config(page_title=t("nav.lab.complexity"), page_icon="📈", layout="wide")
select_language()
render_nav()
complexity.render()
