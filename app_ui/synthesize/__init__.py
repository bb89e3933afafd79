"""The Synthesize page's room: its settings (in the link), views (plan, fidelity, charts) and exports."""
