"""phantoms."""
