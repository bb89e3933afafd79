"""Plan & compose: the ledger of releases and its exports."""
