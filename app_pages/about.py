"""About the math: the glossary, the project's math reference and the papers, as in docs/ of the repository."""

from __future__ import annotations

import streamlit as st

from app_ui.docs import in_app, read_doc, sections

st.title("About the math")
st.markdown(
    "Every number the app shows is defined in the project's own math reference, **docs/math.md**, whose"
    " sections (§1 … §12) are the ones the pages cite. The words are in the [glossary](#glossary), the"
    " formulas, section by section, under [The mathematics](#math), and the papers [C], [S], [P], [D] and"
    " [TPL] with their full references under [References](#references). The three files are in the `docs/`"
    " folder of the repository."
)

glossary_intro, glossary_parts = sections(read_doc("glossary.md"), level=1)
st.header("Glossary", anchor="glossary")
st.caption("docs/glossary.md")
for _, body in glossary_parts or [("", glossary_intro)]:
    st.markdown(in_app(body))

st.header("The mathematics", anchor="math")
st.caption("docs/math.md: open a section to read it.")
preamble, math_parts = sections(read_doc("math.md"))
_, math_intro = sections(preamble, level=1)
st.markdown(in_app(math_intro[0][1] if math_intro else preamble).replace("\n---", ""))
for heading, body in math_parts:
    with st.expander(heading):
        st.markdown(in_app(body.removesuffix("---").strip()))

st.header("References", anchor="references")
st.caption("docs/references.md")
intro, parts = sections(next(iter(sections(read_doc("references.md"), level=1)[1]), ("", ""))[1])
st.markdown(in_app(intro))
for heading, body in parts:
    if heading.startswith("What the app"):  # the long tables: item by item, where math.md restates it
        with st.expander(heading):
            st.markdown(in_app(body))
    else:
        st.markdown(in_app(f"## {heading}\n\n{body}"))
