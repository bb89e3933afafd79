"""How tight is my bound?: the attack ladder's views."""
