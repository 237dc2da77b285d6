"""A simulated servo bus on a pseudo-terminal (both packet protocols, fault injection)."""
