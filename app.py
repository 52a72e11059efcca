"""Attention Explorer: change anything, watch every step of attention recompute.

Entry point: page config, the shared sidebar (defined once, here, so its values survive page
switches), the language switch, and st.navigation over the scripts in pages/.
"""

import streamlit as st

from explorer import FAVICON
from explorer.controls import present

presenting = present.read()  # ?present=1: the sidebar starts collapsed, the type is large
st.set_page_config(
    page_title="Attention Explorer",
    page_icon=FAVICON,  # a file of the app's (sent inline): a material icon here is fetched from a font host
    layout="wide",
    initial_sidebar_state="collapsed" if presenting else "auto",
)

from attn_core import AttentionConfigError
from explorer import figures as fig
from explorer import server
from explorer.base import contrast, history, session
from explorer.base.i18n import begin_run, t
from explorer.base.urlcheck import show_notices
from explorer.charts import png
from explorer.classroom import check_view
from explorer.classroom.home import home
from explorer.classroom.lesson import builder as lesson_builder
from explorer.classroom.lesson import read as lesson
from explorer.classroom.tour import arrive as tour_arrive
from explorer.classroom.tour import banner as tour_banner
from explorer.controls.state import check_for, show_error, sidebar_ui
from explorer.pages import PAGES, navigation, reads
from explorer.poll import link as poll
from explorer.poll.link import check_url as poll_check
from explorer.poll.view import QUESTION_PAGES, lesson_view

server.prepare()  # once per process: heavy imports, a frozen heap, the model loading in the background
begin_run()
# expanded: every page listed; folded, Streamlit's own "View 3 more" button showed in English on the Chinese page
nav = st.navigation(navigation(home, (t("page_home"), *(t(f"page.{p.key}") for p in PAGES))), expanded=True)
session.put("_page", nav.url_path)  # what a downloaded chart's file is named after (explorer/charts/views.py)
st.sidebar.title(t("app_title"))
notice = st.sidebar.empty()
tour_arrive()  # a lesson of the tour opens with its own settings
poll_check()  # ?lesson=, ?teacher= and ?predict=, carried from page to page
hidden, locked = lesson()  # a teacher's link may hide some settings and lock others
shown = reads(nav.url_path)  # the settings this page reads; the others keep their values undrawn
settings, slots = sidebar_ui(hidden, locked, shown)
fig.begin_run(session.palette_choice(), presenting)
contrast.style()  # captions, code comments and slider numbers at WCAG AA in both themes
if presenting:
    present.style()
try:
    check_for(settings)  # what is wrong is said beside its control; the trace is computed by the pages that draw it
except AttentionConfigError as err:
    if shown is None or err.field in shown:  # a setting this page does not read is not its problem
        show_error(err, slots)
lesson_builder(hidden, locked)
tour_banner()  # a lesson of the guided tour: its question above the page
if poll.teacher() and nav.url_path not in QUESTION_PAGES:  # the teacher's link, wherever it is opened
    lesson_view(poll.lesson())
    check_view.teacher_if_asked(poll.lesson())  # the lesson's check, before and after, when the link has one
history.one_entry_per_page()  # the browser's Back goes to the page before, not to the last rerun
show_notices(notice)  # what the sidebar rejected; a page that stops early (st.stop) draws nothing after it
check_view.gate(settings, notice)  # ?check=pre|post&items=…: the check this session owes comes before the page
nav.run()
show_notices(notice)  # again, with what the page's own controls rejected
png.download_ui()  # the charts the page drew, one of them as PNG (the modebar's own button gives SVG)
