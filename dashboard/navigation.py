"""Where each page is, and the sidebar's navigation (its labels and icons)."""

from __future__ import annotations

PAGE_ICON = "🧭"

# Page paths for st.page_link / st.switch_page (pages-directory mode).
HOME = "app.py"
CORPORA = "pages/1_Corpora.py"
SIMILARITY = "pages/2_Similarity.py"
PREDICTIVENESS = "pages/3_Predictiveness.py"
AGREEMENT = "pages/4_Agreement.py"
RANKING = "pages/5_Ranking_and_export.py"
OPEN_RESULTS = "pages/6_Open_results.py"
SELECTION = "pages/7_Sentence_selection.py"
COMPARE = "pages/8_Compare_results.py"
PROBE = "pages/9_NER_probe.py"

# The sidebar's navigation (Streamlit's own is off in .streamlit/config.toml: it would call the home
# page "app").
NAVIGATION = [
    (HOME, "Home", ":material/home:"),
    (CORPORA, "Corpora", ":material/library_books:"),
    (SIMILARITY, "Similarity", ":material/grid_on:"),
    (PREDICTIVENESS, "Predictiveness", ":material/insights:"),
    (AGREEMENT, "Agreement", ":material/handshake:"),
    (RANKING, "Ranking and export", ":material/trophy:"),
    (OPEN_RESULTS, "Open results", ":material/folder_open:"),
    (SELECTION, "Sentence selection", ":material/filter_alt:"),
    (COMPARE, "Compare results", ":material/compare_arrows:"),
    (PROBE, "NER probe", ":material/science:"),
]
