"""Tools: the contract (base), routing (registry), providers and the built-in tools."""
