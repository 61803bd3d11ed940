"""Lab 9: attention inside a Transformer encoder block."""

import streamlit as st

from components.i18n import t
from components.labs import encoder
from components.language import select_language
from components.nav import render_nav

st.set_page_config(page_title=t("nav.lab.encoder"), page_icon="🧱", layout="wide")
select_language()
render_nav()
encoder.render()
