"""Lab 4: one mask in three spellings, and the fully masked row."""

import streamlit as st

from components.i18n import t
from components.labs import masks
from components.language import select_language
from components.nav import render_nav

st.set_page_config(page_title=t("nav.lab.masks"), page_icon="🎭", layout="wide")
select_language()
render_nav()
masks.render()
