"""End-to-end tests: the app in a real headless browser (marker: e2e)."""
