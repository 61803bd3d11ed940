"""Lab 3: splitting heads with view but no transpose, the classic bug."""

import streamlit as st

from components.i18n import t
from components.labs import reshape
from components.language import select_language
from components.nav import render_nav

st.set_page_config(page_title=t("nav.lab.reshape"), page_icon="🐛", layout="wide")
select_language()
render_nav()
reshape.render()
