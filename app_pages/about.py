"""About the math: the glossary, the project's math reference and the papers, as in docs/ of the repository."""

from __future__ import annotations

import streamlit as st

from app_ui.core.docs import doc_body, in_app, sections

st.title("About the math")
st.markdown(
    "Every number the app shows is defined in the project's own math reference, **docs/math.md**, whose"
    " sections (§1 … §12) are the ones the pages cite. The words are in the [glossary](#glossary), the"
    " formulas, section by section, under [The mathematics](#math), and the papers [C], [S], [P], [D] and"
    " [TPL] with their full references under [References](#references). The three files are in the `docs/`"
    " folder of the repository."
)

st.header("Glossary", anchor="glossary")
st.caption("docs/glossary.md")
st.markdown(in_app(doc_body("glossary.md")))

st.header("The mathematics", anchor="math")
st.caption("docs/math.md: open a section to read it.")
intro, parts = sections(doc_body("math.md"))
st.markdown(in_app(intro.removesuffix("---").strip()))
for heading, body in parts:
    with st.expander(heading):
        st.markdown(in_app(body.removesuffix("---").strip()))

st.header("References", anchor="references")
st.caption("docs/references.md")
intro, parts = sections(doc_body("references.md"))
st.markdown(in_app(intro))
for heading, body in parts:
    if heading.startswith("What the app"):  # the long tables, item by item: in an expander
        with st.expander(heading):
            st.markdown(in_app(body))
    else:
        st.markdown(in_app(f"## {heading}\n\n{body}"))
