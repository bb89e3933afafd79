"""The two guided paths (Guided: publish your data, Guided: a lesson) and their step bar."""
