"""The data picker: built-in datasets, the deployer's large datasets, uploads; column mapping, repair, aggregation."""
