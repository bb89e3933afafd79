"""AppTest tests of the Streamlit pages (run from the repository root)."""
